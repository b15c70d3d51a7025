"""binlogkit's binlog server as a MySQL 8.4 primary for tests, with faults planned in advance.

:class:`FakePrimary` copies binlog files into a folder of its own (with an
index), serves it with :class:`binlogkit.services.binlog_server.BinlogServer`
(greeting as MySQL 8.4.3) in a thread, and keeps what every client did.
What is test-only lives here: faults planned with :class:`Cut` (break a
dump at an event: before it, in the middle of its packet, with a server
error or with an EOF) and :meth:`FakePrimary.refuse` (drop the next
connections right after accept), and the record of queries and ACKs.
A plain module, not a conftest: tests import it by name.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import Literal

import binlogkit
from binlogkit.binlog.constants import EventFlag, EventType
from binlogkit.binlog.decoder import BinlogDecoder
from binlogkit.binlog.events import Event
from binlogkit.binlog.framing import Signal
from binlogkit.gtid import Gtid, GtidSet
from binlogkit.io.binlog_index import index_name, write_index
from binlogkit.protocol.auth.base import Secret
from binlogkit.protocol.binlog_sender import Outgoing
from binlogkit.protocol.replication import BinlogDump, BinlogDumpGtid, RegisterSlave, SemiSyncAck
from binlogkit.protocol.server import ServerConnection
from binlogkit.protocol.spec import ConnectionSpec
from binlogkit.services.binlog_server import (
    BinlogServer,
    BinlogServerThread,
    DropConnection,
    ReplicaSession,
    User,
)

USER = "repl"
PASSWORD = "s3cret"
ER_SERVER_SHUTDOWN = 1053

_GTID_TYPES = frozenset({EventType.GTID, EventType.GTID_TAGGED})


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
    """A binlog file's events, for tests to compute what a dump must give."""

    name: str
    size: int
    events: tuple[LogEvent, ...]
    previous_gtids: GtidSet

    @property
    def first_gtid(self) -> Gtid | None:
        return next((e.gtid for e in self.events if e.gtid is not None), None)


Key = tuple[str, int, Event]
"""An event with the file and offset it comes from: what a stream and a file read must share."""


def normal(event: Event) -> Event:
    """The event with the FDE's BINLOG_IN_USE flag cleared (a source sends it cleared)."""
    header = event.header
    if header.type_code == EventType.FORMAT_DESCRIPTION and header.flags & EventFlag.BINLOG_IN_USE:
        flags = header.flags & ~EventFlag.BINLOG_IN_USE
        return replace(event, header=replace(header, flags=flags))
    return event


def keyed(events: list[Event]) -> list[Key]:
    return [(Path(e.header.file or "").name, e.header.offset, normal(e)) for e in events]


def file_keys(files: list[Path]) -> list[Key]:
    with binlogkit.open([str(p) for p in files]) as reader:
        return keyed(list(reader))


def load_binlog(path: Path) -> LogFile:
    """Frame and decode a binlog file (every framed event with its offset and GTID)."""
    data = path.read_bytes()
    decoder = BinlogDecoder(file=path.name)
    decoder.receive_data(data)
    decoder.receive_data(b"")
    events: list[LogEvent] = []
    previous = GtidSet()
    while not isinstance(event := decoder.next_event(), Signal):
        frame = decoder.last_frame
        if frame is None:  # an event inside a TRANSACTION_PAYLOAD
            continue
        code = frame.header.type_code
        if code == EventType.PREVIOUS_GTIDS:
            previous = event.gtids  # type: ignore[attr-defined]
        gtid = event.gtid if code in _GTID_TYPES else None  # type: ignore[attr-defined]
        events.append(LogEvent(frame.header.offset, frame.raw, code, gtid))
    return LogFile(path.name, len(data), tuple(events), previous)


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


