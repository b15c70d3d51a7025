"""The common header that starts every event."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from binlogkit.binlog.constants import V1_HEADER_LENGTH, EventFlag, event_type_name
from binlogkit.binlog.frozen import fast_constructor
from binlogkit.errors import DecodeError

_V1 = struct.Struct("<IBII")
_V4 = struct.Struct("<IBIIIH")


@dataclass(frozen=True, slots=True)
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
        ts, code, server_id, size, log_pos, flags = _V4.unpack_from(buf, pos)
        extra = bytes(buf[pos + 19 : pos + header_length]) if header_length > 19 else b""
        return new_header(ts, code, server_id, size, log_pos, flags, extra, offset, file)

    def encode(self, header_length: int, event_size: int | None = None) -> bytes:
        """The header bytes, with ``event_size`` replacing the stored size when given."""
        size = self.event_size if event_size is None else event_size
        if header_length == V1_HEADER_LENGTH:
            return _V1.pack(self.timestamp, self.type_code, self.server_id, size)
        pad = header_length - 19 - len(self.extra)
        return (
            _V4.pack(self.timestamp, self.type_code, self.server_id, size, self.log_pos, self.flags)
            + self.extra
            + b"\0" * max(pad, 0)
        )


new_header = fast_constructor(EventHeader)
"""``EventHeader(...)`` with every field given positionally, built faster (for decoders)."""
