"""Content handlers (WL#3283's Content_handler): pass each event on, replace it, or consume it.

A :class:`ContentHandler` has one method per kind of event (``on_query``,
``on_rows``, ``on_table_map``, ``on_xid``, ``on_user_var``, ``on_incident``,
``on_rotate``, ``on_intvar``, ``on_gtid``) and ``on_event`` for every other
kind. Each returns the event to pass on (the same one or another) or None to
consume it; by default they pass it on unchanged. Override :meth:`ContentHandler.handle`
to see every event whatever its kind.

A :class:`HandlerChain` runs its handlers in order, each on what the one
before passed on (a replaced event goes to the next handler's method for its
own kind). The chain can be changed at any time, from another thread or from
inside a handler: a change applies from the next event on. Events given to
:meth:`HandlerChain.inject` wait in the injection queue and pass through all
the handlers before the next event is taken from the source.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from types import MappingProxyType

from binlogkit.binlog.events import EVENT_CODECS, Event, RotateEvent, XidEvent
from binlogkit.binlog.events.informational import IncidentEvent
from binlogkit.binlog.events.query import QueryEvent
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.binlog.events.statement_context import IntvarEvent, UserVarEvent
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.binlog.transactions import GTID_EVENTS
from binlogkit.pipeline.roster import Roster

__all__ = ["ContentHandler", "HandlerChain"]

_KIND_METHODS: dict[type[Event], str] = {
    QueryEvent: "on_query",
    RowsEvent: "on_rows",
    TableMapEvent: "on_table_map",
    XidEvent: "on_xid",
    UserVarEvent: "on_user_var",
    IncidentEvent: "on_incident",
    RotateEvent: "on_rotate",
    IntvarEvent: "on_intvar",
    **dict.fromkeys(GTID_EVENTS, "on_gtid"),
}
"""The classes with a method of their own (their subclasses share it), and its name."""


def _method_name(cls: type[Event]) -> str:
    for base in cls.__mro__:
        name = _KIND_METHODS.get(base)
        if name is not None:
            return name
    return "on_event"


_ROUTES = MappingProxyType({cls: _method_name(cls) for cls in EVENT_CODECS.values()})
"""Every registered event class → the name of its handler method (other classes are looked up
by their bases when they come)."""


class ContentHandler:
    """Base of content handlers: override the methods of the kinds of event to act on."""

    def handle(self, event: Event) -> Event | None:
        """The event to pass on (``event``, or another), or None to consume it."""
        cls = type(event)
        method: Callable[[Event], Event | None] = getattr(
            self, _ROUTES.get(cls) or _method_name(cls)
        )
        return method(event)

    def on_query(self, event: QueryEvent) -> Event | None:
        return event

    def on_rows(self, event: RowsEvent) -> Event | None:
        return event

    def on_table_map(self, event: TableMapEvent) -> Event | None:
        return event

    def on_xid(self, event: XidEvent) -> Event | None:
        return event

    def on_user_var(self, event: UserVarEvent) -> Event | None:
        return event

    def on_incident(self, event: IncidentEvent) -> Event | None:
        return event

    def on_rotate(self, event: RotateEvent) -> Event | None:
        return event

    def on_intvar(self, event: IntvarEvent) -> Event | None:
        return event

    def on_gtid(self, event: Event) -> Event | None:
        """MySQL's GTID events (anonymous and tagged too) and MariaDB's."""
        return event

    def on_event(self, event: Event) -> Event | None:
        """Every kind without a method of its own (format descriptions, XA_PREPARE, opaque
        events, events of your own making ...)."""
        return event


class HandlerChain(Roster[ContentHandler]):
    """Content handlers in order, with an injection queue (see the module doc).

    :meth:`run` puts a stream of events through it; a reader that pulls
    events itself calls :meth:`take_injected` before it takes the next
    source event and gives each to :meth:`process`.
    """

    def __init__(self, handlers: Iterable[ContentHandler] = ()) -> None:
        super().__init__(handlers)
        self._injected: deque[Event] = deque()

    def inject(self, *events: Event) -> None:
        """Queue ``events`` to go through all the handlers before the next source event."""
        self._injected.extend(events)

    def take_injected(self) -> Event | None:
        """The next injected event, or None when the queue is empty."""
        injected = self._injected
        return injected.popleft() if injected else None

    def process(self, event: Event) -> Event | None:
        """``event`` through the handlers of the chain as it is now; None when one consumed it."""
        for handler in self.members:
            out = handler.handle(event)
            if out is None:
                return None
            event = out
        return event

    def run(self, events: Iterable[Event]) -> Iterator[Event]:
        """The events that come out of the chain: injected ones first, then each source event."""
        source = iter(events)
        while True:
            event = self.take_injected()
            if event is None:
                event = next(source, None)
                if event is None:
                    return
            out = self.process(event)
            if out is not None:
                yield out
