"""Dump observers: what a binlog server sends each replica, altered, dropped or added to.

The ReplicationInterface's binlog dump observer (``Repl_dump_observer``) is
told when a dump starts and stops (and here when a semi-sync replica
acknowledges) and sees every event before it is sent
(``send_event``), which it may change, leave out, or send with others before
or after it. :class:`DumpObserver` is that interface for
:class:`~binlogkit.services.binlog_server.BinlogServer`: an observer's
:meth:`~DumpObserver.send_event` returns None to let the event go as it is,
or the events (whole, checksum included) to send instead: none to drop it,
itself among others to add some. Observers get each replica's session, so
what they do may differ per replica. The interface's ``reserve_header``/
``write_header`` hooks are left out: a real replica reads exactly ``0x00``, the
semi-sync header (when it asked for semi-sync) and the event, so other bytes
there break it; semi-sync's header, their one use, is the server's own. An
observer adds events to tell a replica more.

:class:`ReplicaFilter` is the replication filters
(:class:`~binlogkit.pipeline.filters.ReplicationFilter`) as a dump observer:
each replica gets only what a replica started with those ``replicate-*``
options would apply (table maps with their rows events, statements, renamed
databases), chosen per replica.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from binlogkit.binlog.decoder import BinlogDecoder, encode_event
from binlogkit.binlog.events import Event
from binlogkit.binlog.events.informational import AnnotateRowsEvent
from binlogkit.binlog.events.query import QueryEvent
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.binlog.framing import Signal
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.pipeline.filters import ReplicationFilter
from binlogkit.pipeline.gate import TableGate

if TYPE_CHECKING:
    from binlogkit.protocol.replication import SemiSyncAck
    from binlogkit.services.binlog_server import ReplicaSession

__all__ = ["DumpEvent", "DumpObserver", "ReplicaFilter"]


@frozen_dataclass
class DumpEvent:
    """An event on its way to a replica: its bytes and where it is in the served binlogs."""

    raw: bytes
    file: str
    offset: int

    @property
    def type_code(self) -> int:
        return self.raw[4]


class DumpObserver:
    """Sees what one server sends every replica; the methods do nothing unless overridden."""

    def start(self, session: ReplicaSession, file: str, position: int) -> None:
        """A dump starts at ``file``:``position``."""

    def send_event(self, session: ReplicaSession, event: DumpEvent) -> Sequence[bytes] | None:
        """None: send ``event`` as it is; else the events to send in its place."""
        return None

    def acknowledged(self, session: ReplicaSession, ack: SemiSyncAck) -> None:
        """A semi-sync replica acknowledged what it got, up to ``ack.file``:``ack.position``."""

    def stop(self, session: ReplicaSession) -> None:
        """The dump ended (the replica left, was refused, or the server stops)."""


class _Filtering:
    """One replica's filter: its decoder (table maps, formats) and gate."""

    def __init__(self, rules: ReplicationFilter) -> None:
        self.rules = rules
        self.decoder = BinlogDecoder(expect_magic=False)
        self.gate = TableGate(lambda m: rules.keeps_table(m.schema, m.table_name), rules.renamed_db)
        self.held: bytes | None = None
        """The raw ANNOTATE_ROWS event the gate holds back."""

    def events(self, event: DumpEvent) -> Sequence[bytes] | None:
        decoded = self.decoder.decode_event(event.raw, event.offset, event.file)
        if isinstance(decoded, Signal):
            return None
        if isinstance(decoded, QueryEvent):
            if not self.rules.keeps_statement(decoded.db, decoded.query):
                return []
            return self._raw([self.gate.query(decoded)], decoded, event.raw)
        held = self.gate.annotate
        out = list(self.gate.feed(decoded))
        if isinstance(decoded, AnnotateRowsEvent) and self.gate.annotate is decoded:
            self.held = event.raw
        raws = self._raw(out, decoded, event.raw, held)
        if self.gate.annotate is None:
            self.held = None
        return raws

    def _raw(
        self,
        events: list[Event],
        decoded: Event,
        raw: bytes,
        held: AnnotateRowsEvent | None = None,
    ) -> list[bytes] | None:
        if len(events) == 1 and events[0] is decoded:
            return None
        out = []
        for event in events:
            if event is decoded or isinstance(event, RowsEvent):
                out.append(raw)  # a rows event names its table by id only: renaming keeps it
            elif event is held and self.held is not None:
                out.append(self.held)
            else:
                out.append(encode_event(event, self.decoder.fmt))
        return out


class ReplicaFilter(DumpObserver):
    """Each replica gets what ``choose(session)`` keeps (None: everything)."""

    def __init__(self, choose: Callable[[ReplicaSession], ReplicationFilter | None]) -> None:
        self.choose = choose
        self._replicas: dict[int, _Filtering | None] = {}

    def start(self, session: ReplicaSession, file: str, position: int) -> None:
        rules = self.choose(session)
        keep = rules is not None and not rules.is_empty
        self._replicas[session.number] = _Filtering(rules) if keep else None  # type: ignore[arg-type]

    def send_event(self, session: ReplicaSession, event: DumpEvent) -> Sequence[bytes] | None:
        filtering = self._replicas.get(session.number)
        return None if filtering is None else filtering.events(event)

    def stop(self, session: ReplicaSession) -> None:
        self._replicas.pop(session.number, None)
