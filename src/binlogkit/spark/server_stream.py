"""Structured Streaming from a live server: ``readStream.format("binlog").option("url", ...)``.

An offset is JSON ``{"file": name, "pos": n, "gtid": "0-1-42,..."}``: a
complete resume point of the server's binlog (no transaction open there), so
every micro-batch holds whole transactions and a restarted query goes on
exactly at its checkpoint, by ``file`` and ``pos``. ``gtid`` is the server's
GTID position there (MariaDB ``domain-server-seq`` list, as
``@@gtid_binlog_pos`` and ``binlogkit tail`` resume points give it; null on
MySQL): the name the same point has on every server of the replication
topology, where file and position name nothing after a failover. An offset also
names its server (``server``), that server's binlog state there (``state``) and the
position the stream began at (``since``), for the checks of
:mod:`~binlogkit.spark.failover_checks`: every connection of the driver and of a
batch's task must reach the offset's server; the first offset a driver is given
(and the next after a failed connection) is checked against the server's GTID
position there (``BINLOG_GTID_POS``). Without option ``failover=true`` another
server is an error (:class:`~binlogkit.errors.ServerChanged`). With it, a
checkpoint made on another server (a failover to a replica; also a restore or
RESET MASTER) goes on at the point of this server's
binlog whose GTID position is exactly the checkpoint's, found with a GTID
dump from there (MariaDB's ``@slave_connect_state``) and checked with
``BINLOG_GTID_POS``: no transaction lost or read twice. From then on the
offsets name this server's files and carry ``generation`` (how many times the
stream moved), and the events, row changes and schema history name its files
``1~mysql-bin.000002`` (:func:`~binlogkit.io.binlog_index.generation_name`), so
they order after every position of the servers before, whatever their names.
When there is no such point (the checkpoint has no GTIDs, this server lacks
some of them or purged them, or has transactions of its own among them), or
this server wrote transactions before it that the old one had not (errant, seen
by comparing binlog states), it is a clear error, never a silent read of other
transactions. Offsets written
without ``gtid`` still load. Option ``start`` says where a new query starts:
``now`` (the default), ``oldest`` or ``file:pos``.

:meth:`ServerStreamReader.latestOffset` without a limit is SHOW MASTER STATUS
between two reads of ``@@gtid_binlog_pos``: the end of the server's current
binlog, where the last transaction it wrote ends. With ``maxBytesPerTrigger``
(or ``maxRowsPerTrigger``) it reads a non-blocking dump from the start, and
ends at the last complete resume point within that many bytes of events (row
changes), or after the first transaction when that alone is bigger. A batch
is one task, which reads its range with a non-blocking
:class:`~binlogkit.services.replica_stream.BinlogStream` that reconnects after
a broken connection, a killed dump thread or a server restart
(:data:`READ_BACKOFF`) and goes on after the last complete transaction given;
the driver's reads (offsets, the schema history) are made again the same way.

The driver keeps the schema history (:mod:`binlogkit.spark.stream_history`,
option ``schemaHistory=PATH``, else a temporary file): when a batch's end is
chosen it reads the batch's range with a non-blocking dump that decodes only
the QUERY events (table maps dropped, rows never decoded) and records its DDL;
the batch's task starts with the catalog in force at the batch's start and
follows the DDL inside the batch. So a server with the default
``binlog_row_metadata=NO_LOG`` gives real column names, types, unsigned values
and text. A query that starts ``now`` seeds the history from the server
(:func:`~binlogkit.services.live_schema.stream_schema`) at the very position it
starts at; one that starts elsewhere with an empty history learns the tables
from the DDL it reads (a warning says so). Option ``table=db.t`` gives typed
images, with the table's columns from the history file (its last version) or
else from the server as it is now (:func:`server_columns`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, TypeVar

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

from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.events import Event
from binlogkit.binlog.events.mariadb_gtid import MariaGtidEvent, MariaGtidListEvent
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.binlog.tables import SchemaSource
from binlogkit.errors import BinlogError, ConnectionLost, ServerChanged, ServerError
from binlogkit.gtid import MariaGtidList
from binlogkit.io.binlog_index import binlog_order, generation_name, split_generation
from binlogkit.io.mysql import MySQLConnection
from binlogkit.protocol.replication import BINLOG_HEADER_SIZE, ResumePoint
from binlogkit.protocol.spec import ConnectionSpec
from binlogkit.schema.history import SchemaHistory
from binlogkit.schema.model import Catalog, TableName
from binlogkit.schema.seed import reread_tables
from binlogkit.schema.store import Position
from binlogkit.schema.table_map import column_infos
from binlogkit.services.live_schema import stream_schema
from binlogkit.services.replica_stream import (
    Backoff,
    BinlogStream,
    PointFields,
    current_position,
    is_retryable,
    parse_gtids,
)
from binlogkit.spark.arrow import change_batches
from binlogkit.spark.failover_checks import (
    MOVE_HINT,
    SameServer,
    binlog_state_at,
    describe,
    errant_gtids,
    gtid_at,
    same_position,
    server_identity,
)
from binlogkit.spark.schema import typed_columns
from binlogkit.spark.source import ReadPlan
from binlogkit.spark.stream_history import StreamHistory

log = logging.getLogger(__name__)
_T = TypeVar("_T")

__all__ = ["ServerOffset", "ServerStreamReader", "server_columns", "server_reader"]

DEFAULT_SERVER_ID = 0x62696E6C
"""The replica server id of the source's dumps unless option ``serverId`` gives one."""
READ_BACKOFF = Backoff(initial=0.1, maximum=5.0, attempts=60, first_attempts=None)
"""How a batch's dump reconnects (its first connection too: the driver reached the server
when it planned the batch), and the driver's reads are made again, after a broken
connection or while the server restarts (about five minutes of attempts, then it fails)."""
_GONE = 1236
"""ER_MASTER_FATAL_ERROR_READING_BINLOG: the dump's file is not (any more) on the server."""


