"""The receiver's bounded queue and thread (binlogkit.services.receiver): bounds, order, the
end or error after the items before it, and waking both sides."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from binlogkit.errors import BinlogError
from binlogkit.services.receiver import EMPTY, Channel, Finished, Receiver


def drain(channel: Channel, delay: float = 0.0) -> list[Any]:
    """Everything up to the end, taken slowly."""
    out = []
    while True:
        channel.wait(5)
        item = channel.get_nowait()
        if isinstance(item, Finished):
            out.append(item)
            return out
        out.append(item)
        time.sleep(delay)


def produce(channel: Channel, items: list[tuple[Any, int]], error: Exception | None = None) -> None:
    for item, size in items:
        if not channel.put(item, size):
            return
    channel.finish(error)


def test_items_come_in_order_and_the_queue_never_holds_more_than_its_bound() -> None:
    channel = Channel(max_items=4)
    producer = threading.Thread(target=produce, args=(channel, [(n, 1) for n in range(200)]))
    producer.start()
    out = drain(channel, delay=0.0005)
    producer.join()
    assert out[:-1] == list(range(200))
    assert out[-1] == Finished(None)
    assert channel.high_water == 4  # reached, never passed


def test_the_byte_bound_holds_and_a_big_item_still_goes_alone() -> None:
    channel = Channel(max_items=100, max_bytes=25)
    items = [(n, 10) for n in range(20)] + [("big", 1000), ("after", 10)]
    producer = threading.Thread(target=produce, args=(channel, items))
    producer.start()
    out = drain(channel, delay=0.001)
    producer.join()
    assert out[:-1] == [item for item, _ in items]
    assert channel.high_water_bytes == 1000  # the big item, alone
    assert channel.high_water == 2  # two of 10 bytes fit in 25


def test_the_end_and_the_error_come_after_the_items_before_them() -> None:
    channel = Channel(max_items=2)
    error = BinlogError("broken")
    producer = threading.Thread(target=produce, args=(channel, [(1, 1), (2, 1), (3, 1)], error))
    producer.start()
    out = drain(channel)
    producer.join()
    assert out == [1, 2, 3, Finished(error)]
    assert channel.get_nowait() is EMPTY  # the end was given once


def test_close_wakes_a_producer_held_back_and_a_waiting_consumer() -> None:
    channel = Channel(max_items=1)
    assert channel.put("a", 1)
    result: list[bool] = []
    producer = threading.Thread(target=lambda: result.append(channel.put("b", 1)))
    producer.start()
    time.sleep(0.05)
    assert producer.is_alive()  # held back by the full queue
    channel.close()
    producer.join(2)
    assert result == [False]
    assert channel.get_nowait() == Finished(None)  # what was queued is dropped
    assert channel.wait(5)  # returns at once: closed

    waiting = Channel()
    woke: list[bool] = []
    consumer = threading.Thread(target=lambda: woke.append(waiting.wait(10)))
    consumer.start()
    time.sleep(0.05)
    waiting.close()
    consumer.join(2)
    assert woke == [True]


def test_wait_times_out() -> None:
    channel = Channel()
    start = time.monotonic()
    assert not channel.wait(0.1)
    assert 0.09 <= time.monotonic() - start < 2
    assert channel.get_nowait() is EMPTY


def test_bad_bounds() -> None:
    with pytest.raises(ValueError):
        Channel(max_items=0)


def test_wait_async_wakes_on_a_put_from_another_thread_and_times_out() -> None:
    async def scenario() -> list[Any]:
        channel = Channel()
        assert not await channel.wait_async(0.05)
        timer = threading.Timer(0.05, channel.put, args=("x", 1))
        timer.start()
        assert await channel.wait_async(5)
        timer.join()
        return [channel.get_nowait(), channel.get_nowait()]

    assert asyncio.run(scenario()) == ["x", EMPTY]


class Feed:
    """Items from a generator; ``abort`` ends a wait for the next one."""

    def __init__(self, items: Iterator[Any]) -> None:
        self.items = items
        self.aborted = threading.Event()
        self.closed = False

    def __iter__(self) -> Iterator[Any]:
        return self.items

    def abort(self) -> None:
        self.aborted.set()

    def close(self) -> None:
        self.closed = True


def test_a_receiver_stops_when_held_back_by_a_full_queue() -> None:
    feed = Feed(iter(range(10**9)))
    receiver = Receiver(lambda: feed, Channel(max_items=3), lambda item: 1, "test")
    receiver.start()
    time.sleep(0.05)
    assert len(receiver.channel) == 3
    assert receiver.stop(5)
    assert not receiver.alive and feed.closed and feed.aborted.is_set()


def test_a_receiver_stops_when_its_source_blocks() -> None:
    feed = Feed(iter(()))

    def blocking() -> Iterator[int]:
        yield 1
        feed.aborted.wait()  # a read blocked until the feed is aborted

    feed.items = blocking()
    receiver = Receiver(lambda: feed, Channel(), lambda item: 1)
    receiver.start()
    assert receiver.channel.wait(5) and receiver.channel.get_nowait() == 1
    assert receiver.stop(5)
    assert not receiver.alive and feed.closed


def test_a_receiver_passes_its_feeds_error_on() -> None:
    def failing() -> Iterator[int]:
        yield 1
        raise BinlogError("lost")

    feed = Feed(failing())
    receiver = Receiver(lambda: feed, Channel(), lambda item: 1)
    receiver.start()
    out = drain(receiver.channel)
    assert out[0] == 1 and isinstance(out[1], Finished)
    assert str(out[1].error) == "lost"
    assert receiver.stop(5) and feed.closed


def test_the_feed_is_opened_in_the_thread_and_its_failure_comes_as_the_end() -> None:
    def refuse() -> Feed:
        raise BinlogError("access denied")

    receiver = Receiver(refuse, Channel(), lambda item: 1)
    receiver.start()
    (end,) = drain(receiver.channel)
    assert isinstance(end, Finished) and str(end.error) == "access denied"
    assert receiver.stop(5) and receiver.feed is None


def test_stopped_while_opening_the_feed_is_closed_once_open() -> None:
    opening = threading.Event()
    go_on = threading.Event()
    feed = Feed(iter(range(10)))

    def slow_open() -> Feed:
        opening.set()
        go_on.wait(5)
        return feed

    receiver = Receiver(slow_open, Channel(), lambda item: 1)
    receiver.start()
    assert opening.wait(5)
    stopper = threading.Thread(target=receiver.stop)
    stopper.start()  # waits for the thread, which is still opening
    time.sleep(0.05)
    go_on.set()
    stopper.join(5)
    assert not receiver.alive and feed.closed
    assert len(receiver.channel) == 0  # nothing was read
