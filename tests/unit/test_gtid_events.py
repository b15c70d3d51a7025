"""GTID and transaction-level event codecs, on bodies built by hand from the servers' layouts.

Every body here is written field by field from the format's definition (see
each codec's docstring and the MySQL/MariaDB sources it cites); the tests
check the decoded fields and that encoding gives the same bytes back.
TRANSACTION_CONTEXT and VIEW_CHANGE never appear in the corpus, so these
round trips are their only check.
"""

from __future__ import annotations

import struct
import zlib
from datetime import UTC, datetime
from uuid import UUID

import pytest
import zstandard

from binlogkit.binlog.constants import MAGIC, ChecksumAlg, EventType
from binlogkit.binlog.context import DecodeContext, DecodeOptions, FormatContext
from binlogkit.binlog.decoder import BinlogDecoder, encode_event
from binlogkit.binlog.events import EVENT_CODECS, Event, XidEvent
from binlogkit.binlog.events.format_description import FormatDescriptionEvent
from binlogkit.binlog.events.gtid import (
    AnonymousGtidEvent,
    GtidEvent,
    PreviousGtidsEvent,
    TaggedGtidEvent,
)
from binlogkit.binlog.events.mariadb_gtid import (
    MariaGtidEvent,
    MariaGtidFlag,
    MariaGtidListEvent,
)
from binlogkit.binlog.events.payload import CompressionType, TransactionPayloadEvent
from binlogkit.binlog.events.transaction import (
    TransactionContextEvent,
    ViewChangeEvent,
    XaPrepareEvent,
    Xid,
)
from binlogkit.binlog.framing import Signal
from binlogkit.binlog.header import EventHeader
from binlogkit.errors import DecodeError, EncodeError
from binlogkit.gtid import Gtid, GtidSet, MariaGtid, MariaGtidList

A = UUID("aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa")
ONES = UUID("11111111-1111-1111-1111-111111111111")
MYSQL = FormatContext(server_version="8.0.36", checksum=ChecksumAlg.CRC32)
MARIADB = FormatContext(server_version="10.11.6-MariaDB-log", checksum=ChecksumAlg.CRC32)


def header(code: int, server_id: int = 1) -> EventHeader:
    return EventHeader(1700000000, code, server_id, 0, 0, 0)


def decode(code: int, body: bytes, fmt: FormatContext = MYSQL, server_id: int = 1) -> Event:
    return EVENT_CODECS[code].decode(header(code, server_id), body, DecodeContext(fmt))


def round_trip(code: int, body: bytes, fmt: FormatContext = MYSQL) -> Event:
    event = decode(code, body, fmt)
    assert event.encode_body(fmt) == body
    return event


# -- GTID / ANONYMOUS_GTID ------------------------------------------------------

BASE = b"\x01" + A.bytes + struct.pack("<q", 7)  # flags, sid, gno (5.6: all there is)
CLOCK = b"\x02" + struct.pack("<qq", 5, 6)  # 5.7: lt type 2, last_committed, sequence_number


def seven(value: int) -> bytes:
    return value.to_bytes(7, "little")


def test_gtid_56() -> None:
    event = round_trip(EventType.GTID, BASE)
    assert isinstance(event, GtidEvent)
    assert event.gtid == Gtid(A, 7)
    assert event.may_have_sbr
    assert event.lt_type is None and event.last_committed is None


def test_gtid_57() -> None:
    event = round_trip(EventType.GTID, BASE + CLOCK)
    assert isinstance(event, GtidEvent)
    assert (event.lt_type, event.last_committed, event.sequence_number) == (2, 5, 6)
    assert event.immediate_commit_timestamp is None


def test_gtid_80_equal_timestamps_and_versions() -> None:
    """Bit 55 / bit 31 clear: one timestamp and one version stand for both."""
    body = BASE + CLOCK + seven(1_700_000_000_123_456) + b"\xfc\x2c\x01" + struct.pack("<I", 80036)
    event = round_trip(EventType.GTID, body)
    assert isinstance(event, GtidEvent)
    assert (
        event.immediate_commit_timestamp == event.original_commit_timestamp == 1_700_000_000_123_456
    )
    assert event.original_commit_time == datetime(2023, 11, 14, 22, 13, 20, 123456, tzinfo=UTC)
    assert event.transaction_length == 300
    assert event.immediate_server_version == event.original_server_version == 80036
    assert event.commit_group_ticket is None


