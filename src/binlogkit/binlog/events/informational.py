"""Events that inform rather than change data.

ROWS_QUERY (MySQL) and ANNOTATE_ROWS (MariaDB) carry the statement behind
the row events that follow; INCIDENT marks a gap the replica must stop at;
HEARTBEAT and HEARTBEAT_V2 keep an idle replication stream alive; IGNORABLE
is a placeholder a reader may skip; BINLOG_CHECKPOINT (MariaDB) names the
oldest binlog crash recovery needs; START_ENCRYPTION (MariaDB) says the rest
of the file is encrypted; SLAVE (MySQL 4.x/5.0, never written to a log by any
released server) names the master a relay log came from.
"""

from __future__ import annotations

import struct
from enum import IntEnum

from binlogkit.binlog import utf8
from binlogkit.binlog.constants import EventType
from binlogkit.binlog.context import DecodeContext, FormatContext
from binlogkit.binlog.events.base import Body, Event, register
from binlogkit.binlog.frozen import fast_constructor, frozen_dataclass
from binlogkit.binlog.header import EventHeader
from binlogkit.errors import DecodeError, EncodeError
from binlogkit.wire import ByteReader, ByteWriter


@register(EventType.ROWS_QUERY)
@frozen_dataclass
class RowsQueryEvent(Event):
    """MySQL's copy of the statement behind the row events that follow.

    Written with binlog_rows_query_log_events: a length byte (the length modulo
    256), then the whole statement; readers ignore the byte. ``length_byte`` is None when it is the
    usual ``len(query) % 256``, else the byte as stored.
    """

    query: bytes
    length_byte: int | None = None

    @property
    def text(self) -> str:
        return utf8.decode(self.query)

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> RowsQueryEvent:
        r = ByteReader(body)
        length = r.u8("length")
        query = r.rest()
        return cls(header, query, None if length == len(query) & 0xFF else length)

    def encode_body(self, fmt: FormatContext) -> bytes:
        length = len(self.query) & 0xFF if self.length_byte is None else self.length_byte
        return bytes([length]) + self.query


@register(EventType.MARIADB_ANNOTATE_ROWS)
@frozen_dataclass
class AnnotateRowsEvent(Event):
    """MariaDB's copy of the statement behind the row events that follow (annotate option)."""

    query: bytes

    @property
    def text(self) -> str:
        return utf8.decode(self.query)

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> AnnotateRowsEvent:
        return _new_annotate(header, body if type(body) is bytes else bytes(body))

    def encode_body(self, fmt: FormatContext) -> bytes:
        return self.query


_new_annotate = fast_constructor(AnnotateRowsEvent)


class IncidentType(IntEnum):
    """Why an INCIDENT event was written."""

    NONE = 0
    LOST_EVENTS = 1


@register(EventType.INCIDENT)
@frozen_dataclass
class IncidentEvent(Event):
    """Something happened that the binlog cannot show (lost events); a replica stops here.

    ``incident`` is :data:`IncidentType.LOST_EVENTS`, the only valid number (the
    servers reject any other as an invalid event, and so does this codec);
    ``message`` is the server's text (a 1-byte length, then the text).
    ``extra`` keeps bytes past it.
    """

    incident: int
    message: bytes
    extra: bytes = b""

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> IncidentEvent:
        r = ByteReader(body)
        incident = r.u16("incident")
        if incident != IncidentType.LOST_EVENTS:
            raise DecodeError(
                f"invalid incident number {incident} (the servers reject this event)",
                hint="the binlog is damaged here; skip corrupt events (--skip-corrupt) to go on",
            )
        r.skip(ctx.fmt.post_header_length(EventType.INCIDENT, 2) - 2, "incident post-header")
        message = r.take(r.u8("message length"), "message")
        return cls(header, incident, message, r.rest())

    def encode_body(self, fmt: FormatContext) -> bytes:
        if fmt.post_header_length(EventType.INCIDENT, 2) != 2:
            raise EncodeError("INCIDENT post-header other than 2 bytes is not supported")
        w = ByteWriter()
        w.u16(self.incident)
        if len(self.message) > 255:
            raise EncodeError("INCIDENT message is longer than 255 bytes")
        w.u8(len(self.message))
        w.write(self.message)
        w.write(self.extra)
        return w.getvalue()


@register(EventType.HEARTBEAT)
@frozen_dataclass
class HeartbeatEvent(Event):
    """Sent by an idle source: the replica is at ``position`` (header log_pos) of ``log_file``."""

    log_file: str

    @property
    def position(self) -> int:
        return self.header.log_pos

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> HeartbeatEvent:
        return cls(header, utf8.decode(bytes(body)))

    def encode_body(self, fmt: FormatContext) -> bytes:
        return utf8.encode(self.log_file)


class HeartbeatField(IntEnum):
    """Field types of HEARTBEAT_V2's type-length-value list."""

    END_MARK = 0
    LOG_FILENAME = 1
    LOG_POSITION = 2


