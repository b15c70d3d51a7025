"""Finding event starts in the middle of a file: the same places a walk from the start reaches.

Every expected offset comes from the independent header walk of ``corpus_walk``.
"""

from __future__ import annotations

import bisect
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from corpus_walk import corpus_files, walk

import binlogkit
from binlogkit.binlog.transactions import GTID_CODES
from binlogkit.io import complete, resync, splits
from binlogkit.io.resync import find_event_start, resync_checksum
from binlogkit.io.splits import plan_partitions, plan_splits

pytestmark = pytest.mark.corpus

_U32 = struct.Struct("<I")
BIG = "local-mariadb-10.11/full/mysql-bin.000002"
"""4 MB of MariaDB transactions with checksums, large rows events among them."""


def _qualified(corpus_dir: Path) -> Iterator[tuple[Path, bytes, int, bool]]:
    """Files that qualify, with whether each event after the format description ends where its
    header says and has a matching CRC32 (as its server wrote it)."""
    for name in corpus_files():
        data = (corpus_dir / name).read_bytes()
        checksum = resync_checksum(data, len(data))
        if checksum is not None:
            events = walk(data).events
            consistent = all(
                _U32.unpack_from(data, e.offset + 13)[0] == e.end
                and (not checksum or zlib.crc32(data[e.offset : e.end - 4]) == _stored_sum(data, e))
                for e in events[1:]  # (the format description's sum leaves out a flag)
            )
            yield corpus_dir / name, data, checksum, consistent


def _stored_sum(data: bytes, event: Any) -> int:
    return int(_U32.unpack_from(data, event.end - 4)[0])


def test_the_files_a_server_wrote_with_gtids_qualify(corpus_dir: Path) -> None:
    """Qualified: the first transaction starts with a GTID event. Not: transactions opened by
    ``BEGIN``, relay logs (a ROTATE first) and encrypted files."""
    verdicts = {True: 0, False: 0}
    for name in corpus_files():
        data = (corpus_dir / name).read_bytes()
        events = walk(data).events
        first = next(
            (e.type_code for e in events[1:] if e.type_code in GTID_CODES | {2, 4, 164}),
            None,
        )
        checksum = resync_checksum(data, len(data))
        if first not in GTID_CODES:
            assert checksum is None, name
        verdicts[checksum is not None] += 1
    assert verdicts[True] > 80 and verdicts[False] > 50


