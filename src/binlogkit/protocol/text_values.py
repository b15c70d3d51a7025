"""Text-protocol values → exactly the values the binlog decoder gives for the same column.

A snapshot reads rows with ``SELECT`` and must land them as the binlog path
would (:mod:`binlogkit.binlog.rows.types`, docs/values.md). :func:`text_column`
gives, per column, the select expression to read it by and the parser of its
text. The session must have ``character_set_results=binary`` (text arrives as
the stored bytes, decoded with the column's charset here, as the binlog path
does) and ``time_zone='+00:00'`` (TIMESTAMP text in UTC). The client hands
values over as UTF-8 text with ``surrogateescape`` (:class:`~binlogkit.protocol.
client.ResultSet`); parsers take that text.

Where the plain text is not exact, another form is selected: FLOAT and DOUBLE
as ``CAST(c AS DOUBLE)`` (the shortest text that reads back to the same
double, so a FLOAT's float32 comes back exactly, and DOUBLE(M,D) is not
rounded to D digits); ENUM and SET with their number too (``CONCAT(c+0, ',', c)``);
UUID, INET4 and INET6 as their stored
bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.binlog.rows.types.enum_set import EnumCodec
from binlogkit.binlog.rows.types.strings import text_converter
from binlogkit.binlog.rows.types.values import ZERO_DATETIME, Geometry, InvalidDate, InvalidDateTime
from binlogkit.errors import BinlogError
from binlogkit.pipeline.sql import quote_name
from binlogkit.schema.model import ColumnDef

__all__ = ["TextColumn", "text_column"]

Parse = Callable[[str], Any]
"""A column's non-NULL text (``surrogateescape``) → the binlog decoder's value."""

_OPTIONS = DecodeOptions()
_STORED_AS_BYTES = frozenset({"uuid", "inet4", "inet6"})


@frozen_dataclass
class TextColumn:
    """How to read one column: the select expression and the parser of its text."""

    select: str
    parse: Parse


def _raw(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def _bit(text: str) -> int:
    return int.from_bytes(_raw(text), "big")


def _date(text: str) -> date | InvalidDate:
    year, month, day = int(text[:4]), int(text[5:7]), int(text[8:10])
    try:
        return date(year, month, day)
    except ValueError:
        return InvalidDate(year, month, day)


def _datetime(text: str) -> datetime | InvalidDateTime:
    """``YYYY-MM-DD hh:mm:ss[.ffffff]``."""
    parts = (text[:4], text[5:7], text[8:10], text[11:13], text[14:16], text[17:19])
    year, month, day, hour, minute, second = map(int, parts)
    micro = int(text[20:].ljust(6, "0")) if len(text) > 19 else 0
    try:
        return datetime(year, month, day, hour, minute, second, micro)
    except ValueError:
        return InvalidDateTime(year, month, day, hour, minute, second, micro)


def _timestamp(text: str) -> datetime | InvalidDateTime:
    value = _datetime(text)
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC)
    return ZERO_DATETIME


def _time(text: str) -> timedelta:
    """``[-]h…h:mm:ss[.ffffff]``."""
    negative = text.startswith("-")
    clock, _, fraction = text.lstrip("-").partition(".")
    hours, minutes, seconds = map(int, clock.split(":"))
    delta = timedelta(
        hours=hours, minutes=minutes, seconds=seconds, microseconds=int(fraction.ljust(6, "0"))
    )
    return -delta if negative else delta


def _geometry(text: str) -> Geometry:
    data = _raw(text)
    return Geometry(int.from_bytes(data[:4], "little"), data[4:])


_AS_IS: dict[int, Parse] = {
    **dict.fromkeys(
        (ColumnType.TINY, ColumnType.SHORT, ColumnType.INT24, ColumnType.LONG, ColumnType.LONGLONG),
        int,
    ),
    ColumnType.YEAR: int,  # "0000" is 0, as the decoder gives the zero year
    ColumnType.NEWDECIMAL: Decimal,
    ColumnType.BIT: _bit,
    ColumnType.DATE: _date,
    ColumnType.NEWDATE: _date,
    ColumnType.DATETIME: _datetime,
    ColumnType.DATETIME2: _datetime,
    ColumnType.TIMESTAMP: _timestamp,
    ColumnType.TIMESTAMP2: _timestamp,
    ColumnType.TIME: _time,
    ColumnType.TIME2: _time,
    ColumnType.GEOMETRY: _geometry,
}
"""Type code → parser of the column's own text."""


def text_column(definition: ColumnDef, info: ColumnInfo) -> TextColumn:
    """How to read ``definition`` (whose binlog column is ``info``) as the binlog path would."""
    name = quote_name(definition.name)
    code = info.type
    if definition.type in _STORED_AS_BYTES:
        return TextColumn(f"CAST({name} AS BINARY)", _raw)
    if code in _AS_IS:
        return TextColumn(name, _AS_IS[code])
    if code in (ColumnType.FLOAT, ColumnType.DOUBLE):
        return TextColumn(f"CAST({name} AS DOUBLE)", float)
    if code == ColumnType.ENUM:
        return TextColumn(_number_and_text(name), _enum_parser(info))
    if code == ColumnType.SET:
        return TextColumn(_number_and_text(name), _set_parser(info))
    if info.charset is not None:  # the string types: text, and binary (collation 63)
        convert = text_converter(info, _OPTIONS)
        return TextColumn(name, lambda text: convert(_raw(text)))
    raise BinlogError(
        f"column {definition.name} ({definition.type}): a snapshot cannot read this type "
        "exactly as the binlog path gives it",
        hint="leave the table out of the snapshot (option tables)",
    )


def _number_and_text(name: str) -> str:
    """``index,member`` / ``mask,members``: the members' own bytes (a schema read from SHOW
    CREATE TABLE has ``?`` for characters beyond utf8mb3), the number for the ENUM's error
    value (index 0, the empty string when no member is)."""
    return f"CONCAT({name}+0, ',', {name})"


def _enum_parser(info: ColumnInfo) -> Parse:
    by_index = EnumCodec.layout(info, _OPTIONS).convert or int
    member = text_converter(info, _OPTIONS)

    def parse(text: str) -> Any:
        index, _, data = text.partition(",")
        return by_index(0) if index == "0" else member(_raw(data))

    return parse


def _set_parser(info: ColumnInfo) -> Parse:
    member = text_converter(info, _OPTIONS)

    def parse(text: str) -> frozenset[Any]:
        _, _, data = text.partition(",")
        return frozenset(member(part) for part in _raw(data).split(b",")) if data else frozenset()

    return parse
