"""The binary log object (WL#3283's Binary_log): any source's events, read ahead in a thread,
through content handlers, told to observers.

::

    with BinaryLog("mariadb://repl:pw@db1", server_id=4242, start="oldest") as binlog:
        binlog.handlers.append(MyHandler())
        binlog.observers.append(MyAudit())
        for event in binlog:
            ...
        resume_at = binlog.position

:class:`BinaryLog` takes what :func:`~binlogkit.services.transports.create_transport`
takes (``mysql://`` / ``mariadb://`` URLs, ``file://`` URLs, paths, ``-``)
and :func:`binlogkit.open`'s options. :meth:`~BinaryLog.connect` starts a
receiver thread (:mod:`binlogkit.services.receiver`) that reads and decodes
the source into a bounded queue while the consumer works, and holds back
when the queue is full. :meth:`~BinaryLog.wait_for_next_event` takes the
next event (None when ``timeout`` passes first, or at the end: then
:attr:`~BinaryLog.connected` is False), puts it through :attr:`~BinaryLog.handlers`
(injected events first) and tells :attr:`~BinaryLog.observers` of what comes
out. An error of the receiver reaches the consumer once, after the events
before it, and disconnects.

:attr:`~BinaryLog.position` is the resume point after the last event taken
(file, offset and executed GTIDs); :meth:`~BinaryLog.set_position` moves to
``(file, offset)``, a GTID set or a resume point: files are opened again
there, a server stream starts again there. :meth:`~BinaryLog.connect` after
:meth:`~BinaryLog.disconnect` goes on at :attr:`~BinaryLog.position`.

:meth:`~BinaryLog.disconnect` may come from any thread, from inside a
handler (the event being handled still comes out; nothing after it), from
``with``, or from the garbage collector; it stops and joins the thread.
:class:`AsyncBinaryLog` is the same object for asyncio: ``async for``,
``await wait_for_next_event(timeout)``, ``async with``.
"""

from __future__ import annotations

import enum
import threading
import time
import weakref
from collections.abc import AsyncIterator, Generator, Iterable, Iterator
from types import TracebackType
from typing import Any, Final, Self

from binlogkit.binlog.events import Event
from binlogkit.errors import BinlogError
from binlogkit.io.binlog_index import Source
from binlogkit.pipeline.handlers import ContentHandler, HandlerChain
from binlogkit.pipeline.observers import Observer, Observers
from binlogkit.protocol.replication import BINLOG_HEADER_SIZE, ResumePoint
from binlogkit.services.receiver import EMPTY, Channel, Finished, Receiver
from binlogkit.services.replica_stream import PointFields, Start, check_start
from binlogkit.services.transports import Item, Transport, create_transport

__all__ = ["AsyncBinaryLog", "BinaryLog"]


class _Signal(enum.Enum):
    END = "end"
    """Nothing more comes: not connected, or the source ended."""
    NEED = "need"
    """Nothing to take yet: wait for the receiver."""


_END: Final = _Signal.END
_NEED: Final = _Signal.NEED

_Wait = tuple[Channel, float | None]
"""A wait the consumer must do: on this channel, at most so many seconds."""


def _size(item: Item) -> int:
    return item[0].header.event_size


def _stop_all(receivers: list[Receiver]) -> None:
    """Stop the receivers a garbage-collected binary log left running."""
    for receiver in list(receivers):
        receiver.stop()


