"""The replication commands and the binlog network stream, as bytes (sans-I/O).

A replica asks for the binlog with COM_BINLOG_DUMP (file and position) or
COM_BINLOG_DUMP_GTID (MySQL: the GTIDs it has executed), after naming itself
with COM_REGISTER_SLAVE. Every class here has ``encode()`` giving the command
payload and ``decode(payload)`` reading it back (the server side of the same).

The server then sends one event per packet: ``0x00`` and the event bytes
(from the common header through the checksum), with ``0xef`` and an ACK flag
in between when the replica asked for semi-sync (``@rpl_semi_sync_slave=1``);
a replica acknowledges a flagged event with a :class:`SemiSyncAck` packet. In
non-blocking mode the stream ends with an EOF packet.

:class:`ResumeTracker` follows such a stream of decoded events and gives each
its exact resume point: the binlog file and position of the next event, the
executed GTIDs and whether a transaction is still open (see its doc).
"""

from __future__ import annotations

from dataclasses import field
from enum import IntFlag

from binlogkit.binlog.constants import V4_HEADER_LENGTH, ChecksumAlg, EventFlag, EventType
from binlogkit.binlog.context import DecodeOptions, FormatContext
from binlogkit.binlog.decoder import BinlogDecoder
from binlogkit.binlog.events import Event
from binlogkit.binlog.framing import Signal
from binlogkit.binlog.frozen import fast_constructor, frozen_dataclass
from binlogkit.binlog.header import V4_HEADER
from binlogkit.binlog.tables import SchemaSource
from binlogkit.binlog.transactions import (
    GTID_CODES,
    ROLE_CODES,
    ROW_CODES,
    Step,
    TransactionState,
)
from binlogkit.errors import DecodeError, ProtocolError
from binlogkit.gtid import Gtid, GtidSet, MariaGtid, MariaGtidList
from binlogkit.wire import ByteReader, ByteWriter

__all__ = [
    "ACK_MAGIC",
    "BINLOG_HEADER_SIZE",
    "SEMI_SYNC_MAGIC",
    "BinlogDump",
    "BinlogDumpGtid",
    "DumpFlag",
    "EndOfStream",
    "EventPacket",
    "RegisterSlave",
    "ResumePoint",
    "ResumeTracker",
    "SemiSyncAck",
    "StreamDecoder",
    "is_stream_only",
    "parse_stream_packet",
]

COM_REGISTER_SLAVE = 21
COM_BINLOG_DUMP = 18
COM_BINLOG_DUMP_GTID = 30

BINLOG_HEADER_SIZE = 4
"""The magic bytes before the first event: the smallest valid start position."""

SEMI_SYNC_MAGIC = 0xEF
"""First byte of the semi-sync header of an event packet, and of an ACK."""

ACK_MAGIC = SEMI_SYNC_MAGIC

_SEMI_SYNC_NEED_ACK = 0x01
_OK = 0x00
_EOF = 0xFE
_EOF_MAX_LENGTH = 9  # an EOF packet is 0xfe + warnings + status (5 bytes, or 9 with extras)
# Plain ints, not enum members: they are compared per event (an IntFlag ``&`` builds a flag).
_HEARTBEATS = frozenset({int(EventType.HEARTBEAT), int(EventType.HEARTBEAT_V2)})
_ARTIFICIAL = int(EventFlag.ARTIFICIAL)
_ROTATE = int(EventType.ROTATE)
_FORMAT_DESCRIPTION = int(EventType.FORMAT_DESCRIPTION)
_TRANSACTION_PAYLOAD = int(EventType.TRANSACTION_PAYLOAD)
_PREVIOUS_GTIDS = int(EventType.PREVIOUS_GTIDS)
_MARIADB_GTID_LIST = int(EventType.MARIADB_GTID_LIST)
_U32_MAX = (1 << 32) - 1
_U64_MAX = (1 << 64) - 1


