"""A background receiver: a thread that reads a feed of events into a bounded queue.

The :class:`Channel` is that queue. It is bounded in items and in bytes, so
a slow consumer holds the receiver back (backpressure) and memory stays
bounded whatever the source sends. The feed's end, or the error it failed
with, is queued after the items before it as a :class:`Finished` item, so
the consumer meets it once and in order. The consumer waits for items with
:meth:`Channel.wait` (threads) or :meth:`Channel.wait_async` (asyncio); both
take them with :meth:`Channel.get_nowait`.

A :class:`Receiver` is the thread. It opens its feed itself (connecting to
a server does not hold up the consumer) and holds only the feed and the
channel, so the reader that made it can be garbage collected (and stop it)
while it runs; :meth:`Receiver.stop` closes the channel (waking a receiver
held back by it), aborts the feed (waking a read blocked on the source) and
joins.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, Final, Protocol

from binlogkit.binlog.frozen import frozen_dataclass

log = logging.getLogger(__name__)

__all__ = ["EMPTY", "Channel", "Feed", "Finished", "Receiver"]


class _Empty:
    __slots__ = ()

    def __repr__(self) -> str:
        return "EMPTY"


EMPTY: Final = _Empty()
"""What :meth:`Channel.get_nowait` gives when there is nothing to take yet."""


@frozen_dataclass
class Finished:
    """The end of the feed: ``error`` is what it failed with (None: it ended, or was stopped)."""

    error: BaseException | None = None


_CLOSED: Final = Finished()


class Channel:
    """A bounded queue from one producer thread to one consumer.

    :meth:`put` waits while the queue holds ``max_items`` items or
    ``max_bytes`` bytes (an item larger than ``max_bytes`` still goes into
    an empty queue), and then until the consumer took it down to half of
    both, so that the two sides take turns in runs rather than item by item.
    ``high_water`` and ``high_water_bytes`` are the most it ever held.

    The items pass through a deque without a lock (its ``append`` and
    ``popleft`` are atomic; each byte count has one writer): the lock only
    serves the side that waits. A waiting side first says so, then looks
    again, and the other side looks at that flag after its change, so no
    wake-up is lost.
    """

    def __init__(self, max_items: int = 1024, max_bytes: int = 64 << 20) -> None:
        if max_items < 1 or max_bytes < 1:
            raise ValueError("a channel holds at least one item and one byte")
        self.max_items = max_items
        self.max_bytes = max_bytes
        self.high_water = 0
        self.high_water_bytes = 0
        self._low_items = max_items // 2
        self._low_bytes = max_bytes // 2
        self._items: deque[tuple[Any, int]] = deque()
        self._put_bytes = 0  # by the producer
        self._taken_bytes = 0  # by the consumer
        self._closed = False
        self._lock = threading.Lock()
        self._readable = threading.Condition(self._lock)
        self._writable = threading.Condition(self._lock)
        self._reading = False  # the consumer waits in wait()
        self._writing = False  # the producer waits in put()
        self._waker: Callable[[], None] | None = None  # an asyncio consumer's wake-up

    def __len__(self) -> int:
        return len(self._items)

    @property
    def size(self) -> int:
        """The bytes the queued items take."""
        return self._put_bytes - self._taken_bytes

    @property
    def closed(self) -> bool:
        return self._closed

    def put(self, item: Any, size: int) -> bool:
        """Queue ``item`` of ``size`` bytes, waiting for room; False once the channel is closed."""
        items = self._items
        held = len(items)
        if held and (held >= self.max_items or self.size + size > self.max_bytes):
            with self._lock:
                self._writing = True
                self._writable.wait_for(lambda: self._closed or self._room(size))
                self._writing = False
        if self._closed:
            return False
        items.append((item, size))
        self._put_bytes += size
        held = len(items)
        if held > self.high_water:
            self.high_water = held
        held_bytes = self._put_bytes - self._taken_bytes
        if held_bytes > self.high_water_bytes:
            self.high_water_bytes = held_bytes
        if self._reading or self._waker is not None:
            self._wake_consumer()
        return True

    def _room(self, size: int) -> bool:
        """Whether a producer held back may go on: the queue is down to its low-water mark."""
        if not self._items:
            return True
        held = self.size
        return self._low(held) and held + size <= self.max_bytes

    def _low(self, held: int) -> bool:
        return len(self._items) <= self._low_items and held <= self._low_bytes

    def finish(self, error: BaseException | None = None) -> None:
        """Queue the end of the feed (whatever room is left): nothing comes after it."""
        if not self._closed:
            self._items.append((Finished(error), 0))
            self._wake_consumer()

    def close(self) -> None:
        """Drop what is queued and stop both sides: :meth:`put` gives False from now on, the
        consumer gets :class:`Finished`."""
        with self._lock:
            self._closed = True
            self._items.clear()
            self._readable.notify_all()
            self._writable.notify_all()
            waker, self._waker = self._waker, None
        if waker is not None:
            waker()

    def get_nowait(self) -> Any:
        """The next item, :data:`EMPTY` when none is queued, a :class:`Finished` once closed."""
        items = self._items
        if self._closed:
            return _CLOSED
        if not items:
            return EMPTY
        item, size = items.popleft()
        self._taken_bytes += size
        if self._writing and self._low(self.size):
            with self._lock:
                self._writable.notify()
        return item

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until there is something to take (or the channel is closed); False when
        ``timeout`` seconds passed first."""
        with self._lock:
            self._reading = True
            ready = self._readable.wait_for(lambda: self._items or self._closed, timeout)
            self._reading = False
            return bool(ready)

    async def wait_async(self, timeout: float | None = None) -> bool:
        """:meth:`wait` for an asyncio consumer: the event loop runs on meanwhile."""
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(_resolve, ready)

        with self._lock:
            self._waker = wake
            if self._items or self._closed:
                self._waker = None
                return True
        try:
            await asyncio.wait_for(ready, timeout)
        except TimeoutError:
            return False
        finally:
            with self._lock:
                if self._waker is wake:
                    self._waker = None
        return True

    def _wake_consumer(self) -> None:
        with self._lock:
            if self._reading:
                self._readable.notify()
            waker, self._waker = self._waker, None
        if waker is not None:
            waker()


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Feed(Protocol):
    """What a receiver reads: the items of a source, which it can stop from another thread."""

    def __iter__(self) -> Iterator[Any]: ...

    def abort(self) -> None:
        """Wake a read blocked on the source and end the iteration (from another thread)."""
        ...

    def close(self) -> None: ...


