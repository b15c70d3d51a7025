"""FLOAT and DOUBLE: little-endian IEEE 754 binary32 and binary64.

Values are ``float`` (a FLOAT widened exactly to a double), in raw mode too.
The table map's one metadata byte is the value's size (4 or 8).
"""

from __future__ import annotations

import struct
from typing import ClassVar

from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.rows.columns import (
    ColumnCodec,
    ColumnInfo,
    ValueDecoder,
    ValueEncoder,
    ValueLayout,
    ValuePacking,
    column_codec,
)
from binlogkit.binlog.rows.types._base import fixed_decoder, packing_encoder

_FORMATS: dict[int, tuple[struct.Struct, str]] = {
    ColumnType.FLOAT: (struct.Struct("<f"), "FLOAT"),
    ColumnType.DOUBLE: (struct.Struct("<d"), "DOUBLE"),
}


@column_codec(ColumnType.FLOAT, ColumnType.DOUBLE)
class FloatCodec(ColumnCodec):
    meta_length: ClassVar[int] = 1

    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        return fixed_decoder(col, *_FORMATS[col.type])

    @classmethod
    def layout(cls, col: ColumnInfo, options: DecodeOptions) -> ValueLayout:
        return ValueLayout(_FORMATS[col.type][0].format[1:])

    @classmethod
    def packing(cls, col: ColumnInfo, options: DecodeOptions) -> ValuePacking:
        fmt, name = _FORMATS[col.type]
        return ValuePacking(name, fmt.format[1:])

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        return packing_encoder(col, cls.packing(col, options))
