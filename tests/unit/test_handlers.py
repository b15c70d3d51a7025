"""Content handlers (binlogkit.pipeline.handlers): routing, order, replacement, consumption,
injection, and changes to the chain while it runs (from a handler and from other threads)."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest
from tx_events import (
    anonymous,
    gtid,
    head,
    intvar,
    maria,
    other,
    placed,
    query,
    table_map,
    tagged,
    write_rows,
    xa_prepare,
    xid,
)

from binlogkit.binlog.constants import EventType
from binlogkit.binlog.events import Event, RotateEvent, XidEvent
from binlogkit.binlog.events.informational import IncidentEvent
from binlogkit.binlog.events.statement_context import UserVarEvent
from binlogkit.binlog.events.transaction import Xid
from binlogkit.pipeline.handlers import ContentHandler, HandlerChain

KIND_METHODS = [
    "on_query",
    "on_rows",
    "on_table_map",
    "on_xid",
    "on_user_var",
    "on_incident",
    "on_rotate",
    "on_intvar",
    "on_gtid",
    "on_event",
]


def user_var() -> UserVarEvent:
    return UserVarEvent(head(EventType.USER_VAR), "a", None)


def incident() -> IncidentEvent:
    return IncidentEvent(head(EventType.INCIDENT), 1, b"lost")


def rotate() -> RotateEvent:
    return RotateEvent(head(EventType.ROTATE), 4, "binlog.000002")


# Each event and the method it must reach.
ROUTED = [
    (query(b"BEGIN"), "on_query"),
    (query(b"INSERT", compressed=True), "on_query"),
    (write_rows(1), "on_rows"),
    (table_map(), "on_table_map"),
    (xid(), "on_xid"),
    (user_var(), "on_user_var"),
    (incident(), "on_incident"),
    (rotate(), "on_rotate"),
    (intvar(), "on_intvar"),
    (gtid(1), "on_gtid"),
    (anonymous(), "on_gtid"),
    (tagged(2, "tag"), "on_gtid"),
    (maria(3), "on_gtid"),
    (other(EventType.FORMAT_DESCRIPTION), "on_event"),
    (xa_prepare(Xid(1, b"x")), "on_event"),
]


class Recorder(ContentHandler):
    """Records which method saw which event; passes everything on."""

    def __init__(self, name: str = "", log: list[tuple[str, str, Event]] | None = None) -> None:
        self.name = name
        self.log = [] if log is None else log

    def __getattribute__(self, attr: str) -> object:
        if attr in KIND_METHODS:

            def record(event: Event) -> Event | None:
                self.log.append((self.name, attr, event))
                return event

            return record
        return super().__getattribute__(attr)


@pytest.mark.parametrize(
    ("event", "method"), ROUTED, ids=[m + str(i) for i, (_, m) in enumerate(ROUTED)]
)
def test_each_kind_reaches_its_method(event: Event, method: str) -> None:
    recorder = Recorder()
    assert recorder.handle(event) is event
    assert [(attr, e) for _, attr, e in recorder.log] == [(method, event)]


def test_the_default_methods_pass_every_event_on_unchanged() -> None:
    chain = HandlerChain([ContentHandler(), ContentHandler()])
    events = [event for event, _ in ROUTED]
    assert list(chain.run(events)) == events


def test_an_event_class_of_your_own_goes_by_its_bases() -> None:
    class MyXid(XidEvent):
        pass

    class Mine(Event):
        pass

    recorder = Recorder()
    recorder.handle(MyXid(head(EventType.XID), 1))
    recorder.handle(Mine(head(250)))
    assert [attr for _, attr, _ in recorder.log] == ["on_xid", "on_event"]


def test_handlers_run_in_order_each_on_what_the_one_before_passed() -> None:
    log: list[tuple[str, str, Event]] = []
    chain = HandlerChain([Recorder("a", log), Recorder("b", log)])
    chain.append(Recorder("c", log))
    chain.insert(0, Recorder("first", log))
    events = placed([gtid(1), query(b"BEGIN"), xid()])
    assert list(chain.run(events)) == events
    assert [(name, e.header.offset) for name, _, e in log] == [
        (name, e.header.offset) for e in events for name in ("first", "a", "b", "c")
    ]


class XidToCommit(ContentHandler):
    """Replaces each XID by a COMMIT statement."""

    def on_xid(self, event: XidEvent) -> Event | None:
        return query(b"COMMIT")


class DropQueries(ContentHandler):
    def on_query(self, event: Event) -> Event | None:
        return None


def test_a_replaced_event_goes_to_the_next_handlers_method_for_its_own_kind() -> None:
    log: list[tuple[str, str, Event]] = []
    chain = HandlerChain([XidToCommit(), Recorder("after", log)])
    out = list(chain.run([xid()]))
    assert [e.query for e in out] == [b"COMMIT"]  # type: ignore[attr-defined]
    assert [attr for _, attr, _ in log] == ["on_query"]


def test_a_consumed_event_reaches_no_later_handler_and_does_not_come_out() -> None:
    log: list[tuple[str, str, Event]] = []
    chain = HandlerChain([Recorder("before", log), DropQueries(), Recorder("after", log)])
    events = placed([gtid(1), query(b"BEGIN"), write_rows(1), xid()])
    out = list(chain.run(events))
    assert out == [events[0], events[2], events[3]]
    assert [(name, e) for name, _, e in log if name == "after"] == [("after", e) for e in out]
    assert len([1 for name, _, _ in log if name == "before"]) == 4
    # Replacing then consuming: the replacement is consumed too.
    assert list(HandlerChain([XidToCommit(), DropQueries()]).run([xid()])) == []


class InjectAfterGtid(ContentHandler):
    """Injects two marker events after each GTID event."""

    def __init__(self, chain: HandlerChain) -> None:
        self.chain = chain

    def on_gtid(self, event: Event) -> Event | None:
        self.chain.inject(user_var(), incident())
        return event


def test_injected_events_pass_all_handlers_before_the_next_source_event() -> None:
    log: list[tuple[str, str, Event]] = []
    chain = HandlerChain()
    chain.append(Recorder("first", log))
    chain.append(InjectAfterGtid(chain))
    chain.append(Recorder("last", log))
    source = placed([gtid(1), query(b"BEGIN"), xid()])
    pulled: list[Event] = []

    def pull() -> object:
        for event in source:
            pulled.append(event)
            yield event

    out = []
    for event in chain.run(pull()):
        out.append((event.type_name, len(pulled)))
    names = [name for name, _ in out]
    assert names == ["GTID", "USER_VAR", "INCIDENT", "QUERY", "XID"]
    # the injected events came out before the QUERY was pulled from the source
    assert [n for _, n in out] == [1, 1, 1, 2, 3]
    # ... and went through every handler, the one before the injecting one too
    seen = [(name, e.type_name) for name, _, e in log]
    assert ("first", "USER_VAR") in seen
    assert ("last", "INCIDENT") in seen


def test_events_injected_from_outside_come_first_and_can_be_consumed() -> None:
    chain = HandlerChain([DropQueries()])
    chain.inject(query(b"gone"), xid(1))
    out = list(chain.run([xid(2)]))
    assert [e.xid for e in out] == [1, 2]  # type: ignore[attr-defined]
    assert chain.take_injected() is None


class RemoveSelfAt(ContentHandler):
    """Counts events; at its ``stop``-th it takes itself out of the chain."""

    def __init__(self, chain: HandlerChain, stop: int) -> None:
        self.chain = chain
        self.stop = stop
        self.seen = 0

    def handle(self, event: Event) -> Event | None:
        self.seen += 1
        if self.seen == self.stop:
            self.chain.remove(self)
            self.chain.append(Recorder("added"))
        return event


def test_changes_from_inside_a_handler_apply_from_the_next_event() -> None:
    chain = HandlerChain()
    log: list[tuple[str, str, Event]] = []
    remover = RemoveSelfAt(chain, 3)
    chain.append(remover)
    chain.append(Recorder("tail", log))
    events = placed([xid(n) for n in range(6)])
    assert list(chain.run(events)) == events
    assert remover.seen == 3  # saw events 0, 1 and 2, then was gone
    assert len(log) == 6  # the handler after it saw event 2 although the chain changed
    added = chain.members[-1]
    assert isinstance(added, Recorder)
    assert [e.xid for _, _, e in added.log] == [3, 4, 5]  # type: ignore[attr-defined]


def test_remove_of_a_handler_not_in_the_chain_is_an_error() -> None:
    chain = HandlerChain()
    with pytest.raises(ValueError):
        chain.remove(ContentHandler())


class Tagger(ContentHandler):
    """Stamps the event's server id with its own number, to show which handlers ran."""

    def __init__(self, number: int) -> None:
        self.number = number

    def handle(self, event: Event) -> Event | None:
        header = event.header
        return replace(event, header=replace(header, server_id=header.server_id * 10 + self.number))


