"""The binlog writer, on real binlogs: files written back byte for byte, read by mariadb-binlog
as binlogkit reads them, and continued after a crash cut one short.

Write-back: every corpus file whose events sit where their headers say
(``log_pos`` is each event's end, as servers write binlogs) is written again,
event by event from the decoder, through :class:`BinlogFileWriter` into a new
file; the two must be equal. The only byte the writer decides itself is
BINLOG_IN_USE in the format description: clear when a STOP or ROTATE ended the
file, set when it ended without one.
"""

from __future__ import annotations

import random
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from corpus_walk import corpus_files, decode_up_to_damage, path, read
from dump_compare import TOOL, assert_same_dump, local_time_zone, our_dump

import binlogkit
from binlogkit import BinlogDecoder, BinlogError, TruncatedError
from binlogkit.binlog.constants import ChecksumAlg, EventFlag, EventType, Flavor
from binlogkit.binlog.context import FormatContext
from binlogkit.binlog.events import Event, FormatDescriptionEvent
from binlogkit.binlog.events.query import QueryEvent
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.binlog.header import FLAGS_OFFSET
from binlogkit.cli.main import cli
from binlogkit.io.binlog_index import read_index
from binlogkit.pipeline.flashback import flashback
from binlogkit.writer import BinlogFileWriter, BinlogWriter, format_description
from binlogkit.writer.binlog_file import ENDING_TYPES
from binlogkit.writer.insert import insert_events

pytestmark = pytest.mark.corpus

FILES = corpus_files()
ROWS_FILE = "local-mariadb-10.11/full/mysql-bin.000003"
TYPES_FILE = "local-mariadb-10.11/gtid/mysql-bin.000002"
"""Rows of many column types that mariadb-binlog prints whole (it stops in ROWS_FILE's)."""
_FDE_FLAGS_AT = 4 + FLAGS_OFFSET


def _framed_events(name: str) -> list[Event]:
    """The events of ``name`` that have a frame of their own, in order; skips files the
    writer's rules do not describe (old formats, damage, relay-log positions, a partial tail)."""
    data = read(name)
    events: list[Event] = []
    end = 0
    try:
        for event, frame in decode_up_to_damage(name, BinlogDecoder(file=name)):
            if frame is None:
                continue
            if frame.header.log_pos != frame.header.end or frame.fmt.header_length != 19:
                pytest.skip(f"event at {frame.header.offset} does not end where log_pos says")
            events.append(event)
            end = frame.header.end
    except BinlogError as err:
        pytest.skip(f"not decodable whole: {err}")
    if not events or not isinstance(events[0], FormatDescriptionEvent) or end != len(data):
        pytest.skip("not a whole v4 binlog")
    return events


def _expected(data: bytes, ended: bool) -> bytes:
    """``data`` with BINLOG_IN_USE as the writer leaves it."""
    flags = data[_FDE_FLAGS_AT] & ~EventFlag.BINLOG_IN_USE
    if not ended:
        flags |= EventFlag.BINLOG_IN_USE
    return data[:_FDE_FLAGS_AT] + bytes([flags]) + data[_FDE_FLAGS_AT + 1 :]


@pytest.mark.parametrize("name", FILES)
def test_corpus_file_written_back_identical(corpus_dir: Path, tmp_path: Path, name: str) -> None:
    events = _framed_events(name)
    fde = events[0]
    assert isinstance(fde, FormatDescriptionEvent)
    target = tmp_path / "copy"
    writer = BinlogFileWriter.create(target, fde)
    for event in events[1:]:
        header = writer.write(event)
        assert header.offset == event.header.offset and header.end == event.header.end
    ended = events[-1].header.type_code in ENDING_TYPES
    assert writer.ended is ended
    writer.close()
    assert target.read_bytes() == _expected(read(name), ended)


