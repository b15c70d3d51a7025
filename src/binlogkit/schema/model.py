"""The schema model: columns, tables and databases as the server knows them, immutable.

A :class:`Catalog` holds databases and their tables. Every update returns a
new catalog that shares all untouched parts with the old one: a database's
table map is copied only when one of its tables changes, so a history can keep
a catalog per DDL statement cheaply.

Names follow the server's rules: column names compare case-insensitively;
database and table names compare as ``lower_case_table_names`` says (0:
case-sensitive, the default on Linux; 1: stored and compared in lower case;
2: stored as given, compared in lower case).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import field, replace
from types import MappingProxyType
from typing import Any, NamedTuple, TypeVar

from binlogkit.binlog.frozen import frozen_dataclass

V = TypeVar("V")


def fold_column(name: str) -> str:
    """The form column names compare in: each character upper-cased on its own.

    MySQL compares identifiers with the simple (one-to-one) case mapping of
    its system charset; ``str.upper`` alone would turn ``ß`` into ``SS``.
    """
    return "".join(up if len(up := ch.upper()) == 1 else ch for ch in name)


class TableName(NamedTuple):
    """A table's database and name."""

    db: str
    name: str

    def __str__(self) -> str:
        return f"{self.db}.{self.name}"


@frozen_dataclass
class ColumnDef:
    """One column as the server stores its definition.

    - ``type``: the lower-case type name as information_schema's DATA_TYPE
      gives it (``int``, ``varchar``, ``mediumblob``, ``enum``, ``json``,
      ``point``, MariaDB's ``uuid``/``inet4``/``inet6``/``vector`` ...).
      Synonyms are resolved (``INTEGER`` is ``int``, ``BOOL`` is ``tinyint``
      of length 1, ``CHAR(5) CHARACTER SET binary`` is ``binary``); MariaDB's
      JSON is ``longtext`` with ``utf8mb4_bin``, as MariaDB stores it.
    - ``length``: characters of char/varchar (and of text/enum/set: None),
      bytes of binary/varbinary, bits of bit, digits of year, dimensions of
      vector, the display width of integer types (None where the server keeps
      none, as MySQL from 8.0.19 for most).
    - ``precision``/``scale``: of decimal (always set), float and double (as
      declared, else None).
    - ``fsp``: fractional-second digits of time, datetime and timestamp.
    - ``charset``/``collation``: resolved (column, else table, else database,
      else server); None for columns that hold no text.
    - ``values``: the members of an enum or set, unquoted, escapes resolved.
    - ``generated``: None, ``"VIRTUAL"`` or ``"STORED"`` (MariaDB's PERSISTENT).
    - ``default``: the DEFAULT as MariaDB's information_schema.COLUMNS.COLUMN_DEFAULT
      shows it (:mod:`binlogkit.schema.defaults`): a literal converted to the column's
      type (``"5"``, ``"1.50"``, ``"'a''b'"``, ``"b'101'"``) or an expression
      (``"current_timestamp(3)"``, ``"uuid()"``); None for NULL (a nullable column) and
      for none (a NOT NULL column without DEFAULT, AUTO_INCREMENT, generated columns).
    - ``auto_increment``: AUTO_INCREMENT (also SERIAL).
    - ``compressed``: MariaDB's COMPRESSED (VARCHAR, VARBINARY, TEXT and BLOB types).
    """

    name: str
    type: str
    length: int | None = None
    precision: int | None = None
    scale: int | None = None
    fsp: int | None = None
    unsigned: bool = False
    zerofill: bool = False
    charset: str | None = None
    collation: str | None = None
    values: tuple[str, ...] | None = None
    nullable: bool = True
    invisible: bool = False
    generated: str | None = None
    default: str | None = None
    auto_increment: bool = False
    compressed: bool = False


@frozen_dataclass
class TableDef:
    """A table: its columns in order, primary key column names in key order, defaults.

    ``primary_key`` is the PRIMARY KEY as information_schema shows it: empty for
    a table without one, even where the servers' table maps log the first UNIQUE
    NOT NULL key instead, and without the ``row_end`` MariaDB appends to the key
    of a system-versioned table.
    """

    db: str
    name: str
    columns: tuple[ColumnDef, ...]
    primary_key: tuple[str, ...] = ()
    charset: str | None = None
    collation: str | None = None

    @property
    def table_name(self) -> TableName:
        return TableName(self.db, self.name)

    def column(self, name: str) -> ColumnDef | None:
        """The column of that name (compared case-insensitively), if any."""
        index = self.column_index(name)
        return None if index is None else self.columns[index]

    def column_index(self, name: str) -> int | None:
        folded = fold_column(name)
        for i, col in enumerate(self.columns):
            if fold_column(col.name) == folded:
                return i
        return None


@frozen_dataclass
class DatabaseDef:
    """A database and its default charset and collation (None: not known)."""

    name: str
    charset: str | None = None
    collation: str | None = None


@frozen_dataclass
class _Schema:
    """One database with its tables, keyed by folded name; unknown tables by folded name."""

    db: DatabaseDef
    tables: Mapping[str, TableDef] = field(default_factory=lambda: MappingProxyType({}))
    unknown: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


