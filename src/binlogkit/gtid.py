"""Global transaction identifiers of MySQL and MariaDB, as immutable values.

MySQL (5.6+): a GTID is ``uuid:gno``, or ``uuid:tag:gno`` with the tags of
MySQL 8.3+. A :class:`GtidSet` holds closed GNO intervals per (uuid, tag) and
reads and writes the server's text form (what ``@@gtid_executed`` prints) and
the binary form of PREVIOUS_GTIDS events and COM_BINLOG_DUMP_GTID, both the
untagged format and the tagged one of 8.3+.

MariaDB (10.0+): a GTID is ``domain-server-seq``; a :class:`MariaGtidList` is
an ordered list of them, the text form of ``@@gtid_binlog_pos``,
``@@gtid_slave_pos`` and GTID_LIST events (``0-1-100,1-2-5``).

Also here: the variable-length integers of MySQL's serialization library,
which the tagged formats use.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from uuid import UUID

from binlogkit.binlog.frozen import frozen_dataclass

__all__ = [
    "GNO_MAX",
    "TAG_MAX_LENGTH",
    "Gtid",
    "GtidSet",
    "MariaGtid",
    "MariaGtidList",
    "decode_varlen",
    "decode_varlen_signed",
    "encode_varlen",
    "encode_varlen_signed",
    "normalize_tag",
    "parse_uuid",
]

GNO_MAX = (1 << 63) - 2
"""The largest GNO a server hands out (GNO_END - 1, with GNO_END = 2**63 - 1)."""

TAG_MAX_LENGTH = 32

_U64 = struct.Struct("<Q")
_I64 = struct.Struct("<q")
_TAG = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_INTERVAL = re.compile(r"(\d+)(?:\s*-\s*(\d+))?\Z")
_MARIA = re.compile(r"(\d+)-(\d+)-(\d+)\Z")

Tsid = tuple[UUID, str]
"""A transaction source: a server UUID and a tag ("" when untagged)."""

Interval = tuple[int, int]
"""A closed GNO interval ``(first, last)``."""


# -- MySQL serialization-library variable-length integers ------------------


def encode_varlen(value: int) -> bytes:
    """An unsigned integer (< 2**64) in 1-9 bytes: the count of low one-bits + 1 is the length."""
    if not 0 <= value < 1 << 64:
        raise ValueError(f"{value} is not an unsigned 64-bit integer")
    size = ((value.bit_length() * 575) >> 12) + 1
    if size == 9:
        return b"\xff" + _U64.pack(value)
    return ((value << size) | ((1 << (size - 1)) - 1)).to_bytes(size, "little")


def decode_varlen(buf: bytes | memoryview, pos: int = 0) -> tuple[int, int]:
    """Read an unsigned variable-length integer at ``buf[pos]``; returns (value, next pos)."""
    if pos >= len(buf):
        raise ValueError(f"variable-length integer: no byte at offset {pos}")
    first = buf[pos]
    size = 9 if first == 0xFF else ((first ^ 0xFF) & -(first ^ 0xFF)).bit_length()
    end = pos + size
    if end > len(buf):
        raise ValueError(f"variable-length integer at offset {pos} needs {size} bytes")
    if size == 9:
        return int(_U64.unpack_from(buf, pos + 1)[0]), end
    return int.from_bytes(buf[pos:end], "little") >> size, end


def encode_varlen_signed(value: int) -> bytes:
    """A signed 64-bit integer: the sign in the low bit, the magnitude above it."""
    if not -(1 << 63) <= value < 1 << 63:
        raise ValueError(f"{value} is not a signed 64-bit integer")
    return encode_varlen(value << 1 if value >= 0 else ((-(value + 1)) << 1) | 1)


def decode_varlen_signed(buf: bytes | memoryview, pos: int = 0) -> tuple[int, int]:
    raw, end = decode_varlen(buf, pos)
    return (~(raw >> 1) if raw & 1 else raw >> 1), end


# -- MySQL ---------------------------------------------------------------------


def parse_uuid(text: str) -> UUID:
    """A server UUID in MySQL's accepted forms: dashed, 32 hex digits, or in braces."""
    try:
        return UUID(text.strip())
    except ValueError:
        raise ValueError(f"invalid UUID {text!r}") from None


def normalize_tag(text: str) -> str:
    """A GTID tag as the server stores it: trimmed, lower-case, checked.

    A tag starts with a letter or ``_``, goes on with letters, digits and
    ``_``, and has at most 32 characters.
    """
    tag = text.strip()
    if not _TAG.match(tag) or len(tag) > TAG_MAX_LENGTH or not tag.isascii():
        raise ValueError(f"invalid GTID tag {text!r}")
    return tag.lower()