def test_gtid_80_replicated_with_ticket() -> None:
    """Bit 55 / bit 31 set: the original timestamp and version follow; then the ticket."""
    body = (
        BASE
        + CLOCK
        + seven(1_700_000_000_000_000 | 1 << 55)
        + seven(1_600_000_000_000_000)
        + b"\xfa"
        + struct.pack("<II", 80036 | 1 << 31, 50744)
        + struct.pack("<Q", 9)
    )
    event = round_trip(EventType.GTID, body)
    assert isinstance(event, GtidEvent)
    assert event.immediate_commit_timestamp == 1_700_000_000_000_000
    assert event.original_commit_timestamp == 1_600_000_000_000_000
    assert event.transaction_length == 250
    assert (event.immediate_server_version, event.original_server_version) == (80036, 50744)
    assert event.commit_group_ticket == 9


def test_gtid_keeps_unknown_bytes() -> None:
    old_clock = b"\x01" + b"\x33" * 8  # 5.7.4-: another lt type, not understood
    event = round_trip(EventType.GTID, BASE + old_clock)
    assert isinstance(event, GtidEvent)
    assert event.lt_type == 1 and event.extra == b"\x33" * 8


def test_anonymous_gtid() -> None:
    body = b"\x00" + bytes(16) + bytes(8) + CLOCK
    event = round_trip(EventType.ANONYMOUS_GTID, body)
    assert isinstance(event, AnonymousGtidEvent)
    assert event.anonymous and event.gtid is None and not event.may_have_sbr
    with pytest.raises(DecodeError):
        decode(EventType.ANONYMOUS_GTID, BASE)  # GNO must be 0
    with pytest.raises(DecodeError):
        decode(EventType.GTID, b"\x00" + A.bytes + bytes(8))  # GNO must be >= 1


def test_gtid_encode_needs_earlier_fields() -> None:
    event = GtidEvent(header(EventType.GTID), 0, A, 1, transaction_length=5)
    with pytest.raises(EncodeError):
        event.encode_body(MYSQL)


# -- GTID_TAGGED ---------------------------------------------------------------

# flags=1, uuid=11..11 (each byte 17 -> 0x22), gno=3 (signed -> 6), tag "ab",
# last_committed=0, sequence_number=1 (signed -> 2), immediate ts=5,
# transaction_length=100, immediate server version 90600 (3 bytes).
TAGGED_FIELDS = (
    b"\x00\x02"
    + b"\x02"
    + b"\x22" * 16
    + b"\x04\x0c"
    + b"\x06\x04ab"
    + b"\x08\x00"
    + b"\x0a\x04"
    + b"\x0c\x0a"
    + b"\x10\xc8"
    + b"\x12\x43\x0f\x0b"
)
# format version 1, message size 40 (this whole body), last non-ignorable field 0
TAGGED = b"\x02\x50\x00" + TAGGED_FIELDS


def test_tagged_gtid_known_bytes() -> None:
    assert len(TAGGED) == 40
    event = round_trip(EventType.GTID_TAGGED, TAGGED)
    assert isinstance(event, TaggedGtidEvent)
    assert event.gtid == Gtid.parse("11111111-1111-1111-1111-111111111111:ab:3")
    assert (event.flags, event.last_committed, event.sequence_number) == (1, 0, 1)
    assert event.immediate_commit_timestamp == event.original_commit_timestamp == 5
    assert event.transaction_length == 100
    assert event.immediate_server_version == event.original_server_version == 90600
    assert event.commit_group_ticket is None and event.unknown == b""


