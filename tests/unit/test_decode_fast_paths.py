"""The cheap decode paths read the same fields as the format says, and reject the same damage.

Bodies are written byte by byte from the format's definition (MariaDB's and
MySQL's log_event.cc): the rows post-header in the one-byte column count case
(the fast path) and the others, the MariaDB GTID start, the framer's CRC32
check on events mid-file, and large bodies handed out as views.
"""

from __future__ import annotations

import struct
import zlib

import pytest

from binlogkit.binlog.constants import ChecksumAlg, EventType
from binlogkit.binlog.context import DecodeContext, FormatContext
from binlogkit.binlog.events.mariadb_gtid import MariaGtidEvent
from binlogkit.binlog.events.rows import (
    DeleteRowsEvent,
    RowsEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.binlog.framing import END, EventFramer, Frame
from binlogkit.binlog.header import EventHeader
from binlogkit.binlog.tables import TableCache
from binlogkit.errors import ChecksumError, DecodeError

V1_ROWS = FormatContext(server_version="10.11.6-MariaDB-log")  # default post-header lengths


def header(code: int) -> EventHeader:
    return EventHeader(timestamp=1700000000, type_code=code, server_id=1, event_size=0)


def packed(n: int) -> bytes:
    """A length-encoded integer (1 byte below 251, else 0xfc and 2 bytes)."""
    return bytes([n]) if n < 251 else b"\xfc" + n.to_bytes(2, "little")


def tables(table_id: int, width: int) -> TableCache:
    """A decoder's table cache that knows one table of ``width`` INT columns."""
    cache = TableCache()
    types = b"\x03" * width
    cache.add(
        TableMapEvent(header(EventType.TABLE_MAP), table_id, 1, "db", "t", types, b"", b"\0"), b""
    )
    return cache


@pytest.mark.parametrize("width", [1, 8, 9, 250, 251, 300])
@pytest.mark.parametrize(
    ("cls", "code", "bitmaps"),
    [
        (WriteRowsEvent, EventType.WRITE_ROWS_V1, 1),
        (UpdateRowsEvent, EventType.UPDATE_ROWS_V1, 2),
        (DeleteRowsEvent, EventType.DELETE_ROWS_V1, 1),
        (UpdateRowsEvent, EventType.UPDATE_ROWS, 2),
    ],
)
def test_rows_post_header(width: int, cls: type[RowsEvent], code: int, bitmaps: int) -> None:
    v2 = code == EventType.UPDATE_ROWS
    nbytes = (width + 7) // 8
    first, second = b"\xa5" * nbytes, b"\x5a" * nbytes
    body = (0x0102030405).to_bytes(6, "little") + struct.pack("<H", 0x0001)
    if v2:
        body += struct.pack("<H", 2 + 3) + b"\x01\x07\x00"  # extra row info: partition 7
    body += packed(width) + (first + second)[: nbytes * bitmaps] + b"rows"
    ctx = DecodeContext(V1_ROWS, tables=tables(0x0102030405, width))
    event = cls.decode(header(code), body, ctx)
    assert (event.table_id, event.flags, event.width, event.data) == (
        0x0102030405,
        1,
        width,
        b"rows",
    )
    assert event.extra_info == (b"\x01\x07\x00" if v2 else None)
    assert event.columns_before == (first if cls is not WriteRowsEvent else None)
    expected_after = {WriteRowsEvent: first, UpdateRowsEvent: second, DeleteRowsEvent: None}
    assert event.columns_after == expected_after[cls]
    assert event.encode_body(V1_ROWS) == body
    # Cut inside the bitmaps, the column count or the post-header: a DecodeError each time.
    bitmaps_end = len(body) - len(b"rows")
    for cut in (bitmaps_end - 1, bitmaps_end - nbytes * bitmaps - 1, 7, 0):
        with pytest.raises(DecodeError):
            cls.decode(header(code), body[:cut], ctx)


def test_rows_body_as_a_view_keeps_copies() -> None:
    body = (7).to_bytes(6, "little") + b"\0\0" + packed(2) + b"\x03" + b"\x01\x00" * 40000
    ctx = DecodeContext(V1_ROWS, tables=tables(7, 2))
    event = WriteRowsEvent.decode(header(EventType.WRITE_ROWS_V1), memoryview(body), ctx)
    assert type(event.columns_after) is bytes and type(event.data) is bytes
    assert event.columns_after == b"\x03" and event.data == body[10:]


def test_mariadb_gtid_start_and_truncation() -> None:
    body = struct.pack("<QIB", 123456789, 3, 0x0C) + b"\0" * 6  # transactional, parallel
    event = MariaGtidEvent.decode(header(EventType.MARIADB_GTID), body, DecodeContext())
    assert (event.seq_no, event.domain_id, event.flags, event.commit_id) == (123456789, 3, 12, None)
    assert event.trailing == b"" and event.encode_body(FormatContext()) == body
    grouped = struct.pack("<QIBQ", 5, 0, 0x02, 99) + b"\0" * 6
    event = MariaGtidEvent.decode(header(EventType.MARIADB_GTID), grouped, DecodeContext())
    assert event.commit_id == 99
    with pytest.raises(DecodeError, match="13 bytes"):
        MariaGtidEvent.decode(header(EventType.MARIADB_GTID), body[:12], DecodeContext())


def _event(code: int, body: bytes, offset: int) -> bytes:
    size = 19 + len(body) + 4
    raw = struct.pack("<IBIIIH", 1700000000, code, 1, size, offset + size, 0) + body
    return raw + zlib.crc32(raw).to_bytes(4, "little")


def test_framer_checks_the_crc32_of_events_mid_file() -> None:
    fmt = FormatContext(server_version="10.11.6-MariaDB-log", checksum=ChecksumAlg.CRC32)
    first = _event(EventType.XID, (1).to_bytes(8, "little"), 4)
    second = _event(EventType.XID, (2).to_bytes(8, "little"), 4 + len(first))
    for damaged, ok in ((second, True), (second[:20] + b"\xff" + second[21:], False)):
        framer = EventFramer(offset=4, expect_magic=False, fmt=fmt)
        framer.receive_data(first + damaged)
        framer.receive_data(b"")
        frame = framer.next_frame()
        assert isinstance(frame, Frame) and frame.body == (1).to_bytes(8, "little")
        if ok:
            frame = framer.next_frame()
            assert isinstance(frame, Frame) and frame.header.offset == 4 + len(first)
            assert framer.next_frame() is END
        else:
            with pytest.raises(ChecksumError):
                framer.next_frame()


def test_large_bodies_are_views_small_ones_copies() -> None:
    fmt = FormatContext(server_version="10.11.6-MariaDB-log", checksum=ChecksumAlg.CRC32)
    for size, kind in ((100, bytes), (1 << 17, memoryview)):
        raw = _event(EventType.MARIADB_ANNOTATE_ROWS, b"q" * size, 4)
        frame = Frame(EventHeader.decode(raw, 0, 19), raw, fmt, 4)
        assert type(frame.body) is kind and bytes(frame.body) == b"q" * size