class DumpFlag(IntFlag):
    """The ``flags`` of COM_BINLOG_DUMP and COM_BINLOG_DUMP_GTID."""

    NON_BLOCK = 0x01
    """End the stream with an EOF packet at the end of the last binlog instead of waiting."""
    SEND_ANNOTATE_ROWS = 0x02
    """MariaDB: send ANNOTATE_ROWS events (else the server leaves them out)."""
    THROUGH_POSITION = 0x02
    """MySQL, COM_BINLOG_DUMP_GTID: the file and position fields are set (same bit)."""
    THROUGH_GTID = 0x04
    """MySQL, COM_BINLOG_DUMP_GTID: the GTID set follows."""


def _reader(payload: bytes | memoryview, command: int, name: str) -> ByteReader:
    if not payload or payload[0] != command:
        got = f"0x{payload[0]:02x}" if payload else "nothing"
        raise ProtocolError(f"{name}: expected command byte 0x{command:02x}, got {got}")
    return ByteReader(payload, 1)


def _check_range(value: int, limit: int, what: str) -> int:
    if not 0 <= value <= limit:
        raise ProtocolError(f"{what} {value} is out of range 0..{limit}")
    return value


def _file_bytes(name: str) -> bytes:
    raw = name.encode("utf-8")
    if b"\0" in raw:
        raise ProtocolError(f"binlog file name {name!r} contains a NUL byte")
    return raw


@frozen_dataclass
class BinlogDump:
    """COM_BINLOG_DUMP: stream ``file`` from ``position`` (a 32-bit offset).

    Payload: command (1), position (4), flags (2), server_id (4), file name (rest).
    An empty ``file`` asks for the first binlog the server has.
    """

    file: str
    position: int
    server_id: int
    flags: int = 0

    def encode(self) -> bytes:
        w = ByteWriter()
        w.u8(COM_BINLOG_DUMP)
        w.u32(_check_range(self.position, _U32_MAX, "COM_BINLOG_DUMP position"))
        w.u16(_check_range(self.flags, 0xFFFF, "dump flags"))
        w.u32(_check_range(self.server_id, _U32_MAX, "server_id"))
        w.write(_file_bytes(self.file))
        return w.getvalue()

    @classmethod
    def decode(cls, payload: bytes | memoryview) -> BinlogDump:
        r = _reader(payload, COM_BINLOG_DUMP, "COM_BINLOG_DUMP")
        try:
            position = r.u32("position")
            flags = r.u16("flags")
            server_id = r.u32("server_id")
        except DecodeError as err:
            raise ProtocolError(f"COM_BINLOG_DUMP: {err.message}") from None
        return cls(r.rest().decode("utf-8", "surrogateescape"), position, server_id, flags)


@frozen_dataclass
class BinlogDumpGtid:
    """COM_BINLOG_DUMP_GTID (MySQL 5.6+): stream every transaction not in ``gtids``.

    Payload: command (1), flags (2), server_id (4), file name length (4), file
    name, position (8), and with :attr:`DumpFlag.THROUGH_GTID` the set's size
    (4) and its binary form (:meth:`GtidSet.encode`; the tagged format of
    8.3+ when the set holds a tag, or when ``tagged_format`` says so).
    ``THROUGH_GTID`` is set by :meth:`encode` whenever ``gtids`` is given.
    """

    server_id: int
    gtids: GtidSet | None = None
    file: str = ""
    position: int = BINLOG_HEADER_SIZE
    flags: int = 0
    tagged_format: bool | None = None

    def encode(self) -> bytes:
        flags = self.flags | (DumpFlag.THROUGH_GTID if self.gtids is not None else 0)
        name = _file_bytes(self.file)
        w = ByteWriter()
        w.u8(COM_BINLOG_DUMP_GTID)
        w.u16(_check_range(int(flags), 0xFFFF, "dump flags"))
        w.u32(_check_range(self.server_id, _U32_MAX, "server_id"))
        w.u32(len(name))
        w.write(name)
        w.u64(_check_range(self.position, _U64_MAX, "position"))
        if flags & DumpFlag.THROUGH_GTID:
            gtids = self.gtids if self.gtids is not None else GtidSet()
            try:
                data = gtids.encode(self.tagged_format)
            except ValueError as err:
                raise ProtocolError(f"COM_BINLOG_DUMP_GTID: {err}") from None
            w.u32(len(data))
            w.write(data)
        return w.getvalue()

    @classmethod
    def decode(cls, payload: bytes | memoryview) -> BinlogDumpGtid:
        r = _reader(payload, COM_BINLOG_DUMP_GTID, "COM_BINLOG_DUMP_GTID")
        try:
            flags = r.u16("flags")
            server_id = r.u32("server_id")
            name = r.take(r.u32("file name length"), "file name")
            position = r.u64("position")
            gtids = None
            tagged = None
            if flags & DumpFlag.THROUGH_GTID:
                data = r.take(r.u32("GTID set size"), "GTID set")
                gtids, tagged, end = GtidSet.decode_prefix(data)
                if end != len(data):
                    raise ProtocolError(f"{len(data) - end} bytes after the GTID set")
            if not r.at_end():
                raise ProtocolError(f"{r.remaining} unexpected bytes at the end")
        except (DecodeError, ValueError) as err:
            raise ProtocolError(f"COM_BINLOG_DUMP_GTID: {err}") from None
        return cls(
            server_id,
            gtids,
            name.decode("utf-8", "surrogateescape"),
            position,
            flags & ~DumpFlag.THROUGH_GTID if gtids is not None else flags,
            tagged,
        )


