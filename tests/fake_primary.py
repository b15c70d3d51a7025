"""An in-process MySQL 8.4 replication source for tests: real binlog files served over TCP.

:class:`FakePrimary` listens on 127.0.0.1 and speaks the server side of the
protocol through :class:`binlogkit.protocol.server.ServerConnection`. It
answers the set-up queries a replica sends with the values a MySQL 8.4
server gives (``SHOW MASTER STATUS`` is a syntax error there) and serves
COM_BINLOG_DUMP and COM_BINLOG_DUMP_GTID as MySQL 8.x's binlog sender
does: a fake ROTATE (artificial, log_pos 0) before each file, the file's
format description with BINLOG_IN_USE cleared (and log_pos cleared when the
dump starts past the file's first transaction), then the file's events;
for a GTID dump the transactions already in the replica's set are left out
and a heartbeat gives the position after them; the semi-sync header when
the replica set ``@rpl_semi_sync_replica``; heartbeats while idle; an EOF
at the end of a non-blocking dump; ERR 1236 for a file not in the index, a
bad position, purged GTIDs or a replica that did not declare its checksum
support.

Faults are planned with :class:`Cut` (break a dump at an event: before it,
in the middle of its packet, or with a server error) and
:meth:`FakePrimary.refuse` (drop the next connections right after accept).
A plain module, not a conftest: tests import it by name.
"""

from __future__ import annotations

import contextlib
import fnmatch
import re
import select
import socket
import struct
import threading
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Literal

from binlogkit.binlog.constants import EventFlag, EventType
from binlogkit.binlog.decoder import BinlogDecoder
from binlogkit.binlog.framing import Signal
from binlogkit.errors import BinlogError
from binlogkit.gtid import Gtid, GtidSet
from binlogkit.protocol.auth.base import make_credential
from binlogkit.protocol.constants import Command
from binlogkit.protocol.packets import NEED_DATA
from binlogkit.protocol.replication import (
    BinlogDump,
    BinlogDumpGtid,
    DumpFlag,
    RegisterSlave,
    SemiSyncAck,
)
from binlogkit.protocol.server import (
    Account,
    AuthFailed,
    ClientPacket,
    ClientQuit,
    CommandReceived,
    ServerConnection,
)
from binlogkit.protocol.spec import ConnectionSpec

USER = "repl"
PASSWORD = "s3cret"
SERVER_UUID = "8a94f357-aab4-11df-86ab-c80aa9429562"

ER_PARSE_ERROR = 1064
ER_UNKNOWN_COM_ERROR = 1047
ER_SERVER_SHUTDOWN = 1053
ER_SOURCE_FATAL_ERROR_READING_BINLOG = 1236

_HEADER = struct.Struct("<IBIIIH")
_GTID_TYPES = frozenset({EventType.GTID, EventType.GTID_TAGGED})
_FDE_CREATED = 19 + 2 + 50  # header, binlog version, server version: the create timestamp


@dataclass(frozen=True, slots=True)
class LogEvent:
    """One event of a binlog file: where it is, its bytes, and the GTID it opens (if any)."""

    offset: int
    raw: bytes
    type_code: int
    gtid: Gtid | None = None

    @property
    def end(self) -> int:
        return self.offset + len(self.raw)


@dataclass(frozen=True, slots=True)
class LogFile:
    """A binlog file as the primary serves it."""

    name: str
    size: int
    events: tuple[LogEvent, ...]
    checksum: bool
    previous_gtids: GtidSet

    @property
    def first_gtid(self) -> Gtid | None:
        return next((e.gtid for e in self.events if e.gtid is not None), None)


def load_binlog(path: Path) -> LogFile:
    """Frame and decode a binlog file (every framed event with its offset and GTID)."""
    data = path.read_bytes()
    decoder = BinlogDecoder(file=path.name)
    decoder.receive_data(data)
    decoder.receive_data(b"")
    events: list[LogEvent] = []
    checksum = False
    previous = GtidSet()
    while not isinstance(event := decoder.next_event(), Signal):
        frame = decoder.last_frame
        if frame is None:  # an event inside a TRANSACTION_PAYLOAD
            continue
        code = frame.header.type_code
        if code == EventType.FORMAT_DESCRIPTION:
            checksum = frame.checksum_length > 0
        if code == EventType.PREVIOUS_GTIDS:
            previous = event.gtids  # type: ignore[attr-defined]
        gtid = event.gtid if code in _GTID_TYPES else None  # type: ignore[attr-defined]
        events.append(LogEvent(frame.header.offset, frame.raw, code, gtid))
    return LogFile(path.name, len(data), tuple(events), checksum, previous)


