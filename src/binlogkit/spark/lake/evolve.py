"""A table definition's change (one DDL statement) as a change of its Delta table's columns.

:func:`plan_change` compares two definitions of a table: a column of the same
name is kept (and retyped when its Spark type changed); a column gone whose
place (the column before it) a new column takes, and whose values the new one
holds exactly, is renamed; others are dropped or added, and the
columns end in the new definition's order. A retyped column is kept only when
every value of the old type is exactly a value of the new one, both in MySQL
and as Delta widens its Spark type; else :class:`~binlogkit.errors.BinlogError`
names the table, column, both types and the fix. :func:`apply_plan` carries a
plan out with ``ALTER TABLE`` statements, each done only when not done yet, so
that it can be repeated after a crash.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql.types import (
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    TimestampNTZType,
)

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import BinlogError
from binlogkit.schema import charsets
from binlogkit.schema.model import ColumnDef, TableDef, fold_column
from binlogkit.schema.render import column_sql
from binlogkit.schema.store import Position
from binlogkit.schema.table_map import column_infos
from binlogkit.spark.lake.tables import quote
from binlogkit.spark.schema import TypedColumn, typed_columns

__all__ = ["Plan", "apply_plan", "plan_change", "resnapshot_hint", "spark_columns"]


@frozen_dataclass
class Plan:
    """Column changes, done in this order: drops, renames, retypes, adds, then the order."""

    drops: tuple[str, ...] = ()
    renames: tuple[tuple[str, str], ...] = ()
    retypes: tuple[tuple[str, DataType], ...] = ()
    adds: tuple[tuple[str, DataType], ...] = ()
    order: tuple[str, ...] = ()


def spark_columns(definition: TableDef) -> tuple[TypedColumn, ...]:
    """The columns of a table definition in the lake's tables: :func:`typed_columns` of the
    table map a FULL-metadata server would log for it."""
    return typed_columns(column_infos(definition), str(definition.table_name))


def resnapshot_hint(table: str) -> str:
    db, name = table.split(".", 1)
    return (
        f"resnapshot {table}: move LAKE/{db}/{name} aside, then snapshot the table again "
        f"(binlogkit spark sync ... --tables {table})"
    )


def plan_change(old: TableDef, new: TableDef, at: Position) -> Plan:
    """The column changes from ``old`` to ``new`` (made at ``at``)."""
    old_types = {c.name: c.data_type for c in spark_columns(old)}
    new_typed = spark_columns(new)
    olds = {fold_column(c.name): c for c in old.columns}
    news = {fold_column(c.name) for c in new.columns}
    after = _predecessors(old)
    renames: list[tuple[str, str]] = []
    retypes, adds = [], []
    previous: str | None = None  # the old name of the new column before, if it has one
    for index, col in enumerate(new.columns):
        data_type = new_typed[index].data_type
        kept = olds.get(fold_column(col.name))
        if kept is None:
            kept = next(
                (
                    c
                    for c in old.columns
                    if fold_column(c.name) not in news
                    and after[fold_column(c.name)] == previous
                    and exact(c, col)
                ),
                None,
            )
            if kept is not None:
                renames.append((kept.name, col.name))
        previous = _ADDED if kept is None else fold_column(kept.name)
        if kept is None:
            adds.append((col.name, data_type))
            continue
        former = kept
        if not exact(former, col) or not delta_widens(old_types[former.name], data_type):
            raise BinlogError(
                f"{new.table_name}: column {col.name} changed at {at} from "
                f"{column_sql(former)} to {column_sql(col)}; the Delta tables cannot hold "
                "both old and new values exactly",
                hint=resnapshot_hint(str(new.table_name)),
            )
        if old_types[former.name] != data_type:
            retypes.append((col.name, data_type))
    renamed = {fold_column(a) for a, _ in renames}
    drops = tuple(
        c.name
        for c in old.columns
        if fold_column(c.name) not in news and fold_column(c.name) not in renamed
    )
    order = tuple(c.name for c in new.columns)
    return Plan(drops, tuple(renames), tuple(retypes), tuple(adds), order)


_ADDED = "\0added"
"""The place after an added column, which no old column has."""


def _predecessors(table: TableDef) -> dict[str, str | None]:
    """Each column's folded name → the folded name of the column before it (None: first)."""
    names = [fold_column(c.name) for c in table.columns]
    return dict(zip(names, [None, *names[:-1]], strict=True))


# -- exactness ---------------------------------------------------------------------------

_INT_BYTES = {"tinyint": 1, "smallint": 2, "mediumint": 3, "int": 4, "bigint": 8}
_TEXT_BYTES = {"tinytext": 255, "text": 65535, "mediumtext": 2**24 - 1, "longtext": 2**32 - 1}
_BLOB_BYTES = {"tinyblob": 255, "blob": 65535, "mediumblob": 2**24 - 1, "longblob": 2**32 - 1}
_UNICODE = ("utf8mb3", "utf8mb4")


def _int_range(col: ColumnDef) -> tuple[int, int]:
    bits = 8 * _INT_BYTES[col.type]
    return (0, 2**bits - 1) if col.unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)


def _chars(col: ColumnDef) -> int:
    if col.type in ("char", "varchar"):
        return col.length or 0
    return _TEXT_BYTES[col.type] // charsets.max_char_length(col.charset or "utf8mb4")


