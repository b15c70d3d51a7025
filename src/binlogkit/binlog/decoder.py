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
from dataclasses import replace

from binlogkit.binlog.constants import EventType
from binlogkit.binlog.context import DecodeContext, DecodeOptions, FormatContext
from binlogkit.binlog.events import EVENT_CODECS, Event, OpaqueEvent, SkippedEvent
from binlogkit.binlog.events.base import Body
from binlogkit.binlog.events.rows import table_filter_keeps
from binlogkit.binlog.framing import (
    CRC32_RESIDUE,
    END,
    NEED_DATA,
    SLOW_PATH_TYPES,
    VIEW_BODY_FROM,
    EventFramer,
    FastPath,
    Frame,
    Signal,
    event_crc32,
)
from binlogkit.binlog.header import V4_HEADER, EventHeader, new_header
from binlogkit.binlog.tables import SchemaSource, TableCache
from binlogkit.errors import BinlogError, DecodeError, UnknownEventError

log = logging.getLogger(__name__)

# What malformed input can make a codec's own parsing raise; turned into DecodeError.
_MALFORMED = (struct.error, IndexError, ValueError, KeyError, OverflowError, zlib.error)

__all__ = ["END", "NEED_DATA", "OPAQUE_TYPES", "BinlogDecoder", "decode_frame", "encode_event"]

OPAQUE_TYPES = frozenset({EventType.UNKNOWN})
"""Known type codes that deliberately have no codec and are handled like unknown ones.

UNKNOWN (0) is never written by a server: one in a binlog means damage (or a
zero-filled tail), so it stops the reader unless unknown events are passed on.
"""


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
    return _decode_body(codec, header, frame.body, ctx)


def _decode_body(codec: type[Event], header: EventHeader, body: Body, ctx: DecodeContext) -> Event:
    """``codec.decode``, with errors located at the event."""
    try:
        return codec.decode(header, body, ctx)
    except BinlogError as err:
        err.locate(file=header.file, offset=header.offset, event_type=header.type_name)
        raise
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
    header = event.header
    if header.type_code == EventType.FORMAT_DESCRIPTION:
        fmt = event.own_context()  # type: ignore[attr-defined]
    elif fmt.permuted_types:
        header = replace(header, type_code=fmt.written_type_code(header.type_code))
    body = event.encode_body(fmt)
    size = fmt.header_length + len(body) + fmt.checksum_length
    raw = header.encode(fmt.header_length, size) + body
    if fmt.checksum_length:
        raw += event_crc32(raw + b"\0\0\0\0").to_bytes(4, "little")
    return raw


