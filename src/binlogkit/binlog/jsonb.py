"""MySQL's binary JSON format: decode to Python values and encode back, byte for byte.

The format (MySQL ``sql-common/json_binary.cc``) stores a value as a type byte
and its data:

====  ==============  ===========================================================
0x00  small object    count, size (u16 each), key entries, value entries, keys, values
0x01  large object    the same with u32 counts, sizes and offsets
0x02  small array     count, size, value entries, values
0x03  large array     the same with u32 fields
0x04  literal         one byte: 0x00 null, 0x01 true, 0x02 false
0x05  int16           0x06 uint16, 0x07 int32, 0x08 uint32, 0x09 int64, 0x0a uint64
0x0b  double          IEEE 754, little-endian
0x0c  string          variable-length size, then UTF-8 bytes
0x0f  opaque          MySQL column type byte, variable-length size, then the data
====  ==============  ===========================================================

A key entry is an offset and a u16 length; a value entry is a type byte and an
offset, or the value itself when it fits (literals, int16 and uint16 always,
int32 and uint32 in large containers). Offsets count from the start of the
container, just after its type byte. A variable-length size takes 7 bits a
byte, low bits first, the high bit saying another byte follows (at most 5).

Python values:

- object → ``dict`` (keys in stored order), array → ``list``, string → ``str``,
  null/true/false → ``None``/``True``/``False``, double → ``float``;
- int16/int32/int64 → ``int``; uint16/uint32/uint64 → :class:`JsonUInt`, an
  ``int`` subclass (MySQL tells signed and unsigned integers apart, e.g. in
  ``JSON_TYPE``); a plain ``int`` of 2**63 or more encodes as uint64, as
  MySQL's JSON parser does;
- opaque → :class:`JsonOpaque` (column type and raw data), whose helpers give
  a ``Decimal``, ``date``, ``datetime`` or ``timedelta`` for DECIMAL, DATE,
  DATETIME/TIMESTAMP and TIME values, and ``to_text()`` MySQL's text form.

Byte-exact re-encoding: :func:`encode_jsonb` writes what MySQL's serializer
writes: keys sorted by byte length then bytes, values in key order packed
after the keys, each container small when it fits in 64 KiB, else large, and
integers in the narrowest type. Every document MySQL serialized decodes to
plain ``dict``/``list`` values and re-encodes to the same bytes. Documents that
were changed in place by partial updates (``JSON_SET``/``JSON_REPLACE``/
``JSON_REMOVE`` on a stored column) can hold free space, stale bytes and values
out of order; such a container decodes to a :class:`JsonObject` or
:class:`JsonArray` (``dict``/``list`` subclasses) whose ``layout`` keeps the
stored bytes. Encoding one reuses those bytes while its keys and scalar values
are unchanged and nested containers re-encode to their old lengths; otherwise
it is written the canonical way, so the output always stands for the value.

An empty binary value, which MySQL reads as JSON null (``parse_binary``; it
stores one when a NULL goes into a NOT NULL JSON column outside strict mode),
decodes to :data:`EMPTY_JSON`, a falsy marker that encodes back to no bytes;
``None`` encodes as the null literal ``04 00``.
"""

from __future__ import annotations

import base64
import struct
from datetime import date, datetime, timedelta
from decimal import Decimal
from enum import IntEnum
from typing import Any, Final

from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.rows.types.decimal import decode_decimal, encode_decimal
from binlogkit.binlog.rows.types.temporal import (
    pack_datetime,
    pack_time,
    unpack_datetime,
    unpack_time,
)
from binlogkit.binlog.rows.types.values import InvalidDateTime
from binlogkit.errors import DecodeError, EncodeError

__all__ = [
    "EMPTY_JSON",
    "MAX_DEPTH",
    "JsonArray",
    "JsonEmpty",
    "JsonLayout",
    "JsonObject",
    "JsonOpaque",
    "JsonUInt",
    "JsonbType",
    "decode_jsonb",
    "encode_jsonb",
]