def test_tagged_gtid_optional_fields_and_long_message() -> None:
    event = TaggedGtidEvent(
        header(EventType.GTID_TAGGED),
        0,
        A,
        2**40,
        "t" * 32,
        last_committed=-1,
        sequence_number=2**33,
        immediate_commit_timestamp=1_700_000_000_000_000,
        original_commit_timestamp=1_600_000_000_000_000,
        transaction_length=70000,
        immediate_server_version=90600,
        original_server_version=80400,
        commit_group_ticket=12,
        unknown=b"\x18" + bytes(60),  # field id 12 and a value: from a newer server
    )
    body = event.encode_body(MYSQL)
    assert body[1:3] == (len(body) << 2 | 1).to_bytes(2, "little")  # size needs 2 bytes
    assert decode(EventType.GTID_TAGGED, body) == event


def test_tagged_gtid_rejects() -> None:
    with pytest.raises(DecodeError):
        decode(EventType.GTID_TAGGED, b"\x02\x7e\x00" + TAGGED_FIELDS)  # size past the body
    missing_tag = b"\x02" + bytes([(3 + 2 + 17 + 2) << 1]) + b"\x00" + TAGGED_FIELDS[:21]
    with pytest.raises(DecodeError):
        decode(EventType.GTID_TAGGED, missing_tag)


# -- PREVIOUS_GTIDS ----------------------------------------------------------


def test_previous_gtids() -> None:
    gtids = GtidSet.parse(f"{A}:1-5:7,{ONES}:mytag:1-2")
    body = gtids.encode()
    event = round_trip(EventType.PREVIOUS_GTIDS, body)
    assert isinstance(event, PreviousGtidsEvent)
    assert event.gtids == gtids and event.tagged_format and event.encoded is None


def test_previous_gtids_keeps_non_canonical_bytes() -> None:
    """Two entries of one UUID (the server would merge them) survive re-encoding."""
    one = A.bytes + struct.pack("<Qqq", 1, 1, 3)
    body = struct.pack("<Q", 2) + one + A.bytes + struct.pack("<Qqq", 1, 5, 6)
    event = round_trip(EventType.PREVIOUS_GTIDS, body)
    assert isinstance(event, PreviousGtidsEvent)
    assert str(event.gtids) == f"{A}:1-2:5"
    assert event.encoded == body
    with pytest.raises(DecodeError):
        decode(EventType.PREVIOUS_GTIDS, b"\x01" + bytes(7))


# -- XA_PREPARE, TRANSACTION_CONTEXT, VIEW_CHANGE --------------------------


def test_xa_prepare() -> None:
    body = b"\x01" + struct.pack("<iII", 1, 1, 2) + b"g" + b"bq"
    event = round_trip(EventType.XA_PREPARE, body)
    assert isinstance(event, XaPrepareEvent)
    assert event.one_phase and event.xid == Xid(1, b"g", b"bq")
    assert str(event.xid) == "X'67',X'6271',1"
    with pytest.raises(DecodeError):
        decode(EventType.XA_PREPARE, b"\x00" + struct.pack("<iII", 1, 65, 0) + bytes(65))


@pytest.mark.parametrize(
    ("text", "xid"),
    [
        ("X'67',X'6271',1", Xid(1, b"g", b"bq")),
        ("X'00FF',X'',-3", Xid(-3, b"\0\xff")),
        ("X'786131',X'',1", Xid(1, b"xa1")),
    ],
)
def test_xid_from_its_printed_form(text: str, xid: Xid) -> None:
    assert Xid.parse(text) == xid
    assert Xid.parse(str(xid)) == xid


@pytest.mark.parametrize(
    "text", ["'x'", "X'7',X'',1", "X'78',X\"\",1", "X'78',X'',1 ONE PHASE", ""]
)
def test_xid_not_in_its_printed_form(text: str) -> None:
    with pytest.raises(ValueError):
        Xid.parse(text)