class BinlogDecoder:
    """Decodes the events of one byte stream (a file, stdin, or a replication stream).

    ``offset`` is the input offset of the first byte fed; ``expect_magic`` says
    the stream starts with the binlog magic; ``fmt`` is the format in force
    when the stream starts past the format description; ``schema`` completes
    the columns of table maps that lack names, signedness or charsets (it is
    shown the events it observes, in order); ``decrypted``: the bytes come
    through a decrypting stage, so events after START_ENCRYPTION are plain.
    """

    def __init__(
        self,
        *,
        file: str | None = None,
        options: DecodeOptions | None = None,
        offset: int = 0,
        expect_magic: bool = True,
        fmt: FormatContext | None = None,
        schema: SchemaSource | None = None,
        decrypted: bool = False,
    ) -> None:
        self.options = options or DecodeOptions()
        self.framer = EventFramer(
            decrypted=decrypted,
            file=file,
            offset=offset,
            expect_magic=expect_magic,
            verify_checksum=self.options.verify_checksum,
            skip_corrupt=self.options.on_corrupt == "skip",
            fmt=fmt,
        )
        self.tables = TableCache(schema)
        self._ctx = DecodeContext(self.framer.fmt, self.options, self.tables)
        self._pending: deque[Event] = deque()
        self._last_frame: Frame | None = None
        self._last_plain: tuple[EventHeader, bytes, FastPath] | None = None
        """What :attr:`last_frame` is made of after :meth:`decode_event` took its fast path."""

    @property
    def last_frame(self) -> Frame | None:
        """The frame of the event decoded last (the raw bytes, for dumps).

        None for an event expanded from a TRANSACTION_PAYLOAD, which has no frame of its own.
        """
        plain = self._last_plain
        if plain is not None:
            header, raw, fast = plain
            self._last_frame = Frame(header, raw, fast.fmt, fast.checksum_length)
            self._last_plain = None
        return self._last_frame

    @property
    def last_raw(self) -> tuple[bytes, FormatContext] | None:
        """The bytes and format of :attr:`last_frame`, without making the Frame (dumps)."""
        plain = self._last_plain
        if plain is not None:
            return plain[1], plain[2].fmt
        frame = self._last_frame
        return None if frame is None else (frame.raw, frame.fmt)

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

    def decode_event(
        self,
        raw: bytes,
        offset: int,
        file: str | None = None,
        fields: tuple[int, int, int, int, int, int] | None = None,
    ) -> Event | Signal:
        """Decode ``raw``, one whole event that sits at ``offset`` of ``file`` (a network packet's).

        The same as :meth:`seek` to ``offset``, feeding ``raw`` and calling
        :meth:`next_event`, without buffering the bytes for the usual plain
        event. NEED_DATA means a table filter dropped the event; the events a
        TRANSACTION_PAYLOAD holds follow from :meth:`next_event`. ``fields``:
        ``V4_HEADER.unpack_from(raw)``, when the caller has unpacked it already.
        """
        fast = self.framer.fast
        ctx = self._ctx
        size = len(raw)
        if fast is not None and fast.fmt is ctx.fmt and size >= fast.min_size and not self._pending:
            ts, code, server_id, written, log_pos, flags = fields or V4_HEADER.unpack_from(raw)
            if (
                written == size
                and code not in _WHOLE_SLOW_TYPES
                and (not fast.verify or zlib.crc32(raw) == CRC32_RESIDUE)
            ):
                header = new_header(ts, code, server_id, size, log_pos, flags, b"", offset, file)
                event = self._decode_plain(header, raw, fast)
                keep = self.options.tables
                if keep is None or table_filter_keeps(event, keep):
                    return event
                return NEED_DATA
        framer = self.framer
        framer.seek(offset)
        framer.file = file
        self._pending.clear()
        framer.receive_data(raw)
        return self.next_event()

    def next_event(self) -> Event | Signal:
        """The next decoded event, or NEED_DATA / END.

        Events of tables that ``options.tables`` rejects are skipped here.
        """
        keep = self.options.tables
        framer = self.framer
        while True:
            fast = framer.fast
            if self._pending:
                event = self._next_pending()
            elif (
                fast is not None
                and fast.fmt is self._ctx.fmt
                and (plain := framer.next_plain()) is not None
            ):
                event = self._decode_plain(plain[0], plain[1], fast)
            else:
                frame = framer.next_frame()
                if isinstance(frame, Signal):
                    return frame
                event = self._decode(frame)
            if keep is None or table_filter_keeps(event, keep):
                return event

    def _decode_plain(self, header: EventHeader, raw: bytes, fast: FastPath) -> Event:
        """:meth:`_decode` for a plain event in the current format, without a Frame."""
        code = header.type_code
        codec = EVENT_CODECS.get(code)
        if codec is None or code == _TRANSACTION_PAYLOAD:  # unknown, or holding more events
            return self._decode(Frame(header, raw, fast.fmt, fast.checksum_length))
        end = len(raw) - fast.checksum_length
        body = raw[19:end] if end < VIEW_BODY_FROM else memoryview(raw)[19:end]
        self._last_plain = (header, raw, fast)
        try:
            event = codec.decode(header, body, self._ctx)
        except Exception as err:  # sorted out by _undecodable
            return self._undecodable(err, header, raw)
        tables = self.tables
        if code == _TABLE_MAP:
            tables.add(event, body)  # type: ignore[arg-type]
        elif code in tables.observes:
            tables.observe(event)
        return event

    def _undecodable(self, err: Exception, header: EventHeader, raw: bytes) -> Event:
        """What to give for an event whose body raised ``err``, as :meth:`_decode` does:
        the error located at the event, or a SkippedEvent when the options skip."""
        if isinstance(err, BinlogError):
            err.locate(file=header.file, offset=header.offset, event_type=header.type_name)
            error = err
        elif isinstance(err, _MALFORMED):
            error = DecodeError(
                f"malformed event body: {err}",
                file=header.file,
                offset=header.offset,
                event_type=header.type_name,
            )
            error.__cause__ = err
        else:
            raise err
        if isinstance(error, UnknownEventError) or self.options.on_corrupt != "skip":
            raise error
        log.warning("skipping undecodable event: %s", error)
        return SkippedEvent(header, raw, error)

    def _next_pending(self) -> Event:
        """The next event expanded from a TRANSACTION_PAYLOAD (its table maps are known already)."""
        event = self._pending.popleft()
        self._last_frame = self._last_plain = None
        code = event.header.type_code
        if code in _FORMAT_EVENTS:
            self._after(event, b"")
        if code in self.tables.observes:
            self.tables.observe(event)
        return event

    def _decode(self, frame: Frame) -> Event:
        """The event of ``frame``, with the decoder's state updated after it."""
        self._last_frame = frame
        self._last_plain = None
        ctx = self._ctx
        code = frame.header.type_code
        if frame.fmt is not ctx.fmt and code not in _FORMAT_EVENTS:
            ctx = self._ctx = DecodeContext(frame.fmt, self.options, ctx.tables)
        if frame.error is not None:
            log.warning("skipping corrupt event: %s", frame.error)
            return SkippedEvent(frame.header, frame.raw, frame.error)
        try:
            event = decode_frame(frame, ctx)
            inner = self._expand(event) if code == _TRANSACTION_PAYLOAD else None
        except UnknownEventError:
            raise
        except BinlogError as err:
            if self.options.on_corrupt != "skip":
                raise
            log.warning("skipping undecodable event: %s", err)
            return SkippedEvent(frame.header, frame.raw, err)
        if code in _STATEFUL_EVENTS:
            self._after(event, frame.body)
        if code in self.tables.observes:
            self.tables.observe(event)
        if inner:
            self._pending.extend(inner)
        return event

    def _expand(self, event: Event) -> list[Event]:
        """The events inside ``event`` (a TRANSACTION_PAYLOAD), decoded in the current context;
        the table maps among them join the decoder's tables."""
        expand = getattr(event, "inner_events", None)
        if expand is None:  # a SkippedEvent
            return []
        header = event.header
        ctx = self._ctx
        tables = self.tables.overlay()
        try:
            inner: list[Event] = expand(DecodeContext(ctx.fmt, ctx.options, tables))
            self.tables.update(tables)
            return inner
        except BinlogError as err:
            err.locate(file=header.file, offset=header.offset, event_type=header.type_name)
            raise
        except _MALFORMED as err:
            raise DecodeError(
                f"malformed inner events: {err}",
                file=header.file,
                offset=header.offset,
                event_type=header.type_name,
            ) from err

    def _after(self, event: Event, body: Body) -> None:
        """Keep the state that later events depend on (``body``: a table map's body bytes)."""
        code = event.header.type_code
        if code in _FORMAT_EVENTS:
            self._ctx = DecodeContext(self.framer.fmt, self.options, self.tables)
        elif code == EventType.TABLE_MAP and not isinstance(event, SkippedEvent):
            self.tables.add(event, body)  # type: ignore[arg-type]

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
_STATEFUL_EVENTS = _FORMAT_EVENTS | {EventType.TABLE_MAP}
"""The events whose decoding changes the decoder's state (see ``_after``)."""
_TRANSACTION_PAYLOAD = EventType.TRANSACTION_PAYLOAD.value  # an int: cheaper to compare per event
_TABLE_MAP = EventType.TABLE_MAP.value
_WHOLE_SLOW_TYPES = SLOW_PATH_TYPES | {_TRANSACTION_PAYLOAD}
"""Events :meth:`BinlogDecoder.decode_event` leaves to the framer and ``next_event``."""
