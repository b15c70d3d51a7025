"""GTID and transaction-level events of the real corpus: exact bytes and known answers.

Known answers come from the corpus's expected outputs (``mariadb-binlog -vv``
dumps, mysql-test ``.result`` files, a README that lists each file's GTIDs),
from bytes decoded by hand following the format's definition (the tagged
GTID file), and from invariants the servers guarantee: a GTID event's
transaction_length is the byte size of its transaction, its
immediate_server_version is the version in the format description, and the
PREVIOUS_GTIDS / GTID_LIST of a binlog is the set / state of the file before
it plus that file's GTIDs.
"""

from __future__ import annotations

import functools
import re
import struct
from dataclasses import dataclass, field, replace

import pytest
import zstandard
from corpus_files import CORPUS
from corpus_walk import (
    LOCAL_MARIADB,
    corpus_files,
    decode_up_to_damage,
    reference_dump,
    walk_file,
)

from binlogkit.binlog.constants import ChecksumAlg, EventType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.decoder import BinlogDecoder, encode_event
from binlogkit.binlog.events import Event, OpaqueEvent
from binlogkit.binlog.events.gtid import GtidEvent, PreviousGtidsEvent, TaggedGtidEvent
from binlogkit.binlog.events.mariadb_gtid import MariaGtidEvent, MariaGtidListEvent
from binlogkit.binlog.events.payload import TransactionPayloadEvent
from binlogkit.binlog.framing import Frame, crc32_ok
from binlogkit.gtid import Gtid, GtidSet, MariaGtid, MariaGtidList

pytestmark = pytest.mark.corpus

MINE = frozenset(
    {
        EventType.GTID,
        EventType.ANONYMOUS_GTID,
        EventType.PREVIOUS_GTIDS,
        EventType.TRANSACTION_CONTEXT,
        EventType.VIEW_CHANGE,
        EventType.XA_PREPARE,
        EventType.TRANSACTION_PAYLOAD,
        EventType.GTID_TAGGED,
        EventType.MARIADB_GTID,
        EventType.MARIADB_GTID_LIST,
    }
)
STD = "enhancedformysql+mysql-8.0.40/mysql-test/std_data/"
TAGGED_FILE = (
    "blackbeam+rust_mysql_common/test-data/binlogs/binlog_transaction_with_GTID_TAG.000001"
)
PAYLOAD_FILES = [
    "blackbeam+rust_mysql_common/test-data/binlogs/transaction_compression.000001",
    "osheroff+mysql-binlog-connector-java/src/test/resources/mysql-bin.compressed",
    "apecloud+mysql-binlog-connector-rust/tests/parse_file_tests/mysql-bin.000057",
]


@functools.cache
def _types(name: str) -> frozenset[int]:
    """The type codes of a file's events, from the header walk."""
    return frozenset(e.type_code for e in walk_file(name).events)


FILES = [
    name
    for name in corpus_files()
    if (CORPUS / name).is_file()
    and _types(name) & MINE
    and EventType.MARIADB_START_ENCRYPTION not in _types(name)  # the rest is ciphertext
]
MYSQL_GTID_FILES = [
    name
    for name in FILES
    if _types(name) & {EventType.GTID, EventType.ANONYMOUS_GTID, EventType.GTID_TAGGED}
]


@dataclass
class Decoded:
    """A file's events up to its end or its damage; inner events have no frame."""

    events: list[tuple[Event, Frame | None]] = field(default_factory=list)
    tables: dict[int, Event] = field(default_factory=dict)

    def outer(self) -> list[tuple[Event, Frame]]:
        return [(e, f) for e, f in self.events if f is not None]

    def of(self, cls: type[Event]) -> list[Event]:
        return [e for e, f in self.events if f is not None and isinstance(e, cls)]


@functools.cache
def decoded(name: str) -> Decoded:
    """Checksums are not verified: some mysql-test files were edited by hand."""
    dec = BinlogDecoder(file=name, options=DecodeOptions(verify_checksum=False))
    return Decoded(list(decode_up_to_damage(name, dec)), dec.tables)


