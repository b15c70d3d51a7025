"""The event-data stream: cuts a byte stream into whole events and verifies their checksums.

Sans-I/O: feed bytes with :meth:`EventFramer.receive_data` (``b""`` marks the
end of input) and pull :class:`Frame` values with :meth:`EventFramer.next_frame`,
which answers :data:`NEED_DATA` when it must see more bytes first and
:data:`END` when the input ended cleanly between two events.

The framer follows the format itself: it reads START_EVENT_V3 and
FORMAT_DESCRIPTION events to learn the header length and checksum algorithm
of the events after them.
"""

from __future__ import annotations

import enum
import struct
import zlib
from dataclasses import replace

from binlogkit.binlog.constants import (
    MAGIC,
    MAX_EVENT_SIZE,
    V1_HEADER_LENGTH,
    V4_HEADER_LENGTH,
    ChecksumAlg,
    EventFlag,
    EventType,
    event_type_name,
)
from binlogkit.binlog.context import DecodeContext, FormatContext
from binlogkit.binlog.frozen import fast_constructor, frozen_dataclass
from binlogkit.binlog.header import (
    EVENT_SIZE_OFFSET,
    FLAGS_OFFSET,
    LOG_POS_OFFSET,
    TYPE_CODE_OFFSET,
    V4_HEADER,
    EventHeader,
    new_header,
)
from binlogkit.errors import (
    BinlogError,
    ChecksumError,
    DecodeError,
    EncryptedBinlogError,
    NotABinlogError,
    TruncatedError,
)

_U32 = struct.Struct("<I")
CRC32_RESIDUE = 0x2144DF1C
"""The CRC32 of any bytes followed by their own CRC32 (little-endian): a check without slicing."""
_START_V3_BODY = 56
_V1_START_EVENT_SIZE = V1_HEADER_LENGTH + _START_V3_BODY
_FORMAT_EVENTS = (EventType.START_V3, EventType.FORMAT_DESCRIPTION)
SLOW_PATH_TYPES = frozenset(int(t) for t in (*_FORMAT_EVENTS, EventType.MARIADB_START_ENCRYPTION))
"""The events that change how the events after them are framed: never on a fast path."""
MYSQL_ENCRYPTED_MAGIC = b"\xfdbin"
VIEW_BODY_FROM = 1 << 16
"""Bodies of at least this many bytes are handed out as views instead of copies."""


class Signal(enum.Enum):
    """What a sans-I/O reader answers when it has no event to give."""

    NEED_DATA = "need data"
    END = "end of input"


NEED_DATA = Signal.NEED_DATA
END = Signal.END


@frozen_dataclass
class FastPath:
    """What the fast paths need: the common case of a plain v4 event mid-stream.

    ``min_size``: the smallest valid event (header and checksum); ``verify``:
    checksums are on and verified.
    """

    fmt: FormatContext
    checksum_length: int
    verify: bool
    min_size: int

    @classmethod
    def of(cls, framer: EventFramer) -> FastPath | None:
        fmt = framer.fmt
        if (
            framer._need_magic
            or framer._first_event
            or framer._encrypted_from is not None
            or fmt.permuted_types
            or fmt.header_length != V4_HEADER_LENGTH
        ):
            return None
        cks = fmt.checksum_length
        verify = bool(cks) and framer.verify_checksum
        return cls(fmt, cks, verify, V4_HEADER_LENGTH + cks)


@frozen_dataclass
class Frame:
    """One whole event as read: its header, its bytes and the format it is written in.

    ``error`` is set (instead of raised) for a frame whose checksum failed when
    the caller chose to skip corrupt events.
    """

    header: EventHeader
    raw: bytes
    fmt: FormatContext
    checksum_length: int
    error: BinlogError | None = None

    @property
    def body(self) -> bytes | memoryview:
        """The bytes between the common header and the checksum.

        A copy for the usual small event (cheaper than a view), a view of ``raw`` for a large one.
        """
        raw = self.raw
        end = len(raw) - self.checksum_length
        if end < VIEW_BODY_FROM:
            return raw[self.fmt.header_length : end]
        return memoryview(raw)[self.fmt.header_length : end]


_new_frame = fast_constructor(Frame)


def event_crc32(raw: bytes | bytearray) -> int:
    """The CRC32 of an event without its checksum.

    A format description is summed with its BINLOG_IN_USE flag clear: the
    server sets and clears that flag in place, without summing again.
    """
    if (
        raw[TYPE_CODE_OFFSET] == EventType.FORMAT_DESCRIPTION
        and raw[FLAGS_OFFSET] & EventFlag.BINLOG_IN_USE
    ):
        raw = bytearray(raw)
        raw[FLAGS_OFFSET] &= ~EventFlag.BINLOG_IN_USE
    return zlib.crc32(memoryview(raw)[: len(raw) - 4])