class JsonbType(IntEnum):
    """Type bytes of MySQL's binary JSON."""

    SMALL_OBJECT = 0x00
    LARGE_OBJECT = 0x01
    SMALL_ARRAY = 0x02
    LARGE_ARRAY = 0x03
    LITERAL = 0x04
    INT16 = 0x05
    UINT16 = 0x06
    INT32 = 0x07
    UINT32 = 0x08
    INT64 = 0x09
    UINT64 = 0x0A
    DOUBLE = 0x0B
    STRING = 0x0C
    OPAQUE = 0x0F


MAX_DEPTH: Final = 100
"""Deepest container nesting MySQL writes (JSON_DOCUMENT_MAX_DEPTH)."""

_NULL, _TRUE, _FALSE = 0x00, 0x01, 0x02
_SMALL_MAX = 0xFFFF
_LARGE_MAX = 0xFFFFFFFF

_U16 = struct.Struct("<H").unpack_from
_I16 = struct.Struct("<h").unpack_from
_U32 = struct.Struct("<I").unpack_from
_I32 = struct.Struct("<i").unpack_from
_U64 = struct.Struct("<Q").unpack_from
_I64 = struct.Struct("<q").unpack_from
_F64 = struct.Struct("<d")
_PAIR16 = struct.Struct("<HH")
_PAIR32 = struct.Struct("<II")
_KEY32 = struct.Struct("<IH")
_OFFSET16 = struct.Struct("<H")
_OFFSET32 = struct.Struct("<I")
_ENTRY16 = struct.Struct("<BH")
_ENTRY32 = struct.Struct("<BI")
_INLINE_SMALL = frozenset({0x04, 0x05, 0x06})
_INLINE_LARGE = frozenset({0x04, 0x05, 0x06, 0x07, 0x08})