def test_transaction_context() -> None:
    uuid = str(A).encode()
    snapshot = GtidSet.parse(f"{A}:1-3").encode()
    items = [b"\x01" * 8, b"\x02" * 8]
    body = (
        struct.pack("<BIBIII", len(uuid), 77, 1, len(snapshot), len(items), 1)
        + uuid
        + snapshot
        + b"".join(struct.pack("<H", len(i)) + i for i in items)
        + struct.pack("<H", 3)
        + b"abc"
    )
    event = round_trip(EventType.TRANSACTION_CONTEXT, body)
    assert isinstance(event, TransactionContextEvent)
    assert event.server_uuid == str(A)
    assert (event.thread_id, event.gtid_specified) == (77, True)
    assert event.snapshot_gtids == GtidSet.parse(f"{A}:1-3")
    assert event.write_set == tuple(items) and event.read_set == (b"abc",)
    with pytest.raises(DecodeError):
        decode(EventType.TRANSACTION_CONTEXT, body + b"x")


def test_view_change() -> None:
    view_id = b"15953530981234567:12"
    entries = [(b"group_gtid_executed", b"aaaa:1-10"), (b"k", b"")]
    body = (
        view_id.ljust(40, b"\0")
        + struct.pack("<qI", 42, len(entries))
        + b"".join(
            struct.pack("<H", len(k)) + k + struct.pack("<I", len(v)) + v for k, v in entries
        )
    )
    event = round_trip(EventType.VIEW_CHANGE, body)
    assert isinstance(event, ViewChangeEvent)
    assert event.view_id == view_id.decode()
    assert event.seq_number == 42
    assert event.certification_info == tuple(entries)
    with pytest.raises(DecodeError):
        decode(EventType.VIEW_CHANGE, bytes(40) + struct.pack("<qI", 1, 0))  # empty view id


# -- MariaDB GTID and GTID_LIST -----------------------------------------------


def maria(seq: int, domain: int, flags: int) -> bytes:
    return struct.pack("<QIB", seq, domain, flags)


def test_maria_gtid_padded() -> None:
    flags = MariaGtidFlag.TRANSACTIONAL | MariaGtidFlag.ALLOW_PARALLEL
    body = maria(5, 0, flags) + bytes(6)
    event = round_trip(EventType.MARIADB_GTID, body, MARIADB)
    assert isinstance(event, MariaGtidEvent)
    assert event.gtid == MariaGtid(0, 1, 5)
    assert event.transactional and not event.standalone and not event.ddl
    assert event.commit_id is None and event.flags_extra == 0 and event.trailing == b""


def test_maria_gtid_group_commit() -> None:
    flags = MariaGtidFlag.GROUP_COMMIT_ID | MariaGtidFlag.STANDALONE | MariaGtidFlag.DDL
    event = round_trip(
        EventType.MARIADB_GTID, maria(9, 3, flags) + struct.pack("<Q", 1234), MARIADB
    )
    assert isinstance(event, MariaGtidEvent)
    assert event.commit_id == 1234 and event.standalone and event.ddl


def test_maria_gtid_xa_with_extra_engines() -> None:
    flags = MariaGtidFlag.PREPARED_XA | MariaGtidFlag.TRANSACTIONAL
    body = maria(84, 0, flags) + struct.pack("<iBB", 1, 3, 2) + b"xa1" + b"b2" + b"\x01\x02"
    event = round_trip(EventType.MARIADB_GTID, body, MARIADB)
    assert isinstance(event, MariaGtidEvent)
    assert event.xid == Xid(1, b"xa1", b"b2")
    assert (event.flags_extra, event.extra_engines) == (1, 2)


def test_maria_gtid_thread_id_and_alter() -> None:
    """11.5+ thread id (4 bytes) after flags_extra, padded; 10.8+ commit-alter sequence."""
    body = maria(1, 0, 0x29) + b"\x10" + struct.pack("<I", 71) + b"\x00"
    event = round_trip(EventType.MARIADB_GTID, body, MARIADB)
    assert isinstance(event, MariaGtidEvent)
    assert event.thread_id == 71 and len(body) == 19
    body = maria(2, 0, 0x01) + b"\x14" + struct.pack("<QI", 77, 5)
    event = round_trip(EventType.MARIADB_GTID, body, MARIADB)
    assert isinstance(event, MariaGtidEvent)
    assert (event.sa_seq_no, event.thread_id) == (77, 5)


