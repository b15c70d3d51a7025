"""TRANSACTION_PAYLOAD (40): a whole transaction in one event, zstd-compressed (MySQL 8.0.20+).

The body starts with type-length-value fields, each a packed integer type,
a packed integer length and a packed integer value, ended by type 0: the
compression type (2; 0 = zstd, 255 = none), the uncompressed size (3) and
the payload size (1). The payload follows: the transaction's events, each
with its common header (log_pos 0) and without a checksum, compressed as
one stream.

Positions of the inner events: like mysqlbinlog's ``# at``, every inner
event reports the payload event's end offset as its ``header.offset`` (the
position to continue reading from once the transaction is applied). Their
``header.log_pos`` is what the server wrote (0) and ``header.end`` does not
name a file position.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Iterable
from dataclasses import field, replace
from enum import IntEnum

from binlogkit.binlog.constants import MAX_EVENT_SIZE, ChecksumAlg, EventType
from binlogkit.binlog.context import DecodeContext, FormatContext
from binlogkit.binlog.events.base import Body, Event, SkippedEvent, register
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.header import EventHeader
from binlogkit.errors import BinlogError, DecodeError, EncodeError, UnknownEventError
from binlogkit.wire import ByteReader, ByteWriter

__all__ = ["CompressionType", "TransactionPayloadEvent"]

log = logging.getLogger(__name__)

_END_MARK = 0
_PAYLOAD_SIZE = 1
_COMPRESSION_TYPE = 2
_UNCOMPRESSED_SIZE = 3
_SIZE_OFFSET = 9
_U32 = struct.Struct("<I")


class CompressionType(IntEnum):
    ZSTD = 0
    NONE = 255


def _packed_length(value: int) -> int:
    return 1 if value < 0xFB else 3 if value <= 0xFFFF else 4 if value <= 0xFFFFFF else 9


_MAX_ZSTD_RATIO = 1 << 16
"""More bytes than zstd makes of one input byte (its RLE blocks: 3 bytes for 128 KiB)."""
_ZSTD_WRITE_SIZE = 1 << 12
"""The output buffer of one step (the steps are small: the default 128 KiB is slow)."""


def _zstd_decompress(data: bytes, limit: int) -> bytes:
    """Every zstd frame of ``data``, decompressed and joined; at most ``limit`` bytes.

    The input goes in by pieces small enough that one cannot inflate far past
    ``limit``, so a bomb (a tiny payload of gigabytes) stops early.
    """
    import zstandard  # only MySQL's compressed transactions need it (start-up time)

    out: list[bytes] = []
    size = 0
    view = memoryview(data)
    while view:
        stream = zstandard.ZstdDecompressor().decompressobj(write_size=_ZSTD_WRITE_SIZE)
        while view and not stream.eof:
            step = max(64, (limit - size) // _MAX_ZSTD_RATIO)
            try:
                piece = stream.decompress(view[:step])
            except zstandard.ZstdError as err:
                raise DecodeError(f"transaction payload is not valid zstd: {err}") from None
            view = view[step:]
            size += len(piece)
            if size > limit:
                raise DecodeError(
                    f"transaction payload inflates past its declared {limit} bytes: it is corrupt"
                )
            out.append(piece)
        if not stream.eof:
            raise DecodeError("transaction payload ends inside a zstd frame")
        view = memoryview(stream.unused_data + bytes(view))
    return b"".join(out)


@register(EventType.TRANSACTION_PAYLOAD)
@frozen_dataclass
class TransactionPayloadEvent(Event):
    """A compressed transaction; :meth:`inner_events` decodes the events inside.

    ``payload`` is the bytes as stored (compressed, kept so re-encoding is
    exact). ``uncompressed_size`` is ``None`` when the header omits it.
    ``header_fields`` keeps the field header as read only when it differs
    from the canonical one the server writes; ``extra`` holds bytes after
    the payload.
    """

    compression_type: int
    uncompressed_size: int | None
    payload: bytes
    header_fields: bytes | None = field(default=None, repr=False)
    extra: bytes = b""

    @property
    def payload_size(self) -> int:
        return len(self.payload)

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> TransactionPayloadEvent:
        r = ByteReader(body)
        sizes: dict[int, int] = {}
        while True:
            kind = r.packed_length("field type")
            if kind == _END_MARK:
                break
            length = r.packed_length("field length")
            if kind in (_PAYLOAD_SIZE, _COMPRESSION_TYPE, _UNCOMPRESSED_SIZE):
                sizes[kind] = r.sub(length, "field value").packed_length("field value")
            else:
                r.skip(length, "unknown field")
        if _PAYLOAD_SIZE not in sizes or _COMPRESSION_TYPE not in sizes:
            raise DecodeError("transaction payload header lacks its size or compression type")
        fields_raw = bytes(body[: r.pos])
        payload = r.take(sizes[_PAYLOAD_SIZE], "payload")
        event = cls(
            header, sizes[_COMPRESSION_TYPE], sizes.get(_UNCOMPRESSED_SIZE), payload, None, r.rest()
        )
        if event._header_fields() != fields_raw:
            event = replace(event, header_fields=fields_raw)
        return event

    def _header_fields(self) -> bytes:
        """The field header as the server writes it."""
        w = ByteWriter()
        values = [(_COMPRESSION_TYPE, self.compression_type)]
        if self.uncompressed_size is not None:
            values.append((_UNCOMPRESSED_SIZE, self.uncompressed_size))
        values.append((_PAYLOAD_SIZE, len(self.payload)))
        for kind, value in values:
            w.packed_int(kind)
            w.packed_int(_packed_length(value))
            w.packed_int(value)
        w.packed_int(_END_MARK)
        return w.getvalue()

    def encode_body(self, fmt: FormatContext) -> bytes:
        head = self.header_fields if self.header_fields is not None else self._header_fields()
        return head + self.payload + self.extra

    def uncompressed(self) -> bytes:
        """The inner events' bytes."""
        if self.compression_type == CompressionType.NONE:
            return self.payload
        if self.compression_type == CompressionType.ZSTD:
            limit = self.uncompressed_size
            return _zstd_decompress(self.payload, MAX_EVENT_SIZE if limit is None else limit)
        raise DecodeError(f"unknown transaction payload compression type {self.compression_type}")

    def inner_events(self, ctx: DecodeContext) -> list[Event]:
        """Decode the events inside, with the codecs of the outer stream.

        Table maps inside the payload serve the rows events after them: they are
        added to ``ctx.tables`` (the decoder passes an overlay of its cache). Each
        inner event reports the payload's end offset (see the module doc).
        With ``on_corrupt='skip'`` an inner event that fails to decode comes
        out as a :class:`SkippedEvent`.
        """
        # Imported here: the decoder module imports this package.
        from binlogkit.binlog.decoder import decode_frame
        from binlogkit.binlog.framing import Frame

        try:
            data = self.uncompressed()
        except BinlogError as err:
            err.locate(file=self.header.file, offset=self.header.offset, event_type=self.type_name)
            raise
        fmt = replace(ctx.fmt, checksum=ChecksumAlg.OFF)
        tables = ctx.tables
        inner_ctx = DecodeContext(fmt, ctx.options, tables)
        header_length = fmt.header_length
        offset = self.header.end
        events: list[Event] = []
        pos = 0
        while pos < len(data):
            size = _U32.unpack_from(data, pos + _SIZE_OFFSET)[0] if len(data) - pos >= 13 else 0
            if size < header_length or pos + size > len(data):
                raise DecodeError(
                    f"inner event at payload offset {pos} has a bad size {size}",
                    file=self.header.file,
                    offset=self.header.offset,
                    event_type=self.type_name,
                )
            raw = data[pos : pos + size]
            pos += size
            header = EventHeader.decode(raw, 0, header_length, offset=offset, file=self.header.file)
            try:
                event = decode_frame(Frame(header, raw, fmt, 0), inner_ctx)
            except UnknownEventError:
                raise
            except BinlogError as err:
                if ctx.options.on_corrupt != "skip":
                    raise
                log.warning("skipping undecodable event inside a transaction payload: %s", err)
                event = SkippedEvent(header, raw, err)
            if isinstance(event, TableMapEvent):
                tables.add(event, raw[header_length:])
            events.append(event)
        return events

    @classmethod
    def from_events(
        cls,
        header: EventHeader,
        events: Iterable[Event],
        fmt: FormatContext,
        *,
        compression_type: int = CompressionType.ZSTD,
        level: int = 3,
    ) -> TransactionPayloadEvent:
        """Pack events into a payload: each encoded without checksum, then compressed.

        ``fmt`` is the format of the binlog the payload goes into.
        """
        from binlogkit.binlog.decoder import encode_event

        inner_fmt = replace(fmt, checksum=ChecksumAlg.OFF)
        data = b"".join(encode_event(event, inner_fmt) for event in events)
        if compression_type == CompressionType.ZSTD:
            import zstandard

            payload = zstandard.ZstdCompressor(level=level).compress(data)
        elif compression_type == CompressionType.NONE:
            payload = data
        else:
            raise EncodeError(f"unknown compression type {compression_type}")
        if header.type_code != EventType.TRANSACTION_PAYLOAD:
            header = replace(header, type_code=EventType.TRANSACTION_PAYLOAD)
        uncompressed = None if compression_type == CompressionType.NONE else len(data)
        return cls(header, compression_type, uncompressed, payload)
