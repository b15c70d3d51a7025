"""Transaction-level events: XA_PREPARE (38), TRANSACTION_CONTEXT (36), VIEW_CHANGE (37).

XA_PREPARE ends the event group of ``XA PREPARE`` (or of ``XA COMMIT ...
ONE PHASE``) in MySQL 5.7+ and MariaDB 10.5+. TRANSACTION_CONTEXT and
VIEW_CHANGE are written by MySQL Group Replication (5.7.6+) into the relay
logs and binlogs of group members; their layouts follow MySQL's
``Transaction_context_event`` and ``View_change_event``.
"""

from __future__ import annotations

import re
from typing import ClassVar

from binlogkit.binlog.constants import EventType
from binlogkit.binlog.context import DecodeContext, FormatContext
from binlogkit.binlog.events.base import Body, Event, TransactionRole, register
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.header import EventHeader
from binlogkit.errors import DecodeError, EncodeError
from binlogkit.gtid import GtidSet
from binlogkit.wire import ByteReader, ByteWriter

__all__ = ["TransactionContextEvent", "ViewChangeEvent", "XaPrepareEvent", "Xid"]

XID_PART_MAX = 64
"""The longest gtrid or bqual of an XA transaction id."""

VIEW_ID_LENGTH = 40


@frozen_dataclass
class Xid:
    """An XA transaction id: format id, global transaction id and branch qualifier."""

    format_id: int
    gtrid: bytes
    bqual: bytes = b""

    def __post_init__(self) -> None:
        if len(self.gtrid) > XID_PART_MAX or len(self.bqual) > XID_PART_MAX:
            raise ValueError(f"XID parts are at most {XID_PART_MAX} bytes each")

    def __str__(self) -> str:
        """As the servers print it: ``X'gtrid',X'bqual',format_id``."""
        return f"X'{self.gtrid.hex()}',X'{self.bqual.hex()}',{self.format_id}"

    @classmethod
    def parse(cls, text: str) -> Xid:
        """The XID of its printed form (``X'gtrid',X'bqual',format_id``, as MySQL logs
        ``XA COMMIT`` and ``XA ROLLBACK``); ValueError for any other text."""
        m = _PRINTED.fullmatch(text)
        if m is None:
            raise ValueError(f"not an XID as servers print it: {text!r}")
        return cls(int(m[3]), bytes.fromhex(m[1]), bytes.fromhex(m[2]))


_PRINTED = re.compile(r"X'((?:[0-9a-fA-F]{2})*)',X'((?:[0-9a-fA-F]{2})*)',(-?[0-9]+)")


@register(EventType.XA_PREPARE)
@frozen_dataclass
class XaPrepareEvent(Event):
    """Ends an XA transaction's prepared event group.

    Layout: one_phase (1), format id (4, signed), gtrid length (4), bqual
    length (4), gtrid and bqual bytes.
    """

    transaction_role: ClassVar[TransactionRole] = TransactionRole.END

    one_phase: bool
    xid: Xid

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> XaPrepareEvent:
        r = ByteReader(body)
        one_phase = r.u8("one_phase")
        if one_phase > 1:
            raise DecodeError(f"XA_PREPARE one_phase byte is {one_phase}, not 0 or 1")
        format_id = r.i32("format id")
        gtrid_length = r.u32("gtrid length")
        bqual_length = r.u32("bqual length")
        if gtrid_length > XID_PART_MAX or bqual_length > XID_PART_MAX:
            raise DecodeError(f"invalid XID lengths {gtrid_length}/{bqual_length} in XA_PREPARE")
        gtrid = r.take(gtrid_length, "gtrid")
        bqual = r.take(bqual_length, "bqual")
        if r.remaining:
            raise DecodeError(f"XA_PREPARE has {r.remaining} bytes after its XID")
        return cls(header, bool(one_phase), Xid(format_id, gtrid, bqual))

    def encode_body(self, fmt: FormatContext) -> bytes:
        w = ByteWriter()
        w.u8(int(self.one_phase))
        w.sint(self.xid.format_id, 4)
        w.u32(len(self.xid.gtrid))
        w.u32(len(self.xid.bqual))
        w.write(self.xid.gtrid)
        w.write(self.xid.bqual)
        return w.getvalue()


def _read_items(r: ByteReader, count: int, what: str) -> tuple[bytes, ...]:
    return tuple(r.take(r.u16(f"{what} item length"), f"{what} item") for _ in range(count))


