"""The schema history a stream's driver keeps: option ``schemaHistory=PATH``.

Both streams (a folder of binlogs, :mod:`binlogkit.spark.stream`, and a live
server, :mod:`binlogkit.spark.server_stream`) keep it the same way. The file
is a :class:`~binlogkit.schema.store.HistoryStore`: each table's versions
with the positions where they begin. When a batch's end is chosen
(``latestOffset``) the driver records the DDL between the batch's start and
end into it, reading only what DDL needs (each stream says how, as a
:data:`Scan`), so the file holds every table's columns at every change of a
batch before the batch reaches the query (a ``foreachBatch`` function may read
it). When the batch is planned, its tasks are given the catalog in force at
its start, read from the file (no DDL pre-pass from the query's first file).

Recording is idempotent: the store ignores a statement at or before the last
one it holds, so a batch read again after a restart (or a range scanned again)
records nothing twice. Without the option the history is kept the same way in
a temporary file of the driver, removed when the query stops.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.schema.history import SchemaHistory
from binlogkit.schema.model import Catalog
from binlogkit.schema.store import HistoryStore, Position
from binlogkit.schema.table_map import column_infos

__all__ = ["Scan", "StreamHistory", "last_columns"]

Scan = Callable[[SchemaHistory, Position], None]
"""Follows a history (as of the position given, recording into the file) from that position to
the end of the range being kept, showing it the events DDL needs."""


class StreamHistory:
    """A stream's history file (temporary when ``path`` is None) and how far its DDL is kept."""

    def __init__(self, path: str | None) -> None:
        self.temporary = path is None
        if path is None:
            handle, path = tempfile.mkstemp(prefix="binlogkit-schema-", suffix=".jsonl")
            os.close(handle)
        self.path = Path(path)
        self.path.touch()  # an empty file is an empty history (and not a missing seed file)
        self._kept: Position | None = None

    @property
    def empty(self) -> bool:
        """Whether the file holds no version yet."""
        return self.path.stat().st_size == 0

    def seed(self, catalog: Catalog, at: Position) -> None:
        """Record ``catalog`` as the tables' versions at ``at`` (the stream's start)."""
        HistoryStore(self.path).record(at, Catalog(), catalog)

    def catalog_at(self, at: Position) -> Catalog:
        """The catalog in force at ``at`` (every version that begins at or before it)."""
        return HistoryStore(self.path).catalog_at(at)

    def recorded_after(self, at: Position) -> bool:
        """Whether the file holds a version that begins after ``at``."""
        steps = HistoryStore(self.path).timeline()
        return bool(steps) and steps[-1][0].key() > at.key()

    def keep(self, start: Position, end: Position, scan: Scan) -> None:
        """Record the DDL from ``start`` to ``end`` in the file, scanning only what this driver
        has not scanned yet (a first call scans from ``start``: what the file holds there and
        after is left as it is)."""
        kept = self._kept
        if kept is not None and end.key() <= kept.key():
            return
        begin = kept if kept is not None and start.key() < kept.key() else start
        scan(SchemaHistory.load(self.path, at=begin), begin)
        self._kept = end

    def close(self) -> None:
        """Remove a temporary file."""
        if self.temporary:
            self.path.unlink(missing_ok=True)


def last_columns(path: str, table: tuple[str, str]) -> tuple[ColumnInfo, ...] | None:
    """The columns of ``table`` in its last version in the history file ``path`` (for typed
    images); None when the file does not define it."""
    definition = HistoryStore(path).catalog_at().table(*table)
    return None if definition is None else column_infos(definition)