def _check_gno(gno: int) -> int:
    if not 1 <= gno <= GNO_MAX:
        raise ValueError(f"GNO {gno} is out of range 1..{GNO_MAX}")
    return gno


@frozen_dataclass
class Gtid:
    """One MySQL GTID: ``uuid:gno`` or, tagged (8.3+), ``uuid:tag:gno``."""

    uuid: UUID
    gno: int
    tag: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.uuid, UUID):
            raise TypeError(f"uuid must be a uuid.UUID, not {type(self.uuid).__name__}")
        _check_gno(self.gno)
        if self.tag:
            object.__setattr__(self, "tag", normalize_tag(self.tag))

    @property
    def tsid(self) -> Tsid:
        return (self.uuid, self.tag)

    @classmethod
    def parse(cls, text: str) -> Gtid:
        parts = text.split(":")
        if len(parts) not in (2, 3):
            raise ValueError(f"invalid GTID {text!r}: expected uuid:gno or uuid:tag:gno")
        gno = parts[-1].strip()
        if not gno.isdigit():
            raise ValueError(f"invalid GTID {text!r}: GNO {gno!r} is not a number")
        tag = normalize_tag(parts[1]) if len(parts) == 3 else ""
        return cls(parse_uuid(parts[0]), int(gno), tag)

    def __str__(self) -> str:
        if self.tag:
            return f"{self.uuid}:{self.tag}:{self.gno}"
        return f"{self.uuid}:{self.gno}"


def _merge(intervals: Iterable[Interval]) -> tuple[Interval, ...]:
    """Sorted, disjoint, non-adjacent closed intervals covering the same GNOs."""
    out: list[list[int]] = []
    for first, last in sorted(intervals):
        if out and first <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], last)
        else:
            out.append([first, last])
    return tuple((a, b) for a, b in out)


def _subtract(left: tuple[Interval, ...], right: tuple[Interval, ...]) -> tuple[Interval, ...]:
    out: list[Interval] = []
    j = 0
    for first, last in left:
        start = first
        while j < len(right) and right[j][1] < start:
            j += 1
        k = j
        while k < len(right) and right[k][0] <= last:
            if right[k][0] > start:
                out.append((start, right[k][0] - 1))
            start = max(start, right[k][1] + 1)
            k += 1
        if start <= last:
            out.append((start, last))
    return tuple(out)


