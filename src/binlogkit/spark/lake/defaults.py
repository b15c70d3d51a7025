"""The value an added column has in the rows that existed before its ADD COLUMN.

MariaDB gives the existing rows the column's DEFAULT: a literal (as the schema
history keeps it, :mod:`binlogkit.schema.defaults`), the time of the ALTER for
``CURRENT_TIMESTAMP`` (the statement's time, one value for all rows), NULL for
a nullable column without DEFAULT, and for a NOT NULL column without DEFAULT
the type's implicit value (0, ``''``, the zero date, the first ENUM member,
the empty SET). :func:`added_value` turns it into the value the binlog path
writes for that column: the decoder's kind of value, then the column's own
converter (:mod:`binlogkit.spark.schema`). What cannot be known exactly (an
expression such as ``uuid()`` or ``rand()``, a literal TIMESTAMP, which the
server read in the ALTER's session time zone, ``CURRENT_TIMESTAMP`` of a
DATETIME, ...) stops the table with the resnapshot hint.
"""

from __future__ import annotations

import re
import struct
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from binlogkit.errors import BinlogError
from binlogkit.schema.defaults import CURRENT_TIMESTAMP, unquote
from binlogkit.schema.model import ColumnDef
from binlogkit.schema.render import column_sql
from binlogkit.schema.store import Position
from binlogkit.schema.types import BINARY_FORM
from binlogkit.spark.lake.tables import resnapshot_hint
from binlogkit.spark.schema import TypedColumn

__all__ = ["added_value"]

_NUMBERS = {"tinyint", "smallint", "mediumint", "int", "bigint", "year", "bit"}
_TEXT = frozenset({*BINARY_FORM, "enum"})
"""Types whose default literal is the value's text."""
_BINARY = frozenset(BINARY_FORM.values())
"""Types whose default literal is the value's bytes."""
_FLOAT = struct.Struct("<f")


class _Unknown(Exception):
    """The default's value cannot be known exactly; the reason."""


def added_value(column: ColumnDef, typed: TypedColumn, at: Position, table: str) -> Any:
    """The lake's value (Spark's kind, as ``typed`` converts) of ``column`` in the rows of
    ``table`` that existed when it was added at ``at``."""
    try:
        value = _decoded(column, at)
    except _Unknown as why:
        raise BinlogError(
            f"{table}: column {column.name} added at {at} as {column_sql(column)}: the value "
            f"the existing rows got is not known ({why})",
            hint=resnapshot_hint(table),
        ) from None
    return None if value is None else typed.convert(value)


def _decoded(column: ColumnDef, at: Position) -> Any:
    """The default as the binlog decoder would give it (None: NULL)."""
    text = column.default
    if column.auto_increment:
        raise _Unknown("AUTO_INCREMENT numbers the existing rows in an order not logged")
    if text is None:
        return None if column.nullable else _implicit(column)
    now = CURRENT_TIMESTAMP.fullmatch(text)
    if now is not None:
        return _now(column, at)
    quoted = unquote(text)
    if quoted is not None:
        return _from_text(quoted, column)
    if text.startswith("b'") and column.type == "bit":
        return int(text[2:-1] or "0", 2)
    if re.fullmatch(r"-?\d+(\.\d*)?(e-?\d+)?", text):
        return _number(text, column)
    raise _Unknown(f"DEFAULT {text} is an expression, evaluated per row")


def _number(text: str, column: ColumnDef) -> Any:
    if column.type in _NUMBERS:
        return int(text)
    if column.type == "decimal":
        return Decimal(text)
    if column.type == "float":
        return _FLOAT.unpack(_FLOAT.pack(float(text)))[0]  # as a FLOAT holds it
    if column.type == "double":
        return float(text)
    raise _Unknown(f"a number default for type {column.type}")


def _from_text(text: str, column: ColumnDef) -> Any:
    kind = column.type
    if kind in _TEXT:
        return text
    if kind in _BINARY:
        return text.encode("utf-8", "surrogateescape")
    if kind == "set":
        return text.split(",") if text else []
    if kind == "date":
        return _date(text)
    if kind == "datetime":
        return _datetime(text)
    if kind == "time":
        return _time(text)
    if kind == "timestamp":
        if _datetime(text) is None:
            return None  # the zero timestamp
        raise _Unknown("a TIMESTAMP literal is read in the ALTER's session time zone")
    raise _Unknown(f"a text default for type {kind}")


def _date(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None  # zero and invalid dates: NULL, as the binlog path writes them


def _datetime(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _time(text: str) -> timedelta:
    match = re.fullmatch(r"(-)?(\d+):(\d\d):(\d\d)(?:\.(\d+))?", text)
    if match is None:
        raise _Unknown(f"TIME default {text!r}")
    sign, hours, minutes, seconds, fraction = match.groups()
    micros = int((fraction or "").ljust(6, "0")[:6])
    span = timedelta(
        hours=int(hours), minutes=int(minutes), seconds=int(seconds), microseconds=micros
    )
    return -span if sign else span


def _now(column: ColumnDef, at: Position) -> datetime:
    """CURRENT_TIMESTAMP: the ALTER's time, cut to the column's fractional digits."""
    if column.type != "timestamp":
        raise _Unknown(
            f"CURRENT_TIMESTAMP of a {column.type.upper()} is the time in the ALTER's session "
            "time zone"
        )
    when = at.time()
    if when is None:
        raise _Unknown("the schema history has no time of the ALTER (written by an old version)")
    unit = 10 ** (6 - (column.fsp or 0))
    return when.replace(microsecond=when.microsecond // unit * unit)


def _implicit(column: ColumnDef) -> Any:
    """A NOT NULL column without DEFAULT: the value MariaDB fills existing rows with."""
    kind = column.type
    if kind in _NUMBERS:
        return 0
    if kind == "decimal":
        return Decimal(0).scaleb(-(column.scale or 0))
    if kind in ("float", "double"):
        return 0.0
    if kind in ("date", "datetime", "timestamp"):
        return None  # the zero date: NULL in the lake
    if kind == "time":
        return timedelta(0)
    if kind == "enum":
        return (column.values or ("",))[0]
    if kind == "set":
        return []
    if kind in _TEXT:
        return ""
    if kind == "binary":
        return bytes(column.length or 0)
    if kind in _BINARY:
        return b""
    raise _Unknown(f"the implicit value of a NOT NULL {kind.upper()} column")