@frozen_dataclass
class RegisterSlave:
    """COM_REGISTER_SLAVE: how the replica shows in SHOW SLAVE HOSTS / SHOW REPLICAS.

    Payload: command (1), server_id (4), host, user and password (each a
    1-byte length and the bytes), port (2), replication rank (4), source id (4).
    """

    server_id: int
    host: str = ""
    user: str = ""
    password: str = field(default="", repr=False)
    port: int = 0
    rank: int = 0
    master_id: int = 0

    def encode(self) -> bytes:
        w = ByteWriter()
        w.u8(COM_REGISTER_SLAVE)
        w.u32(_check_range(self.server_id, _U32_MAX, "server_id"))
        for what, text in (("host", self.host), ("user", self.user), ("password", self.password)):
            raw = text.encode("utf-8")
            if len(raw) > 255:
                raise ProtocolError(f"COM_REGISTER_SLAVE {what} is longer than 255 bytes")
            w.u8(len(raw))
            w.write(raw)
        w.u16(_check_range(self.port, 0xFFFF, "port"))
        w.u32(_check_range(self.rank, _U32_MAX, "rank"))
        w.u32(_check_range(self.master_id, _U32_MAX, "master_id"))
        return w.getvalue()

    @classmethod
    def decode(cls, payload: bytes | memoryview) -> RegisterSlave:
        r = _reader(payload, COM_REGISTER_SLAVE, "COM_REGISTER_SLAVE")
        try:
            server_id = r.u32("server_id")
            host, user, password = (
                r.take(r.u8(f"{what} length"), what).decode("utf-8", "surrogateescape")
                for what in ("host", "user", "password")
            )
            port = r.u16("port")
            rank = r.u32("rank")
            master_id = r.u32("master_id")
        except DecodeError as err:
            raise ProtocolError(f"COM_REGISTER_SLAVE: {err.message}") from None
        if not r.at_end():
            raise ProtocolError(f"COM_REGISTER_SLAVE: {r.remaining} unexpected bytes at the end")
        return cls(server_id, host, user, password, port, rank, master_id)


@frozen_dataclass
class EventPacket:
    """One event of the binlog network stream.

    ``event`` is the whole event: common header, body and checksum, as in the
    file. ``ack_requested`` is the semi-sync flag (None when the stream has no
    semi-sync header): the source waits for a :class:`SemiSyncAck` of this event.
    """

    event: bytes
    ack_requested: bool | None = None

    def encode(self) -> bytes:
        if self.ack_requested is None:
            return bytes((_OK,)) + self.event
        flag = _SEMI_SYNC_NEED_ACK if self.ack_requested else 0
        return bytes((_OK, SEMI_SYNC_MAGIC, flag)) + self.event


@frozen_dataclass
class EndOfStream:
    """The EOF packet a non-blocking dump ends with."""


END_OF_STREAM = EndOfStream()
_new_event_packet = fast_constructor(EventPacket)


