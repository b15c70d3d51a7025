"""TINYINT, SMALLINT, MEDIUMINT, INT and BIGINT: little-endian two's complement.

Values are ``int``. A column is read unsigned when the table map's signedness
metadata says so (``ColumnInfo.unsigned`` is True); without that metadata
(binlog_row_metadata=MINIMAL, older servers) the binlog cannot tell, and the
value is read signed, as stored. Raw mode gives the same ints.
"""

from __future__ import annotations

import struct
from operator import index
from typing import Any

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
from binlogkit.binlog.rows.types._base import (
    fixed_decoder,
    packing_encoder,
    truncated,
    unencodable,
)

# type code → (struct code signed, struct code unsigned, SQL name)
_FORMATS: dict[int, tuple[str, str, str]] = {
    ColumnType.TINY: ("b", "B", "TINYINT"),
    ColumnType.SHORT: ("h", "H", "SMALLINT"),
    ColumnType.LONG: ("i", "I", "INT"),
    ColumnType.LONGLONG: ("q", "Q", "BIGINT"),
}


@column_codec(ColumnType.TINY, ColumnType.SHORT, ColumnType.LONG, ColumnType.LONGLONG)
class IntegerCodec(ColumnCodec):
    """The 1, 2, 4 and 8 byte integers."""

    @classmethod
    def _struct(cls, col: ColumnInfo) -> tuple[struct.Struct, str]:
        signed, unsigned, name = _FORMATS[col.type]
        code = unsigned if col.unsigned else signed
        return struct.Struct("<" + code), ("UNSIGNED " if col.unsigned else "") + name

    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        fmt, name = cls._struct(col)
        return fixed_decoder(col, fmt, name)

    @classmethod
    def layout(cls, col: ColumnInfo, options: DecodeOptions) -> ValueLayout:
        return ValueLayout(cls._struct(col)[0].format[1:])

    @classmethod
    def packing(cls, col: ColumnInfo, options: DecodeOptions) -> ValuePacking:
        fmt, name = cls._struct(col)
        return ValuePacking(name, fmt.format[1:])

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        return packing_encoder(col, cls.packing(col, options))


_INT24 = struct.Struct("<HB")
_from_bytes = int.from_bytes


@column_codec(ColumnType.INT24)
class Int24Codec(ColumnCodec):
    """MEDIUMINT: three bytes."""

    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        unpack = _INT24.unpack_from
        what = "MEDIUMINT"

        if col.unsigned:

            def decode_unsigned(buf: bytes, pos: int) -> tuple[Any, int]:
                try:
                    low, high = unpack(buf, pos)
                except struct.error:
                    raise truncated(col, what, 3, buf, pos) from None
                return low | high << 16, pos + 3

            return decode_unsigned

        def decode_signed(buf: bytes, pos: int) -> tuple[Any, int]:
            try:
                low, high = unpack(buf, pos)
            except struct.error:
                raise truncated(col, what, 3, buf, pos) from None
            value = low | high << 16
            return (value - 0x1000000 if high & 0x80 else value), pos + 3

        return decode_signed

    @classmethod
    def layout(cls, col: ColumnInfo, options: DecodeOptions) -> ValueLayout:
        signed = not col.unsigned

        def convert(data: bytes) -> int:
            return _from_bytes(data, "little", signed=signed)

        return ValueLayout("3s", convert=convert)

    @classmethod
    def packing(cls, col: ColumnInfo, options: DecodeOptions) -> ValuePacking:
        signed = not col.unsigned

        def to_field(value: Any) -> bytes:
            try:
                return index(value).to_bytes(3, "little", signed=signed)
            except (OverflowError, TypeError, ValueError):
                kind = "a signed" if signed else "an unsigned"
                raise unencodable(col, value, f"not {kind} MEDIUMINT") from None

        return ValuePacking("MEDIUMINT", "3s", to_field=to_field)

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        return packing_encoder(col, cls.packing(col, options))
