"""Context a statement-based QUERY needs: INTVAR, RAND and USER_VAR.

Each is written just before the QUERY it belongs to: the auto-increment or
LAST_INSERT_ID() value, the RAND() seeds, and the value of each user variable
the statement reads.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from decimal import Decimal
from enum import IntEnum

from binlogkit.binlog.constants import EventType
from binlogkit.binlog.context import DecodeContext, FormatContext
from binlogkit.binlog.events.base import Body, Event, register
from binlogkit.binlog.header import EventHeader
from binlogkit.errors import DecodeError, EncodeError
from binlogkit.wire import ByteReader, ByteWriter

_INTVAR = struct.Struct("<BQ")
_RAND = struct.Struct("<QQ")
_DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)
_DIGITS_PER_WORD = 9


class IntvarType(IntEnum):
    """What an INTVAR event sets for the next statement."""

    INVALID = 0
    LAST_INSERT_ID = 1
    INSERT_ID = 2


@register(EventType.INTVAR)
@dataclass(frozen=True, slots=True)
class IntvarEvent(Event):
    """LAST_INSERT_ID() or the next auto-increment value (INSERT_ID) of the next statement.

    ``var_type`` is an :class:`IntvarType` value; ``value`` is stored unsigned
    (mysqlbinlog prints it signed).
    """

    var_type: int
    value: int
    extra: bytes = b""

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> IntvarEvent:
        r = ByteReader(body)
        r.need(_INTVAR.size, "INTVAR body")
        var_type, value = _INTVAR.unpack_from(body)
        return cls(header, var_type, value, r.rest())

    def encode_body(self, fmt: FormatContext) -> bytes:
        return _INTVAR.pack(self.var_type, self.value) + self.extra


@register(EventType.RAND)
@dataclass(frozen=True, slots=True)
class RandEvent(Event):
    """The two seeds of the random generator the next statement's RAND() starts from."""

    seed1: int
    seed2: int
    extra: bytes = b""

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> RandEvent:
        r = ByteReader(body)
        r.need(_RAND.size, "RAND body")
        seed1, seed2 = _RAND.unpack_from(body)
        return cls(header, seed1, seed2, r.rest())

    def encode_body(self, fmt: FormatContext) -> bytes:
        return _RAND.pack(self.seed1, self.seed2) + self.extra


class UserVarType(IntEnum):
    """The server's Item_result: how a user variable's value is stored."""

    STRING = 0
    REAL = 1
    INT = 2
    ROW = 3
    DECIMAL = 4


USER_VAR_UNSIGNED = 0x01
"""USER_VAR flag: the INT value is unsigned."""


