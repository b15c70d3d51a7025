"""Reading a live server's binlog as a replica does: the stream API and decoded events.

Two levels:

- :class:`ReplicaStream` is the Python form of WL#7672's ``mysql_binlog_open``
  / ``mysql_binlog_fetch`` / ``mysql_binlog_close``: :meth:`~ReplicaStream.open`
  checks every parameter before anything is sent, does the set-up a replica
  does (checksum negotiation, heartbeat period, MariaDB capability and GTID
  variables, semi-sync, COM_REGISTER_SLAVE) and sends COM_BINLOG_DUMP or
  COM_BINLOG_DUMP_GTID; :meth:`~ReplicaStream.fetch` gives one event's raw
  bytes at a time (``buffer`` and ``size`` say the same), ``None`` at the end
  of a non-blocking dump; :meth:`~ReplicaStream.close` ends it. Calls out of
  turn raise :class:`StreamStateError`; the server's refusals (a purged log, a
  bad position) raise :class:`~binlogkit.errors.ServerError` with its message.

- :class:`BinlogStream` (what ``binlogkit.open("mysql://...")`` returns)
  decodes the events, knows each one's resume point, calls a per-transaction
  callback, acknowledges semi-sync events, and reconnects with exponential
  backoff after a broken connection, a killed dump thread or a server
  restart, continuing after the last complete transaction without losing or
  repeating an event.
"""

from __future__ import annotations

import logging
import re
import socket
import time
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Literal

from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.events import Event
from binlogkit.binlog.frozen import fast_constructor, frozen_dataclass
from binlogkit.binlog.tables import SchemaSource
from binlogkit.errors import BinlogError, ConnectionLost, ServerError
from binlogkit.gtid import GtidSet, MariaGtidList
from binlogkit.io.binlog_index import binlog_order
from binlogkit.io.mysql import MySQLConnection
from binlogkit.protocol.replication import (
    BINLOG_HEADER_SIZE,
    BinlogDump,
    BinlogDumpGtid,
    DumpFlag,
    EndOfStream,
    ExecutedGtids,
    RegisterSlave,
    ResumePoint,
    SemiSyncAck,
    StreamDecoder,
    is_stream_only,
    parse_stream_packet,
)
from binlogkit.protocol.spec import ConnectionSpec

log = logging.getLogger(__name__)
progress = logging.getLogger("binlogkit.progress")
"""Where a stream (and the relay) says it connected, and how far it is: INFO records that
the command line shows by default."""

__all__ = [
    "Backoff",
    "BinlogStream",
    "PointFields",
    "ReplicaStream",
    "Start",
    "StreamStateError",
    "check_start",
    "current_position",
    "open_stream",
]

Start = Literal["oldest", "now"] | tuple[str, int] | GtidSet | MariaGtidList | ResumePoint | str
"""Where a stream starts: ``"oldest"`` (the first binlog the server has), ``"now"``
(the end of its current binlog), ``(file, position)``, a GTID set (MySQL
:class:`GtidSet`, MariaDB :class:`MariaGtidList`, or either as text), or a
saved :class:`ResumePoint`."""

_FILE_NAME_MAX = 511  # FN_REFLEN - 1
_EVENT_PACKET = 0x00
"""The first byte of an event packet of the binlog stream (before the event's own bytes)."""
_U32_MAX = (1 << 32) - 1
_new_point = fast_constructor(ResumePoint)
PointFields = tuple[str, int, ExecutedGtids | None, bool]
"""A resume point's fields, kept by :class:`BinlogStream` until it is asked for
(``ResumePoint(*fields)`` makes it)."""
_MARIA_GTID_TEXT = re.compile(r"\s*\d+-\d+-\d+\s*(,\s*\d+-\d+-\d+\s*)*\Z")

# Server errors after which a new connection may succeed: the dump thread was
# killed or the server is going away. Anything else (a purged log, a bad
# position, access denied) is for the caller.
_RETRYABLE_CODES = frozenset(
    {
        1053,  # ER_SERVER_SHUTDOWN
        1077,  # ER_NORMAL_SHUTDOWN
        1079,  # ER_SHUTDOWN_COMPLETE
        1152,  # ER_ABORTING_CONNECTION
        1317,  # ER_QUERY_INTERRUPTED
        1927,  # ER_CONNECTION_KILLED (MariaDB)
        2013,  # CR_SERVER_LOST
        3169,  # ER_SESSION_WAS_KILLED (MySQL)
        4031,  # ER_CLIENT_INTERACTION_TIMEOUT (MySQL)
    }
)


