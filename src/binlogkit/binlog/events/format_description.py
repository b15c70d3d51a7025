"""The events that describe the format of what follows: START_EVENT_V3 and FORMAT_DESCRIPTION."""

from __future__ import annotations

from dataclasses import replace

from binlogkit.binlog.constants import V1_HEADER_LENGTH, V4_HEADER_LENGTH, ChecksumAlg, EventType
from binlogkit.binlog.context import DecodeContext, FormatContext, checksum_capable
from binlogkit.binlog.events.base import Body, Event, register
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.header import EventHeader
from binlogkit.errors import DecodeError, EncodeError
from binlogkit.wire import ByteReader, ByteWriter

SERVER_VERSION_LENGTH = 50


def _read_version(r: ByteReader) -> tuple[str, bytes]:
    """The NUL-padded server version, and whatever follows its NUL if that is not all NULs."""
    version, _, tail = r.take(SERVER_VERSION_LENGTH, "server version").partition(b"\0")
    return version.decode("latin-1"), tail if tail.strip(b"\0") else b""


def _write_version(w: ByteWriter, version: str, tail: bytes) -> None:
    raw = version.encode("latin-1") + (b"\0" + tail if tail else b"")
    if len(raw) > SERVER_VERSION_LENGTH:
        raise EncodeError(f"server version longer than {SERVER_VERSION_LENGTH} bytes")
    w.write(raw.ljust(SERVER_VERSION_LENGTH, b"\0"))


def fde_checksum_alg(event: bytes | memoryview, header_length: int) -> ChecksumAlg | None:
    """The checksum algorithm a whole FDE announces, or None for pre-checksum servers.

    A checksum-aware server always ends its FDE with the algorithm byte and a
    CRC32 of the event, even when it checksums no other event (alg OFF).
    """
    version = bytes(event[header_length + 2 : header_length + 2 + SERVER_VERSION_LENGTH])
    if not checksum_capable(version.split(b"\0", 1)[0].decode("latin-1")):
        return None
    code = event[len(event) - 5]
    try:
        return ChecksumAlg(code)
    except ValueError:
        raise DecodeError(f"unknown checksum algorithm {code} in format description") from None


@register(EventType.START_V3)
@frozen_dataclass
class StartEventV3(Event):
    """The first event of v1 (MySQL 3.23) and v3 (4.0, 4.1) binlogs."""

    binlog_version: int
    server_version: str
    created: int
    version_tail: bytes = b""
    """Bytes after the version's NUL, kept only when they are not all NULs."""

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> StartEventV3:
        r = ByteReader(body)
        binlog_version = r.u16("binlog version")
        version, tail = _read_version(r)
        return cls(header, binlog_version, version, r.u32("created"), tail)

    def encode_body(self, fmt: FormatContext) -> bytes:
        w = ByteWriter()
        w.u16(self.binlog_version)
        _write_version(w, self.server_version, self.version_tail)
        w.u32(self.created)
        return w.getvalue()

    def context(self) -> FormatContext:
        """The format this event implies: v1 for 3.23, else v3 (4.0.0's short-lived v2 is v3)."""
        version = 1 if self.binlog_version == 1 else 3
        return FormatContext.old_format(version, self.server_version, self.created)


@register(EventType.FORMAT_DESCRIPTION)
@frozen_dataclass
class FormatDescriptionEvent(Event):
    """Starts every v4 binlog: server version, header length, post-header lengths, checksum.

    ``checksum_alg`` is None for servers older than MySQL 5.6.1 / MariaDB 5.3,
    whose FDE carries no checksum trailer. ``created`` is the binlog's creation
    time (0 in FDEs that do not start a file, e.g. in relay logs).
    """

    binlog_version: int
    server_version: str
    created: int
    header_length: int
    post_header_lengths: bytes
    checksum_alg: ChecksumAlg | None
    version_tail: bytes = b""
    """Bytes after the version's NUL, kept only when they are not all NULs."""

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> FormatDescriptionEvent:
        r = ByteReader(body)
        binlog_version = r.u16("binlog version")
        server_version, tail = _read_version(r)
        created = r.u32("created")
        header_length = r.u8("header length")
        if header_length < V1_HEADER_LENGTH + 6:
            raise DecodeError(f"format description announces a {header_length}-byte header")
        alg: ChecksumAlg | None = None
        lengths = r.rest()
        if checksum_capable(server_version):
            if not lengths:
                raise DecodeError("format description lacks its checksum algorithm byte")
            try:
                alg = ChecksumAlg(lengths[-1])
            except ValueError:
                raise DecodeError(f"unknown checksum algorithm {lengths[-1]}") from None
            lengths = lengths[:-1]
        return cls(
            header, binlog_version, server_version, created, header_length, lengths, alg, tail
        )

    def encode_body(self, fmt: FormatContext) -> bytes:
        w = ByteWriter()
        w.u16(self.binlog_version)
        _write_version(w, self.server_version, self.version_tail)
        w.u32(self.created)
        w.u8(self.header_length)
        w.write(self.post_header_lengths)
        if self.checksum_alg is not None:
            w.u8(self.checksum_alg)
        return w.getvalue()

    def context(self) -> FormatContext:
        """The format in force for the events that follow this one."""
        return FormatContext(
            binlog_version=self.binlog_version,
            server_version=self.server_version,
            header_length=self.header_length,
            post_header_lengths=self.post_header_lengths,
            checksum=ChecksumAlg.OFF if self.checksum_alg is None else self.checksum_alg,
            created=self.created,
        )

    def own_context(self) -> FormatContext:
        """The format this event itself is written in: checksummed whenever the server can."""
        fmt = replace(self.context(), header_length=V4_HEADER_LENGTH)
        if self.checksum_alg is None:
            return fmt
        return replace(fmt, checksum=ChecksumAlg.CRC32)