class _BinaryLogCore:
    """Everything :class:`BinaryLog` and :class:`AsyncBinaryLog` share: all but the waiting."""

    def __init__(
        self,
        source: Source | Transport,
        *,
        start: Start | None = None,
        handlers: Iterable[ContentHandler] = (),
        observers: Iterable[Observer] = (),
        max_events: int = 1024,
        max_bytes: int = 64 << 20,
        **options: Any,
    ) -> None:
        self.transport: Transport = create_transport(source, **options)
        self.handlers = HandlerChain(handlers)
        """The content handlers (append, insert or remove them at any time)."""
        self.observers = Observers(observers)
        """The observers (append or remove them at any time)."""
        self._start = None if start is None else check_start(start)
        self._point: ResumePoint | PointFields | None = None
        self._bounds = (max_events, max_bytes)
        self._receiver: Receiver | None = None
        self._ever_connected = False
        self._lock = threading.Lock()
        # Telling the observers of a disconnect that came while an event was on its way to them
        # waits for that event: the consumer says it is delivering before it takes the event,
        # a disconnect says the stop is pending before it looks at that (see _tell_stopped).
        self._delivering = False
        self._stop_pending = False
        self._running: list[Receiver] = []
        weakref.finalize(self, _stop_all, self._running)

    @property
    def connected(self) -> bool:
        return self._receiver is not None

    @property
    def position(self) -> ResumePoint | None:
        """The resume point after the last event taken; else where :meth:`set_position` (or
        ``start``) put the log, when that is a place (None for ``"oldest"`` / ``"now"``)."""
        point = self._point
        if isinstance(point, tuple):  # kept as its fields until asked for
            point = self._point = ResumePoint(*point)
        return point or _point_at(self._start)

    @property
    def queue(self) -> Channel | None:
        """The receiver's queue while connected (its length, size and high-water marks)."""
        receiver = self._receiver
        return None if receiver is None else receiver.channel

    def connect(self) -> None:
        """Start reading (at :attr:`position` when the log was connected before)."""
        self._tell_stopped()  # of a disconnect whose consumer never came back
        with self._lock:
            if self._receiver is not None:
                raise BinlogError("the binary log is connected already")
            self._launch(self._start if self._point is None else self.position)
            self._ever_connected = True
        self.observers.start(self.transport.name)

    def disconnect(self) -> None:
        """Stop reading and stop the receiver thread (from any thread; see the module doc)."""
        with self._lock:
            receiver, self._receiver = self._receiver, None
        if receiver is None:
            return
        self._halt(receiver)
        self._stop_pending = True
        if not self._delivering:
            self._tell_stopped()

    def set_position(self, where: Start) -> None:
        """Go on at ``where``: ``(file, offset)``, a GTID set (or its text), a resume point,
        ``"oldest"`` or ``"now"``. Events queued from before are dropped."""
        start = check_start(where)
        with self._lock:
            self._start, self._point = start, None
            receiver = self._receiver
            if receiver is not None:
                self._halt(receiver)
                self._launch(start)

    def _launch(self, start: Start | None) -> None:
        """Under the lock: a receiver reading from ``start``."""
        transport = self.transport
        receiver = Receiver(lambda: transport.open(start), Channel(*self._bounds), _size)
        self._running.append(receiver)
        receiver.start()
        self._receiver = receiver

    def _halt(self, receiver: Receiver) -> None:
        receiver.stop()
        if receiver in self._running:
            self._running.remove(receiver)

    def _tell_stopped(self) -> None:
        """Tell the observers of a pending stop, once."""
        with self._lock:
            pending, self._stop_pending = self._stop_pending, False
        if pending:
            self.observers.stop(self.transport.name)

    # -- taking events ------------------------------------------------------------------------

    def _poll(self) -> Event | _Signal:
        """The next event out of the handlers without waiting, or why there is none."""
        handlers = self.handlers
        while True:
            self._delivering = True
            try:
                event = handlers.take_injected()
                if event is None:
                    receiver = self._receiver
                    if receiver is None:
                        return _END
                    item = receiver.channel.get_nowait()
                    if item is EMPTY:
                        return _NEED
                    if type(item) is Finished:
                        self._finished(receiver, item.error)
                        continue
                    event, self._point = item
                out = handlers.process(event)
                if out is not None:
                    self.observers.see(out)
                    return out
            finally:
                self._delivering = False
                if self._stop_pending:
                    self._tell_stopped()

    def _finished(self, receiver: Receiver, error: BaseException | None) -> None:
        """The receiver's feed ended (or failed with ``error``, raised here, once)."""
        with self._lock:
            if self._receiver is not receiver:
                return  # disconnected or moved meanwhile
            self._receiver = None
        self._halt(receiver)
        self.observers.stop(self.transport.name, error)
        if error is not None:
            raise error

    def _waits(self, timeout: float | None) -> Generator[_Wait, bool, Event | None]:
        """The next event once a poll found none yet: asks its driver to wait for the receiver
        (sends ``(channel, seconds)``, is sent whether the channel got ready)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            receiver = self._receiver
            if receiver is not None:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return None
                if not (yield receiver.channel, left):
                    return None
            got = self._poll()
            if got is _END:
                return None
            if got is not _NEED:
                return got

    def _should_connect(self) -> bool:
        return self._receiver is None and not self._ever_connected


def _point_at(start: Start | None) -> ResumePoint | None:
    """The resume point a start names, if it names a place."""
    if isinstance(start, ResumePoint):
        return start
    if isinstance(start, tuple):
        return ResumePoint(*start)
    if start is None or isinstance(start, str):
        return None
    return ResumePoint("", BINLOG_HEADER_SIZE, start)


class BinaryLog(_BinaryLogCore):
    """The binary log of a source, read ahead by a thread (see the module doc).

    ``start``: where to begin (see :meth:`set_position`; by default files from
    their start, a server from now). ``handlers`` and ``observers``: the
    first ones. ``max_events`` and ``max_bytes`` bound the receiver's queue.
    Other options go to :func:`binlogkit.open` (``server_id`` is needed for
    a server). Iterating connects a log never connected and gives events
    until the end; ``with`` connects and disconnects.
    """

    def wait_for_next_event(self, timeout: float | None = None) -> Event | None:
        """The next event; None when ``timeout`` seconds pass first or the stream ended
        (:attr:`connected` then False). Raises the receiver's error, once."""
        got = self._poll()
        if got is not _NEED:
            return None if got is _END else got
        steps = self._waits(timeout)
        try:
            channel, seconds = next(steps)
            while True:
                channel, seconds = steps.send(channel.wait(seconds))
        except StopIteration as done:
            result: Event | None = done.value
            return result

    def __iter__(self) -> Iterator[Event]:
        if self._should_connect():
            self.connect()
        while (event := self.wait_for_next_event()) is not None:
            yield event

    def __enter__(self) -> Self:
        self.connect()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.disconnect()


class AsyncBinaryLog(_BinaryLogCore):
    """:class:`BinaryLog` for asyncio: the same object, waiting without blocking the loop."""

    async def wait_for_next_event(self, timeout: float | None = None) -> Event | None:
        """As :meth:`BinaryLog.wait_for_next_event`, awaited."""
        got = self._poll()
        if got is not _NEED:
            return None if got is _END else got
        steps = self._waits(timeout)
        try:
            channel, seconds = next(steps)
            while True:
                channel, seconds = steps.send(await channel.wait_async(seconds))
        except StopIteration as done:
            result: Event | None = done.value
            return result

    async def __aiter__(self) -> AsyncIterator[Event]:
        if self._should_connect():
            self.connect()
        while (event := await self.wait_for_next_event()) is not None:
            yield event

    async def __aenter__(self) -> Self:
        self.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.disconnect()