def is_retryable(err: BaseException) -> bool:
    """Whether a new connection may succeed after ``err`` (a broken connection, a killed
    dump thread, a server going away) rather than fail the same way again."""
    return not isinstance(err, ServerError) or err.code in _RETRYABLE_CODES


class StreamStateError(BinlogError):
    """A stream call out of turn (fetch before open, open twice, a call after close...)."""


def _check_server_id(server_id: object) -> int:
    if not isinstance(server_id, int) or isinstance(server_id, bool):
        raise ValueError(f"server_id must be an int, not {type(server_id).__name__}")
    if not 1 <= server_id <= _U32_MAX:
        raise ValueError(
            f"server_id {server_id} is out of range 1..{_U32_MAX}",
        )
    return server_id


def _check_file(file: str) -> str:
    if not isinstance(file, str) or not file:
        raise ValueError("a binlog file name is a non-empty string")
    if "/" in file or "\\" in file or "\0" in file or len(file.encode()) > _FILE_NAME_MAX:
        raise ValueError(
            f"invalid binlog file name {file!r}: give the base name as SHOW BINARY LOGS lists it"
        )
    return file


def _check_position(position: object) -> int:
    if not isinstance(position, int) or isinstance(position, bool):
        raise ValueError(f"position must be an int, not {type(position).__name__}")
    if not BINLOG_HEADER_SIZE <= position <= _U32_MAX:
        raise ValueError(
            f"position {position} is out of range {BINLOG_HEADER_SIZE}..{_U32_MAX} "
            "(4 is the first event of a file)"
        )
    return position


def parse_gtids(text: str) -> ExecutedGtids:
    """A GTID set from text: MariaDB ``domain-server-seq,...`` or MySQL ``uuid:1-5,...``."""
    if _MARIA_GTID_TEXT.match(text):
        return MariaGtidList.parse(text)
    return GtidSet.parse(text)


@frozen_dataclass
class _Request:
    """A resolved start: COM_BINLOG_DUMP at (file, position), or a GTID dump."""

    file: str
    position: int
    gtids: ExecutedGtids | None = None