def test_crash_mid_write_is_truncated_and_continued(corpus_dir: Path, tmp_path: Path) -> None:
    events = _framed_events(ROWS_FILE)
    fde = events[0]
    assert isinstance(fde, FormatDescriptionEvent)
    want = _expected(read(ROWS_FILE), ended=True)
    ends = [e.header.end for e in events]
    rng = random.Random("crash")
    target = tmp_path / "mysql-bin.000001"
    inside_an_event = 0
    for _round in range(8):
        writer = BinlogFileWriter.create(target, fde)
        for event in events[1:-1]:  # all but the ROTATE: the file stays in use
            writer.write(event)
        writer.close()
        cut = rng.randrange(ends[0] + 1, ends[-2])
        with target.open("r+b") as out:
            out.truncate(cut)
        complete = max(end for end in ends if end <= cut)
        if complete < cut:
            inside_an_event += 1
            with pytest.raises(TruncatedError) as caught, binlogkit.open(target) as reader:
                for _event in reader:
                    pass
            assert caught.value.offset == complete
        writer = BinlogFileWriter.append(target)
        assert writer.position == complete
        assert target.read_bytes()[_FDE_FLAGS_AT] & EventFlag.BINLOG_IN_USE
        for event in events[ends.index(complete) + 1 :]:
            writer.write(event)
        assert writer.ended
        assert target.read_bytes() == want
    assert inside_an_event


def test_series_with_rotate_and_stop(corpus_dir: Path, tmp_path: Path) -> None:
    """A new series: MariaDB format, events of a real file, a ROTATE midway, a STOP at close;
    positions, index, in-use flags, and binlogkit reads back what was written."""
    events = _framed_events(ROWS_FILE)[1:-1]  # without the FDE and the ROTATE
    split = next(i for i, e in enumerate(events) if e.header.type_code == EventType.XID) + 1
    clock = iter(range(1_700_000_000, 1_800_000_000)).__next__
    with BinlogWriter.create(tmp_path, "out-bin", clock=clock) as writer:
        for event in events[:split]:
            writer.write(event)
        assert writer.rotate() == tmp_path / "out-bin.000002"
        assert (tmp_path / "out-bin.000001").read_bytes()[_FDE_FLAGS_AT] == 0
        assert writer.file.read_bytes()[_FDE_FLAGS_AT] == EventFlag.BINLOG_IN_USE
        for event in events[split:]:
            writer.write(event)
    assert read_index(tmp_path / "out-bin.index") == ["out-bin.000001", "out-bin.000002"]
    with binlogkit.open(tmp_path / "out-bin.index", schema=None) as reader:
        back = list(reader)
    types = [e.type_name for e in back]
    assert types.count("FORMAT_DESCRIPTION") == 2 and types[-1] == "STOP"
    assert types[types.index("ROTATE") + 1] == "FORMAT_DESCRIPTION"
    assert all(e.header.log_pos == e.header.end for e in back)
    assert all(e.header.flags & EventFlag.BINLOG_IN_USE == 0 for e in back)
    written = [e for e in back if e.type_name not in ("FORMAT_DESCRIPTION", "ROTATE", "STOP")]
    assert [(e.type_name, e.header.timestamp) for e in written] == [
        (e.type_name, e.header.timestamp) for e in events
    ]


@pytest.mark.skipif(TOOL is None, reason="mariadb-binlog not installed")
def test_mariadb_binlog_reads_written_files(corpus_dir: Path, tmp_path: Path) -> None:
    events = _framed_events(TYPES_FILE)[1:-1]
    clock = iter(range(1_700_000_000, 1_800_000_000)).__next__
    with BinlogWriter.create(tmp_path, "out-bin", clock=clock) as writer:
        for i, event in enumerate(events):
            writer.write(event)
            if i > len(events) // 2 and event.header.type_code == EventType.XID:
                writer.rotate()
                break
        for event in events[i + 1 :]:
            writer.write(event)
    assert len(read_index(tmp_path / "out-bin.index")) == 2
    assert TOOL is not None
    for name in read_index(tmp_path / "out-bin.index"):
        file = tmp_path / name
        for mode in [(), ("--base64-output=decode-rows", "-vv")]:
            with local_time_zone("UTC"):
                tool = subprocess.run([TOOL, *mode, str(file)], capture_output=True, check=False)
                ours = our_dump(file, *mode)
            assert (tool.returncode, tool.stderr) == (0, b""), f"{name} {mode}"
            assert_same_dump(tool.stdout, ours, f"{name} {mode}")