@dataclass
class Session:
    """What one client connection did: the server's session and the queries it asked."""

    replica: ReplicaSession
    queries: list[str] = field(default_factory=list)

    @property
    def variables(self) -> dict[str, str | None]:
        return self.replica.variables

    @property
    def registered(self) -> RegisterSlave | None:
        return self.replica.registered

    @property
    def dump(self) -> BinlogDump | BinlogDumpGtid | None:
        return self.replica.dump


class _Cutting(BinlogServer):
    """The library's server with the test's faults and records."""

    def __init__(self, primary: FakePrimary, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.primary = primary

    async def handle_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        if self.primary.take_refusal():
            return
        await super().handle_connection(reader, writer)

    def session_started(self, session: ReplicaSession) -> None:
        with self.primary.lock:
            self.primary.sessions.append(Session(session))

    def answer(self, conn: ServerConnection, session: ReplicaSession, sql: str) -> bytes:
        with self.primary.lock:
            mine = next(s for s in self.primary.sessions if s.replica is session)
            mine.queries.append(sql)
        return super().answer(conn, session, sql)

    def acknowledged(self, session: ReplicaSession, ack: SemiSyncAck) -> None:
        super().acknowledged(session, ack)
        self.primary.acks.append(ack)

    def send_event(
        self, conn: ServerConnection, session: ReplicaSession, packet: Outgoing
    ) -> bytes:
        cut = self.primary.take_cut(packet.file, packet.offset) if packet.offset >= 0 else None
        if cut is None:
            return super().send_event(conn, session, packet)
        if cut.how == "mid":
            data = conn.send_packet(packet.payload)
            raise DropConnection(f"cut {cut}", data[: len(data) // 2])
        if cut.how == "error":
            raise DropConnection(
                f"cut {cut}", conn.send_error(ER_SERVER_SHUTDOWN, "Server shutdown in progress")
            )
        if cut.how == "eof":
            raise DropConnection(f"cut {cut}", conn.send_eof())
        raise DropConnection(f"cut {cut}")


class FakePrimary:
    """A MySQL 8.4 source in a thread serving copies of ``paths`` (its binary log index, in order).

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
        self.folder = Path(tempfile.mkdtemp(prefix="fake-primary-"))
        for path in paths:
            shutil.copyfile(path, self.folder / path.name)
        write_index(self.folder / index_name(paths[0].name), [p.name for p in paths])
        self.files = [load_binlog(self.folder / p.name) for p in paths]
        self.cuts = list(cuts)
        self.cuts_done: list[Cut] = []
        self.sessions: list[Session] = []
        self.acks: list[SemiSyncAck] = []
        self.lock = threading.Lock()
        self._refuse = 0
        self.server = _Cutting(
            self,
            str(self.folder),
            [User(USER, Secret(PASSWORD))],
            server_id=server_id,
            version=version,
            semi_sync=semi_sync,
        )
        self.variables = self.server.variables()
        self._thread = BinlogServerThread(self.server)

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def connections(self) -> int:
        return self.server.connections

    @property
    def url(self) -> str:
        return f"mysql://{USER}:{PASSWORD}@127.0.0.1:{self.port}"

    @property
    def spec(self) -> ConnectionSpec:
        return ConnectionSpec.from_url(self.url)

    def refuse(self, count: int) -> None:
        """Drop the next ``count`` connections right after accepting them."""
        with self.lock:
            self._refuse += count

    def take_refusal(self) -> bool:
        with self.lock:
            refused = self._refuse > 0
            self._refuse -= refused
            return refused

    def take_cut(self, file: str, offset: int) -> Cut | None:
        with self.lock:
            for cut in self.cuts:
                if (cut.file, cut.offset) == (file, offset):
                    self.cuts.remove(cut)
                    self.cuts_done.append(cut)
                    return cut
        return None

    def __enter__(self) -> FakePrimary:
        self._thread.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._thread.__exit__(exc_type, exc, tb)
        shutil.rmtree(self.folder, ignore_errors=True)
