"""The common header that starts every event, and walks from header to header.

A v4 header (binlog formats v3 and v4: MySQL 4.0 on, every MariaDB) is 19
little-endian bytes: timestamp (4), type code (1), server id (4), event size
(4), log_pos (4), flags (2). The v1 header (MySQL 3.23) stops after the event
size. Code outside this module reads headers with :data:`V4_HEADER` and the
named offsets, and walks a file's events with :class:`HeaderWalk`.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import field
from typing import TYPE_CHECKING

from binlogkit.binlog.constants import (
    MAGIC,
    V1_HEADER_LENGTH,
    V4_HEADER_LENGTH,
    EventFlag,
    EventType,
    event_type_name,
)
from binlogkit.binlog.frozen import fast_constructor, frozen_dataclass
from binlogkit.errors import DecodeError

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

V4_HEADER = struct.Struct("<IBIIIH")
"""The v4 header: timestamp, type code, server id, event size, log_pos, flags."""
TYPE_CODE_OFFSET = 4
EVENT_SIZE_OFFSET = 9
LOG_POS_OFFSET = 13
FLAGS_OFFSET = 17
SIZE_AND_LOG_POS = struct.Struct("<9xII")
"""The event size and log_pos of the v4 header at the offset given to ``unpack_from``."""
SIZES_STOP_AFTER = frozenset(
    int(code) for code in (EventType.START_V3, EventType.MARIADB_START_ENCRYPTION)
)
"""Type codes after which event sizes no longer lay out a file (an old format, MariaDB's
encrypted events): header walks stop there and leave the rest to the decoder."""

_V1 = struct.Struct("<IBII")
_TYPE_AND_SIZE = struct.Struct("<4xB4xI")
_FILE_START = struct.Struct("<4s4xB4xI")  # the magic, then the first header's type code and size
_FORMAT_DESCRIPTION = int(EventType.FORMAT_DESCRIPTION)


@frozen_dataclass
class EventHeader:
    """The fields every event starts with, and where the event was read from.

    ``log_pos`` is what the server wrote: the end position of the event in
    formats v3/v4 (0 in some relay-log and in-transaction cases), the start in
    v1. ``extra`` holds header bytes past the 19 known ones, when a format
    description announced a longer header. ``offset`` and ``file`` locate the
    event in its input and take no part in comparisons.
    """

    timestamp: int
    type_code: int
    server_id: int
    event_size: int
    log_pos: int = 0
    flags: int = 0
    extra: bytes = b""
    offset: int = field(default=-1, compare=False)
    file: str | None = field(default=None, compare=False)

    @property
    def type_name(self) -> str:
        return event_type_name(self.type_code)

    @property
    def end(self) -> int:
        """The input offset just past this event."""
        return self.offset + self.event_size

    @property
    def ignorable(self) -> bool:
        return bool(self.flags & EventFlag.IGNORABLE)

    @classmethod
    def decode(
        cls,
        buf: bytes | memoryview,
        pos: int,
        header_length: int,
        *,
        offset: int = -1,
        file: str | None = None,
    ) -> EventHeader:
        """Read a header of ``header_length`` bytes (13, 19 or more) at ``buf[pos:]``."""
        if len(buf) - pos < header_length:
            raise DecodeError(f"event header needs {header_length} bytes")
        if header_length == V1_HEADER_LENGTH:
            ts, code, server_id, size = _V1.unpack_from(buf, pos)
            return new_header(ts, code, server_id, size, 0, 0, b"", offset, file)
        ts, code, server_id, size, log_pos, flags = V4_HEADER.unpack_from(buf, pos)
        extra = (
            bytes(buf[pos + V4_HEADER_LENGTH : pos + header_length])
            if header_length > V4_HEADER_LENGTH
            else b""
        )
        return new_header(ts, code, server_id, size, log_pos, flags, extra, offset, file)

    def encode(self, header_length: int, event_size: int | None = None) -> bytes:
        """The header bytes, with ``event_size`` replacing the stored size when given."""
        size = self.event_size if event_size is None else event_size
        if header_length == V1_HEADER_LENGTH:
            return _V1.pack(self.timestamp, self.type_code, self.server_id, size)
        pad = header_length - V4_HEADER_LENGTH - len(self.extra)
        return (
            V4_HEADER.pack(
                self.timestamp, self.type_code, self.server_id, size, self.log_pos, self.flags
            )
            + self.extra
            + b"\0" * max(pad, 0)
        )


new_header = fast_constructor(EventHeader)
"""``EventHeader(...)`` with every field given positionally, built faster (for decoders)."""


class HeaderWalk:
    """The whole events of ``data`` from ``start`` (an event start) to ``end``, by their sizes.

    Iterating gives ``(offset, type_code, event_size)`` of each event in turn;
    only the type code and size of v4 headers are read. The walk stops where
    no header fits before ``end`` (or before ``until``, when given), at an
    event that does not end by ``end`` (a partial last event), at an event
    smaller than ``min_size`` (damage: :attr:`damaged` is then true), and
    after an event of a type in :data:`SIZES_STOP_AFTER`; :attr:`stop` is
    then the end of the last event it gave (``start`` if none).
    """

    __slots__ = ("damaged", "data", "end", "min_size", "start", "stop", "until")

    def __init__(
        self,
        data: ReadableBuffer,
        start: int,
        end: int,
        *,
        until: int | None = None,
        min_size: int = V4_HEADER_LENGTH,
    ) -> None:
        self.data = data
        self.start = start
        self.end = end
        self.until = end if until is None else min(until, end)
        self.min_size = min_size
        self.damaged = False
        self.stop = start

    def __iter__(self) -> Iterator[tuple[int, int, int]]:
        data, end, min_size, stop_after = self.data, self.end, self.min_size, SIZES_STOP_AFTER
        unpack = _TYPE_AND_SIZE.unpack_from
        last = self.until - V4_HEADER_LENGTH  # the last offset whose header fits
        offset = self.start
        while offset <= last:
            code, size = unpack(data, offset)
            after = offset + size
            if after > end or size < min_size:
                self.damaged = size < min_size
                break
            yield offset, code, size
            offset = after
            if code in stop_after:
                break
        self.stop = offset


def format_description_size(data: ReadableBuffer, end: int) -> int:
    """The size of the format description that follows the magic of a v4 binlog, from its
    header; 0 when ``data[:end]`` does not start so (not a binlog, or an older version)."""
    if end < len(MAGIC) + V4_HEADER_LENGTH:
        return 0
    magic, code, size = _FILE_START.unpack_from(data)
    return int(size) if magic == MAGIC and code == _FORMAT_DESCRIPTION else 0