def test_append_refuses_an_ended_file(corpus_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "mysql-bin.000009"
    target.write_bytes(read(ROWS_FILE))
    with pytest.raises(BinlogError, match="ends with a ROTATE event at 2244"):
        BinlogFileWriter.append(target)
    assert path(ROWS_FILE).exists()


MYSQL_FILE = "avaitla+mysqlbinlog2parquet/test/samples/01-basic-crud.binlog"


def _content(event: Event, fmt: FormatContext) -> tuple[object, ...]:
    """What an event says, apart from its size and place (which the checksum changes)."""
    header = event.header
    rows = list(event.rows) if isinstance(event, RowsEvent) else None
    body = event.encode_body(fmt)
    return (header.type_code, header.timestamp, header.server_id, header.flags, rows, body)


@pytest.mark.parametrize("checksum", [ChecksumAlg.OFF, ChecksumAlg.CRC32])
@pytest.mark.parametrize("flavor", [Flavor.MYSQL, Flavor.MARIADB])
def test_flavor_and_checksum_chosen_by_the_caller(
    corpus_dir: Path, tmp_path: Path, flavor: Flavor, checksum: ChecksumAlg
) -> None:
    source = MYSQL_FILE if flavor is Flavor.MYSQL else TYPES_FILE
    events = _framed_events(source)
    source_fde = events.pop(0)
    assert isinstance(source_fde, FormatDescriptionEvent)
    assert events.pop().header.type_code == EventType.ROTATE
    fde = format_description(flavor, checksum=checksum, server_id=7)
    with BinlogWriter.create(tmp_path, "bin", fde=fde, server_id=7) as writer:
        for event in events:
            writer.write(event)
    file = tmp_path / "bin.000001"
    with binlogkit.open(file, schema=None) as reader:
        back = list(reader)
    assert isinstance(back[0], FormatDescriptionEvent)
    assert (back[0].server_version, back[0].checksum_alg) == (fde.server_version, checksum)
    assert back[0].context().flavor is flavor
    assert [_content(e, fde.context()) for e in back[1:-1]] == [
        _content(e, source_fde.context()) for e in events
    ]
    assert back[-1].type_name == "STOP" and back[-1].header.server_id == 7
    if flavor is Flavor.MARIADB and TOOL is not None:
        with local_time_zone("UTC"):
            tool = subprocess.run([TOOL, "-vv", str(file)], capture_output=True, check=False)
            assert (tool.returncode, tool.stderr) == (0, b"")
            assert_same_dump(tool.stdout, our_dump(file, "-vv"), f"{flavor.name} {checksum.name}")


def test_series_continued_by_open(corpus_dir: Path, tmp_path: Path) -> None:
    """``open`` continues a file left in use (a partial event cut off), and starts the next
    file after one a STOP ended."""
    events = _framed_events(ROWS_FILE)[1:-1]
    writer = BinlogWriter.create(tmp_path, "bin")
    for event in events[:5]:
        writer.write(event)
    writer.abandon()
    first = tmp_path / "bin.000001"
    with first.open("ab") as out:
        out.write(b"\x01\x02\x03")  # a crash inside the next event
    with BinlogWriter.open(tmp_path, "bin") as writer:
        assert writer.file == first and writer.position == events[4].header.end
        for event in events[5:]:
            writer.write(event)
    with BinlogWriter.open(tmp_path, "bin") as writer:
        assert writer.file == tmp_path / "bin.000002"
    assert read_index(tmp_path / "bin.index") == ["bin.000001", "bin.000002"]
    with binlogkit.open(tmp_path / "bin.index", schema=None) as reader:
        types = [e.type_name for e in reader]
    first_file = ["FORMAT_DESCRIPTION", *(e.type_name for e in events), "STOP"]
    assert types == [*first_file, "FORMAT_DESCRIPTION", "STOP"]
    with pytest.raises(BinlogError, match="already lists binlogs"):
        BinlogWriter.create(tmp_path, "bin")


@pytest.mark.parametrize("name", [TYPES_FILE, MYSQL_FILE])
def test_flashback_to_file(corpus_dir: Path, tmp_path: Path, name: str) -> None:
    """``binlogkit flashback --to FILE``: the undo transactions, each between BEGIN and
    COMMIT, in a binlog of the source's format; mariadb-binlog reads it as binlogkit does."""
    with binlogkit.open(path(name), schema=None) as reader:
        undo = flashback(reader)
    target = tmp_path / "undo.000001"
    result = CliRunner().invoke(cli, ["flashback", "--to", str(target), str(path(name))])
    assert result.exit_code == 0, result.output
    with binlogkit.open(target, schema=None) as reader:
        back = list(reader)
    fmt = undo[0].fmt
    want = []
    for transaction in undo:
        want += [b"BEGIN", *(e.encode_body(fmt) for e in transaction.events()), b"COMMIT"]
    got = [e.query if isinstance(e, QueryEvent) else e.encode_body(fmt) for e in back[1:-1]]
    assert got == want
    assert back[-1].type_name == "STOP"
    if "MariaDB" in undo[0].format_event.server_version and TOOL is not None:
        with local_time_zone("UTC"):
            tool = subprocess.run([TOOL, "-vv", str(target)], capture_output=True, check=False)
            assert (tool.returncode, tool.stderr) == (0, b"")
            assert_same_dump(tool.stdout, our_dump(target, "-vv"), "flashback --to")


def test_flashback_to_file_without_rows(corpus_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "undo.000001"
    source = path("avaitla+mysqlbinlog2parquet/test/samples/mysql-bin.000001")  # FDE, STOP
    result = CliRunner().invoke(cli, ["flashback", "--to", str(target), str(source)])
    assert result.exit_code == 1 and "nothing to undo" in result.output
    assert list(tmp_path.iterdir()) == []


def test_insert_events_moves_the_rest(corpus_dir: Path, tmp_path: Path) -> None:
    """A transaction inserted between two others: the events after it move with their
    positions; binlogkit and mariadb-binlog read the file; bad places are refused."""
    events = _framed_events(TYPES_FILE)
    target = tmp_path / "mysql-bin.000002"
    target.write_bytes(read(TYPES_FILE))
    gtids = [i for i, e in enumerate(events) if e.type_name == "MARIADB_GTID"]
    copied = events[gtids[3] : gtids[4]]  # a whole transaction, again, in a domain of its own
    copied[0] = replace(copied[0], domain_id=99, seq_no=1)  # (GTIDs of a domain must grow)
    at = events[gtids[2]].header.offset
    with pytest.raises(BinlogError, match="inside the transaction that starts at"):
        insert_events(target, events[gtids[2] + 1].header.offset, copied)
    with pytest.raises(BinlogError, match=f"no event starts at {at + 1}"):
        insert_events(target, at + 1, copied)
    assert target.read_bytes() == read(TYPES_FILE)
    inserted = insert_events(target, at, copied)
    assert inserted == sum(e.header.event_size for e in copied)
    assert target.stat().st_size == len(read(TYPES_FILE)) + inserted
    with binlogkit.open(target, schema=None) as reader:
        back = list(reader)
    assert all(e.header.log_pos == e.header.end for e in back)
    fmt = back[0].context()  # type: ignore[attr-defined]
    want = events[: gtids[2]] + copied + events[gtids[2] :]
    assert [e.encode_body(fmt) for e in back] == [e.encode_body(fmt) for e in want]
    if TOOL is not None:
        with local_time_zone("UTC"):
            tool = subprocess.run([TOOL, "-vv", str(target)], capture_output=True, check=False)
            assert (tool.returncode, tool.stderr) == (0, b"")
            assert_same_dump(tool.stdout, our_dump(target, "-vv"), "after an insert")
