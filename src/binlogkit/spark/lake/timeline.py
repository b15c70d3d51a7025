"""Each table's definitions along the binlog, from the schema history file.

A :class:`Version` is one definition of a table and the position where it
begins (the position just past the DDL that made it). A change at a position
belongs to the last version that begins at or before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.schema.model import Catalog, TableDef, TableName
from binlogkit.schema.store import HistoryStore, Position

__all__ = ["Timeline", "Version"]

Key = tuple[str, str]
"""A table's database and name, folded as the server compares them."""


@frozen_dataclass
class Version:
    """A table's definition from ``at`` on: None when dropped (``moved_to`` names the table it
    was renamed to), ``unknown`` when a statement binlogkit could not read changed it."""

    at: Position
    definition: TableDef | None
    unknown: bool = False
    moved_to: TableName | None = None


class Timeline:
    """The versions of every table in a schema history file."""

    def __init__(self, history: str | Path) -> None:
        self.versions: dict[Key, list[Version]] = {}
        self._catalog = Catalog()
        for at, catalog in HistoryStore(history).timeline():
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
            if previous is None:
                source = next((k for k, t in gone.items() if _same_columns(t, table)), None)
                if source is not None:  # a RENAME TABLE: same columns under a new name
                    gone.pop(source)
                    self._add(source, Version(at, None, moved_to=table.table_name))
            self._add(key, Version(at, table))
        for key in gone:
            unknown = after.is_unknown(*key)
            self._add(key, Version(at, None, unknown=unknown))

    def _add(self, key: Key, version: Version) -> None:
        self.versions.setdefault(key, []).append(version)


def _known(catalog: Catalog) -> dict[Key, TableDef]:
    return {(catalog.fold(t.db), catalog.fold(t.name)): t for t in catalog.tables()}


def _same_columns(a: TableDef, b: TableDef) -> bool:
    return a.columns == b.columns and a.primary_key == b.primary_key