@register(EventType.TRANSACTION_CONTEXT)
@frozen_dataclass
class TransactionContextEvent(Event):
    """Group Replication's certification data of one transaction.

    Post-header (18 bytes): server UUID length (1), thread id (4),
    gtid_specified (1), snapshot version length (4), write-set item count (4),
    read-set item count (4). Body: the server UUID text, the snapshot version
    (an encoded GTID set), then each write-set and read-set item as a 2-byte
    length and its bytes (hashes of the written rows' keys).
    """

    server_uuid: str
    thread_id: int
    gtid_specified: bool
    snapshot_version: bytes
    write_set: tuple[bytes, ...] = ()
    read_set: tuple[bytes, ...] = ()

    @property
    def snapshot_gtids(self) -> GtidSet:
        """The snapshot version as a GTID set (empty when the event carries none)."""
        return GtidSet.decode(self.snapshot_version) if self.snapshot_version else GtidSet()

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> TransactionContextEvent:
        r = ByteReader(body)
        uuid_length = r.u8("server uuid length")
        thread_id = r.u32("thread id")
        gtid_specified = r.u8("gtid_specified")
        if gtid_specified > 1:
            raise DecodeError(f"gtid_specified byte is {gtid_specified}, not 0 or 1")
        snapshot_length = r.u32("snapshot version length")
        write_count = r.u32("write set count")
        read_count = r.u32("read set count")
        server_uuid = r.take(uuid_length, "server uuid").decode("ascii", "surrogateescape")
        snapshot = r.take(snapshot_length, "snapshot version")
        write_set = _read_items(r, write_count, "write set")
        read_set = _read_items(r, read_count, "read set")
        if r.remaining:
            raise DecodeError(f"TRANSACTION_CONTEXT has {r.remaining} bytes after its read set")
        return cls(
            header, server_uuid, thread_id, bool(gtid_specified), snapshot, write_set, read_set
        )

    def encode_body(self, fmt: FormatContext) -> bytes:
        uuid = self.server_uuid.encode("ascii", "surrogateescape")
        if len(uuid) > 0xFF:
            raise EncodeError("server uuid longer than 255 bytes")
        w = ByteWriter()
        w.u8(len(uuid))
        w.u32(self.thread_id)
        w.u8(int(self.gtid_specified))
        w.u32(len(self.snapshot_version))
        w.u32(len(self.write_set))
        w.u32(len(self.read_set))
        w.write(uuid)
        w.write(self.snapshot_version)
        for item in (*self.write_set, *self.read_set):
            w.u16(len(item))
            w.write(item)
        return w.getvalue()


@register(EventType.VIEW_CHANGE)
@frozen_dataclass
class ViewChangeEvent(Event):
    """Marks a Group Replication membership change.

    Post-header (52 bytes): view id (40, NUL-padded text), sequence number (8),
    certification-info entry count (4). Body: each entry as key length (2),
    key, value length (4), value.
    """

    view_id: str
    seq_number: int
    certification_info: tuple[tuple[bytes, bytes], ...] = ()

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> ViewChangeEvent:
        r = ByteReader(body)
        view_id = r.take(VIEW_ID_LENGTH, "view id").rstrip(b"\0").decode("latin-1")
        if not view_id:
            raise DecodeError("VIEW_CHANGE event has an empty view id")
        seq_number = r.i64("seq_number")
        count = r.u32("certification info count")
        entries = []
        for _ in range(count):
            key = r.take(r.u16("key length"), "certification key")
            value = r.take(r.u32("value length"), "certification value")
            entries.append((key, value))
        if r.remaining:
            raise DecodeError(f"VIEW_CHANGE has {r.remaining} bytes after its certification info")
        return cls(header, view_id, seq_number, tuple(entries))

    def encode_body(self, fmt: FormatContext) -> bytes:
        view_id = self.view_id.encode("latin-1")
        if len(view_id) > VIEW_ID_LENGTH:
            raise EncodeError(f"view id longer than {VIEW_ID_LENGTH} bytes")
        w = ByteWriter()
        w.write(view_id.ljust(VIEW_ID_LENGTH, b"\0"))
        w.sint(self.seq_number, 8)
        w.u32(len(self.certification_info))
        for key, value in self.certification_info:
            w.u16(len(key))
            w.write(key)
            w.u32(len(value))
            w.write(value)
        return w.getvalue()
