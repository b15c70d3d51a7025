"""Decoded events → Arrow record batches with exactly the data source's declared schema.

Row changes come from :func:`binlogkit.pipeline.changes.row_changes` (the code
behind ``binlogkit rows``), so a row's ``before``/``after`` JSON text is what
``binlogkit rows`` prints for it, and the events listing from
:func:`binlogkit.binlog.info.list_events` (``binlogkit events``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from binlogkit import jsonenc
from binlogkit.binlog.events import Event, FormatDescriptionEvent
from binlogkit.binlog.events.query import QueryEvent
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.binlog.info import list_events
from binlogkit.binlog.transactions import GTID_EVENTS
from binlogkit.errors import BinlogError
from binlogkit.pipeline.changes import row_changes
from binlogkit.spark.schema import TypedColumn

__all__ = ["BATCH_ROWS", "BatchBuilder", "change_batches", "event_batches"]

BATCH_ROWS = 8192
"""Rows per Arrow record batch."""

Keep = Callable[[dict[str, Any]], bool]
"""A pushed-down filter on a row's source values (``file``, ``pos``, ``db``, ``table``, ``op``)."""


class BatchBuilder:
    """Collects rows (tuples in schema order) and cuts them into record batches."""

    def __init__(self, schema: StructType, batch_rows: int = BATCH_ROWS) -> None:
        self.schema = to_arrow_schema(schema, timezone="UTC")
        self.batch_rows = batch_rows
        self._rows: list[tuple[Any, ...]] = []

    def add(self, row: tuple[Any, ...]) -> pa.RecordBatch | None:
        """Add a row; returns a full batch when one is ready."""
        self._rows.append(row)
        return self.flush() if len(self._rows) >= self.batch_rows else None

    def flush(self) -> pa.RecordBatch | None:
        """The rows collected so far as a batch (None when there are none)."""
        if not self._rows:
            return None
        columns = zip(*self._rows, strict=True)
        arrays = [
            pa.array(list(values), type=field.type)
            for values, field in zip(columns, self.schema, strict=True)
        ]
        self._rows = []
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


class _Tap:
    """Passes events through and remembers the last one and the transaction's commit time."""

    def __init__(self, events: Iterable[Event]) -> None:
        self._events = events
        self.event: Event | None = None
        self.commit_us: int | None = None

    def __iter__(self) -> Iterator[Event]:
        for event in self._events:
            if isinstance(event, GTID_EVENTS):
                self.commit_us = getattr(event, "original_commit_timestamp", None)
            elif isinstance(event, FormatDescriptionEvent):
                self.commit_us = None
            self.event = event
            yield event


def _json(image: dict[str, Any] | None) -> str | None:
    return None if image is None else jsonenc.dumps(image)


class _TypedImages:
    """Row images → dicts of Spark-ready values, checking each table map against the schema."""

    def __init__(self, columns: Sequence[TypedColumn], table: str) -> None:
        self.columns = {c.name: c for c in columns}
        self.table = table
        self._checked: set[int] = set()

    def check(self, event: RowsEvent) -> None:
        table = event.table
        if table is None or id(table) in self._checked:
            return
        for col in table.columns:
            typed = self.columns.get(col.key)
            if typed is None or typed.type_code != col.type:
                header = event.header
                raise BinlogError(
                    f"table {self.table} changed: column {col.key} "
                    + ("is new" if typed is None else f"has type {col.type}, not {typed.type_code}")
                    + " since the table map the schema was taken from",
                    file=header.file,
                    offset=header.offset,
                    event_type=header.type_name,
                    hint="read the files before and after the change separately, "
                    "or read without the table option",
                )
        self._checked.add(id(table))

    def image(self, values: dict[str, Any] | None) -> dict[str, Any] | None:
        if values is None:
            return None
        columns = self.columns
        return {
            name: None if value is None else columns[name].convert(value)
            for name, value in values.items()
        }


def change_batches(
    events: Iterable[Event],
    schema: StructType,
    *,
    typed: tuple[Sequence[TypedColumn], str] | None = None,
    keep: Keep | None = None,
    batch_rows: int = BATCH_ROWS,
) -> Iterator[pa.RecordBatch]:
    """Record batches of the row changes in ``events`` (default or typed schema).

    ``typed`` is (columns, "db.table") for typed images; ``keep`` drops rows
    whose source values it rejects.
    """
    builder = BatchBuilder(schema, batch_rows)
    tap = _Tap(events)
    images = _TypedImages(*typed) if typed is not None else None
    for change in row_changes(tap):
        src = change.source
        event = tap.event
        assert isinstance(event, RowsEvent)
        header = event.header
        if keep is not None and not keep(
            {"file": src.file, "pos": src.pos, "db": src.db, "table": src.table, "op": change.op}
        ):
            continue
        before: Any
        after: Any
        if images is None:
            before, after = _json(change.before), _json(change.after)
        else:
            images.check(event)
            before, after = images.image(change.before), images.image(change.after)
        row = (
            src.file,
            src.pos,
            header.end,
            header.type_name,
            src.server_id,
            src.gtid,
            src.ts_ms * 1000,
            tap.commit_us,
            src.db,
            src.table,
            change.op,
            before,
            after,
            src.row,
        )
        if (batch := builder.add(row)) is not None:
            yield batch
    if (batch := builder.flush()) is not None:
        yield batch


def _names(event: Event) -> tuple[str | None, str | None]:
    if isinstance(event, TableMapEvent):
        return event.schema, event.table_name
    if isinstance(event, RowsEvent):
        return event.schema, event.table_name
    if isinstance(event, QueryEvent):
        return event.db or None, None
    return None, None


def event_batches(
    events: Iterable[Event],
    schema: StructType,
    *,
    format_event: Event | None = None,
    keep: Keep | None = None,
    batch_rows: int = BATCH_ROWS,
) -> Iterator[pa.RecordBatch]:
    """Record batches of one row per event (``events=all``).

    ``format_event`` is the format description in force before ``events``
    start (a split past the file's start): it names the server flavour and
    gives no row of its own.
    """
    builder = BatchBuilder(schema, batch_rows)
    tap = _Tap(events)
    stream: Iterable[Event] = tap
    if format_event is not None:
        stream = _prepend(format_event, tap)
    listings = list_events(stream)
    if format_event is not None:
        next(listings, None)
    gtid: str | None = None
    for listing in listings:
        event = listing.event
        header = event.header
        if isinstance(event, GTID_EVENTS):
            current = event.gtid
            gtid = None if current is None else str(current)
        elif isinstance(event, FormatDescriptionEvent):
            gtid = None
        db, table = _names(event)
        if keep is not None and not keep(
            {"file": listing.log_name, "pos": header.offset, "db": db, "table": table, "op": None}
        ):
            continue
        row = (
            listing.log_name,
            header.offset,
            header.end,
            header.type_name,
            header.server_id,
            gtid,
            header.timestamp * 1_000_000,
            tap.commit_us,
            header.type_code,
            header.log_pos,
            header.flags,
            header.event_size,
            db,
            table,
            listing.info,
        )
        if (batch := builder.add(row)) is not None:
            yield batch
    if (batch := builder.flush()) is not None:
        yield batch


def _prepend(first: Event, rest: Iterable[Event]) -> Iterator[Event]:
    yield first
    yield from rest
