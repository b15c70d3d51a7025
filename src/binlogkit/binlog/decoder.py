"""The event-object stream: turns frames into decoded events (sans-I/O).

:class:`BinlogDecoder` owns an :class:`~binlogkit.binlog.framing.EventFramer`,
the table-map cache and the caller's options. Feed it bytes, pull events::

    dec = BinlogDecoder(file="mysql-bin.000001")
    dec.receive_data(data)
    while (event := dec.next_event()) not in (NEED_DATA, END):
        ...
"""

from __future__ import annotations

import logging
import struct
import zlib
from collections import deque
from collections.abc import Iterable

from binlogkit.binlog.constants import EventType
from binlogkit.binlog.context import DecodeContext, DecodeOptions, FormatContext
from binlogkit.binlog.events import EVENT_CODECS, Event, OpaqueEvent, SkippedEvent
from binlogkit.binlog.framing import END, NEED_DATA, EventFramer, Frame, Signal, event_crc32
from binlogkit.errors import BinlogError, DecodeError, UnknownEventError

log = logging.getLogger(__name__)

# What malformed input can make a codec's own parsing raise; turned into DecodeError.
_MALFORMED = (struct.error, IndexError, ValueError, KeyError, OverflowError, zlib.error)

__all__ = ["END", "NEED_DATA", "BinlogDecoder", "decode_frame", "encode_event"]


def decode_frame(frame: Frame, ctx: DecodeContext) -> Event:
    """Decode one frame with the codec registered for its type.

    Unknown types give an :class:`OpaqueEvent` when they are ignorable or the
    options say to pass them on, else :class:`UnknownEventError`. Errors carry
    the frame's file, offset and type.
    """
    header = frame.header
    codec = EVENT_CODECS.get(header.type_code)
    if codec is None:
        if header.ignorable or ctx.options.on_unknown == "pass":
            return OpaqueEvent(header, bytes(frame.body))
        raise UnknownEventError(
            f"unknown event type {header.type_code} without the ignorable flag",
            file=header.file,
            offset=header.offset,
            event_type=header.type_name,
            hint="pass on_unknown='pass' to hand it on as an opaque event",
        )
    try:
        return codec.decode(header, frame.body, ctx)
    except BinlogError as err:
        raise err.locate(file=header.file, offset=header.offset, event_type=header.type_name)
    except _MALFORMED as err:
        raise DecodeError(
            f"malformed event body: {err}",
            file=header.file,
            offset=header.offset,
            event_type=header.type_name,
        ) from err


def encode_event(event: Event, fmt: FormatContext) -> bytes:
    """The whole event as bytes: header (with the size recomputed), body, checksum."""
    if isinstance(event, SkippedEvent):
        return event.raw
    if event.header.type_code == EventType.FORMAT_DESCRIPTION:
        fmt = event.own_context()  # type: ignore[attr-defined]
    body = event.encode_body(fmt)
    size = fmt.header_length + len(body) + fmt.checksum_length
    raw = event.header.encode(fmt.header_length, size) + body
    if fmt.checksum_length:
        raw += event_crc32(raw + b"\0\0\0\0").to_bytes(4, "little")
    return raw


class BinlogDecoder:
    """Decodes the events of one byte stream (a file, stdin, or a replication stream).

    ``offset`` is the input offset of the first byte fed; ``expect_magic`` says
    the stream starts with the binlog magic; ``fmt`` is the format in force
    when the stream starts past the format description.
    """

    def __init__(
        self,
        *,
        file: str | None = None,
        options: DecodeOptions | None = None,
        offset: int = 0,
        expect_magic: bool = True,
        fmt: FormatContext | None = None,
    ) -> None:
        self.options = options or DecodeOptions()
        self.framer = EventFramer(
            file=file,
            offset=offset,
            expect_magic=expect_magic,
            verify_checksum=self.options.verify_checksum,
            skip_corrupt=self.options.on_corrupt == "skip",
            fmt=fmt,
        )
        self.tables: dict[int, Event] = {}
        self._ctx = DecodeContext(self.framer.fmt, self.options, self.tables)  # type: ignore[arg-type]
        self._pending: deque[Event] = deque()
        self.last_frame: Frame | None = None
        """The frame of the event ``next_event`` returned last (the raw bytes, for dumps)."""

    @property
    def fmt(self) -> FormatContext:
        return self.framer.fmt

    @property
    def context(self) -> DecodeContext:
        return self._ctx

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        self.framer.receive_data(data)

    def seek(self, offset: int) -> None:
        """Continue at ``offset`` of the same input, keeping the format and table maps."""
        self.framer.seek(offset)
        self._pending.clear()

    def next_event(self) -> Event | Signal:
        """The next decoded event, or NEED_DATA / END."""
        if self._pending:
            return self._pending.popleft()
        frame = self.framer.next_frame()
        if isinstance(frame, Signal):
            return frame
        self.last_frame = frame
        if frame.fmt is not self._ctx.fmt and frame.header.type_code not in _FORMAT_EVENTS:
            self._ctx = DecodeContext(frame.fmt, self.options, self._ctx.tables)
        if frame.error is not None:
            log.warning("skipping corrupt event: %s", frame.error)
            return SkippedEvent(frame.header, frame.raw, frame.error)
        try:
            event = decode_frame(frame, self._ctx)
        except UnknownEventError:
            raise
        except BinlogError as err:
            if self.options.on_corrupt != "skip":
                raise
            log.warning("skipping undecodable event: %s", err)
            return SkippedEvent(frame.header, frame.raw, err)
        self._after(event)
        return event

    def _after(self, event: Event) -> None:
        """Keep the state that later events depend on."""
        code = event.header.type_code
        if code in _FORMAT_EVENTS:
            self._ctx = DecodeContext(self.framer.fmt, self.options, self._ctx.tables)
        elif code == EventType.TABLE_MAP:
            self.tables[event.table_id] = event  # type: ignore[attr-defined]
        expand = getattr(event, "inner_events", None)
        if expand is not None:
            self._pending.extend(expand(self._ctx))

    def events(self, chunks: Iterable[bytes]) -> Iterable[Event]:
        """Decode a whole input given as chunks; ends with END, raises on truncation."""
        for chunk in chunks:
            self.receive_data(chunk)
            while not isinstance(event := self.next_event(), Signal):
                yield event
        self.receive_data(b"")
        while not isinstance(event := self.next_event(), Signal):
            yield event


_FORMAT_EVENTS = frozenset({EventType.FORMAT_DESCRIPTION, EventType.START_V3})
