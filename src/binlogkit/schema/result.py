"""What applying one statement did: :class:`DdlResult`, its :class:`TableChange` list, warnings."""

from __future__ import annotations

from enum import StrEnum

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.schema.model import Catalog, TableDef, TableName


class Action(StrEnum):
    """What happened to a table."""

    CREATED = "created"
    ALTERED = "altered"
    RENAMED = "renamed"
    DROPPED = "dropped"
    UNKNOWN = "unknown"
    """Marked unknown: it exists, its columns are not known from here on."""


@frozen_dataclass
class TableChange:
    """One table's change; ``table`` is its new definition (created, altered, renamed),
    ``old_name`` its name before a rename."""

    action: Action
    name: TableName
    table: TableDef | None = None
    old_name: TableName | None = None


@frozen_dataclass
class DdlWarning:
    """A statement that could not be read or applied: its text (shortened) and why."""

    statement: str
    reason: str

    def __str__(self) -> str:
        return f"{self.reason}: {self.statement}"


@frozen_dataclass
class DdlResult:
    """The outcome of one statement.

    - ``catalog``: the catalog after it (the same object when nothing changed).
    - ``kind``: what the statement is (``"CREATE TABLE"``, ``"ALTER TABLE"``,
      ``"CREATE VIEW"``, ``"USE"`` ...), None when it is not DDL.
    - ``is_ddl``: whether it is DDL; DML, transaction control, SET, GRANT,
      USE and the like are not, and leave the catalog as it was.
    - ``changes``: the tables created, altered, renamed, dropped or marked
      unknown, in order; ``databases``: the databases created, altered or dropped.
    - ``default_db``: the database a USE selected.
    - ``warning``: set when the statement could not be read or applied; the
      tables it names are then marked unknown.
    """

    catalog: Catalog
    kind: str | None = None
    is_ddl: bool = False
    changes: tuple[TableChange, ...] = ()
    databases: tuple[str, ...] = ()
    default_db: str | None = None
    warning: DdlWarning | None = None

    def _of(self, action: Action) -> tuple[TableChange, ...]:
        return tuple(change for change in self.changes if change.action is action)

    @property
    def created(self) -> tuple[TableDef, ...]:
        return tuple(c.table for c in self._of(Action.CREATED) if c.table is not None)

    @property
    def altered(self) -> tuple[TableDef, ...]:
        return tuple(c.table for c in self._of(Action.ALTERED) if c.table is not None)

    @property
    def renamed(self) -> tuple[tuple[TableName, TableName], ...]:
        return tuple((c.old_name, c.name) for c in self._of(Action.RENAMED) if c.old_name)

    @property
    def dropped(self) -> tuple[TableName, ...]:
        return tuple(c.name for c in self._of(Action.DROPPED))

    @property
    def unknown(self) -> tuple[TableName, ...]:
        return tuple(c.name for c in self._of(Action.UNKNOWN))
