"""Context a statement-based QUERY needs: INTVAR, RAND and USER_VAR.

Each is written just before the QUERY it belongs to: the auto-increment or
LAST_INSERT_ID() value, the RAND() seeds, and the value of each user variable
the statement reads.
"""

from __future__ import annotations

import struct
from decimal import Decimal
from enum import IntEnum
from typing import ClassVar

from binlogkit.binlog import utf8
from binlogkit.binlog.constants import ColumnType, EventType
from binlogkit.binlog.context import DecodeContext, DecodeOptions, FormatContext
from binlogkit.binlog.events.base import Body, Event, TransactionRole, register
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.header import EventHeader
from binlogkit.binlog.rows.charsets import text_codec
from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.binlog.rows.types.decimal import NewDecimalCodec
from binlogkit.errors import DecodeError, EncodeError
from binlogkit.wire import ByteReader, ByteWriter

_INTVAR = struct.Struct("<BQ")
_RAND = struct.Struct("<QQ")
_OPTIONS = DecodeOptions()


class IntvarType(IntEnum):
    """What an INTVAR event sets for the next statement."""

    INVALID = 0
    LAST_INSERT_ID = 1
    INSERT_ID = 2


@register(EventType.INTVAR)
@frozen_dataclass
class IntvarEvent(Event):
    """LAST_INSERT_ID() or the next auto-increment value (INSERT_ID) of the next statement.

    ``var_type`` is an :class:`IntvarType` value; ``value`` is stored unsigned
    (mysqlbinlog prints it signed).
    """

    transaction_role: ClassVar[TransactionRole] = TransactionRole.CONTEXT

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
@frozen_dataclass
class RandEvent(Event):
    """The two seeds of the random generator the next statement's RAND() starts from."""

    transaction_role: ClassVar[TransactionRole] = TransactionRole.CONTEXT

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
@frozen_dataclass
class UserVarEvent(Event):
    """The value of user variable ``@name`` that the next statement reads.

    ``value_type`` is a :class:`UserVarType` value, or None for SQL NULL (then
    nothing else is stored). ``raw`` is the value as stored: the string in
    collation ``charset``, an 8-byte double, an 8-byte integer, or a decimal
    (precision byte, scale byte, binary decimal). ``flags`` is the trailing
    flag byte of MySQL 5.1+/MariaDB (bit 0: unsigned), None when absent.
    :attr:`value` gives the Python value, :attr:`text` a string value as text.
    """

    transaction_role: ClassVar[TransactionRole] = TransactionRole.CONTEXT

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
            return _decimal(raw, self.name)
        return raw

    @property
    def text(self) -> str | None:
        """A STRING value decoded with its collation's charset; None for others and binary."""
        codec = text_codec(self.charset) if self.value_type == UserVarType.STRING else None
        if codec is None:
            return None
        try:
            return codec.decode(self.raw)
        except UnicodeDecodeError:
            return None

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> UserVarEvent:
        r = ByteReader(body)
        name = utf8.decode(r.take(r.u32("name length"), "name"))
        is_null = r.u8("is_null")
        if is_null > 1:
            raise DecodeError(f"USER_VAR is_null byte is {is_null}")
        if is_null:
            return cls(header, name, None, extra=r.rest())
        value_type = r.u8("value type")
        charset = r.u32("charset")
        raw = r.take(r.u32("value length"), "value")
        flags = None if r.at_end() else r.u8("flags")
        return cls(header, name, value_type, charset, raw, flags, r.rest())

    def encode_body(self, fmt: FormatContext) -> bytes:
        w = ByteWriter()
        name = utf8.encode(self.name)
        w.u32(len(name))
        w.write(name)
        if self.value_type is None:
            if self.raw or self.flags is not None:
                raise EncodeError("a NULL user variable carries no value or flags")
            w.u8(1)
        else:
            w.u8(0)
            w.u8(self.value_type)
            w.u32(self.charset)
            w.u32(len(self.raw))
            w.write(self.raw)
            if self.flags is not None:
                w.u8(self.flags)
        w.write(self.extra)
        return w.getvalue()


def _exact(raw: bytes, size: int, what: str) -> bytes:
    if len(raw) != size:
        raise DecodeError(f"{what} user variable has {len(raw)} bytes, not {size}")
    return raw


def _decimal(raw: bytes, name: str) -> Decimal:
    """A DECIMAL user variable: precision, scale, then MySQL's binary decimal (as in rows)."""
    if len(raw) < 2:
        raise DecodeError(f"DECIMAL user variable @{name} lacks precision and scale")
    precision, scale = raw[0], raw[1]
    meta = precision << 8 | scale
    col = ColumnInfo(0, ColumnType.NEWDECIMAL, ColumnType.NEWDECIMAL, meta, False, f"@{name}")
    value, _ = NewDecimalCodec.decoder(col, _OPTIONS)(raw, 2)
    return Decimal(value)
