"""Memory buffers as streams."""

from __future__ import annotations

from binlogkit.io.streams.base import OutputStream, SeekableInputStream

__all__ = ["MemoryInputStream", "MemoryOutputStream"]


class MemoryInputStream(SeekableInputStream):
    """Reads the bytes it is given."""

    def __init__(self, data: bytes | bytearray | memoryview) -> None:
        self._data = bytes(data)
        self._position = 0

    def read(self, size: int) -> bytes:
        start = self._position
        self._position = min(start + size, len(self._data))
        return self._data[start : self._position]

    def seek(self, offset: int) -> int:
        self._position = min(offset, len(self._data))
        return self._position

    def tell(self) -> int:
        return self._position


class MemoryOutputStream(OutputStream):
    """Keeps what is written in memory; :meth:`getvalue` gives it."""

    def __init__(self) -> None:
        self._data = bytearray()

    @property
    def position(self) -> int:
        return len(self._data)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self._data += data

    def truncate(self, offset: int) -> None:
        if not 0 <= offset <= len(self._data):
            raise ValueError(f"cannot truncate {len(self._data)} bytes in memory to {offset}")
        del self._data[offset:]

    def getvalue(self) -> bytes:
        return bytes(self._data)