def _frozen(mapping: dict[str, V]) -> Mapping[str, V]:
    return MappingProxyType(mapping)


@frozen_dataclass
class Catalog:
    """Databases and tables at one point of a binlog, immutable.

    ``unknown`` tables exist but their columns are not known (a statement
    that could not be read touched them, or they were never seen created);
    :meth:`table` gives None for them and :meth:`is_unknown` True.
    """

    lower_case_table_names: int = 0
    _schemas: Mapping[str, _Schema] = field(
        default_factory=lambda: MappingProxyType({}), repr=False
    )

    # --- names ---------------------------------------------------------------------------

    def fold(self, name: str) -> str:
        """The form database and table names compare in."""
        return name if self.lower_case_table_names == 0 else name.lower()

    def stored(self, name: str) -> str:
        """The form a new database or table name is stored in (lower case for setting 1)."""
        return name.lower() if self.lower_case_table_names == 1 else name

    # --- reading -------------------------------------------------------------------------

    def database(self, name: str) -> DatabaseDef | None:
        schema = self._schemas.get(self.fold(name))
        return None if schema is None else schema.db

    def databases(self) -> Iterator[DatabaseDef]:
        return (schema.db for schema in self._schemas.values())

    def table(self, db: str, name: str) -> TableDef | None:
        schema = self._schemas.get(self.fold(db))
        return None if schema is None else schema.tables.get(self.fold(name))

    def tables(self, db: str | None = None) -> Iterator[TableDef]:
        """Every known table (of one database, or of all)."""
        if db is not None:
            schema = self._schemas.get(self.fold(db))
            return iter(() if schema is None else schema.tables.values())
        return (t for schema in self._schemas.values() for t in schema.tables.values())

    def is_unknown(self, db: str, name: str) -> bool:
        schema = self._schemas.get(self.fold(db))
        return schema is not None and self.fold(name) in schema.unknown

    def unknown_tables(self) -> Iterator[TableName]:
        return (
            TableName(schema.db.name, name)
            for schema in self._schemas.values()
            for name in schema.unknown.values()
        )

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as plain dicts (the read-only views of the mappings do not pickle)."""
        schemas = {key: (s.db, dict(s.tables), dict(s.unknown)) for key, s in self._schemas.items()}
        return _unpickle_catalog, (self.lower_case_table_names, schemas)

    # --- updating (each returns a new catalog) -------------------------------------------

    def with_database(self, db: DatabaseDef) -> Catalog:
        """Add a database or replace its defaults, keeping its tables."""
        key = self.fold(db.name)
        old = self._schemas.get(key)
        schema = _Schema(db) if old is None else replace(old, db=replace(db, name=old.db.name))
        return self._with_schema(key, schema)

    def without_database(self, name: str) -> Catalog:
        """Drop a database with all its tables."""
        schemas = dict(self._schemas)
        schemas.pop(self.fold(name), None)
        return replace(self, _schemas=_frozen(schemas))

    def with_table(self, table: TableDef) -> Catalog:
        """Add or replace a table (known again if it was unknown)."""
        key, schema = self._schema_for(table.db)
        name = self.fold(table.name)
        tables = dict(schema.tables)
        tables[name] = table
        unknown = dict(schema.unknown)
        unknown.pop(name, None)
        return self._with_schema(
            key, replace(schema, tables=_frozen(tables), unknown=_frozen(unknown))
        )

    def without_table(self, db: str, name: str) -> Catalog:
        """Forget a table, known or unknown."""
        key = self.fold(db)
        schema = self._schemas.get(key)
        folded = self.fold(name)
        if schema is None or (folded not in schema.tables and folded not in schema.unknown):
            return self
        tables = dict(schema.tables)
        tables.pop(folded, None)
        unknown = dict(schema.unknown)
        unknown.pop(folded, None)
        return self._with_schema(
            key, replace(schema, tables=_frozen(tables), unknown=_frozen(unknown))
        )

    def with_unknown(self, db: str, name: str) -> Catalog:
        """Mark a table as existing with columns not known."""
        key, schema = self._schema_for(db)
        folded = self.fold(name)
        tables = dict(schema.tables)
        tables.pop(folded, None)
        unknown = dict(schema.unknown)
        unknown[folded] = self.stored(name)
        return self._with_schema(
            key, replace(schema, tables=_frozen(tables), unknown=_frozen(unknown))
        )

    def _schema_for(self, db: str) -> tuple[str, _Schema]:
        key = self.fold(db)
        schema = self._schemas.get(key)
        return key, schema if schema is not None else _Schema(DatabaseDef(self.stored(db)))

    def _with_schema(self, key: str, schema: _Schema) -> Catalog:
        schemas = dict(self._schemas)
        schemas[key] = schema
        return replace(self, _schemas=_frozen(schemas))


def _unpickle_catalog(
    lower_case_table_names: int,
    schemas: dict[str, tuple[DatabaseDef, dict[str, TableDef], dict[str, str]]],
) -> Catalog:
    frozen = {
        key: _Schema(db, _frozen(tables), _frozen(unknown))
        for key, (db, tables, unknown) in schemas.items()
    }
    return Catalog(lower_case_table_names, _frozen(frozen))
