"""The NULL type (a column of type NULL, as in ``CREATE TABLE ... SELECT NULL``).

Its values take no bytes in a row image and are always ``None``.
"""

from __future__ import annotations

from typing import Any

from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.rows.columns import (
    ColumnCodec,
    ColumnInfo,
    ValueDecoder,
    ValueEncoder,
    column_codec,
)
from binlogkit.binlog.rows.types._base import unencodable


@column_codec(ColumnType.NULL)
class NullCodec(ColumnCodec):
    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        def decode(buf: bytes, pos: int) -> tuple[Any, int]:
            return None, pos

        return decode

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        def encode(value: Any, out: bytearray) -> None:
            if value is not None:
                raise unencodable(col, value, "a NULL-typed column holds only None")

        return encode