def _charset_holds(old: str | None, new: str | None) -> bool:
    return old == new or new == "utf8mb4" or (old in ("ascii", "latin1") and new in _UNICODE)


def exact(old: ColumnDef, new: ColumnDef) -> bool:
    """Whether every value of column ``old`` is, after the server's conversion, the same
    value of ``new`` (name, nullability, visibility, collation and display width aside)."""
    a, b = old, new
    if a.type in _INT_BYTES and b.type in _INT_BYTES:
        lo, hi = _int_range(a)
        lo2, hi2 = _int_range(b)
        return lo2 <= lo and hi <= hi2
    if a.type in _INT_BYTES and b.type == "decimal":
        lo, hi = _int_range(a)
        digits = len(str(max(-lo, hi)))
        return (b.precision or 10) - (b.scale or 0) >= digits and not (b.unsigned and lo < 0)
    if a.type == b.type == "decimal":
        p, s, p2, s2 = a.precision or 10, a.scale or 0, b.precision or 10, b.scale or 0
        return s2 >= s and p2 - s2 >= p - s and (a.unsigned or not b.unsigned)
    if (a.type, b.type) in (("float", "double"), ("date", "datetime")):
        return True
    if a.type == b.type and a.type in ("datetime", "time", "timestamp"):
        return (b.fsp or 0) >= (a.fsp or 0)
    if a.type in ("char", "varchar", *_TEXT_BYTES) and b.type in ("char", "varchar", *_TEXT_BYTES):
        return (
            (b.type != "char" or a.type == "char")
            and _chars(b) >= _chars(a)
            and _charset_holds(a.charset, b.charset)
        )
    if a.type in ("varbinary", *_BLOB_BYTES) and b.type in ("varbinary", *_BLOB_BYTES):
        size = {**_BLOB_BYTES, "varbinary": 0}
        return max(b.length or 0, size[b.type]) >= max(a.length or 0, size[a.type])
    if a.type == b.type == "enum":
        return set(a.values or ()) <= set(b.values or ())
    if a.type == b.type == "set":
        kept = tuple(v for v in b.values or () if v in (a.values or ()))
        return kept == (a.values or ())
    if a.type == b.type == "bit":
        return (b.length or 1) >= (a.length or 1)
    return a.type == b.type and (a.length, a.precision, a.scale, a.fsp, a.unsigned) == (
        b.length,
        b.precision,
        b.scale,
        b.fsp,
        b.unsigned,
    )


_INTEGRAL = (ByteType, ShortType, IntegerType, LongType)
_DIGITS = {ByteType: 3, ShortType: 5, IntegerType: 10, LongType: 19}


def delta_widens(old: DataType, new: DataType) -> bool:
    """Whether Delta's type widening turns a column of Spark type ``old`` into ``new`` (or
    they are equal)."""
    if old == new:
        return True
    if isinstance(old, _INTEGRAL) and isinstance(new, _INTEGRAL):
        return _INTEGRAL.index(type(old)) < _INTEGRAL.index(type(new))
    if isinstance(old, _INTEGRAL) and isinstance(new, DecimalType):
        return new.precision - new.scale >= _DIGITS[type(old)]
    if isinstance(old, DecimalType) and isinstance(new, DecimalType):
        return new.scale >= old.scale and new.precision - new.scale >= old.precision - old.scale
    return (type(old), type(new)) in ((FloatType, DoubleType), (DateType, TimestampNTZType))


# -- carrying a plan out ------------------------------------------------------------------


def apply_plan(spark: Any, path: str, plan: Plan) -> None:
    """Change the Delta table at ``path`` by ``plan``: each step only where it is not done
    yet (a run cut short by a crash is completed)."""
    table = f"delta.{quote(path)}"

    def columns() -> dict[str, tuple[str, DataType]]:
        fields = spark.read.format("delta").load(path).schema.fields
        return {fold_column(f.name): (f.name, f.dataType) for f in fields}

    have = columns()
    drops = [name for name in plan.drops if fold_column(name) in have]
    if drops:
        spark.sql(f"ALTER TABLE {table} DROP COLUMNS ({', '.join(map(quote, drops))})")
    for old, new in plan.renames:
        if fold_column(old) in have and fold_column(new) not in have:
            spark.sql(f"ALTER TABLE {table} RENAME COLUMN {quote(old)} TO {quote(new)}")
    have = columns()
    for name, data_type in plan.retypes:
        if have[fold_column(name)][1] != data_type:
            spark.sql(
                f"ALTER TABLE {table} ALTER COLUMN {quote(name)} TYPE {data_type.simpleString()}"
            )
    adds = [f"{quote(n)} {t.simpleString()}" for n, t in plan.adds if fold_column(n) not in have]
    if adds:
        spark.sql(f"ALTER TABLE {table} ADD COLUMNS ({', '.join(adds)})")
    current = [fold_column(name) for name, _ in columns().values()]
    if current != [fold_column(name) for name in plan.order]:
        for i, name in enumerate(plan.order):
            where = "FIRST" if i == 0 else f"AFTER {quote(plan.order[i - 1])}"
            spark.sql(f"ALTER TABLE {table} ALTER COLUMN {quote(name)} {where}")
