"""The Spark schemas of the ``binlog`` data source, and MySQL column types as Spark types.

- :data:`CHANGE_SCHEMA` (the default): one row per row change, ``before`` and
  ``after`` as JSON text in the encoding of ``binlogkit rows``.
- :data:`EVENT_SCHEMA` (``events=all``): one row per event.
- :func:`typed_schema` (``table=db.t``): the row-change columns with ``before``
  and ``after`` as structs of the table's columns, typed from its table map
  (completed by the schema history where the map lacks names or signedness).

Each MySQL column type maps to a Spark type and a converter from the decoded
Python value, registered per type code in :data:`TYPE_MAPPERS`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from binlogkit import jsonenc
from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.rows.charsets import BINARY_COLLATION
from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.binlog.rows.types.bit import bit_width
from binlogkit.binlog.rows.types.values import Compressed, Geometry
from binlogkit.errors import BinlogError

__all__ = [
    "CHANGE_SCHEMA",
    "EVENT_SCHEMA",
    "TYPE_MAPPERS",
    "TypedColumn",
    "source_fields",
    "typed_columns",
    "typed_schema",
]

Convert = Callable[[Any], Any]
"""A decoded (non-NULL) column value → the value Arrow builds for the column's Spark type."""

_SOURCE = StructType(
    [
        StructField("file", StringType(), True),
        StructField("pos", LongType(), False),
        StructField("next_pos", LongType(), False),
        StructField("event_type", StringType(), False),
        StructField("server_id", LongType(), False),
        StructField("gtid", StringType(), True),
        StructField("ts", TimestampType(), False),
        StructField("commit_ts", TimestampType(), True),
    ]
)


def source_fields() -> list[StructField]:
    """Where a row or event comes from: file (base name), positions, type, server, GTID, times.

    ``ts`` is the event's header timestamp (``ts_ms`` of ``binlogkit rows``);
    ``commit_ts`` the transaction's commit time where the binlog records it
    (MySQL 8 GTID events, microseconds), else NULL.
    """
    return list(_SOURCE.fields)


def _change_schema(image: DataType) -> StructType:
    return StructType(
        [
            *source_fields(),
            StructField("db", StringType(), True),
            StructField("table", StringType(), True),
            StructField("op", StringType(), False),
            StructField("before", image, True),
            StructField("after", image, True),
            StructField("row", IntegerType(), False),
        ]
    )


CHANGE_SCHEMA = _change_schema(StringType())
"""One row per changed row; ``before``/``after`` are JSON text (NULL for the missing image)."""

EVENT_SCHEMA = StructType(
    [
        *source_fields(),
        StructField("type_code", IntegerType(), False),
        StructField("end_log_pos", LongType(), False),
        StructField("flags", IntegerType(), False),
        StructField("size", LongType(), False),
        StructField("db", StringType(), True),
        StructField("table", StringType(), True),
        StructField("info", StringType(), False),
    ]
)
"""One row per event; ``info`` is what SHOW BINLOG EVENTS prints for it."""


# -- typed columns -----------------------------------------------------------------


@frozen_dataclass
class TypedColumn:
    """One column of a typed image: its name, Spark type and value converter."""

    name: str
    type_code: int
    data_type: DataType
    convert: Convert


Mapper = Callable[[ColumnInfo], tuple[DataType, Convert]]
TYPE_MAPPERS: dict[int, Mapper] = {}


def maps(*codes: int) -> Callable[[Mapper], Mapper]:
    """Decorator: the Spark type mapper of these MySQL column type codes."""

    def mark(fn: Mapper) -> Mapper:
        for code in codes:
            TYPE_MAPPERS[code] = fn
        return fn

    return mark


def _same(value: Any) -> Any:
    return value


_NEEDS_SCHEMA = (
    "give option schema: a .sql file of the table's CREATE TABLE (mariadb-dump --no-data) or "
    "a schema history .jsonl; or write binlogs with binlog_row_metadata=FULL; "
    "or read without the table option (before/after as JSON)"
)


