"""Resume points of a replication stream: positions, GTIDs and transaction boundaries.

Real binlog files are fed to :class:`StreamDecoder` one event per packet, as
a dump sends them; every event must come out at its own offset in the file,
with the next event's offset as its resume position (MariaDB 11.8 files
write log_pos 0 inside transactions), and the executed GTIDs at the end of a
file must equal what the server wrote at the start of the next one
(PREVIOUS_GTIDS / GTID_LIST). The network stream of a MariaDB GTID dump is
the documented example of the MariaDB replication-protocol pages.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from corpus_files import CORPUS

import binlogkit
from binlogkit.binlog.constants import EventType
from binlogkit.binlog.framing import EventFramer, Frame, Signal
from binlogkit.errors import BinlogError
from binlogkit.gtid import MariaGtidList
from binlogkit.protocol.replication import (
    ResumePoint,
    StreamDecoder,
    is_stream_only,
    parse_stream_packet,
)

_GTID_TYPES = {EventType.GTID, EventType.ANONYMOUS_GTID, EventType.GTID_TAGGED}
_GTID_TYPES |= {EventType.MARIADB_GTID}


def frames(path: Path) -> Iterator[Frame]:
    framer = EventFramer(file=str(path))
    framer.receive_data(path.read_bytes())
    framer.receive_data(b"")
    while not isinstance(frame := framer.next_frame(), Signal):
        yield frame


def clean_v4_files() -> list[str]:
    manifest = CORPUS / "MANIFEST.tsv"
    if not manifest.is_file():
        return []
    with manifest.open(newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    files = [
        row["file"]
        for row in rows
        if row["binlog_ver"] == "4" and not row["anomalies"] and "crypt" not in row["file"]
    ]
    # MariaDB 10.11's own files; "compressed" has DDL groups ended by compressed QUERY events
    local = sorted(CORPUS.glob("local-mariadb-10.11/*/mysql-bin.[0-9]*[0-9]"))
    return files + [str(p.relative_to(CORPUS)) for p in local if p.parent.name != "encrypted"]


CLEAN = clean_v4_files()


def stream_file(path: Path, decoder: StreamDecoder) -> Iterator[tuple[Frame, list]]:  # type: ignore[type-arg]
    for frame in frames(path):
        yield frame, decoder.feed(frame.raw)


@pytest.mark.parametrize("name", CLEAN or ["<no corpus>"])
def test_stream_positions_match_the_file(corpus_dir: Path, name: str) -> None:
    path = corpus_dir / name
    base = path.name
    try:
        all_frames = list(frames(path))
        with binlogkit.open(str(path)) as reader:
            for _ in reader:
                pass
    except BinlogError:
        pytest.skip("a deliberately damaged test file")
    if any(f.header.log_pos not in (0, f.header.end) for f in all_frames):
        pytest.skip("a test file whose log_pos values are not its offsets (made up, not served)")
    decoder = StreamDecoder(base, 4, checksum=all_frames[0].checksum_length > 0)
    for frame in all_frames:
        header = frame.header
        if header.type_code in _GTID_TYPES:
            # a transaction starts only where the previous one ended
            assert decoder.tracker.last_complete.position == header.offset
            assert decoder.tracker.point.complete
        decoded = decoder.feed(frame.raw)
        outer = decoded[0][0]
        assert (outer.header.file, outer.header.offset) == (base, header.offset)
        assert outer.header == header
        for event, point in decoded:
            if header.type_code == EventType.ROTATE:
                assert (point.file, point.position) == (event.next_file, event.position)
            else:
                assert (point.file, point.position) == (base, header.end)
            if event.header.type_code == EventType.XID:
                assert point.complete
    if all_frames[-1].header.type_code in (EventType.ROTATE, EventType.STOP):
        assert decoder.tracker.point.complete


def _chain(corpus_dir: Path, folder: str, names: list[str]) -> list[tuple[object, object]]:
    """(executed GTIDs after streaming file N, GTIDs written at the start of file N+1)."""
    pairs = []
    previous_end = None
    for name in names:
        path = corpus_dir / folder / name
        decoder = StreamDecoder(name, 4)
        start = None
        for _, decoded in stream_file(path, decoder):
            for event, _point in decoded:
                if start is None and event.header.type_code in (
                    EventType.PREVIOUS_GTIDS,
                    EventType.MARIADB_GTID_LIST,
                ):
                    start = event.gtids
                    if isinstance(start, MariaGtidList):
                        start = start.position()
        if previous_end is not None:
            pairs.append((previous_end, start))
        previous_end = decoder.tracker.last_complete.gtids
    return pairs


@pytest.mark.parametrize(
    ("folder", "names"),
    [
        ("local-mariadb-10.11/gtid", [f"mysql-bin.00000{i}" for i in range(1, 7)]),
        (
            "mariadb-operator+mariadb-poc/mariadb-binlog/binlogs/domain_id_0",
            [f"mariadb-repl-bin.00000{i}" for i in (4, 5, 6, 7)],
        ),
        ("avaitla+mysqlbinlog2parquet/test/samples", [f"mysql-bin.00000{i}" for i in (4, 5, 6)]),
    ],
)
def test_executed_gtids_chain_into_the_next_file(
    corpus_dir: Path, folder: str, names: list[str]
) -> None:
    pairs = _chain(corpus_dir, folder, names)
    assert pairs
    for tracked, written in pairs:
        assert isinstance(tracked, type(written))
        if isinstance(written, MariaGtidList):  # one GTID per domain, in any order
            assert sorted(tracked) == sorted(written)  # type: ignore[call-overload]
        else:
            assert tracked == written


# The MariaDB documentation's capture of a GTID dump (MariaDB 10.2.10, CRC32):
# fake ROTATE, FDE, GTID_LIST, BINLOG_CHECKPOINT, fake GTID_LIST, GTID, QUERY.
DOC_STREAM = (
    """