class Receiver:
    """A thread that opens a feed (``open_feed()``, in the thread: connecting may take a while)
    and puts its items into ``channel``, then its end or its error (opening's too).

    ``size`` gives each item's size in bytes for the channel's bound.
    """

    def __init__(
        self,
        open_feed: Callable[[], Feed],
        channel: Channel,
        size: Callable[[Any], int],
        name: str = "receiver",
    ) -> None:
        self.channel = channel
        self.feed: Feed | None = None
        """The feed, once the thread opened it."""
        self._open_feed = open_feed
        self._size = size
        self._thread = threading.Thread(target=self._run, name=f"binlogkit-{name}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout: float | None = 10.0) -> bool:
        """Stop the thread and wait for it; False when it is still blocked after ``timeout``.

        A feed still being opened is closed by the thread once it is open.
        """
        self.channel.close()
        feed = self.feed
        if feed is not None:
            feed.abort()
        if self._thread is threading.current_thread() or not self._thread.ident:
            return True
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.warning("%s still blocked %s s after it was stopped", self._thread.name, timeout)
            return False
        return True

    def _run(self) -> None:
        channel = self.channel
        error: BaseException | None = None
        feed = None
        try:
            feed = self.feed = self._open_feed()
            if channel.closed:  # stopped while opening: stop() could not abort it
                return
            put, size = channel.put, self._size
            for item in feed:
                if not put(item, size(item)):
                    break
        except BaseException as err:  # the consumer gets it, in order
            error = err
        finally:
            try:
                if feed is not None:
                    feed.close()
            finally:
                channel.finish(error)
