"""Whole table definitions: CREATE TABLE's columns and keys, and MariaDB's sequence tables."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from sqlglot import exp

from binlogkit.schema import charsets
from binlogkit.schema.columns import build_column
from binlogkit.schema.defaults import implicit_timestamps
from binlogkit.schema.model import ColumnDef, TableDef, TableName, fold_column
from binlogkit.schema.session import Session
from binlogkit.schema.state import CannotApply


def key_columns(
    columns: Sequence[ColumnDef], names: Iterable[str], table: TableName
) -> tuple[str, ...]:
    """Key column names as the columns spell them; an error for a name that is no column."""
    spelled = {fold_column(c.name): c.name for c in columns}
    out = []
    for name in names:
        column = spelled.get(fold_column(name))
        if column is None:
            raise CannotApply(f"key column {name} is not a column of {table}", table)
        out.append(column)
    return tuple(out)


def finish(table: TableDef) -> TableDef:
    """Primary key columns are NOT NULL; duplicate column names are an error."""
    names = [fold_column(c.name) for c in table.columns]
    if len(set(names)) != len(names):
        raise CannotApply(f"duplicate column name in {table.table_name}", table.table_name)
    key = {fold_column(name) for name in table.primary_key}
    columns = tuple(
        replace(c, nullable=False) if c.nullable and fold_column(c.name) in key else c
        for c in table.columns
    )
    return replace(table, columns=columns)


def _system_column(name: str) -> ColumnDef:
    return ColumnDef(name, "timestamp", fsp=6, nullable=False, invisible=True, generated="STORED")


SYSTEM_COLUMNS = (_system_column("row_start"), _system_column("row_end"))
"""The columns MariaDB adds to a table WITH SYSTEM VERSIONING that names none of its own.

information_schema does not show them, but they are stored, and binlog table
maps and row images carry them.
"""


def with_versioning(columns: Sequence[ColumnDef], on: bool) -> tuple[ColumnDef, ...]:
    """Columns with MariaDB's implicit row start/end columns added (``on``) or removed."""
    kept = tuple(c for c in columns if c not in SYSTEM_COLUMNS)
    return kept + SYSTEM_COLUMNS if on else kept


def _has_row_columns(definitions: Sequence[exp.ColumnDef]) -> bool:
    return any(
        isinstance(c.args.get("kind"), exp.GeneratedAsRowColumnConstraint)
        for definition in definitions
        for c in definition.constraints
    )


def build_table(
    name: TableName,
    definitions: Sequence[exp.ColumnDef],
    primary_key: Sequence[str] | None,
    default: charsets.Charset,
    session: Session,
    *,
    versioning: bool = False,
) -> TableDef:
    """The table a CREATE TABLE defines, its default pair already resolved."""
    columns: list[ColumnDef] = []
    key = list(primary_key or ())
    for definition in definitions:
        built = build_column(definition, default, session)
        if built.primary:
            key = [built.column.name]
        columns.append(built.column)
    if versioning and not _has_row_columns(definitions):
        columns += SYSTEM_COLUMNS
    if not session.explicit_defaults_for_timestamp:
        columns = implicit_timestamps(columns)
    table = TableDef(
        name.db,
        name.name,
        tuple(columns),
        key_columns(columns, key, name),
        default.charset,
        default.collation,
    )
    return finish(table)


def _bigint(name: str, unsigned: bool = False) -> ColumnDef:
    return ColumnDef(name, "bigint", length=21, unsigned=unsigned, nullable=False)


SEQUENCE_COLUMNS = (
    _bigint("next_not_cached_value"),
    _bigint("minimum_value"),
    _bigint("maximum_value"),
    _bigint("start_value"),
    _bigint("increment"),
    _bigint("cache_size", unsigned=True),
    ColumnDef("cycle_option", "tinyint", length=1, unsigned=True, nullable=False),
    _bigint("cycle_count"),
)
"""The columns of every MariaDB sequence (10.3-11.4; sql/sql_sequence.cc)."""


def sequence_table(name: TableName, default: charsets.Charset) -> TableDef:
    return TableDef(name.db, name.name, SEQUENCE_COLUMNS, (), default.charset, default.collation)
