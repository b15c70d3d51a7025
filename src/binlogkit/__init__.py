"""binlogkit: read, stream, process and write MySQL and MariaDB binary logs."""

from binlogkit.binlog.context import DecodeOptions, FormatContext
from binlogkit.binlog.decoder import BinlogDecoder, encode_event
from binlogkit.binlog.events import Event, OpaqueEvent, SkippedEvent
from binlogkit.errors import (
    BinlogError,
    ChecksumError,
    DecodeError,
    EncryptedBinlogError,
    NotABinlogError,
    TruncatedError,
    UnknownEventError,
)
from binlogkit.io.files import BinlogReader
from binlogkit.sources import open_binlog as open

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
