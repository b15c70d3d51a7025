"""MySQL's GTID events: GTID (33), ANONYMOUS_GTID (34), GTID_TAGGED (42), PREVIOUS_GTIDS (35).

GTID and ANONYMOUS_GTID share one layout; each field after the GNO exists
only from some server version on, so every optional field is ``None`` when
the event ends before it:

- flags (1), server UUID (16), GNO (8, signed)
- 5.7+: logical-clock type code (1, always 2), last_committed (8),
  sequence_number (8)
- 8.0.1+: immediate_commit_timestamp (7 bytes, microseconds); when its
  bit 55 is set, original_commit_timestamp (7) follows, else the two are equal
- 8.0.2+: transaction_length (packed integer, includes this event)
- 8.0.14+: immediate_server_version (4); when its bit 31 is set,
  original_server_version (4) follows, else the two are equal
- 8.0.33+: commit_group_ticket (8), only when one was assigned

GTID_TAGGED (8.3+) carries the same fields plus the tag in MySQL's
serialization-library message format (type-length-value fields with
variable-length integers). PREVIOUS_GTIDS holds the GTID set of all
earlier binlogs in the binary GTID-set form (:meth:`GtidSet.encode`).
"""

from __future__ import annotations

from dataclasses import field
from datetime import UTC, datetime, timedelta
from typing import ClassVar
from uuid import UUID

from binlogkit.binlog.constants import EventType
from binlogkit.binlog.context import DecodeContext, FormatContext
from binlogkit.binlog.events.base import Body, Event, TransactionRole, register
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.header import EventHeader
from binlogkit.errors import DecodeError, EncodeError
from binlogkit.gtid import (
    Gtid,
    GtidSet,
    decode_varlen,
    decode_varlen_signed,
    encode_varlen,
    encode_varlen_signed,
    normalize_tag,
)
from binlogkit.wire import ByteReader, ByteWriter

__all__ = [
    "FLAG_MAY_HAVE_SBR",
    "LOGICAL_TIMESTAMP_TYPECODE",
    "AnonymousGtidEvent",
    "GtidEvent",
    "PreviousGtidsEvent",
    "TaggedGtidEvent",
]

FLAG_MAY_HAVE_SBR = 0x01
"""GTID flag: the transaction may hold statement-based events."""

LOGICAL_TIMESTAMP_TYPECODE = 2

_TS_MARK = 1 << 55
_VERSION_MARK = 1 << 31
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _micros(value: int | None) -> datetime | None:
    return None if value is None else _EPOCH + timedelta(microseconds=value)


class _TransactionStart:
    """What GTID and GTID_TAGGED events derive alike from the fields they share."""

    __slots__ = ()

    flags: int
    immediate_commit_timestamp: int | None
    original_commit_timestamp: int | None

    @property
    def may_have_sbr(self) -> bool:
        return bool(self.flags & FLAG_MAY_HAVE_SBR)

    @property
    def immediate_commit_time(self) -> datetime | None:
        return _micros(self.immediate_commit_timestamp)

    @property
    def original_commit_time(self) -> datetime | None:
        return _micros(self.original_commit_timestamp)