def crc32_ok(raw: bytes) -> bool:
    stored: int = _U32.unpack_from(raw, len(raw) - 4)[0]
    return event_crc32(raw) == stored


class EventFramer:
    """Frames events from a byte stream that starts at ``offset`` of ``file``.

    ``expect_magic``: the stream starts with the 4-byte binlog magic (a file
    read from its start), so its first event must be a START_EVENT_V3 or a
    FORMAT_DESCRIPTION. ``fmt``: the format in force when the stream starts
    elsewhere (after a seek, or a replication stream that sends its own FDE).

    Frame headers carry today's type codes: for the few pre-release servers
    that numbered types differently, :meth:`FormatContext.type_code` maps them.
    """

    def __init__(
        self,
        *,
        file: str | None = None,
        offset: int = 0,
        expect_magic: bool = True,
        verify_checksum: bool = True,
        skip_corrupt: bool = False,
        fmt: FormatContext | None = None,
        decrypted: bool = False,
    ) -> None:
        self.file = file
        self.decrypted = decrypted
        """The bytes come through a decrypting stage: events after START_ENCRYPTION are plain."""
        self.fmt = fmt or FormatContext()
        self.verify_checksum = verify_checksum
        self.skip_corrupt = skip_corrupt
        self._buf = bytearray()
        self._start = 0
        self._offset = offset
        self._need_magic = expect_magic
        self._need_format = expect_magic
        self._first_event = True
        self._eof = False
        self._encrypted_from: int | None = None
        self.fast: FastPath | None = None
        """The plain-event format of the input, or None while every event needs the full
        checks (before the format is known, in v1/v3 and encrypted binlogs).

        A plain event is a v4 event that neither starts a format nor encryption;
        one whose size, CRC32 (:data:`CRC32_RESIDUE`) and type pass may be
        decoded in ``fast.fmt`` without the framer. Kept up to date by
        :meth:`next_frame`.
        """

    @property
    def offset(self) -> int:
        """The input offset of the next event (or of the magic, before it is read)."""
        return self._offset

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        """Add input bytes; an empty ``data`` says the input has ended."""
        if not data:
            self._eof = True
            return
        if self._start > 1 << 20 and self._start * 2 > len(self._buf):
            del self._buf[: self._start]
            self._start = 0
        self._buf += data

    def seek(self, offset: int) -> None:
        """Forget buffered bytes; the next bytes received start at ``offset``."""
        self._buf.clear()
        self._start = 0
        self._offset = offset
        self._need_magic = False
        self._need_format = False
        self._eof = False

    def _truncated(self, what: str) -> TruncatedError:
        return TruncatedError(
            f"input ends inside {what} ({len(self._buf) - self._start} bytes left)",
            file=self.file,
            offset=self._offset,
            hint="the file may still be written (read it with --follow) or was cut short",
        )

    def next_plain(self) -> tuple[EventHeader, bytes] | None:
        """The next event as its header and bytes when it is a plain one (see :attr:`fast`),
        whole in the buffer and with a good checksum; else None: :meth:`next_frame` answers."""
        fast = self.fast
        if fast is not None and fast.fmt is self.fmt:
            buf = self._buf
            start = self._start
            avail = len(buf) - start
            if avail >= V4_HEADER_LENGTH:
                ts, code, server_id, size, log_pos, flags = V4_HEADER.unpack_from(buf, start)
                if code not in SLOW_PATH_TYPES and fast.min_size <= size <= avail:
                    raw = bytes(buf[start : start + size])
                    if not fast.verify or zlib.crc32(raw) == CRC32_RESIDUE:
                        offset = self._offset
                        self._start = start + size
                        self._offset = offset + size
                        header = new_header(
                            ts, code, server_id, size, log_pos, flags, b"", offset, self.file
                        )
                        return header, raw
        return None

    def take_run(
        self, limit: int, leave_out: frozenset[int] = frozenset()
    ) -> tuple[bytes, int, list[int]]:
        """The plain events (see :attr:`fast`) whole in the buffer now, up to about
        ``limit`` bytes: their bytes, the input offset they start at, and where each event
        whose type is not in ``leave_out`` starts and ends in those bytes (one after the
        other). b"" when the next event is not plain or not whole (:meth:`next_frame`
        answers). Checksums are not verified: for a framer made with
        ``verify_checksum=False`` (a binlog server's, which passes events on as they are)."""
        fast = self.fast
        spans: list[int] = []
        if fast is None or fast.fmt is not self.fmt or fast.verify:
            return b"", self._offset, spans
        buf = self._buf
        start = self._start
        end = len(buf)
        stop = min(end, start + limit)
        pos = start
        size_at = _U32.unpack_from
        slow = SLOW_PATH_TYPES
        smallest = fast.min_size
        while pos + V4_HEADER_LENGTH <= end and pos < stop:
            size = size_at(buf, pos + EVENT_SIZE_OFFSET)[0]
            code = buf[pos + TYPE_CODE_OFFSET]
            if code in slow or not smallest <= size <= end - pos:
                break
            if code not in leave_out:
                spans.append(pos - start)
                spans.append(pos - start + size)
            pos += size
        offset = self._offset
        if pos == start:
            return b"", offset, spans
        self._start = pos
        self._offset = offset + pos - start
        return bytes(buf[start:pos]), offset, spans

    def next_frame(self) -> Frame | Signal:
        """The next whole event, or NEED_DATA / END."""
        plain = self.next_plain()
        if plain is not None:
            fast = self.fast
            assert fast is not None
            return _new_frame(plain[0], plain[1], fast.fmt, fast.checksum_length, None)
        frame = self._next_frame_checked()
        self.fast = FastPath.of(self)
        return frame

    def _next_frame_checked(self) -> Frame | Signal:
        """next_frame with every check: the magic, format events, damage, the end of input."""
        buf = self._buf
        avail = len(buf) - self._start
        if self._need_magic:
            if avail < 4:
                if self._eof:
                    raise self._truncated("the 4-byte binlog magic")
                return NEED_DATA
            magic = bytes(buf[self._start : self._start + 4])
            if magic == MYSQL_ENCRYPTED_MAGIC:
                raise EncryptedBinlogError(
                    "MySQL encrypted binlog (8.0.14+ binlog_encryption)",
                    file=self.file,
                    offset=0,
                    hint="give the server's keyring_file keyring (--key-file)",
                )
            if magic != MAGIC:
                raise NotABinlogError(
                    f"not a binlog: starts with {magic.hex()} instead of fe62696e",
                    file=self.file,
                    offset=self._offset,
                )
            self._need_magic = False
            self._start += 4
            self._offset += 4
            avail -= 4
        if avail < V1_HEADER_LENGTH:
            if self._eof:
                if avail == 0:
                    return END
                raise self._truncated("an event header")
            return NEED_DATA
        start = self._start
        size = _U32.unpack_from(buf, start + EVENT_SIZE_OFFSET)[0]
        type_code = buf[start + TYPE_CODE_OFFSET]
        if self._encrypted_from is not None:
            raise EncryptedBinlogError(
                "MariaDB encrypted binlog: events after START_ENCRYPTION are encrypted",
                file=self.file,
                offset=self._offset,
                hint="give the server's file_key_management key file (--key-file)",
            )
        if self._first_event and self._need_format and type_code not in _FORMAT_EVENTS:
            raise DecodeError(
                f"the first event is {event_type_name(type_code)} (size {size}), "
                "not a format description, so the format of this binlog is unknown",
                file=self.file,
                offset=self._offset,
                event_type=event_type_name(type_code),
                hint="the file is damaged or not a binlog; a binlog starts with "
                "START_EVENT_V3 or FORMAT_DESCRIPTION right after the magic bytes",
            )
        if self._first_event and type_code == EventType.START_V3 and size == _V1_START_EVENT_SIZE:
            header_length = V1_HEADER_LENGTH
        elif type_code == EventType.FORMAT_DESCRIPTION:
            header_length = V4_HEADER_LENGTH
        else:
            header_length = self.fmt.header_length
        if size < header_length:
            raise DecodeError(
                f"event size {size} is smaller than the {header_length}-byte header",
                file=self.file,
                offset=self._offset,
                event_type=event_type_name(type_code),
            )
        if size > MAX_EVENT_SIZE or (avail < size and self._eof):
            skipped = self._impossible_size(start, avail, size, header_length)
            if skipped is not None:
                return skipped
        if avail < size:
            if self._eof:
                raise self._truncated(f"a {size}-byte {event_type_name(type_code)} event")
            return NEED_DATA
        raw = bytes(buf[start : start + size])
        header = EventHeader.decode(raw, 0, header_length, offset=self._offset, file=self.file)
        fmt, checksum_length, next_fmt = self._formats_of(header, raw)
        if size < header_length + checksum_length:
            raise DecodeError(
                f"event size {size} leaves no room for the {header_length}-byte header "
                f"and the {checksum_length}-byte checksum",
                file=self.file,
                offset=self._offset,
                event_type=header.type_name,
            )
        if fmt.permuted_types:
            header = replace(header, type_code=fmt.type_code(type_code))
        error = None
        if checksum_length and self.verify_checksum and not crc32_ok(raw):
            error = ChecksumError(
                "CRC32 mismatch",
                file=self.file,
                offset=self._offset,
                event_type=header.type_name,
                hint=(
                    "the file is corrupt; skip corrupt events (--skip-corrupt) or disable "
                    "checksum verification (--no-verify-checksum)"
                ),
            )
            if not self.skip_corrupt:
                raise error
            end = self._end_by_position(start, avail, header_length)
            if end is not None and end != size:  # the size field itself is damaged
                size, raw = end, bytes(buf[start : start + end])
        self._start = start + size
        self._offset += size
        self._first_event = False
        if next_fmt is not None:
            self.fmt = next_fmt
        if type_code == EventType.MARIADB_START_ENCRYPTION and not self.decrypted:
            self._encrypted_from = self._offset
        return Frame(header, raw, fmt, checksum_length, error)

    def _impossible_size(
        self, start: int, avail: int, size: int, header_length: int
    ) -> Frame | None:
        """An event whose size field is corrupt, skipped (or the error raised); None: not so.

        The size is impossible above what a server writes, or when the input
        ends before it while the event's next position (log_pos) puts its end
        at the start of a plausible event. That end is where skip mode goes on.
        """
        buf = self._buf
        type_name = event_type_name(buf[start + TYPE_CODE_OFFSET])
        end = self._end_by_position(start, avail, header_length)
        if end is None and size <= MAX_EVENT_SIZE:
            return None  # a truncated event, as far as anyone can tell
        why = (
            f"above the {MAX_EVENT_SIZE} bytes a server writes"
            if size > MAX_EVENT_SIZE
            else f"it runs past the end of the input; its next position says {end} bytes"
        )
        error = DecodeError(
            f"event size {size} is corrupt: {why}",
            file=self.file,
            offset=self._offset,
            event_type=type_name,
            hint="skip corrupt events (--skip-corrupt) to go on after it",
        )
        if not self.skip_corrupt or end is None:
            raise error
        raw = bytes(buf[start : start + end])
        header = EventHeader.decode(raw, 0, header_length, offset=self._offset, file=self.file)
        self._start = start + end
        self._offset += end
        self._first_event = False
        return Frame(header, raw, self.fmt, self.fmt.checksum_length, error)

    def _end_by_position(self, start: int, avail: int, header_length: int) -> int | None:
        """The event's length by its next-position field, when the bytes agree; else None.

        They agree when that end is the end of the input, or the start of an
        event whose own next position matches its size.
        """
        if header_length < V4_HEADER_LENGTH or avail < V4_HEADER_LENGTH:
            return None
        buf = self._buf
        end = _U32.unpack_from(buf, start + LOG_POS_OFFSET)[0] - self._offset
        if not header_length <= end <= avail:
            return None
        if end == avail:
            return end if self._eof else None
        if avail - end < V4_HEADER_LENGTH:
            return None
        after = start + end
        size = _U32.unpack_from(buf, after + EVENT_SIZE_OFFSET)[0]
        log_pos = _U32.unpack_from(buf, after + LOG_POS_OFFSET)[0]
        return end if size >= V4_HEADER_LENGTH and log_pos == self._offset + end + size else None

    def _formats_of(
        self, header: EventHeader, raw: bytes
    ) -> tuple[FormatContext, int, FormatContext | None]:
        """The format of this event, its checksum length, and the format it starts, if any."""
        # Imported here: the event modules import this package's context and header.
        from binlogkit.binlog.events.format_description import (
            FormatDescriptionEvent,
            StartEventV3,
            fde_checksum_alg,
        )

        if header.type_code == EventType.FORMAT_DESCRIPTION:
            try:
                alg = fde_checksum_alg(raw, V4_HEADER_LENGTH)
                own = FormatContext(checksum=ChecksumAlg.OFF if alg is None else ChecksumAlg.CRC32)
                checksum_length = own.checksum_length
                body = memoryview(raw)[V4_HEADER_LENGTH : len(raw) - checksum_length]
                fde = FormatDescriptionEvent.decode(header, body, DecodeContext(own))
            except BinlogError as err:
                err.locate(file=self.file, offset=self._offset, event_type=header.type_name)
                raise
            return fde.own_context(), checksum_length, fde.context()
        if header.type_code == EventType.START_V3 and self._first_event:
            length = header.event_size - _START_V3_BODY
            if length not in (V1_HEADER_LENGTH, V4_HEADER_LENGTH):
                raise DecodeError(
                    f"START_EVENT_V3 of {header.event_size} bytes: neither a v1 nor a v3 event",
                    file=self.file,
                    offset=self._offset,
                    event_type=header.type_name,
                )
            body = memoryview(raw)[length:]
            start = StartEventV3.decode(header, body, DecodeContext(self.fmt))
            fmt = start.context()
            return fmt, 0, fmt
        return self.fmt, self.fmt.checksum_length, None