def parse_stream_packet(payload: bytes, *, semi_sync: bool = False) -> EventPacket | EndOfStream:
    """Read one packet of the binlog network stream (an ERR packet is the driver's business).

    ``semi_sync``: the replica asked for semi-sync, so each event packet
    carries the 2-byte semi-sync header.
    """
    if not payload:
        raise ProtocolError("empty packet in the binlog stream")
    first = payload[0]
    if first == _EOF and len(payload) <= _EOF_MAX_LENGTH:
        return END_OF_STREAM
    if first != _OK:
        raise ProtocolError(f"binlog stream packet starts with 0x{first:02x}, not 0x00")
    if not semi_sync:
        return _new_event_packet(payload[1:], None)
    if len(payload) < 3 or payload[1] != SEMI_SYNC_MAGIC:
        raise ProtocolError("semi-sync binlog stream packet lacks its 0xef header")
    return _new_event_packet(payload[3:], bool(payload[2] & _SEMI_SYNC_NEED_ACK))


@frozen_dataclass
class SemiSyncAck:
    """The replica's semi-sync acknowledgement: 0xef, position (8), file name (rest).

    ``position`` is the end of the acknowledged event (its next position). The
    packet is sent as a new command (sequence number 0), with no checksum.
    """

    file: str
    position: int

    def encode(self) -> bytes:
        w = ByteWriter()
        w.u8(ACK_MAGIC)
        w.u64(_check_range(self.position, _U64_MAX, "position"))
        w.write(_file_bytes(self.file))
        return w.getvalue()

    @classmethod
    def decode(cls, payload: bytes | memoryview) -> SemiSyncAck:
        r = _reader(payload, ACK_MAGIC, "semi-sync ACK")
        try:
            position = r.u64("position")
        except DecodeError as err:
            raise ProtocolError(f"semi-sync ACK: {err.message}") from None
        return cls(r.rest().decode("utf-8", "surrogateescape"), position)


# -- resume points -------------------------------------------------------------

ExecutedGtids = GtidSet | MariaGtidList
"""MySQL: the executed GTID set. MariaDB: the GTID position (one GTID per domain)."""


@frozen_dataclass
class ResumePoint:
    """Where to start again to read on after an event.

    ``file`` and ``position``: the next event's binlog file and offset.
    ``gtids``: the GTIDs executed through the last complete transaction (a
    :class:`GtidSet` for MySQL, a :class:`MariaGtidList` position for MariaDB;
    None while unknown). ``complete``: no transaction is open here, so a new
    stream started at this point repeats and loses nothing.
    """

    file: str
    position: int
    gtids: ExecutedGtids | None = None
    complete: bool = True


_new_point = fast_constructor(ResumePoint)


def is_stream_only(event: Event) -> bool:
    """Whether an event exists only in the network stream, not at its offset in the binlog file.

    Heartbeats, the artificial events the source makes up (the ROTATE that
    names the file a dump starts in, MariaDB's fake GTID_LIST), and the format
    description re-sent with log_pos 0 when a dump starts past it.
    """
    header = event.header
    code = header.type_code
    if code in _HEARTBEATS or header.flags & _ARTIFICIAL:
        return True
    return code == _FORMAT_DESCRIPTION and header.log_pos == 0


_TRANSACTION_EVENTS = ROLE_CODES | {_PREVIOUS_GTIDS, _MARIADB_GTID_LIST}
"""The events :meth:`ResumeTracker._transaction` acts on (and row events while no begun
transaction is open); the others pass it by."""