class ReplicaStream:
    """One binlog dump on one connection (WL#7672's MYSQL_RPL): open, fetch, close.

    ``source`` is a URL, a :class:`ConnectionSpec` (the stream connects with
    ``connect`` when opened) or a connected :class:`MySQLConnection`, which
    the stream then owns until :meth:`close`. ``server_id`` names the replica
    (a running dump with the same id is ended by the server, so each reader
    needs its own). ``heartbeat``: the source sends a heartbeat after this
    many idle seconds (None: never); a connection silent for three periods
    counts as lost. ``semi_sync``: ask to acknowledge events (only when the
    source has semi-sync enabled). ``annotate_rows``: MariaDB sends its
    ANNOTATE_ROWS events (as in its files).
    """

    def __init__(
        self,
        source: ConnectionSpec | MySQLConnection | str,
        *,
        server_id: int,
        heartbeat: float | None = 30.0,
        semi_sync: bool = False,
        annotate_rows: bool = True,
        connect: Callable[[ConnectionSpec], MySQLConnection] = MySQLConnection.connect,
    ) -> None:
        self.server_id = _check_server_id(server_id)
        if heartbeat is not None and not 0.001 <= heartbeat <= 4294967:
            raise ValueError(f"heartbeat period {heartbeat} s is out of range 0.001..4294967")
        if isinstance(source, str):
            source = ConnectionSpec.from_url(source)
        self._spec = source if isinstance(source, ConnectionSpec) else None
        self._conn: MySQLConnection | None = source if isinstance(source, MySQLConnection) else None
        self._connect = connect
        self.heartbeat = heartbeat
        self.semi_sync = semi_sync
        self.annotate_rows = annotate_rows
        self.state: Literal["new", "open", "ended", "failed", "closed"] = "new"
        self.checksum = True
        """Whether the source's events carry a CRC32 (learnt when opening)."""
        self.request: _Request | None = None
        self.buffer: bytes = b""
        """The last event fetched (FR2.6)."""
        self.size = 0
        """Its size (FR2.7): 0 at the end of a non-blocking dump, -1 after a failure."""
        self.ack_requested = False
        """The source waits for a semi-sync ACK of the last event fetched."""

    @property
    def connection(self) -> MySQLConnection | None:
        return self._conn

    # -- open ---------------------------------------------------------------------------------

    def open(
        self,
        start: Start | None = None,
        *,
        file: str | None = None,
        position: int = BINLOG_HEADER_SIZE,
        gtids: ExecutedGtids | str | None = None,
        flags: int = 0,
        gtid_strict_mode: bool = False,
    ) -> _Request:
        """Start the dump; returns where it starts (file, position, GTIDs).

        Give at most one of ``start`` (see :data:`Start`), ``file`` (with
        ``position``) or ``gtids``; with none the dump starts at the oldest
        binlog. ``flags``: :class:`DumpFlag` bits (NON_BLOCK ends at the end
        of the last binlog). Raises ``ValueError`` for bad parameters (before
        anything is sent), :class:`ServerError` when the server refuses.
        """
        if self.state != "new":
            raise StreamStateError(f"open() on a stream that is {self.state}")
        if sum(x is not None for x in (start, file, gtids)) > 1:
            raise ValueError("give one of start, file (and position) or gtids")
        if file is not None:
            start = (file, position)
        elif gtids is not None:
            start = gtids
        elif start is None:
            start = "oldest"
        start = check_start(start)
        if not isinstance(flags, int) or not 0 <= flags <= 0xFFFF:
            raise ValueError(f"dump flags {flags!r} are not a 16-bit number")
        conn = self._conn
        if conn is None:
            assert self._spec is not None
            conn = self._conn = self._connect(self._spec)
        elif conn.closed:
            raise StreamStateError("open() on a closed connection")
        try:
            request = self._resolve(conn, start)
            self._set_up(conn, request, gtid_strict_mode)
            self._dump(conn, request, flags)
        except BaseException:
            self.state = "failed"
            raise
        self.request = request
        self.state = "open"
        return request

    def _resolve(self, conn: MySQLConnection, start: Start) -> _Request:
        if isinstance(start, ResumePoint):
            if start.file:
                return _Request(start.file, start.position, start.gtids)
            if start.gtids is None:
                raise ValueError("a resume point needs a file or GTIDs")
            start = start.gtids
        if isinstance(start, tuple):
            return _Request(*start)
        if isinstance(start, GtidSet | MariaGtidList):
            if isinstance(start, GtidSet) == conn.is_mariadb:
                wanted = "MariaDB domain-server-seq" if conn.is_mariadb else "MySQL uuid:interval"
                raise ValueError(f"this server takes {wanted} GTIDs, not {start}")
            return _Request("", BINLOG_HEADER_SIZE, start)
        if start == "oldest":
            rows = conn.query("SHOW BINARY LOGS").rows
            if not rows or rows[0][0] is None:
                raise BinlogError("the server has no binary logs (is log_bin on?)")
            return _Request(rows[0][0], BINLOG_HEADER_SIZE)
        file, position = current_position(conn)
        return _Request(file, position)

    def _set_up(self, conn: MySQLConnection, request: _Request, strict: bool) -> None:
        """The session variables a replica sets before its dump."""
        checksum = conn.query("SELECT @@global.binlog_checksum").rows
        self.checksum = bool(checksum and (checksum[0][0] or "NONE").upper() != "NONE")
        # MySQL 8.0.26+ reads the @source_* names, older servers and MariaDB @master_*.
        conn.execute(
            "SET @master_binlog_checksum = @@global.binlog_checksum,"
            " @source_binlog_checksum = @@global.binlog_checksum"
        )
        if self.heartbeat is not None:
            nanoseconds = round(self.heartbeat * 1e9)
            conn.execute(
                f"SET @master_heartbeat_period = {nanoseconds},"
                f" @source_heartbeat_period = {nanoseconds}"
            )
            conn.settimeout(3 * self.heartbeat + 5)
        if conn.is_mariadb:
            conn.execute("SET @mariadb_slave_capability = 4")  # MARIA_SLAVE_CAPABILITY_GTID
            if isinstance(request.gtids, MariaGtidList) and not request.file:
                conn.execute(
                    f"SET @slave_connect_state = '{request.gtids}',"
                    f" @slave_gtid_strict_mode = {int(strict)},"
                    " @slave_gtid_ignore_duplicates = 0"
                )
        if self.semi_sync:
            enabled = conn.query("SHOW VARIABLES LIKE 'rpl_semi_sync_%master_enabled'").rows
            enabled += conn.query("SHOW VARIABLES LIKE 'rpl_semi_sync_source_enabled'").rows
            if not any(row[1] == "ON" for row in enabled):
                log.warning("semi-sync asked for, but the source has it off: not acknowledging")
                self.semi_sync = False
            else:
                conn.execute("SET @rpl_semi_sync_slave = 1, @rpl_semi_sync_replica = 1")

    def _dump(self, conn: MySQLConnection, request: _Request, flags: int) -> None:
        register = RegisterSlave(self.server_id, host=socket.gethostname()[:60])
        conn.send_command(register.encode())
        conn.read_packet()
        conn.end_command()
        if conn.is_mariadb and self.annotate_rows:
            flags |= DumpFlag.SEND_ANNOTATE_ROWS
        if isinstance(request.gtids, GtidSet) and not request.file:
            command: BinlogDump | BinlogDumpGtid = BinlogDumpGtid(
                self.server_id, request.gtids, flags=flags & ~DumpFlag.SEND_ANNOTATE_ROWS
            )
        else:
            command = BinlogDump(request.file, request.position, self.server_id, flags)
        log.debug("dump: %s", command)
        conn.send_command(command.encode())
        where = f"{request.file}:{request.position}" if request.file else f"after {request.gtids}"
        progress.info(
            "connected to %s (%s), streaming from %s", conn.spec.address, conn.server_version, where
        )

    # -- fetch ----------------------------------------------------------------------------------

    def fetch(self) -> bytes | None:
        """The next event's bytes (header through checksum); None when a non-blocking dump ends.

        Raises :class:`ServerError` when the server ends the dump with an error,
        :class:`ConnectionLost` when the connection breaks or stays silent.
        """
        if self.state != "open":
            if self.state == "ended":
                return None
            raise StreamStateError(
                f"fetch() on a stream that is {self.state}",
                hint="open() it first" if self.state == "new" else None,
            )
        conn = self._conn
        assert conn is not None
        try:
            payload = conn.read_packet()
            packet = parse_stream_packet(payload, semi_sync=self.semi_sync)
        except TimeoutError as err:
            raise self._timed_out(conn) from err
        except BaseException:
            self._fail()
            raise
        if isinstance(packet, EndOfStream):
            conn.end_command()
            self.state = "ended"
            self.buffer, self.size, self.ack_requested = b"", 0, False
            return None
        self.buffer = packet.event
        self.size = len(packet.event)
        self.ack_requested = bool(packet.ack_requested)
        return packet.event

    def fetch_many(self) -> list[bytes] | None:
        """The bytes of the next events: every event received so far, after waiting for one;
        None when a non-blocking dump ends.

        The same events as calls of :meth:`fetch`, cut from the socket's data in
        one go; ``buffer``, ``size`` and ``ack_requested`` describe the last one.
        A semi-sync stream gives one event at a time (each may need its ACK).
        """
        conn = self._conn
        if self.state == "open" and not self.semi_sync:
            assert conn is not None
            try:
                events = conn.read_payloads(_EVENT_PACKET, 1)
            except TimeoutError as err:
                raise self._timed_out(conn) from err
            except BaseException:
                self._fail()
                raise
            if events:
                last = events[-1]
                self.buffer, self.size, self.ack_requested = last, len(last), False
                return events
        event = self.fetch()  # the end, an error, or a packet only fetch() takes
        return None if event is None else [event]

    def _timed_out(self, conn: MySQLConnection) -> ConnectionLost:
        self._fail()
        return ConnectionLost(
            f"no event or heartbeat from {conn.spec.address} for three heartbeat periods"
        )

    def ack(self, file: str, position: int) -> None:
        """Acknowledge to a semi-sync source that the events up to ``file:position`` are safe."""
        if self.state != "open" or not self.semi_sync:
            raise StreamStateError("ack() needs an open stream with semi_sync on")
        conn = self._conn
        assert conn is not None
        conn.write_packet(SemiSyncAck(file, position).encode(), seq=0)

    def _fail(self) -> None:
        self.state = "failed"
        self.size = -1

    # -- close ----------------------------------------------------------------------------------

    def close(self) -> None:
        """End the stream (FR3). A dump still running can only end with its connection,
        so that is closed too; after a non-blocking dump ended, a connection given
        to the stream stays open for the caller."""
        if self.state == "closed":
            return
        conn = self._conn
        keep = self.state in ("ended", "new") and self._spec is None
        self.state = "closed"
        if conn is not None and not keep:
            conn.close()

    def abort(self) -> None:
        """Close the connection from another thread, waking a fetch() blocked on it."""
        conn = self._conn
        if conn is not None:
            conn.shutdown()
        self.close()

    def __enter__(self) -> ReplicaStream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def check_start(start: object) -> Start:
    """``start`` checked and normalised (GTID text parsed), or ValueError."""
    if isinstance(start, ResumePoint | GtidSet | MariaGtidList):
        return start
    if isinstance(start, tuple):
        if len(start) != 2:
            raise ValueError(f"a start position is (file, position), not {start!r}")
        return (_check_file(start[0]), _check_position(start[1]))
    if start in ("oldest", "now"):
        return start
    if isinstance(start, str):
        try:
            return parse_gtids(start)
        except ValueError as err:
            raise ValueError(
                f"start {start!r} is neither 'oldest', 'now', (file, position) nor GTIDs: {err}"
            ) from None
    raise ValueError(f"cannot start a stream at {start!r}")