@dataclass(frozen=True, slots=True)
class Cut:
    """Break the first dump that reaches the event of ``file`` at ``offset``.

    ``how``: ``"before"`` closes the connection before the event (between two
    events), ``"mid"`` sends half of the event's packet and then closes,
    ``"error"`` ends the dump with ERR 1053 (server shutdown) and closes,
    ``"eof"`` ends it with a plain EOF packet and closes (what MariaDB sends
    when it shuts down during a blocking dump).
    """

    file: str
    offset: int
    how: Literal["before", "mid", "error", "eof"] = "before"


class _Dropped(Exception):
    """The connection is to be closed now (a fault, the client left, or the primary stops)."""


@dataclass
class Session:
    """What one client connection did: its user variables, queries and commands."""

    variables: dict[str, str | None] = field(default_factory=dict)
    queries: list[str] = field(default_factory=list)
    registered: RegisterSlave | None = None
    dump: BinlogDump | BinlogDumpGtid | None = None


def _event(
    type_code: int, server_id: int, log_pos: int, flags: int, body: bytes, crc: bool
) -> bytes:
    size = _HEADER.size + len(body) + (4 if crc else 0)
    raw = _HEADER.pack(0, type_code, server_id, size, log_pos, flags) + body
    return raw + struct.pack("<I", zlib.crc32(raw)) if crc else raw


def _with_crc(raw: bytearray, crc: bool) -> bytes:
    if crc:
        raw[-4:] = struct.pack("<I", zlib.crc32(raw[:-4]))
    return bytes(raw)


def _like(pattern: str) -> str:
    return "".join("*" if c == "%" else "?" if c == "_" else c for c in pattern.lower())


