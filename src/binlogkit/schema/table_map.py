"""A table definition as the columns of a table map with full metadata.

:func:`column_infos` gives, for a :class:`~binlogkit.schema.model.TableDef`,
the :class:`~binlogkit.binlog.rows.columns.ColumnInfo` tuple a MariaDB (or
MySQL 8) server writes into a TABLE_MAP event with
``binlog_row_metadata=FULL``: the type codes and binary metadata of each
column, then its name, signedness, charset, ENUM/SET members, geometry type,
visibility and primary key. It lets a table be typed without a table map (a
snapshot read through SQL, changes typed after the binlog was decoded).
"""

from __future__ import annotations

from dataclasses import replace

from binlogkit.binlog.constants import ColumnType as CT
from binlogkit.binlog.constants import Flavor
from binlogkit.binlog.events.table_map import MARIADB_RULES, MetadataRules
from binlogkit.binlog.rows.charsets import max_char_length
from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.errors import BinlogError
from binlogkit.schema.completion import GEOMETRY_TYPES, collation_of, known_fields
from binlogkit.schema.model import ColumnDef, TableDef

__all__ = ["column_infos"]

Layout = tuple[int, int, int]
"""A column's table-map type code, real (row layout) type code and metadata."""

_BLOB_SIZES = {
    "tinytext": 1,
    "tinyblob": 1,
    "text": 2,
    "blob": 2,
    "mediumtext": 3,
    "mediumblob": 3,
    "longtext": 4,
    "longblob": 4,
}
"""The length bytes of each TEXT/BLOB type (its metadata)."""


_FIXED: dict[str, Layout] = {
    "tinyint": (CT.TINY, CT.TINY, 0),
    "smallint": (CT.SHORT, CT.SHORT, 0),
    "mediumint": (CT.INT24, CT.INT24, 0),
    "int": (CT.LONG, CT.LONG, 0),
    "bigint": (CT.LONGLONG, CT.LONGLONG, 0),
    "float": (CT.FLOAT, CT.FLOAT, 4),
    "double": (CT.DOUBLE, CT.DOUBLE, 8),
    "year": (CT.YEAR, CT.YEAR, 0),
    "date": (CT.DATE, CT.DATE, 0),
    "json": (CT.JSON, CT.JSON, 4),
    "uuid": (CT.STRING, CT.STRING, CT.STRING << 8 | 16),
    "inet6": (CT.STRING, CT.STRING, CT.STRING << 8 | 16),
    "inet4": (CT.STRING, CT.STRING, CT.STRING << 8 | 4),
    **dict.fromkeys(GEOMETRY_TYPES, (CT.GEOMETRY, CT.GEOMETRY, 4)),
    **{name: (CT.BLOB, CT.BLOB, size) for name, size in _BLOB_SIZES.items()},
}
"""Types whose layout does not depend on the definition's sizes."""

_TEMPORAL = {"time": CT.TIME2, "datetime": CT.DATETIME2, "timestamp": CT.TIMESTAMP2}


def _char_bytes(col: ColumnDef, collation: int | None) -> int:
    """The most bytes a CHAR/VARCHAR value takes (characters times the charset's width)."""
    per_char = 1 if collation is None else max_char_length(collation)
    return (col.length or 0) * per_char


def _string_meta(real: int, length: int) -> int:
    """STRING metadata: the real type, with bits 8-9 of a length over 255 folded into it."""
    return (real ^ ((length & 0x300) >> 4)) << 8 | (length & 0xFF)


def _set_size(members: int) -> int:
    size = (members + 7) // 8
    return 8 if size > 4 else size


def _compressed(col: ColumnDef, collation: int | None) -> Layout | None:
    """MariaDB's COMPRESSED columns: their own type codes; a VARCHAR's byte length grows by
    one, for the header byte of the stored form."""
    if col.type in ("varchar", "varbinary"):
        length = _char_bytes(col, collation) + 1
        return CT.VARCHAR_COMPRESSED, CT.VARCHAR_COMPRESSED, length
    size = _BLOB_SIZES.get(col.type)
    return None if size is None else (CT.BLOB_COMPRESSED, CT.BLOB_COMPRESSED, size)


def _vector(col: ColumnDef, flavor: Flavor) -> Layout:
    """VECTOR(n): MySQL's own type (a 4-byte length); MariaDB's is a VARBINARY(4n)."""
    if flavor is Flavor.MYSQL:
        return CT.VECTOR, CT.VECTOR, 4
    return CT.VARCHAR, CT.VARCHAR, 4 * (col.length or 0)


def _sized(col: ColumnDef, collation: int | None) -> Layout | None:
    """The layout of the types whose metadata holds a size from the definition."""
    kind = col.type
    if kind in ("char", "binary"):
        return CT.STRING, CT.STRING, _string_meta(CT.STRING, _char_bytes(col, collation))
    if kind in ("varchar", "varbinary"):
        return CT.VARCHAR, CT.VARCHAR, _char_bytes(col, collation)
    if kind == "decimal":
        return CT.NEWDECIMAL, CT.NEWDECIMAL, (col.precision or 10) << 8 | (col.scale or 0)
    if kind == "bit":
        width = col.length or 1
        return CT.BIT, CT.BIT, (width // 8) << 8 | width % 8
    if kind in _TEMPORAL:
        code = _TEMPORAL[kind]
        return code, code, col.fsp or 0
    if kind == "enum":
        return CT.STRING, CT.ENUM, CT.ENUM << 8 | (1 if len(col.values or ()) < 256 else 2)
    if kind == "set":
        return CT.STRING, CT.SET, CT.SET << 8 | _set_size(len(col.values or ()))
    return None


def column_infos(
    definition: TableDef, rules: MetadataRules = MARIADB_RULES, flavor: Flavor = Flavor.MARIADB
) -> tuple[ColumnInfo, ...]:
    """The columns of ``definition`` as a FULL-metadata table map of a ``flavor`` server gives
    them (``rules``: which columns the server gives a sign and a charset; MariaDB's by
    default)."""
    primary = {definition.column_index(name) for name in definition.primary_key}
    infos = []
    for index, col in enumerate(definition.columns):
        collation = collation_of(col)
        if col.compressed:
            layout = _compressed(col, collation)
        elif col.type == "vector":
            layout = _vector(col, flavor)
        else:
            layout = _FIXED.get(col.type) or _sized(col, collation)
        if layout is None:
            raise BinlogError(
                f"column {col.name} of {definition.table_name}: no binlog layout known for "
                f"type {col.type}{' COMPRESSED' if col.compressed else ''}"
            )
        binlog_type, real, meta = layout
        info = ColumnInfo(index, real, binlog_type, meta, col.nullable)
        if binlog_type == CT.VECTOR:
            info = replace(info, vector_dimensions=col.length)
        fields = known_fields(col, info, rules.numeric, rules.character, index in primary)
        infos.append(replace(info, **fields))  # type: ignore[arg-type]
    return tuple(infos)