@register(EventType.GTID)
@frozen_dataclass
class GtidEvent(Event, _TransactionStart):
    """Starts a transaction and names its GTID (``uuid:gno``).

    ``lt_type`` is the logical-clock type code (2; ``None`` in 5.6 events).
    Commit timestamps are microseconds since the epoch. ``extra`` keeps bytes
    after the known fields (and everything after an unknown ``lt_type``).
    """

    transaction_role: ClassVar[TransactionRole] = TransactionRole.GTID

    flags: int
    uuid: UUID
    gno: int
    lt_type: int | None = None
    last_committed: int | None = None
    sequence_number: int | None = None
    immediate_commit_timestamp: int | None = None
    original_commit_timestamp: int | None = None
    transaction_length: int | None = None
    immediate_server_version: int | None = None
    original_server_version: int | None = None
    commit_group_ticket: int | None = None
    extra: bytes = b""

    @property
    def gtid(self) -> Gtid | None:
        """The transaction's GTID; ``None`` for an anonymous transaction."""
        return None if self.anonymous else Gtid(self.uuid, self.gno)

    @property
    def anonymous(self) -> bool:
        return self.header.type_code == EventType.ANONYMOUS_GTID

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> GtidEvent:
        r = ByteReader(body)
        flags = r.u8("flags")
        uuid = UUID(bytes=r.take(16, "server uuid"))
        gno = r.i64("gno")
        if header.type_code == EventType.ANONYMOUS_GTID:
            if gno != 0:
                raise DecodeError(f"anonymous GTID event has GNO {gno} instead of 0")
        elif not 1 <= gno < (1 << 63) - 1:
            raise DecodeError(f"GTID event has an invalid GNO {gno}")
        values: dict[str, int | None] = {}
        if r.remaining:
            lt_type = values["lt_type"] = r.u8("logical clock type")
            if lt_type == LOGICAL_TIMESTAMP_TYPECODE:
                values["last_committed"] = r.i64("last_committed")
                values["sequence_number"] = r.i64("sequence_number")
                if r.remaining >= 7:
                    _read_commit_info(r, values)
        return cls(header, flags, uuid, gno, **values, extra=r.rest())

    def encode_body(self, fmt: FormatContext) -> bytes:
        w = ByteWriter()
        w.u8(self.flags)
        w.write(self.uuid.bytes)
        w.sint(self.gno, 8)
        chain = (
            ("lt_type", self.lt_type),
            ("last_committed", self.last_committed),
            ("immediate_commit_timestamp", self.immediate_commit_timestamp),
            ("transaction_length", self.transaction_length),
            ("immediate_server_version", self.immediate_server_version),
            ("commit_group_ticket", self.commit_group_ticket),
        )
        _check_chain(chain)
        if self.lt_type is not None:
            w.u8(self.lt_type)
        if self.last_committed is not None:
            if self.sequence_number is None:
                raise EncodeError("last_committed is set but sequence_number is not")
            w.sint(self.last_committed, 8)
            w.sint(self.sequence_number, 8)
        if self.immediate_commit_timestamp is not None:
            imm = self.immediate_commit_timestamp
            orig = self.original_commit_timestamp
            if orig is not None and orig != imm:
                w.uint(imm | _TS_MARK, 7)
                w.uint(orig, 7)
            else:
                w.uint(imm, 7)
        if self.transaction_length is not None:
            w.packed_int(self.transaction_length)
        if self.immediate_server_version is not None:
            imm = self.immediate_server_version
            orig = self.original_server_version
            if orig is not None and orig != imm:
                w.u32(imm | _VERSION_MARK)
                w.u32(orig)
            else:
                w.u32(imm)
        if self.commit_group_ticket is not None:
            w.u64(self.commit_group_ticket)
        w.write(self.extra)
        return w.getvalue()


def _check_chain(chain: tuple[tuple[str, int | None], ...]) -> None:
    """Each optional field needs the ones before it: the layout has no gaps."""
    missing = None
    for name, value in chain:
        if value is None:
            missing = missing or name
        elif missing is not None:
            raise EncodeError(f"{name} is set but the earlier field {missing} is not")


def _read_commit_info(r: ByteReader, values: dict[str, int | None]) -> None:
    """The fields after the logical clock: timestamps, length, versions, ticket."""
    imm = r.uint(7, "immediate_commit_timestamp")
    if imm & _TS_MARK:
        imm &= ~_TS_MARK
        values["original_commit_timestamp"] = r.uint(7, "original_commit_timestamp")
    else:
        values["original_commit_timestamp"] = imm
    values["immediate_commit_timestamp"] = imm
    if not r.remaining:
        return
    values["transaction_length"] = r.packed_length("transaction_length")
    if r.remaining < 4:
        return
    version = r.u32("immediate_server_version")
    if version & _VERSION_MARK:
        version &= ~_VERSION_MARK
        values["original_server_version"] = r.u32("original_server_version")
    else:
        values["original_server_version"] = version
    values["immediate_server_version"] = version
    if r.remaining >= 8:
        values["commit_group_ticket"] = r.u64("commit_group_ticket")


