"""Typed row access (WL#3283's Row_event_set, Row_of_fields, Value and Converter).

:class:`RowEventSet` gives the rows of a rows event as :class:`TypedChange`
pairs of :class:`RowOfFields` (the before and after images); a field is a
:class:`Value`: the decoded value with its column's
:class:`~binlogkit.binlog.rows.columns.ColumnInfo` (type, metadata,
signedness, charset), reachable by column name or position. Nothing is
decoded twice: the values are the event's row changes, and a value's
:attr:`~Value.raw` bytes (as the row image stores them) come from the
column's encoder, the exact mirror of its decoder.

Conversions are explicit: :meth:`Value.as_str`, :meth:`~Value.as_int`,
:meth:`~Value.as_float`, :meth:`~Value.as_decimal`, :meth:`~Value.as_datetime`,
:meth:`~Value.as_date`, :meth:`~Value.as_timedelta` and :meth:`~Value.as_bytes`
give the value as that type or raise :class:`ConversionError` (a NULL, a
fraction as an int, bytes of a binary column as text ...). A
:class:`Converter` holds the rules, one table per target type keyed by the
value's Python type; give :class:`RowEventSet` your own to change them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import field
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from types import MappingProxyType
from typing import Any, TypeVar, cast

from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.events.rows import PartialRowChange, RowsEvent
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.rows.charsets import text_codec
from binlogkit.binlog.rows.columns import ColumnInfo, ValueEncoder
from binlogkit.binlog.rows.types.strings import text_converter
from binlogkit.binlog.rows.types.values import Compressed, Geometry, InvalidDate, InvalidDateTime
from binlogkit.errors import BinlogError

__all__ = [
    "DEFAULT_CONVERTER",
    "ConversionError",
    "Converter",
    "RowEventSet",
    "RowOfFields",
    "TypedChange",
    "Value",
]

T = TypeVar("T")
Rule = Callable[[Any, ColumnInfo], Any]
"""Converts a value (of the column) to the target type; ValueError says why it cannot."""


class ConversionError(BinlogError, ValueError):
    """A value that cannot be given as the type asked for."""


class Converter:
    """Rules to convert values: target type → (Python type of the value → rule).

    The value's type is looked up along its bases (a ``datetime`` is found
    before a ``date``).
    """

    def __init__(self, rules: Mapping[type, Mapping[type, Rule]]) -> None:
        self.rules = MappingProxyType({target: dict(table) for target, table in rules.items()})

    def to(self, target: type[T], value: Value) -> T:
        """``value`` as ``target``; :class:`ConversionError` when it cannot be."""
        data = value.value
        if data is None:
            raise value.error(target, "it is NULL")
        table = self.rules.get(target)
        if table is None:
            raise value.error(target, "no rules convert to that type")
        for base in type(data).__mro__:
            rule = table.get(base)
            if rule is not None:
                try:
                    return cast(T, rule(data, value.column))
                except (ValueError, ArithmeticError, UnicodeError) as err:
                    raise value.error(target, str(err)) from None
        raise value.error(target, f"values of type {type(data).__name__} cannot be")


@frozen_dataclass
class Value:
    """A field of a row: the decoded ``value`` (None for SQL NULL) and its ``column``."""

    column: ColumnInfo
    value: Any
    encoder: ValueEncoder | None = field(default=None, repr=False, compare=False)
    converter: Converter = field(default_factory=lambda: _default(), repr=False)

    @property
    def name(self) -> str:
        """The column's name, or ``@1``, ``@2`` ... when the binlog does not name it."""
        return self.column.key

    @property
    def type_code(self) -> int:
        """The column type (a :class:`~binlogkit.binlog.constants.ColumnType` value)."""
        return self.column.type

    @property
    def type_name(self) -> str:
        try:
            return ColumnType(self.column.type).name
        except ValueError:
            return f"type {self.column.type}"

    @property
    def metadata(self) -> int:
        return self.column.meta

    @property
    def unsigned(self) -> bool | None:
        return self.column.unsigned

    @property
    def charset(self) -> int | None:
        """The column's collation id, when the binlog or a schema names it."""
        return self.column.charset

    @property
    def is_null(self) -> bool:
        return self.value is None

    @property
    def raw(self) -> bytes | None:
        """The value as the row image stores it (length prefix included); None for NULL, and
        where the image holds no plain value (a JSON diff)."""
        if self.value is None or self.encoder is None:
            return None
        out = bytearray()
        self.encoder(self.value, out)
        return bytes(out)

    def to(self, target: type[T]) -> T:
        return self.converter.to(target, self)

    def as_str(self) -> str:
        return self.to(str)

    def as_int(self) -> int:
        return self.to(int)

    def as_float(self) -> float:
        return self.to(float)

    def as_decimal(self) -> Decimal:
        return self.to(Decimal)

    def as_datetime(self) -> datetime:
        return self.to(datetime)

    def as_date(self) -> date:
        return self.to(date)

    def as_timedelta(self) -> timedelta:
        return self.to(timedelta)

    def as_bytes(self) -> bytes:
        return self.to(bytes)

    def error(self, target: type, why: str) -> ConversionError:
        """The error for this value as ``target``."""
        return ConversionError(
            f"column {self.name} ({self.type_name}) value {self.value!r} "
            f"cannot be read as {target.__name__}: {why}"
        )