def _gtid_events(d: Decoded) -> list[GtidEvent | TaggedGtidEvent]:
    return [e for e, f in d.outer() if isinstance(e, GtidEvent | TaggedGtidEvent)]


# -- bytes ------------------------------------------------------------------------


@pytest.mark.parametrize("name", FILES)
def test_decoded_by_own_codec_and_reencoded_exactly(corpus_dir: object, name: str) -> None:
    seen = 0
    for event, frame in decoded(name).outer():
        if event.header.type_code not in MINE:
            continue
        seen += 1
        where = f"{name} at {frame.header.offset} ({event.type_name})"
        assert not isinstance(event, OpaqueEvent), where
        encoded = encode_event(event, frame.fmt)
        if frame.checksum_length and not crc32_ok(frame.raw):
            assert encoded[:-4] == frame.raw[:-4], where  # a hand-edited event: body only
        else:
            assert encoded == frame.raw, where
    assert seen


@pytest.mark.parametrize("name", PAYLOAD_FILES)
def test_payload_inner_events(corpus_dir: object, name: str) -> None:
    """Inner events: the events of the decompressed payload, exact, at the payload's end."""
    d = decoded(name)
    found = 0
    for i, (event, frame) in enumerate(d.events):
        if not isinstance(event, TransactionPayloadEvent):
            continue
        assert frame is not None
        found += 1
        body = frame.raw[19 : len(frame.raw) - frame.checksum_length]
        assert event.payload == body[len(body) - event.payload_size :]
        data = zstandard.ZstdDecompressor().decompressobj().decompress(event.payload)
        assert len(data) == event.uncompressed_size
        sizes = []
        pos = 0
        while pos < len(data):
            sizes.append(struct.unpack_from("<I", data, pos + 9)[0])
            pos += sizes[-1]
        inner = d.events[i + 1 : i + 1 + len(sizes)]
        inner_fmt = replace(frame.fmt, checksum=ChecksumAlg.OFF)
        pos = 0
        for (inner_event, inner_frame), size in zip(inner, sizes, strict=True):
            assert inner_frame is None
            assert inner_event.header.offset == frame.header.end
            assert not isinstance(inner_event, OpaqueEvent)
            assert encode_event(inner_event, inner_fmt) == data[pos : pos + size]
            pos += size
        assert inner[-1][0].header.type_code == EventType.XID
        maps = [e for e, _ in inner if e.header.type_code == EventType.TABLE_MAP]
        assert maps and all(d.tables.get(m.table_id) is not None for m in maps)  # type: ignore[attr-defined]
        for rows_event, _ in inner:
            if rows_event.header.type_code in (EventType.WRITE_ROWS, EventType.UPDATE_ROWS):
                assert list(rows_event.rows)  # type: ignore[attr-defined]
    assert found


# -- MySQL known answers -------------------------------------------------------


@pytest.mark.parametrize(
    "name", [n for n in MYSQL_GTID_FILES if not n.startswith(STD + "binlog_recovery/")]
)
def test_transaction_length_and_server_version(corpus_dir: object, name: str) -> None:
    """transaction_length = bytes from the GTID event to the next one; version = the FDE's.

    (The binlog_recovery files hold deliberately broken transactions.)
    """
    outer = decoded(name).outer()
    starts = [i for i, (e, _) in enumerate(outer) if isinstance(e, GtidEvent | TaggedGtidEvent)]
    for i in starts:
        event, frame = outer[i]
        assert isinstance(event, GtidEvent | TaggedGtidEvent)
        if event.immediate_server_version is not None:
            major, minor, patch = frame.fmt.version
            assert event.immediate_server_version == major * 10000 + minor * 100 + patch
        if event.transaction_length is None:
            continue
        total = event.header.event_size
        for other, _ in outer[i + 1 :]:
            if other.header.type_code in (
                EventType.GTID,
                EventType.ANONYMOUS_GTID,
                EventType.GTID_TAGGED,
                EventType.ROTATE,
                EventType.STOP,
            ):
                break
            total += other.header.event_size
        assert event.transaction_length == total, f"{name} at {event.header.offset}"