@frozen_dataclass
class ServerOffset:
    """Where a micro-batch of a server stream ends: a complete resume point."""

    file: str
    pos: int
    gtid: str | None = None
    """The server's GTID position there (MariaDB ``domain-server-seq,...``); None: unknown."""
    generation: int = 0
    """How many times the stream moved to another server (a failover) before this point."""
    server: str | None = None
    """The identity of the server whose binlog ``file`` and ``pos`` name (its ``@@server_id``,
    MySQL's ``@@server_uuid``); None: unknown (an offset of an older binlogkit)."""
    state: str | None = None
    """The server's binlog state there (MariaDB's last GTID of each domain and server id), for
    the errant-transaction check of a failover; None: unknown."""
    since: str | None = None
    """The GTID position where the stream began (its first offset's), carried along: GTIDs
    of a server not in ``state`` up to there are from before the stream."""

    @classmethod
    def load(cls, offset: dict[str, Any]) -> ServerOffset:
        def text(key: str) -> str | None:
            value = offset.get(key)
            return None if value is None else str(value)

        generation = int(offset.get("generation", 0))
        return cls(
            str(offset["file"]),
            int(offset["pos"]),
            text("gtid"),
            generation,
            text("server"),
            text("state"),
            text("since"),
        )

    @classmethod
    def of(cls, at: Position) -> ServerOffset:
        """The offset of a position of the stream's history (its file named with the
        generation, :meth:`position`)."""
        assert at.file is not None
        generation, file = split_generation(at.file)
        return cls(file, at.pos, at.gtid, generation)

    def dump(self) -> dict[str, Any]:
        offset: dict[str, Any] = {"file": self.file, "pos": self.pos, "gtid": self.gtid}
        if self.generation:
            offset["generation"] = self.generation
        known = {"server": self.server, "state": self.state, "since": self.since}
        return {**offset, **{key: value for key, value in known.items() if value is not None}}

    def key(self) -> tuple[int, tuple[str, int, str], int]:
        return (self.generation, binlog_order(self.file), self.pos)

    @property
    def prefix(self) -> str:
        """What goes before the server's file names in the events, the change rows and the
        schema history: the generation (``1~``), none on the stream's first server."""
        return generation_name("", self.generation)

    def position(self) -> Position:
        return Position(self.prefix + self.file, self.pos, self.gtid)

    def resume_point(self) -> ResumePoint:
        """Where a dump starts: by file and position, the GTIDs followed from there."""
        text = self.gtid
        gtids = None if text is None else parse_gtids(text) if text else MariaGtidList()
        return ResumePoint(self.file, self.pos, gtids)


