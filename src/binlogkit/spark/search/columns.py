"""Which columns of a table the search index takes, decided by their MySQL types.

A table indexed whole (``--tables``) gives its text columns: CHAR, VARCHAR and
the TEXT family in a text charset (MariaDB's JSON among them: MariaDB stores it
as LONGTEXT, and the schema history cannot tell the two apart). A column named
(``--columns``) may also be an ENUM (its member's name) or MySQL's JSON (its
JSON text). Binary strings (BINARY, VARBINARY, BLOBs, ``CHARACTER SET binary``)
hold bytes, not words, and are refused; so are numbers, dates and the other
types, even where the lake keeps them as strings (DECIMAL wider than 38 digits).
The types are the lake's schema history's; for a table it does not define (a
lake made by hand, without one) a mirror's string columns are its text, its
binary columns binary.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

from pyspark.sql.types import BinaryType, DataType, StringType, StructType

from binlogkit.errors import BinlogError
from binlogkit.schema.model import ColumnDef, TableDef
from binlogkit.schema.types import BINARY_FORM

__all__ = ["NAMED_TYPES", "TEXT_TYPES", "text_columns"]

TEXT_TYPES = frozenset(BINARY_FORM)
"""The types of the columns a table indexed whole gives (in a text charset)."""
NAMED_TYPES = frozenset({"enum", "json"})
"""The other types a column named to be indexed may have."""
_BINARY_TYPES = frozenset(BINARY_FORM.values())
_HINT = "index CHAR, VARCHAR, TEXT, ENUM or JSON columns"


class _Kind(Enum):
    TEXT = "text"
    NAMED = "text when named"
    BINARY = "binary"
    OTHER = "other"


def _mysql_kind(column: ColumnDef) -> _Kind:
    if column.type in _BINARY_TYPES or column.charset == "binary":
        return _Kind.BINARY
    if column.type in TEXT_TYPES:
        return _Kind.TEXT
    return _Kind.NAMED if column.type in NAMED_TYPES else _Kind.OTHER


def _spark_kind(data_type: DataType) -> _Kind:
    if isinstance(data_type, StringType):
        return _Kind.TEXT
    return _Kind.BINARY if isinstance(data_type, BinaryType) else _Kind.OTHER


def _kinds(schema: StructType, definition: TableDef | None) -> dict[str, tuple[_Kind, str]]:
    """Each mirror column's kind, and its type as an error names it."""
    kinds = {}
    for field in schema.fields:
        column = None if definition is None else definition.column(field.name)
        if column is not None:
            kinds[field.name] = (_mysql_kind(column), column.type)
        elif definition is None:  # a table the history does not define
            kinds[field.name] = (_spark_kind(field.dataType), field.dataType.simpleString())
        else:
            kinds[field.name] = (_Kind.OTHER, "not in the lake's schema history")
    return kinds


def text_columns(
    table: str, schema: StructType, definition: TableDef | None, chosen: Sequence[str]
) -> tuple[str, ...]:
    """The columns of ``table`` to index: ``chosen``, each checked to hold text, or (none
    chosen) every text column; ``schema``: the mirror's, ``definition``: the table in the
    lake's schema history (None: not there)."""
    kinds = _kinds(schema, definition)
    if not chosen:
        found = tuple(name for name, (kind, _) in kinds.items() if kind is _Kind.TEXT)
        if not found:
            types = [f"{name} {shown}" for name, (_, shown) in kinds.items()]
            raise BinlogError(f"{table} has no text column to index; its columns: {types}")
        return found
    for name in chosen:
        if name not in kinds:
            raise BinlogError(f"{table} has no column {name!r}; its columns: {list(kinds)}")
        kind, shown = kinds[name]
        if kind is _Kind.BINARY:
            raise BinlogError(
                f"{table}.{name} is {shown}, a binary string: it holds bytes, not text in a "
                "charset, so it has no words to index",
                hint=_HINT,
            )
        if kind not in (_Kind.TEXT, _Kind.NAMED):
            raise BinlogError(f"{table}.{name} is {shown}, not text", hint=_HINT)
    return tuple(chosen)