def test_maria_gtid_keeps_odd_trailing_bytes() -> None:
    body = maria(1, 0, 0) + b"\x00\x00\x07" + bytes(3)
    event = round_trip(EventType.MARIADB_GTID, body, MARIADB)
    assert isinstance(event, MariaGtidEvent)
    assert event.trailing == b"\x00\x00\x07\x00\x00\x00"


def test_maria_gtid_built_is_padded() -> None:
    event = MariaGtidEvent(header(EventType.MARIADB_GTID), 3, 0, MariaGtidFlag.STANDALONE)
    assert event.encode_body(MARIADB) == maria(3, 0, 1) + bytes(6)
    with pytest.raises(EncodeError):
        MariaGtidEvent(
            header(EventType.MARIADB_GTID), 3, 0, MariaGtidFlag.GROUP_COMMIT_ID
        ).encode_body(MARIADB)


def test_maria_gtid_list() -> None:
    body = (
        struct.pack("<I", 2 | 2 << 28)
        + struct.pack("<IIQ", 7, 1, 94)
        + struct.pack("<IIQ", 9, 1, 1000)
    )
    event = round_trip(EventType.MARIADB_GTID_LIST, body, MARIADB)
    assert isinstance(event, MariaGtidListEvent)
    assert event.gtids == MariaGtidList.parse("7-1-94,9-1-1000") and event.flags == 2
    with pytest.raises(DecodeError):
        decode(EventType.MARIADB_GTID_LIST, struct.pack("<I", 1) + bytes(15), MARIADB)


# -- TRANSACTION_PAYLOAD ---------------------------------------------------


def raw_event(code: int, body: bytes, server_id: int = 1) -> bytes:
    """An inner event: 19-byte header with log_pos 0, no checksum."""
    return struct.pack("<IBIIIH", 1700000000, code, server_id, 19 + len(body), 0, 0) + body


def tlv(kind: int, value: int) -> bytes:
    assert value < 251
    return bytes([kind, 1, value])


XID_1 = raw_event(EventType.XID, struct.pack("<Q", 1))
XA = raw_event(EventType.XA_PREPARE, b"\x00" + struct.pack("<iII", 1, 1, 0) + b"x")
INNER = XID_1 + XA


def test_payload_zstd() -> None:
    compressed = zstandard.ZstdCompressor().compress(INNER)
    head = tlv(2, 0) + tlv(3, len(INNER)) + tlv(1, len(compressed)) + b"\x00"
    event = round_trip(EventType.TRANSACTION_PAYLOAD, head + compressed)
    assert isinstance(event, TransactionPayloadEvent)
    assert event.compression_type == CompressionType.ZSTD
    assert event.uncompressed_size == len(INNER) and event.payload_size == len(compressed)
    assert event.header_fields is None
    assert event.uncompressed() == INNER
    outer = EventHeader(1, EventType.TRANSACTION_PAYLOAD, 1, 500, 0, 0, offset=1000, file="f")
    event = TransactionPayloadEvent(outer, event.compression_type, len(INNER), compressed)
    inner = event.inner_events(DecodeContext(MYSQL))
    assert [type(e) for e in inner] == [XidEvent, XaPrepareEvent]
    assert isinstance(inner[0], XidEvent) and inner[0].xid == 1
    assert all(e.header.offset == 1500 and e.header.file == "f" for e in inner)
    inner_fmt = FormatContext(server_version="8.0.36")
    assert b"".join(encode_event(e, inner_fmt) for e in inner) == INNER


def test_payload_keeps_non_canonical_header() -> None:
    """Fields in another order, plus an unknown field type 9, survive re-encoding."""
    none = bytes([2, 3, 0xFC, 0xFF, 0x00])  # type 2, length 3, packed 255
    head = tlv(1, len(INNER)) + bytes([9, 2, 7, 7]) + none + b"\x00"
    event = round_trip(EventType.TRANSACTION_PAYLOAD, head + INNER)
    assert isinstance(event, TransactionPayloadEvent)
    assert event.compression_type == CompressionType.NONE and event.uncompressed_size is None
    assert event.header_fields == head
    assert len(event.inner_events(DecodeContext(MYSQL))) == 2
    with pytest.raises(DecodeError):
        decode(EventType.TRANSACTION_PAYLOAD, tlv(2, 0) + b"\x00" + INNER)  # no payload size


