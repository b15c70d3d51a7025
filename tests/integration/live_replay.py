"""Replay decoded row changes over empty tables and compare them with what SELECT returns.

The server is the ground truth. For each column :func:`snapshot` selects
lossless text forms (``HEX()`` of every string, ``CAST(f AS DOUBLE)`` for
FLOAT, ``x+0`` for BIT, YEAR, ENUM and SET, ...) and turns them into
:class:`Cell` values. :func:`replay` applies the row changes of decoded rows
events, in binlog order, to empty table images (a row change has ``before``
and ``after``: dicts column key → value, None for inserts and deletes, absent
columns absent). :func:`compare` then checks that each table image holds
exactly the rows of its snapshot, matching whole rows (so tables without a
primary key work too), with :func:`same` deciding whether a decoded Python
value is the server's value, whatever natural type the decoder chose.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from binlogkit import Event
from binlogkit.binlog.constants import EventType
from binlogkit.sandbox import MariaDBSandbox

ROWS_EVENT_TYPES = frozenset(
    {
        EventType.PRE_GA_WRITE_ROWS,
        EventType.PRE_GA_UPDATE_ROWS,
        EventType.PRE_GA_DELETE_ROWS,
        EventType.WRITE_ROWS_V1,
        EventType.UPDATE_ROWS_V1,
        EventType.DELETE_ROWS_V1,
        EventType.WRITE_ROWS,
        EventType.UPDATE_ROWS,
        EventType.DELETE_ROWS,
        EventType.PARTIAL_UPDATE_ROWS,
        EventType.MARIADB_WRITE_ROWS_COMPRESSED_V1,
        EventType.MARIADB_UPDATE_ROWS_COMPRESSED_V1,
        EventType.MARIADB_DELETE_ROWS_COMPRESSED_V1,
        EventType.MARIADB_WRITE_ROWS_COMPRESSED,
        EventType.MARIADB_UPDATE_ROWS_COMPRESSED,
        EventType.MARIADB_DELETE_ROWS_COMPRESSED,
    }
)

_INT_BITS = {"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "bigint": 64}
_TEXT_TYPES = {"char", "varchar", "tinytext", "text", "mediumtext", "longtext"}
_BINARY_TYPES = {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"}
_GEOMETRY_TYPES = {
    "geometry",
    "point",
    "linestring",
    "polygon",
    "multipoint",
    "multilinestring",
    "multipolygon",
    "geometrycollection",
}
_SIMPLE_KINDS = {
    "decimal",
    "float",
    "double",
    "bit",
    "year",
    "date",
    "time",
    "datetime",
    "timestamp",
    "enum",
    "set",
}
_FIXED_BINARY = {"inet6": 16, "uuid": 16, "inet4": 4}
_TEMPORAL = re.compile(
    r"^(-)?(\d+)-(\d+)-(\d+)(?:[ T](\d+):(\d+):(\d+)(?:\.(\d{1,6}))?)?$|"
    r"^(-)?(\d+):(\d+):(\d+)(?:\.(\d{1,6}))?$"
)
MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<absent>"})()
"""Stands for a column a replayed row never received."""


@dataclass(frozen=True, slots=True)
class ColumnSchema:
    """What the test knows about a column from information_schema."""

    index: int
    name: str
    kind: str
    data_type: str
    column_type: str
    unsigned: bool = False
    bits: int = 0
    fixed_length: int | None = None
    charset: str = ""

    @property
    def key(self) -> str:
        """The positional key a decoder uses when the binlog carries no column names."""
        return f"@{self.index + 1}"

    def select_expressions(self) -> tuple[str, ...]:
        c = f"`{self.name}`"
        match self.kind:
            case "float":
                return (f"CAST({c} AS DOUBLE)",)
            case "bit" | "year":
                return (f"{c}+0",)
            case "text":
                return (f"HEX({c})", f"HEX(CONVERT({c} USING utf8mb4))")
            case "enum" | "set":
                # The member number (ENUM) or bitmap (SET); +0 alone is signed for 64 members.
                return (f"HEX({c})", f"HEX(CONVERT({c} USING utf8mb4))", f"CAST({c}+0 AS UNSIGNED)")
            case "binary" | "geometry":
                return (f"HEX({c})",)
            case "fixed_binary":
                return (f"HEX(CAST({c} AS BINARY({self.fixed_length})))",)
            case _:
                return (c,)


@dataclass(frozen=True, slots=True)
class Cell:
    """One non-NULL value as the server shows it.

    ``value`` is the natural value (int, Decimal, float, a tuple of date/time
    fields, or microseconds for TIME); ``raw`` the stored bytes of string-like
    values; ``text`` those bytes converted to Unicode by the server itself.
    """

    value: Any = None
    raw: bytes | None = None
    text: str | None = None


@dataclass(slots=True)
class Snapshot:
    """The rows of one table as SELECT returns them."""

    table: str
    columns: list[ColumnSchema]
    rows: list[tuple[Cell | None, ...]]


def table_columns(server: MariaDBSandbox, database: str, table: str) -> list[ColumnSchema]:
    rows = server.query(
        "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IFNULL(CHARACTER_SET_NAME, ''), "
        "IFNULL(CHARACTER_MAXIMUM_LENGTH, 0) FROM information_schema.COLUMNS "
        f"WHERE TABLE_SCHEMA = '{database}' AND TABLE_NAME = '{table}' ORDER BY ORDINAL_POSITION"
    )
    columns = []
    for index, (name, data_type, column_type, charset, _length) in enumerate(rows):
        assert name and data_type and column_type is not None
        columns.append(_column_schema(index, name, data_type, column_type, charset or ""))
    return columns


def _column_schema(
    index: int, name: str, data_type: str, column_type: str, charset: str
) -> ColumnSchema:
    unsigned = "unsigned" in column_type
    fixed = None
    if data_type in _INT_BITS:
        kind = "int"
    elif data_type in _SIMPLE_KINDS:
        kind = data_type
    elif data_type in _TEXT_TYPES:
        kind = "binary" if charset == "binary" else "text"
    elif data_type in _BINARY_TYPES:
        kind = "binary"
    elif data_type in _GEOMETRY_TYPES:
        kind = "geometry"
    elif data_type in _FIXED_BINARY:
        kind, fixed = "fixed_binary", _FIXED_BINARY[data_type]
    else:
        raise AssertionError(f"column {name}: no comparison rule for type {column_type}")
    if data_type == "binary":
        m = re.search(r"\((\d+)\)", column_type)
        fixed = int(m[1]) if m else 1
    bits = _INT_BITS.get(data_type, 0)
    return ColumnSchema(index, name, kind, data_type, column_type, unsigned, bits, fixed, charset)


def snapshot(server: MariaDBSandbox, database: str, table: str) -> Snapshot:
    """The table's rows as :class:`Cell` tuples, read with lossless expressions."""
    columns = table_columns(server, database, table)
    expressions = [e for c in columns for e in c.select_expressions()]
    result = server.query(f"SELECT {', '.join(expressions)} FROM `{database}`.`{table}`")
    rows = []
    for texts in result:
        cells: list[Cell | None] = []
        pos = 0
        for column in columns:
            width = len(column.select_expressions())
            cells.append(_cell(column, texts[pos : pos + width]))
            pos += width
        rows.append(tuple(cells))
    return Snapshot(table, columns, rows)


