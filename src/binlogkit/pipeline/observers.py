"""Observers (ReplicationInterface's callouts): auditing and metrics beside the stream.

An :class:`Observer` is told when a stream starts and stops, when a
transaction begins and how it ends (committed, XA prepared, rolled back;
one whose end never came counts as rolled back), of each ROTATE, and of
each event. It only watches: what it returns is ignored, and it cannot
change the events (that is what content handlers do).

:class:`Observers` holds them (changeable while running, like a handler
chain) and makes the callouts. Where transactions begin and end is
:class:`~binlogkit.binlog.transactions.TransactionState`'s call and how they
end :func:`~binlogkit.pipeline.transactions.ending`'s, as for
:mod:`binlogkit.pipeline.transactions`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from types import MappingProxyType

from binlogkit.binlog.events import Event, RotateEvent
from binlogkit.binlog.transactions import Step, TransactionState
from binlogkit.pipeline.roster import Roster
from binlogkit.pipeline.transactions import Ending, Outcome, ending

__all__ = ["Observer", "Observers"]


class Observer:
    """Base of observers: override the callouts to act on (each does nothing by default).

    The transaction callouts get the event that began the transaction (a GTID
    event, BEGIN, or a statement of its own) and its :class:`Ending`.
    """

    def stream_start(self, source: str) -> None:
        """The stream from ``source`` starts (before its first event)."""

    def stream_stop(self, source: str, error: BaseException | None) -> None:
        """The stream stopped: it ended, was disconnected, or failed with ``error``."""

    def transaction_begin(self, first: Event) -> None:
        """A transaction begins with ``first`` (told before ``first`` itself)."""

    def transaction_commit(self, first: Event, ending: Ending) -> None:
        """It committed (told after its last event)."""

    def transaction_prepare(self, first: Event, ending: Ending) -> None:
        """It was XA prepared: a later XA COMMIT or XA ROLLBACK decides it."""

    def transaction_rollback(self, first: Event, ending: Ending) -> None:
        """It was rolled back, or never ended (``ending.outcome`` is INCOMPLETE)."""

    def rotate(self, event: RotateEvent) -> None:
        """A ROTATE: the binlog goes on in ``event.next_file``."""

    def each_event(self, event: Event) -> None:
        """Every event, in order."""


_ENDINGS = MappingProxyType(
    {
        Outcome.COMMITTED: "transaction_commit",
        Outcome.PREPARED: "transaction_prepare",
        Outcome.ROLLED_BACK: "transaction_rollback",
        Outcome.INCOMPLETE: "transaction_rollback",
    }
)
"""The callout that tells of each outcome."""
_INCOMPLETE = Outcome.INCOMPLETE


class Observers(Roster[Observer]):
    """Observers in order, and the transaction state of the events they were shown.

    While it has none, it follows nothing: observers added then are told of
    transactions from the next one that begins.
    """

    def __init__(self, observers: Iterable[Observer] = ()) -> None:
        super().__init__(observers)
        self._state = TransactionState()
        self._first: Event | None = None

    def start(self, source: str) -> None:
        for observer in self.members:
            observer.stream_start(source)

    def stop(self, source: str, error: BaseException | None = None) -> None:
        """The stream stopped: a transaction still open never ended."""
        self._cut()
        self._state = TransactionState()
        for observer in self.members:
            observer.stream_stop(source, error)

    def see(self, event: Event) -> None:
        """Tell of ``event``, the next event of the stream."""
        members = self.members
        if not members:  # nobody to tell: an observer added later starts afresh
            if self._first is not None or self._state.open:
                self._state = TransactionState()
                self._first = None
            return
        step = self._state.step(event)
        if step & Step.CUT:
            self._cut()
        if step & Step.BEGINS:
            self._first = event
            for observer in members:
                observer.transaction_begin(event)
        for observer in members:
            observer.each_event(event)
        if isinstance(event, RotateEvent):
            for observer in members:
                observer.rotate(event)
        if step & Step.ENDS and self._first is not None:
            self._end(self._first, ending(self._first, event))

    def watch(self, events: Iterable[Event], source: str) -> Iterator[Event]:
        """``events`` (read from ``source``), each told of as it passes, and the stream's
        start and stop (with the error it failed with; leaving the loop early is a stop)."""
        self.start(source)
        try:
            for event in events:
                self.see(event)
                yield event
        except GeneratorExit:
            self.stop(source)
            raise
        except BaseException as err:
            self.stop(source, err)
            raise
        self.stop(source)

    def _cut(self) -> None:
        """The transaction begun last, if it did not end, never will."""
        if self._first is not None:
            self._end(self._first, Ending(None, _INCOMPLETE))

    def _end(self, first: Event, ended: Ending) -> None:
        self._first = None
        name = _ENDINGS[ended.outcome]
        for observer in self.members:
            getattr(observer, name)(first, ended)
