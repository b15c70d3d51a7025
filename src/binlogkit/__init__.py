"""binlogkit: read, stream, process and write MySQL and MariaDB binary logs.

The names below are imported on first use (PEP 562), so ``import binlogkit``
and the ``binlogkit`` command's ``--version`` and ``--help`` do not load the
decoder.
"""

from __future__ import annotations

import importlib

from binlogkit.errors import (
    BinlogError,
    ChecksumError,
    DecodeError,
    EncryptedBinlogError,
    NotABinlogError,
    TruncatedError,
    UnknownEventError,
)

__version__ = "0.1.0"
"""The package's version (pyproject.toml reads it from here)."""

TYPE_CHECKING = False  # what typing.TYPE_CHECKING is, without importing typing (~8 ms)
if TYPE_CHECKING:
    from binlogkit.binlog.context import DecodeOptions, FormatContext
    from binlogkit.binlog.decoder import BinlogDecoder, encode_event
    from binlogkit.binlog.events import Event, OpaqueEvent, SkippedEvent
    from binlogkit.io.files import BinlogReader
    from binlogkit.sources import open_binlog as open

_LAZY = {
    "BinlogDecoder": ("binlogkit.binlog.decoder", "BinlogDecoder"),
    "BinlogReader": ("binlogkit.io.files", "BinlogReader"),
    "DecodeOptions": ("binlogkit.binlog.context", "DecodeOptions"),
    "Event": ("binlogkit.binlog.events", "Event"),
    "FormatContext": ("binlogkit.binlog.context", "FormatContext"),
    "OpaqueEvent": ("binlogkit.binlog.events", "OpaqueEvent"),
    "SkippedEvent": ("binlogkit.binlog.events", "SkippedEvent"),
    "encode_event": ("binlogkit.binlog.decoder", "encode_event"),
    "open": ("binlogkit.sources", "open_binlog"),
}
"""Public name → (module, name in it), imported by :func:`__getattr__` on first use."""


def __getattr__(name: str) -> object:
    try:
        module, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'binlogkit' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "BinlogDecoder",
    "BinlogError",
    "BinlogReader",
    "ChecksumError",
    "DecodeError",
    "DecodeOptions",
    "EncryptedBinlogError",
    "Event",
    "FormatContext",
    "NotABinlogError",
    "OpaqueEvent",
    "SkippedEvent",
    "TruncatedError",
    "UnknownEventError",
    "encode_event",
    "open",
]
