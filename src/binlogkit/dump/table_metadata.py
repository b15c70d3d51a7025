"""``--print-table-metadata``: the table map's columns and primary key as the tools print them.

After a table map's ``Table_map:`` line, MySQL 8's ``mysqlbinlog`` and
``mariadb-binlog`` (10.5+) print two comments built from the column types,
their metadata and the optional metadata (``binlog_row_metadata``)::

    # Columns(`id` INT NOT NULL,
    #         `name` VARCHAR(20) CHARSET utf8mb4 COLLATE utf8mb4_general_ci)
    # Primary Key(id)

The walk follows the tools' ``Table_map_log_event::print_columns``: it reads
the metadata block byte by byte as they do (a type they do not name takes no
metadata and prints ``INVALID_TYPE(n)`` with no separator after it), consumes
one signedness bit per numeric column and one charset per character column by
each flavour's own rules, and prints what the optional metadata lacks as
nothing. The differences between the flavours: MySQL counts YEAR among the
signed types (its bit is never printed), names GEOMETRYCOLLECTION
``GEOMCOLLECTION``, separates ENUM/SET values with ", " (MariaDB ","), prints
``INVISIBLE`` columns and the generated invisible primary key (``my_row_id``),
and knows JSON, BOOLEAN and VECTOR; MariaDB gives GEOMETRY columns a charset.

These are the tools' readings, kept here on purpose and apart from the
decoder's (:func:`binlogkit.binlog.events.table_map.metadata_rules`, which
follow what each server writes): ``mariadb-binlog`` reads no bit for YEAR
although MariaDB writes one, and the dump prints what the tool prints.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from binlogkit.binlog import utf8
from binlogkit.binlog.constants import ColumnType, Flavor, TableMapFlag
from binlogkit.binlog.events.table_map import OptionalMetadata, TableMapEvent
from binlogkit.binlog.info import PRETTY_PRINT_ESCAPES
from binlogkit.binlog.rows.charsets import (
    BINARY_COLLATION,
    charset_name,
    collation_name,
    max_char_length,
)

if TYPE_CHECKING:
    from binlogkit.dump.dumper import Dumper

__all__ = ["print_table_metadata", "table_metadata_text"]

T = ColumnType

_SIGNED_TYPES: dict[Flavor, frozenset[int]] = {
    Flavor.MYSQL: frozenset(
        {T.TINY, T.SHORT, T.INT24, T.LONG, T.LONGLONG, T.YEAR, T.FLOAT, T.DOUBLE}
        | {T.DECIMAL, T.NEWDECIMAL}
    ),
    Flavor.MARIADB: frozenset(
        {T.TINY, T.SHORT, T.INT24, T.LONG, T.LONGLONG, T.NEWDECIMAL, T.FLOAT, T.DOUBLE}
    ),
}
"""Types that take a SIGNEDNESS bit when printed (MySQL's has_signedess_information_type)."""

_CHARACTER_TYPES: dict[Flavor, frozenset[int]] = {
    Flavor.MYSQL: frozenset({T.STRING, T.VAR_STRING, T.VARCHAR, T.BLOB, T.VECTOR}),
    Flavor.MARIADB: frozenset({T.STRING, T.VAR_STRING, T.VARCHAR, T.BLOB, T.GEOMETRY}),
}
_ENUM_SET = frozenset({T.ENUM, T.SET})

_BLOB_SIZES = ("TINY", "", "MEDIUM", "LONG")
_GEOMETRY_NAMES = (
    "GEOMETRY",
    "POINT",
    "LINESTRING",
    "POLYGON",
    "MULTIPOINT",
    "MULTILINESTRING",
    "MULTIPOLYGON",
)
_GEOMETRY_COLLECTION = {Flavor.MYSQL: "GEOMCOLLECTION", Flavor.MARIADB: "GEOMETRYCOLLECTION"}
_SIMPLE_NAMES: dict[int, str] = {
    T.LONG: "INT",
    T.TINY: "TINYINT",
    T.SHORT: "SMALLINT",
    T.INT24: "MEDIUMINT",
    T.LONGLONG: "BIGINT",
    T.NEWDATE: "DATE",
    T.DATE: "DATE",
    T.YEAR: "YEAR",
}
_TEMPORAL_NAMES: dict[int, str] = {
    T.TIMESTAMP2: "TIMESTAMP",
    T.DATETIME2: "DATETIME",
    T.TIME2: "TIME",
}
_IDENTIFIER_ESCAPES = {**PRETTY_PRINT_ESCAPES, ord("`"): "``"}


def _quoted(text: str, identifier: bool, mysql: bool) -> str:
    """The tools' pretty_print_str / pretty_print_identifier (only MySQL's doubles a backtick)."""
    if identifier:
        return f"`{text.translate(_IDENTIFIER_ESCAPES if mysql else PRETTY_PRINT_ESCAPES)}`"
    return f"'{text.translate(PRETTY_PRINT_ESCAPES)}'"


def _charsets(
    default: tuple[int, tuple[tuple[int, int], ...]] | None, per_column: Sequence[int] | None
) -> Iterator[int | None]:
    """The collation of each next column of a kind (the tools' Charset_iterator)."""
    if default is not None and default[0]:
        collation, exceptions = default
        pending = list(exceptions)
        index = 0
        while True:
            if pending and pending[0][0] == index:
                yield pending.pop(0)[1]
            else:
                yield collation
            index += 1
    yield from per_column or ()
    while True:
        yield None


class _Meta:
    """The table map's metadata block, read as the tools read it (zeros past its end)."""

    def __init__(self, data: bytes | None) -> None:
        self.data = data or b""
        self.at = 0

    def peek(self) -> int:
        return self.data[self.at] if self.at < len(self.data) else 0

    def take(self, n: int) -> bytes:
        chunk = self.data[self.at : self.at + n].ljust(n, b"\0")
        self.at += n
        return chunk


def _type_name(
    typ: int, meta: _Meta, collation: int | None, extra: int, flavor: Flavor
) -> str | None:
    """The column type as get_type_name prints it; None for a type it does not name."""
    text = collation is not None and collation != BINARY_COLLATION
    mysql = flavor is Flavor.MYSQL
    name = _SIMPLE_NAMES.get(typ)
    if name is not None:
        return name
    if typ == T.NEWDECIMAL:
        precision, scale = meta.take(2)
        return f"DECIMAL({precision},{scale})"
    if typ in (T.FLOAT, T.DOUBLE):
        meta.take(1)
        return "FLOAT" if typ == T.FLOAT else "DOUBLE"
    if typ == T.BIT:
        bits, octets = meta.take(2)
        return f"BIT({bits + octets * 8})"
    if typ in (T.TIMESTAMP2, T.DATETIME2, T.TIME2):
        fsp = meta.take(1)[0]
        base = _TEMPORAL_NAMES[typ]
        return f"{base}({fsp})" if fsp else base
    if typ in _ENUM_SET:
        meta.take(2)
        return "ENUM" if typ == T.ENUM else "SET"
    if typ == T.BLOB:
        size = meta.take(1)[0]
        kind = "TEXT" if text else "BLOB"
        return f"{_BLOB_SIZES[size - 1]}{kind}" if 1 <= size <= 4 else f"INVALID_{kind}({size})"
    if typ in (T.VARCHAR, T.VAR_STRING):
        length = int.from_bytes(meta.take(2), "little")
        if text:
            assert collation is not None
            return f"VARCHAR({length // max_char_length(collation)})"
        return f"VARBINARY({length})"
    if typ == T.STRING:
        byte0, byte1 = meta.take(2)
        length = (((byte0 & 0x30) ^ 0x30) << 4) | byte1
        if text:
            assert collation is not None
            return f"CHAR({length // max_char_length(collation)})"
        return f"BINARY({length})"
    if typ == T.GEOMETRY:
        meta.take(1)
        if extra < len(_GEOMETRY_NAMES):
            return _GEOMETRY_NAMES[extra]
        return _GEOMETRY_COLLECTION[flavor] if extra == 7 else f"INVALID_GEOMETRY_TYPE({extra})"
    if mysql and typ == T.JSON:
        meta.take(1)
        return "JSON"
    if mysql and typ == T.BOOL:
        return "BOOLEAN"
    if mysql and typ == T.VECTOR:
        meta.take(1)
        return f"VECTOR({extra})"
    return None


def _columns(event: TableMapEvent, fields: OptionalMetadata, flavor: Flavor) -> str:
    mysql = flavor is Flavor.MYSQL
    gipk = mysql and bool(event.flags & TableMapFlag.GENERATED_INVISIBLE_PK)
    signed_types = _SIGNED_TYPES[flavor]
    character_types = _CHARACTER_TYPES[flavor]
    charsets = _charsets(fields.default_charset, fields.column_charsets)
    enum_set_charsets = _charsets(fields.enum_set_default_charset, fields.enum_set_column_charsets)
    names = iter(fields.column_names or ())
    signedness = iter(fields.signedness or ())
    visibility = iter((fields.column_visibility or ()) if mysql else ())
    enum_values = iter(fields.enum_values or ())
    set_values = iter(fields.set_values or ())
    geometry_types = iter(fields.geometry_types or ())
    vector_dimensions = iter(fields.vector_dimensions or ())
    nulls = event.null_bitmap
    meta = _Meta(event.metadata)
    last = len(event.column_types) - 1
    out = ["# Columns("]
    for i, typ in enumerate(event.column_types):
        if typ == T.STRING and meta.peek() in _ENUM_SET:
            typ = meta.peek()
        collation = None
        if typ in character_types:
            collation = next(charsets)
        elif typ in _ENUM_SET:
            collation = next(enum_set_charsets)
        if collation is not None and collation_name(collation, mysql=mysql) is None:
            collation = None  # the tools' get_charset() knows no such id
        name = next(names, None)
        if name is not None:
            out.append(_quoted(name, True, mysql) + " ")
        elif i == 0 and gipk:
            out.append("`my_row_id` ")
        extra = 0
        if typ == T.GEOMETRY:
            extra = next(geometry_types, 0)
        elif typ == T.VECTOR:
            extra = next(vector_dimensions, 0)
        type_name = _type_name(typ, meta, collation, extra, flavor)
        if type_name is None:
            out.append(f"INVALID_TYPE({typ})")
            continue
        out.append(type_name)
        unsigned = next(signedness, None) if typ in signed_types else None
        if unsigned is not None:
            if unsigned and typ != T.YEAR:
                out.append(" UNSIGNED")
        elif i == 0 and gipk:
            out.append(" UNSIGNED")
        if (nulls and not nulls[i >> 3] >> (i & 7) & 1) or (i == 0 and gipk):
            out.append(" NOT NULL")
        values = None
        if typ == T.ENUM:
            values = next(enum_values, None)
        elif typ == T.SET:
            values = next(set_values, None)
        if values is not None:
            separator = ", " if mysql else ","
            out.append(
                "(" + separator.join(_quoted(utf8.decode(v), False, mysql) for v in values) + ")"
            )
        if collation is not None and (typ in _ENUM_SET or collation != BINARY_COLLATION):
            named = collation_name(collation, mysql=mysql)
            out.append(f" CHARSET {charset_name(collation)} COLLATE {named}")
        visible = next(visibility, None)
        if visible is False or (visible is None and i == 0 and gipk):
            out.append(" INVISIBLE")
        if i == 0 and gipk:
            out.append(" AUTO_INCREMENT")
        if i != last:
            out.append(",\n#         ")
    out.append(")\n")
    return "".join(out)


def _primary_key(event: TableMapEvent, fields: OptionalMetadata, flavor: Flavor) -> str:
    if flavor is Flavor.MYSQL and event.flags & TableMapFlag.GENERATED_INVISIBLE_PK:
        return "# Primary Key(my_row_id)\n"
    parts = fields.primary_key
    if not parts:
        return ""
    names = fields.column_names or ()
    shown = []
    for index, prefix in parts:
        text = names[index] if index < len(names) else str(index)
        shown.append(f"{text}({prefix})" if prefix else text)
    return f"# Primary Key({', '.join(shown)})\n"


def table_metadata_text(event: TableMapEvent, flavor: Flavor) -> str:
    """The ``# Columns(...)`` and ``# Primary Key(...)`` comments of one table map."""
    fields = event.metadata_fields
    return _columns(event, fields, flavor) + _primary_key(event, fields, flavor)


def print_table_metadata(d: Dumper, event: TableMapEvent) -> None:
    """Add the comments after the table map's header line (not in ``--short-form``).

    mariadb-binlog prints them in short form too when ``--print-row-count`` is
    given explicitly (its short form turns the default off); that case is not followed.
    """
    if not d.options.short_form:
        d.state.head.append(table_metadata_text(event, d.flavor))
