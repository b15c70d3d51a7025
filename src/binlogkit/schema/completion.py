"""A table's definition completing what its table map leaves out.

Without ``binlog_row_metadata=FULL`` a table map has column types and their
binary metadata only: no names, no signedness, no charsets, no ENUM/SET
members (MySQL's MINIMAL keeps signedness and charsets). :class:`DefinedTable`
fills each :class:`~binlogkit.binlog.rows.columns.ColumnInfo` in from a
:class:`~binlogkit.schema.model.TableDef`, so the rows decode as they would
with FULL metadata. What the map does carry wins: a definition that disagrees
with it, or whose columns do not match the map's types, is reported and the
map's columns are kept as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from binlogkit.binlog.constants import ColumnType as CT
from binlogkit.binlog.events.table_map import ENUM_SET_TYPES, TableMapEvent
from binlogkit.binlog.rows.charsets import BINARY_COLLATION, collation_id, text_codec
from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.schema.model import ColumnDef, TableDef
from binlogkit.schema.types import BINARY_FORM

__all__ = ["GEOMETRY_TYPES", "DefinedTable", "collation_of", "known_fields", "mismatch"]

_TEXT_BLOBS = frozenset({CT.BLOB, CT.BLOB_COMPRESSED})
GEOMETRY_TYPES = {
    "geometry": 0,
    "point": 1,
    "linestring": 2,
    "polygon": 3,
    "multipoint": 4,
    "multilinestring": 5,
    "multipolygon": 6,
    "geometrycollection": 7,
}
"""information_schema's DATA_TYPE of the spatial types → the table map's GEOMETRY_TYPE code."""

_ROW_TYPES: dict[str, frozenset[int]] = {
    "tinyint": frozenset({CT.TINY}),
    "smallint": frozenset({CT.SHORT}),
    "mediumint": frozenset({CT.INT24}),
    "int": frozenset({CT.LONG}),
    "bigint": frozenset({CT.LONGLONG}),
    "float": frozenset({CT.FLOAT}),
    "double": frozenset({CT.DOUBLE}),
    "decimal": frozenset({CT.NEWDECIMAL, CT.DECIMAL}),
    "year": frozenset({CT.YEAR}),
    "bit": frozenset({CT.BIT}),
    "date": frozenset({CT.DATE, CT.NEWDATE}),
    "time": frozenset({CT.TIME, CT.TIME2}),
    "datetime": frozenset({CT.DATETIME, CT.DATETIME2}),
    "timestamp": frozenset({CT.TIMESTAMP, CT.TIMESTAMP2}),
    "char": frozenset({CT.STRING}),
    "binary": frozenset({CT.STRING}),
    "varchar": frozenset({CT.VARCHAR, CT.VAR_STRING, CT.VARCHAR_COMPRESSED}),
    "varbinary": frozenset({CT.VARCHAR, CT.VAR_STRING, CT.VARCHAR_COMPRESSED}),
    "enum": frozenset({CT.ENUM}),
    "set": frozenset({CT.SET}),
    "json": frozenset({CT.JSON}),
    "vector": frozenset({CT.VECTOR, CT.VARCHAR}),
    "uuid": frozenset({CT.STRING}),
    "inet4": frozenset({CT.STRING}),
    "inet6": frozenset({CT.STRING}),
    **dict.fromkeys(
        (
            "tinytext",
            "text",
            "mediumtext",
            "longtext",
            "tinyblob",
            "blob",
            "mediumblob",
            "longblob",
        ),
        _TEXT_BLOBS,
    ),
    **dict.fromkeys(GEOMETRY_TYPES, frozenset({CT.GEOMETRY})),
}
"""information_schema's DATA_TYPE → the real types (the rows' layout) a table map may give."""

_BINARY_TYPES = frozenset(
    {*BINARY_FORM.values(), "uuid", "inet4", "inet6", "vector", *GEOMETRY_TYPES}
)
"""Types whose values are bytes: the ``binary`` collation, whatever the definition's charset
(MariaDB logs one for its spatial types, stored as BLOBs)."""


def mismatch(definition: TableDef, columns: tuple[ColumnInfo, ...]) -> str | None:
    """Why ``definition`` cannot describe a table map with ``columns``; None when it can."""
    if len(definition.columns) != len(columns):
        return f"the schema has {len(definition.columns)} columns, the table map {len(columns)}"
    for col, info in zip(definition.columns, columns, strict=True):
        expected = _ROW_TYPES.get(col.type)
        if expected is None:
            return f"column {col.name} has a type binlogkit does not know ({col.type})"
        if info.type not in expected:
            return (
                f"column {info.index + 1} is {col.name} {col.type} in the schema, "
                f"but the table map logs type {CT(info.type).name}"
            )
    return None


class DefinedTable:
    """A :class:`TableDef` as a :class:`~binlogkit.binlog.tables.TableSchema` for the decoder.

    ``report(table, message)`` hears of definitions that disagree with a map.
    """

    __slots__ = ("definition", "report")

    def __init__(self, definition: TableDef, report: Callable[[TableMapEvent, str], None]) -> None:
        self.definition = definition
        self.report = report

    def complete(
        self, table: TableMapEvent, columns: tuple[ColumnInfo, ...]
    ) -> tuple[ColumnInfo, ...]:
        definition = self.definition
        problem = mismatch(definition, columns)
        if problem is not None:
            self.report(table, f"{problem}; its columns keep the binlog's positional names")
            return columns
        rules = table.metadata_rules
        primary = {definition.column_index(name) for name in definition.primary_key}
        completed = []
        differences = []
        for col, info in zip(definition.columns, columns, strict=True):
            known = known_fields(col, info, rules.numeric, rules.character, info.index in primary)
            given = {name: getattr(info, name) for name in known}
            differ = [
                name
                for name, value in given.items()
                if value is not None and value != known[name] and name != "primary_key"
            ]
            if differ:
                differences.append(f"{col.name}: {', '.join(differ)}")
            fill = {
                name: value
                for name, value in known.items()
                if given[name] is None or (name == "primary_key" and not given[name])
            }
            completed.append(replace(info, **fill) if fill else info)  # type: ignore[arg-type]
        if differences:
            self.report(
                table,
                "the table map's own metadata differs from the schema ("
                + "; ".join(differences)
                + "); the table map's is used",
            )
        return tuple(completed)


def known_fields(
    col: ColumnDef,
    info: ColumnInfo,
    numeric: frozenset[int],
    character: frozenset[int],
    primary: bool,
) -> dict[str, object]:
    """What the definition says of the fields a table map's optional metadata may carry."""
    known: dict[str, object] = {
        "name": col.name,
        "visible": not col.invisible,
        "primary_key": primary,
    }
    if info.binlog_type in numeric:
        known["unsigned"] = col.unsigned or col.type == "year"  # YEAR is kept unsigned
    collation = collation_of(col)
    if info.type in character or info.type in ENUM_SET_TYPES:
        known["charset"] = collation
    if info.type == CT.ENUM:
        known["enum_values"] = _members(col, collation)
    elif info.type == CT.SET:
        known["set_values"] = _members(col, collation)
    elif info.type == CT.GEOMETRY:
        known["geometry_type"] = GEOMETRY_TYPES.get(col.type)
    return known


def collation_of(col: ColumnDef) -> int | None:
    if col.type in _BINARY_TYPES:
        return BINARY_COLLATION
    for name in (col.collation, col.charset):
        if name is not None and (found := collation_id(name)) is not None:
            return found
    return None


def _members(col: ColumnDef, collation: int | None) -> tuple[bytes, ...] | None:
    """ENUM/SET members as a FULL table map logs them: bytes in the column's charset."""
    if col.values is None:
        return None
    codec = None if collation is None else text_codec(collation)
    if codec is None:
        return tuple(value.encode() for value in col.values)
    return tuple(codec.encode(value) for value in col.values)