@frozen_dataclass
class ServerPartition(InputPartition):
    """A batch's range of the server's binlog and the catalog in force at its start."""

    start: ServerOffset
    end: ServerOffset
    catalog: Catalog | None = None


def _fields(point: ResumePoint | PointFields) -> PointFields:
    if isinstance(point, ResumePoint):
        return point.file, point.position, point.gtids, point.complete
    return point


def _offset(fields: PointFields, generation: int) -> ServerOffset:
    """A resume point's offset (its GTIDs made text: once a transaction, not per event)."""
    file, pos, gtids, _ = fields
    return ServerOffset(file, pos, None if gtids is None else str(gtids), generation)


def _no_table(db: str, table: str) -> bool:
    return False


def _event_bytes(event: Event) -> int:
    return event.header.event_size


def _event_rows(event: Event) -> int:
    return len(event.rows) if isinstance(event, RowsEvent) else 0


def _now(conn: MySQLConnection, attempts: int = 5) -> ServerOffset:
    """The end of the server's binlog, its GTID position and binlog state: SHOW MASTER STATUS
    and ``@@gtid_binlog_state`` between two equal reads of ``@@gtid_binlog_pos`` (no
    transaction was written in between)."""
    server = server_identity(conn)
    if not conn.is_mariadb:
        return ServerOffset(*current_position(conn), server=server)
    for _ in range(attempts):
        before = conn.query("SELECT @@gtid_binlog_pos").rows[0][0]
        file, pos = current_position(conn)
        state = conn.query("SELECT @@gtid_binlog_state").rows[0][0]
        if conn.query("SELECT @@gtid_binlog_pos").rows[0][0] == before:
            return ServerOffset(file, pos, before, server=server, state=state)
    return ServerOffset(file, pos, gtid_at(conn, file, pos), server=server)


class ServerStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batches of the whole transactions a live server wrote; plain data only (the
    driver's schema history is made on first use)."""

    def __init__(
        self,
        plan: ReadPlan,
        schema: StructType,
        url: str,
        *,
        start: str = "now",
        server_id: int = DEFAULT_SERVER_ID,
        limit: ReadLimit | None = None,
        history_path: str | None = None,
        failover: bool = False,
    ) -> None:
        self.plan = plan
        self.schema = schema
        self.url = url
        self.start = start
        self.server_id = server_id
        self.limit = limit or ReadAllAvailable()
        self.history_path = history_path
        self.failover = failover
        """Whether the stream may go on at another server by GTID (else that is an error)."""
        self.target: ServerOffset | None = None
        self._history: StreamHistory | None = None
        self._verified: str | None = None
        """The server whose binlog had an offset's GTID position (see :meth:`_checked`), until
        a connection fails."""
        self._moves: dict[ServerOffset, ServerOffset] = {}
        """Offsets of another server (a checkpoint made before a failover) and the same points
        of this server's binlog (see :meth:`_moved`)."""

    def _riding_out(self, call: Callable[[], _T]) -> _T:
        """``call()`` (the driver's reads: idempotent), made again after a broken connection
        or while the server restarts, as :data:`READ_BACKOFF` says."""
        failures = 0
        while True:
            try:
                return call()
            except (ConnectionLost, TimeoutError, OSError, ServerError) as err:
                failures += 1
                self._verified = None  # a restart may bring back another binlog: check again
                attempts = READ_BACKOFF.attempts
                if not is_retryable(err) or (attempts is not None and failures > attempts):
                    raise
                delay = READ_BACKOFF.delay(failures)
                log.warning("binlog stream driver: %s; again in %.2f s", err, delay)
                time.sleep(delay)

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
        return self._riding_out(self._initial_offset)

    def _initial_offset(self) -> dict[str, Any]:
        history = self._driver_history()
        if self.start == "now":
            return self._seeded(history).dump()
        if history.empty:
            log.warning(
                "schema history %s is empty and the stream starts at %s, not now: tables are "
                "known from the DDL read from there on; the others have positional names and "
                "raw values unless the server logs binlog_row_metadata=FULL. Seed the history "
                "at the start (binlogkit spark sync does), or start now",
                self.history_path or "(temporary)",
                self.start,
            )
        if self.start != "oldest":
            file, colon, pos = self.start.rpartition(":")
            if not colon or not file or not pos.isdigit():
                raise BinlogError(
                    f"option start must be now, oldest or file:pos, not {self.start!r}"
                )
            with self._connection() as conn:
                return self._first(conn, file, int(pos)).dump()
        with self._connection() as conn:
            files = conn.query("SHOW BINARY LOGS").rows
            if not files or files[0][0] is None:
                raise BinlogError("the server has no binary logs (is log_bin on?)")
            return self._first(conn, files[0][0], BINLOG_HEADER_SIZE).dump()

    def _first(self, conn: MySQLConnection, file: str, pos: int) -> ServerOffset:
        """The stream's first offset, at ``file``:``pos`` of the server's binlog."""
        gtid, server = gtid_at(conn, file, pos), server_identity(conn)
        state = self._state_at(file, pos, server) if conn.is_mariadb else None
        return ServerOffset(file, pos, gtid, 0, server, state, gtid)

    def _state_at(self, file: str, pos: int, server: str) -> str | None:
        """The binlog state at ``file``:``pos`` of the server ``server`` names
        (:func:`binlog_state_at`)."""
        verify = self.plan.verify_checksum
        state = binlog_state_at(
            self.url,
            file,
            pos,
            server_id=self.server_id,
            verify_checksum=verify,
            connect=SameServer(server),
        )
        return None if state is None else str(state)

    def _seeded(self, history: StreamHistory) -> ServerOffset:
        """The position a query that starts now starts at: where the server's definitions,
        recorded in the history there, hold."""
        schema, start = stream_schema(self.url, "now")
        with self._connection() as conn:
            if not isinstance(start, tuple):  # the definitions could not be read (warned)
                now = _now(conn)
                return replace(now, since=now.gtid)
            at = self._first(conn, *start)
        history.seed(schema.catalog, at.position())
        return at

    def getDefaultReadLimit(self) -> ReadLimit:
        return self.limit

    def prepareForTriggerAvailableNow(self) -> None:
        self.target = self._riding_out(self._now)

    def _now(self) -> ServerOffset:
        with self._connection() as conn:
            return _now(conn)

    def _check(self, begin: ServerOffset, again: bool = False) -> ServerOffset:
        with self._connection() as conn:
            return self._checked(conn, begin, again)

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        return self._riding_out(lambda: self._latest_offset(start, limit))

    def _latest_offset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        begin = ServerOffset.load(start)
        with self._connection() as conn:
            begin = self._checked(conn, begin)
            if self.target is not None and self.target.server != begin.server:
                self.target = _now(conn)  # moved to another server: ends at its end instead
            end = self.target or _now(conn)
        end = replace(end, generation=begin.generation, since=begin.since)
        if end.key() <= begin.key():
            return start
        if isinstance(limit, ReadMaxBytes):
            end = self._bounded(begin, end, limit.max_bytes, _event_bytes)
        elif isinstance(limit, ReadMaxRows):
            end = self._bounded(begin, end, limit.max_rows, _event_rows)
        self._keep(begin, end)
        return end.dump()

    def _checked(
        self, conn: MySQLConnection, begin: ServerOffset, again: bool = False
    ) -> ServerOffset:
        """``begin`` as a position of this server's binlog, with the server's identity: the
        server is the offset's (or the offset names none), its file is there and, the first
        time this driver is given a position on this server (and after a failed connection),
        the server's GTID position there is the offset's (one of an older binlogkit, without
        it, is given it). Else, on MariaDB, the same point found by the offset's GTIDs
        (:meth:`_moved`): for a purged file of this server, or with ``failover`` for another
        server (without: :class:`ServerChanged`). ``again``: check the GTID position even
        after the first time."""
        server = server_identity(conn)
        moved = self._moves.get(begin)
        if moved is not None and moved.server == server:
            return moved
        files = {row[0] for row in conn.query("SHOW BINARY LOGS").rows}
        present = begin.file in files
        where = f"{begin.file}:{begin.pos} (GTIDs {begin.gtid or '(none)'})"
        if begin.server not in (None, server):
            assert begin.server is not None
            why = (
                f"{conn.spec.address} is now {describe(server)}, not {describe(begin.server)} "
                f"whose binlog the stream's position {where} names"
            )
            return self._elsewhere(conn, begin, present, server, why)
        if not present:
            if begin.gtid is None or not conn.is_mariadb:
                raise self._gone(begin.file)
            return self._moved(conn, begin, present, server)  # purged here: by its GTIDs
        if self._verified == server and not again and begin.gtid is not None:
            return replace(begin, server=server)
        here = gtid_at(conn, begin.file, begin.pos)
        if begin.gtid is None or not conn.is_mariadb or same_position(here, begin.gtid):
            self._verified = server
            return replace(begin, gtid=here if begin.gtid is None else begin.gtid, server=server)
        why = (
            f"the binlog of {conn.spec.address} ({describe(server)}) is at GTIDs "
            f"{here or '(none)'} at the stream's position {where} (another server behind the "
            "URL, or its binlog was reset or restored)"
        )
        return self._elsewhere(conn, begin, present, server, why)

    def _elsewhere(
        self, conn: MySQLConnection, begin: ServerOffset, present: bool, server: str, why: str
    ) -> ServerOffset:
        """``begin`` found on another server by GTID (:meth:`_moved`) when the stream may move
        (``failover``); else :class:`ServerChanged` saying ``why``."""
        if not self.failover:
            raise ServerChanged(why, hint=MOVE_HINT)
        return self._moved(conn, begin, present, server)

    def _moved(
        self, conn: MySQLConnection, begin: ServerOffset, present: bool, server: str
    ) -> ServerOffset:
        """The point of this server's binlog whose GTID position is exactly ``begin``'s (whose
        file and position name another binlog): where its first transaction not in that
        position starts, or the binlog's end. A clear error when there is none (GTIDs missing
        here, purged, or diverged), when this server wrote transactions before that point that
        ``begin``'s server had not (errant: :meth:`_refuse_errant`), or when the history holds
        DDL past ``begin`` read from the old server (a batch planned there and not committed).
        ``present``: whether the server has ``begin``'s file (then its GTID position there is
        another); ``server``: this server's identity."""
        assert begin.gtid is not None
        where = f"{begin.file}:{begin.pos} (GTIDs {begin.gtid or '(none)'})"
        lead = (
            f"the stream's checkpoint at {where} is not a point of this server's binlog "
            "(another server after a failover, a restore, RESET MASTER?)"
            if present
            else f"binlog {begin.file} is gone from the server: the stream's position {where} "
            "is purged, or this is another server"
        )
        resnapshot = "else start a new lake (a new checkpoint) from a fresh snapshot of the tables"
        try:
            wanted = MariaGtidList.parse(begin.gtid)
        except ValueError as err:
            raise BinlogError(f"{lead}, and its GTIDs are bad: {err}", hint=resnapshot) from None
        have = MariaGtidList.parse(conn.query("SELECT @@gtid_binlog_pos").rows[0][0] or "")
        missing = [str(g) for g in wanted.position() if not have.includes(g)]
        if missing:
            raise BinlogError(
                f"{lead}, and this server has not written GTIDs {', '.join(missing)} of it (its "
                f"gtid_binlog_pos is {have or '(none)'}): it is behind, or not a replica of "
                "the checkpoint's server",
                hint="let this server catch up (MASTER_GTID_WAIT) or point the stream at a "
                f"server that has them; {resnapshot}",
            )
        if self._driver_history().recorded_after(begin.position()):
            raise BinlogError(
                f"{lead}, and it is followed by a batch planned on the old server that "
                "changed tables (the schema history holds its DDL at that "
                "server's positions): it cannot be read from another server",
                hint=f"run the query on the old server until that batch is done; {resnapshot}",
            )
        # The binlog's end is taken before the dump: when the dump finds no transaction after
        # the GTIDs, there was none at that end either (one written since is read from there).
        end = _now(conn)
        found = self._first_after(wanted, lead, server)
        found = end if found is None else found
        here = gtid_at(conn, found.file, found.pos) if found.gtid is None else found.gtid
        if not same_position(here, begin.gtid):
            raise BinlogError(
                f"{lead}, and this server's binlog has its GTIDs but no point with exactly "
                f"them: before {found.file}:{found.pos}, its first "
                f"transaction after them, it is at {here or '(none)'} (transactions of the "
                "checkpoint's server missing here, of this server alone, or of several "
                "domains interleaved otherwise)",
                hint=resnapshot,
            )
        state = found.state
        if state is None:
            state = self._state_at(found.file, found.pos, server)
        self._refuse_errant(begin, state, f"{found.file}:{found.pos}", server, lead)
        generation, since = begin.generation + 1, begin.since
        moved = ServerOffset(found.file, found.pos, begin.gtid, generation, server, state, since)
        self._moves[begin] = moved
        log.warning(
            "binlog stream: the checkpoint's %s is not this server's binlog; going on at its "
            "GTID position, this server's %s:%s (the change log names its files %s...)",
            where,
            moved.file,
            moved.pos,
            moved.prefix,
        )
        return moved

    def _refuse_errant(
        self, begin: ServerOffset, state: str | None, point: str, server: str, lead: str
    ) -> None:
        """An error when this server's binlog state ``state`` at ``point``, the same point as
        ``begin``, holds GTIDs ``begin``'s server had not written there (:func:`errant_gtids`):
        transactions the lake never got. A warning when a state is unknown."""
        if begin.state is None or state is None:
            log.warning(
                "binlog stream: %s; errant transactions (written on this server alone before "
                "%s) cannot be checked: the %s binlog state is unknown",
                lead,
                point,
                "checkpoint's (written by an older binlogkit)" if state else "server's",
            )
            return
        since = None if begin.since is None else MariaGtidList.parse(begin.since)
        errant = errant_gtids(MariaGtidList.parse(state), MariaGtidList.parse(begin.state), since)
        if errant:
            raise BinlogError(
                f"{lead}, and this server ({describe(server)}) has transactions before that "
                f"point, its {point}, that the checkpoint's server had not written there: errant "
                f"GTIDs {', '.join(map(str, errant))} (each the last of its domain and server "
                f"id; this server's binlog state there is {state}, the checkpoint's server's "
                f"{begin.state}). The lake does not have their changes",
                hint="start a new lake from a fresh snapshot of this server, or point the stream "
                "at a server without them (replicas with gtid_strict_mode=ON and read_only get "
                "no errant transactions)",
            )

    def _first_after(self, gtids: MariaGtidList, lead: str, server: str) -> ServerOffset | None:
        """Where the first transaction after ``gtids`` starts in the binlog of the server
        ``server`` names (a GTID dump from there); None when it has none yet. ``lead`` begins
        the error when the server cannot find them."""
        quiet = DecodeOptions(verify_checksum=self.plan.verify_checksum, tables=_no_table)
        stream = BinlogStream(
            self.url,
            server_id=self.server_id,
            start=gtids,
            blocking=False,
            heartbeat=None,
            reconnect=None,
            options=quiet,
            connect=SameServer(server),
        )
        try:
            with stream:
                for event in stream:
                    if isinstance(event, MariaGtidEvent):
                        header = event.header
                        return ServerOffset(header.file or "", header.offset)
        except ServerError as err:
            if err.code == _GONE:
                raise BinlogError(
                    f"{lead}, and its GTID position is not in this server's binlogs either ({err})",
                    hint="point the stream at a server whose binlog holds the transactions "
                    "after the checkpoint (not purged, not diverged); else start a new lake "
                    "(a new checkpoint) from a fresh snapshot of the tables",
                ) from err
            raise
        return None

    def _bounded(
        self, begin: ServerOffset, end: ServerOffset, budget: int, measure: Callable[[Event], int]
    ) -> ServerOffset:
        """The last complete resume point up to ``end`` within ``budget`` (bytes or rows, as
        ``measure`` counts them) from ``begin``; the first one when a transaction is bigger.
        Its binlog state is ``begin``'s with the GTIDs read (or a GTID_LIST's, at a file's
        start), when ``begin``'s is known."""
        last, read = begin, 0
        state = kept = None if begin.state is None else MariaGtidList.parse(begin.state)
        with self._stream(begin, self.plan.options()) as stream:
            for event, point in stream.located():
                read += measure(event)
                if isinstance(event, MariaGtidEvent) and state is not None:
                    state = state.add(event.gtid)
                elif isinstance(event, MariaGtidListEvent):
                    state = event.gtids
                fields = _fields(point)
                if not fields[3]:  # a transaction is open
                    continue
                offset = _offset(fields, begin.generation)
                if offset.key() > end.key() or (read > budget and last != begin):
                    break
                last, kept = offset, state
                if read >= budget or offset.key() == end.key():
                    break
        if last == begin:
            return begin
        known = None if kept is None else str(kept)
        return replace(last, server=begin.server, state=known, since=begin.since)

    @contextmanager
    def _stream(
        self,
        begin: ServerOffset,
        options: DecodeOptions,
        schema: SchemaSource | None = None,
        reconnect: Backoff | None = None,
    ) -> Iterator[BinlogStream]:
        """A non-blocking dump from ``begin`` (reconnecting as ``reconnect`` says: the driver's
        are made again whole instead), each connection checked to reach ``begin``'s server
        (:class:`SameServer`); a clear error when its file is purged."""
        connect = MySQLConnection.connect
        if begin.server is not None:
            connect = SameServer(begin.server, (begin.file, begin.pos, begin.gtid))
        stream = BinlogStream(
            self.url,
            server_id=self.server_id,
            start=begin.resume_point(),
            blocking=False,
            heartbeat=None,
            reconnect=reconnect,
            options=options,
            schema=schema,
            file_prefix=begin.prefix,
            connect=connect,
        )
        try:
            with stream:
                yield stream
        except ServerError as err:
            if err.code == _GONE:
                raise self._gone(begin.file) from err
            raise

    def _events(
        self,
        begin: ServerOffset,
        end: ServerOffset,
        options: DecodeOptions,
        schema: SchemaSource | None = None,
        reconnect: Backoff | None = None,
    ) -> Iterator[Event]:
        """The events from ``begin`` to ``end``; an error if the server's binlog ends before."""
        stop = end.key()
        with self._stream(begin, options, schema, reconnect) as stream:
            for event, point in stream.located():
                yield event
                file, pos, _, _ = _fields(point)
                if (begin.generation, binlog_order(file), pos) >= stop:
                    return
        raise BinlogError(
            f"the server's binlog ended before {end.file}:{end.pos}, where the batch ends",
            hint="the server lost binlogs (a restore or RESET MASTER?): start a new query",
        )

    # -- the schema history ------------------------------------------------------------------

    def _driver_history(self) -> StreamHistory:
        if self._history is None:
            self._history = StreamHistory(self.history_path)
        return self._history

    def _keep(self, begin: ServerOffset, end: ServerOffset) -> StreamHistory:
        """The history with the DDL up to ``end`` recorded, read from a dump of the range that
        decodes only QUERY events (and what frames them)."""
        history = self._driver_history()
        no_tables = DecodeOptions(verify_checksum=self.plan.verify_checksum, tables=_no_table)

        def scan(schema: SchemaHistory, at: Position) -> None:
            for _ in self._events(ServerOffset.of(at), end, no_tables, schema):
                pass

        history.keep(begin.position(), end.position(), scan)
        return history

    # -- batches -----------------------------------------------------------------------------

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        begin, stop = ServerOffset.load(start), ServerOffset.load(end)
        if self._verified is None or begin in self._moves:  # a batch read again as it restarts
            # Planned on another server, either end may name a point of this one's binlog by
            # chance (the same file, position and GTIDs): both go on as this server's.
            moved = self._riding_out(lambda: self._check(begin))
            ended = self._riding_out(lambda: self._check(stop, again=True))
            generation = max(moved.generation, ended.generation)
            begin = replace(moved, generation=generation)
            stop = replace(ended, generation=generation)
        if stop.key() <= begin.key():
            return []
        history = self._riding_out(lambda: self._keep(begin, stop))
        return [ServerPartition(begin, stop, history.catalog_at(begin.position()))]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, ServerPartition)
        schema = None if partition.catalog is None else SchemaHistory(partition.catalog)
        options = self.plan.options()
        events = self._events(partition.start, partition.end, options, schema, READ_BACKOFF)
        typed = None
        if self.plan.table is not None and self.plan.columns is not None:
            name = ".".join(self.plan.table)
            typed = (typed_columns(self.plan.columns, name), name)
        return change_batches(self.plan.rules.filter(events), self.schema, typed=typed)

    def stop(self) -> None:
        if self._history is not None:
            self._history.close()


def server_columns(url: str, table: tuple[str, str]) -> tuple[ColumnInfo, ...]:
    """The columns of ``table`` for typed images, from its definition on the server now."""
    name = TableName(*table)
    with MySQLConnection.connect(ConnectionSpec.from_url(url)) as conn:
        definition = reread_tables(conn, Catalog(), [name]).table(*name)
    if definition is None:
        raise BinlogError(
            f"no table {name} on the server {ConnectionSpec.from_url(url).address}",
            hint="check the table name, or read without the table option",
        )
    return column_infos(definition)


def server_reader(
    plan: ReadPlan, options: dict[str, str], max_bytes: int | None
) -> ServerStreamReader:
    """The stream reader of the server of option ``url`` (row changes only), from the source's
    options (lower-case names)."""
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
        plan.schema(),
        options["url"],
        start=options.get("start", "now"),
        server_id=int(server_id),
        limit=limit,
        history_path=options.get("schemahistory"),
        failover=_flag(options, "failover"),
    )


def _flag(options: dict[str, str], name: str) -> bool:
    """A true/false option (default false)."""
    value = options.get(name, "false").lower()
    if value not in ("true", "false"):
        raise BinlogError(f"option {name} must be true or false, not {value!r}")
    return value == "true"
