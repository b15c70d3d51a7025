"""MariaDB's GTID events: GTID (162) and GTID_LIST (163).

A MariaDB GTID event starts every event group (it replaces the BEGIN query)
and names the group's GTID ``domain-server-seq``; the server id is the one
of the common header. Layout, each part present as the flags say:

- seq_no (8), domain_id (4), flags2 (1)
- FL_GROUP_COMMIT_ID: commit_id (8)
- FL_PREPARED_XA or FL_COMPLETED_XA: XID format id (4), gtrid length (1),
  bqual length (1), gtrid and bqual bytes (10.5+)
- then, when non-zero, flags_extra (1) (10.5+), followed by:
  FL_EXTRA_MULTI_ENGINE: extra_engines (1); FL_COMMIT_ALTER or
  FL_ROLLBACK_ALTER: sa_seq_no (8) (10.8+); FL_EXTRA_THREAD_ID: thread_id (4)
  (11.5+)
- zero padding up to the 19-byte post-header length

GTID_LIST starts every binlog file with the binlog state: a count (4; its top
4 bits are flags) and per GTID domain_id (4), server_id (4), seq_no (8).
"""

from __future__ import annotations

import struct
from enum import IntFlag
from typing import ClassVar

from binlogkit.binlog.constants import EventType
from binlogkit.binlog.context import DecodeContext, FormatContext
from binlogkit.binlog.events.base import Body, Event, TransactionRole, register
from binlogkit.binlog.events.transaction import XID_PART_MAX, Xid
from binlogkit.binlog.frozen import fast_constructor, frozen_dataclass
from binlogkit.binlog.header import EventHeader
from binlogkit.errors import DecodeError, EncodeError
from binlogkit.gtid import MariaGtid, MariaGtidList
from binlogkit.wire import ByteReader, ByteWriter

__all__ = ["MariaGtidEvent", "MariaGtidExtraFlag", "MariaGtidFlag", "MariaGtidListEvent"]

_START = struct.Struct("<QIB")
"""seq_no, domain_id and flags2: the fields every GTID event starts with."""

GTID_HEADER_LENGTH = 19
"""MariaDB pads GTID event bodies to this length."""


class MariaGtidFlag(IntFlag):
    """The ``flags2`` byte of a MariaDB GTID event."""

    STANDALONE = 0x01
    """No terminating COMMIT/XID: a DDL or other statement alone in its group."""
    GROUP_COMMIT_ID = 0x02
    TRANSACTIONAL = 0x04
    ALLOW_PARALLEL = 0x08
    WAITED = 0x10
    DDL = 0x20
    PREPARED_XA = 0x40
    COMPLETED_XA = 0x80


_STANDALONE = MariaGtidFlag.STANDALONE.value  # plain ints: cheap per event
_TRANSACTIONAL = MariaGtidFlag.TRANSACTIONAL.value


class MariaGtidExtraFlag(IntFlag):
    """The ``flags_extra`` byte (MariaDB 10.5+)."""

    MULTI_ENGINE = 0x01
    START_ALTER = 0x02
    COMMIT_ALTER = 0x04
    ROLLBACK_ALTER = 0x08
    THREAD_ID = 0x10


# Plain ints: ``int & IntFlag`` goes through the flag class, far slower on the decode path.
_GROUP_COMMIT_ID = MariaGtidFlag.GROUP_COMMIT_ID.value
_XA = (MariaGtidFlag.PREPARED_XA | MariaGtidFlag.COMPLETED_XA).value
_ALTER_DONE = (MariaGtidExtraFlag.COMMIT_ALTER | MariaGtidExtraFlag.ROLLBACK_ALTER).value
_MULTI_ENGINE = MariaGtidExtraFlag.MULTI_ENGINE.value
_THREAD_ID = MariaGtidExtraFlag.THREAD_ID.value


