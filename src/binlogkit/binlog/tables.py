"""The decoder's tables: what each table id maps to, its columns and row plans, resolved once.

A :class:`TableCache` belongs to one decoder. Each TABLE_MAP event it decodes
becomes a :class:`Table` (or reuses the one of an identical earlier map of the
same id: servers log the same map in every transaction), and the rows events
after it hold that table. A table resolves its columns once and compiles a
:class:`~binlogkit.binlog.rows.plan.RowPlan` once per set of options.

A :class:`SchemaSource` is the hook for what the binlog leaves out (column
names, signedness, charsets, ENUM/SET values where ``binlog_row_metadata`` is
not FULL): the decoder shows it the events it asks for (:attr:`SchemaSource.observes`,
e.g. QUERY events with DDL) in order, and asks it for each new table map's
:class:`TableSchema`, which completes the columns the map describes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from binlogkit.errors import BinlogError

if TYPE_CHECKING:
    from binlogkit.binlog.context import DecodeOptions
    from binlogkit.binlog.events.base import Event
    from binlogkit.binlog.events.table_map import TableMapEvent
    from binlogkit.binlog.rows.columns import ColumnInfo
    from binlogkit.binlog.rows.plan import RowPlan

__all__ = ["SchemaSource", "Table", "TableCache", "TableSchema"]


class TableSchema(Protocol):
    """What a schema source knows of one table at one point of the binlog."""

    def complete(
        self, table: TableMapEvent, columns: tuple[ColumnInfo, ...]
    ) -> tuple[ColumnInfo, ...]:
        """``columns`` (as ``table`` describes them) with what the binlog left out filled in."""
        ...


class SchemaSource(Protocol):
    """Tracks the tables' definitions along a binlog, for the decoder's table maps."""

    observes: frozenset[int]
    """The event type codes the decoder shows to :meth:`observe`."""

    version: int
    """Changes whenever :meth:`table_schema` may answer differently (after DDL): until it
    does, a table map logged again keeps the table it had."""

    def observe(self, event: Event) -> None:
        """Take in an event of a type in :attr:`observes`, in binlog order."""
        ...

    def table_schema(self, table: TableMapEvent) -> TableSchema | None:
        """The definition in force for ``table``'s rows events; None when nothing is known."""
        ...


class Table:
    """A table as its rows events see it: the table map, the columns and the row plans.

    ``map`` is the first table map of this id with this exact layout; the
    columns are the map's own, completed by ``definition`` when a schema
    source gave one. Compares by identity.
    """

    __slots__ = (
        "_columns",
        "_last_plan",
        "_plans",
        "body",
        "definition",
        "map",
        "schema_version",
    )

    def __init__(
        self,
        map: TableMapEvent,
        body: bytes = b"",
        definition: TableSchema | None = None,
        schema_version: int = 0,
    ) -> None:
        self.map = map
        self.body = body
        """The map's body bytes, to recognise the same map logged again."""
        self.definition = definition
        self.schema_version = schema_version
        """The schema source's :attr:`~SchemaSource.version` the definition was taken at."""
        self._columns: tuple[ColumnInfo, ...] | None = None
        self._plans: dict[DecodeOptions, RowPlan] = {}
        self._last_plan: tuple[DecodeOptions, RowPlan] | None = None

    @property
    def table_id(self) -> int:
        return self.map.table_id

    @property
    def schema(self) -> str:
        return self.map.schema

    @property
    def table_name(self) -> str:
        return self.map.table_name

    @property
    def qualified_name(self) -> str:
        return self.map.qualified_name

    @property
    def column_count(self) -> int:
        return len(self.map.column_types)

    @property
    def columns(self) -> tuple[ColumnInfo, ...]:
        """Every column as the map says, completed by the definition when there is one."""
        columns = self._columns
        if columns is None:
            map = self.map
            try:
                columns = map.columns
                if self.definition is not None:
                    columns = self.definition.complete(map, columns)
            except BinlogError as err:
                header = map.header
                err.locate(file=header.file, offset=header.offset, event_type=header.type_name)
                raise
            self._columns = columns
        return columns

    def plan(self, options: DecodeOptions) -> RowPlan:
        """The row plan for these columns and options, compiled once and kept."""
        last = self._last_plan  # the usual case: the options of the last call
        if last is not None and last[0] is options:
            return last[1]
        plan = self._plans.get(options)
        if plan is None:
            from binlogkit.binlog.rows.plan import RowPlan  # the plan module imports this one

            plan = self._plans[options] = RowPlan(self, options)
        self._last_plan = (options, plan)
        return plan

    def __repr__(self) -> str:
        return f"Table({self.qualified_name}, id={self.table_id})"


class TableCache:
    """Table id → :class:`Table`, for one decoder (and the events a transaction payload holds).

    ``source`` is the schema source that completes the tables' columns;
    ``parent`` is the cache an :meth:`overlay` falls back to.
    """

    __slots__ = ("_parent", "_tables", "observes", "source")

    def __init__(
        self, source: SchemaSource | None = None, parent: TableCache | None = None
    ) -> None:
        self.source = source
        self.observes: frozenset[int] = frozenset() if source is None else source.observes
        self._parent = parent
        self._tables: dict[int, Table] = {}

    def get(self, table_id: int) -> Table | None:
        table = self._tables.get(table_id)
        if table is None and self._parent is not None:
            return self._parent.get(table_id)
        return table

    def __contains__(self, table_id: int) -> bool:
        return self.get(table_id) is not None

    def add(self, event: TableMapEvent, body: bytes | memoryview) -> Table:
        """The table of a new map ``event`` with body bytes ``body``: the id's table kept
        when the map and its definition are unchanged, else a new one that replaces it."""
        table_id = event.table_id
        previous = self.get(table_id)
        source = self.source
        version = 0 if source is None else source.version
        definition = None
        if (
            previous is not None
            and previous.body == body
            and previous.map.server_version == event.server_version
        ):
            if previous.schema_version == version:
                self._tables[table_id] = previous
                return previous
            definition = None if source is None else source.table_schema(event)
            if previous.definition is definition:
                previous.schema_version = version
                self._tables[table_id] = previous
                return previous
        elif source is not None:
            definition = source.table_schema(event)
        table = Table(event, bytes(body), definition, version)
        self._tables[table_id] = table
        return table

    def overlay(self) -> TableCache:
        """A cache whose new tables stay its own and whose lookups fall back to this one
        (for the events of a transaction payload, decoded before they are handed on)."""
        return TableCache(self.source, self)

    def update(self, overlay: TableCache) -> None:
        """Take the tables an :meth:`overlay` of this cache added."""
        self._tables.update(overlay._tables)

    def observe(self, event: Event) -> None:
        """Show ``event`` to the schema source (the decoder calls this for :attr:`observes`)."""
        if self.source is not None:
            self.source.observe(event)