class FakePrimary:
    """A MySQL 8.4 source in a thread serving ``paths`` (its binary log index, in order).

    A context manager; :attr:`url` connects as the replication user. What
    clients did is kept in :attr:`sessions`; semi-sync ACKs in :attr:`acks`.
    """

    def __init__(
        self,
        paths: Sequence[Path],
        *,
        cuts: Sequence[Cut] = (),
        version: str = "8.4.3",
        server_id: int = 1,
        semi_sync: bool = False,
    ) -> None:
        self.files = [load_binlog(p) for p in paths]
        self.cuts = list(cuts)
        self.cuts_done: list[Cut] = []
        self.version = version
        self.server_id = server_id
        self.sessions: list[Session] = []
        self.acks: list[SemiSyncAck] = []
        self.connections = 0
        executed = self.files[0].previous_gtids
        for file in self.files:
            executed = executed.union(*(GtidSet.of(e.gtid) for e in file.events if e.gtid))
        last = self.files[-1]
        self.variables: dict[str, str] = {
            "version": version,
            "version_comment": "MySQL Community Server - GPL",
            "server_id": str(server_id),
            "server_uuid": SERVER_UUID,
            "log_bin": "ON",
            "binlog_format": "ROW",
            "binlog_checksum": "CRC32" if last.checksum else "NONE",
            "gtid_mode": "ON",
            "enforce_gtid_consistency": "ON",
            "gtid_executed": str(executed),
            "gtid_purged": str(self.files[0].previous_gtids),
        }
        if semi_sync:
            self.variables |= {
                "rpl_semi_sync_source_enabled": "ON",
                "rpl_semi_sync_source_timeout": "10000",
                "rpl_semi_sync_source_wait_point": "AFTER_SYNC",
            }
        self._refuse = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self.port: int = self._listener.getsockname()[1]
        self._threads: list[threading.Thread] = []
        self._clients: list[socket.socket] = []

    # -- life ---------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"mysql://{USER}:{PASSWORD}@127.0.0.1:{self.port}"

    @property
    def spec(self) -> ConnectionSpec:
        return ConnectionSpec.from_url(self.url)

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def refuse(self, count: int) -> None:
        """Drop the next ``count`` connections right after accepting them."""
        with self._lock:
            self._refuse += count

    def __enter__(self) -> FakePrimary:
        accept = threading.Thread(target=self._accept, name="fake-primary", daemon=True)
        accept.start()
        self._threads.append(accept)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        with self._lock:
            clients = list(self._clients)
        for sock in clients:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for thread in self._threads:
            thread.join(5)
        self._listener.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                sock, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                refused = self._refuse > 0
                self._refuse -= refused
                self.connections += 1
                number = self.connections
                self._clients.append(sock)
            if refused:
                sock.close()
                continue
            thread = threading.Thread(target=self._serve, args=(sock, number), daemon=True)
            thread.start()
            self._threads.append(thread)

    # -- one connection ---------------------------------------------------------------

    def _serve(self, sock: socket.socket, number: int) -> None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        account = Account(
            USER, "mysql_native_password", make_credential("mysql_native_password", PASSWORD)
        )
        conn = ServerConnection({USER: account}, server_version=self.version, connection_id=number)
        session = Session()
        with self._lock:
            self.sessions.append(session)
        try:
            sock.sendall(conn.greeting())
            while not self._stop.is_set():
                event = conn.next_event()
                if out := conn.data_to_send():
                    sock.sendall(out)
                if event is NEED_DATA:
                    conn.receive_data(sock.recv(1 << 16))
                elif isinstance(event, AuthFailed | ClientQuit):
                    return
                elif isinstance(event, CommandReceived):
                    self._command(sock, conn, session, event)
        except (_Dropped, OSError, BinlogError):
            pass  # a fault, a client gone, or a client breaking the protocol: close
        finally:
            with contextlib.suppress(OSError):
                sock.close()

    def _command(
        self, sock: socket.socket, conn: ServerConnection, session: Session, cmd: CommandReceived
    ) -> None:
        payload = bytes([cmd.command]) + cmd.body
        if cmd.command == Command.QUERY:
            sql = cmd.body.decode()
            session.queries.append(sql)
            sock.sendall(self._query(conn, session, sql))
        elif cmd.command == Command.PING:
            sock.sendall(conn.send_ok())
        elif cmd.command == Command.REGISTER_SLAVE:
            session.registered = RegisterSlave.decode(payload)
            sock.sendall(conn.send_ok())
        elif cmd.command in (Command.BINLOG_DUMP, Command.BINLOG_DUMP_GTID):
            dump = (
                BinlogDump.decode(payload)
                if cmd.command == Command.BINLOG_DUMP
                else BinlogDumpGtid.decode(payload)
            )
            session.dump = dump
            _DumpSender(self, sock, conn, session, dump).run()
            raise _Dropped  # MySQL ends the connection with the dump
        else:
            sock.sendall(conn.send_error(ER_UNKNOWN_COM_ERROR, "Unknown command", "08S01"))

    # -- queries -------------------------------------------------------------------------

    def _query(self, conn: ServerConnection, session: Session, sql: str) -> bytes:
        text = sql.strip().rstrip(";").strip()
        upper = re.sub(r"\s+", " ", text.upper())
        if upper.startswith("SET "):
            for name, value in re.findall(r"@(\w+)\s*=\s*('(?:[^']|'')*'|@@[\w.]+|[-\w.]+)", text):
                session.variables[name.lower()] = self._value(session, value)
            return conn.send_ok()
        if upper == "SHOW BINARY LOGS":
            binlogs = [(f.name, str(f.size), "No") for f in self.files]
            return conn.send_result_set(["Log_name", "File_size", "Encrypted"], binlogs)
        if upper == "SHOW BINARY LOG STATUS":
            last = self.files[-1]
            status = (last.name, str(last.size), "", "", self.variables["gtid_executed"])
            columns = ["File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB", "Executed_Gtid_Set"]
            return conn.send_result_set(columns, [status])
        like = re.fullmatch(r"SHOW (?:GLOBAL |SESSION )?VARIABLES LIKE '([^']*)'", text, re.I)
        if like:
            pattern = _like(like[1])
            found = [(k, v) for k, v in self.variables.items() if fnmatch.fnmatchcase(k, pattern)]
            return conn.send_result_set(["Variable_name", "Value"], found)
        if upper.startswith("SELECT "):
            items = [item.strip() for item in text[7:].split(",")]
            try:
                row = [self._value(session, item) for item in items]
            except KeyError as err:
                return conn.send_error(1193, f"Unknown system variable '{err.args[0]}'")
            return conn.send_result_set(items, [row])
        near = text.split(None, 1)[-1][:80]
        return conn.send_error(
            ER_PARSE_ERROR,
            "You have an error in your SQL syntax; check the manual that corresponds to your "
            f"MySQL server version for the right syntax to use near '{near}' at line 1",
            "42000",
        )

    def _value(self, session: Session, expr: str) -> str | None:
        """A value of the tiny SQL the fake understands: literals, @@variables, @variables."""
        if expr.startswith("'"):
            return expr[1:-1].replace("''", "'")
        if expr.startswith("@@"):
            name = re.sub(r"^(global|session)\.", "", expr[2:].lower())
            return self.variables[name]
        if expr.startswith("@"):
            return session.variables.get(expr[1:].lower())
        if expr.upper() == "UNIX_TIMESTAMP()":
            return str(int(time.time()))
        if expr.upper() == "VERSION()":
            return self.version
        if re.fullmatch(r"-?\d+(\.\d+)?", expr):
            return expr
        raise KeyError(expr)

    def take_cut(self, file: str, offset: int) -> Cut | None:
        with self._lock:
            for cut in self.cuts:
                if (cut.file, cut.offset) == (file, offset):
                    self.cuts.remove(cut)
                    self.cuts_done.append(cut)
                    return cut
        return None


