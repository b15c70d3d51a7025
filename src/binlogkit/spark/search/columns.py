"""Which columns of a table the search index takes, decided by their MySQL types.

A table indexed whole (``--tables``) gives its text columns: CHAR, VARCHAR and
the TEXT family in a text charset (MariaDB's JSON among them: MariaDB stores it
as LONGTEXT, and the schema history cannot tell the two apart). A column named
(``--columns``) may also be an ENUM (its member's name) or MySQL's JSON (its
JSON text). Binary strings (BINARY, VARBINARY, BLOBs, ``CHARACTER SET binary``)
hold bytes, not words, and are refused; so are numbers, dates and the other
types, even where the lake keeps them as strings (DECIMAL wider than 38 digits).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from binlogkit.errors import BinlogError
from binlogkit.schema.model import ColumnDef, TableDef

__all__ = ["NAMED_TYPES", "TEXT_TYPES", "text_columns"]

TEXT_TYPES = frozenset({"char", "varchar", "tinytext", "text", "mediumtext", "longtext"})
"""The types of the columns a table indexed whole gives (in a text charset)."""
NAMED_TYPES = TEXT_TYPES | {"enum", "json"}
"""The types a column named to be indexed may have."""
_BINARY_TYPES = frozenset({"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"})
_HINT = "index CHAR, VARCHAR, TEXT, ENUM or JSON columns"


def _binary(column: ColumnDef) -> bool:
    return column.type in _BINARY_TYPES or column.charset == "binary"


def _text(column: ColumnDef, types: frozenset[str]) -> bool:
    return column.type in types and not _binary(column)


def text_columns(
    table: str, fields: Sequence[str], definition: TableDef | None, chosen: Sequence[str]
) -> tuple[str, ...]:
    """The columns of ``table`` to index: ``chosen``, each checked to hold text, or (none
    chosen) every text column; ``fields``: the mirror's columns, ``definition``: the
    table in the lake's schema history."""
    if definition is None:
        raise BinlogError(
            f"{table} is not in the lake's schema history, so its text columns are not known",
            hint="index a lake written by binlogkit spark sync or spark apply",
        )
    known: Mapping[str, ColumnDef | None] = {name: definition.column(name) for name in fields}
    if not chosen:
        found = tuple(n for n, c in known.items() if c is not None and _text(c, TEXT_TYPES))
        if not found:
            kinds = [f"{n} {c.type if c else '?'}" for n, c in known.items()]
            raise BinlogError(f"{table} has no text column to index; its columns: {kinds}")
        return found
    for name in chosen:
        if name not in known:
            raise BinlogError(f"{table} has no column {name!r}; its columns: {list(fields)}")
        column = known[name]
        if column is None:
            raise BinlogError(f"{table}.{name} is not in the lake's schema history: no known type")
        if _binary(column):
            raise BinlogError(
                f"{table}.{name} is {column.type}, a binary string: it holds bytes, not text "
                "in a charset, so it has no words to index",
                hint=_HINT,
            )
        if not _text(column, NAMED_TYPES):
            raise BinlogError(f"{table}.{name} is {column.type}, not text", hint=_HINT)
    return tuple(chosen)