def current_position(conn: MySQLConnection) -> tuple[str, int]:
    """The end of the source's current binlog (MySQL 8.4 only knows SHOW BINARY LOG STATUS)."""
    statements = ["SHOW MASTER STATUS", "SHOW BINARY LOG STATUS"]
    if not conn.is_mariadb and _version(conn.server_version) >= (8, 2):
        statements.reverse()
    last: ServerError | None = None
    for sql in statements:
        try:
            rows = conn.query(sql).rows
        except ServerError as err:
            last = err
            continue
        if not rows or rows[0][0] is None or rows[0][1] is None:
            raise BinlogError("the server has no binary log (is log_bin on?)")
        return rows[0][0], int(rows[0][1])
    assert last is not None
    raise last


def _version(text: str) -> tuple[int, ...]:
    found = re.match(r"(\d+)\.(\d+)", text)
    return (int(found[1]), int(found[2])) if found else (0, 0)


# -- the high level -------------------------------------------------------------------------


@frozen_dataclass
class Backoff:
    """Reconnect timing: ``initial`` seconds, doubling up to ``maximum``; ``attempts`` in a
    row before giving up (None: never give up).

    ``first_attempts`` bounds the attempts while no connection has worked yet (a wrong
    host or port, a server that is not MySQL): by default the first failure is final;
    None: as ``attempts``.
    """

    initial: float = 0.1
    maximum: float = 10.0
    attempts: int | None = None
    first_attempts: int | None = 0

    def delay(self, attempt: int) -> float:
        """The wait before reconnect ``attempt`` (1 for the first)."""
        return float(min(self.maximum, self.initial * 2 ** (attempt - 1)))

    def gives_up(self, failures: int, connected: bool) -> bool:
        """Whether ``failures`` in a row are too many (``connected``: a connection worked)."""
        limit = self.attempts if connected or self.first_attempts is None else self.first_attempts
        return limit is not None and failures > limit


