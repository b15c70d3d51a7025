"""A parsed column definition → :class:`~binlogkit.schema.model.ColumnDef`, the server's way.

The server turns what was written into what it stores: synonyms into types,
``CHARACTER SET binary`` text into binary types, ``TEXT(M)`` into the smallest
text type that holds M characters, missing lengths and display widths into
defaults, the charset and collation into the resolved pair, and some
attributes into NOT NULL (SERIAL, AUTO_INCREMENT, system-versioning row start and
end, TIMESTAMP without explicit_defaults_for_timestamp).
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from binlogkit.binlog.constants import Flavor
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.schema import charsets, nodes
from binlogkit.schema.defaults import stored_default
from binlogkit.schema.model import ColumnDef
from binlogkit.schema.session import Session
from binlogkit.schema.types import BINARY_FORM, CHAR_TYPES, INT_WIDTHS, sized_type, text_family

_GEOMETRY_COLLECTION = {"geomcollection", "geometrycollection"}


@frozen_dataclass
class Built:
    """A column and what its definition says beyond it: part of the primary key."""

    column: ColumnDef
    primary: bool


def _constraint_kinds(node: exp.ColumnDef) -> list[exp.Expr]:
    return [c.args["kind"] for c in node.constraints if c.args.get("kind") is not None]


def _name_of(value: exp.Expr) -> str:
    return str(value.name)


def build_column(node: exp.ColumnDef, table_default: charsets.Charset, session: Session) -> Built:
    """The stored column for a definition in a table whose default pair is ``table_default``."""
    kind = node.args["kind"]
    assert isinstance(kind, nodes.ColumnType)
    attrs = _constraint_kinds(node)
    type_name: str = kind.this
    charset = collation = None
    binary = False
    nullable = None  # None: not said
    primary = invisible = compressed = False
    not_null = auto = bool(kind.arg("serial"))
    generated = default = None
    for attr in attrs:
        if isinstance(attr, exp.CharacterSetColumnConstraint):
            charset = charsets.charset_name(_name_of(attr.this))
        elif isinstance(attr, exp.CollateColumnConstraint):
            collation = charsets.collation_name(_name_of(attr.this))
        elif isinstance(attr, exp.BinaryColumnConstraint):
            binary = True
        elif isinstance(attr, exp.NotNullColumnConstraint):
            nullable = bool(attr.args.get("allow_null"))
        elif isinstance(attr, exp.PrimaryKeyColumnConstraint):
            primary = True
        elif isinstance(attr, exp.InvisibleColumnConstraint):
            invisible = True
        elif isinstance(attr, exp.CompressColumnConstraint):
            compressed = True
        elif isinstance(attr, nodes.SerialDefaultValue):
            not_null = auto = True
        elif isinstance(attr, exp.DefaultColumnConstraint):
            default = attr.this
        elif isinstance(attr, exp.ComputedColumnConstraint):
            generated = "STORED" if attr.args.get("persisted") else "VIRTUAL"
        elif isinstance(attr, exp.GeneratedAsRowColumnConstraint):
            generated, not_null = "STORED", True
        elif isinstance(attr, exp.AutoIncrementColumnConstraint):
            not_null = auto = True
    if kind.arg("national") and charset is None:
        charset = "utf8mb3"
    column = ColumnDef(
        name=node.name,
        type=type_name,
        unsigned=bool(kind.arg("unsigned")) or bool(kind.arg("serial")),
        zerofill=bool(kind.arg("zerofill")),
        invisible=invisible,
        generated=generated,
        compressed=compressed,
    )
    if type_name == "json" and session.flavor is Flavor.MARIADB:
        column = replace(column, type="longtext", charset="utf8mb4", collation="utf8mb4_bin")
    elif type_name in CHAR_TYPES:
        pair = charsets.resolve(
            charset, collation, table_default, session.default_collation, binary=binary
        )
        column = _text_column(column, kind, pair)
    else:
        column = _other_column(column, kind, session)
    if not_null:
        nullable = False
    elif nullable is None:
        nullable = type_name != "timestamp" or session.explicit_defaults_for_timestamp
    column = replace(column, nullable=nullable)
    default = stored_default(default, column, auto)
    return Built(replace(column, default=default, auto_increment=auto), primary)


def _text_column(column: ColumnDef, kind: nodes.ColumnType, pair: charsets.Charset) -> ColumnDef:
    type_name = column.type
    length = kind.arg("length")
    family = text_family(type_name)
    if family is not None:
        if length is not None:
            width = 1 if pair.charset == charsets.BINARY else charsets.max_char_length(pair.charset)
            type_name = sized_type(family, length * width)
        length = None
    elif type_name == "char" and length is None:
        length = 1
    values = kind.arg("values")
    if pair.charset == charsets.BINARY and type_name in BINARY_FORM:
        return replace(column, type=BINARY_FORM[type_name], length=length)
    return replace(
        column,
        type=type_name,
        length=length,
        charset=pair.charset,
        collation=pair.collation,
        values=tuple(values) if values is not None else None,
    )


def _other_column(column: ColumnDef, kind: nodes.ColumnType, session: Session) -> ColumnDef:
    type_name = column.type
    length = kind.arg("length")
    if type_name in INT_WIDTHS:
        return replace(column, length=_int_width(column, kind, session))
    if type_name in ("float", "double"):
        bits = kind.arg("float_bits")
        if bits is not None and bits > 24:
            type_name = "double"
        return replace(
            column, type=type_name, precision=kind.arg("precision"), scale=kind.arg("scale")
        )
    if type_name == "decimal":
        return replace(column, precision=kind.arg("precision"), scale=kind.arg("scale"))
    if type_name in ("time", "datetime", "timestamp"):
        return replace(column, fsp=kind.arg("fsp"))
    if type_name in ("bit", "binary") and length is None:
        length = 1
    elif type_name == "year":
        length = None if session.mysql_8019 else (length or 4)
    elif type_name in _GEOMETRY_COLLECTION:
        mysql8 = session.flavor is Flavor.MYSQL and (session.version or (99, 0, 0)) >= (8, 0, 0)
        type_name = "geomcollection" if mysql8 else "geometrycollection"
    elif text_family(type_name) == "blob" and length is not None:
        return replace(column, type=sized_type("blob", length))
    return replace(column, type=type_name, length=length)


def _int_width(column: ColumnDef, kind: nodes.ColumnType, session: Session) -> int | None:
    declared = kind.arg("length")
    if kind.arg("boolean"):
        declared = 1
    default = INT_WIDTHS[column.type][1 if column.unsigned else 0]
    if session.mysql_8019:
        if column.zerofill:
            return declared or default
        return 1 if column.type == "tinyint" and declared == 1 else None
    return declared or default