def _intersect(left: tuple[Interval, ...], right: tuple[Interval, ...]) -> tuple[Interval, ...]:
    out: list[Interval] = []
    i = j = 0
    while i < len(left) and j < len(right):
        first = max(left[i][0], right[j][0])
        last = min(left[i][1], right[j][1])
        if first <= last:
            out.append((first, last))
        if left[i][1] < right[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def _covers(intervals: tuple[Interval, ...], gno: int) -> bool:
    lo, hi = 0, len(intervals)
    while lo < hi:
        mid = (lo + hi) // 2
        if intervals[mid][1] < gno:
            lo = mid + 1
        else:
            hi = mid
    return lo < len(intervals) and intervals[lo][0] <= gno


class GtidSet:
    """An immutable set of MySQL GTIDs: closed GNO intervals per (uuid, tag).

    ``str()`` gives the server's text form, sources sorted by UUID and then
    tag, untagged intervals first (``uuid:1-5:7:tag:1-3,\\nuuid2:1``); parse
    accepts it and any spacing. Set operations return new sets.
    """

    __slots__ = ("_items",)

    _items: tuple[tuple[Tsid, tuple[Interval, ...]], ...]

    def __init__(self, intervals: Mapping[Tsid, Iterable[Interval]] | None = None) -> None:
        """``intervals``: (uuid, tag) → closed (first, last) GNO intervals, in any order."""
        items = []
        for (uuid, tag), spans in (intervals or {}).items():
            if not isinstance(uuid, UUID):
                raise TypeError(f"a GTID source is a uuid.UUID, not {type(uuid).__name__}")
            tsid = (uuid, normalize_tag(tag) if tag else "")
            checked = []
            for first, last in spans:
                _check_gno(first)
                _check_gno(last)
                if last < first:
                    raise ValueError(f"GNO interval {first}-{last} ends before it starts")
                checked.append((first, last))
            merged = _merge(checked)
            if merged:
                items.append((tsid, merged))
        object.__setattr__(self, "_items", self._sorted(items))

    @staticmethod
    def _sorted(
        items: Iterable[tuple[Tsid, tuple[Interval, ...]]],
    ) -> tuple[tuple[Tsid, tuple[Interval, ...]], ...]:
        """Entries of one source merged, sources in the server's order (UUID bytes, tag)."""
        merged: dict[Tsid, tuple[Interval, ...]] = {}
        for tsid, spans in items:
            merged[tsid] = _merge(merged.get(tsid, ()) + spans) if tsid in merged else spans
        return tuple(sorted(merged.items(), key=lambda item: (item[0][0].bytes, item[0][1])))

    @classmethod
    def _of(cls, items: Iterable[tuple[Tsid, tuple[Interval, ...]]]) -> GtidSet:
        """A set from already merged interval tuples (no checks)."""
        new = cls.__new__(cls)
        object.__setattr__(new, "_items", cls._sorted((t, s) for t, s in items if s))
        return new

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("GtidSet is immutable")

    def __reduce__(self) -> tuple[object, ...]:
        return (GtidSet._of, (self._items,))

    # -- construction ----------------------------------------------------

    @classmethod
    def of(cls, *gtids: Gtid) -> GtidSet:
        spans: dict[Tsid, list[Interval]] = {}
        for gtid in gtids:
            spans.setdefault(gtid.tsid, []).append((gtid.gno, gtid.gno))
        return cls(spans)

    @classmethod
    def parse(cls, text: str) -> GtidSet:
        """Read the text form: ``uuid[:interval|:tag]...`` items separated by commas."""
        spans: dict[Tsid, list[Interval]] = {}
        for item in text.split(","):
            if not item.strip():
                if text.strip():
                    raise ValueError(f"invalid GTID set {text!r}: empty item")
                continue
            parts = item.split(":")
            uuid = parse_uuid(parts[0])
            tag = ""
            spans.setdefault((uuid, tag), [])
            for part in parts[1:]:
                part = part.strip()
                m = _INTERVAL.match(part)
                if m:
                    first = int(m[1])
                    last = int(m[2]) if m[2] is not None else first
                    spans.setdefault((uuid, tag), []).append((first, last))
                else:
                    try:
                        tag = normalize_tag(part)
                    except ValueError:
                        raise ValueError(
                            f"invalid GTID set {text!r}: {part!r} is neither an interval nor a tag"
                        ) from None
        return cls(spans)

    # -- reading ---------------------------------------------------------

    def __bool__(self) -> bool:
        return bool(self._items)

    def is_empty(self) -> bool:
        return not self._items

    def count(self) -> int:
        """How many GTIDs the set holds."""
        return sum(last - first + 1 for _, spans in self._items for first, last in spans)

    def tsids(self) -> tuple[Tsid, ...]:
        """The (uuid, tag) sources present, in the server's order."""
        return tuple(tsid for tsid, _ in self._items)

    def intervals_of(self, uuid: UUID, tag: str = "") -> tuple[Interval, ...]:
        """The closed GNO intervals of one source."""
        tsid = (uuid, normalize_tag(tag) if tag else "")
        for key, spans in self._items:
            if key == tsid:
                return spans
        return ()

    def intervals(self) -> Iterator[tuple[UUID, str, int, int]]:
        """Every interval as (uuid, tag, first, last), in the server's order."""
        for (uuid, tag), spans in self._items:
            for first, last in spans:
                yield uuid, tag, first, last

    def __contains__(self, gtid: object) -> bool:
        if not isinstance(gtid, Gtid):
            return False
        return _covers(self.intervals_of(gtid.uuid, gtid.tag), gtid.gno)

    def issubset(self, other: GtidSet) -> bool:
        return not (self - other)

    def __le__(self, other: GtidSet) -> bool:
        return self.issubset(other)

    def __ge__(self, other: GtidSet) -> bool:
        return other.issubset(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GtidSet) and self._items == other._items

    def __hash__(self) -> int:
        return hash(self._items)

    # -- operations ------------------------------------------------------

    def add(self, gtid: Gtid) -> GtidSet:
        """This set with one more GTID."""
        return self | GtidSet.of(gtid)

    def union(self, *others: GtidSet) -> GtidSet:
        spans: dict[Tsid, tuple[Interval, ...]] = dict(self._items)
        for other in others:
            for tsid, more in other._items:
                spans[tsid] = _merge(spans.get(tsid, ()) + more)
        return GtidSet._of(spans.items())

    def difference(self, other: GtidSet) -> GtidSet:
        theirs = dict(other._items)
        return GtidSet._of((t, _subtract(s, theirs.get(t, ()))) for t, s in self._items)

    def intersection(self, other: GtidSet) -> GtidSet:
        theirs = dict(other._items)
        return GtidSet._of((t, _intersect(s, theirs[t])) for t, s in self._items if t in theirs)

    def __or__(self, other: GtidSet) -> GtidSet:
        return self.union(other)

    def __sub__(self, other: GtidSet) -> GtidSet:
        return self.difference(other)

    def __and__(self, other: GtidSet) -> GtidSet:
        return self.intersection(other)

    # -- text ------------------------------------------------------------

    def to_string(self, separator: str = ",\n") -> str:
        """The server's text form; ``separator`` goes between UUIDs (the server uses ",\\n")."""
        out: list[str] = []
        previous: UUID | None = None
        for (uuid, tag), spans in self._items:
            if uuid != previous:
                if previous is not None:
                    out.append(separator)
                out.append(str(uuid))
                previous = uuid
            if tag:
                out.append(f":{tag}")
            for first, last in spans:
                out.append(f":{first}-{last}" if last > first else f":{first}")
        return "".join(out)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return f"GtidSet({self.to_string(',')!r})"

    # -- binary ----------------------------------------------------------

    def is_tagged(self) -> bool:
        return any(tag for (_, tag), _ in self._items)

    def encode(self, tagged: bool | None = None) -> bytes:
        """The binary form of PREVIOUS_GTIDS and COM_BINLOG_DUMP_GTID.

        ``tagged``: write the tagged format of MySQL 8.3+; by default only when
        the set holds a tagged GTID, as the server does. Intervals are written
        with exclusive ends.
        """
        if tagged is None:
            tagged = self.is_tagged()
        elif not tagged and self.is_tagged():
            raise ValueError("a set with tagged GTIDs needs the tagged format")
        count = len(self._items)
        out = bytearray(_U64.pack((1 << 56) | (count << 8) | 1 if tagged else count))
        for (uuid, tag), spans in self._items:
            out += uuid.bytes
            if tagged:
                raw = tag.encode("ascii")
                out += encode_varlen(len(raw)) + raw
            out += _U64.pack(len(spans))
            for first, last in spans:
                out += _I64.pack(first) + _I64.pack(last + 1)
        return bytes(out)

    @classmethod
    def decode(cls, data: bytes | memoryview) -> GtidSet:
        """Read a whole binary GTID set (see :meth:`encode`)."""
        gtids, _, end = cls.decode_prefix(data)
        if end != len(data):
            raise ValueError(f"GTID set encoding has {len(data) - end} bytes after its end")
        return gtids

    @classmethod
    def decode_prefix(cls, buf: bytes | memoryview, pos: int = 0) -> tuple[GtidSet, bool, int]:
        """Read a binary GTID set at ``buf[pos:]``: (set, tagged format, end position)."""
        if len(buf) - pos < 8:
            raise ValueError("GTID set encoding is shorter than its 8-byte count")
        word = _U64.unpack_from(buf, pos)[0]
        fmt = word >> 56
        if fmt == 0:
            count, tagged = word, False
        elif fmt == 1:
            count, tagged = (word >> 8) & ((1 << 48) - 1), True
        else:
            raise ValueError(f"unknown GTID set format {fmt}")
        pos += 8
        spans: dict[Tsid, list[Interval]] = {}
        for _ in range(count):
            if len(buf) - pos < 16:
                raise ValueError("GTID set encoding ends inside a UUID")
            uuid = UUID(bytes=bytes(buf[pos : pos + 16]))
            pos += 16
            tag = ""
            if tagged:
                length, pos = decode_varlen(buf, pos)
                if length > TAG_MAX_LENGTH or pos + length > len(buf):
                    raise ValueError(f"GTID set encoding has a bad tag length {length}")
                raw_tag = bytes(buf[pos : pos + length])
                pos += length
                tag = normalize_tag(raw_tag.decode("ascii")) if raw_tag else ""
            if len(buf) - pos < 8:
                raise ValueError("GTID set encoding ends inside an interval count")
            n = _U64.unpack_from(buf, pos)[0]
            pos += 8
            if len(buf) - pos < 16 * n:
                raise ValueError(f"GTID set encoding ends inside its {n} intervals")
            previous = 0
            for _ in range(n):
                start, end = struct.unpack_from("<qq", buf, pos)
                pos += 16
                if start <= previous or end <= start:
                    raise ValueError(f"GTID set encoding has a bad interval [{start}, {end})")
                previous = end
                spans.setdefault((uuid, tag), []).append((start, end - 1))
        return cls(spans), tagged, pos


# -- MariaDB -----------------------------------------------------------------


@dataclass(frozen=True, slots=True, order=True)
class MariaGtid:
    """One MariaDB GTID: ``domain-server-seq``."""

    domain_id: int
    server_id: int
    seq_no: int

    def __post_init__(self) -> None:
        if not (0 <= self.domain_id <= 0xFFFFFFFF and 0 <= self.server_id <= 0xFFFFFFFF):
            raise ValueError(f"domain and server ids must be 32-bit unsigned: {self}")
        if not 0 <= self.seq_no <= 0xFFFFFFFFFFFFFFFF:
            raise ValueError(f"sequence number must be 64-bit unsigned: {self}")

    @classmethod
    def parse(cls, text: str) -> MariaGtid:
        m = _MARIA.match(text.strip())
        if not m:
            raise ValueError(f"invalid MariaDB GTID {text!r}: expected domain-server-seq")
        return cls(int(m[1]), int(m[2]), int(m[3]))

    def __str__(self) -> str:
        return f"{self.domain_id}-{self.server_id}-{self.seq_no}"


@frozen_dataclass
class MariaGtidList:
    """An ordered list of MariaDB GTIDs: a GTID position or a binlog state.

    A position (``@@gtid_slave_pos``) holds one GTID per domain; a binlog
    state (GTID_LIST events, ``@@gtid_binlog_state``) one per (domain,
    server), the most recent of a domain listed last.
    """

    gtids: tuple[MariaGtid, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "gtids", tuple(self.gtids))
        seen = set()
        for gtid in self.gtids:
            key = (gtid.domain_id, gtid.server_id)
            if key in seen:
                raise ValueError(f"GTID list has two entries for domain-server {key}")
            seen.add(key)

    @classmethod
    def parse(cls, text: str) -> MariaGtidList:
        """Read ``0-1-100,1-2-5`` (spaces and newlines allowed; "" is empty)."""
        if not text.strip():
            return cls()
        return cls(tuple(MariaGtid.parse(item) for item in text.split(",")))

    def __str__(self) -> str:
        return ",".join(map(str, self.gtids))

    def __iter__(self) -> Iterator[MariaGtid]:
        return iter(self.gtids)

    def __len__(self) -> int:
        return len(self.gtids)

    def __contains__(self, gtid: object) -> bool:
        return gtid in self.gtids

    @property
    def domains(self) -> tuple[int, ...]:
        """The domain ids, in order of first appearance."""
        return tuple(dict.fromkeys(g.domain_id for g in self.gtids))

    def get(self, domain_id: int) -> MariaGtid | None:
        """The most recent GTID of a domain (its last entry), or None."""
        found = None
        for gtid in self.gtids:
            if gtid.domain_id == domain_id:
                found = gtid
        return found

    def position(self) -> MariaGtidList:
        """One GTID per domain: the most recent of each."""
        return MariaGtidList(tuple(g for d in self.domains if (g := self.get(d)) is not None))

    def includes(self, gtid: MariaGtid) -> bool:
        """Whether a replica at this position has applied ``gtid`` (same domain, seq_no <=)."""
        current = self.get(gtid.domain_id)
        return current is not None and gtid.seq_no <= current.seq_no

    def add(self, gtid: MariaGtid) -> MariaGtidList:
        """The binlog state after ``gtid``: its (domain, server) entry replaced or appended."""
        rest = [
            g for g in self.gtids if (g.domain_id, g.server_id) != (gtid.domain_id, gtid.server_id)
        ]
        return MariaGtidList((*rest, gtid))

    def advance(self, gtid: MariaGtid) -> MariaGtidList:
        """The position after ``gtid``: it replaces every entry of its domain."""
        gtids = self.gtids
        domain = gtid.domain_id
        if len(gtids) == 1 and gtids[0].domain_id == domain:
            out: tuple[MariaGtid, ...] = (gtid,)  # the usual case: one domain
        else:
            kept: list[MariaGtid] = []
            placed = False
            for g in gtids:
                if g.domain_id != domain:
                    kept.append(g)
                elif not placed:
                    kept.append(gtid)
                    placed = True
            if not placed:
                kept.append(gtid)
            out = tuple(kept)
        # The kept entries were distinct and the domain now has one: no need of __post_init__.
        position = _new_gtid_list(MariaGtidList)
        _set_gtids(position, out)
        return position


# Building a MariaGtidList whose entries are known distinct, without __init__'s checks.
_new_gtid_list = object.__new__
_set_gtids = vars(MariaGtidList)["gtids"].__set__