@register(EventType.USER_VAR)
@dataclass(frozen=True, slots=True)
class UserVarEvent(Event):
    """The value of user variable ``@name`` that the next statement reads.

    ``value_type`` is a :class:`UserVarType` value, or None for SQL NULL (then
    nothing else is stored). ``raw`` is the value as stored: the string in
    collation ``charset``, an 8-byte double, an 8-byte integer, or a decimal
    (precision byte, scale byte, binary decimal). ``flags`` is the trailing
    flag byte of MySQL 5.1+/MariaDB (bit 0: unsigned), None when absent.
    :attr:`value` gives the Python value.
    """

    name: str
    value_type: int | None
    charset: int = 0
    raw: bytes = b""
    flags: int | None = None
    extra: bytes = b""

    @property
    def is_null(self) -> bool:
        return self.value_type is None

    @property
    def unsigned(self) -> bool:
        return bool((self.flags or 0) & USER_VAR_UNSIGNED)

    @property
    def value(self) -> bytes | float | int | Decimal | None:
        """None, bytes (STRING and ROW), float (REAL), int (INT) or Decimal (DECIMAL)."""
        kind, raw = self.value_type, self.raw
        if kind is None:
            return None
        if kind == UserVarType.REAL:
            return float(struct.unpack("<d", _exact(raw, 8, "REAL"))[0])
        if kind == UserVarType.INT:
            return int.from_bytes(_exact(raw, 8, "INT"), "little", signed=not self.unsigned)
        if kind == UserVarType.DECIMAL:
            if len(raw) < 2:
                raise DecodeError("DECIMAL user variable lacks precision and scale")
            return decimal_from_bin(raw[2:], raw[0], raw[1])
        return raw

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> UserVarEvent:
        r = ByteReader(body)
        name = r.bytes(r.u32("name length"), "name").decode("utf-8", "surrogateescape")
        is_null = r.u8("is_null")
        if is_null > 1:
            raise DecodeError(f"USER_VAR is_null byte is {is_null}")
        if is_null:
            return cls(header, name, None, extra=r.rest())
        value_type = r.u8("value type")
        charset = r.u32("charset")
        raw = r.bytes(r.u32("value length"), "value")
        flags = None if r.at_end() else r.u8("flags")
        return cls(header, name, value_type, charset, raw, flags, r.rest())

    def encode_body(self, fmt: FormatContext) -> bytes:
        w = ByteWriter()
        name = self.name.encode("utf-8", "surrogateescape")
        w.u32(len(name))
        w.bytes(name)
        if self.value_type is None:
            if self.raw or self.flags is not None:
                raise EncodeError("a NULL user variable carries no value or flags")
            w.u8(1)
        else:
            w.u8(0)
            w.u8(self.value_type)
            w.u32(self.charset)
            w.u32(len(self.raw))
            w.bytes(self.raw)
            if self.flags is not None:
                w.u8(self.flags)
        w.bytes(self.extra)
        return w.getvalue()


def _exact(raw: bytes, size: int, what: str) -> bytes:
    if len(raw) != size:
        raise DecodeError(f"{what} user variable has {len(raw)} bytes, not {size}")
    return raw


def decimal_bin_size(precision: int, scale: int) -> int:
    """Bytes of MySQL's binary DECIMAL(precision, scale)."""
    intg = precision - scale
    return (
        intg // _DIGITS_PER_WORD * 4
        + _DIG2BYTES[intg % _DIGITS_PER_WORD]
        + scale // _DIGITS_PER_WORD * 4
        + _DIG2BYTES[scale % _DIGITS_PER_WORD]
    )


def decimal_from_bin(raw: bytes, precision: int, scale: int) -> Decimal:
    """Decode MySQL's binary DECIMAL (``decimal2bin``): base-10⁹ groups, sign in the top bit."""
    if scale > precision:
        raise DecodeError(f"decimal scale {scale} exceeds precision {precision}")
    size = decimal_bin_size(precision, scale)
    if len(raw) < size:
        raise DecodeError(f"decimal({precision},{scale}) needs {size} bytes, has {len(raw)}")
    data = bytearray(raw[:size])
    if not data:
        return Decimal(0)
    negative = not data[0] & 0x80
    data[0] ^= 0x80
    if negative:
        data = bytearray(b ^ 0xFF for b in data)
    intg = precision - scale
    pos = 0

    def take(n: int) -> int:
        nonlocal pos
        value = int.from_bytes(data[pos : pos + n], "big")
        pos += n
        return value

    digits = ""
    lead = intg % _DIGITS_PER_WORD
    if lead:
        digits += str(take(_DIG2BYTES[lead])).zfill(lead)
    for _ in range(intg // _DIGITS_PER_WORD):
        digits += str(take(4)).zfill(_DIGITS_PER_WORD)
    frac = ""
    for _ in range(scale // _DIGITS_PER_WORD):
        frac += str(take(4)).zfill(_DIGITS_PER_WORD)
    tail = scale % _DIGITS_PER_WORD
    if tail:
        frac += str(take(_DIG2BYTES[tail])).zfill(tail)
    sign = "-" if negative else ""
    return Decimal(f"{sign}{digits or '0'}.{frac}" if frac else f"{sign}{digits or '0'}")