@register(EventType.ANONYMOUS_GTID)
@frozen_dataclass
class AnonymousGtidEvent(GtidEvent):
    """Starts a transaction that has no GTID (gtid_mode OFF): same layout, UUID and GNO zero."""


# -- GTID_TAGGED --------------------------------------------------------------

# Field ids of the tagged GTID message, in the order they are written.
_F_FLAGS, _F_UUID, _F_GNO, _F_TAG = 0, 1, 2, 3
_F_LAST_COMMITTED, _F_SEQUENCE_NUMBER = 4, 5
_F_IMM_TS, _F_ORIG_TS, _F_TRX_LENGTH = 6, 7, 8
_F_IMM_VERSION, _F_ORIG_VERSION, _F_TICKET = 9, 10, 11

_OPTIONAL_INTS = {
    _F_LAST_COMMITTED: ("last_committed", True),
    _F_SEQUENCE_NUMBER: ("sequence_number", True),
    _F_IMM_TS: ("immediate_commit_timestamp", False),
    _F_ORIG_TS: ("original_commit_timestamp", False),
    _F_TRX_LENGTH: ("transaction_length", False),
    _F_IMM_VERSION: ("immediate_server_version", False),
    _F_ORIG_VERSION: ("original_server_version", False),
    _F_TICKET: ("commit_group_ticket", False),
}
"""field id → (attribute, signed)."""