@register(EventType.MARIADB_GTID)
@frozen_dataclass
class MariaGtidEvent(Event):
    """Starts a MariaDB event group; see the module doc for the layout.

    Optional parts are ``None`` unless their flag is set. ``trailing`` keeps
    bytes after the known fields, except the zero padding up to 19 bytes,
    which encoding adds back.
    """

    transaction_role: ClassVar[TransactionRole] = TransactionRole.GTID

    seq_no: int
    domain_id: int
    flags: int
    commit_id: int | None = None
    xid: Xid | None = None
    flags_extra: int = 0
    extra_engines: int | None = None
    sa_seq_no: int | None = None
    thread_id: int | None = None
    trailing: bytes = b""

    @property
    def gtid(self) -> MariaGtid:
        # Decoded fields are in range (u32, u32, u64): no need of MariaGtid's checks.
        gtid = _new_maria_gtid(MariaGtid)
        _set_domain_id(gtid, self.domain_id)
        _set_server_id(gtid, self.header.server_id)
        _set_seq_no(gtid, self.seq_no)
        return gtid

    @property
    def standalone(self) -> bool:
        return bool(self.flags & _STANDALONE)

    @property
    def transactional(self) -> bool:
        return bool(self.flags & _TRANSACTIONAL)

    @property
    def ddl(self) -> bool:
        return bool(self.flags & MariaGtidFlag.DDL)

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> MariaGtidEvent:
        if len(body) == GTID_HEADER_LENGTH and body[13:] == _PADDING:
            seq_no, domain_id, flags = _START.unpack_from(body)
            if not flags & _OPTIONAL_PARTS:  # the usual event: no optional part, zero padding
                return _new_gtid(header, seq_no, domain_id, flags)
        r = ByteReader(body)
        seq_no, domain_id, flags = _START.unpack_from(body, r.need(13, "seq_no, domain_id, flags2"))
        commit_id = r.u64("commit_id") if flags & _GROUP_COMMIT_ID else None
        xid = None
        if flags & _XA:
            format_id = r.i32("XID format id")
            gtrid_length = r.u8("gtrid length")
            bqual_length = r.u8("bqual length")
            if gtrid_length > XID_PART_MAX or bqual_length > XID_PART_MAX:
                raise DecodeError(f"invalid XID lengths {gtrid_length}/{bqual_length}")
            xid = Xid(format_id, r.take(gtrid_length, "gtrid"), r.take(bqual_length, "bqual"))
        flags_extra = 0
        extra_engines = sa_seq_no = thread_id = None
        if r.remaining and r.buf[r.pos]:
            flags_extra = r.u8("flags_extra")
            if flags_extra & _MULTI_ENGINE:
                extra_engines = r.u8("extra_engines")
            if flags_extra & _ALTER_DONE:
                sa_seq_no = r.u64("sa_seq_no")
            if flags_extra & _THREAD_ID:
                thread_id = r.u32("thread_id")
        end = r.pos
        trailing = r.rest()
        if end + len(trailing) == GTID_HEADER_LENGTH and not trailing.strip(b"\0"):
            trailing = b""
        return _new_gtid(
            header,
            seq_no,
            domain_id,
            flags,
            commit_id,
            xid,
            flags_extra,
            extra_engines,
            sa_seq_no,
            thread_id,
            trailing,
        )

    def encode_body(self, fmt: FormatContext) -> bytes:
        w = ByteWriter()
        w.u64(self.seq_no)
        w.u32(self.domain_id)
        w.u8(self.flags)
        if self.flags & MariaGtidFlag.GROUP_COMMIT_ID:
            w.u64(_required(self.commit_id, "commit_id", "GROUP_COMMIT_ID"))
        if self.flags & _XA:
            xid = self.xid
            if xid is None:
                raise EncodeError("an XA GTID event needs its xid")
            w.sint(xid.format_id, 4)
            w.u8(len(xid.gtrid))
            w.u8(len(xid.bqual))
            w.write(xid.gtrid + xid.bqual)
        if self.flags_extra:
            w.u8(self.flags_extra)
            if self.flags_extra & MariaGtidExtraFlag.MULTI_ENGINE:
                w.u8(_required(self.extra_engines, "extra_engines", "MULTI_ENGINE"))
            if self.flags_extra & _ALTER_DONE:
                w.u64(_required(self.sa_seq_no, "sa_seq_no", "COMMIT/ROLLBACK_ALTER"))
            if self.flags_extra & MariaGtidExtraFlag.THREAD_ID:
                w.u32(_required(self.thread_id, "thread_id", "THREAD_ID"))
        w.write(self.trailing)
        if len(w) < GTID_HEADER_LENGTH:
            w.write(bytes(GTID_HEADER_LENGTH - len(w)))
        return w.getvalue()


_new_gtid = fast_constructor(MariaGtidEvent)
_new_maria_gtid = object.__new__
_set_domain_id = vars(MariaGtid)["domain_id"].__set__
_set_server_id = vars(MariaGtid)["server_id"].__set__
_set_seq_no = vars(MariaGtid)["seq_no"].__set__
"""For a trusted ``MariaGtid`` (see :attr:`MariaGtidEvent.gtid`): slots set without checks."""
_PADDING = bytes(GTID_HEADER_LENGTH - _START.size)
_OPTIONAL_PARTS = _GROUP_COMMIT_ID | _XA


def _required(value: int | None, name: str, flag: str) -> int:
    if value is None:
        raise EncodeError(f"flag {flag} is set but {name} is None")
    return value


_COUNT_MASK = (1 << 28) - 1


@register(EventType.MARIADB_GTID_LIST)
@frozen_dataclass
class MariaGtidListEvent(Event):
    """The binlog state at the start of a file (or a fake event on a GTID connect).

    ``flags`` are the top 4 bits of the count word (FLAG_UNTIL_REACHED = 1,
    FLAG_IGN_GTIDS = 2, as ``flags >> 28`` of the server's value).
    """

    gtids: MariaGtidList
    flags: int = 0
    extra: bytes = b""

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> MariaGtidListEvent:
        r = ByteReader(body)
        word = r.u32("count")
        gtids = []
        for _ in range(word & _COUNT_MASK):
            domain_id = r.u32("domain_id")
            server_id = r.u32("server_id")
            gtids.append(MariaGtid(domain_id, server_id, r.u64("seq_no")))
        try:
            gtid_list = MariaGtidList(tuple(gtids))
        except ValueError as err:
            raise DecodeError(f"GTID_LIST: {err}") from None
        return cls(header, gtid_list, word >> 28, r.rest())

    def encode_body(self, fmt: FormatContext) -> bytes:
        if len(self.gtids) > _COUNT_MASK or not 0 <= self.flags < 16:
            raise EncodeError("GTID_LIST count or flags out of range")
        w = ByteWriter()
        w.u32(len(self.gtids) | self.flags << 28)
        for gtid in self.gtids:
            w.u32(gtid.domain_id)
            w.u32(gtid.server_id)
            w.u64(gtid.seq_no)
        w.write(self.extra)
        return w.getvalue()
