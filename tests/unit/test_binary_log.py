"""The binary log object (binlogkit.services.binary_log) over a scripted transport: read-ahead
with backpressure, errors once and in order, positions, handlers and observers, every way of
shutting down (no thread left behind), and the asyncio variant doing the same."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from observer_log import ObserverLog
from receiver_threads import receiver_threads, receivers_left
from tx_events import gtid, head, placed, query, xid

from binlogkit.binlog.constants import EventType
from binlogkit.binlog.events import Event, XidEvent
from binlogkit.binlog.events.statement_context import UserVarEvent
from binlogkit.errors import BinlogError
from binlogkit.pipeline.handlers import ContentHandler
from binlogkit.protocol.replication import ResumePoint
from binlogkit.services.binary_log import AsyncBinaryLog, BinaryLog
from binlogkit.services.replica_stream import Start
from binlogkit.services.transports import Transport

Item = tuple[Event, ResumePoint]


@pytest.fixture(autouse=True)
def _no_thread_left_behind() -> Iterator[None]:
    yield
    gc.collect()
    assert not receivers_left(), "a receiver thread outlived its test"


def transactions(count: int) -> list[Event]:
    """``count`` transactions of three events (GTID, BEGIN, XID with the number)."""
    return placed([e for n in range(count) for e in (gtid(n + 1), query(b"BEGIN"), xid(n))])


@dataclass
class Script(Transport):
    """Gives scripted events, each with a point naming its offset; records the starts.

    ``fail``: raised after the events; ``block``: the feed then waits to be aborted.
    """

    events: list[Event]
    fail: BaseException | None = None
    block: bool = False
    name: str = "script"
    starts: list[Start | None] = field(default_factory=list)
    pulled: int = 0

    def open(self, start: Start | None) -> ScriptFeed:
        self.starts.append(start)
        skip = 0
        if isinstance(start, tuple):
            skip = start[1]
        elif isinstance(start, ResumePoint):
            skip = start.position
        return ScriptFeed(self, [e for e in self.events if e.header.offset >= skip])


class ScriptFeed:
    def __init__(self, script: Script, events: list[Event]) -> None:
        self.script = script
        self.events = events
        self.aborted = threading.Event()

    def __iter__(self) -> Iterator[Item]:
        for event in self.events:
            if self.aborted.is_set():
                return
            self.script.pulled += 1
            yield event, ResumePoint("binlog.000001", event.header.end)
        if self.script.fail is not None:
            raise self.script.fail
        if self.script.block:
            self.aborted.wait()

    def abort(self) -> None:
        self.aborted.set()

    def close(self) -> None:
        pass


def offsets(events: list[Event]) -> list[int]:
    return [e.header.offset for e in events]


def test_events_come_through_in_order_with_their_positions() -> None:
    events = transactions(5)
    log = ObserverLog()
    binlog = BinaryLog(Script(events), observers=[log])
    assert binlog.position is None and not binlog.connected
    seen = []
    with binlog:
        assert binlog.connected
        while (event := binlog.wait_for_next_event(5)) is not None:
            seen.append(event)
            assert binlog.position == ResumePoint("binlog.000001", event.header.end)
        assert not binlog.connected  # the end disconnects
    assert seen == events
    assert log.lines[0] == "start script" and log.lines[-1] == "stop script"
    assert "commit @4..84 committed" in log.lines
    assert len(log.lines) == 2 + 15 + 5 + 5  # start, events, begins, commits, stop


def test_a_slow_consumer_holds_the_receiver_back() -> None:
    script = Script(transactions(2000))
    with BinaryLog(script, max_events=16) as binlog:
        time.sleep(0.2)  # the receiver fills the queue and waits
        queue = binlog.queue
        assert queue is not None
        assert script.pulled <= 16 + 1  # one more read, waiting for room
        taken = 0
        for _ in binlog:
            taken += 1
            assert script.pulled <= taken + 16 + 1
            if taken % 500 == 0:
                time.sleep(0.05)
        assert taken == 6000
        assert queue.high_water == 16


def test_an_error_reaches_the_consumer_once_after_the_events_before_it() -> None:
    events = transactions(3)
    log = ObserverLog()
    binlog = BinaryLog(Script(events, fail=BinlogError("the source broke")), observers=[log])
    binlog.connect()
    got = []
    with pytest.raises(BinlogError, match="the source broke"):
        while True:
            event = binlog.wait_for_next_event(5)
            assert event is not None
            got.append(event)
    assert got == events
    assert not binlog.connected
    assert binlog.wait_for_next_event(0.1) is None  # once: then the end
    assert log.lines[-1] == "stop script BinlogError"
    assert list(binlog) == []  # iterating does not start it again


def test_wait_for_next_event_times_out_while_the_source_is_quiet() -> None:
    with BinaryLog(Script(transactions(1), block=True)) as binlog:
        assert len([binlog.wait_for_next_event(5) for _ in range(3)]) == 3
        start = time.monotonic()
        assert binlog.wait_for_next_event(0.2) is None
        assert 0.15 <= time.monotonic() - start < 3
        assert binlog.connected  # a timeout is not the end


def test_disconnect_from_another_thread_wakes_a_waiting_consumer() -> None:
    binlog = BinaryLog(Script([], block=True))
    binlog.connect()
    threading.Timer(0.1, binlog.disconnect).start()
    start = time.monotonic()
    assert binlog.wait_for_next_event() is None
    assert time.monotonic() - start < 5
    assert not binlog.connected


class DisconnectAt(ContentHandler):
    """Disconnects the log from inside the handler, at the XID numbered ``at``."""

    def __init__(self, binlog: BinaryLog, at: int) -> None:
        self.binlog = binlog
        self.at = at

    def on_xid(self, event: XidEvent) -> Event | None:
        if event.xid == self.at:
            self.binlog.disconnect()
        return event


def test_disconnect_from_inside_a_handler_lets_that_event_out_and_nothing_after() -> None:
    log = ObserverLog()
    binlog = BinaryLog(Script(transactions(10)), observers=[log])
    binlog.handlers.append(DisconnectAt(binlog, 3))
    got = list(binlog)
    assert [e.xid for e in got if isinstance(e, XidEvent)] == [0, 1, 2, 3]
    assert not binlog.connected
    # the observers heard of the event, its commit, and then of the stop
    first, last = got[-3].header.offset, got[-1].header.offset
    assert log.lines[-3:] == [f"event @{last}", f"commit @{first}..{last} committed", "stop script"]


def test_garbage_collection_stops_the_receiver() -> None:
    binlog = BinaryLog(Script(transactions(5000)), max_events=4)
    binlog.connect()
    assert binlog.wait_for_next_event(5) is not None
    assert receiver_threads()
    del binlog
    gc.collect()
    assert not receivers_left()


def test_a_handler_that_holds_the_log_does_not_keep_the_thread_alive() -> None:
    binlog = BinaryLog(Script([], block=True))
    binlog.handlers.append(DisconnectAt(binlog, 99))  # a reference cycle
    binlog.connect()
    del binlog
    gc.collect()  # the cycle is collected, and its finalizer stops the thread (checked below)


def test_set_position_starts_over_there_and_drops_what_was_queued() -> None:
    events = transactions(100)
    script = Script(events)
    binlog = BinaryLog(script, start=("binlog.000001", events[3].header.offset), max_events=8)
    assert binlog.position == ResumePoint("binlog.000001", events[3].header.offset)
    with binlog:
        first = binlog.wait_for_next_event(5)
        assert first == events[3]
        time.sleep(0.05)  # events after it are queued
        target = events[90].header.offset
        binlog.set_position(("binlog.000001", target))
        assert binlog.position == ResumePoint("binlog.000001", target)
        assert list(binlog) == events[90:]
    assert script.starts == [("binlog.000001", events[3].header.offset), ("binlog.000001", target)]
    with pytest.raises(ValueError):
        binlog.set_position(("a/b", 4))  # files are named by their base names


def test_connect_again_goes_on_at_the_position() -> None:
    events = transactions(10)
    script = Script(events)
    binlog = BinaryLog(script)
    with binlog:
        for _ in range(6):
            binlog.wait_for_next_event(5)
    with binlog:
        rest = list(binlog)
    assert rest == events[6:]
    assert script.starts == [None, ResumePoint("binlog.000001", events[5].header.end)]
    with binlog, pytest.raises(BinlogError, match="connected already"):
        binlog.connect()
    binlog.set_position("oldest")  # not a place: connecting starts there, not at the old one
    with binlog:
        assert list(binlog) == events
    assert script.starts[-1] == "oldest"


class Inject(ContentHandler):
    """After each GTID event, injects a USER_VAR event; drops BEGIN."""

    def __init__(self, binlog: BinaryLog | AsyncBinaryLog) -> None:
        self.binlog = binlog

    def on_gtid(self, event: Event) -> Event | None:
        self.binlog.handlers.inject(UserVarEvent(head(EventType.USER_VAR), "x", None))
        return event

    def on_query(self, event: Event) -> Event | None:
        return None


def test_handlers_and_injection_run_in_the_consumer() -> None:
    binlog = BinaryLog(Script(transactions(3)))
    binlog.handlers.append(Inject(binlog))
    names = [e.type_name for e in binlog]
    assert names == ["GTID", "USER_VAR", "XID"] * 3


def test_a_consumed_event_does_not_end_a_wait_early() -> None:
    events = placed([query(b"BEGIN")] * 50 + [xid(1)])
    binlog = BinaryLog(Script(events))
    binlog.handlers.append(Inject(binlog))
    with binlog:
        event = binlog.wait_for_next_event(5)
        assert isinstance(event, XidEvent)


def test_a_server_source_needs_a_server_id() -> None:
    with pytest.raises(ValueError, match="server_id"):
        BinaryLog("mariadb://root@127.0.0.1:1")


# --- asyncio -----------------------------------------------------------------------------


def run(coroutine: Callable[[], Any]) -> Any:
    return asyncio.run(coroutine())


def test_async_gives_what_the_blocking_log_gives() -> None:
    events = transactions(50)

    async def read() -> list[Event]:
        binlog = AsyncBinaryLog(Script(events), max_events=4)
        binlog.handlers.append(Inject(binlog))
        return [event async for event in binlog]

    blocking = BinaryLog(Script(events), max_events=4)
    blocking.handlers.append(Inject(blocking))
    assert offsets(run(read)) == offsets(list(blocking))


def test_async_timeout_error_and_disconnect() -> None:
    async def scenario() -> None:
        async with AsyncBinaryLog(Script(transactions(1), block=True)) as binlog:
            for _ in range(3):
                assert await binlog.wait_for_next_event(5) is not None
            ticks = 0

            async def tick() -> None:
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.01)
                    ticks += 1

            ticker = asyncio.create_task(tick())
            assert await binlog.wait_for_next_event(0.2) is None
            assert ticks >= 5  # the loop ran on while the log waited
            ticker.cancel()
            assert binlog.connected
            asyncio.get_running_loop().call_later(0.05, binlog.disconnect)
            assert await binlog.wait_for_next_event() is None
            assert not binlog.connected

        failing = AsyncBinaryLog(Script(transactions(2), fail=BinlogError("gone")))
        got = []
        with pytest.raises(BinlogError, match="gone"):
            async for event in failing:
                got.append(event)
        assert len(got) == 6
        assert await failing.wait_for_next_event(0.05) is None

    asyncio.run(scenario())
