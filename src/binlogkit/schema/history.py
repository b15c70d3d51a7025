"""Schema history: every table's definition at every position of a binlog.

A :class:`SchemaHistory` is the decoder's
:class:`~binlogkit.binlog.tables.SchemaSource`: the decoder shows it each
QUERY event (and the GTID events before them) in binlog order, it applies the
DDL among them to its :class:`~binlogkit.schema.model.Catalog`, and for each
new table map it gives the definition in force
(:class:`~binlogkit.schema.completion.DefinedTable`), which completes the
columns that ``binlog_row_metadata=NO_LOG``/``MINIMAL`` leave out.

Never silent: a statement the parser cannot read, a table without a known
definition whose map lacks names, and a definition that does not fit its map
each give a :class:`SchemaWarning` (logged, and kept in :attr:`SchemaHistory.warnings`),
once per table and cause.

With a ``path``, each change is appended to a JSON-lines file as it happens
(:mod:`~binlogkit.schema.store`), so a later run can start at any position
with the definitions of that position (:meth:`SchemaHistory.load`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from binlogkit.binlog.constants import EventType
from binlogkit.binlog.events import Event, FormatDescriptionEvent
from binlogkit.binlog.events.query import QueryEvent
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.transactions import GTID_CODES
from binlogkit.schema.completion import DefinedTable
from binlogkit.schema.model import Catalog, TableName
from binlogkit.schema.store import HistoryStore, Position
from binlogkit.schema.words import plainly_not_ddl

log = logging.getLogger(__name__)

__all__ = ["SchemaHistory", "SchemaWarning"]

_STATEMENT_TYPES = frozenset({EventType.QUERY, EventType.MARIADB_QUERY_COMPRESSED})
"""The events that may hold DDL (MariaDB compresses them with log_bin_compress)."""


@frozen_dataclass
class SchemaWarning:
    """Something the schema history could not know, where, and what it did instead."""

    position: Position
    message: str

    def __str__(self) -> str:
        return f"{self.position}: {self.message}"


class SchemaHistory:
    """Table definitions along a binlog, for the decoder (a schema source).

    ``catalog`` is what is known where reading starts (empty by default: the
    binlog's own CREATE TABLEs define the tables from there on); ``path`` keeps
    the history in a file as it grows, and with ``at`` (where ``catalog`` holds,
    e.g. a server seed's position) the catalog is recorded there first.
    ``reread(catalog, names)`` gives the catalog with the named tables' definitions
    read again from their source, for the tables a statement left unknown (a live
    server's definitions as they are now: exact when the reader keeps up).
    """

    observes = frozenset({EventType.FORMAT_DESCRIPTION, *_STATEMENT_TYPES, *GTID_CODES})

    def __init__(
        self,
        catalog: Catalog | None = None,
        *,
        path: str | Path | None = None,
        at: Position | None = None,
        reread: Callable[[Catalog, tuple[TableName, ...]], Catalog] | None = None,
    ) -> None:
        self.catalog = catalog or Catalog()
        self._reread = reread
        self.warnings: list[SchemaWarning] = []
        self._store = None if path is None else HistoryStore(path)
        if self._store is not None and at is not None:
            self._store.record(at, Catalog(), self.catalog)
        self.version = 0
        """Counts the changes of :attr:`catalog` (see SchemaSource.version)."""
        self._gtid: object = None
        self._server_version = ""
        self._defined: dict[tuple[str, str], DefinedTable] = {}
        self._warned: set[tuple[str, str, str]] = set()

    @classmethod
    def load(cls, path: str | Path, *, at: Position | None = None) -> SchemaHistory:
        """The history kept in ``path``, with its catalog as of ``at`` (default: its end)."""
        store = HistoryStore(path)
        history = cls(store.catalog_at(at))
        history._store = store  # appends what the reading after ``at`` changes
        return history

    # --- SchemaSource -----------------------------------------------------------------------

    def observe(self, event: Event) -> None:
        if event.header.type_code in GTID_CODES:
            self._gtid = getattr(event, "gtid", None)  # made text only where a change is kept
        elif isinstance(event, QueryEvent):
            self._query(event)
        elif isinstance(event, FormatDescriptionEvent):
            self._server_version = event.server_version

    def table_schema(self, table: TableMapEvent) -> DefinedTable | None:
        key = (table.schema, table.table_name)
        definition = self.catalog.table(*key)
        if definition is None:
            if table.metadata_fields.column_names is None:
                self._warn_table(table, _no_definition(self.catalog, *key))
            return None
        defined = self._defined.get(key)
        if defined is None or defined.definition is not definition:
            defined = self._defined[key] = DefinedTable(definition, self._warn_table)
        return defined

    # --- DDL ----------------------------------------------------------------------------------

    def _query(self, event: QueryEvent) -> None:
        text = event.text
        if plainly_not_ddl(text):
            return
        from binlogkit.schema.ddl import apply_ddl  # the SQL parser, once a statement may be DDL
        from binlogkit.schema.session import Session

        header = event.header
        position = Position(header.file, header.end, self._gtid_text())
        result = apply_ddl(self.catalog, text, Session.for_query(event, self._server_version))
        catalog = result.catalog
        if result.warning is not None:
            again = ""
            if self._reread is not None and result.unknown:
                catalog = self._reread(catalog, result.unknown)
                again = f"; read {', '.join(map(str, result.unknown))} again from the server"
            self._warn(position, f"{result.warning}{again}")
        if catalog is self.catalog:
            return
        before = self.catalog
        self.catalog = catalog
        self.version += 1
        if self._store is not None:
            self._store.record(position, before, result.catalog)

    # --- warnings -----------------------------------------------------------------------------

    def _warn_table(self, table: TableMapEvent, message: str) -> None:
        """One warning per table and message."""
        key = (table.schema, table.table_name, message)
        if key in self._warned:
            return
        self._warned.add(key)
        header = table.header
        self._warn(
            Position(header.file, header.offset, self._gtid_text()),
            f"table {table.qualified_name}: {message}",
        )

    def _gtid_text(self) -> str | None:
        return None if self._gtid is None else str(self._gtid)

    def _warn(self, position: Position, message: str) -> None:
        warning = SchemaWarning(position, message)
        self.warnings.append(warning)
        log.warning("%s", warning)


def _no_definition(catalog: Catalog, db: str, name: str) -> str:
    why = (
        "a statement binlogkit could not read changed it"
        if catalog.is_unknown(db, name)
        else "no CREATE TABLE or schema seed defines it"
    )
    return (
        f"its rows come with positional names (@1, @2, ...) and numbers as stored: {why}. "
        "Log with binlog_row_metadata=FULL, or give a schema (--schema FILE or URL)"
    )