def test_payload_bad_inner_data() -> None:
    bad = TransactionPayloadEvent(header(EventType.TRANSACTION_PAYLOAD), 0, 10, b"not zstd")
    with pytest.raises(DecodeError):
        bad.inner_events(DecodeContext(MYSQL))
    cut = TransactionPayloadEvent(header(EventType.TRANSACTION_PAYLOAD), 255, None, XID_1[:-3])
    with pytest.raises(DecodeError):
        cut.inner_events(DecodeContext(MYSQL))


@pytest.mark.parametrize("compression", [CompressionType.ZSTD, CompressionType.NONE])
def test_payload_from_events(compression: CompressionType) -> None:
    inner = TransactionPayloadEvent(
        header(EventType.TRANSACTION_PAYLOAD), 255, None, INNER
    ).inner_events(DecodeContext(MYSQL))
    built = TransactionPayloadEvent.from_events(
        header(EventType.TRANSACTION_PAYLOAD), inner, MYSQL, compression_type=compression
    )
    assert built.uncompressed() == INNER
    again = decode(EventType.TRANSACTION_PAYLOAD, built.encode_body(MYSQL))
    assert again == built


def _fde() -> bytes:
    lengths = bytearray(41)
    lengths[EventType.TABLE_MAP - 1] = 8
    for code in (EventType.WRITE_ROWS, EventType.UPDATE_ROWS, EventType.DELETE_ROWS):
        lengths[code - 1] = 10
    lengths[EventType.GTID - 1] = lengths[EventType.ANONYMOUS_GTID - 1] = 42
    fde = FormatDescriptionEvent(
        header(EventType.FORMAT_DESCRIPTION), 4, "8.0.36", 0, 19, bytes(lengths), ChecksumAlg.CRC32
    )
    return encode_event(fde, MYSQL)


def test_payload_in_a_stream_feeds_the_table_cache() -> None:
    """Inner events come after the payload; an inner TABLE_MAP serves the rows event after it."""
    table_map = raw_event(
        EventType.TABLE_MAP,
        struct.pack("<Q", 77)[:6]
        + b"\x01\x00"
        + b"\x02db\x00"
        + b"\x01t\x00"
        + b"\x01"  # one column
        + bytes([3])  # LONG
        + b"\x00"  # no metadata
        + b"\x00",  # not nullable
    )
    write_rows = raw_event(
        EventType.WRITE_ROWS,
        struct.pack("<Q", 77)[:6]
        + b"\x01\x00"  # flags: statement end
        + b"\x02\x00"  # extra row info: just its length
        + b"\x01"  # one column
        + b"\x01"  # columns present
        + b"\x00"  # null bitmap
        + struct.pack("<i", -5),
    )
    inner = table_map + write_rows + XID_1
    compressed = zstandard.ZstdCompressor().compress(inner)
    body = tlv(2, 0) + tlv(3, len(inner)) + tlv(1, len(compressed)) + b"\x00" + compressed
    fde = _fde()
    payload_offset = 4 + len(fde)
    raw = struct.pack(
        "<IBIIIH", 1700000000, EventType.TRANSACTION_PAYLOAD, 1, 19 + len(body) + 4, 0, 0
    )
    raw += body
    raw += struct.pack("<I", zlib.crc32(raw))
    dec = BinlogDecoder(file="x", options=DecodeOptions())
    dec.receive_data(MAGIC + fde + raw)
    dec.receive_data(b"")
    events = []
    while not isinstance(event := dec.next_event(), Signal):
        events.append((event, dec.last_frame))
    codes = [e.header.type_code for e, _ in events]
    assert codes == [15, 40, 19, 30, 16]
    payload_end = payload_offset + len(raw)
    for event, frame in events[2:]:
        assert frame is None and event.header.offset == payload_end
    assert 77 in dec.tables
    rows = list(events[3][0].rows)  # type: ignore[attr-defined]
    assert len(rows) == 1 and list(rows[0].after.values()) == [-5]