def _unsigned(col: ColumnInfo) -> bool:
    if col.unsigned is None:
        raise BinlogError(
            f"column {col.key}: the table map carries no signedness for this numeric column, "
            "and no schema defines the table",
            hint=_NEEDS_SCHEMA,
        )
    return col.unsigned


_INTEGERS: dict[int, tuple[DataType, DataType]] = {
    ColumnType.TINY: (ByteType(), ShortType()),
    ColumnType.SHORT: (ShortType(), IntegerType()),
    ColumnType.INT24: (IntegerType(), IntegerType()),
    ColumnType.LONG: (IntegerType(), LongType()),
}


@maps(*_INTEGERS)
def _integer(col: ColumnInfo) -> tuple[DataType, Convert]:
    signed, unsigned = _INTEGERS[col.type]
    return (unsigned if _unsigned(col) else signed), _same


@maps(ColumnType.LONGLONG)
def _bigint(col: ColumnInfo) -> tuple[DataType, Convert]:
    if _unsigned(col):
        return DecimalType(20, 0), Decimal
    return LongType(), _same


@maps(ColumnType.YEAR)
def _year(col: ColumnInfo) -> tuple[DataType, Convert]:
    return ShortType(), _same


@maps(ColumnType.FLOAT)
def _float(col: ColumnInfo) -> tuple[DataType, Convert]:
    return FloatType(), _same


@maps(ColumnType.DOUBLE)
def _double(col: ColumnInfo) -> tuple[DataType, Convert]:
    return DoubleType(), _same


_MAX_DECIMAL_PRECISION = 38


@maps(ColumnType.NEWDECIMAL)
def _decimal(col: ColumnInfo) -> tuple[DataType, Convert]:
    precision, scale = col.meta >> 8, col.meta & 0xFF
    if precision <= _MAX_DECIMAL_PRECISION:
        return DecimalType(precision, scale), _same
    return StringType(), jsonenc.decimal_text  # as the server shows it: 0.000, not 0E-3


@maps(ColumnType.DECIMAL, ColumnType.NULL)
def _as_text(col: ColumnInfo) -> tuple[DataType, Convert]:
    return StringType(), str


@maps(ColumnType.BIT)
def _bit(col: ColumnInfo) -> tuple[DataType, Convert]:
    if bit_width(col.meta) < 64:
        return LongType(), _same
    return DecimalType(20, 0), Decimal


def _valid_date(value: Any) -> date | None:
    return value if isinstance(value, date) else None  # zero and invalid dates: NULL


@maps(ColumnType.DATE, ColumnType.NEWDATE)
def _date(col: ColumnInfo) -> tuple[DataType, Convert]:
    return DateType(), _valid_date


def _valid_datetime(value: Any) -> datetime | None:
    return value if isinstance(value, datetime) else None


@maps(ColumnType.DATETIME, ColumnType.DATETIME2)
def _datetime(col: ColumnInfo) -> tuple[DataType, Convert]:
    return TimestampNTZType(), _valid_datetime


@maps(ColumnType.TIMESTAMP, ColumnType.TIMESTAMP2)
def _timestamp(col: ColumnInfo) -> tuple[DataType, Convert]:
    return TimestampType(), _valid_datetime


_MICROSECOND = timedelta(microseconds=1)


@maps(ColumnType.TIME, ColumnType.TIME2)
def _time(col: ColumnInfo) -> tuple[DataType, Convert]:
    """Microseconds (signed): Delta Lake tables cannot hold Spark's day-time intervals."""
    return LongType(), lambda value: value // _MICROSECOND


def _text(value: Any) -> str:
    """A text value; bytes that were not valid in the column's charset become U+FFFD."""
    if isinstance(value, str):
        return value
    return bytes(value).decode("utf-8", "replace")


def _binary(value: Any) -> bytes:
    return value if isinstance(value, bytes) else bytes(value)


def _string_like(col: ColumnInfo) -> tuple[DataType, Convert]:
    if col.charset == BINARY_COLLATION:
        return BinaryType(), _binary
    if col.charset is None:
        raise BinlogError(
            f"column {col.key}: the table map carries no charset, so text and binary "
            "cannot be told apart, and no schema defines the table",
            hint=_NEEDS_SCHEMA,
        )
    return StringType(), _text


