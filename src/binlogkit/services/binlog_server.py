"""A binlog server: real replicas replicate from a folder of binlog files (asyncio).

:class:`BinlogServer` listens where a primary would, lets in the configured
replication users (the server side of :mod:`binlogkit.protocol.server`, TLS
when given a certificate), answers the set-up queries replicas send
(:mod:`binlogkit.protocol.replica_queries`, from the served files and the
configuration), takes COM_REGISTER_SLAVE, and serves COM_BINLOG_DUMP and
COM_BINLOG_DUMP_GTID (and MariaDB's GTID starts) with
:class:`~binlogkit.protocol.binlog_sender.DumpSender` out of a
:class:`~binlogkit.services.binlog_directory.BinlogDirectory`: bytes and
files that appear in the folder are sent as they come, with heartbeats while
there is nothing new, so ``binlogkit relay`` into a folder and this server on
it make a relay tier. Semi-sync replicas are asked for an ACK at the tail of
what is served; their ACKs are recorded, shown to the observers, and let
:meth:`BinlogServer.wait_for_ack` (a commit's wait, with a timeout) go on.
Dump observers (:mod:`binlogkit.services.dump_observers`) may alter, drop or
add to what each replica gets. ``SHOW PROCESSLIST`` and ``SHOW SLAVE HOSTS``
show who is connected and where each dump is; ``KILL`` ends a user's own
connection.

Each connection is a task: many replicas are served at once, each at its
own place; a client not yet logged in has :data:`LOGIN_TIMEOUT` per step and
small packets only, a logged-in one packets of :data:`MAX_PACKET` at most and
:data:`IDLE_TIMEOUT` between commands (MariaDB's ``wait_timeout``; a replica in
its dump is idle by nature and is not timed out, but a dump whose replica takes
no bytes for :data:`WRITE_TIMEOUT` ends, as ``net_write_timeout`` ends it).
:class:`BinlogServerThread` runs a server in a thread of its own for
synchronous programs. Passwords are kept as
:class:`~binlogkit.protocol.auth.base.Secret` and stored as the plugins'
credentials only; they never reach a log line or an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import re
import ssl
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import TracebackType

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import BinlogError
from binlogkit.io.server_channel import ServerChannel
from binlogkit.protocol.auth.base import Secret, make_credential
from binlogkit.protocol.binlog_sender import (
    ER_SOURCE_FATAL_ERROR_READING_BINLOG,
    DumpRefused,
    DumpSender,
    EventRun,
    Flavor,
    Outgoing,
    ReplicaSettings,
    UntilReached,
)
from binlogkit.protocol.constants import Command, ErrorCode
from binlogkit.protocol.packets import NEED_DATA
from binlogkit.protocol.replica_queries import (
    QueryError,
    QueryOk,
    ServedBinlog,
    answer_query,
)
from binlogkit.protocol.replication import (
    ACK_MAGIC,
    BinlogDump,
    BinlogDumpGtid,
    RegisterSlave,
    SemiSyncAck,
)
from binlogkit.protocol.server import (
    Account,
    Authenticated,
    AuthFailed,
    ClientPacket,
    ClientQuit,
    CommandReceived,
    ServerConnection,
    ServerState,
    StartTls,
)
from binlogkit.services.binlog_directory import BinlogDirectory
from binlogkit.services.dump_observers import DumpEvent, DumpObserver
from binlogkit.services.server_variables import ServerVariables

__all__ = ["BinlogServer", "BinlogServerThread", "DropConnection", "ReplicaSession", "User"]

log = logging.getLogger(__name__)

ER_UNKNOWN_ERROR = 1105
ER_NO_SUCH_THREAD = 1094
ER_KILL_DENIED = 1095
_KILL = re.compile(r"KILL\s+(?:CONNECTION\s+|QUERY\s+)?(\d+)", re.I)
_PROCESSLIST = re.compile(r"SHOW\s+(?:FULL\s+)?PROCESSLIST", re.I)
_REPLICAS = re.compile(r"SHOW\s+(?:SLAVE\s+HOSTS|REPLICAS)", re.I)

LOGIN_TIMEOUT = 10.0
"""Seconds a client has for each packet until it is logged in."""
LOGIN_PACKET_MAX = 1 << 16
"""The largest packet taken before login (a handshake response is far smaller)."""
IDLE_TIMEOUT = 28800.0
"""Seconds a logged-in client may stay silent between commands (MariaDB's wait_timeout)."""
WRITE_TIMEOUT = 60.0
"""Seconds a dump waits for its replica to take bytes (MariaDB's net_write_timeout)."""
SEMI_SYNC_TIMEOUT = 10.0
"""Seconds :meth:`BinlogServer.wait_for_ack` waits by default (rpl_semi_sync_master_timeout)."""
MAX_PACKET = 1 << 20
"""The largest packet a logged-in client may send (replicas send queries and ACKs)."""
POLL = 0.05
"""Seconds between looks at the folder while a dump waits for new bytes."""
_READ = 1 << 20
"""Bytes of a binlog read at once."""
_BATCH = 1 << 18
"""Bytes of event packets written at once (one system call, not one per event)."""


@frozen_dataclass
class User:
    """A replication user: name, password (kept secret), auth plugin, and whether it must
    come over TLS."""

    name: str
    password: Secret = field(repr=False)
    plugin: str = "mysql_native_password"
    require_tls: bool = False

    def account(self) -> Account:
        credential = make_credential(self.plugin, self.password)
        return Account(self.name, self.plugin, credential, self.require_tls)


@dataclass(slots=True)
class ReplicaSession:
    """One client connection: who it is, what it set, what it asked for, where its dump is."""

    number: int
    peer: str
    user: str | None = None
    variables: dict[str, str | None] = field(default_factory=dict)
    registered: RegisterSlave | None = None
    dump: BinlogDump | BinlogDumpGtid | None = None
    file: str = ""
    position: int = 0
    acked: SemiSyncAck | None = None
    connected_at: float = field(default_factory=time.time)
    waiting: bool = False
    """The dump has sent everything there is and waits for more."""

    def state(self) -> str:
        """What the connection does, as SHOW PROCESSLIST says it."""
        if self.dump is None:
            return "" if self.user else "login"
        where = f"{self.file}:{self.position}"
        return f"waiting for more at {where}" if self.waiting else f"sending at {where}"


async def _login_packet(channel: ServerChannel) -> bytes:
    """One packet of a client not yet logged in (at most :data:`LOGIN_PACKET_MAX` bytes)."""
    header = await channel.read_exactly(4)
    length = int.from_bytes(header[:3], "little")
    if length > LOGIN_PACKET_MAX:
        raise _Dropped(f"a {length}-byte packet before login")
    return header + await channel.read_exactly(length)


class _Dropped(Exception):
    """The connection is to be closed now."""


class DropConnection(Exception):
    """Raised by :meth:`BinlogServer.send_event`: send ``data`` (what was made so far, or
    part of a packet) and close the connection."""

    def __init__(self, reason: str, data: bytes = b"") -> None:
        super().__init__(reason)
        self.data = data


class BinlogServer:
    """Serves the binlogs of ``directory`` on ``host``:``port`` (0: a free port, see :attr:`port`).

    ``users``: who may connect. ``server_id``: the id the served events' fake
    events carry and SHOW VARIABLES gives. ``version``: the version in the
    greeting (default: the binlogs' own, with MariaDB's ``5.5.5-`` prefix).
    ``tls``: a server-side SSL context, offered to clients that ask for TLS.
    ``semi_sync``: offer semi-sync. ``observers``: :class:`DumpObserver` objects that see
    (and may alter, drop or add to) the events each replica is sent. ``idle_timeout``:
    seconds a logged-in client may stay silent between commands.
    """

    def __init__(
        self,
        directory: str | BinlogDirectory,
        users: Sequence[User],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        server_id: int = 1,
        version: str | None = None,
        tls: ssl.SSLContext | None = None,
        semi_sync: bool = False,
        observers: Sequence[DumpObserver] = (),
        idle_timeout: float = IDLE_TIMEOUT,
    ) -> None:
        self.directory = (
            directory if isinstance(directory, BinlogDirectory) else BinlogDirectory(directory)
        )
        if not users:
            raise BinlogError("a binlog server needs at least one user")
        self._accounts = {u.name: u.account() for u in users}
        self.host = host
        self.port = port
        self.server_id = server_id
        self.flavor: Flavor = "mariadb"
        """The binlogs' server flavour (read from the first binlog once there is one)."""
        self.version = version or ""
        """The version in the greeting (read from the first binlog once there is one)."""
        self._version_given = version
        self._known = False
        if self.directory.names():
            self._learn()
        self.tls = tls
        self.semi_sync = semi_sync
        self.observers = list(observers)
        self.login_timeout = LOGIN_TIMEOUT
        """Seconds a client has for each step until it is logged in."""
        self.idle_timeout = idle_timeout
        """Seconds a logged-in client may stay silent between commands."""
        self.write_timeout = WRITE_TIMEOUT
        """Seconds a dump waits for its replica to take what was written."""
        self.semi_sync_timeout = SEMI_SYNC_TIMEOUT
        """Seconds :meth:`wait_for_ack` waits by default."""
        self.acked: tuple[str, int] | None = None
        """The furthest place (file, position) a semi-sync replica acknowledged."""
        self._ack_waiters: list[tuple[tuple[str, int], asyncio.Future[bool]]] = []
        self.sessions: dict[int, ReplicaSession] = {}
        """The connections open now, by number."""
        self.connections = 0
        """Connections accepted so far."""
        self._numbers = itertools.count(1)
        self._server: asyncio.base_events.Server | None = None
        self._running: dict[int, asyncio.Task[None]] = {}
        """The task serving each connection, by number."""

    def _learn(self) -> None:
        """Take the flavour and version from the first binlog (BinlogError while it has no
        format description yet)."""
        flavor = self.directory.flavor()
        binlog_version = self.directory.server_version()
        if self._version_given is None:
            self.version = f"5.5.5-{binlog_version}" if flavor == "mariadb" else binlog_version
        self.flavor = flavor
        self._known = True

    async def _first_binlog(self, session: ReplicaSession) -> None:
        """Wait until the folder has a binlog to tell what server this one stands for (a
        folder a relay has not written to yet): the client waits for the greeting, as for a
        primary that is starting."""
        log.info(
            "connection %d waits for the first binlog in %s", session.number, self.directory.path
        )
        while not self._known:
            with contextlib.suppress(BinlogError, OSError):
                if self.directory.names():
                    self._learn()
                    break
            await asyncio.sleep(POLL)

    # -- life ----------------------------------------------------------------------------

    async def start(self) -> None:
        """Listen; :attr:`port` is the port taken."""
        self._server = await asyncio.start_server(self._accept, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        log.info(
            "serving %s on %s:%d as %s (server_id %d)",
            self.directory.path,
            self.host,
            self.port,
            self.version if self._known else "the server of its first binlog (none yet)",
            self.server_id,
        )

    async def serve_forever(self) -> None:
        if self._server is None:
            await self.start()
        assert self._server is not None
        await self._server.serve_forever()

    async def close(self) -> None:
        """Stop listening and end every connection."""
        if self._server is not None:
            self._server.close()
        tasks = list(self._running.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await self.handle_connection(reader, writer)
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    # -- one connection ----------------------------------------------------------------------

    async def handle_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """Serve one client until it leaves (override to refuse or observe connections)."""
        peer = writer.get_extra_info("peername")
        host = peer[0] if isinstance(peer, tuple) else "localhost"
        number = next(self._numbers)
        session = ReplicaSession(number, f"{host}:{peer[1]}" if isinstance(peer, tuple) else host)
        self.sessions[number] = session
        self._running[number] = asyncio.current_task()  # type: ignore[assignment]
        self.session_started(session)
        try:
            if not self._known:
                await self._first_binlog(session)
            conn = ServerConnection(
                self._accounts,
                server_version=self.version,
                connection_id=number,
                tls_available=self.tls is not None,
                client_host=host,
                max_packet=MAX_PACKET,
            )
            channel = ServerChannel(reader, writer)
            channel.write_timeout = self.write_timeout
            channel.write(conn.greeting())
            await self._converse(channel, conn, session)
        except (
            _Dropped,
            ConnectionError,
            BinlogError,
            asyncio.IncompleteReadError,
            TimeoutError,
        ) as err:
            log.debug("connection %d from %s ended: %s", number, session.peer, err)
        except Exception:
            log.exception("connection %d from %s failed", number, session.peer)
        finally:
            del self.sessions[number]
            del self._running[number]

    async def _converse(
        self,
        channel: ServerChannel,
        conn: ServerConnection,
        session: ReplicaSession,
    ) -> None:
        while True:
            event = conn.next_event()
            if out := conn.data_to_send():
                channel.write(out)
                await channel.drain()
            if (
                event is NEED_DATA
                and conn.state is ServerState.AWAIT_RESPONSE
                and not conn.tls_active
            ):
                # one packet exactly (TLS may start right behind it), small and soon
                packet = _login_packet(channel)
                conn.receive_data(await asyncio.wait_for(packet, self.login_timeout))
            elif event is NEED_DATA and session.user is None:
                conn.receive_data(await asyncio.wait_for(channel.read(), self.login_timeout))
            elif event is NEED_DATA:
                try:
                    async with asyncio.timeout(self.idle_timeout):  # wait_for may eat a cancel
                        data = await channel.read()
                except TimeoutError:
                    log.info(
                        "connection %d from %s closed: no command for %g s",
                        session.number,
                        session.peer,
                        self.idle_timeout,
                    )
                    return
                conn.receive_data(data)
            elif isinstance(event, StartTls):
                assert self.tls is not None
                await asyncio.wait_for(channel.start_tls(self.tls), self.login_timeout)
                conn.tls_established()
            elif isinstance(event, Authenticated):
                session.user = event.user
                log.info("replica %s connected as %s", session.peer, event.user)
            elif isinstance(event, AuthFailed | ClientQuit):
                return
            elif isinstance(event, CommandReceived):
                await self._command(channel, conn, session, event)

    async def _command(
        self,
        channel: ServerChannel,
        conn: ServerConnection,
        session: ReplicaSession,
        cmd: CommandReceived,
    ) -> None:
        payload = bytes([cmd.command]) + cmd.body
        if cmd.command == Command.QUERY:
            sql = cmd.body.decode("utf-8", "replace")
            channel.write(self.answer(conn, session, sql))
        elif cmd.command in (Command.PING, Command.INIT_DB):
            channel.write(conn.send_ok())
        elif cmd.command == Command.REGISTER_SLAVE:
            session.registered = RegisterSlave.decode(payload)
            channel.write(conn.send_ok())
        elif cmd.command in (Command.BINLOG_DUMP, Command.BINLOG_DUMP_GTID):
            dump = (
                BinlogDump.decode(payload)
                if cmd.command == Command.BINLOG_DUMP
                else BinlogDumpGtid.decode(payload)
            )
            session.dump = dump
            await self._dump(channel, conn, session, dump)
            raise _Dropped("the dump ended")  # a primary ends the connection with its dump
        else:
            channel.write(conn.send_error(ErrorCode.UNKNOWN_COM, "Unknown command", "08S01"))
        await channel.drain()

    def session_started(self, session: ReplicaSession) -> None:
        """A client connected (override to observe sessions)."""

    # -- queries ---------------------------------------------------------------------------

    def answer(self, conn: ServerConnection, session: ReplicaSession, sql: str) -> bytes:
        """The bytes answering one query (override to observe them)."""
        log.debug("connection %d asks: %s", session.number, sql)
        statement = sql.strip().rstrip(";").strip()
        if kill := _KILL.fullmatch(statement):
            return self._kill(conn, session, int(kill[1]))
        if _PROCESSLIST.fullmatch(statement):
            return conn.send_result_set(*self._processlist())
        if _REPLICAS.fullmatch(statement):
            return conn.send_result_set(*self._replicas())
        try:
            variables = self._variables()
            answer = answer_query(
                sql,
                variables=variables,
                session=session.variables,
                binlogs=[ServedBinlog(n, self.directory.size(n)) for n in self.directory.names()],
                now=time.time(),
                flavor=self.flavor,
                functions={"BINLOG_GTID_POS": variables.binlog_gtid_pos},
            )
        except (BinlogError, OSError) as err:
            log.warning(
                "connection %d: %s: the binlogs cannot be read: %s", session.number, sql, err
            )
            return conn.send_error(ER_UNKNOWN_ERROR, f"cannot read the served binlogs: {err}")
        if isinstance(answer, QueryOk):
            return conn.send_ok()
        if isinstance(answer, QueryError):
            log.info("connection %d: %s answered with error %d", session.number, sql, answer.code)
            return conn.send_error(answer.code, answer.message, answer.sql_state)
        return conn.send_result_set(list(answer.columns), answer.rows)

    def _kill(self, conn: ServerConnection, session: ReplicaSession, number: int) -> bytes:
        """KILL [CONNECTION | QUERY] N: what a replica sends to end its old dump when it stops
        (a user may end its own connections only)."""
        victim = self.sessions.get(number)
        log.info("connection %d: KILL %d", session.number, number)
        if victim is None:
            return conn.send_error(ER_NO_SUCH_THREAD, f"Unknown thread id: {number}")
        if victim.user != session.user:
            return conn.send_error(ER_KILL_DENIED, f"You are not owner of thread {number}")
        if number != session.number:
            self._running[number].cancel()
        return conn.send_ok()

    def _processlist(self) -> tuple[list[str], list[tuple[str | None, ...]]]:
        """SHOW PROCESSLIST: every connection, and where each dump is."""
        columns = ["Id", "User", "Host", "db", "Command", "Time", "State", "Info"]
        now = time.time()
        rows: list[tuple[str | None, ...]] = [
            (
                str(s.number),
                s.user,
                s.peer,
                None,
                "Binlog Dump" if s.dump else "Sleep",
                str(int(now - s.connected_at)),
                s.state(),
                None,
            )
            for s in self.sessions.values()
        ]
        return columns, rows

    def _replicas(self) -> tuple[list[str], list[tuple[str | None, ...]]]:
        """SHOW SLAVE HOSTS / SHOW REPLICAS: the connections that registered as replicas."""
        columns = ["Server_id", "Host", "Port", "Master_id"]
        rows: list[tuple[str | None, ...]] = [
            (str(r.server_id), r.host, str(r.port), str(r.master_id or self.server_id))
            for s in self.sessions.values()
            if (r := s.registered) is not None
        ]
        return columns, rows

    def variables(self) -> dict[str, str]:
        """The system variables queries see, computed now."""
        return dict(self._variables())

    def _variables(self) -> ServerVariables:
        return ServerVariables(
            self.directory,
            flavor=self.flavor,
            version=self.version,
            server_id=self.server_id,
            port=self.port,
            semi_sync=self.semi_sync,
        )

    # -- dumps ----------------------------------------------------------------------------------

    async def _dump(
        self,
        channel: ServerChannel,
        conn: ServerConnection,
        session: ReplicaSession,
        request: BinlogDump | BinlogDumpGtid,
    ) -> None:
        try:
            settings = ReplicaSettings.from_variables(
                session.variables, semi_sync_offered=self.semi_sync
            )
        except ValueError as err:  # a malformed GTID position: MariaDB's ER_UNKNOWN_ERROR
            await self._refuse(channel, conn, session, DumpRefused(ER_UNKNOWN_ERROR, str(err)))
            return
        sender = DumpSender(
            request,
            self.directory.starts(),
            settings,
            server_id=self.server_id,
            flavor=self.flavor,
            binlog_state=self.directory.gtid_state,
            decrypted=self.directory.keys is not None,
        )
        after = settings.connect_state
        gtids = "" if after is None else f" after MariaDB GTIDs '{after}'"
        log.info("replica %s dumps %s%s", session.peer, request, gtids)
        refused = sender.start()
        if refused is not None:
            await self._refuse(channel, conn, session, refused)
            return
        log.info("replica %s starts at %s:%d", session.peer, *sender.read_at_start)
        for observer in self.observers:
            observer.start(session, *sender.read_at_start)
        gone = asyncio.create_task(self._read_acks(channel, conn, session))
        try:
            await self._send(channel, conn, session, sender, gone)
        finally:
            for observer in self.observers:
                observer.stop(session)
            gone.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await gone

    async def _send(
        self,
        channel: ServerChannel,
        conn: ServerConnection,
        session: ReplicaSession,
        sender: DumpSender,
        gone: asyncio.Task[None],
    ) -> None:
        """The dump's packets, written in batches; between them, the folder is read."""
        directory = self.directory
        period = sender.replica.heartbeat_period
        following: str | None = None
        last_sent = time.monotonic()
        batch = bytearray()
        each_event = bool(self.observers) or type(self).send_event is not BinlogServer.send_event
        while True:
            packet = sender.next_packet()
            if isinstance(packet, EventRun) and not each_event:
                batch += conn.send_packets(packet.data, packet.spans, packet.heads)
            elif isinstance(packet, Outgoing | EventRun):
                packets = packet.packets() if isinstance(packet, EventRun) else (packet,)
                try:
                    for one in packets:
                        for each in self._observed(session, sender, one):
                            batch += self.send_event(conn, session, each)
                except DropConnection as drop:
                    channel.write(bytes(batch + drop.data))
                    await channel.drain()
                    raise _Dropped(str(drop)) from None
            if isinstance(packet, Outgoing | EventRun):
                session.file, session.position = sender.file, sender.position
                session.waiting = False
                if len(batch) >= _BATCH:
                    await self._flush(channel, batch)
                    last_sent = time.monotonic()
                continue
            await self._flush(channel, batch)
            if isinstance(packet, DumpRefused):
                await self._refuse(channel, conn, session, packet)
                return
            if isinstance(packet, UntilReached):
                log.info("replica %s reached its UNTIL position", session.peer)
                channel.write(conn.send_eof())
                await channel.drain()
                return
            name, offset = sender.read_at
            try:
                if data := directory.read(name, offset, _READ):
                    at_end = offset + len(data) >= directory.size(name)
                    sender.receive_data(data, at_end=at_end)
                    continue
                following = directory.next_name(name)
                if following is not None and directory.size(name) == offset:
                    sender.file_complete(following)
                    continue
            except (BinlogError, OSError) as err:
                message = f"could not read {name} at {offset}: {err}"
                refused = DumpRefused(ER_SOURCE_FATAL_ERROR_READING_BINLOG, message)
                await self._refuse(channel, conn, session, refused)
                return
            if following is not None:
                continue  # bytes were added before the next file appeared: read them
            if not sender.blocking:
                channel.write(conn.send_eof())
                await channel.drain()
                return
            session.waiting = True
            await asyncio.wait([gone], timeout=POLL)
            if gone.done():
                raise _Dropped("the replica left")
            if period and time.monotonic() - last_sent >= period:
                channel.write(self.send_event(conn, session, sender.heartbeat()))
                await channel.drain()
                last_sent = time.monotonic()

    def _observed(
        self, session: ReplicaSession, sender: DumpSender, packet: Outgoing
    ) -> Sequence[Outgoing]:
        """What the observers make of an event read from the files."""
        if not self.observers or packet.offset < 0:
            return (packet,)
        raws = [packet.event]
        for observer in self.observers:
            changed: list[bytes] = []
            for raw in raws:
                event = DumpEvent(raw, packet.file, packet.offset)
                instead = observer.send_event(session, event)
                changed += [raw] if instead is None else instead
            raws = changed
        if raws == [packet.event]:
            return (packet,)
        last = len(raws) - 1
        return [
            sender.wrap(raw, packet.offset, ack=packet.ack and i == last)
            for i, raw in enumerate(raws)
        ]

    @staticmethod
    async def _flush(channel: ServerChannel, batch: bytearray) -> None:
        """Write a batch; then let the other connections have their turn (drain() does not
        wait while the transport's buffer is below its limit)."""
        if batch:
            channel.write(bytes(batch))
            batch.clear()
            await channel.drain()
            await asyncio.sleep(0)

    def send_event(
        self, conn: ServerConnection, session: ReplicaSession, packet: Outgoing
    ) -> bytes:
        """The bytes that send one event packet: the place to observe or alter what a replica
        gets (raise :class:`DropConnection` to end the connection). Without observers and
        this override, runs of events are sent whole, without a call per event."""
        return conn.send_packet(packet.payload)

    async def _refuse(
        self,
        channel: ServerChannel,
        conn: ServerConnection,
        session: ReplicaSession,
        refused: DumpRefused,
    ) -> None:
        log.warning("dump of replica %s refused: %s", session.peer, refused.message)
        channel.write(conn.send_error(refused.code, refused.message, refused.sql_state))
        await channel.drain()

    async def _read_acks(
        self, channel: ServerChannel, conn: ServerConnection, session: ReplicaSession
    ) -> None:
        """Read what the replica sends during its dump (semi-sync ACKs); end when it leaves."""
        while data := await channel.read():
            conn.receive_data(data)
            while (event := conn.next_event()) is not NEED_DATA:
                if isinstance(event, ClientPacket) and event.payload[:1] == bytes((ACK_MAGIC,)):
                    self.acknowledged(session, SemiSyncAck.decode(event.payload))
                elif isinstance(event, ClientQuit):
                    return

    def acknowledged(self, session: ReplicaSession, ack: SemiSyncAck) -> None:
        """A semi-sync ACK arrived: the observers see it and the waiters it covers go on."""
        if session.acked is None:
            log.info(
                "replica %s acknowledges semi-sync, first at %s:%d",
                session.peer,
                ack.file,
                ack.position,
            )
        session.acked = ack
        for observer in self.observers:
            observer.acknowledged(session, ack)
        reached = (ack.file, ack.position)
        if self.acked is None or reached > self.acked:
            self.acked = reached  # the replies of all replicas, the furthest (as MariaDB's)
        for place, waiter in list(self._ack_waiters):
            if place <= self.acked and not waiter.done():
                waiter.set_result(True)

    async def wait_for_ack(self, file: str, position: int, timeout: float | None = None) -> bool:
        """Wait until a semi-sync replica acknowledged ``file`` up to ``position`` (True), or
        ``timeout`` seconds (default :attr:`semi_sync_timeout`, MariaDB's
        rpl_semi_sync_master_timeout) passed (False): what a committing transaction does
        on a semi-sync primary. Places compare by file name, then position."""
        place = (file, position)
        if self.acked is not None and place <= self.acked:
            return True
        waiter: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        entry = (place, waiter)
        self._ack_waiters.append(entry)
        try:
            async with asyncio.timeout(self.semi_sync_timeout if timeout is None else timeout):
                return await waiter
        except TimeoutError:
            log.warning("no semi-sync ACK for %s:%d in time", file, position)
            return False
        finally:
            self._ack_waiters.remove(entry)


class BinlogServerThread:
    """A :class:`BinlogServer` running in a thread of its own; a context manager.

    Entering starts it and waits until it listens (:attr:`port`); leaving closes
    every connection and ends the thread.
    """

    def __init__(self, server: BinlogServer) -> None:
        self.server = server
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="binlog-server", daemon=True)
        self._started = threading.Event()
        self._error: BaseException | None = None

    @property
    def port(self) -> int:
        return self.server.port

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self.server.start())
        except BaseException as err:
            self._error = err
            self._started.set()
            return
        self._started.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self.server.close())
        self._loop.close()

    def __enter__(self) -> BinlogServerThread:
        self._thread.start()
        self._started.wait()
        if self._error is not None:
            raise self._error
        return self

    def wait_for_ack(self, file: str, position: int, timeout: float | None = None) -> bool:
        """:meth:`BinlogServer.wait_for_ack` from another thread."""
        waiting = self.server.wait_for_ack(file, position, timeout)
        return asyncio.run_coroutine_threadsafe(waiting, self._loop).result()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
