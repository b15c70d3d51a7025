"""Standard input as a stream that only goes forward."""

from __future__ import annotations

import sys
from typing import BinaryIO

from binlogkit.errors import BinlogError
from binlogkit.io.streams.base import SeekableInputStream

__all__ = ["StdinInputStream"]

_DISCARD_CHUNK = 1 << 20


class StdinInputStream(SeekableInputStream):
    """Reads standard input (or ``source``, any byte stream read once, front to back).

    Seeking forward reads and drops the bytes in between; seeking back is an
    error. Closing leaves the source open: it belongs to the process.
    """

    def __init__(self, source: BinaryIO | None = None) -> None:
        self._source = sys.stdin.buffer if source is None else source
        self._position = 0

    def read(self, size: int) -> bytes:
        data = self._source.read(size)
        self._position += len(data)
        return data

    def seek(self, offset: int) -> int:
        if offset < self._position:
            raise BinlogError(
                f"cannot go back to offset {offset} on standard input, "
                f"{self._position} bytes were read already",
                file="<stdin>",
                offset=offset,
                hint="give the file by its name to start earlier",
            )
        while self._position < offset:
            if not self.read(min(offset - self._position, _DISCARD_CHUNK)):
                break
        return self._position

    def tell(self) -> int:
        return self._position
