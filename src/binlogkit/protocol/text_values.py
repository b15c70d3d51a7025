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
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.binlog.rows.types.enum_set import EnumCodec
from binlogkit.binlog.rows.types.strings import text_converter
from binlogkit.binlog.rows.types.values import ZERO_DATETIME, Geometry, InvalidDate, InvalidDateTime
from binlogkit.errors import BinlogError
from binlogkit.schema.model import ColumnDef

__all__ = ["TEXT_PARSERS", "TextColumn", "quote_name", "text_column"]

Parse = Callable[[str], Any]
"""A column's non-NULL text (``surrogateescape``) → the binlog decoder's value."""

_OPTIONS = DecodeOptions()
_STORED_AS_BYTES = frozenset({"uuid", "inet4", "inet6"})


@dataclass(frozen=True, slots=True)
class TextColumn:
    """How to read one column: the select expression and the parser of its text."""

    select: str
    parse: Parse


Maker = Callable[[ColumnInfo, str], TextColumn]
TEXT_PARSERS: dict[int, Maker] = {}


def parses(*codes: int) -> Callable[[Maker], Maker]:
    """Decorator: the text reader of these column type codes (given the info and quoted name)."""

    def mark(fn: Maker) -> Maker:
        for code in codes:
            TEXT_PARSERS[code] = fn
        return fn

    return mark


def quote_name(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def text_column(definition: ColumnDef, info: ColumnInfo) -> TextColumn:
    """How to read ``definition`` (whose binlog column is ``info``) as the binlog path would."""
    name = quote_name(definition.name)
    if definition.type in _STORED_AS_BYTES:
        return TextColumn(f"CAST({name} AS BINARY)", _raw)
    maker = TEXT_PARSERS.get(info.type)
    if maker is None:
        raise BinlogError(
            f"column {definition.name} ({definition.type}): a snapshot cannot read this type "
            "exactly as the binlog path gives it",
            hint="leave the table out of the snapshot (option tables)",
        )
    return maker(info, name)


def _raw(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


@parses(ColumnType.TINY, ColumnType.SHORT, ColumnType.INT24, ColumnType.LONG, ColumnType.LONGLONG)
def _integer(info: ColumnInfo, name: str) -> TextColumn:
    return TextColumn(name, int)


@parses(ColumnType.YEAR)
def _year(info: ColumnInfo, name: str) -> TextColumn:
    return TextColumn(name, int)  # "0000" is 0, as the decoder gives the zero year


@parses(ColumnType.FLOAT, ColumnType.DOUBLE)
def _float(info: ColumnInfo, name: str) -> TextColumn:
    return TextColumn(f"CAST({name} AS DOUBLE)", float)


@parses(ColumnType.NEWDECIMAL)
def _decimal(info: ColumnInfo, name: str) -> TextColumn:
    return TextColumn(name, Decimal)


@parses(ColumnType.BIT)
def _bit(info: ColumnInfo, name: str) -> TextColumn:
    return TextColumn(name, lambda text: int.from_bytes(_raw(text), "big"))


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


@parses(ColumnType.DATE, ColumnType.NEWDATE)
def _date_column(info: ColumnInfo, name: str) -> TextColumn:
    return TextColumn(name, _date)


@parses(ColumnType.DATETIME, ColumnType.DATETIME2)
def _datetime_column(info: ColumnInfo, name: str) -> TextColumn:
    return TextColumn(name, _datetime)


@parses(ColumnType.TIMESTAMP, ColumnType.TIMESTAMP2)
def _timestamp_column(info: ColumnInfo, name: str) -> TextColumn:
    return TextColumn(name, _timestamp)


@parses(ColumnType.TIME, ColumnType.TIME2)
def _time_column(info: ColumnInfo, name: str) -> TextColumn:
    return TextColumn(name, _time)


@parses(
    ColumnType.VARCHAR,
    ColumnType.VAR_STRING,
    ColumnType.STRING,
    ColumnType.TINY_BLOB,
    ColumnType.BLOB,
    ColumnType.MEDIUM_BLOB,
    ColumnType.LONG_BLOB,
    ColumnType.VARCHAR_COMPRESSED,
    ColumnType.BLOB_COMPRESSED,
)
def _string(info: ColumnInfo, name: str) -> TextColumn:
    convert = text_converter(info, _OPTIONS)
    return TextColumn(name, lambda text: convert(_raw(text)))


@parses(ColumnType.ENUM)
def _enum(info: ColumnInfo, name: str) -> TextColumn:
    by_index = EnumCodec.layout(info, _OPTIONS).convert or int
    member = text_converter(info, _OPTIONS)

    def parse(text: str) -> Any:
        index, _, data = text.partition(",")
        return by_index(0) if index == "0" else member(_raw(data))

    return TextColumn(_number_and_text(name), parse)


@parses(ColumnType.SET)
def _set(info: ColumnInfo, name: str) -> TextColumn:
    member = text_converter(info, _OPTIONS)

    def parse(text: str) -> frozenset[Any]:
        _, _, data = text.partition(",")
        return frozenset(member(part) for part in _raw(data).split(b",")) if data else frozenset()

    return TextColumn(_number_and_text(name), parse)


def _number_and_text(name: str) -> str:
    """``index,member`` / ``mask,members``: the members' own bytes (a schema read from SHOW
    CREATE TABLE has ``?`` for characters beyond utf8mb3), the number for the ENUM's error
    value (index 0, the empty string when no member is)."""
    return f"CONCAT({name}+0, ',', {name})"


@parses(ColumnType.GEOMETRY)
def _geometry(info: ColumnInfo, name: str) -> TextColumn:
    def parse(text: str) -> Geometry:
        data = _raw(text)
        return Geometry(int.from_bytes(data[:4], "little"), data[4:])

    return TextColumn(name, parse)
