"""Transactions of a stream of decoded events, each read as the stream goes (never held whole).

:func:`transactions` gives each transaction of a stream as a
:class:`Transaction`: its GTID (MySQL ``uuid:n``, tagged ``uuid:tag:n``,
MariaDB ``d-s-n``; None without one) and start position at once, then its
events or row changes, read from the stream as they are iterated, and once
its last event is read its end position, outcome (committed, rolled back, XA
prepared, or incomplete), commit time, XA phase and XID, and the statement of
an autocommitted DDL. :func:`grouped` gives the events between transactions
too, so that it gives every event of the stream exactly once.

Where transactions begin and end is :mod:`binlogkit.binlog.transactions`'s
model: GTID or BEGIN ... XID / COMMIT / ROLLBACK, XA START ... XA PREPARE then
XA COMMIT / XA ROLLBACK, DDL in a group of its own; the events a MySQL
TRANSACTION_PAYLOAD holds follow it in the stream (the decoder expands them)
and belong to its transaction.

Streaming: a transaction keeps none of its events. Its :meth:`~Transaction.events`
(or :meth:`~Transaction.changes`) can be iterated once, and only before the
next transaction is fetched: fetching it reads past what is left of this one.
So a transaction of millions of rows takes the memory of one event.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import Enum

from binlogkit.binlog.constants import EventType
from binlogkit.binlog.events import Event
from binlogkit.binlog.events.mariadb_gtid import MariaGtidEvent
from binlogkit.binlog.events.query import QueryEvent
from binlogkit.binlog.events.transaction import XaPrepareEvent, Xid
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.transactions import GTID_EVENTS, Control, Step, TransactionState, control
from binlogkit.errors import BinlogError
from binlogkit.gtid import Gtid, MariaGtid
from binlogkit.pipeline.changes import ChangeEvent, row_changes

__all__ = [
    "Ending",
    "Outcome",
    "Position",
    "Transaction",
    "XaPhase",
    "ending",
    "grouped",
    "transactions",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_PAYLOAD = int(EventType.TRANSACTION_PAYLOAD)


@frozen_dataclass
class Position:
    """A place in a binlog: the file (as the events name it) and a byte offset."""

    file: str | None
    offset: int

    def __str__(self) -> str:
        return f"{self.file or '<input>'}:{self.offset}"


class Outcome(Enum):
    """How a transaction ended."""

    COMMITTED = "committed"
    ROLLED_BACK = "rolled back"
    PREPARED = "prepared"
    """XA PREPARE: its changes wait for an XA COMMIT or XA ROLLBACK (a later transaction)."""
    INCOMPLETE = "incomplete"
    """Its end never came: the stream ended, or the next transaction began."""


class XaPhase(Enum):
    """What an XA transaction's event group does."""

    PREPARE = "XA PREPARE"
    """XA START ... XA END, XA PREPARE: the changes, prepared."""
    COMMIT = "XA COMMIT"
    """Commits an XA transaction prepared before (no changes of its own)."""
    ROLLBACK = "XA ROLLBACK"
    """Rolls back an XA transaction prepared before."""
    ONE_PHASE = "XA COMMIT ONE PHASE"
    """The changes and their commit in one group."""


class _Stream:
    """The events with their steps in the transaction model, and one event held back."""

    __slots__ = ("_events", "_held", "_state")

    def __init__(self, events: Iterable[Event]) -> None:
        self._events = iter(events)
        self._state = TransactionState()
        self._held: tuple[Event, Step] | None = None

    def next(self) -> tuple[Event, Step] | None:
        held = self._held
        if held is not None:
            self._held = None
            return held
        event = next(self._events, None)
        return None if event is None else (event, self._state.step(event))

    def hold(self, item: tuple[Event, Step]) -> None:
        self._held = item


def grouped(events: Iterable[Event]) -> Iterator[Transaction | Event]:
    """Each transaction of ``events`` as a :class:`Transaction`, the events between them as such.

    Between transactions are the file-level events (format description,
    ROTATE, GTID lists ...) and the events of a transaction the stream began
    inside of, up to its end.
    """
    stream = _Stream(events)
    while (item := stream.next()) is not None:
        event, step = item
        if not step & Step.BEGINS:
            yield event
            continue
        transaction = Transaction(stream, event, step)
        yield transaction
        transaction._read_past()


def transactions(events: Iterable[Event]) -> Iterator[Transaction]:
    """The transactions of ``events`` (see the module doc; :func:`grouped` gives the rest too)."""
    for item in grouped(events):
        if isinstance(item, Transaction):
            yield item