def test_tagged_gtid_file(corpus_dir: object) -> None:
    """Decoded by hand from the bytes: the previous set's tagged entry and the next tagged GTID."""
    d = decoded(TAGGED_FILE)
    (previous,) = d.of(PreviousGtidsEvent)
    assert isinstance(previous, PreviousGtidsEvent) and previous.tagged_format
    uuid = "55778904-0299-11f1-b1b8-4ef0c4956feb"
    assert str(previous.gtids) == f"{uuid}:1-13:mytag:1-2"
    (gtid_event,) = d.of(TaggedGtidEvent)
    assert isinstance(gtid_event, TaggedGtidEvent)
    assert gtid_event.gtid == Gtid.parse(f"{uuid}:mytag:3")
    assert gtid_event.gtid not in previous.gtids
    assert (gtid_event.last_committed, gtid_event.sequence_number) == (0, 1)
    no_tag = decoded(
        "blackbeam+rust_mysql_common/test-data/binlogs/binlog_transaction_previous_GTID_no_tag.000001"
    )
    (untagged,) = no_tag.of(PreviousGtidsEvent)
    assert isinstance(untagged, PreviousGtidsEvent) and not untagged.tagged_format


def _own(name: str) -> GtidSet:
    return GtidSet.of(*(g for e in _gtid_events(decoded(name)) if (g := e.gtid) is not None))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # rpl_gtid_skip_with_parser_error.result skips these GTIDs of the file
        (STD + "binlog_56_gtid_reserved_word.000001", "11111111-1111-1111-1111-111111111111:2-4:6"),
        # rpl_atomic_ddl_rollback.result: the failed DDL of each file
        (STD + "rpl_atomic_ddl_rollback_table.000001", "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa:1"),
        (STD + "rpl_atomic_ddl_rollback_view.000001", "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa:2"),
    ],
)
def test_gtids_named_by_mysql_test_results(corpus_dir: object, name: str, expected: str) -> None:
    assert GtidSet.parse(expected) <= _own(name)


def _next_file(name: str) -> str | None:
    m = re.match(r"(.*\.)(\d{6})$", name)
    if not m:
        return None
    following = f"{m[1]}{int(m[2]) + 1:06d}"
    return following if following in FILES else None


# mysql-bin56.000001 and .000002 come from different server runs.
CHAINS = [
    n
    for n in FILES
    if (nxt := _next_file(n))
    and "mysql-bin56" not in n
    and EventType.PREVIOUS_GTIDS in _types(n) & _types(nxt)
]


@pytest.mark.parametrize("name", CHAINS)
def test_previous_gtids_chain(corpus_dir: object, name: str) -> None:
    """PREVIOUS_GTIDS of the next file = this file's PREVIOUS_GTIDS | its GTIDs."""
    nxt = _next_file(name)
    assert nxt is not None
    (mine,) = decoded(name).of(PreviousGtidsEvent)
    (theirs,) = decoded(nxt).of(PreviousGtidsEvent)
    assert isinstance(mine, PreviousGtidsEvent) and isinstance(theirs, PreviousGtidsEvent)
    assert theirs.gtids == mine.gtids | _own(name)
    assert not (mine.gtids & _own(name))


# -- MariaDB known answers -------------------------------------------------------


LOCAL = [n for n in FILES if n.startswith(f"{LOCAL_MARIADB}/")]
_LINE = re.compile(r"end_log_pos (\d+) [^\n]*\t(?:(GTID) ([^\n]*)|(Gtid list) (\[[^\]]*\]))")


