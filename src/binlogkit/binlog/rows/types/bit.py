"""BIT(n): the bits as a big-endian number in (n + 7) // 8 bytes.

The table map's two metadata bytes (little-endian) are n % 8, then n // 8.
Values are ``int``; raw mode gives the stored ``bytes``.
"""

from __future__ import annotations

from operator import index
from typing import Any, ClassVar

from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.rows.columns import (
    ColumnCodec,
    ColumnInfo,
    ValueDecoder,
    ValueEncoder,
    ValueLayout,
    column_codec,
)
from binlogkit.binlog.rows.types._base import (
    exact_bytes_encoder,
    invalid,
    layout_decoder,
    unencodable,
)

_from_bytes = int.from_bytes


def bit_width(meta: int) -> int:
    """The number of bits of a BIT column from its table-map metadata."""
    return (meta >> 8) * 8 + (meta & 0xFF)


@column_codec(ColumnType.BIT)
class BitCodec(ColumnCodec):
    meta_length: ClassVar[int] = 2

    @classmethod
    def _size(cls, col: ColumnInfo) -> int:
        if col.meta & 0xFF > 7:
            raise invalid(col, f"BIT metadata {col.meta:#06x} has more than 7 odd bits")
        return (bit_width(col.meta) + 7) // 8

    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        return layout_decoder(col, cls.layout(col, options), "BIT")

    @classmethod
    def layout(cls, col: ColumnInfo, options: DecodeOptions) -> ValueLayout:
        fmt = f"{cls._size(col)}s"
        if options.raw_values:
            return ValueLayout(fmt)
        return ValueLayout(fmt, convert=lambda b: _from_bytes(b, "big"))

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        size = cls._size(col)
        if options.raw_values:
            return exact_bytes_encoder(col, size, "BIT")

        def encode(value: Any, out: bytearray) -> None:
            try:
                out += index(value).to_bytes(size, "big")
            except (OverflowError, TypeError):
                raise unencodable(col, value, f"BIT takes an int of at most {size} bytes") from None

        return encode
