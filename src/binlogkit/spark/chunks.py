"""A table cut into key ranges of bounded size, and the SQL that reads one range.

A table is chunked by its primary key, else by its first UNIQUE key whose
columns are all NOT NULL (:func:`chunk_key`). :func:`plan_chunks` walks the
key's index in the snapshot's transaction: each upper bound is the key of the
``chunk_rows``-th row after the previous one, so a chunk holds at most
``chunk_rows`` rows as of the snapshot (rows inserted later into its range are
read too). Bounds are kept as exact SQL literals (:func:`binlogkit.pipeline.sql.
sql_literal`: text as hex in its charset, so comparisons use the column's
collation), and compared column by column in key order, as ``ORDER BY``
sorts. Keys with an ENUM, SET, JSON or spatial column sort otherwise than
their literals compare, so such a table is read as one chunk.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.pipeline.sql import quote_name, sql_literal
from binlogkit.protocol.client import ResultSet
from binlogkit.protocol.text_values import text_column
from binlogkit.schema.model import TableDef

__all__ = ["Bound", "Chunk", "chunk_key", "chunk_where", "plan_chunks", "table_sql"]

Bound = tuple[str, ...]
"""A key value as SQL literals, one per key column."""

Chunk = tuple[Bound | None, Bound | None]
"""Rows with ``lower < key <= upper`` (None: unbounded on that side)."""

_UNORDERED = frozenset({ColumnType.ENUM, ColumnType.SET, ColumnType.JSON, ColumnType.GEOMETRY})


class Queries(Protocol):
    def query(self, sql: str | bytes) -> ResultSet: ...


def table_sql(table: TableDef) -> str:
    return f"{quote_name(table.db)}.{quote_name(table.name)}"


def chunk_key(server: Queries, table: TableDef) -> tuple[str, ...]:
    """The primary key's columns, else the first UNIQUE key's whose columns are all NOT NULL,
    else ``()``."""
    keys: dict[str, list[tuple[str, bool]]] = {}
    for row in server.query(f"SHOW INDEX FROM {table_sql(table)}").rows:
        non_unique, name, column, null = row[1], row[2], row[4], row[9]
        if non_unique == "0" and name is not None and column is not None:
            keys.setdefault(name, []).append((column, null == "YES"))
    if "PRIMARY" in keys:
        return tuple(column for column, _ in keys["PRIMARY"])
    for columns in keys.values():
        if not any(nullable for _, nullable in columns):
            return tuple(column for column, _ in columns)
    return ()


def _after(names: Sequence[str], bound: Bound) -> str:
    """``key > bound`` in key order."""
    terms = []
    for i, name in enumerate(names):
        equal = [f"{names[j]} = {bound[j]}" for j in range(i)]
        terms.append("(" + " AND ".join([*equal, f"{name} > {bound[i]}"]) + ")")
    return "(" + " OR ".join(terms) + ")"


def chunk_where(key: Sequence[str], chunk: Chunk) -> str:
    """The condition of a chunk's rows (``1`` for a whole table)."""
    names = [quote_name(k) for k in key]
    lower, upper = chunk
    terms = []
    if lower is not None:
        terms.append(_after(names, lower))
    if upper is not None:
        terms.append(f"NOT {_after(names, upper)}")
    return " AND ".join(terms) or "1"


def plan_chunks(
    server: Queries,
    table: TableDef,
    infos: Sequence[ColumnInfo],
    key: Sequence[str],
    chunk_rows: int,
) -> list[Chunk]:
    """The key ranges of ``table`` with at most ``chunk_rows`` rows each (as the server's
    current read view has them); one whole chunk without a usable key."""
    parts = []
    for name in key:
        index = table.column_index(name)
        assert index is not None, f"{table_sql(table)} has no key column {name}"
        parts.append((table.columns[index], infos[index]))
    if not parts or any(info.type in _UNORDERED for _, info in parts):
        return [(None, None)]
    readers = [text_column(column, info) for column, info in parts]
    select = ", ".join(r.select for r in readers)
    order = ", ".join(quote_name(k) for k in key)
    chunks: list[Chunk] = []
    lower: Bound | None = None
    while True:
        where = chunk_where(key, (lower, None))
        rows = server.query(
            f"SELECT {select} FROM {table_sql(table)} WHERE {where} "
            f"ORDER BY {order} LIMIT 1 OFFSET {chunk_rows - 1}"
        ).rows
        if not rows:  # the last chunk is open-ended (rows inserted later are read too)
            rest = f"SELECT 1 FROM {table_sql(table)} WHERE {where} LIMIT 1"
            if chunks and not server.query(rest).rows:
                return [*chunks[:-1], (chunks[-1][0], None)]
            return [*chunks, (lower, None)]
        upper = tuple(
            sql_literal(info, reader.parse(text or ""))
            for (_, info), reader, text in zip(parts, readers, rows[0], strict=True)
        )
        chunks.append((lower, upper))
        lower = upper