# --- the default rules ---------------------------------------------------------------------------


def _same(data: Any, column: ColumnInfo) -> Any:
    return data


def _text(data: bytes, column: ColumnInfo) -> str:
    codec = text_codec(column.charset)
    if codec is None:
        raise ValueError("its column has no known text charset (use as_bytes)")
    return codec.decode(data)


def _encoded(data: str, column: ColumnInfo) -> bytes:
    codec = text_codec(column.charset)
    return data.encode() if codec is None else codec.encode(data)


def _time_text(data: timedelta, column: ColumnInfo) -> str:
    """A TIME as MySQL prints it: ``[-]HH:MM:SS[.ffffff]``."""
    sign, span = ("-", -data) if data < timedelta(0) else ("", data)
    seconds = span.days * 86400 + span.seconds
    text = f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    return f"{text}.{span.microseconds:06d}" if span.microseconds else text


def _set_text(members: frozenset[Any], column: ColumnInfo) -> str:
    """A SET's members in the column's order, comma-separated, as MySQL prints them."""
    convert = text_converter(column, DecodeOptions())
    order = [convert(member) for member in column.set_values or ()]
    ranked = sorted(members, key=lambda m: order.index(m) if m in order else len(order))
    return ",".join(m if isinstance(m, str) else _text(m, column) for m in ranked)


def _compressed_text(data: Compressed, column: ColumnInfo) -> str:
    value = data.value
    return value if isinstance(value, str) else _text(value, column)


def _compressed_bytes(data: Compressed, column: ColumnInfo) -> bytes:
    value = data.value
    return value if isinstance(value, bytes) else _encoded(value, column)


def _integral(data: Decimal | float, column: ColumnInfo) -> int:
    if data != int(data):
        raise ValueError("it has a fraction")
    return int(data)


def _midnight(data: date, column: ColumnInfo) -> datetime:
    return datetime(data.year, data.month, data.day)


def _invalid_date(data: InvalidDate | InvalidDateTime, column: ColumnInfo) -> Any:
    raise ValueError("MySQL's zero or partial dates have no Python date (use as_str)")


def _parsed(parse: Callable[[str], Any]) -> Rule:
    def rule(data: str, column: ColumnInfo) -> Any:
        try:
            return parse(data.strip())
        except InvalidOperation:
            raise ValueError("it is not a number") from None

    return rule


DEFAULT_CONVERTER = Converter(
    {
        str: {
            str: _same,
            bytes: _text,
            int: lambda data, column: str(data),
            float: lambda data, column: repr(data),
            Decimal: lambda data, column: str(data),
            datetime: lambda data, column: data.isoformat(" "),
            date: lambda data, column: data.isoformat(),
            timedelta: _time_text,
            InvalidDate: lambda data, column: data.isoformat(),
            InvalidDateTime: lambda data, column: data.isoformat(),
            frozenset: _set_text,
            Compressed: _compressed_text,
        },
        int: {int: _same, Decimal: _integral, float: _integral, str: _parsed(int)},
        float: {
            int: lambda data, column: float(data),
            float: _same,
            Decimal: lambda data, column: float(data),
            str: _parsed(float),
        },
        Decimal: {
            Decimal: _same,
            int: lambda data, column: Decimal(data),
            float: lambda data, column: Decimal(repr(data)),
            str: _parsed(Decimal),
        },
        datetime: {
            datetime: _same,
            date: _midnight,
            InvalidDate: _invalid_date,
            InvalidDateTime: _invalid_date,
            str: _parsed(datetime.fromisoformat),
        },
        date: {
            datetime: lambda data, column: data.date(),
            date: _same,
            InvalidDate: _invalid_date,
            InvalidDateTime: _invalid_date,
            str: _parsed(date.fromisoformat),
        },
        timedelta: {timedelta: _same},
        bytes: {
            bytes: _same,
            str: _encoded,
            Geometry: lambda data, column: data.to_bytes(),
            Compressed: _compressed_bytes,
        },
    }
)
"""The rules :class:`Value` converts with unless given others."""