@pytest.mark.parametrize("name", LOCAL)
def test_mariadb_binlog_dump(corpus_dir: object, name: str) -> None:
    """``GTID d-s-n [cid=..] [ddl] [trans]`` and ``Gtid list [...]`` lines of mariadb-binlog -vv."""
    printed = {
        int(m[1]): (m[2], m[3]) if m[2] else (m[4], m[5])
        for m in _LINE.finditer(reference_dump(name).decode("latin-1"))
    }
    assert printed
    last = max(printed)
    for event, _ in decoded(name).outer():
        if not isinstance(event, MariaGtidEvent | MariaGtidListEvent):
            continue
        if event.header.log_pos > last:
            break  # mariadb-binlog stopped early on some files (see NOTE.txt)
        kind, text = printed.pop(event.header.log_pos)
        if isinstance(event, MariaGtidEvent):
            assert kind == "GTID"
            gtid, *words = text.split()
            assert MariaGtid.parse(gtid) == event.gtid
            expected = {"ddl"} if event.ddl else set()
            expected |= {"trans"} if event.transactional else set()
            if event.commit_id is not None:
                expected.add(f"cid={event.commit_id}")
            assert set(words) == expected
        else:
            assert kind == "Gtid list"
            items = text.replace("#", "").strip()[1:-1]
            assert sorted(MariaGtidList.parse(items)) == sorted(event.gtids)
    assert not printed


def _state_after(name: str) -> MariaGtidList:
    d = decoded(name)
    (start,) = d.of(MariaGtidListEvent)
    assert isinstance(start, MariaGtidListEvent)
    state = start.gtids
    for event in d.of(MariaGtidEvent):
        assert isinstance(event, MariaGtidEvent)
        state = state.add(event.gtid)
    return state


MARIA_CHAINS = [
    n
    for n in FILES
    if (nxt := _next_file(n)) and EventType.MARIADB_GTID_LIST in _types(n) & _types(nxt)
]


@pytest.mark.parametrize("name", MARIA_CHAINS)
def test_gtid_list_chain(corpus_dir: object, name: str) -> None:
    """GTID_LIST of the next file = this file's GTID_LIST updated with its GTIDs."""
    nxt = _next_file(name)
    assert nxt is not None
    (theirs,) = decoded(nxt).of(MariaGtidListEvent)
    assert isinstance(theirs, MariaGtidListEvent)
    assert sorted(_state_after(name)) == sorted(theirs.gtids)


OPERATOR = "mariadb-operator+mariadb-poc/mariadb-binlog/"


def test_mariadb_operator_readme(corpus_dir: object) -> None:
    """The README lists PreviousGTIDs (the GTID list), FirstGTID and LastGTID of every file."""
    text = (CORPUS / "expected" / OPERATOR / "README.md").read_text()
    checked = 0
    for block in text.split("Getting binlog metadata from ")[1:]:
        name = OPERATOR + block.split()[0]
        if name not in FILES:
            continue
        values = dict(re.findall(r"^(PreviousGTIDs|FirstGTID|LastGTID): (.*)$", block, re.M))
        d = decoded(name)
        (gtid_list,) = d.of(MariaGtidListEvent)
        assert isinstance(gtid_list, MariaGtidListEvent)
        gtids = [e.gtid for e in d.of(MariaGtidEvent)]  # type: ignore[attr-defined]
        nil = "<nil>"
        assert str(gtid_list.gtids) == (
            "" if values["PreviousGTIDs"] == nil else values["PreviousGTIDs"]
        )
        assert (str(gtids[0]) if gtids else nil) == values["FirstGTID"]
        assert (str(gtids[-1]) if gtids else nil) == values["LastGTID"]
        checked += 1
    assert checked >= 8


def test_mdev6020_gtid_slave_pos(corpus_dir: object) -> None:
    """rpl_mdev6020.result: after replaying the binlog, @@gtid_slave_pos is 0-1-1381."""
    d = decoded("ottok+mariadb-10.3/mysql-test/std_data/mdev6020-mysql-bin.000001")
    position = MariaGtidList()
    for event in d.of(MariaGtidEvent):
        assert isinstance(event, MariaGtidEvent)
        position = position.advance(event.gtid)
    assert str(position) == "0-1-1381"