class Transaction:
    """One transaction, its events read from the stream while :meth:`events` is iterated.

    Known at once: ``first`` (the event that began it: a GTID event, BEGIN,
    a statement-context event or a statement of its own), :attr:`gtid` and
    :attr:`start`. Known once the last event is read (an error before):
    :attr:`end`, :attr:`last`, :attr:`outcome`, :attr:`commit_timestamp`,
    :attr:`xa`, :attr:`xid` and :attr:`ddl`.
    """

    __slots__ = ("_at", "_ended", "_handed_out", "_payload_end", "_reader", "_stream", "first")

    def __init__(self, stream: _Stream, first: Event, step: Step) -> None:
        self.first = first
        self._stream = stream
        self._reader = self._read(first, step)
        self._handed_out = False
        self._payload_end = -1  # the end of the TRANSACTION_PAYLOAD whose events are coming
        self._at = self.start  # the end of the events read so far
        self._ended: Ending | None = None

    @property
    def gtid(self) -> Gtid | MariaGtid | None:
        """The GTID of its GTID event; None for an anonymous or pre-GTID transaction."""
        first = self.first
        return getattr(first, "gtid", None) if isinstance(first, GTID_EVENTS) else None

    @property
    def start(self) -> Position:
        """Where its first event starts."""
        header = self.first.header
        return Position(header.file, header.offset)

    def events(self) -> Iterator[Event]:
        """Its events, read from the stream; once, and before the next transaction is fetched."""
        if self._handed_out:
            raise self._misuse(
                "a transaction's events can be read only once, before the next transaction",
                "iterate events() or changes() once, in stream order",
            )
        self._handed_out = True
        return self._reader

    def changes(self) -> Iterator[ChangeEvent]:
        """Its row changes (:func:`~binlogkit.pipeline.changes.row_changes` of :meth:`events`)."""
        return row_changes(self.events())

    @property
    def end(self) -> Position:
        """Where its last event ends (the events inside a TRANSACTION_PAYLOAD take no room)."""
        self._known()
        return self._at

    @property
    def last(self) -> Event | None:
        """The event that ended it (None when it is incomplete)."""
        return self._known().last

    @property
    def outcome(self) -> Outcome:
        return self._known().outcome

    @property
    def commit_timestamp(self) -> int | None:
        """Microseconds since the epoch when it was written committed (or XA prepared).

        The immediate commit timestamp of MySQL 8's GTID event, else the
        header timestamp of the event that ended it; None when incomplete.
        """
        return self._known().commit_timestamp

    @property
    def commit_time(self) -> datetime | None:
        """:attr:`commit_timestamp` as a UTC datetime."""
        micros = self.commit_timestamp
        return None if micros is None else _EPOCH + timedelta(microseconds=micros)

    @property
    def xa(self) -> XaPhase | None:
        """What it does as an XA transaction; None for others."""
        return self._known().xa

    @property
    def xid(self) -> Xid | None:
        """The XA transaction's id, when the binlog names it."""
        return self._known().xid

    @property
    def ddl(self) -> str | None:
        """The statement of a group of its one statement: autocommitted DDL (or, in binlogs
        before BEGIN was logged around every change, any statement); else None."""
        return self._known().ddl

    def __repr__(self) -> str:
        return f"<Transaction {self.gtid or '(no GTID)'} at {self.start}>"

    def _known(self) -> Ending:
        if self._ended is None:
            raise self._misuse(
                "the transaction's end is known once its last event is read",
                "iterate its events() or changes() first",
            )
        return self._ended

    def _misuse(self, message: str, hint: str) -> BinlogError:
        where = self.start
        return BinlogError(message, file=where.file, offset=where.offset, hint=hint)

    def _read(self, event: Event, step: Step) -> Iterator[Event]:
        stream = self._stream
        while True:
            self._take(event)
            if step & Step.ENDS:
                self._ended = ending(self.first, event)
                yield event
                return
            yield event
            item = stream.next()
            if item is None or item[1] & Step.BEGINS:
                if item is not None:
                    stream.hold(item)
                self._ended = Ending(None, Outcome.INCOMPLETE)
                return
            event, step = item

    def _read_past(self) -> None:
        """Read what the caller left of the events (keeping none) and hand no more out."""
        self._handed_out = True
        deque(self._reader, maxlen=0)

    def _take(self, event: Event) -> None:
        """Move the end past ``event`` unless it lies inside a TRANSACTION_PAYLOAD."""
        header = event.header
        if header.log_pos == 0 and header.offset == self._payload_end:
            return
        if header.type_code == _PAYLOAD:
            self._payload_end = header.end
        self._at = Position(header.file, header.end)


@dataclass(slots=True)
class Ending:
    """What is known of a transaction once its last event is read (see :class:`Transaction`)."""

    last: Event | None
    outcome: Outcome
    commit_timestamp: int | None = None
    xa: XaPhase | None = None
    xid: Xid | None = None
    ddl: str | None = None


def ending(first: Event, last: Event) -> Ending:
    """What the event ``last`` that ended the transaction begun by ``first`` says of it."""
    commit = getattr(first, "immediate_commit_timestamp", None)
    if commit is None:
        commit = last.header.timestamp * 1_000_000
    ended = Ending(last, Outcome.COMMITTED, commit)
    if isinstance(last, XaPrepareEvent):
        ended.xid = last.xid
        if last.one_phase:
            ended.xa = XaPhase.ONE_PHASE
        else:
            ended.xa, ended.outcome = XaPhase.PREPARE, Outcome.PREPARED
    elif isinstance(last, QueryEvent):
        found = control(last.query)
        if found is None:
            ended.ddl = last.text
        elif found is Control.ROLLBACK:
            ended.outcome = Outcome.ROLLED_BACK
        elif found is Control.XA_COMMIT:
            ended.xa, ended.xid = XaPhase.COMMIT, _xid(first, last)
        elif found is Control.XA_ROLLBACK:
            ended.xa, ended.xid = XaPhase.ROLLBACK, _xid(first, last)
            ended.outcome = Outcome.ROLLED_BACK
    return ended


def _xid(first: Event, statement: QueryEvent) -> Xid | None:
    """The XID of an XA COMMIT / XA ROLLBACK group: MariaDB's GTID event names it, MySQL's
    statement prints it."""
    if isinstance(first, MariaGtidEvent):
        return first.xid
    try:
        return Xid.parse(statement.text.split(None, 2)[-1])
    except ValueError:
        return None