@register(EventType.GTID_TAGGED)
@frozen_dataclass
class TaggedGtidEvent(Event, _TransactionStart):
    """Starts a transaction with a tagged GTID (``uuid:tag:gno``, MySQL 8.3+).

    The body is one serialization-library message: a format version, the
    message size and the last non-ignorable field id (all variable-length
    integers), then ``field id, value`` pairs. Fields absent from the message
    are ``None``; an absent original timestamp or server version equals the
    immediate one. ``unknown`` keeps fields this library does not know (from
    a newer server), ``extra`` bytes after the message.
    """

    transaction_role: ClassVar[TransactionRole] = TransactionRole.GTID

    flags: int
    uuid: UUID
    gno: int
    tag: str
    last_committed: int | None = None
    sequence_number: int | None = None
    immediate_commit_timestamp: int | None = None
    original_commit_timestamp: int | None = None
    transaction_length: int | None = None
    immediate_server_version: int | None = None
    original_server_version: int | None = None
    commit_group_ticket: int | None = None
    format_version: int = 1
    last_non_ignorable_field: int = 0
    unknown: bytes = b""
    extra: bytes = b""

    @property
    def gtid(self) -> Gtid:
        return Gtid(self.uuid, self.gno, self.tag)

    @property
    def anonymous(self) -> bool:
        return False

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> TaggedGtidEvent:
        buf = bytes(body)
        try:
            return cls._decode(header, buf)
        except ValueError as err:
            raise DecodeError(f"malformed tagged GTID message: {err}") from None

    @classmethod
    def _decode(cls, header: EventHeader, buf: bytes) -> TaggedGtidEvent:
        version, pos = decode_varlen(buf, 0)
        size, pos = decode_varlen(buf, pos)
        last_non_ignorable, pos = decode_varlen(buf, pos)
        if size > len(buf) or size < pos:
            raise ValueError(f"message size {size} does not fit the {len(buf)}-byte body")
        values: dict[str, int | None] = {}
        flags = gno = None
        uuid: UUID | None = None
        tag: str | None = None
        previous_id = -1
        unknown = b""
        while pos < size:
            field_id, after_id = decode_varlen(buf, pos)
            if field_id <= previous_id or field_id > _F_TICKET:
                unknown = buf[pos:size]
                break
            previous_id = field_id
            pos = after_id
            if field_id == _F_FLAGS:
                flags, pos = decode_varlen(buf, pos)
            elif field_id == _F_UUID:
                raw = bytearray()
                for _ in range(16):
                    byte, pos = decode_varlen(buf, pos)
                    raw.append(byte)
                uuid = UUID(bytes=bytes(raw))
            elif field_id == _F_GNO:
                gno, pos = decode_varlen_signed(buf, pos)
            elif field_id == _F_TAG:
                length, pos = decode_varlen(buf, pos)
                if pos + length > size:
                    raise ValueError(f"tag of {length} bytes runs past the message")
                tag = buf[pos : pos + length].decode("ascii")
                if tag:
                    normalize_tag(tag)  # raises on characters a tag cannot hold
                pos += length
            else:
                name, signed = _OPTIONAL_INTS[field_id]
                reader = decode_varlen_signed if signed else decode_varlen
                values[name], pos = reader(buf, pos)
        if pos > size:
            raise ValueError("the last field runs past the message size")
        if flags is None or uuid is None or gno is None or tag is None:
            raise ValueError("flags, uuid, gno or tag field missing")
        if values.get("immediate_commit_timestamp") is not None:
            values.setdefault("original_commit_timestamp", values["immediate_commit_timestamp"])
        if values.get("immediate_server_version") is not None:
            values.setdefault("original_server_version", values["immediate_server_version"])
        return cls(
            header,
            flags,
            uuid,
            gno,
            tag,
            **values,
            format_version=version,
            last_non_ignorable_field=last_non_ignorable,
            unknown=unknown,
            extra=buf[size:],
        )

    def encode_body(self, fmt: FormatContext) -> bytes:
        fields = bytearray()
        fields += encode_varlen(_F_FLAGS) + encode_varlen(self.flags)
        fields += encode_varlen(_F_UUID) + b"".join(encode_varlen(b) for b in self.uuid.bytes)
        fields += encode_varlen(_F_GNO) + encode_varlen_signed(self.gno)
        tag = self.tag.encode("ascii")
        fields += encode_varlen(_F_TAG) + encode_varlen(len(tag)) + tag
        for field_id, (name, signed) in _OPTIONAL_INTS.items():
            value = getattr(self, name)
            if value is None:
                continue
            if field_id == _F_ORIG_TS and value == self.immediate_commit_timestamp:
                continue
            if field_id == _F_ORIG_VERSION and value == self.immediate_server_version:
                continue
            fields += encode_varlen(field_id)
            fields += encode_varlen_signed(value) if signed else encode_varlen(value)
        fields += self.unknown
        head = encode_varlen(self.format_version)
        tail = encode_varlen(self.last_non_ignorable_field) + fields
        size = len(head) + len(tail)
        while (total := len(head) + len(encode_varlen(size)) + len(tail)) != size:
            size = total
        return head + encode_varlen(size) + tail + self.extra


# -- PREVIOUS_GTIDS -----------------------------------------------------------


@register(EventType.PREVIOUS_GTIDS)
@frozen_dataclass
class PreviousGtidsEvent(Event):
    """Starts every binlog of a 5.6+ server: the GTIDs of all earlier binlogs.

    ``tagged_format`` says the set is written in the tagged format of 8.3+.
    ``encoded`` keeps the set's bytes as read only when they differ from the
    canonical encoding of ``gtids`` (unmerged or unsorted intervals).
    """

    gtids: GtidSet
    tagged_format: bool = False
    encoded: bytes | None = field(default=None, repr=False)

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> PreviousGtidsEvent:
        raw = bytes(body)
        try:
            gtids, tagged, _ = GtidSet.decode_prefix(raw)
        except ValueError as err:
            raise DecodeError(f"malformed GTID set: {err}") from None
        canonical = gtids.encode(tagged)
        return cls(header, gtids, tagged, None if canonical == raw else raw)

    def encode_body(self, fmt: FormatContext) -> bytes:
        if self.encoded is not None:
            return self.encoded
        return self.gtids.encode(self.tagged_format)
