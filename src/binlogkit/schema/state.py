"""The working state while one statement is applied: the catalog so far and what changed."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sqlglot import exp

from binlogkit.schema import charsets
from binlogkit.schema.model import Catalog, TableDef, TableName
from binlogkit.schema.result import Action, TableChange
from binlogkit.schema.session import Session


class CannotApply(Exception):
    """A statement that was read but does not fit the catalog (or says what cannot be known).

    ``tables`` are marked unknown.
    """

    def __init__(self, reason: str, *tables: TableName) -> None:
        super().__init__(reason)
        self.reason = reason
        self.tables = tables


@dataclass
class Context:
    catalog: Catalog
    session: Session
    changes: list[TableChange] = field(default_factory=list)
    databases: list[str] = field(default_factory=list)

    def name(self, table: exp.Table) -> TableName:
        """A statement's table name, qualified with the default database when it is not."""
        db = table.db or self.session.default_db
        if not db:
            raise CannotApply(f"no database selected for table {table.name}")
        return TableName(db, table.name)

    def lookup(self, name: TableName) -> TableDef | None:
        return self.catalog.table(*name)

    def exists(self, name: TableName) -> bool:
        return self.lookup(name) is not None or self.catalog.is_unknown(*name)

    def database_default(self, db: str) -> charsets.Charset:
        """A database's default pair, the server's when the database or its charset is not known."""
        database = self.catalog.database(db)
        if database is None or database.charset is None or database.collation is None:
            return self.session.server_default
        return charsets.Charset(database.charset, database.collation)

    def put(self, table: TableDef, action: Action, old_name: TableName | None = None) -> None:
        stored = replace(
            table, db=self.catalog.stored(table.db), name=self.catalog.stored(table.name)
        )
        if old_name is not None:
            self.catalog = self.catalog.without_table(*old_name)
        self.catalog = self.catalog.with_table(stored)
        self.changes.append(TableChange(action, stored.table_name, stored, old_name))

    def drop(self, name: TableName) -> None:
        if self.exists(name):
            self.catalog = self.catalog.without_table(*name)
            self.changes.append(TableChange(Action.DROPPED, name))

    def truncate(self, name: TableName, partitions: tuple[str, ...] | None = None) -> None:
        """Note that a table's rows (of ``partitions``, None: all) were removed; a table the
        catalog does not know is left out (nothing can mirror it)."""
        table = self.lookup(name)
        if table is not None:
            change = TableChange(Action.TRUNCATED, table.table_name, table, None, partitions)
            self.changes.append(change)

    def mark_unknown(self, name: TableName, old_name: TableName | None = None) -> None:
        if old_name is not None:
            self.catalog = self.catalog.without_table(*old_name)
        self.catalog = self.catalog.with_unknown(*name)
        self.changes.append(TableChange(Action.UNKNOWN, name, None, old_name))
