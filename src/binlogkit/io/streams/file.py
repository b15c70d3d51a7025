"""Files as streams: a seekable input file and a buffered output file."""

from __future__ import annotations

import os
from pathlib import Path

from binlogkit.io.streams.base import OutputStream, SeekableInputStream

__all__ = ["FileInputStream", "FileOutputStream"]

BUFFER_SIZE = 1 << 16
"""Bytes an output file gathers before it writes them to the operating system."""


class FileInputStream(SeekableInputStream):
    """A file read from ``path``; it may grow while it is read (a file being written)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._file = open(path, "rb")  # noqa: SIM115 (closed by close())

    def read(self, size: int) -> bytes:
        return self._file.read(size)

    def seek(self, offset: int) -> int:
        reached = min(offset, os.fstat(self._file.fileno()).st_size)
        self._file.seek(reached)
        return reached

    def tell(self) -> int:
        return self._file.tell()

    def close(self) -> None:
        self._file.close()


class FileOutputStream(OutputStream):
    """A file written at ``path`` through a buffer of ``buffer_size`` bytes.

    ``append=False`` creates the file (an existing one is emptied); ``append=True``
    opens an existing file and writes after its end. Bytes already written can be
    changed in place with :meth:`update` (a flag in a header, say).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        append: bool = False,
        buffer_size: int = BUFFER_SIZE,
    ) -> None:
        self.path = Path(path)
        self._file = open(path, "r+b" if append else "w+b", buffering=buffer_size)  # noqa: SIM115
        self._position = self._file.seek(0, os.SEEK_END)

    @property
    def position(self) -> int:
        return self._position

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self._file.write(data)
        self._position += len(data)

    def update(self, offset: int, data: bytes) -> None:
        """Overwrite the bytes at ``offset`` (they must all have been written already)."""
        if offset < 0 or offset + len(data) > self._position:
            raise ValueError(
                f"{self.path}: update of {len(data)} bytes at {offset} "
                f"is outside the {self._position} bytes written"
            )
        self._file.seek(offset)
        self._file.write(data)
        self._file.seek(self._position)

    def truncate(self, offset: int) -> None:
        if not 0 <= offset <= self._position:
            raise ValueError(f"{self.path}: cannot truncate {self._position} bytes to {offset}")
        self._file.flush()
        self._file.truncate(offset)
        self._file.seek(offset)
        self._position = offset

    def flush(self) -> None:
        self._file.flush()

    def sync(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())

    def is_empty(self) -> bool:
        return self._position == 0

    def is_open(self) -> bool:
        return not self._file.closed

    def close(self) -> None:
        self._file.close()
