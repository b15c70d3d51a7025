"""Each table's definitions along the binlog, from the schema history file.

A :class:`Version` is one definition of a table and the position where it
begins (the position just past the DDL that made it). A change at a position
belongs to the last version that begins at or before it. A TRUNCATE (rows
removed without row events) begins a version too, of the same definition,
marked ``truncated``, so that a batch's changes are cut there as at DDL.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.schema.model import Catalog, TableDef, TableName
from binlogkit.schema.store import HistoryStore, Position, Truncation
from binlogkit.spark.lake.storage import lake_path, working_copy

__all__ = ["Timeline", "Version"]

Key = tuple[str, str]
"""A table's database and name, folded as the server compares them."""


@frozen_dataclass
class Version:
    """A table's definition from ``at`` on: None when dropped (``moved_to`` names the table it
    was renamed to; ``moved_from``: the table renamed to this one there), ``unknown`` when a
    statement binlogkit could not read changed it;
    ``truncated``: the table's rows were removed at ``at`` (a TRUNCATE), or only those of
    ``partitions`` where they are named."""

    at: Position
    definition: TableDef | None
    unknown: bool = False
    moved_to: TableName | None = None
    moved_from: TableName | None = None
    truncated: bool = False
    partitions: tuple[str, ...] | None = None


class Timeline:
    """The versions of every table in a schema history file; ``first``: where its first record
    is (a seed's position: the catalog the stream started from), None for an empty file."""

    def __init__(self, history: str | Path) -> None:
        self.versions: dict[Key, list[Version]] = {}
        self.first: Position | None = None
        self._catalog = Catalog()
        with working_copy(lake_path(history)) as local:
            store = HistoryStore(local)
            truncations = store.truncations()
            steps = store.timeline()
        if steps:
            self.first = steps[0][0]
        for at, catalog in steps:
            while truncations and truncations[0].at.key() <= at.key():
                self._truncate(truncations.pop(0))
            self._step(at, self._catalog, catalog)
            self._catalog = catalog

    def key(self, db: str, name: str) -> Key:
        return (self._catalog.fold(db), self._catalog.fold(name))

    def of(self, db: str, name: str) -> Sequence[Version]:
        return self.versions.get(self.key(db, name), ())

    def _step(self, at: Position, before: Catalog, after: Catalog) -> None:
        old = _known(before)
        new = _known(after)
        gone = {key: table for key, table in old.items() if key not in new}
        for key, table in new.items():
            previous = old.get(key)
            if previous is table:
                continue
            moved_from = None
            if previous is None:
                source = next((k for k, t in gone.items() if _same_columns(t, table)), None)
                if source is not None:  # a RENAME TABLE: same columns under a new name
                    moved_from = gone.pop(source).table_name
                    self._add(source, Version(at, None, moved_to=table.table_name))
            self._add(key, Version(at, table, moved_from=moved_from))
        for key in gone:
            unknown = after.is_unknown(*key)
            self._add(key, Version(at, None, unknown=unknown))

    def _truncate(self, truncation: Truncation) -> None:
        """A truncation of a table with a known definition: a version of that definition."""
        versions = self.versions.get(self.key(*truncation.table), [])
        if versions and versions[-1].definition is not None:
            table = versions[-1].definition
            at = truncation.at
            versions.append(Version(at, table, truncated=True, partitions=truncation.partitions))

    def _add(self, key: Key, version: Version) -> None:
        self.versions.setdefault(key, []).append(version)


def _known(catalog: Catalog) -> dict[Key, TableDef]:
    return {(catalog.fold(t.db), catalog.fold(t.name)): t for t in catalog.tables()}


def _same_columns(a: TableDef, b: TableDef) -> bool:
    return a.columns == b.columns and a.primary_key == b.primary_key