def _cell(column: ColumnSchema, texts: Sequence[str | None]) -> Cell | None:
    first = texts[0]
    if first is None:
        return None
    match column.kind:
        case "int" | "bit" | "year":
            return Cell(int(first))
        case "decimal":
            return Cell(Decimal(first))
        case "float" | "double":
            return Cell(float(first))
        case "date" | "datetime" | "timestamp":
            return Cell(_temporal_fields(first))
        case "time":
            return Cell(_time_micros(first))
        case "text":
            assert texts[1] is not None
            return Cell(raw=bytes.fromhex(first), text=bytes.fromhex(texts[1]).decode())
        case "enum" | "set":
            assert texts[1] is not None and texts[2] is not None
            return Cell(int(texts[2]), bytes.fromhex(first), bytes.fromhex(texts[1]).decode())
        case _:
            return Cell(raw=bytes.fromhex(first))


def _temporal_fields(text: str) -> tuple[int, ...]:
    """``YYYY-MM-DD[ hh:mm:ss[.ffffff]]`` as (year, month, day[, h, m, s, µs])."""
    m = _TEMPORAL.match(text)
    if not m or m[2] is None:
        raise AssertionError(f"not a date or datetime: {text!r}")
    date = (int(m[2]), int(m[3]), int(m[4]))
    if m[5] is None:
        return date
    return (*date, int(m[5]), int(m[6]), int(m[7]), int((m[8] or "").ljust(6, "0")))


def _time_micros(text: str) -> int:
    """``[-]h:mm:ss[.ffffff]`` as signed microseconds."""
    m = _TEMPORAL.match(text)
    if not m or m[10] is None:
        raise AssertionError(f"not a TIME value: {text!r}")
    micros = ((int(m[10]) * 60 + int(m[11])) * 60 + int(m[12])) * 1_000_000
    micros += int((m[13] or "").ljust(6, "0"))
    return -micros if m[9] else micros


# -- is a decoded value the server's value? ---------------------------------------------


