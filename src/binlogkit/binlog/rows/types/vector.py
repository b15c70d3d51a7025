"""VECTOR (MySQL 9): an array of little-endian binary32 floats, stored like a BLOB.

The metadata byte is the size of the length (4). Values are ``list[float]``;
raw mode gives the stored bytes.
"""

from __future__ import annotations

import struct
import sys
from array import array
from typing import Any, ClassVar

from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.rows.columns import (
    ColumnCodec,
    ColumnInfo,
    ValueDecoder,
    ValueEncoder,
    column_codec,
)
from binlogkit.binlog.rows.types._base import (
    as_bytes,
    prefixed_decoder,
    prefixed_encoder,
    unencodable,
)
from binlogkit.errors import DecodeError

_SWAP = sys.byteorder != "little"


@column_codec(ColumnType.VECTOR)
class VectorCodec(ColumnCodec):
    meta_length: ClassVar[int] = 1

    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        if options.raw_values:
            return prefixed_decoder(col, col.meta, "VECTOR")

        def convert(data: bytes) -> list[float]:
            if len(data) % 4:
                raise DecodeError(
                    f"column {col.key}: a VECTOR of {len(data)} bytes is not a float32 array"
                )
            floats = array("f", bytes(data))
            if _SWAP:
                floats.byteswap()
            return floats.tolist()

        return prefixed_decoder(col, col.meta, "VECTOR", convert)

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        if options.raw_values:
            return prefixed_encoder(col, col.meta, "VECTOR", as_bytes(col, "raw VECTOR"))

        def to_bytes(value: Any) -> bytes:
            try:
                return struct.pack(f"<{len(value)}f", *value)
            except (struct.error, TypeError, OverflowError):
                raise unencodable(col, value, "VECTOR takes a sequence of float32 values") from None

        return prefixed_encoder(col, col.meta, "VECTOR", to_bytes)
