"""ENUM and SET.

Servers log both as STRING (type 254) whose metadata's high byte is the real
type (247 ENUM, 248 SET) and low byte the value's size: 1 or 2 bytes for an
ENUM, 1-8 for a SET. The value is a little-endian number: the ENUM's 1-based
index (0 is the error value MySQL stores for an out-of-list string in
non-strict mode), the SET's member bitmask (bit n for member n + 1).

Values, when the table map carries the member strings (binlog_row_metadata=FULL):

- ENUM: the member string (``str`` in the column's charset, ``bytes`` when the
  charset is unknown); the index 0 is ``''``, unless ``''`` is itself a member,
  and then stays the int 0; an index past the list stays an int.
- SET: a ``frozenset`` of member strings; a mask with bits past the list stays
  an int.

Without the member strings, and in raw mode, the ENUM index and the SET mask
are given as ints. Encoders take the same values, and ints always.
"""

from __future__ import annotations

from collections.abc import Callable
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
    invalid,
    layout_decoder,
    unencodable,
)
from binlogkit.binlog.rows.types.strings import text_converter

_from_le = int.from_bytes
_NUMBER_CODES = {1: "B", 2: "H", 4: "I", 8: "Q"}


def _number_layout(size: int, to_value: Callable[[int], Any] | None) -> ValueLayout:
    """The layout of a little-endian number of ``size`` bytes, given to ``to_value``."""
    code = _NUMBER_CODES.get(size)
    if code is not None:
        return ValueLayout(code, convert=to_value)
    if to_value is None:
        return ValueLayout(f"{size}s", convert=lambda data: _from_le(data, "little"))
    convert = to_value
    return ValueLayout(f"{size}s", convert=lambda data: convert(_from_le(data, "little")))


def _members(col: ColumnInfo, values: tuple[bytes, ...], options: DecodeOptions) -> tuple[Any, ...]:
    convert = text_converter(col, options)
    return tuple(convert(v) for v in values)


class _EnumSetCodec(ColumnCodec):
    """Metadata as for STRING: real type, then size."""

    meta_length: ClassVar[int] = 2
    meta_big_endian: ClassVar[bool] = True
    sizes: ClassVar[range]

    @classmethod
    def size(cls, col: ColumnInfo) -> int:
        size = col.meta & 0xFF
        if size not in cls.sizes:
            raise invalid(col, f"{ColumnType(col.type).name} of {size} bytes")
        return size

    @classmethod
    def number_encoder(
        cls, col: ColumnInfo, size: int, to_number: Callable[[Any], int]
    ) -> ValueEncoder:
        def encode(value: Any, out: bytearray) -> None:
            number = to_number(value)
            try:
                out += number.to_bytes(size, "little")
            except OverflowError:
                raise unencodable(col, value, f"does not fit {size} bytes") from None

        return encode


@column_codec(ColumnType.ENUM)
class EnumCodec(_EnumSetCodec):
    sizes: ClassVar[range] = range(1, 3)

    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        return layout_decoder(col, cls.layout(col, options), "ENUM")

    @classmethod
    def layout(cls, col: ColumnInfo, options: DecodeOptions) -> ValueLayout:
        size = cls.size(col)
        if options.raw_values or col.enum_values is None:
            return _number_layout(size, None)
        members = _members(col, col.enum_values, options)
        empty = members[0][:0] if members else ""
        table = (empty if empty not in members else 0, *members)
        count = len(table)

        def convert(index: int) -> Any:
            return table[index] if index < count else index

        return _number_layout(size, convert)

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        size = cls.size(col)
        index: dict[Any, int] = {}
        if not options.raw_values and col.enum_values is not None:
            members = _members(col, col.enum_values, options)
            index = {member: i for i, member in enumerate(members, 1)}
            empty = members[0][:0] if members else ""
            index.setdefault(empty, 0)

        def to_number(value: Any) -> int:
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            try:
                return index[value]
            except (KeyError, TypeError):
                raise unencodable(col, value, "not a member of the ENUM") from None

        return cls.number_encoder(col, size, to_number)


@column_codec(ColumnType.SET)
class SetCodec(_EnumSetCodec):
    sizes: ClassVar[range] = range(1, 9)

    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        return layout_decoder(col, cls.layout(col, options), "SET")

    @classmethod
    def layout(cls, col: ColumnInfo, options: DecodeOptions) -> ValueLayout:
        size = cls.size(col)
        if options.raw_values or col.set_values is None:
            return _number_layout(size, None)
        members = _members(col, col.set_values, options)
        known = (1 << len(members)) - 1
        cache: dict[int, frozenset[Any]] = {}

        def convert(mask: int) -> Any:
            if mask & ~known:
                return mask
            found = cache.get(mask)
            if found is None:
                found = frozenset(m for i, m in enumerate(members) if mask >> i & 1)
                if len(cache) < 4096:
                    cache[mask] = found
            return found

        return _number_layout(size, convert)

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        size = cls.size(col)
        bits: dict[Any, int] = {}
        if not options.raw_values and col.set_values is not None:
            members = _members(col, col.set_values, options)
            bits = {member: 1 << i for i, member in enumerate(members)}

        def to_number(value: Any) -> int:
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            if not isinstance(value, set | frozenset):
                raise unencodable(col, value, "SET takes a set of members or an int")
            mask = 0
            for member in value:
                try:
                    mask |= bits[member]
                except (KeyError, TypeError):
                    raise unencodable(
                        col, value, f"{member!r} is not a member of the SET"
                    ) from None
            return mask

        return cls.number_encoder(col, size, to_number)
