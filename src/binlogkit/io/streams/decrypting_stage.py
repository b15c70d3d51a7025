"""What every decrypting stage shares: the stream under it, the keys, the input's name."""

from __future__ import annotations

from abc import abstractmethod

from binlogkit.io.key_files import KeyFile
from binlogkit.io.streams.base import SeekableInputStream

__all__ = ["DecryptingStage"]


class DecryptingStage(SeekableInputStream):
    """Reads ``inner`` from its start and gives it decrypted with ``keys``.

    ``name`` names the input in errors; ``head``: the bytes already read from
    ``inner`` (its first bytes, read to choose the stage); ``follow``: the
    input may still grow (it is being written). Closing the stage closes ``inner``.
    """

    def __init__(
        self,
        inner: SeekableInputStream,
        keys: KeyFile,
        *,
        name: str | None = None,
        head: bytes = b"",
        follow: bool = False,
    ) -> None:
        self._inner = inner
        self.keys = keys
        self.name = name
        self.follow = follow
        self._begin(head)

    @abstractmethod
    def _begin(self, head: bytes) -> None:
        """Get ready to read, ``head`` being the first bytes of ``inner``, already read."""

    def close(self) -> None:
        self._inner.close()