class ResumeTracker:
    """Follows the events of a replication stream and gives each its resume point.

    Feed every decoded event to :meth:`advance` in stream order (``framed``
    False for the events a TRANSACTION_PAYLOAD holds, which take no room of
    their own in the file). Start it where the dump starts: ``file``,
    ``position`` and the executed ``gtids`` when known.

    Positions: the next position is the event's ``log_pos``; an event written
    with log_pos 0 inside a transaction (MariaDB 11.4+) takes its size from
    the current position. A ROTATE (the real one ending a file and the fake
    one starting a dump) moves to the file and position it names. Heartbeats,
    the re-sent format description (log_pos 0) and payload-inner events leave
    the position alone.

    Transactions begin and end as :class:`~binlogkit.binlog.transactions.TransactionState`
    says. Each ended transaction's GTID joins the executed GTIDs (when they
    are known; one cut short does not): PREVIOUS_GTIDS and GTID_LIST events
    fill them in at the start of a file.
    """

    def __init__(
        self, file: str, position: int = BINLOG_HEADER_SIZE, gtids: ExecutedGtids | None = None
    ) -> None:
        self.file = file
        self.position = position
        self.gtids = gtids
        self.open = False
        self._state = TransactionState()
        self._pending: Gtid | MariaGtid | None = None
        self._complete_at = (file, position, gtids)  # the fields of last_complete

    @property
    def point(self) -> ResumePoint:
        """The resume point after the last event given to :meth:`advance`."""
        return _new_point(self.file, self.position, self.gtids, not self.open)

    @property
    def last_complete(self) -> ResumePoint:
        """The resume point after the last event that left no transaction open."""
        return _new_point(*self._complete_at, True)

    def offset_of(self, type_code: int, flags: int, log_pos: int, size: int) -> int:
        """The offset in :attr:`file` of a framed event with this header, about to be advanced.

        A stream-only event has no offset of its own: the current position is
        given (4, the file's first event, for a re-sent format description).
        """
        if not log_pos:
            return BINLOG_HEADER_SIZE if type_code == _FORMAT_DESCRIPTION else self.position
        if type_code in _HEARTBEATS or flags & _ARTIFICIAL:
            return self.position
        return log_pos - size

    def advance(self, event: Event, *, framed: bool = True) -> ResumePoint:
        """Take in the next event; returns the resume point after it."""
        header = event.header
        code = header.type_code
        if code in _HEARTBEATS:
            return self.point
        if framed:
            if code == _ROTATE:
                self.file = event.next_file  # type: ignore[attr-defined]
                self.position = event.position  # type: ignore[attr-defined]
            elif header.log_pos:
                self.position = header.log_pos
            else:
                self.skip(code, header.flags, 0, header.event_size)
        return self.settle(event, code)

    def settle(self, event: Event, code: int) -> ResumePoint:
        """The rest of :meth:`advance` once the position is taken in: the transaction
        bookkeeping of ``event`` (of type ``code``) and the resume point after it."""
        self.take(event, code)
        return _new_point(self.file, self.position, self.gtids, not self.open)

    def take(self, event: Event, code: int) -> None:
        """:meth:`settle` without making the resume point (it is :attr:`point` now)."""
        if code in _TRANSACTION_EVENTS or (not self._state.begun and code in ROW_CODES):
            self._transaction(event, code)
        if not self.open:
            self._complete_at = (self.file, self.position, self.gtids)

    def skip(self, type_code: int, flags: int, log_pos: int, size: int) -> None:
        """Move past a framed event that was not decoded (one a table filter dropped)."""
        if type_code in _HEARTBEATS or (type_code == _FORMAT_DESCRIPTION and not log_pos):
            return
        if log_pos:
            self.position = log_pos
        elif not flags & _ARTIFICIAL:
            self.position += size

    def _transaction(self, event: Event, code: int) -> None:
        if code == _PREVIOUS_GTIDS:
            previous: GtidSet = event.gtids  # type: ignore[attr-defined]
            current = self.gtids
            self.gtids = previous if not isinstance(current, GtidSet) else current | previous
        elif code == _MARIADB_GTID_LIST:
            self._merge_gtid_list(event.gtids)  # type: ignore[attr-defined]
        else:
            step = self._state.step(event)
            if code in GTID_CODES:
                self._pending = getattr(event, "gtid", None)
            elif step & Step.ENDS:
                self._finish()
            self.open = self._state.open

    def _finish(self) -> None:
        gtid, current = self._pending, self.gtids
        if isinstance(gtid, Gtid) and isinstance(current, GtidSet):
            self.gtids = current.add(gtid)
        elif isinstance(gtid, MariaGtid) and isinstance(current, MariaGtidList):
            self.gtids = current.advance(gtid)
        self._pending = None

    def _merge_gtid_list(self, state: MariaGtidList) -> None:
        """A GTID_LIST: the state at a file's start, or (fake) where a GTID dump starts."""
        position = state.position()
        current = self.gtids
        if not isinstance(current, MariaGtidList):
            self.gtids = position
            return
        merged = current
        for gtid in position:
            if current.get(gtid.domain_id) is None:
                merged = merged.advance(gtid)
        self.gtids = merged


