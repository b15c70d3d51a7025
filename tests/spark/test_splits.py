"""Transaction-aligned splits (binlogkit.io.splits), without Spark.

Every corpus file that the plain reader decodes, cut into splits of a few
hundred bytes and decoded split by split, gives the very events (offsets,
types, values) and row changes of the file read whole. Split starts are
event starts found by an independent header walk, and each is a transaction
start by the format's definition (a GTID event, or a BEGIN query).
"""

from __future__ import annotations

import itertools
import pickle
from pathlib import Path

import pytest
from corpus_walk import walk

import binlogkit
from binlogkit import jsonenc
from binlogkit.binlog.constants import EventType
from binlogkit.errors import BinlogError
from binlogkit.io.splits import plan_partitions, plan_splits, read_split
from binlogkit.pipeline.changes import row_changes

pytestmark = pytest.mark.corpus

GTIDS = {EventType.GTID, EventType.ANONYMOUS_GTID, EventType.GTID_TAGGED, EventType.MARIADB_GTID}


def _events(events):  # type: ignore[no-untyped-def]
    """Each event with its offset (events compare by header fields and body)."""
    return [(e.header.offset, e) for e in events]


def _changes(events):  # type: ignore[no-untyped-def]
    return [jsonenc.dumps(c.to_dict()) for c in row_changes(events)]


def test_splits_decode_like_the_whole_file(clean_corpus_files: tuple[Path, ...]) -> None:
    files = clean_corpus_files
    assert len(files) > 50
    cut = 0
    for path in files:
        splits = plan_splits(path, 256)
        assert splits[0].start == 0 and splits[-1].end == path.stat().st_size
        assert all(a.end == b.start for a, b in itertools.pairwise(splits))
        with binlogkit.open(str(path), schema=None) as reader:
            whole = list(reader)
        parts = [event for split in splits for event in read_split(split)]
        assert _events(parts) == _events(whole), path
        assert _changes(parts) == _changes(whole), path
        cut += len(splits) > 1
    assert cut > 30  # most files really were cut


def test_split_starts_are_transaction_starts(clean_corpus_files: tuple[Path, ...]) -> None:
    for path in clean_corpus_files:
        data = path.read_bytes()
        events = walk(data).events
        walked = {e.offset: e for e in events}
        previous = {b.offset: a for a, b in itertools.pairwise(events)}
        for split in plan_splits(path, 256)[1:]:
            event = walked[split.start]  # an event boundary
            if event.type_code in GTIDS:
                continue
            assert event.type_code == EventType.QUERY, path
            assert b"BEGIN" in data[event.offset : event.end]
            assert previous[split.start].type_code not in GTIDS


def test_big_file_in_many_splits(corpus_dir: Path) -> None:
    """A 4 MB MariaDB file with large rows events: cut at 16 KiB, read back the same rows."""
    path = corpus_dir / "local-mariadb-10.11/full/mysql-bin.000002"
    splits = plan_splits(path, 16 << 10)
    assert len(splits) > 5
    with binlogkit.open(str(path), schema=None) as reader:
        whole = _changes(reader)
    assert [c for split in splits for c in _changes(read_split(split))] == whole


def test_partitions_are_equal_shares_cut_at_transaction_starts(
    corpus_dir: Path, clean_corpus_files: tuple[Path, ...]
) -> None:
    """Files as one stream cut into equal shares: partition k starts at the first transaction
    start (by an independent header walk) at or past k/count of the bytes, or at the start of
    the next file when none is left in the file; small files share a partition."""
    folder = corpus_dir / "local-mariadb-10.11/gtid"
    files = sorted(set(folder.glob("mysql-bin.0?????")) & set(clean_corpus_files))  # 97 kB, small
    files.insert(1, corpus_dir / "local-mariadb-10.11/full/mysql-bin.000002")  # 4 MB
    assert len(files) > 4
    stream_at, starts, at = {}, [], 0  # file → its offset in the stream; transaction starts
    for path in files:
        stream_at[str(path)] = at
        starts.append(at)
        starts += [at + e.offset for e in walk(path.read_bytes()).events if e.type_code in GTIDS]
        at += path.stat().st_size
    total, count = at, 16
    parts = plan_partitions([(str(p), 0, None) for p in files], count)
    flat = [split for part in parts for split in part]
    assert [(s.path, s.start) for s in flat] == sorted(
        ((s.path, s.start) for s in flat), key=lambda k: (stream_at[k[0]], k[1])
    )
    for path in files:  # every byte once, in order
        mine = [s for s in flat if s.path == str(path)]
        assert mine[0].start == 0 and mine[-1].end == path.stat().st_size
        assert all(a.end == b.start for a, b in itertools.pairwise(mine))
    wanted = sorted({min(s for s in starts if s >= total * k // count) for k in range(1, count)})
    assert [stream_at[p[0].path] + p[0].start for p in parts[1:]] == wanted
    assert any(len(part) > 1 for part in parts)  # a partition spans files
    assert [e for part in parts for s in part for e in _changes(read_split(s))] == [
        e for path in files for e in _changes(binlogkit.open(str(path), schema=None))
    ]


def test_split_pickles_and_small_file_is_one_split(clean_corpus_files: tuple[Path, ...]) -> None:
    path = clean_corpus_files[0]
    (split,) = plan_splits(path)
    assert (split.start, split.end) == (0, path.stat().st_size)
    assert pickle.loads(pickle.dumps(split)) == split


def test_errors_name_file_and_offset(tmp_path: Path, corpus_dir: Path) -> None:
    source = corpus_dir / "local-mariadb-10.11/gtid/mysql-bin.000002"
    data = bytearray(source.read_bytes())
    splits = plan_splits(source, 4096)
    victim = splits[2].start + 30  # inside the first event of the third split
    data[victim] ^= 0xFF
    broken = tmp_path / "mysql-bin.000002"
    broken.write_bytes(bytes(data))
    with pytest.raises(BinlogError) as err:
        for split in plan_splits(broken, 4096):
            list(read_split(split))
    assert str(broken) in str(err.value) and f"offset {splits[2].start}" in str(err.value)


def test_byte_ranges_give_the_events_inside_them(corpus_dir: Path, tmp_path: Path) -> None:
    """Ranges from a transaction start to an event boundary, also of a file cut mid-event."""
    source = corpus_dir / "local-mariadb-10.11/gtid/mysql-bin.000002"
    data = source.read_bytes()
    events = walk(data).events
    gtids = [e.offset for e in events if e.type_code in GTIDS]
    start, end = gtids[3], gtids[-3]
    cut = tmp_path / source.name  # an active binlog: its last event is still being written
    cut.write_bytes(data[: gtids[-3] + 10])
    with binlogkit.open(str(source), schema=None) as reader:
        whole = [(e.header.offset, e) for e in reader]
    for path in (source, cut):
        for size in (1 << 30, 2048):
            splits = plan_splits(path, size, start=start, end=end)
            assert splits[0].start == start and splits[-1].end == end
            assert all(a.end == b.start for a, b in itertools.pairwise(splits))
            assert len(splits) > 1 or size > end - start
            parts = _events(e for split in splits for e in read_split(split))
            assert parts == [(o, e) for o, e in whole if start <= o < end]
    assert plan_splits(cut, 2048, start=end, end=end) == []
    with pytest.raises(BinlogError, match=f"offset {end}: input ends inside an event"):
        for split in plan_splits(cut, 1 << 30):
            list(read_split(split))
    with pytest.raises(BinlogError, match="not inside the file"):
        plan_splits(cut, 2048, start=start, end=len(data))