def same(value: Any, cell: Cell | None, column: ColumnSchema, *, lenient: bool = False) -> bool:
    """Whether ``value``, decoded from the binlog, is the value SELECT shows.

    ``lenient`` is for binlogs without column metadata (binlog_row_metadata
    NO_LOG), where a decoder cannot know signedness or that a fixed-length
    string is binary: there a negative integer may stand for its unsigned
    twin, and a binary string may lack the NUL bytes the server pads it with.
    """
    if cell is None or value is None:
        return cell is None and value is None
    match column.kind:
        case "int":
            if not isinstance(value, int):
                return False
            if lenient and column.unsigned and value < 0:
                value += 1 << column.bits
            return bool(value == cell.value)
        case "decimal":
            return (
                isinstance(value, Decimal)
                and value == cell.value
                and value.as_tuple().exponent == cell.value.as_tuple().exponent
            )
        case "float" | "double":
            return isinstance(value, float) and value == cell.value
        case "bit":
            if isinstance(value, bytes):
                value = int.from_bytes(value, "big")
            return isinstance(value, int) and value == cell.value
        case "year":
            return isinstance(value, int) and value == cell.value
        case "date" | "datetime" | "timestamp":
            return _temporal_of(value, column.kind) == cell.value
        case "time":
            return _time_of(value) == cell.value
        case "text":
            if isinstance(value, str):
                return value == cell.text
            if isinstance(value, bytes):
                return lenient and value == cell.raw
            if isinstance(value, dict | list | bool | int | float) and cell.text is not None:
                return bool(json.loads(cell.text) == value)
            return False
        case "enum":
            return _member_matches(value, cell, lenient)
        case "set":
            if isinstance(value, frozenset | set):
                if all(isinstance(m, str) for m in value):
                    return value == (set(cell.text.split(",")) if cell.text else set())
                if all(isinstance(m, bytes) for m in value):
                    return lenient and value == (set(cell.raw.split(b",")) if cell.raw else set())
                return False
            return _member_matches(value, cell, lenient)
        case "geometry":
            if hasattr(value, "to_bytes") and not isinstance(value, int):
                value = value.to_bytes()
            return isinstance(value, bytes) and value == cell.raw
        case "fixed_binary":
            if isinstance(value, ipaddress.IPv4Address | ipaddress.IPv6Address):
                value = value.packed
            elif isinstance(value, uuid.UUID):
                value = value.bytes
            elif isinstance(value, str):
                try:
                    value = (
                        uuid.UUID(value).bytes
                        if column.data_type == "uuid"
                        else ipaddress.ip_address(value).packed
                    )
                except ValueError:
                    return False
            return _bytes_match(value, cell, column, lenient)
        case "binary":
            return _bytes_match(value, cell, column, lenient)
    raise AssertionError(f"no comparison rule for {column.kind}")


def _bytes_match(value: Any, cell: Cell, column: ColumnSchema, lenient: bool) -> bool:
    if not isinstance(value, bytes):
        return False
    if value == cell.raw:
        return True
    # Fixed-length binary strings are logged without their trailing NUL padding.
    padded = lenient and column.fixed_length is not None and cell.raw is not None
    return padded and value.ljust(column.fixed_length or 0, b"\0") == cell.raw


def _member_matches(value: Any, cell: Cell, lenient: bool) -> bool:
    if isinstance(value, str):
        return value == cell.text
    if isinstance(value, bytes):
        return lenient and value == cell.raw
    if isinstance(value, int):
        # The member index (ENUM) or bitmap (SET): all a binlog without metadata has.
        return lenient and value == cell.value
    return False


def _temporal_of(value: Any, kind: str) -> tuple[int, ...] | None:
    if isinstance(value, str):
        return _temporal_fields(value)
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return _date_and_time(value)
    if kind == "date" and all(hasattr(value, a) for a in ("year", "month", "day")):
        return (value.year, value.month, value.day)
    if all(hasattr(value, a) for a in ("year", "month", "day", "hour", "microsecond")):
        return _date_and_time(value)
    return None


def _date_and_time(value: Any) -> tuple[int, ...]:
    """A datetime (or InvalidDateTime) as (year, month, day, hour, minute, second, microsecond)."""
    return (
        value.year,
        value.month,
        value.day,
        value.hour,
        value.minute,
        value.second,
        value.microsecond,
    )