@register(EventType.HEARTBEAT_V2)
@frozen_dataclass
class HeartbeatV2Event(Event):
    """MySQL 8.0.26+ heartbeat: a list of (type, value) fields with packed-integer type and length.

    ``fields`` keeps every field as stored (value bytes), in order; the file
    name is field 1, the position field 2 (a packed integer). ``end_mark`` says
    the list ended with the 0 marker; ``extra`` keeps bytes after it.
    """

    fields: tuple[tuple[int, bytes], ...]
    end_mark: bool = True
    extra: bytes = b""

    @classmethod
    def build(cls, header: EventHeader, log_file: str, position: int) -> HeartbeatV2Event:
        """A heartbeat as the server writes it."""
        w = ByteWriter()
        w.packed_int(position)
        return cls(
            header,
            (
                (HeartbeatField.LOG_FILENAME, utf8.encode(log_file)),
                (HeartbeatField.LOG_POSITION, w.getvalue()),
            ),
        )

    def field(self, kind: int) -> bytes | None:
        for key, value in self.fields:
            if key == kind:
                return value
        return None

    @property
    def log_file(self) -> str | None:
        value = self.field(HeartbeatField.LOG_FILENAME)
        return None if value is None else utf8.decode(value)

    @property
    def position(self) -> int | None:
        value = self.field(HeartbeatField.LOG_POSITION)
        return None if value is None else ByteReader(value).packed_length("heartbeat position")

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> HeartbeatV2Event:
        r = ByteReader(body)
        fields: list[tuple[int, bytes]] = []
        while not r.at_end():
            kind = r.packed_length("field type")
            if kind == HeartbeatField.END_MARK:
                return cls(header, tuple(fields), True, r.rest())
            fields.append((kind, r.packed_bytes("field value")))
        return cls(header, tuple(fields), False, b"")

    def encode_body(self, fmt: FormatContext) -> bytes:
        w = ByteWriter()
        for kind, value in self.fields:
            w.packed_int(kind)
            w.packed_bytes(value)
        if self.end_mark:
            w.packed_int(HeartbeatField.END_MARK)
        elif self.extra:
            raise EncodeError("HEARTBEAT_V2 bytes after the list need the end mark")
        w.write(self.extra)
        return w.getvalue()


@register(EventType.IGNORABLE)
@frozen_dataclass
class IgnorableEvent(Event):
    """MySQL's IGNORABLE event: a body no reader needs, kept as stored."""

    payload: bytes

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> IgnorableEvent:
        return cls(header, bytes(body))

    def encode_body(self, fmt: FormatContext) -> bytes:
        return self.payload


@register(EventType.MARIADB_BINLOG_CHECKPOINT)
@frozen_dataclass
class BinlogCheckpointEvent(Event):
    """MariaDB: crash recovery must start no earlier than binlog ``log_file``."""

    log_file: str
    extra: bytes = b""

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> BinlogCheckpointEvent:
        r = ByteReader(body)
        name = r.take(r.u32("file name length"), "file name")
        return cls(header, utf8.decode(name), r.rest())

    def encode_body(self, fmt: FormatContext) -> bytes:
        name = utf8.encode(self.log_file)
        return len(name).to_bytes(4, "little") + name + self.extra


START_ENCRYPTION_BODY = struct.Struct("<BI12s")
"""START_ENCRYPTION's body: scheme, key version, nonce."""


@register(EventType.MARIADB_START_ENCRYPTION)
@frozen_dataclass
class StartEncryptionEvent(Event):
    """MariaDB: every event after this one is encrypted (encrypt_binlog).

    ``scheme`` is the crypto scheme (1: AES-CBC/CTR with the key ``key_version``
    of the binlog key), ``nonce`` the 12-byte nonce that, with each event's
    position, forms the IV.
    """

    scheme: int
    key_version: int
    nonce: bytes
    extra: bytes = b""

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> StartEncryptionEvent:
        r = ByteReader(body)
        r.need(START_ENCRYPTION_BODY.size, "START_ENCRYPTION body")
        scheme, key_version, nonce = START_ENCRYPTION_BODY.unpack_from(body)
        return cls(header, scheme, key_version, nonce, r.rest())

    def encode_body(self, fmt: FormatContext) -> bytes:
        if len(self.nonce) != 12:
            raise EncodeError("START_ENCRYPTION nonce must be 12 bytes")
        return START_ENCRYPTION_BODY.pack(self.scheme, self.key_version, self.nonce) + self.extra


@register(EventType.SLAVE)
@frozen_dataclass
class SlaveEvent(Event):
    """MySQL 4.x/5.0's SLAVE event: the master (host, port) and binlog position a relay log follows.

    Layout from the 4.x/5.0 sources (the event was defined but never written
    by released servers): position (8 bytes), port (2), host with a NUL, then
    the master's binlog name to the end of the event.
    """

    master_pos: int
    master_port: int
    master_host: str
    master_log: str

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> SlaveEvent:
        r = ByteReader(body)
        pos = r.u64("master position")
        port = r.u16("master port")
        host = r.cstring("master host")
        return cls(header, pos, port, utf8.decode(host), utf8.decode(r.rest()))

    def encode_body(self, fmt: FormatContext) -> bytes:
        w = ByteWriter()
        w.u64(self.master_pos)
        w.u16(self.master_port)
        w.cstring(utf8.encode(self.master_host))
        w.write(utf8.encode(self.master_log))
        return w.getvalue()