_EventKey = tuple[tuple[str, int, str], int, int]


def _event_key(first: Event, index: int) -> _EventKey:
    """Where an event sits in the stream, in stream order: its file, its packet's offset (the
    events a TRANSACTION_PAYLOAD holds share it) and its index in the packet."""
    header = first.header
    return (binlog_order(header.file or ""), header.offset, index)


class BinlogStream:
    """The decoded events of a live server, each with its resume point; a context manager.

    Iterating gives the same :class:`Event` objects that reading the server's
    files gives (same types, values, ``header.file`` and ``header.offset``),
    so everything built for files (row changes, listings) takes a live stream
    unchanged. The resume point is kept beside the events rather than inside
    them: :attr:`resume_point` is the point after the event given last, and
    :meth:`pairs` gives ``(event, point)`` pairs for callers that want both
    together. Save :attr:`resume_point` (when ``complete``) or take it in
    ``on_transaction`` (called once the caller has handled the event that
    closes a transaction, before the next is read) and pass it back as
    ``start`` to continue exactly there.

    Events that exist only in the network stream (heartbeats, the fake
    ROTATE and GTID_LIST, a re-sent format description) are left out unless
    ``include_stream_only``. ``annotate_rows``: MariaDB sends its
    ANNOTATE_ROWS events (the statement of each rows event, as in its files);
    False leaves them out of the stream.

    ``reconnect`` (a :class:`Backoff`, None to fail at once): when the
    connection breaks, the dump thread is killed or the server restarts, a
    new dump starts at the last complete transaction (by GTIDs when the
    stream started by GTIDs, else by file and position) and events already
    given are skipped, so none is lost or repeated. ``schema`` completes the
    columns of table maps (see :class:`~binlogkit.binlog.decoder.BinlogDecoder`),
    across reconnections. ``file_prefix`` goes before the events' ``header.file`` (see
    :class:`~binlogkit.protocol.replication.StreamDecoder`). ``connect`` makes the
    connections (tests put a proxy there); ``sleep`` waits between attempts.
    """

    def __init__(
        self,
        source: ConnectionSpec | str,
        *,
        server_id: int,
        start: Start = "now",
        blocking: bool = True,
        heartbeat: float | None = 30.0,
        semi_sync: bool = False,
        gtid_strict_mode: bool = False,
        on_transaction: Callable[[ResumePoint], None] | None = None,
        reconnect: Backoff | None = Backoff(),
        include_stream_only: bool = False,
        annotate_rows: bool = True,
        options: DecodeOptions | None = None,
        schema: SchemaSource | None = None,
        file_prefix: str = "",
        connect: Callable[[ConnectionSpec], MySQLConnection] = MySQLConnection.connect,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.spec = ConnectionSpec.from_url(source) if isinstance(source, str) else source
        self.server_id = _check_server_id(server_id)
        self.start = check_start(start)
        self.blocking = blocking
        self.heartbeat = heartbeat
        self.semi_sync = semi_sync
        self.gtid_strict_mode = gtid_strict_mode
        self.on_transaction = on_transaction
        self.reconnect = reconnect
        self.include_stream_only = include_stream_only
        self.annotate_rows = annotate_rows
        self.options = options or DecodeOptions()
        self.schema = schema
        self.file_prefix = file_prefix
        self._connect = connect
        self._sleep = sleep
        self._point: ResumePoint | PointFields | None = None
        self.reconnects = 0
        """How many times the stream reconnected."""
        self._stream: ReplicaStream | None = None
        self._iter: Iterator[Event] | None = None
        self._closed = False

    @property
    def resume_point(self) -> ResumePoint | None:
        """The resume point after the event given last (None before the first)."""
        return None if self._point is None else self._given_point()

    def _given_point(self) -> ResumePoint:
        """:attr:`resume_point` once an event is given: made from its fields on first use."""
        point = self._point
        if isinstance(point, tuple):  # kept as its fields while nobody asked (see _run)
            point = self._point = _new_point(*point)
        assert point is not None
        return point

    @property
    def file(self) -> str | None:
        """The binlog file the next event comes from, when known."""
        return None if self.resume_point is None else self.resume_point.file

    def __iter__(self) -> Iterator[Event]:
        if self._iter is None:
            self._iter = self._run()
        return self._iter

    def pairs(self) -> Iterator[tuple[Event, ResumePoint]]:
        """The events, each with the resume point after it."""
        for event in self:
            point = self.resume_point
            assert point is not None  # set before each event is given
            yield event, point

    def located(self) -> Iterator[tuple[Event, ResumePoint | PointFields]]:
        """:meth:`pairs`, each resume point given as its fields while it is not made yet
        (for readers that seldom need one)."""
        for event in self:
            point = self._point
            assert point is not None  # set before each event is given
            yield event, point

    def close(self) -> None:
        self._closed = True
        if self._stream is not None:
            self._stream.close()
            self._stream = None

    def abort(self) -> None:
        """End the stream from another thread: an iteration blocked on the server wakes
        and ends (after the event it has given last; no reconnect)."""
        self._closed = True
        stream = self._stream
        if stream is not None:
            stream.abort()

    def __enter__(self) -> BinlogStream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _run(self) -> Iterator[Event]:
        """The events; :attr:`resume_point` is the point after each when it is given."""
        start: Start = self.start
        resume_by_gtid = isinstance(start, GtidSet | MariaGtidList)
        # The last event given (as the first event of its packet and its index there)
        # and, after a reconnect, the key of that event: events up to it are given already.
        last_first: Event | None = None
        last_index = 0
        replay: _EventKey | None = None
        was_complete: bool | None = None  # no transaction open after the event given last
        include_stream_only = self.include_stream_only
        failures = 0
        connected = False
        flags = 0 if self.blocking else DumpFlag.NON_BLOCK
        while not self._closed:
            stream = self._stream = ReplicaStream(
                self.spec,
                server_id=self.server_id,
                heartbeat=self.heartbeat,
                semi_sync=self.semi_sync,
                annotate_rows=self.annotate_rows,
                connect=self._connect,
            )
            decoder: StreamDecoder | None = None
            try:
                request = stream.open(start, flags=flags, gtid_strict_mode=self.gtid_strict_mode)
                connected = True
                decoder = StreamDecoder(
                    request.file,
                    request.position,
                    request.gtids,
                    checksum=stream.checksum,
                    options=self.options,
                    schema=self.schema,
                    file_prefix=self.file_prefix,
                )
                decode = decoder.decode
                tracker = decoder.tracker
                while (batch := stream.fetch_many()) is not None:
                    failures = 0
                    for raw in batch:
                        packet = decode(raw)
                        if not isinstance(packet, list):
                            # The usual packet: one event, not stream-only, and the tracker
                            # right after it: its resume point is made only if asked for.
                            if replay is not None:
                                if _event_key(packet, 0) <= replay:
                                    continue
                                replay = None  # keys only grow: no need to compare again
                            last_first, last_index = packet, 0
                            complete = not tracker.open
                            self._point = (tracker.file, tracker.position, tracker.gtids, complete)
                            closes = complete and was_complete is False
                            was_complete = complete
                            yield packet
                            if closes and self.on_transaction is not None:
                                self.on_transaction(self._given_point())
                            continue
                        for index, (event, point) in enumerate(packet):
                            if is_stream_only(event):
                                if not include_stream_only:
                                    continue
                            else:
                                if replay is not None:
                                    if _event_key(packet[0][0], index) <= replay:
                                        continue
                                    replay = None  # keys only grow: no need to compare again
                                last_first, last_index = packet[0][0], index
                            self._point = point
                            closes = point.complete and was_complete is False
                            was_complete = point.complete
                            yield event
                            if closes and self.on_transaction is not None:
                                self.on_transaction(point)
                    if stream.ack_requested:
                        acked = decoder.tracker.point
                        stream.ack(acked.file, acked.position)
                if self.blocking and not self._closed:
                    # MariaDB ends a blocking dump with a plain EOF packet when it shuts down.
                    raise ConnectionLost("the server ended the blocking dump (shutting down?)")
                stream.close()
                return
            except (ConnectionLost, TimeoutError, OSError, ServerError) as err:
                stream.close()
                if self._closed:  # aborted from another thread
                    return
                retryable = is_retryable(err)
                failures += 1
                backoff = self.reconnect
                if not retryable or backoff is None or backoff.gives_up(failures, connected):
                    raise
                if last_first is not None:
                    replay = _event_key(last_first, last_index)
                if decoder is not None:
                    resume = decoder.tracker.last_complete
                    if resume_by_gtid and resume.gtids is not None:
                        start = ResumePoint("", BINLOG_HEADER_SIZE, resume.gtids)
                    elif resume.file:
                        start = resume
                delay = backoff.delay(failures)
                log.warning("binlog stream: %s; reconnecting in %.2f s at %s", err, delay, start)
                self.reconnects += 1
                self._sleep(delay)
            finally:
                self._stream = None


def open_stream(url: str | ConnectionSpec, **kwargs: object) -> BinlogStream:
    """``binlogkit.open("mysql://...")``: a :class:`BinlogStream` (see its parameters).

    Decoding options (``verify_checksum``, ``on_unknown``, ``raw_values``...)
    are accepted as with files.
    """
    decode_names = set(DecodeOptions.__dataclass_fields__)
    decode = {k: kwargs.pop(k) for k in list(kwargs) if k in decode_names}
    if "options" not in kwargs and decode:
        kwargs["options"] = DecodeOptions(**decode)  # type: ignore[arg-type]
    return BinlogStream(url, **kwargs)  # type: ignore[arg-type]