30 00 00 01 00 00 00 00 00 04 d9 27 00 00 2f 00 00 00 00 00 00 00 20 00 04 00 00 00 00 00 00 00
6d 79 73 71 6c 2d 62 69 6e 2e 30 30 30 30 33 34 d5 3f ea d7 fd 00 00 02 00 fb cc 37 5a 0f d9 27
00 00 fc 00 00 00 00 01 00 00 00 00 04 00 31 30 2e 32 2e 31 30 2d 4d 61 72 69 61 44 42 2d 6c 6f
67 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
00 00 00 00 13 38 0d 00 08 00 12 00 04 04 04 04 12 00 00 e4 00 04 1a 08 00 00 00 08 08 08 02 00
00 00 0a 0a 0a 00 00 00 00 00 00 00 00 00 00 00
"""
    + "00" * 112
    + """
00 00 00 00 00 04 13 04 00 0d 08 08 08 0a 0a 0a 01 17 0b 12 63 3c 00 00 03 00 fb cc 37 5a a3 d9
27 00 00 3b 00 00 00 3b 01 00 00 00 00 02 00 00 00 00 00 00 00 01 00 00 00 1e 00 00 00 00 00 00
00 00 00 00 00 d9 27 00 00 86 26 00 00 00 00 00 00 b6 33 8a 22 2c 00 00 04 00 fb cc 37 5a a1 d9
27 00 00 2b 00 00 00 66 01 00 00 00 00 10 00 00 00 6d 79 73 71 6c 2d 62 69 6e 2e 30 30 30 30 33
34 16 1f fe 3f 2c 00 00 05 00 00 00 00 00 a3 d9 27 00 00 2b 00 00 00 34 06 00 00 20 00 01 00 00
00 00 00 00 00 d9 27 00 00 8c 26 00 00 00 00 00 00 4a 01 94 22 2b 00 00 06 00 94 fd 38 5a a2 d9
27 00 00 2a 00 00 00 5e 06 00 00 08 00 8d 26 00 00 00 00 00 00 00 00 00 00 29 00 00 00 00 00 00
22 87 c0 61 4c 00 00 07 00 94 fd 38 5a 02 d9 27 00 00 4b 00 00 00 a9 06 00 00 00 00 21 00 00 00
00 00 00 00 00 00 00 1a 00 00 00 00 00 00 01 00 00 20 54 00 00 00 00 06 03 73 74 64 04 08 00 08
00 08 00 00 66 6c 75 73 68 20 74 61 62 6c 65 73 6e c8 89 60
"""
)


def doc_packets() -> list[bytes]:
    raw = bytes.fromhex(DOC_STREAM)
    out = []
    while raw:
        length = int.from_bytes(raw[:3], "little")
        out.append(raw[4 : 4 + length])
        raw = raw[4 + length :]
    return out


def test_documented_mariadb_gtid_dump() -> None:
    decoder = StreamDecoder("", 4, MariaGtidList.parse("0-10201-9868"))
    seen: list[tuple[str, int, ResumePoint, bool]] = []
    for payload in doc_packets():
        packet = parse_stream_packet(payload)
        for event, point in decoder.feed(packet.event):  # type: ignore[union-attr]
            seen.append((event.header.type_name, event.header.offset, point, is_stream_only(event)))
    names = [s[0] for s in seen]
    assert names == [
        "ROTATE",
        "FORMAT_DESCRIPTION",
        "MARIADB_GTID_LIST",
        "MARIADB_BINLOG_CHECKPOINT",
        "MARIADB_GTID_LIST",
        "MARIADB_GTID",
        "QUERY",
    ]
    file = "mysql-bin.000034"
    positions = [(s[2].file, s[2].position) for s in seen]
    ends = [4, 256, 315, 358, 1588, 1630, 1705]
    assert positions == [(file, end) for end in ends]
    assert [s[1] for s in seen[1:4]] == [4, 256, 315]
    assert [s[1] for s in seen[5:]] == [1588, 1630]
    assert [s[3] for s in seen] == [True, False, False, False, True, False, False]
    assert [s[2].complete for s in seen] == [True] * 5 + [False, True]
    assert str(seen[-1][2].gtids) == "0-10201-9869"
    assert decoder.tracker.last_complete == seen[-1][2]


# From the semi-sync page: an idle source at mysql-bin.000034:1145.
HEARTBEAT = "000000001bd92700002700000079040000 0000 6d7973716c2d62696e2e303030303334 edefe1f0"


def test_heartbeat_leaves_the_resume_point() -> None:
    decoder = StreamDecoder("mysql-bin.000034", 1354, MariaGtidList.parse("0-1-5"))
    before = decoder.tracker.point
    ((event, point),) = decoder.feed(bytes.fromhex(HEARTBEAT))
    assert event.header.type_name == "HEARTBEAT"
    assert (event.log_file, event.position) == ("mysql-bin.000034", 1145)  # type: ignore[attr-defined]
    assert is_stream_only(event)
    assert point == before


def _decode_alongside_feed(packets: list[bytes], make: Callable[[], StreamDecoder]) -> int:
    """Feed ``packets`` to two decoders, one through :meth:`StreamDecoder.decode`: the usual
    packets' events come alone, with the tracker at feed's resume point. Returns how many did."""
    fed, decoded = make(), make()
    alone = 0
    for raw in packets:
        expected = fed.feed(raw)
        got = decoded.decode(raw)
        if isinstance(got, list):
            assert got == expected
            continue
        alone += 1
        ((event, point),) = expected
        assert got == event and got.header == event.header
        assert not is_stream_only(got)
        assert got.header.log_pos and got.header.type_code != EventType.ROTATE
        assert decoded.tracker.point == point
        assert decoded.tracker.last_complete == fed.tracker.last_complete
    return alone


def test_decode_gives_the_usual_event_alone() -> None:
    packets = [parse_stream_packet(p).event for p in doc_packets()]  # type: ignore[union-attr]
    alone = _decode_alongside_feed(
        packets, lambda: StreamDecoder("", 4, MariaGtidList.parse("0-10201-9868"))
    )
    assert alone == 5  # all but the fake ROTATE and the fake GTID_LIST (the stream-only ones)


def test_decode_gives_the_usual_event_alone_in_a_file(corpus_dir: Path) -> None:
    path = corpus_dir / "local-mariadb-10.11/gtid/mysql-bin.000002"
    packets = [frame.raw for frame in frames(path)]
    alone = _decode_alongside_feed(packets, lambda: StreamDecoder(path.name, 4))
    assert alone == len(packets) - 1  # all but the ROTATE at the end