def test_concurrent_changes_lose_none_and_never_disturb_an_event_in_flight() -> None:
    """Threads add and remove handlers while another runs events through the chain: every
    change lands, and each event went through a chain that existed at some moment (its stamps
    are increasing numbers, as handlers are only appended)."""
    chain = HandlerChain([Tagger(1)])
    stop = threading.Event()
    errors: list[BaseException] = []

    def churn(number: int) -> None:
        try:
            for _ in range(200):
                handler = Tagger(number)
                chain.append(handler)
                chain.remove(handler)
            chain.append(Tagger(number))
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    def events() -> object:
        while not stop.is_set():
            yield xid()

    threads = [threading.Thread(target=churn, args=(n,)) for n in range(2, 9)]
    stamps = []
    runner = chain.run(events())  # type: ignore[arg-type]
    for thread in threads:
        thread.start()
    while any(t.is_alive() for t in threads) or len(stamps) < 100:
        stamps.append(next(runner).header.server_id)
    stop.set()
    for thread in threads:
        thread.join()
    assert not errors
    assert sorted(h.number for h in chain.members) == list(range(1, 9))  # type: ignore[attr-defined]
    for stamp in stamps:
        digits = str(stamp)[1:]  # after the server id 1 the events start with
        assert digits.startswith("1")
        assert len(set(digits[1:])) == len(digits[1:])  # no handler ran twice on one event
