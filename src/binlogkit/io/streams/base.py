"""The stream interfaces every storage layer implements (WL#10956).

Binlog code reads bytes from an :class:`InputStream` (a
:class:`SeekableInputStream` when it must start elsewhere than at the
beginning) and writes bytes to an :class:`OutputStream`; it never learns what
is underneath. A *stage* (compression, encryption, ...) is itself one of these
streams, built over the next one (``Stage(inner)``), so stages compose as a
chain -- events → stage → ... → file, and the reverse for reading -- and adding
one changes no interface. Closing a stage closes the stream under it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Self

__all__ = ["InputStream", "OutputStream", "SeekableInputStream"]


class _Closing:
    """A context manager that closes the stream on exit."""

    def close(self) -> None:
        """Release what the stream holds (nothing, unless a subclass says so)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class InputStream(_Closing, ABC):
    """Bytes read in order."""

    @abstractmethod
    def read(self, size: int) -> bytes:
        """Up to ``size`` bytes (fewer when no more are there yet); ``b""`` at the end."""


class SeekableInputStream(InputStream):
    """An input stream whose read position can be moved."""

    @abstractmethod
    def seek(self, offset: int) -> int:
        """Continue reading at ``offset``, or at the end when the input is shorter.

        Returns the position reached: ``offset``, or the input's length when it
        ends before.
        """

    @abstractmethod
    def tell(self) -> int:
        """The offset of the next byte :meth:`read` gives."""


class OutputStream(_Closing, ABC):
    """Bytes written in order, at the end of what the stream holds."""

    @abstractmethod
    def write(self, data: bytes | bytearray | memoryview) -> None:
        """Append ``data``; every byte is taken (or an error raised)."""

    @property
    @abstractmethod
    def position(self) -> int:
        """How many bytes the stream holds: the offset the next write lands at."""

    @abstractmethod
    def truncate(self, offset: int) -> None:
        """Drop every byte from ``offset`` on; the next write lands at ``offset``."""

    def flush(self) -> None:
        """Hand every buffered byte to the layer below (nothing is buffered by default)."""

    def sync(self) -> None:
        """:meth:`flush`, then make the bytes durable where that means something (a file)."""
        self.flush()
