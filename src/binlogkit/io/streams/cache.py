"""The binlog cache: a transaction's events, in memory until they outgrow it, then on disk."""

from __future__ import annotations

import os
import tempfile

from binlogkit.io.streams.base import OutputStream

__all__ = ["BinlogCache"]

MEMORY_SIZE = 32 * 1024
"""Bytes kept in memory before the cache spills (the server's default ``binlog_cache_size``)."""
COPY_CHUNK = 1 << 20


class BinlogCache(OutputStream):
    """Gathers bytes in memory; past ``memory_size`` they go to a temporary file.

    The temporary file is made in ``directory`` (the system's temporary folder
    by default) at the first spill and removed by :meth:`close`. Each time the
    memory part is written to the file counts as one disk write
    (:attr:`disk_writes`). :meth:`copy_to` writes everything held into another
    output stream (the binlog file, at commit).
    """

    def __init__(self, memory_size: int = MEMORY_SIZE, directory: str | None = None) -> None:
        self.memory_size = memory_size
        self.directory = directory
        self.disk_writes = 0
        """How many times bytes went to the temporary file since the cache was created or reset."""
        self._memory = bytearray()
        self._file: tempfile._TemporaryFileWrapper[bytes] | None = None
        self._on_disk = 0

    @property
    def tmp_file_name(self) -> str | None:
        """The temporary file's name, once the cache has spilled."""
        return None if self._file is None else self._file.name

    @property
    def position(self) -> int:
        return self._on_disk + len(self._memory)

    def length(self) -> int:
        """How many bytes the cache holds."""
        return self.position

    def is_empty(self) -> bool:
        return self.position == 0

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self._memory += data
        if len(self._memory) > self.memory_size:
            self._spill()

    def _spill(self) -> None:
        if self._file is None:
            self._file = tempfile.NamedTemporaryFile(  # noqa: SIM115 (closed by close())
                prefix="binlogkit-cache.", dir=self.directory
            )
        self._file.seek(self._on_disk)
        self._file.write(self._memory)
        self._file.flush()
        self._on_disk += len(self._memory)
        self._memory.clear()
        self.disk_writes += 1

    def truncate(self, offset: int) -> None:
        if not 0 <= offset <= self.position:
            raise ValueError(f"cannot truncate a binlog cache of {self.position} bytes to {offset}")
        if offset >= self._on_disk:
            del self._memory[offset - self._on_disk :]
            return
        assert self._file is not None
        self._file.truncate(offset)
        self._on_disk = offset
        self._memory.clear()

    def reset(self) -> None:
        """Drop everything held (the temporary file stays, emptied) and the disk write count."""
        self.truncate(0)
        self.disk_writes = 0

    def copy_to(self, out: OutputStream, chunk_size: int = COPY_CHUNK) -> None:
        """Write everything the cache holds to ``out``; the cache keeps it."""
        if self._file is not None:
            fd = self._file.fileno()
            done = 0
            while done < self._on_disk:
                chunk = os.pread(fd, min(chunk_size, self._on_disk - done), done)
                if not chunk:
                    raise OSError(f"{self.tmp_file_name}: ends at {done} of {self._on_disk} bytes")
                out.write(chunk)
                done += len(chunk)
        out.write(self._memory)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self._memory.clear()
        self._on_disk = 0