_PLACED_APART = _HEARTBEATS | {_ROTATE}
"""Events whose place in the file is not given by their own log_pos and size alone."""


class StreamDecoder:
    """Decodes the event packets of one dump: each event located and with its resume point.

    Made where the dump starts (``file``, ``position``, executed ``gtids``);
    ``checksum`` says whether events carry a CRC32 before the first format
    description arrives (what ``@master_binlog_checksum`` was set to: the
    fake ROTATE that opens a dump is sent that way). :meth:`feed` takes one
    event (the bytes of an :class:`EventPacket`) and gives the decoded events
    (several for a TRANSACTION_PAYLOAD), each with ``header.file`` the binlog
    file name and ``header.offset`` its offset there, as reading the file
    gives them, paired with the :class:`ResumePoint` after it.
    ``file_prefix`` goes before each event's ``header.file`` (not the resume
    points' files): a stream's name for the server it reads (see
    :func:`~binlogkit.io.binlog_index.generation_name`).
    """

    def __init__(
        self,
        file: str,
        position: int = BINLOG_HEADER_SIZE,
        gtids: ExecutedGtids | None = None,
        *,
        checksum: bool = True,
        options: DecodeOptions | None = None,
        schema: SchemaSource | None = None,
        file_prefix: str = "",
    ) -> None:
        self.tracker = ResumeTracker(file, position, gtids)
        self.file_prefix = file_prefix
        fmt = FormatContext(checksum=ChecksumAlg.CRC32 if checksum else ChecksumAlg.OFF)
        self.decoder = BinlogDecoder(
            file=file, options=options, expect_magic=False, fmt=fmt, schema=schema
        )

    def feed(self, raw: bytes) -> list[tuple[Event, ResumePoint]]:
        """Decode one whole event; raises :class:`DecodeError` (located) for bad bytes."""
        out = self.decode(raw)
        return out if isinstance(out, list) else [(out, self.tracker.point)]

    def decode(self, raw: bytes) -> Event | list[tuple[Event, ResumePoint]]:
        """:meth:`feed`, with the usual packet's event given alone rather than in a list.

        The usual packet: one event framed at its log_pos, neither stream-only
        (see :func:`is_stream_only`) nor holding other events; the tracker
        then stands right after it, so its resume point is ``tracker.point``.
        """
        if len(raw) < V4_HEADER_LENGTH:
            raise DecodeError(f"stream event of {len(raw)} bytes is shorter than its header")
        fields = V4_HEADER.unpack_from(raw)
        _, code, _, size, log_pos, flags = fields
        if size != len(raw):
            raise DecodeError(
                f"stream event says it has {size} bytes but the packet holds {len(raw)}"
            )
        tracker = self.tracker
        decoder = self.decoder
        # The packet holds one event: the framed one comes first (only a table filter
        # drops it), then the events a TRANSACTION_PAYLOAD holds.
        if log_pos and code not in _PLACED_APART and not flags & _ARTIFICIAL:
            # The usual event: it sits at log_pos - size, the next one at log_pos.
            file = self.file_prefix + tracker.file if self.file_prefix else tracker.file
            event = decoder.decode_event(raw, log_pos - size, file, fields)
            tracker.position = log_pos
            if not isinstance(event, Event):  # a Signal (faster than isinstance of the Enum)
                return []
            if code != _TRANSACTION_PAYLOAD:
                tracker.take(event, code)
                return event
            out = [(event, tracker.settle(event, code))]
        else:
            offset = tracker.offset_of(code, flags, log_pos, size)
            file = self.file_prefix + tracker.file if self.file_prefix else tracker.file
            event = decoder.decode_event(raw, offset, file)
            if not isinstance(event, Event):  # a Signal (faster than isinstance of the Enum)
                tracker.skip(code, flags, log_pos, size)
                return []
            out = [(event, tracker.advance(event))]
        if code == _TRANSACTION_PAYLOAD:
            while not isinstance(event := decoder.next_event(), Signal):
                out.append((event, tracker.advance(event, framed=False)))
        return out
