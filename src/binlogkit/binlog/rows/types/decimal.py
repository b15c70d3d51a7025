"""DECIMAL: MySQL's packed binary decimal (NEWDECIMAL), and the pre-5.0 one.

The table map gives a NEWDECIMAL column two metadata bytes: the precision,
then the scale (``meta = precision << 8 | scale``). The value is laid out as
MySQL's ``decimal2bin`` does it: the integer digits, then the fraction digits,
each part cut into groups of nine decimal digits stored as 4-byte big-endian
numbers; the leftover digits of the integer part (at the front) and of the
fraction (at the end) take 1-4 bytes by their count (1-2 digits: 1 byte, 3-4: 2,
5-6: 3, 7-9: 4). Then the top bit of the first byte is flipped, and a negative
value has every bit inverted, so the bytes sort like the numbers.

For example DECIMAL(14,4) 1234567890.1234 is ``81 0D FB 38 D2 04 D2`` (1 |
234567890 | 1234) and -1234567890.1234 is its complement ``7E F2 04 C7 2D FB 2D``.

Values are ``decimal.Decimal`` with exactly ``scale`` fraction digits; a stored
negative zero stays ``Decimal('-0.00')``. Raw mode gives the stored bytes.

The old DECIMAL (type 0, tables from MySQL 4.1 or earlier never rebuilt) kept
numbers as ASCII text of a width the table map does not record, so its values
cannot be read from row events; MySQL's own mysqlbinlog refuses them too.
"""

from __future__ import annotations

import struct
from decimal import Decimal
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
    exact_bytes_encoder,
    invalid,
    sized_bytes_decoder,
    truncated,
    unencodable,
)
from binlogkit.errors import DecodeError, EncodeError
from binlogkit.wire import ByteReader, ByteWriter

_DIGITS_PER_GROUP = 9
_BYTES_FOR_DIGITS = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)
_INVERT = bytes(255 - i for i in range(256))


def decimal_size(precision: int, scale: int) -> int:
    """Bytes of a NEWDECIMAL(precision, scale) value (MySQL's ``decimal_bin_size``)."""
    intg, frac = precision - scale, scale
    return intg // 9 * 4 + _BYTES_FOR_DIGITS[intg % 9] + frac // 9 * 4 + _BYTES_FOR_DIGITS[frac % 9]


