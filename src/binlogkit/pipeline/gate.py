"""Dropping table maps with their rows events, and renaming databases, in a stream of events.

Shared by the replication filters (:mod:`binlogkit.pipeline.filters`) and
mysqlbinlog's ``--database``/``--table``/``--rewrite-db`` (:mod:`binlogkit.dump.selection`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

from binlogkit.binlog.events import Event
from binlogkit.binlog.events.informational import AnnotateRowsEvent
from binlogkit.binlog.events.query import QueryEvent
from binlogkit.binlog.events.rows import RowsEvent, RowsFlag
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.binlog.tables import Table

__all__ = ["TableGate"]


class TableGate:
    """Lets through the TABLE_MAP events ``keep`` accepts, and the rows events that use them.

    ``rename(db)`` gives a database's new name, or None to keep it: kept
    TABLE_MAP events (and with them their rows events) and QUERY events
    (:meth:`query`) get the new name. With ``hold_annotate``, an ANNOTATE_ROWS
    event waits for the first table map of its statement that is kept, and
    is dropped when its statement ends (a rows event with STMT_END, or any
    event but a table map or rows event) before one is.
    """

    def __init__(
        self,
        keep: Callable[[TableMapEvent], bool],
        rename: Callable[[str], str | None],
        *,
        hold_annotate: bool = True,
    ) -> None:
        self.keep = keep
        self.rename = rename
        self.hold_annotate = hold_annotate
        self.dropped: set[int] = set()
        self.renamed: dict[int, Table] = {}
        """Table id → its table under the new database name, for the rows events."""
        self.annotate: AnnotateRowsEvent | None = None

    def query(self, event: QueryEvent) -> QueryEvent:
        """The QUERY event with its default database renamed."""
        target = self.rename(event.db) if event.db else None
        return event if target is None else replace(event, db=target)

    def feed(self, event: Event) -> Iterator[Event]:
        """What ``event`` becomes: itself, a renamed copy (after a held annotate) or nothing."""
        if isinstance(event, TableMapEvent):
            yield from self._table_map(event)
        elif isinstance(event, RowsEvent):
            yield from self._rows(event)
        elif isinstance(event, AnnotateRowsEvent) and self.hold_annotate:
            self.annotate = event
        else:
            self.annotate = None
            yield event

    def _table_map(self, event: TableMapEvent) -> Iterator[Event]:
        if not self.keep(event):
            self.dropped.add(event.table_id)
            self.renamed.pop(event.table_id, None)
            return
        self.dropped.discard(event.table_id)
        if self.annotate is not None:
            yield self.annotate
            self.annotate = None
        target = self.rename(event.schema)
        if target is None:
            self.renamed.pop(event.table_id, None)
            yield event
        else:
            new = replace(event, schema=target)
            self.renamed[event.table_id] = Table(new)
            yield new

    def _rows(self, event: RowsEvent) -> Iterator[Event]:
        if event.flags & RowsFlag.STMT_END:
            self.annotate = None
        if event.table_id in self.dropped:
            return
        table = self.renamed.get(event.table_id)
        yield event if table is None or event.table is None else replace(event, table=table)