class JsonEmpty:
    """The type of :data:`EMPTY_JSON`: an empty binary JSON value, which MySQL reads as null."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JsonEmpty)

    def __hash__(self) -> int:
        return hash(JsonEmpty)

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "EMPTY_JSON"

    def __reduce__(self) -> str:
        return "EMPTY_JSON"


EMPTY_JSON: Final = JsonEmpty()
"""An empty JSON column value (reads as JSON null); encodes to no bytes."""


class JsonUInt(int):
    """An unsigned JSON integer (MySQL uint16/uint32/uint64); equal to the same ``int``."""

    __slots__ = ()

    def __new__(cls, value: int = 0) -> JsonUInt:
        if not 0 <= value <= 0xFFFF_FFFF_FFFF_FFFF:
            raise ValueError(f"unsigned JSON integer out of range: {value}")
        return super().__new__(cls, value)

    def __repr__(self) -> str:
        return f"JsonUInt({int(self)})"


@frozen_dataclass
class JsonLayout:
    """How a container that MySQL left non-canonical is stored, to re-encode it exactly.

    ``raw`` is the container's bytes after its type byte. For each element,
    ``spans`` holds ``(offset, length)`` of a nested container's bytes within
    ``raw``, or None for a scalar, whose decoded value ``scalars`` keeps.
    ``keys`` is an object's keys in stored order (empty for arrays).
    """

    large: bool
    raw: bytes
    keys: tuple[str, ...]
    spans: tuple[tuple[int, int] | None, ...]
    scalars: tuple[Any, ...]


class JsonObject(dict[str, Any]):
    """A JSON object stored in a non-canonical layout (see :class:`JsonLayout`)."""

    __slots__ = ("layout",)

    def __init__(self, items: Any = (), layout: JsonLayout | None = None) -> None:
        super().__init__(items)
        self.layout = layout


class JsonArray(list[Any]):
    """A JSON array stored in a non-canonical layout (see :class:`JsonLayout`)."""

    __slots__ = ("layout",)

    def __init__(self, items: Any = (), layout: JsonLayout | None = None) -> None:
        super().__init__(items)
        self.layout = layout


# --- opaque values ------------------------------------------------------------

_TEMPORAL = frozenset({ColumnType.DATE, ColumnType.TIME, ColumnType.DATETIME, ColumnType.TIMESTAMP})
_MICROSECONDS = 24
"""A packed DATETIME is its :func:`pack_datetime` integer part, then this many bits of
microseconds."""


@frozen_dataclass
class JsonOpaque:
    """An opaque JSON value: the MySQL column type it came from and its raw data.

    MySQL stores DECIMAL as precision, scale and the binary DECIMAL; DATE, TIME,
    DATETIME and TIMESTAMP as a packed little-endian int64 (TIMESTAMP as the
    local date and time, no zone); other types (BLOB, VARCHAR, BIT, GEOMETRY,
    YEAR ...) as their raw bytes.
    """

    mysql_type: int
    data: bytes

    def __post_init__(self) -> None:
        if not 0 <= self.mysql_type <= 0xFF:
            raise ValueError(f"opaque JSON type must be a byte, not {self.mysql_type}")
        if not isinstance(self.data, bytes):
            object.__setattr__(self, "data", bytes(self.data))

    @property
    def value(self) -> Decimal | date | datetime | timedelta | bytes:
        """The natural Python value: Decimal, date, datetime, timedelta, else the raw bytes.

        Raises :class:`DecodeError` for data that does not fit the type, and
        ValueError for dates Python cannot hold (zero dates, year 0).
        """
        kind = self.mysql_type
        if kind == ColumnType.NEWDECIMAL:
            return self.as_decimal()
        if kind == ColumnType.DATE:
            return self.as_date()
        if kind in (ColumnType.DATETIME, ColumnType.TIMESTAMP):
            return self.as_datetime()
        if kind == ColumnType.TIME:
            return self.as_time()
        return self.data

    def as_decimal(self) -> Decimal:
        self._expect(ColumnType.NEWDECIMAL)
        if len(self.data) < 2:
            raise DecodeError("JSON DECIMAL needs precision and scale bytes")
        return decode_decimal(self.data[2:], self.data[0], self.data[1])

    def as_date(self) -> date:
        self._expect(ColumnType.DATE)
        _, value = self._datetime()
        return date(value.year, value.month, value.day)

    def as_datetime(self) -> datetime:
        """The DATETIME or TIMESTAMP value, naive (TIMESTAMP is the writer's local time)."""
        self._expect(ColumnType.DATETIME, ColumnType.TIMESTAMP)
        negative, value = self._datetime()
        if negative:
            raise ValueError("negative JSON DATETIME")
        if isinstance(value, InvalidDateTime):
            raise ValueError(f"JSON DATETIME {value} is not a valid datetime")
        return value

    def as_time(self) -> timedelta:
        self._expect(ColumnType.TIME)
        negative, hours, minute, second, usec = unpack_time(self._packed())
        span = timedelta(hours=hours, minutes=minute, seconds=second, microseconds=usec)
        return -span if negative else span

    def to_text(self) -> str:
        """The value as MySQL prints it in JSON text (without quotes)."""
        kind = self.mysql_type
        if kind == ColumnType.NEWDECIMAL:
            return format(self.as_decimal(), "f")
        if kind == ColumnType.TIME:
            negative, hours, minute, second, usec = unpack_time(self._packed())
            sign = "-" if negative else ""
            return f"{sign}{hours:02d}:{minute:02d}:{second:02d}.{usec:06d}"
        if kind in _TEMPORAL:
            negative, v = self._datetime()
            text = f"{v.year:04d}-{v.month:02d}-{v.day:02d}"
            if kind != ColumnType.DATE:
                text += f" {v.hour:02d}:{v.minute:02d}:{v.second:02d}.{v.microsecond:06d}"
            return ("-" if negative else "") + text
        return f"base64:type{kind}:{base64.b64encode(self.data).decode('ascii')}"

    def _expect(self, *kinds: int) -> None:
        if self.mysql_type not in kinds:
            names = "/".join(ColumnType(k).name for k in kinds)
            raise ValueError(f"opaque JSON value of type {self.mysql_type} is not {names}")

    def _packed(self) -> int:
        if len(self.data) < 8:
            raise DecodeError(f"packed JSON temporal value needs 8 bytes, has {len(self.data)}")
        return int(_I64(self.data, 0)[0])

    def _datetime(self) -> tuple[bool, datetime | InvalidDateTime]:
        """Whether the packed DATETIME is negative, and the value of its absolute value."""
        packed = self._packed()
        whole = abs(packed)
        microsecond = whole & ((1 << _MICROSECONDS) - 1)
        return packed < 0, unpack_datetime(whole >> _MICROSECONDS, microsecond)

    @classmethod
    def from_decimal(
        cls, value: Decimal, precision: int | None = None, scale: int | None = None
    ) -> JsonOpaque:
        """A DECIMAL; by default the scale is the value's decimals and the precision fits it."""
        exponent = value.as_tuple().exponent
        if not isinstance(exponent, int):
            raise EncodeError(f"JSON DECIMAL cannot hold {value}")
        if scale is None:
            scale = max(0, -exponent)
        if precision is None:
            whole = format(abs(value), "f").partition(".")[0].lstrip("0")
            precision = max(len(whole), 1) + scale
        if not 0 <= scale <= precision <= 0xFF:
            raise EncodeError(f"bad DECIMAL precision {precision} and scale {scale}")
        data = bytes([precision, scale]) + encode_decimal(value, precision, scale)
        return cls(ColumnType.NEWDECIMAL, data)

    @classmethod
    def from_date(cls, value: date) -> JsonOpaque:
        packed = pack_datetime(value.year, value.month, value.day, 0, 0, 0)
        return cls(ColumnType.DATE, _pack(packed))

    @classmethod
    def from_datetime(cls, value: datetime, mysql_type: int = ColumnType.DATETIME) -> JsonOpaque:
        """A DATETIME (or TIMESTAMP with ``mysql_type``); any tzinfo is ignored."""
        packed = pack_datetime(
            value.year, value.month, value.day, value.hour, value.minute, value.second
        )
        return cls(mysql_type, _pack(packed, value.microsecond))

    @classmethod
    def from_time(cls, value: timedelta) -> JsonOpaque:
        usec_total = abs(value) // timedelta(microseconds=1)
        seconds, usec = divmod(usec_total, 1_000_000)
        hours, rest = divmod(seconds, 3600)
        if hours > 0x3FF:
            raise EncodeError(f"TIME out of range: {value}")
        packed = pack_time(value < timedelta(0), hours, rest // 60, rest % 60, usec)
        return cls(ColumnType.TIME, packed.to_bytes(8, "little", signed=True))


def _pack(packed: int, microsecond: int = 0) -> bytes:
    """The packed DATETIME of a :func:`pack_datetime` integer part, as JSON stores it."""
    return (packed << _MICROSECONDS | microsecond).to_bytes(8, "little", signed=True)


# --- decoding -----------------------------------------------------------------


def decode_jsonb(data: bytes | bytearray | memoryview) -> Any:
    """The Python value of one binary JSON document (see the module notes)."""
    buf = bytes(data)
    if not buf:
        return EMPTY_JSON
    value, stop, _ = _decode(buf, buf[0], 1, len(buf), 1)
    if stop != len(buf):
        raise DecodeError(
            f"binary JSON: {len(buf) - stop} stray bytes after the value, at offset {stop}"
        )
    return value


def _bad(message: str, pos: int) -> DecodeError:
    return DecodeError(f"binary JSON: {message} at offset {pos}")


def _need(pos: int, n: int, end: int, what: str) -> None:
    if pos + n > end:
        raise _bad(f"{what} needs {n} bytes, {max(end - pos, 0)} left", pos)


def _varlen(buf: bytes, pos: int, end: int, what: str) -> tuple[int, int, bool]:
    """A variable-length size: (size, next offset, written in the fewest bytes)."""
    size = 0
    for i in range(5):
        if pos + i >= end:
            raise _bad(f"{what} size is cut short", pos)
        byte = buf[pos + i]
        size |= (byte & 0x7F) << (7 * i)
        if not byte & 0x80:
            if size > _LARGE_MAX:
                raise _bad(f"{what} size {size} is over 4 GiB", pos)
            return size, pos + i + 1, i == 0 or byte != 0
    raise _bad(f"{what} size runs past 5 bytes", pos)


def _decode(buf: bytes, t: int, pos: int, end: int, depth: int) -> tuple[Any, int, bool]:
    """Decode a value of type ``t`` at ``pos``: (value, end offset, canonically written)."""
    if t == JsonbType.STRING:
        size, start, minimal = _varlen(buf, pos, end, "string")
        _need(start, size, end, "string")
        try:
            text = buf[start : start + size].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _bad(f"string is not UTF-8 ({exc.reason})", start + exc.start) from None
        return text, start + size, minimal
    if t <= JsonbType.LARGE_ARRAY:
        return _container(buf, pos, end, t <= JsonbType.LARGE_OBJECT, bool(t & 1), depth)
    if t == JsonbType.INT16:
        _need(pos, 2, end, "int16")
        return _I16(buf, pos)[0], pos + 2, True
    if t == JsonbType.LITERAL:
        _need(pos, 1, end, "literal")
        return _literal(buf[pos], pos), pos + 1, True
    if t == JsonbType.INT64:
        _need(pos, 8, end, "int64")
        value = _I64(buf, pos)[0]
        return value, pos + 8, not -0x8000_0000 <= value <= 0x7FFF_FFFF
    if t == JsonbType.DOUBLE:
        _need(pos, 8, end, "double")
        return _F64.unpack_from(buf, pos)[0], pos + 8, True
    if t == JsonbType.INT32:
        _need(pos, 4, end, "int32")
        value = _I32(buf, pos)[0]
        return value, pos + 4, not -0x8000 <= value <= 0x7FFF
    if t == JsonbType.UINT16:
        _need(pos, 2, end, "uint16")
        return JsonUInt(_U16(buf, pos)[0]), pos + 2, True
    if t == JsonbType.UINT32:
        _need(pos, 4, end, "uint32")
        value = _U32(buf, pos)[0]
        return JsonUInt(value), pos + 4, value > _SMALL_MAX
    if t == JsonbType.UINT64:
        _need(pos, 8, end, "uint64")
        value = _U64(buf, pos)[0]
        return JsonUInt(value), pos + 8, value > _LARGE_MAX
    if t == JsonbType.OPAQUE:
        _need(pos, 1, end, "opaque type")
        size, start, minimal = _varlen(buf, pos + 1, end, "opaque value")
        _need(start, size, end, "opaque value")
        return JsonOpaque(buf[pos], buf[start : start + size]), start + size, minimal
    raise _bad(f"unknown value type 0x{t:02x}", pos)


def _literal(code: int, pos: int) -> bool | None:
    if code == _NULL:
        return None
    if code == _TRUE:
        return True
    if code == _FALSE:
        return False
    raise _bad(f"unknown literal 0x{code:02x}", pos)


def _inlined(t: int, large: bool) -> bool:
    return JsonbType.LITERAL <= t <= JsonbType.UINT16 or (
        large and JsonbType.INT32 <= t <= JsonbType.UINT32
    )


def _inline_value(buf: bytes, t: int, pos: int, large: bool) -> tuple[Any, bool]:
    """A scalar stored in its value entry: (value, the entry is written canonically)."""
    if t == JsonbType.LITERAL:
        code = buf[pos]
        return _literal(code, pos), not any(buf[pos + 1 : pos + (4 if large else 2)])
    if t == JsonbType.INT16:
        value = _I16(buf, pos)[0]
        return value, not large or buf[pos + 2 : pos + 4] == (b"\xff\xff" if value < 0 else b"\0\0")
    if t == JsonbType.UINT16:
        return JsonUInt(_U16(buf, pos)[0]), not large or buf[pos + 2 : pos + 4] == b"\0\0"
    if t == JsonbType.INT32:
        value = _I32(buf, pos)[0]
        return value, not -0x8000 <= value <= 0x7FFF
    value = _U32(buf, pos)[0]
    return JsonUInt(value), value > _SMALL_MAX


def _container(
    buf: bytes, pos: int, end: int, is_object: bool, large: bool, depth: int
) -> tuple[Any, int, bool]:
    kind = "object" if is_object else "array"
    if depth > MAX_DEPTH:
        raise _bad(f"{kind} nested deeper than {MAX_DEPTH} levels", pos)
    osz = 4 if large else 2
    if end - pos < 2 * osz:
        raise _bad(f"{kind} header needs {2 * osz} bytes, {max(end - pos, 0)} left", pos)
    count, size = (_PAIR32 if large else _PAIR16).unpack_from(buf, pos)
    if size > end - pos:
        raise _bad(f"{kind} of {size} bytes overruns its {end - pos} available bytes", pos)
    key_entries = pos + 2 * osz
    value_entries = key_entries + (count * (osz + 2) if is_object else 0)
    header = value_entries + count * (osz + 1) - pos
    if header > size:
        raise _bad(f"{kind} of {count} elements cannot fit in {size} bytes", pos)
    cend = pos + size
    canonical = True
    expect = header  # where the next key or value starts when packed
    keys: list[str] = []
    if is_object:
        expect = _read_keys(buf, pos, key_entries, count, large, header, size, keys)
        canonical = expect >= 0
        expect = abs(expect)
    values: list[Any] = []
    append = values.append
    inline = _INLINE_LARGE if large else _INLINE_SMALL
    unpack_entry = (_ENTRY32 if large else _ENTRY16).unpack_from
    step = osz + 1
    wide_inlined = 0  # int32/uint32 inlined here, stored apart in the small format
    for entry in range(value_entries, value_entries + count * step, step):
        t, offset = unpack_entry(buf, entry)
        if t in inline:
            value, exact = _inline_value(buf, t, entry + 1, large)
            if t >= JsonbType.INT32:
                wide_inlined += 1
            if not exact:
                canonical = False
            append(value)
            continue
        if offset < entry + step - pos or offset >= size:
            raise _bad(f"value {(entry - value_entries) // step} points outside its {kind}", entry)
        start = pos + offset
        if t == JsonbType.STRING and buf[start] < 0x80:  # the common short string
            stop = start + 1 + buf[start]
            if stop > cend:
                raise _bad(f"string needs {stop - start - 1} bytes, {cend - start - 1} left", start)
            try:
                append(buf[start + 1 : stop].decode("utf-8"))
            except UnicodeDecodeError as exc:
                raise _bad(f"string is not UTF-8 ({exc.reason})", start + 1 + exc.start) from None
        elif t <= JsonbType.LARGE_ARRAY:
            value, stop, _ = _container(buf, start, cend, t <= 1, t == 1 or t == 3, depth + 1)
            append(value)
        else:
            value, stop, exact = _decode(buf, t, start, cend, depth + 1)
            if not exact:
                canonical = False
            append(value)
        if offset != expect:
            canonical = False
        expect = stop - pos
    if canonical and expect == size:
        if not large:
            return (dict(zip(keys, values, strict=True)) if is_object else values), cend, True
        # MySQL uses the large format only when the small one does not fit.
        small = 4 + count * (7 if is_object else 3) + size - header + 4 * wide_inlined
        if small > _SMALL_MAX:
            return (dict(zip(keys, values, strict=True)) if is_object else values), cend, True
    layout = _layout(buf, pos, cend, value_entries, count, large, keys, values)
    if is_object:
        return JsonObject(zip(keys, values, strict=True), layout), cend, True
    return JsonArray(values, layout), cend, True


def _read_keys(
    buf: bytes, pos: int, first: int, count: int, large: bool, header: int, size: int,
    keys: list[str],
) -> int:  # fmt: skip
    """Decode an object's keys into ``keys``; the end of the keys, negative if not canonical."""
    unpack_key = (_KEY32 if large else _PAIR16).unpack_from
    step = 6 if large else 4
    canonical = True
    ordered = True
    expect = header
    previous = b""
    for entry in range(first, first + count * step, step):
        key_offset, key_length = unpack_key(buf, entry)
        if key_offset < header or key_offset + key_length > size:
            raise _bad(f"key {(entry - first) // step} points outside its object", entry)
        start = pos + key_offset
        raw = buf[start : start + key_length]
        if key_offset != expect:
            canonical = False
        expect = key_offset + key_length
        if entry != first and (
            key_length < len(previous) or (key_length == len(previous) and raw <= previous)
        ):
            ordered = False
        previous = raw
        try:
            keys.append(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise _bad(f"key is not UTF-8 ({exc.reason})", start + exc.start) from None
    if not ordered:
        if len(set(keys)) < count:
            raise _bad("duplicate key in object", pos)
        canonical = False
    return expect if canonical else -expect


def _layout(
    buf: bytes, pos: int, cend: int, value_entries: int, count: int, large: bool,
    keys: list[str], values: list[Any],
) -> JsonLayout:  # fmt: skip
    """The layout of a container that is not stored the canonical way."""
    unpack_entry = (_ENTRY32 if large else _ENTRY16).unpack_from
    step = 5 if large else 3
    spans: list[tuple[int, int] | None] = []
    for entry in range(value_entries, value_entries + count * step, step):
        t, offset = unpack_entry(buf, entry)
        if t <= JsonbType.LARGE_ARRAY:
            nested = (_PAIR32 if t & 1 else _PAIR16).unpack_from(buf, pos + offset)[1]
            spans.append((offset, nested))
        else:
            spans.append(None)
    return JsonLayout(
        large=large,
        raw=buf[pos:cend],
        keys=tuple(keys),
        spans=tuple(spans),
        scalars=tuple(None if s is not None else v for s, v in zip(spans, values, strict=True)),
    )


# --- encoding -----------------------------------------------------------------


def encode_jsonb(value: Any) -> bytes:
    """The binary JSON of ``value``, as MySQL writes it (see the module notes)."""
    if isinstance(value, JsonEmpty):
        return b""
    t, body = _encode(value, 1)
    return bytes([t]) + body


def _varlen_bytes(size: int) -> bytes:
    out = bytearray()
    while True:
        byte = size & 0x7F
        size >>= 7
        if size:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _encode(value: Any, depth: int) -> tuple[int, bytes]:
    """(type byte, data) of one value."""
    if isinstance(value, str):
        try:
            data = value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise EncodeError(f"JSON string is not valid Unicode: {exc.reason}") from None
        if len(data) > _LARGE_MAX:
            raise EncodeError("JSON string over 4 GiB")
        return JsonbType.STRING, _varlen_bytes(len(data)) + data
    if value is None:
        return JsonbType.LITERAL, b"\x00"
    if isinstance(value, bool):
        return JsonbType.LITERAL, b"\x01" if value else b"\x02"
    if isinstance(value, int):
        return _encode_int(value)
    if isinstance(value, float):
        return JsonbType.DOUBLE, _F64.pack(value)
    if isinstance(value, dict):
        return _encode_container(value, True, depth)
    if isinstance(value, list):
        return _encode_container(value, False, depth)
    if isinstance(value, JsonOpaque):
        size = len(value.data)
        if size > _LARGE_MAX:
            raise EncodeError("opaque JSON value over 4 GiB")
        return JsonbType.OPAQUE, bytes([value.mysql_type]) + _varlen_bytes(size) + value.data
    hint = " (wrap it with JsonOpaque.from_...)" if isinstance(value, Decimal | date) else ""
    raise EncodeError(f"cannot encode {type(value).__name__} as binary JSON{hint}")


def _encode_int(value: int) -> tuple[int, bytes]:
    if isinstance(value, JsonUInt) or value > 0x7FFF_FFFF_FFFF_FFFF:
        if value <= _SMALL_MAX:
            return JsonbType.UINT16, value.to_bytes(2, "little")
        if value <= _LARGE_MAX:
            return JsonbType.UINT32, value.to_bytes(4, "little")
        if value <= 0xFFFF_FFFF_FFFF_FFFF:
            return JsonbType.UINT64, value.to_bytes(8, "little")
        raise EncodeError(f"integer {value} does not fit in 64 bits")
    if -0x8000 <= value <= 0x7FFF:
        return JsonbType.INT16, value.to_bytes(2, "little", signed=True)
    if -0x8000_0000 <= value <= 0x7FFF_FFFF:
        return JsonbType.INT32, value.to_bytes(4, "little", signed=True)
    if value >= -0x8000_0000_0000_0000:
        return JsonbType.INT64, value.to_bytes(8, "little", signed=True)
    raise EncodeError(f"integer {value} does not fit in 64 bits")


def _inline_field(t: int, data: bytes, large: bool) -> bytes | None:
    """The value-entry field holding a scalar, or None when it is stored apart."""
    if not _inlined(t, large):
        return None
    width = 4 if large else 2
    if len(data) == width:
        return data
    fill = b"\xff" if t == JsonbType.INT16 and data[-1] & 0x80 else b"\0"
    return data + fill * (width - len(data))


def _encode_container(value: Any, is_object: bool, depth: int) -> tuple[int, bytes]:
    if depth > MAX_DEPTH:
        raise EncodeError(f"JSON nested deeper than {MAX_DEPTH} levels")
    layout = getattr(value, "layout", None)
    if isinstance(layout, JsonLayout):
        kept = _encode_with_layout(value, layout, is_object, depth)
        if kept is not None:
            return kept
    keys: list[bytes] = []
    if is_object:
        members = []
        for key, member in value.items():
            if not isinstance(key, str):
                raise EncodeError(f"JSON object key must be str, not {type(key).__name__}")
            raw = key.encode("utf-8")
            if len(raw) > _SMALL_MAX:
                raise EncodeError(f"JSON object key of {len(raw)} bytes is over 64 KiB")
            members.append((raw, member))
        members.sort(key=lambda m: (len(m[0]), m[0]))
        keys = [raw for raw, _ in members]
        children = [_encode(member, depth + 1) for _, member in members]
    else:
        children = [_encode(element, depth + 1) for element in value]
    body = _assemble(keys, children, is_object, large=False)
    if body is not None:
        return (JsonbType.SMALL_OBJECT if is_object else JsonbType.SMALL_ARRAY), body
    body = _assemble(keys, children, is_object, large=True)
    if body is None:
        raise EncodeError("JSON document over 4 GiB")
    return (JsonbType.LARGE_OBJECT if is_object else JsonbType.LARGE_ARRAY), body


def _assemble(
    keys: list[bytes], children: list[tuple[int, bytes]], is_object: bool, large: bool
) -> bytes | None:
    """A container's bytes in one format, or None when they do not fit it."""
    osz = 4 if large else 2
    limit = _LARGE_MAX if large else _SMALL_MAX
    count = len(children)
    header = 2 * osz + count * ((osz + 2 if is_object else 0) + osz + 1)
    fields = [_inline_field(t, data, large) for t, data in children]
    keys_size = sum(map(len, keys))
    size = (
        header
        + keys_size
        + sum(len(data) for (_, data), field in zip(children, fields, strict=True) if field is None)
    )
    if size > limit or count > limit:
        return None
    pack_key = (_KEY32 if large else _PAIR16).pack
    pack_offset = (_OFFSET32 if large else _OFFSET16).pack
    out = bytearray((_PAIR32 if large else _PAIR16).pack(count, size))
    offset = header
    for raw in keys:
        out += pack_key(offset, len(raw))
        offset += len(raw)
    for (t, data), field in zip(children, fields, strict=True):
        out.append(t)
        if field is None:
            out += pack_offset(offset)
            offset += len(data)
        else:
            out += field
    for raw in keys:
        out += raw
    for (_, data), field in zip(children, fields, strict=True):
        if field is None:
            out += data
    return bytes(out)


def _same_scalar(a: Any, b: Any) -> bool:
    """Equal and of the same type; floats compared by their bits (-0.0, NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return _F64.pack(a) == _F64.pack(b)
    return bool(a == b)


def _encode_with_layout(
    value: Any, layout: JsonLayout, is_object: bool, depth: int
) -> tuple[int, bytes] | None:
    """The stored bytes with nested containers re-encoded in place, or None if that cannot be."""
    if is_object:
        if tuple(value.keys()) != layout.keys:
            return None
        elements = list(value.values())
    else:
        elements = list(value)
    count = len(layout.spans)
    if len(elements) != count:
        return None
    osz = 4 if layout.large else 2
    first_entry = 2 * osz + (count * (osz + 2) if is_object else 0)
    out: bytearray | None = None
    for i, element in enumerate(elements):
        span = layout.spans[i]
        if span is None:
            if not _same_scalar(element, layout.scalars[i]):
                return None
            continue
        if not isinstance(element, dict | list):
            return None
        t, data = _encode(element, depth + 1)
        offset, length = span
        if len(data) != length:
            return None
        if out is None:
            out = bytearray(layout.raw)
        out[first_entry + i * (osz + 1)] = t
        out[offset : offset + length] = data
    if is_object:
        t = JsonbType.LARGE_OBJECT if layout.large else JsonbType.SMALL_OBJECT
    else:
        t = JsonbType.LARGE_ARRAY if layout.large else JsonbType.SMALL_ARRAY
    return t, layout.raw if out is None else bytes(out)