def test_an_event_start_is_the_next_one_of_the_walk(corpus_dir: Path) -> None:
    """In a file as its server wrote it, the first start at or past any offset; in one with
    altered events (mysql-test's crash recovery files), never an offset that is no start."""
    checked = altered = 0
    for path, data, checksum, consistent in _qualified(corpus_dir):
        starts = [e.offset for e in walk(data).events]
        for low in range(4, len(data), max(29, len(data) // 300)):
            k = bisect.bisect_left(starts, low)
            expected = starts[k] if k < len(starts) and starts[k] < low + 512 else None
            found = find_event_start(data, low, low + 512, len(data), checksum)
            if consistent:
                assert found == expected, (path, low)
                checked += expected is not None
            else:
                assert found is None or found in starts[k:], (path, low)
                altered += 1
    assert checked > 5_000 and altered > 10


def test_a_planted_header_is_passed_over(corpus_dir: Path) -> None:
    """A header inside a rows event whose sizes fit is no event start: not with a wrong CRC32,
    nor with the right one (the bytes after it are no event), nor in a file without checksums."""
    data = bytearray((corpus_dir / BIG).read_bytes())
    events = walk(bytes(data)).events
    host = next(e for e in events if e.type_code in (23, 30) and 600 < e.size < 2000)
    at, size = host.offset + 100, 40
    data[at : at + 17] = struct.pack("<IBIII", 0, 2, 1, size, at + size)
    assert find_event_start(bytes(data), at, at + 4096, len(data), 4) == host.end
    assert find_event_start(bytes(data), at, at + 4096, len(data), 0) == host.end
    struct.pack_into("<I", data, at + size - 4, zlib.crc32(data[at : at + size - 4]))
    assert resync._whole_event(bytes(data), at, len(data), 4) == size  # it fits and checks out
    assert find_event_start(bytes(data), at, at + 4096, len(data), 4) == host.end


def _spy(monkeypatch: pytest.MonkeyPatch, module: Any) -> list[int | None]:
    found: list[int | None] = []

    def spied(*args: Any) -> int | None:
        result = find_event_start(*args)
        found.append(result)
        return result

    monkeypatch.setattr(module, "find_event_start", spied)
    return found


def test_plans_that_jump_equal_plans_that_walk(
    corpus_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = [path for path, _, _, consistent in _qualified(corpus_dir) if consistent]
    files.append(corpus_dir / "local-mariadb-10.11/gtid/mysql-bin.000002")

    def plans() -> tuple[list[Any], list[Any]]:
        cut = [(s.start, s.end, s.format_event) for p in files for s in plan_splits(p, 200)]
        parts = plan_partitions([(str(p), 0, None) for p in files], 64)
        return cut, [[(s.path, s.start, s.end) for s in part] for part in parts]

    monkeypatch.setattr(splits, "_RESYNC_GAP", 1 << 62)
    walked = plans()
    monkeypatch.setattr(splits, "_RESYNC_GAP", 0)
    jumps = _spy(monkeypatch, splits)
    assert plans() == walked
    assert sum(j is not None for j in jumps) > 1000


@pytest.mark.parametrize(
    ("name", "from_tail"),
    [
        ("avaitla+mysqlbinlog2parquet/test/samples/mysql-bin-changelog.547927", True),  # 2 MB
        (BIG, False),  # a 2.3 MB rows event covers every place searched: walked whole
    ],
)
def test_complete_end_from_the_tail_equals_a_walk(
    corpus_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, from_tail: bool
) -> None:
    """A file is read from near its end when an event start is found there: the same answer
    as a walk from the start (or from a later transaction start), for a file cut after a whole
    transaction, inside one and inside an event."""
    data = (corpus_dir / name).read_bytes()
    events = walk(data).events
    ends = [e.end for e in events if e.type_code == 16][-5:]  # XIDs
    later = next(e.offset for e in events if e.type_code in GTID_CODES and e.offset > 1e6)
    jumps = _spy(monkeypatch, complete)
    for size in (len(data), ends[-2], ends[-2] - 1, ends[-2] + 7, ends[0] + 30):
        active = tmp_path / "binlog.000001"
        active.write_bytes(data[:size])
        for start in (0, later):
            walked = complete._walk_to_complete_end(data[:size], max(start, 4), size, start)  # type: ignore[arg-type]
            assert walked not in (None, start)
            assert complete.complete_end(active, start, size) == walked
    found = sum(j is not None for j in jumps)
    assert found == 10 if from_tail else not found and jumps


def test_complete_end_stops_before_an_unfinished_transaction(corpus_dir: Path, tmp_path: Path):
    whole = corpus_dir / "local-mariadb-10.11" / "gtid" / "mysql-bin.000002"
    with binlogkit.open(str(whole)) as reader:
        events = [(e.header.type_code, e.header.offset, e.header.end) for e in reader]
    gtids = [offset for code, offset, _ in events if code == 162]
    xids = [end for code, _, end in events if code == 16]
    assert (
        complete.complete_end(whole, 0, whole.stat().st_size) == whole.stat().st_size
    )  # ends in ROTATE
    cut = tmp_path / "mysql-bin.000002"
    cut.write_bytes(whole.read_bytes()[: xids[10]])
    assert complete.complete_end(cut, 0, xids[10]) == xids[10]  # ends with a whole transaction
    cut.write_bytes(whole.read_bytes()[: xids[10] - 1])
    assert complete.complete_end(cut, 0, xids[10] - 1) == max(g for g in gtids if g < xids[10])
    assert complete.complete_end(cut, xids[10] - 1, xids[10] - 1) == xids[10] - 1


def test_complete_end_after_an_xa_prepare(corpus_dir: Path, tmp_path: Path) -> None:
    """XA PREPARE ends its transaction's first phase: a file ending on it is whole."""
    whole = corpus_dir / "local-mariadb-10.11" / "compressed" / "mysql-bin.000002"
    with binlogkit.open(str(whole)) as reader:
        prepare = next(e.header for e in reader if e.header.type_code == 38)  # XA_PREPARE
    cut = tmp_path / "mysql-bin.000002"
    cut.write_bytes(whole.read_bytes()[: prepare.end])
    assert complete.complete_end(cut, 0, prepare.end) == prepare.end


def test_complete_end_takes_events_between_transactions_after_the_last(
    corpus_dir: Path, tmp_path: Path
) -> None:
    """A BINLOG_CHECKPOINT after a transaction's XID (what MariaDB writes after a rotation, some
    time after) keeps the transaction complete; after a transaction's earlier event it does not."""
    whole = corpus_dir / "local-mariadb-10.11" / "gtid" / "mysql-bin.000002"
    data = whole.read_bytes()
    events = walk(data).events
    checkpoint = next(e for e in events if e.type_code == 161)
    between = data[checkpoint.offset : checkpoint.end]
    xid = [e for e in events if e.type_code == 16][10]
    gtid = max(e.offset for e in events if e.type_code in GTID_CODES and e.offset < xid.offset)
    cut = tmp_path / "mysql-bin.000002"
    for size, expected in ((xid.end, xid.end + len(between)), (xid.offset, gtid)):
        cut.write_bytes(data[:size] + between)
        assert complete.complete_end(cut, 0, size + len(between)) == expected
        assert complete._complete_end_framed(cut, 0, size + len(between)) == expected