maps(
    ColumnType.VARCHAR,
    ColumnType.VAR_STRING,
    ColumnType.STRING,
    ColumnType.TINY_BLOB,
    ColumnType.BLOB,
    ColumnType.MEDIUM_BLOB,
    ColumnType.LONG_BLOB,
)(_string_like)


@maps(ColumnType.VARCHAR_COMPRESSED, ColumnType.BLOB_COMPRESSED)
def _compressed(col: ColumnInfo) -> tuple[DataType, Convert]:
    data_type, inner = _string_like(col)

    def convert(value: Any) -> Any:
        return inner(value.value if isinstance(value, Compressed) else value)

    return data_type, convert


@maps(ColumnType.ENUM)
def _enum(col: ColumnInfo) -> tuple[DataType, Convert]:
    return StringType(), lambda value: str(value) if isinstance(value, int) else _text(value)


@maps(ColumnType.SET)
def _set(col: ColumnInfo) -> tuple[DataType, Convert]:
    order = {_text(member): i for i, member in enumerate(col.set_values or ())}

    def convert(value: Any) -> list[str]:
        if isinstance(value, int):  # no member names in the table map: the bits
            return [str(bit) for bit in range(64) if value >> bit & 1]
        members = [_text(member) for member in value]
        return sorted(members, key=lambda m: (order.get(m, len(order)), m))

    return ArrayType(StringType(), True), convert  # nullable: see _GEOMETRY


@maps(ColumnType.JSON)
def _json(col: ColumnInfo) -> tuple[DataType, Convert]:
    return StringType(), jsonenc.dumps


_GEOMETRY = StructType(
    [StructField("srid", LongType(), True), StructField("wkb", BinaryType(), True)]
)
"""Fields nullable, though never NULL, as every typed column and array element: Delta checks
a NOT NULL field even in a NULL struct, and a Delta table written by an append (a snapshot)
has every column, field and element nullable, so a mirror's schema is the same however it was
created."""


@maps(ColumnType.GEOMETRY)
def _geometry(col: ColumnInfo) -> tuple[DataType, Convert]:
    def convert(value: Any) -> dict[str, Any]:
        if isinstance(value, Geometry):
            return {"srid": value.srid, "wkb": value.wkb}
        raw = bytes(value)
        return {"srid": int.from_bytes(raw[:4], "little"), "wkb": raw[4:]}

    return _GEOMETRY, convert


@maps(ColumnType.VECTOR)
def _vector(col: ColumnInfo) -> tuple[DataType, Convert]:
    return ArrayType(FloatType(), True), list  # nullable: see _GEOMETRY


def typed_columns(columns: Sequence[ColumnInfo], table: str) -> tuple[TypedColumn, ...]:
    """The typed form of a table map's columns (completed by the schema history); a clear
    error when their names or types are not known."""
    if any(col.name is None for col in columns):
        raise BinlogError(
            f"the table map of {table} carries no column names (binlog_row_metadata is not "
            f"FULL), and no schema defines {table}: its CREATE TABLE is not in the files "
            "before its first row change, nor in the file of option schema",
            hint=_NEEDS_SCHEMA,
        )
    typed = []
    for col in columns:
        mapper = TYPE_MAPPERS.get(col.type)
        if mapper is None:
            raise BinlogError(
                f"column {col.key} of {table}: no Spark type for MySQL type {col.type}"
            )
        try:
            data_type, convert = mapper(col)
        except BinlogError as err:
            err.message = f"{table}: {err.message}"
            raise
        typed.append(TypedColumn(col.key, col.type, data_type, convert))
    return tuple(typed)


def typed_schema(columns: Sequence[TypedColumn]) -> StructType:
    """The row-change schema with ``before``/``after`` as structs of these columns."""
    image = StructType([StructField(c.name, c.data_type, True) for c in columns])
    return _change_schema(image)