def _default() -> Converter:
    return DEFAULT_CONVERTER


# --- rows --------------------------------------------------------------------------------------

_Field = tuple[ColumnInfo, ValueEncoder | None]


class RowOfFields:
    """One row image: its fields as :class:`Value` objects, in column order.

    ``row["name"]`` or ``row[0]`` (the column's position in the table) give
    a field; a column the image does not carry (MINIMAL or NOBLOB row
    images) is a ``KeyError``. Iterating gives the fields.
    """

    __slots__ = ("_converter", "_fields", "_positions", "data")

    def __init__(
        self,
        data: Mapping[str, Any],
        fields: Mapping[str, _Field],
        positions: Mapping[int, str],
        converter: Converter,
    ) -> None:
        self.data = data
        """The row as the event gives it: column key → value."""
        self._fields = fields
        self._positions = positions
        self._converter = converter

    def __getitem__(self, key: str | int) -> Value:
        name = self._positions.get(key) if isinstance(key, int) else key
        if name is None or name not in self._fields:
            raise KeyError(f"column {key!r} is not in the table")
        if name not in self.data:
            raise KeyError(f"column {key!r} is not logged in this image")
        column, encoder = self._fields[name]
        return Value(column, self.data[name], encoder, self._converter)

    def get(self, key: str | int) -> Value | None:
        """The field, or None when the image does not carry that column."""
        try:
            return self[key]
        except KeyError:
            return None

    def __contains__(self, key: object) -> bool:
        return self.get(key) is not None if isinstance(key, str | int) else False

    def __iter__(self) -> Iterator[Value]:
        return (self[name] for name in self.data)

    def __len__(self) -> int:
        return len(self.data)

    def keys(self) -> tuple[str, ...]:
        return tuple(self.data)

    def __repr__(self) -> str:
        return f"RowOfFields({dict(self.data)!r})"


@frozen_dataclass
class TypedChange:
    """One changed row: ``before`` and ``after`` images (None where the operation has none)."""

    before: RowOfFields | None
    after: RowOfFields | None


class RowEventSet:
    """The rows of a rows event as :class:`TypedChange` objects (iterate, or index)."""

    def __init__(self, event: RowsEvent, converter: Converter = DEFAULT_CONVERTER) -> None:
        self.event = event
        self.converter = converter
        table = event.table
        fields: dict[str, _Field] = {}
        if table is not None:
            plan = table.plan(event.options)
            fields = {
                key: (column, encoder)
                for key, column, encoder in zip(plan.keys, plan.columns, plan.encoders, strict=True)
            }
        self._fields = fields
        self._positions = {column.index: key for key, (column, _) in fields.items()}
        self._diffless = {key: (column, None) for key, (column, _) in fields.items()}

    @property
    def columns(self) -> tuple[ColumnInfo, ...]:
        """Every column of the table, as the event's table map (completed) gives them."""
        return tuple(column for column, _ in self._fields.values())

    def __len__(self) -> int:
        return len(self.event.rows)

    def __getitem__(self, index: int) -> TypedChange:
        return self._typed(self.event.rows[index])

    def __iter__(self) -> Iterator[TypedChange]:
        return map(self._typed, self.event.rows)

    def _typed(self, change: Any) -> TypedChange:
        after_fields: Mapping[str, _Field] = self._fields
        if isinstance(change, PartialRowChange) and change.diffs:
            # Columns logged as JSON diffs have no stored value of their own.
            after_fields = {
                key: self._diffless[key] if key in change.diffs else item
                for key, item in self._fields.items()
            }
        return TypedChange(
            self._row(change.before, self._fields), self._row(change.after, after_fields)
        )

    def _row(
        self, data: Mapping[str, Any] | None, fields: Mapping[str, _Field]
    ) -> RowOfFields | None:
        return None if data is None else RowOfFields(data, fields, self._positions, self.converter)
