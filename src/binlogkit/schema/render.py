"""Table definitions as CREATE TABLE statements (what ``binlogkit schema`` prints).

The statement says what the history knows of each column, resolved: type with
its length, precision, scale or fractional digits, signedness, character set
and collation, ENUM/SET members, MariaDB's COMPRESSED, nullability,
invisibility, and the primary key. Applying it
(:func:`~binlogkit.schema.ddl.apply_ddl`) gives the same definition back.
Defaults, comments, indexes and engine options are not tracked, so they are
not printed.
"""

from __future__ import annotations

from binlogkit.pipeline.sql import quote_name
from binlogkit.schema.model import ColumnDef, DatabaseDef, TableDef
from binlogkit.schema.types import BINARY_FORM

__all__ = ["column_sql", "create_database_sql", "create_table_sql"]

_TEXT_FREE = frozenset(BINARY_FORM.values())
"""Types that take no CHARACTER SET clause (their bytes are not text)."""


def create_database_sql(db: DatabaseDef) -> str:
    sql = f"CREATE DATABASE {quote_name(db.name)}"
    if db.charset is not None:
        sql += f" CHARACTER SET {db.charset}"
    if db.collation is not None:
        sql += f" COLLATE {db.collation}"
    return sql


def create_table_sql(table: TableDef) -> str:
    lines = [f"  {column_sql(col)}" for col in table.columns]
    if table.primary_key:
        lines.append(f"  PRIMARY KEY ({', '.join(quote_name(k) for k in table.primary_key)})")
    sql = f"CREATE TABLE {quote_name(table.db)}.{quote_name(table.name)} (\n"
    sql += ",\n".join(lines) + "\n)"
    if table.charset is not None:
        sql += f" DEFAULT CHARSET={table.charset}"
    if table.collation is not None:
        sql += f" COLLATE={table.collation}"
    return sql


def column_sql(col: ColumnDef) -> str:
    """A column definition as CREATE TABLE writes it (name, type, attributes)."""
    parts = [quote_name(col.name), _type(col)]
    if col.compressed:
        parts.append("COMPRESSED")
    if col.unsigned:
        parts.append("UNSIGNED")
    if col.zerofill:
        parts.append("ZEROFILL")
    if col.charset is not None and col.type not in _TEXT_FREE:
        parts.append(f"CHARACTER SET {col.charset}")
        if col.collation is not None:
            parts.append(f"COLLATE {col.collation}")
    if not col.nullable:
        parts.append("NOT NULL")
    elif col.type == "timestamp":
        parts.append("NULL")  # else NOT NULL where explicit_defaults_for_timestamp is off
    if col.default is not None:
        parts.append(f"DEFAULT {col.default}")
    if col.auto_increment:
        parts.append("AUTO_INCREMENT")
    if col.invisible:
        parts.append("INVISIBLE")
    return " ".join(parts)


def _type(col: ColumnDef) -> str:
    name = col.type.upper()
    if col.values is not None:
        members = ", ".join(_string(value) for value in col.values)
        return f"{name}({members})"
    if col.precision is not None:
        scale = "" if col.scale is None else f", {col.scale}"
        return f"{name}({col.precision}{scale})"
    if col.fsp:
        return f"{name}({col.fsp})"
    if col.length is not None:
        return f"{name}({col.length})"
    return name


def _string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"
