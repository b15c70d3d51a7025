"""Row changes as plain SQL: INSERT, UPDATE and DELETE with exact literals.

:func:`rows_event_sql` turns one rows event into statements that any MySQL or
MariaDB server runs; :func:`undo_sql` writes a whole flashback
(:func:`binlogkit.pipeline.flashback.flashback`) as a script, one transaction
per ``BEGIN``/``COMMIT``.

Literals are exact for every column type: text goes out as the hex of its
bytes in the column's character set behind a charset introducer
(``_latin1 X'E9'``), binary strings, spatial values (SRID + WKB, the servers'
own form) and MariaDB's INET6/UUID as ``X'..'``, ENUM and SET as their index
and bit mask, DECIMAL in full, floats with every digit (``repr``), times with
their microseconds, TIMESTAMP columns in UTC (the script sets
``time_zone='+00:00'``), MySQL JSON as ``CAST('...' AS JSON)`` (built with JSON functions
around opaque values).

Statements need column names: the table map's optional metadata has them
when the server logged it with ``binlog_row_metadata=FULL``; else the caller
gives them (``columns``), or :class:`SqlError` says what is missing. Rows are
found by the primary key when the table map names one (else by every column
of the image, NULL-safe, ``LIMIT 1``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.binlog.jsonb import JsonEmpty, JsonOpaque
from binlogkit.binlog.rows.charsets import BINARY_COLLATION, charset_name, text_codec
from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.binlog.rows.types.values import (
    JSON_NULL,
    Compressed,
    Geometry,
    InvalidDate,
    InvalidDateTime,
)
from binlogkit.errors import BinlogError

__all__ = ["SCRIPT_HEADER", "SqlError", "quote_name", "rows_event_sql", "sql_literal", "undo_sql"]

SCRIPT_HEADER = (
    "SET SESSION time_zone = '+00:00', sql_mode = 'NO_AUTO_VALUE_ON_ZERO', "
    "foreign_key_checks = 0, unique_checks = 0;"
)
"""What a script of these statements starts with: UTC for TIMESTAMP literals, zero
dates and zero AUTO_INCREMENT values allowed, and no checks of foreign keys
between the statements (as when a replica applies rows events)."""

Columns = Mapping[tuple[str, str], Sequence[str]]
"""Column names per (database, table), for binlogs without them."""

_TEXT_TYPES = frozenset(
    {ColumnType.VARCHAR, ColumnType.VAR_STRING, ColumnType.STRING, ColumnType.BLOB}
)
_ENUM_SET = frozenset({ColumnType.ENUM, ColumnType.SET})


class SqlError(BinlogError):
    """A row change that cannot be written as SQL (e.g. its column names are unknown)."""


def quote_name(name: str) -> str:
    """An identifier in backquotes."""
    return "`" + name.replace("`", "``") + "`"


def _hex(data: bytes) -> str:
    return f"X'{data.hex().upper()}'" if data else "''"


def _text(col: ColumnInfo, value: str | bytes) -> str:
    if isinstance(value, bytes):
        data = value
    else:
        codec = text_codec(col.charset)
        data = (
            codec.encode(value) if codec is not None else value.encode("utf-8", "surrogateescape")
        )
    name = charset_name(col.charset) if col.charset not in (None, BINARY_COLLATION) else None
    if name is None or not data:
        return _hex(data)
    return f"_{name} {_hex(data)}"


def _fraction(microsecond: int) -> str:
    return f".{microsecond:06d}" if microsecond else ""


def _time(value: timedelta) -> str:
    sign = "-" if value < timedelta(0) else ""
    total = abs(value)
    seconds = total.days * 86400 + total.seconds
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"'{sign}{hours:02d}:{minutes:02d}:{secs:02d}{_fraction(total.microseconds)}'"


def _json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    raise TypeError(f"no JSON text for {type(value).__name__}")


def _utf8mb4(text: str) -> str:
    return "_utf8mb4'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


_OPAQUE_CASTS = {
    ColumnType.DATE: "DATE",
    ColumnType.TIME: "TIME(6)",
    ColumnType.DATETIME: "DATETIME(6)",
    ColumnType.TIMESTAMP: "DATETIME(6)",
}


def _holds_opaque(value: Any) -> bool:
    if isinstance(value, JsonOpaque):
        return True
    if isinstance(value, dict):
        value = value.values()
    elif not isinstance(value, list):
        return False
    return any(_holds_opaque(v) for v in value)


def _json(value: Any) -> str:
    """A MySQL JSON value as SQL: its JSON text cast to JSON.

    Opaque values (DECIMAL, dates and times, binary strings), which JSON text
    cannot hold, and the containers around them are built with ``JSON_OBJECT``,
    ``JSON_ARRAY``, a DECIMAL literal, a temporal ``CAST`` (a TIMESTAMP as
    DATETIME) or a binary string. An empty value is what MySQL reads it as: null.
    """
    if isinstance(value, JsonOpaque):
        if value.mysql_type == ColumnType.NEWDECIMAL:
            return value.to_text()
        cast = _OPAQUE_CASTS.get(value.mysql_type)
        if cast is not None:
            return f"CAST('{value.to_text()}' AS {cast})"
        return f"CAST({_hex(value.data)} AS BINARY)"
    if isinstance(value, dict | list) and _holds_opaque(value):
        if isinstance(value, dict):
            items = ", ".join(f"{_utf8mb4(k)}, {_json(v)}" for k, v in value.items())
            return f"JSON_OBJECT({items})"
        return f"JSON_ARRAY({', '.join(_json(v) for v in value)})"
    if value is JSON_NULL or isinstance(value, JsonEmpty):
        text = "null"
    else:
        text = json.dumps(value, default=_json_default)
    return f"CAST({_utf8mb4(text)} AS JSON)"


def sql_literal(col: ColumnInfo, value: Any, number: Callable[[Any], int] | None = None) -> str:
    """The exact SQL literal of a decoded value of column ``col``.

    ``number`` turns an ENUM member or SET of members into its index or mask
    (the column's binlog encoding); without it they go out as text.
    """
    if value is None:
        return "NULL"
    if col.binlog_type == ColumnType.JSON:
        return _json(value)
    if col.type in _ENUM_SET and number is not None and not isinstance(value, int):
        return str(number(value))
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, float):
        return repr(value) if "e" in repr(value) else f"{value!r}e0"
    if isinstance(value, Compressed):
        return _text(col, value.value)
    if isinstance(value, Geometry):
        return _hex(value.to_bytes())
    if isinstance(value, str | bytes):
        if col.type in _TEXT_TYPES or col.type in _ENUM_SET:
            return _text(col, value)
        return _hex(value if isinstance(value, bytes) else value.encode("utf-8"))
    if isinstance(value, frozenset):
        members = sorted(
            (m.encode("utf-8") if isinstance(m, str) else m for m in value),
        )
        return _text(col, b",".join(members))
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return f"'{value:%Y-%m-%d %H:%M:%S}{_fraction(value.microsecond)}'"
    if isinstance(value, date):
        return f"'{value.isoformat()}'"
    if isinstance(value, InvalidDate | InvalidDateTime):
        return f"'{value.isoformat()}'"
    if isinstance(value, timedelta):
        return _time(value)
    raise SqlError(f"no SQL literal for a {type(value).__name__} value of column {col.key}")


class _Table:
    """How to write the rows of one table map: names, literals, the key."""

    def __init__(self, event: RowsEvent, columns: Columns | None) -> None:
        table = event.table
        if table is None:
            raise SqlError(f"no table map for table id {event.table_id}")
        self.name = f"{quote_name(table.schema)}.{quote_name(table.table_name)}"
        cols = table.columns
        given = (columns or {}).get((table.schema, table.table_name))
        if given is not None:
            if len(given) != len(cols):
                raise SqlError(
                    f"{len(given)} column names given for {self.name}, "
                    f"its table map has {len(cols)} columns"
                )
            names = list(given)
        elif all(c.name is not None for c in cols):
            names = [c.name for c in cols]  # type: ignore[misc]
        else:
            raise SqlError(
                f"the binlog does not name the columns of {self.name}",
                hint="log with binlog_row_metadata=FULL, or give the names "
                "(--columns DB.TABLE=a,b,c)",
            )
        plan = table.plan(event.options)
        self.keys = plan.keys
        self.cols = cols
        self.names = [quote_name(n) for n in names]
        self.numbers = [_enum_number(c, enc) for c, enc in zip(cols, plan.encoders, strict=True)]
        self.primary = [i for i, c in enumerate(cols) if c.primary_key]

    def literal(self, index: int, value: Any) -> str:
        return sql_literal(self.cols[index], value, self.numbers[index])

    def where(self, row: Mapping[str, Any]) -> str:
        present = [i for i, key in enumerate(self.keys) if key in row]
        by_key = self.primary and all(self.keys[i] in row for i in self.primary)
        use = self.primary if by_key else present
        terms = [f"{self.names[i]} <=> {self.literal(i, row[self.keys[i]])}" for i in use]
        return " AND ".join(terms) + ("" if by_key else " LIMIT 1")

    def assignments(self, row: Mapping[str, Any]) -> str:
        return ", ".join(
            f"{self.names[i]} = {self.literal(i, row[key])}"
            for i, key in enumerate(self.keys)
            if key in row
        )


def _enum_number(col: ColumnInfo, encode: Callable[[Any, bytearray], None]) -> Callable[[Any], int]:
    def number(value: Any) -> int:
        out = bytearray()
        encode(value, out)
        return int.from_bytes(out, "little")

    return number


def rows_event_sql(event: RowsEvent, columns: Columns | None = None) -> Iterator[str]:
    """One statement per row of a rows event (INSERT, UPDATE or DELETE)."""
    table = _Table(event, columns)
    for change in event.rows:
        before, after = change.before, change.after
        if before is None and after is not None:
            present = [i for i, key in enumerate(table.keys) if key in after]
            names = ", ".join(table.names[i] for i in present)
            values = ", ".join(table.literal(i, after[table.keys[i]]) for i in present)
            yield f"INSERT INTO {table.name} ({names}) VALUES ({values});"
        elif after is None and before is not None:
            yield f"DELETE FROM {table.name} WHERE {table.where(before)};"
        elif before is not None and after is not None:
            yield f"UPDATE {table.name} SET {table.assignments(after)} WHERE {table.where(before)};"


def undo_sql(transactions: Iterable[Any], columns: Columns | None = None) -> Iterator[str]:
    """A flashback (:class:`~binlogkit.pipeline.flashback.UndoTransaction` list) as SQL lines."""
    yield SCRIPT_HEADER
    for undo in transactions:
        source = undo.source
        if source is not None:
            yield f"# undo of the transaction at {source.header.file}:{source.header.offset}"
        yield "BEGIN;"
        for event in undo.rows:
            yield from rows_event_sql(event, columns)
        yield "COMMIT;"