class _Layout:
    """The groups of one (precision, scale): byte slices, digit slices and a text template."""

    __slots__ = (
        "byte_sizes",
        "digit_slices",
        "groups",
        "precision",
        "scale",
        "size",
        "template",
        "text_length",
        "triples",
    )

    def __init__(self, precision: int, scale: int) -> None:
        intg = precision - scale
        digits: list[int] = []
        if intg % 9:
            digits.append(intg % 9)
        digits += [9] * (intg // 9)
        int_groups = len(digits)
        digits += [9] * (scale // 9)
        if scale % 9:
            digits.append(scale % 9)
        self.precision = precision
        self.scale = scale
        self.byte_sizes = tuple(_BYTES_FOR_DIGITS[d] for d in digits)
        self.size = sum(self.byte_sizes)
        # One struct reads every group; a 3-byte group is read as a byte and a u16.
        codes = {1: "B", 2: "H", 3: "BH", 4: "I"}
        self.groups = struct.Struct(">" + "".join(codes[n] for n in self.byte_sizes))
        self.triples = tuple(i for i, n in enumerate(self.byte_sizes) if n == 3)
        slices, start = [], 0
        for n in digits:
            slices.append((start, start + n))
            start += n
        self.digit_slices = tuple(slices)
        fields = [f"{{:0{d}d}}" for d in digits]
        int_part = "".join(fields[:int_groups]) or "0"
        frac_part = "".join(fields[int_groups:])
        self.template = f"{int_part}.{frac_part}" if frac_part else int_part
        self.text_length = (intg or 1) + (scale + 1 if scale else 0)


@column_codec(ColumnType.NEWDECIMAL)
class NewDecimalCodec(ColumnCodec):
    meta_length: ClassVar[int] = 2

    @classmethod
    def read_meta(cls, r: ByteReader) -> int:
        return r.uint_be(2, "DECIMAL metadata")

    @classmethod
    def write_meta(cls, meta: int, w: ByteWriter) -> None:
        w.uint_be(meta, 2)

    @classmethod
    def _layout(cls, col: ColumnInfo) -> _Layout:
        precision, scale = col.meta >> 8, col.meta & 0xFF
        if precision < 1 or scale > precision:
            raise invalid(col, f"impossible DECIMAL({precision},{scale}) metadata")
        return _Layout(precision, scale)

    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        layout = cls._layout(col)
        size = layout.size
        if options.raw_values:
            return sized_bytes_decoder(col, size, "DECIMAL")
        unpack = layout.groups.unpack_from
        triples = layout.triples
        template = layout.template.format
        text_length = layout.text_length
        # the top bit of the first group is the flipped sign bit
        sign_bit = 1 << (8 * layout.byte_sizes[0] - 1)
        name = f"DECIMAL({layout.precision},{layout.scale})"

        def decode(buf: bytes, pos: int) -> tuple[Any, int]:
            end = pos + size
            if end > len(buf):
                raise truncated(col, name, size, buf, pos)
            data = bytes(buf[pos:end])
            negative = not data[0] & 0x80
            if negative:
                data = data.translate(_INVERT)
            groups = list(unpack(data))
            for i in triples:  # (high byte, low u16) pairs → one value
                groups[i : i + 2] = [groups[i] << 16 | groups[i + 1]]
            groups[0] ^= sign_bit
            text = template(*groups)
            if len(text) != text_length:
                raise DecodeError(f"column {col.key}: bytes {data.hex()} are not a {name}")
            return Decimal("-" + text if negative else text), end

        return decode

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        layout = cls._layout(col)
        if options.raw_values:
            return exact_bytes_encoder(col, layout.size, "DECIMAL")
        precision, scale, size = layout.precision, layout.scale, layout.size
        digit_slices = layout.digit_slices
        shifts = [8 * n for n in layout.byte_sizes]
        top_bit = 1 << (8 * size - 1)
        all_bits = (1 << (8 * size)) - 1

        def encode(value: Any, out: bytearray) -> None:
            if isinstance(value, int):
                value = Decimal(value)
            elif not isinstance(value, Decimal):
                raise unencodable(col, value, "DECIMAL takes a Decimal or an int")
            sign, digits, exponent = value.as_tuple()
            if not isinstance(exponent, int):
                raise unencodable(col, value, "DECIMAL holds only finite numbers")
            number = int("".join(map(str, digits)))
            shift = exponent + scale
            if shift >= 0:
                number *= 10**shift
            else:
                number, rest = divmod(number, 10**-shift)
                if rest:
                    raise unencodable(col, value, f"more than {scale} fraction digits")
            text = str(number).zfill(precision)
            if len(text) > precision:
                raise unencodable(col, value, f"more than {precision - scale} integer digits")
            packed = 0
            for (a, b), bits in zip(digit_slices, shifts, strict=True):
                packed = packed << bits | int(text[a:b])
            if sign:
                packed ^= all_bits
            out += (packed ^ top_bit).to_bytes(size, "big")

        return encode


@column_codec(ColumnType.DECIMAL)
class OldDecimalCodec(ColumnCodec):
    """Pre-5.0 DECIMAL: recognised, but its values cannot be located in a row."""

    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        def decode(buf: bytes, pos: int) -> tuple[Any, int]:
            raise DecodeError(
                f"column {col.key}: old DECIMAL (MySQL 4.1 or earlier) values cannot be "
                "read from row events, whose table maps do not record their width; "
                "rebuild the table on the server (ALTER TABLE ... FORCE) to log it as "
                "today's DECIMAL"
            )

        return decode

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        def encode(value: Any, out: bytearray) -> None:
            raise EncodeError(f"column {col.key}: old DECIMAL values cannot be written")

        return encode
