"""A stage that moves the events passing through it to where they land in a binlog file."""

from __future__ import annotations

import struct

from binlogkit.binlog.framing import event_crc32
from binlogkit.binlog.header import EVENT_SIZE_OFFSET, LOG_POS_OFFSET
from binlogkit.io.streams import OutputStream

__all__ = ["ShiftPositions"]

_U32 = struct.Struct("<I")
_SIZE_END = EVENT_SIZE_OFFSET + 4


class ShiftPositions(OutputStream):
    """Writes whole v4 events to ``inner`` with ``shift`` added to each one's ``log_pos``.

    Events encoded for offset 0 (a transaction in a binlog cache) are written
    this way at the binlog's position ``shift``; with ``checksum_length`` 4 their
    CRC32 is summed again. Bytes may arrive in any pieces; :meth:`flush` refuses
    to end inside an event.
    """

    def __init__(self, inner: OutputStream, shift: int, checksum_length: int) -> None:
        self.inner = inner
        self.shift = shift
        self.checksum_length = checksum_length
        self._pending = bytearray()
        self._written = 0

    @property
    def position(self) -> int:
        return self._written + len(self._pending)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        pending = self._pending
        pending += data
        start = 0
        while len(pending) - start >= _SIZE_END:
            size = _U32.unpack_from(pending, start + EVENT_SIZE_OFFSET)[0]
            if size < _SIZE_END + 4:
                raise ValueError(f"event of {size} bytes at offset {self._written} of the cache")
            if len(pending) - start < size:
                break
            event = pending[start : start + size]
            at = LOG_POS_OFFSET
            _U32.pack_into(event, at, _U32.unpack_from(event, at)[0] + self.shift)
            if self.checksum_length:
                _U32.pack_into(event, size - 4, event_crc32(event))
            self.inner.write(event)
            self._written += size
            start += size
        del pending[:start]

    def truncate(self, offset: int) -> None:
        raise ValueError("events already moved cannot be taken back")

    def flush(self) -> None:
        if self._pending:
            raise ValueError(f"the cache ends inside an event ({len(self._pending)} bytes)")
        self.inner.flush()