def _time_of(value: Any) -> int | None:
    if isinstance(value, dt.timedelta):
        return (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    if isinstance(value, dt.time):
        return (
            (value.hour * 60 + value.minute) * 60 + value.second
        ) * 1_000_000 + value.microsecond
    if isinstance(value, str):
        return _time_micros(value)
    return None


# -- replay -------------------------------------------------------------------------


@dataclass(slots=True)
class Replay:
    """Table images built from row changes, and the changes that did not apply."""

    images: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    changes: int = 0


def replay(events: Iterable[Event], replay_into: Replay | None = None) -> Replay:
    """Apply every row change of ``events`` (in order) to empty table images.

    Tables are named by the TABLE_MAP event of each rows event's table id. An
    update or delete applies to the first row whose values equal every column
    its before image holds; a before image that matches no row is a problem.
    """
    result = replay_into or Replay()
    tables: dict[int, tuple[str, str]] = {}
    for event in events:
        code = event.header.type_code
        if code == EventType.TABLE_MAP:
            tables[event.table_id] = (event.schema, event.table_name)  # type: ignore[attr-defined]
            continue
        if code not in ROWS_EVENT_TYPES:
            continue
        where = f"{event.header.file}@{event.header.offset} {event.type_name}"
        changes = getattr(event, "rows", None)
        if changes is None:
            result.problems.append(f"{where}: rows event has no .rows ({type(event).__name__})")
            continue
        table_id = event.table_id  # type: ignore[attr-defined]
        if table_id not in tables:
            result.problems.append(f"{where}: no TABLE_MAP for table id {table_id}")
            continue
        image = result.images.setdefault(tables[table_id], [])
        for change in changes:
            result.changes += 1
            _apply(image, change.before, change.after, where, result.problems)
    return result


def _apply(
    image: list[dict[str, Any]],
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
    where: str,
    problems: list[str],
) -> None:
    if before is None:
        if after is None:
            problems.append(f"{where}: a row change with neither before nor after image")
        else:
            image.append(dict(after))
        return
    for i, row in enumerate(image):
        if all(k in row and row[k] == v for k, v in before.items()):
            if after is None:
                del image[i]
            else:
                row.update(after)
            return
    problems.append(f"{where}: no row matches the before image {_short(before)}")


def _short(row: Mapping[str, Any], limit: int = 400) -> str:
    text = repr(dict(row))
    return text if len(text) <= limit else text[:limit] + "...}"


# -- compare -------------------------------------------------------------------------


def image_row(row: Mapping[str, Any], columns: Sequence[ColumnSchema]) -> tuple[Any, ...]:
    """A replayed row's values in column order (by name, else by position ``@n``)."""
    return tuple(row.get(c.name, row.get(c.key, MISSING)) for c in columns)


def compare(snap: Snapshot, image: Sequence[Mapping[str, Any]], *, lenient: bool) -> list[str]:
    """The differences between a replayed table and its snapshot (empty when equal)."""
    columns = snap.columns
    mine = [image_row(r, columns) for r in image]
    theirs = list(snap.rows)

    def row_same(values: tuple[Any, ...], cells: tuple[Cell | None, ...]) -> bool:
        return all(
            v is not MISSING and same(v, cell, col, lenient=lenient)
            for v, cell, col in zip(values, cells, columns, strict=True)
        )

    unmatched: list[tuple[Any, ...]] = []
    for values in mine:
        for j, cells in enumerate(theirs):
            if row_same(values, cells):
                del theirs[j]
                break
        else:
            unmatched.append(values)
    problems = []
    for values in unmatched[:5]:
        problems.append(
            f"{snap.table}: replayed row not in SELECT: {_diff(values, theirs, columns, lenient)}"
        )
    for cells in theirs[:5]:
        shown = {c.name: cell for c, cell in zip(columns, cells, strict=True) if cell is not None}
        problems.append(f"{snap.table}: SELECT row not replayed: {_short(shown)}")
    if len(unmatched) > 5 or len(theirs) > 5:
        problems.append(
            f"{snap.table}: {len(unmatched)} replayed rows and {len(theirs)} SELECT rows unmatched"
        )
    return problems


def _diff(
    values: tuple[Any, ...],
    candidates: Sequence[tuple[Cell | None, ...]],
    columns: Sequence[ColumnSchema],
    lenient: bool,
) -> str:
    """The columns in which ``values`` differs from the most similar SELECT row."""
    if not candidates:
        return _short({c.name: v for c, v in zip(columns, values, strict=True)})

    def differing(cells: tuple[Cell | None, ...]) -> list[int]:
        return [
            i
            for i, (v, cell, col) in enumerate(zip(values, cells, columns, strict=True))
            if v is MISSING or not same(v, cell, col, lenient=lenient)
        ]

    best = min(candidates, key=lambda cells: len(differing(cells)))
    parts = [
        f"{columns[i].name} ({columns[i].column_type:.40}): decoded {values[i]!r:.200} "
        f"vs SELECT {best[i]!r:.200}"
        for i in differing(best)
    ]
    return "; ".join(parts)
