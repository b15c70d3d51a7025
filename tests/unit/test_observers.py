"""Observers (binlogkit.pipeline.observers): the callouts for stream start and stop, each
transaction's begin and end (from the transaction model), rotates and every event."""

from __future__ import annotations

import pytest
from observer_log import ObserverLog
from tx_events import (
    COMPLETED_XA,
    PREPARED_XA,
    STANDALONE,
    gtid,
    head,
    maria,
    other,
    placed,
    query,
    table_map,
    write_rows,
    xa_prepare,
    xid,
)

from binlogkit.binlog.constants import EventType
from binlogkit.binlog.events import Event, RotateEvent
from binlogkit.binlog.events.transaction import Xid
from binlogkit.errors import BinlogError
from binlogkit.pipeline.observers import Observer, Observers
from binlogkit.pipeline.transactions import Ending, Outcome

XID = Xid(1, b"x")


def watched(events: list[Event]) -> list[str]:
    log = ObserverLog()
    observers = Observers([log])
    assert list(observers.watch(events, "src")) == events
    return [line for line in log.lines if not line.startswith("event")]


def test_callouts_of_a_stream() -> None:
    rotate = RotateEvent(head(EventType.ROTATE), 4, "binlog.000002")
    events = placed(
        [
            other(EventType.FORMAT_DESCRIPTION),  # 4
            gtid(1),  # 44
            query(b"BEGIN"),  # 84
            table_map(),  # 124
            write_rows(1),  # 164
            xid(),  # 204
            query(b"CREATE TABLE t (a INT)"),  # 244: a transaction of its own
            query(b"BEGIN"),  # 284
            query(b"INSERT INTO m VALUES (1)"),  # 324
            query(b"ROLLBACK"),  # 364
            rotate,  # 404
        ]
    )
    log = ObserverLog()
    assert list(Observers([log]).watch(events, "src")) == events
    assert log.lines == [
        "start src",
        "event @4",
        "begin @44",
        "event @44",
        "event @84",
        "event @124",
        "event @164",
        "event @204",
        "commit @44..204 committed",
        "begin @244",
        "event @244",
        "commit @244..244 committed",
        "begin @284",
        "event @284",
        "event @324",
        "event @364",
        "rollback @284..364 rolled back",
        "event @404",
        "rotate binlog.000002",
        "stop src",
    ]


def test_xa_prepare_then_commit_and_a_cut_transaction() -> None:
    events = placed(
        [
            maria(1, flags=PREPARED_XA, xid=XID),  # 4 (MariaDB logs no XA START)
            table_map(),  # 44
            write_rows(1),  # 84
            query(b"XA END 'x'"),  # 124
            xa_prepare(XID),  # 164
            maria(2, flags=STANDALONE | COMPLETED_XA, xid=XID),  # 204
            query(b"XA COMMIT 'x'"),  # 244
            gtid(3),  # 284: begins, never ends ...
            query(b"BEGIN"),  # 324
            gtid(4),  # 364: ... cut short by the next GTID
            query(b"BEGIN"),  # 404: open when the stream stops
        ]
    )
    assert watched(events) == [
        "start src",
        "begin @4",
        "prepare @4..164 prepared",
        "begin @204",
        "commit @204..244 committed",
        "begin @284",
        "rollback @284..None incomplete",
        "begin @364",
        "rollback @364..None incomplete",
        "stop src",
    ]


def test_the_end_of_a_transaction_begun_before_the_stream_is_not_told() -> None:
    events = placed([xid(), gtid(2), xid()])
    assert watched(events) == ["start src", "begin @44", "commit @44..84 committed", "stop src"]


def test_an_error_stops_the_stream_with_it_and_leaving_early_stops_it_too() -> None:
    def failing() -> object:
        yield from placed([gtid(1), query(b"BEGIN")])
        raise BinlogError("broken")

    log = ObserverLog()
    with pytest.raises(BinlogError):
        for _ in Observers([log]).watch(failing(), "src"):  # type: ignore[arg-type]
            pass
    assert log.lines[-2:] == ["rollback @4..None incomplete", "stop src BinlogError"]

    log = ObserverLog()
    for _ in Observers([log]).watch(placed([gtid(1), xid(), gtid(2), xid()]), "src"):
        break
    assert log.lines[-2:] == ["rollback @4..None incomplete", "stop src"]


def test_observers_added_midway() -> None:
    events = placed([gtid(1), query(b"BEGIN"), xid(), gtid(2), xid()])
    first, late = ObserverLog(), ObserverLog()
    observers = Observers()
    for event in events:
        if event.header.offset == 84:
            observers.append(first)  # to observers that had none: from the next transaction
        observers.see(event)
    assert [line for line in first.lines if not line.startswith("event")] == [
        "begin @124",
        "commit @124..164 committed",
    ]
    observers = Observers([ObserverLog()])
    for event in events:
        if event.header.offset == 84:
            observers.append(late)  # beside another: the state is kept, the end is told
        observers.see(event)
    assert [line for line in late.lines if not line.startswith("event")] == [
        "commit @4..84 committed",
        "begin @124",
        "commit @124..164 committed",
    ]
    told = len(late.lines)
    observers.remove(late)
    observers.see(placed([gtid(3)], start=204)[0])
    assert len(late.lines) == told


def test_outcomes_choose_the_callout() -> None:
    calls: list[tuple[str, Outcome]] = []

    class Outcomes(Observer):
        def transaction_commit(self, first: Event, ending: Ending) -> None:
            calls.append(("commit", ending.outcome))

        def transaction_rollback(self, first: Event, ending: Ending) -> None:
            calls.append(("rollback", ending.outcome))

        def transaction_prepare(self, first: Event, ending: Ending) -> None:
            calls.append(("prepare", ending.outcome))

    observers = Observers([Outcomes()])
    for event in [
        gtid(1),
        xid(),
        query(b"BEGIN"),
        query(b"ROLLBACK"),
        maria(2, flags=PREPARED_XA, xid=XID),
        xa_prepare(XID),
        query(b"BEGIN"),
    ]:
        observers.see(event)
    observers.stop("src")
    assert calls == [
        ("commit", Outcome.COMMITTED),
        ("rollback", Outcome.ROLLED_BACK),
        ("prepare", Outcome.PREPARED),
        ("rollback", Outcome.INCOMPLETE),
    ]
