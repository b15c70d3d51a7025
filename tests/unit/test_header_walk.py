"""The v4 header layout and the header walk, against headers written from the format's definition.

A v4 common header (MySQL's and MariaDB's log_event.h, LOG_EVENT_HEADER_LEN 19):
timestamp (4), type code (1), server id (4), event size (4), log_pos (4),
flags (2), all little-endian.
"""

from __future__ import annotations

import pytest

from binlogkit.binlog.constants import MAGIC, V4_HEADER_LENGTH
from binlogkit.binlog.header import (
    EVENT_SIZE_OFFSET,
    FLAGS_OFFSET,
    LOG_POS_OFFSET,
    SIZE_AND_LOG_POS,
    TYPE_CODE_OFFSET,
    V4_HEADER,
    HeaderWalk,
    format_description_size,
)

QUERY, XID, FORMAT_DESCRIPTION, GTID, START_V3, START_ENCRYPTION = 2, 16, 15, 33, 1, 164


def event(code: int, size: int, log_pos: int = 0) -> bytes:
    """An event of ``size`` bytes: its header byte by byte, then zero bytes."""
    head = (
        (1700000000).to_bytes(4, "little")
        + bytes([code])
        + (7).to_bytes(4, "little")
        + size.to_bytes(4, "little")
        + log_pos.to_bytes(4, "little")
        + (0x0001).to_bytes(2, "little")
    )
    return head + bytes(size - len(head))


def walked(data: bytes, start: int = 4, end: int | None = None, **kw: int) -> list[tuple[int, ...]]:
    return list(HeaderWalk(data, start, len(data) if end is None else end, **kw))


def test_the_layout_names_the_fields_where_the_format_puts_them() -> None:
    raw = event(XID, 31, log_pos=0x01020304)
    assert V4_HEADER.size == V4_HEADER_LENGTH
    assert V4_HEADER.unpack_from(raw) == (1700000000, XID, 7, 31, 0x01020304, 1)
    assert raw[TYPE_CODE_OFFSET] == XID
    assert raw[EVENT_SIZE_OFFSET : EVENT_SIZE_OFFSET + 4] == (31).to_bytes(4, "little")
    assert raw[LOG_POS_OFFSET : LOG_POS_OFFSET + 4] == (0x01020304).to_bytes(4, "little")
    assert raw[FLAGS_OFFSET] == 1
    assert SIZE_AND_LOG_POS.unpack_from(b"xx" + raw, 2) == (31, 0x01020304)


def test_the_walk_gives_each_whole_event_and_where_it_stopped() -> None:
    data = MAGIC + event(FORMAT_DESCRIPTION, 60) + event(GTID, 42) + event(XID, 31)
    walk = HeaderWalk(data, 4, len(data))
    assert list(walk) == [(4, FORMAT_DESCRIPTION, 60), (64, GTID, 42), (106, XID, 31)]
    assert (walk.stop, walk.damaged) == (137, False)
    assert walked(data, start=64) == [(64, GTID, 42), (106, XID, 31)]
    assert walked(data, start=137) == []


def test_a_partial_last_event_or_header_ends_the_walk() -> None:
    data = MAGIC + event(GTID, 42) + event(XID, 31)
    for end in (len(data) - 1, 46 + 18, 46):
        walk = HeaderWalk(data, 4, end)
        assert list(walk) == [(4, GTID, 42)]
        assert (walk.stop, walk.damaged) == (46, False)


def test_an_event_smaller_than_its_header_is_damage() -> None:
    data = MAGIC + event(GTID, 42) + event(XID, 31)
    damaged = bytearray(data)
    damaged[46 + EVENT_SIZE_OFFSET] = 18
    walk = HeaderWalk(bytes(damaged), 4, len(damaged))
    assert list(walk) == [(4, GTID, 42)]
    assert (walk.stop, walk.damaged) == (46, True)
    with_checksums = HeaderWalk(data, 4, len(data), min_size=32)
    assert list(with_checksums) == [(4, GTID, 42)]
    assert with_checksums.damaged


@pytest.mark.parametrize("code", [START_V3, START_ENCRYPTION])
def test_the_walk_stops_after_events_that_sizes_no_longer_follow(code: int) -> None:
    data = MAGIC + event(FORMAT_DESCRIPTION, 60) + event(code, 40) + event(XID, 31)
    walk = HeaderWalk(data, 4, len(data))
    assert list(walk) == [(4, FORMAT_DESCRIPTION, 60), (64, code, 40)]
    assert (walk.stop, walk.damaged) == (104, False)


def test_until_bounds_the_headers_read_not_the_events() -> None:
    data = MAGIC + event(GTID, 42) + event(QUERY, 100) + event(XID, 31)
    assert walked(data, until=46 + V4_HEADER_LENGTH) == [(4, GTID, 42), (46, QUERY, 100)]
    assert walked(data, until=46 + V4_HEADER_LENGTH - 1) == [(4, GTID, 42)]
    assert walked(data, until=10**9) == walked(data)


def test_format_description_size_reads_the_first_header_after_the_magic() -> None:
    data = MAGIC + event(FORMAT_DESCRIPTION, 60) + event(XID, 31)
    assert format_description_size(data, len(data)) == 60
    assert format_description_size(data, 4 + V4_HEADER_LENGTH) == 60
    assert format_description_size(data, 4 + V4_HEADER_LENGTH - 1) == 0
    assert format_description_size(b"\xfdbin" + data[4:], len(data)) == 0
    assert format_description_size(MAGIC + event(START_V3, 75), 79) == 0