class _DumpSender:
    """One COM_BINLOG_DUMP / COM_BINLOG_DUMP_GTID, sent as MySQL 8.x's Binlog_sender does."""

    def __init__(
        self,
        primary: FakePrimary,
        sock: socket.socket,
        conn: ServerConnection,
        session: Session,
        dump: BinlogDump | BinlogDumpGtid,
    ) -> None:
        self.primary = primary
        self.sock = sock
        self.conn = conn
        variables = session.variables
        checksum = variables.get("source_binlog_checksum", variables.get("master_binlog_checksum"))
        self.replica_checksum = checksum  # None: the replica said nothing (cannot take CRCs)
        period = variables.get("source_heartbeat_period", variables.get("master_heartbeat_period"))
        self.heartbeat = int(period or 0) / 1e9
        self.semi_sync = (
            primary.variables.get("rpl_semi_sync_source_enabled") == "ON"
            and variables.get("rpl_semi_sync_replica") == "1"
        )
        self.dump = dump
        self.wait = not (dump.flags & DumpFlag.NON_BLOCK or dump.server_id == 0)
        self.exclude = dump.gtids if isinstance(dump, BinlogDumpGtid) else None
        self.crc = checksum is not None and checksum.upper() == "CRC32"

    # -- sending -----------------------------------------------------------------------

    def send(self, raw: bytes, *, ack: bool = False, cut: Cut | None = None) -> None:
        payload = b"\0" + (bytes((0xEF, int(ack))) if self.semi_sync else b"") + raw
        data = self.conn.send_packet(payload)
        if cut is not None and cut.how == "mid":
            self.sock.sendall(data[: len(data) // 2])
            raise _Dropped
        self.sock.sendall(data)
        self.poll(0)

    def poll(self, timeout: float) -> None:
        """Read what the replica sent (semi-sync ACKs); a closed connection ends the dump."""
        readable, _, _ = select.select([self.sock], [], [], timeout)
        if not readable:
            return
        data = self.sock.recv(1 << 16)
        if not data:
            raise _Dropped
        self.conn.receive_data(data)
        while (event := self.conn.next_event()) is not NEED_DATA:
            if isinstance(event, ClientPacket) and event.payload[:1] == b"\xef":
                self.primary.acks.append(SemiSyncAck.decode(event.payload))

    def error(self, message: str, code: int = ER_SOURCE_FATAL_ERROR_READING_BINLOG) -> None:
        self.sock.sendall(self.conn.send_error(code, message))

    def heartbeat_event(self, file: str, position: int) -> bytes:
        return _event(
            EventType.HEARTBEAT, self.primary.server_id, position, 0, file.encode(), self.crc
        )

    # -- the dump --------------------------------------------------------------------

    def run(self) -> None:
        files = self.primary.files
        start = self.start_file()
        if start is None:
            return
        index, position, clear_fde = start
        while True:
            file = files[index]
            rotate = struct.pack("<Q", position) + file.name.encode()
            self.send(
                _event(
                    EventType.ROTATE,
                    self.primary.server_id,
                    0,
                    EventFlag.ARTIFICIAL,
                    rotate,
                    self.crc,
                )
            )
            if not self.send_file(file, position, clear_fde):
                return
            if index + 1 == len(files):
                break
            index, position = index + 1, 4
            # a position dump clears the FDE's log_pos of its first file only; a GTID dump
            # keeps the choice made for its first file (Binlog_sender::send_binlog)
            clear_fde = clear_fde and self.exclude is not None
        if not self.wait:
            self.sock.sendall(self.conn.send_eof())
            return
        last = files[-1]
        while not self.primary.stopping:
            started = time.monotonic()
            self.poll(self.heartbeat or 0.05)
            if self.heartbeat and time.monotonic() - started >= self.heartbeat:
                self.send(self.heartbeat_event(last.name, last.size))
        raise _Dropped

    def start_file(self) -> tuple[int, int, bool] | None:
        """(file index, position, clear the FDE's log_pos), or None after sending ERR 1236."""
        files = self.primary.files
        names = [f.name for f in files]
        dump = self.dump
        if self.exclude is not None and not dump.file:
            purged = files[0].previous_gtids
            if not purged.issubset(self.exclude):
                self.error(
                    "Cannot replicate because the source purged required binary logs. Replicate"
                    " the missing transactions from elsewhere, or provision a new replica from"
                    f" backup. The GTID set sent by the replica is '{self.exclude}', and the"
                    f" missing transactions are '{purged - self.exclude}'"
                )
                return None
            index = max(i for i, f in enumerate(files) if f.previous_gtids.issubset(self.exclude))
            first = files[index].first_gtid
            return index, 4, first is not None and first in self.exclude
        name = dump.file or names[0]
        if name not in names:
            self.error("Could not find first log file name in binary log index file")
            return None
        index = names.index(name)
        if dump.position < 4:
            self.error("Client requested source to start replication from position < 4")
            return None
        if dump.position > files[index].size:
            self.error("Client requested source to start replication from position > file size")
            return None
        return index, dump.position, dump.position > 4

    def send_file(self, file: LogFile, position: int, clear_fde: bool) -> bool:
        fde, *events = file.events
        if fde.type_code != EventType.FORMAT_DESCRIPTION:
            self.error("Could not find format_description_event in binlog file")
            return False
        if self.replica_checksum is None and file.checksum:
            self.error(
                "Replica can not handle replication events with the checksum that source is"
                " configured to log"
            )
            return False
        self.crc = file.checksum
        raw = bytearray(fde.raw)
        struct.pack_into("<H", raw, 17, _HEADER.unpack_from(raw)[5] & ~EventFlag.BINLOG_IN_USE)
        if clear_fde:
            struct.pack_into("<I", raw, 13, 0)
            struct.pack_into("<I", raw, _FDE_CREATED, 0)
        self.send(_with_crc(raw, file.checksum))
        skipped_to = 0
        in_excluded = False
        for event in events:
            if event.offset < position:
                continue
            if self.exclude is not None:
                if event.gtid is not None:
                    in_excluded = event.gtid in self.exclude
                elif event.type_code == EventType.ROTATE:
                    in_excluded = False
                if in_excluded:
                    skipped_to = event.end
                    continue
                if skipped_to:
                    self.send(self.heartbeat_event(file.name, skipped_to))
                    skipped_to = 0
            cut = self.primary.take_cut(file.name, event.offset)
            if cut is not None and cut.how == "before":
                raise _Dropped
            if cut is not None and cut.how == "error":
                self.error("Server shutdown in progress", ER_SERVER_SHUTDOWN)
                raise _Dropped
            if cut is not None and cut.how == "eof":
                self.sock.sendall(self.conn.send_eof())
                raise _Dropped
            self.send(event.raw, ack=event.type_code == EventType.XID, cut=cut)
        if in_excluded:
            self.send(self.heartbeat_event(file.name, file.events[-1].end))
        return True
