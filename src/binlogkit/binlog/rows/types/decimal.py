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
MySQL's binary JSON stores a DECIMAL the same way, after its precision and
scale: :func:`decode_decimal` and :func:`encode_decimal` serve it.

The old DECIMAL (type 0, tables from MySQL 4.1 or earlier never rebuilt) kept
numbers as ASCII text of a width the table map does not record, so its values
cannot be read from row events; MySQL's own mysqlbinlog refuses them too.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import MAX_EMAX, MAX_PREC, MIN_EMIN, Context, Decimal
from functools import lru_cache
from typing import Any, ClassVar, NoReturn

from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.rows import codegen  # the module: codegen imports columns, which imports us
from binlogkit.binlog.rows.columns import (
    ColumnCodec,
    ColumnInfo,
    DecimalForm,
    ValueDecoder,
    ValueEncoder,
    ValueLayout,
    ValuePacking,
    column_codec,
)
from binlogkit.binlog.rows.types._base import (
    exact_bytes_encoder,
    invalid,
    layout_decoder,
    packing_encoder,
    unencodable,
)
from binlogkit.errors import DecodeError, EncodeError

_EXACT = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN)
"""Scaling by a power of ten in this context never rounds."""
_DIGITS_PER_GROUP = 9
_BYTES_FOR_DIGITS = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


def decimal_size(precision: int, scale: int) -> int:
    """Bytes of a NEWDECIMAL(precision, scale) value (MySQL's ``decimal_bin_size``)."""
    intg, frac = precision - scale, scale
    return intg // 9 * 4 + _BYTES_FOR_DIGITS[intg % 9] + frac // 9 * 4 + _BYTES_FOR_DIGITS[frac % 9]


class _Layout:
    """The digit groups of one (precision, scale): digits and bytes, most significant first."""

    __slots__ = (
        "all_bits",
        "byte_sizes",
        "digits",
        "groups_from_last",
        "precision",
        "scale",
        "size",
        "top_bit",
    )

    def __init__(self, precision: int, scale: int) -> None:
        intg = precision - scale
        digits: list[int] = []
        if intg % 9:
            digits.append(intg % 9)
        digits += [9] * (intg // 9)
        digits += [9] * (scale // 9)
        if scale % 9:
            digits.append(scale % 9)
        self.precision = precision
        self.scale = scale
        self.digits = tuple(digits)
        self.byte_sizes = tuple(_BYTES_FOR_DIGITS[d] for d in digits)
        self.size = sum(self.byte_sizes)
        groups, shift = [], 0
        for n, size in zip(reversed(digits), reversed(self.byte_sizes), strict=True):
            groups.append((10**n, shift))
            shift += 8 * size
        self.groups_from_last = tuple(groups)
        """Each group's 10**digits and bit position in the packed number, the last group first."""
        self.top_bit = 1 << (8 * self.size - 1) if self.size else 0
        self.all_bits = (1 << (8 * self.size)) - 1

    def form(self) -> DecimalForm:
        return DecimalForm(self.byte_sizes, self.digits, self.scale)

    def pack(self, value: Decimal) -> bytes:
        """The stored bytes of ``value``; EncodeError saying why it does not fit."""
        if not value.is_finite():
            raise EncodeError("DECIMAL holds only finite numbers")
        # the digits as an integer, if they are one
        number, denominator = value.scaleb(self.scale, _EXACT).as_integer_ratio()
        if denominator != 1:
            raise EncodeError(f"more than {self.scale} fraction digits")
        number = abs(number)
        packed = 0
        for unit, shift in self.groups_from_last:
            number, group = divmod(number, unit)
            packed |= group << shift
        if number:
            raise EncodeError(f"more than {self.precision - self.scale} integer digits")
        if value.is_signed():
            packed ^= self.all_bits
        return (packed ^ self.top_bit).to_bytes(self.size, "big")


@lru_cache(maxsize=256)
def _layout(precision: int, scale: int) -> _Layout:
    return _Layout(precision, scale)


@lru_cache(maxsize=256)
def _converter(precision: int, scale: int) -> Callable[[bytes], Decimal]:
    name = f"DECIMAL({precision},{scale})"

    def fail(data: bytes) -> NoReturn:
        raise DecodeError(f"bytes {data.hex()} are not a {name}")

    return codegen.decimal_converter(_layout(precision, scale).form(), fail)


def decode_decimal(data: bytes, precision: int, scale: int) -> Decimal:
    """The value of the stored bytes of a DECIMAL(precision, scale); DecodeError if they are not
    one. DECIMAL(0,0) has no bytes and is 0."""
    if not 0 <= scale <= precision or len(data) != decimal_size(precision, scale):
        raise DecodeError(
            f"{len(data)} bytes are no DECIMAL of precision {precision} and scale {scale}"
        )
    return _converter(precision, scale)(data) if data else Decimal(0)


def encode_decimal(value: Decimal, precision: int, scale: int) -> bytes:
    """The stored bytes of ``value`` as a DECIMAL(precision, scale); EncodeError if it does not
    fit."""
    try:
        return _layout(precision, scale).pack(value)
    except EncodeError as err:
        raise EncodeError(f"DECIMAL({precision},{scale}) cannot hold {value}: {err}") from None


@column_codec(ColumnType.NEWDECIMAL)
class NewDecimalCodec(ColumnCodec):
    meta_length: ClassVar[int] = 2
    meta_big_endian: ClassVar[bool] = True

    @classmethod
    def _layout(cls, col: ColumnInfo) -> _Layout:
        precision, scale = col.meta >> 8, col.meta & 0xFF
        if precision < 1 or scale > precision:
            raise invalid(col, f"impossible DECIMAL({precision},{scale}) metadata")
        return _layout(precision, scale)

    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        layout = cls._layout(col)
        name = "DECIMAL" if options.raw_values else f"DECIMAL({layout.precision},{layout.scale})"
        return layout_decoder(col, cls.layout(col, options), name)

    @classmethod
    def layout(cls, col: ColumnInfo, options: DecodeOptions) -> ValueLayout:
        layout = cls._layout(col)
        fmt = f"{layout.size}s"
        if options.raw_values:
            return ValueLayout(fmt)
        name = f"DECIMAL({layout.precision},{layout.scale})"

        def fail(data: bytes) -> NoReturn:
            raise DecodeError(f"column {col.key}: bytes {data.hex()} are not a {name}")

        form = layout.form()
        return ValueLayout(fmt, convert=codegen.decimal_converter(form, fail), form=form)

    @classmethod
    def packing(cls, col: ColumnInfo, options: DecodeOptions) -> ValuePacking | None:
        if options.raw_values:
            return None
        layout = cls._layout(col)
        pack = layout.pack

        def to_field(value: Any) -> bytes:
            if isinstance(value, int):
                value = Decimal(value)
            elif not isinstance(value, Decimal):
                raise unencodable(col, value, "DECIMAL takes a Decimal or an int")
            try:
                return pack(value)
            except EncodeError as err:
                raise unencodable(col, value, str(err)) from None

        return ValuePacking("DECIMAL", f"{layout.size}s", to_field=to_field)

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        packing = cls.packing(col, options)
        if packing is None:
            return exact_bytes_encoder(col, cls._layout(col).size, "DECIMAL")
        return packing_encoder(col, packing)


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
