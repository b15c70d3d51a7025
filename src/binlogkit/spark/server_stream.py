"""Structured Streaming from a live server: ``readStream.format("binlog").option("url", ...)``.

An offset is JSON ``{"file": name, "pos": n}``: a complete resume point of
the server's binlog (no transaction open there), so every micro-batch holds
whole transactions and a restarted query goes on exactly at its checkpoint.
Option ``start`` says where a new query starts: ``now`` (the default),
``oldest`` or ``file:pos``.

:meth:`ServerStreamReader.latestOffset` without a limit is one query, SHOW
MASTER STATUS: the end of the server's current binlog, where the last
transaction it wrote ends. With ``maxBytesPerTrigger`` (or
``maxRowsPerTrigger``) it reads a non-blocking dump from the start, and ends
at the last complete resume point within that many bytes of events (row
changes), or after the first transaction when that alone is bigger. A
batch is one task, which reads its range with a non-blocking
:class:`~binlogkit.services.replica_stream.BinlogStream`.

The columns are those the table maps carry (names with
``binlog_row_metadata=FULL``): the schema history does not follow a server
stream yet, nor does the typed ``table`` option.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxBytes,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from binlogkit.binlog.events import Event
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.errors import BinlogError, ServerError
from binlogkit.io.binlog_index import binlog_order
from binlogkit.io.mysql import MySQLConnection
from binlogkit.protocol.replication import BINLOG_HEADER_SIZE, ResumePoint
from binlogkit.protocol.spec import ConnectionSpec
from binlogkit.services.replica_stream import BinlogStream, PointFields, current_position
from binlogkit.spark.arrow import change_batches
from binlogkit.spark.schema import CHANGE_SCHEMA
from binlogkit.spark.source import ReadPlan

__all__ = ["ServerOffset", "ServerStreamReader", "server_reader"]

DEFAULT_SERVER_ID = 0x62696E6C
"""The replica server id of the source's dumps unless option ``serverId`` gives one."""
_GONE = 1236
"""ER_MASTER_FATAL_ERROR_READING_BINLOG: the dump's file is not (any more) on the server."""


@dataclass(frozen=True, slots=True)
class ServerOffset:
    """Where a micro-batch of a server stream ends: a complete resume point."""

    file: str
    pos: int

    @classmethod
    def load(cls, offset: dict[str, Any]) -> ServerOffset:
        return cls(str(offset["file"]), int(offset["pos"]))

    def dump(self) -> dict[str, Any]:
        return {"file": self.file, "pos": self.pos}

    def key(self) -> tuple[tuple[str, int, str], int]:
        return (binlog_order(self.file), self.pos)


@dataclass(frozen=True, slots=True)
class ServerPartition(InputPartition):
    """A batch's range of the server's binlog."""

    start: ServerOffset
    end: ServerOffset


def _where(point: ResumePoint | PointFields) -> tuple[ServerOffset, bool]:
    """A resume point's offset and whether it is complete."""
    if isinstance(point, ResumePoint):
        return ServerOffset(point.file, point.position), point.complete
    return ServerOffset(point[0], point[1]), point[3]


def _event_bytes(event: Event) -> int:
    return event.header.event_size


def _event_rows(event: Event) -> int:
    return len(event.rows) if isinstance(event, RowsEvent) else 0


class ServerStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batches of the whole transactions a live server wrote; plain data only."""

    def __init__(
        self,
        plan: ReadPlan,
        schema: StructType,
        url: str,
        *,
        start: str = "now",
        server_id: int = DEFAULT_SERVER_ID,
        limit: ReadLimit | None = None,
    ) -> None:
        self.plan = plan
        self.schema = schema
        self.url = url
        self.start = start
        self.server_id = server_id
        self.limit = limit or ReadAllAvailable()
        self.target: ServerOffset | None = None

    @contextmanager
    def _connection(self) -> Iterator[MySQLConnection]:
        with MySQLConnection.connect(ConnectionSpec.from_url(self.url)) as conn:
            yield conn

    def _gone(self, file: str) -> BinlogError:
        return BinlogError(
            f"binlog {file} is gone from the server: the stream's position is purged",
            hint="start a new query (a new checkpoint) from a fresh snapshot of the tables",
        )

    def initialOffset(self) -> dict[str, Any]:
        if self.start not in ("now", "oldest"):
            file, colon, pos = self.start.rpartition(":")
            if not colon or not file or not pos.isdigit():
                raise BinlogError(
                    f"option start must be now, oldest or file:pos, not {self.start!r}"
                )
            return ServerOffset(file, int(pos)).dump()
        with self._connection() as conn:
            if self.start == "now":
                return ServerOffset(*current_position(conn)).dump()
            files = conn.query("SHOW BINARY LOGS").rows
        if not files or files[0][0] is None:
            raise BinlogError("the server has no binary logs (is log_bin on?)")
        return ServerOffset(files[0][0], BINLOG_HEADER_SIZE).dump()

    def getDefaultReadLimit(self) -> ReadLimit:
        return self.limit

    def prepareForTriggerAvailableNow(self) -> None:
        with self._connection() as conn:
            self.target = ServerOffset(*current_position(conn))

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        begin = ServerOffset.load(start)
        with self._connection() as conn:
            files = {row[0] for row in conn.query("SHOW BINARY LOGS").rows}
            if begin.file not in files:
                raise self._gone(begin.file)
            end = self.target or ServerOffset(*current_position(conn))
        if end.key() <= begin.key():
            return begin.dump()
        if isinstance(limit, ReadMaxBytes):
            end = self._bounded(begin, end, limit.max_bytes, _event_bytes)
        elif isinstance(limit, ReadMaxRows):
            end = self._bounded(begin, end, limit.max_rows, _event_rows)
        return end.dump()

    def _bounded(
        self, begin: ServerOffset, end: ServerOffset, budget: int, measure: Callable[[Event], int]
    ) -> ServerOffset:
        """The last complete resume point up to ``end`` within ``budget`` (bytes or rows, as
        ``measure`` counts them) from ``begin``; the first one when a transaction is bigger."""
        last, read = begin, 0
        with self._stream(begin) as stream:
            for event, point in stream.located():
                read += measure(event)
                offset, complete = _where(point)
                if not complete:
                    continue
                if offset.key() > end.key() or (read > budget and last != begin):
                    break
                last = offset
                if read >= budget or offset.key() == end.key():
                    break
        return last

    @contextmanager
    def _stream(self, begin: ServerOffset) -> Iterator[BinlogStream]:
        """A non-blocking dump from ``begin``; a clear error when its file is purged."""
        stream = BinlogStream(
            self.url,
            server_id=self.server_id,
            start=(begin.file, begin.pos),
            blocking=False,
            heartbeat=None,
            reconnect=None,
            options=self.plan.options(),
        )
        try:
            with stream:
                yield stream
        except ServerError as err:
            if err.code == _GONE:
                raise self._gone(begin.file) from err
            raise

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        begin, stop = ServerOffset.load(start), ServerOffset.load(end)
        return [ServerPartition(begin, stop)] if stop.key() > begin.key() else []

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, ServerPartition)
        events = self.plan.rules.filter(self._events(partition.start, partition.end))
        return change_batches(events, self.schema)

    def _events(self, begin: ServerOffset, end: ServerOffset) -> Iterator[Event]:
        """The events from ``begin`` to ``end``; an error if the server's binlog ends before."""
        with self._stream(begin) as stream:
            for event, point in stream.located():
                yield event
                if _where(point)[0].key() >= end.key():
                    return
        raise BinlogError(
            f"the server's binlog ended before {end.file}:{end.pos}, where the batch ends",
            hint="the server lost binlogs (a restore or RESET MASTER?): start a new query",
        )


def server_reader(
    plan: ReadPlan, options: dict[str, str], max_bytes: int | None
) -> ServerStreamReader:
    """The stream reader of the server of option ``url`` (row changes only, the table maps'
    columns), from the source's options (lower-case names)."""
    if plan.events:
        raise BinlogError("a server stream gives row changes: option events=all needs files")
    server_id = options.get("serverid", str(DEFAULT_SERVER_ID))
    if not server_id.isdigit():
        raise BinlogError(f"option serverId must be a number, not {server_id!r}")
    limit: ReadLimit | None = None if max_bytes is None else ReadMaxBytes(max_bytes)
    rows = options.get("maxrowspertrigger")
    if rows is not None:
        if limit is not None or not rows.isdigit() or int(rows) < 1:
            raise BinlogError(
                f"option maxRowsPerTrigger must be a positive number, alone: not {rows!r}",
                hint="give maxRowsPerTrigger or maxBytesPerTrigger, not both",
            )
        limit = ReadMaxRows(int(rows))
    return ServerStreamReader(
        plan,
        CHANGE_SCHEMA,
        options["url"],
        start=options.get("start", "now"),
        server_id=int(server_id),
        limit=limit,
    )
