"""Values from other systems as the Python values a column's rows encoder takes.

Rows imported from JSON lines, CSV or Parquet hold values in the forms those
formats have: numbers, strings, booleans, and (JSON lines written with
:mod:`binlogkit.jsonenc`, Parquet) dates, decimals and bytes. :class:`ColumnInput`
turns each into the value binlogkit decodes for the column (the forms of
docs/values.md), then encodes it once to check that it fits: a value that does
not (out of range, too many digits or characters, not a member) is an
:class:`~binlogkit.errors.EncodeError` saying why. Text is read as the column's
SQL literal would be: ``2024-01-02 03:04:05.5`` for DATETIME, ``-838:59:59``
for TIME, ``a,b`` for SET, ``0000-00-00`` for the zero date, and so on;
TIMESTAMP text without an offset is UTC, and text for a MySQL JSON column is
the document's JSON text.
"""

from __future__ import annotations

import ipaddress
import json
import math
import re
import struct
import uuid
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from decimal import ROUND_DOWN, Context, Decimal, InvalidOperation
from typing import Any

from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.rows.columns import COLUMN_CODECS, ColumnInfo, ValueEncoder
from binlogkit.binlog.rows.types.values import Geometry, InvalidDate, InvalidDateTime
from binlogkit.errors import EncodeError
from binlogkit.schema.completion import GEOMETRY_TYPES
from binlogkit.schema.model import ColumnDef

__all__ = ["ColumnInput"]

Convert = Callable[[Any, ColumnDef], Any]

_DATE = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})$")
_DATETIME = re.compile(
    r"^(\d{4})-(\d{1,2})-(\d{1,2})[ T](\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?"
    r"(Z|[+-]\d{2}:\d{2})?$"
)
_TIME = re.compile(r"^(-)?(?:(\d+) )?(\d+):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$")


_WIDE = Context(prec=200, rounding=ROUND_DOWN)
"""Room for DECIMAL(65,30) and more digits than any column holds (the default has 28)."""


def _refuse(value: Any, what: str) -> EncodeError:
    return EncodeError(f"{value!r} is not {what}")


def _integer(value: Any, col: ColumnDef) -> int:
    if isinstance(value, bool):
        raise _refuse(value, "an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, float | Decimal) and value == int(value):
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
        return int(value)
    raise _refuse(value, "an integer")


def _decimal(value: Any, col: ColumnDef) -> Decimal:
    if isinstance(value, bool):
        raise _refuse(value, "a number")
    try:
        number = Decimal(str(value).strip() if isinstance(value, str | float) else value)
    except (InvalidOperation, TypeError, ValueError):
        raise _refuse(value, "a number") from None
    if not number.is_finite():
        raise _refuse(value, "a finite number")
    scale = col.scale or 0
    try:
        exact = number.quantize(Decimal(1).scaleb(-scale), context=_WIDE)
    except InvalidOperation:
        raise EncodeError(f"{value!r} has more digits than the column holds") from None
    if exact != number:
        raise EncodeError(f"{value!r} has more than the {scale} decimals of the column")
    return exact


def _float(value: Any, col: ColumnDef) -> float:
    if isinstance(value, bool):
        raise _refuse(value, "a number")
    try:
        return float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        raise _refuse(value, "a number") from None


def _date(value: Any, col: ColumnDef) -> date | InvalidDate:
    if isinstance(value, datetime):
        raise _refuse(value, "a date without a time")
    if isinstance(value, date | InvalidDate):
        return value
    match = _DATE.match(value.strip()) if isinstance(value, str) else None
    if match is None:
        raise _refuse(value, "a date (YYYY-MM-DD)")
    year, month, day = (int(part) for part in match.groups())
    try:
        return date(year, month, day)
    except ValueError:
        return InvalidDate(year, month, day)  # zero dates, zero parts, as MySQL keeps them


def _microseconds(fraction: str | None, col: ColumnDef) -> int:
    digits = (fraction or "").rstrip("0")
    if len(digits) > (col.fsp or 0):
        raise EncodeError(f"fraction .{fraction} has more digits than the column's {col.fsp or 0}")
    return int((fraction or "0").ljust(6, "0"))


def _datetime(value: Any, col: ColumnDef) -> datetime | InvalidDateTime:
    if isinstance(value, datetime | InvalidDateTime):
        moment = value
    elif isinstance(value, str) and (match := _DATETIME.match(value.strip())):
        *parts, fraction, zone = match.groups()
        year, month, day, hour, minute, second = (int(part) for part in parts)
        micro = _microseconds(fraction, col)
        try:
            moment = datetime(year, month, day, hour, minute, second, micro)
        except ValueError:
            if zone:
                raise _refuse(value, "a valid date and time") from None
            return InvalidDateTime(year, month, day, hour, minute, second, micro)
        if zone:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    else:
        raise _refuse(value, "a date and time (YYYY-MM-DD hh:mm:ss[.ffffff])")
    _microseconds(f"{moment.microsecond:06d}", col)
    if col.type == "timestamp":
        if isinstance(moment, datetime):
            return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
        if not moment.is_zero:
            raise _refuse(value, "a TIMESTAMP (only the zero value is not a real moment)")
    elif isinstance(moment, datetime) and moment.tzinfo is not None:
        raise _refuse(value, "a DATETIME (it has no time zone)")
    return moment


def _time(value: Any, col: ColumnDef) -> timedelta:
    if isinstance(value, timedelta):
        span = value
    elif isinstance(value, time):
        span = timedelta(
            hours=value.hour,
            minutes=value.minute,
            seconds=value.second,
            microseconds=value.microsecond,
        )
    elif isinstance(value, str) and (match := _TIME.match(value.strip())):
        sign, days, hours, minutes, seconds, fraction = match.groups()
        span = timedelta(
            days=int(days or 0),
            hours=int(hours),
            minutes=int(minutes),
            seconds=int(seconds),
            microseconds=_microseconds(fraction, col),
        )
        span = -span if sign else span
    else:
        raise _refuse(value, "a time ([-]hhh:mm:ss[.ffffff])")
    _microseconds(f"{abs(span).microseconds:06d}", col)
    return span


def _text(value: Any, col: ColumnDef) -> str:
    if not isinstance(value, str):
        raise _refuse(value, "text")
    if col.length is not None and len(value) > col.length:
        raise EncodeError(f"{len(value)} characters, more than the column's {col.length}")
    return value


def _bytes(value: Any, col: ColumnDef) -> bytes:
    if isinstance(value, str):
        value = value.encode()  # text for a binary column: its UTF-8 bytes
    if not isinstance(value, bytes | bytearray):
        raise _refuse(value, "bytes")
    if col.length is not None and len(value) > col.length:
        raise EncodeError(f"{len(value)} bytes, more than the column's {col.length}")
    return bytes(value)


def _binary(value: Any, col: ColumnDef) -> bytes:
    """BINARY(n): the server pads it with NUL bytes to its length."""
    return _bytes(value, col).ljust(col.length or 0, b"\0")


def _member(value: Any, col: ColumnDef) -> str | int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value  # the member's number
    if not isinstance(value, str):
        raise _refuse(value, "an ENUM member")
    return value


def _members(value: Any, col: ColumnDef) -> frozenset[str] | int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value  # the members' bitmap
    if isinstance(value, str):
        return frozenset(value.split(",")) if value else frozenset()
    if isinstance(value, list | tuple | set | frozenset) and all(isinstance(m, str) for m in value):
        return frozenset(value)
    raise _refuse(value, "SET members (a list, or text separated by commas)")


def _json_document(value: Any, col: ColumnDef) -> Any:
    """MySQL's JSON: the document itself (text is read as JSON)."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError as err:
            raise _refuse(value, f"a JSON document ({err})") from None
    return value


def _json_text(value: Any, col: ColumnDef) -> str:
    """MariaDB's JSON is LONGTEXT (utf8mb4_bin): a document is stored as its text."""
    if isinstance(value, str):
        return _text(value, col)
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _geometry(value: Any, col: ColumnDef) -> Geometry:
    if isinstance(value, Geometry):
        return value
    if isinstance(value, bytes) and len(value) >= 4:
        return Geometry(int.from_bytes(value[:4], "little"), value[4:])  # SRID, then WKB
    raise _refuse(value, "a geometry (SRID and WKB bytes)")


def _address(value: Any, col: ColumnDef) -> bytes:
    if isinstance(value, str):
        try:
            ip = ipaddress.ip_address(value.strip())
        except ValueError:
            raise _refuse(value, f"an {col.type.upper()} address") from None
        if col.type == "inet6" and ip.version == 4:
            ip = ipaddress.IPv6Address(f"::ffff:{ip}")
        return ip.packed
    return _bytes(value, col)


def _uuid(value: Any, col: ColumnDef) -> bytes:
    if isinstance(value, uuid.UUID):
        return value.bytes
    if isinstance(value, str):
        try:
            return uuid.UUID(value.strip()).bytes
        except ValueError:
            raise _refuse(value, "a UUID") from None
    return _bytes(value, col)


def _vector_floats(value: Any, col: ColumnDef) -> list[float]:
    """VECTOR(n): up to n finite float32 values (a list, its JSON text or the stored bytes)."""
    if isinstance(value, bytes | bytearray):
        if len(value) % 4:
            raise _refuse(value, "a VECTOR (float32 bytes)")
        value = list(struct.unpack(f"<{len(value) // 4}f", value))
    elif isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as err:
            raise _refuse(value, f"a VECTOR ([x, y, ...]: {err})") from None
    if not isinstance(value, list | tuple) or not all(
        isinstance(x, int | float) and not isinstance(x, bool) for x in value
    ):
        raise _refuse(value, "a VECTOR (a list of numbers)")
    floats = [float(x) for x in value]
    if col.length is not None and len(floats) > col.length:
        raise EncodeError(f"{len(floats)} dimensions, more than the column's {col.length}")
    if not all(math.isfinite(x) for x in floats):
        raise EncodeError("a VECTOR holds finite numbers only")
    return floats


def _vector_bytes(value: Any, col: ColumnDef) -> bytes:
    """MariaDB's VECTOR(n) is a VARBINARY of exactly n float32 values."""
    numbers = _vector_floats(value, col)  # finite, not too many
    if isinstance(value, bytes | bytearray):
        data = bytes(value)
    else:
        try:
            data = struct.pack(f"<{len(numbers)}f", *numbers)
        except OverflowError:
            raise EncodeError(f"{value!r} has a number out of float32's range") from None
    if len(numbers) != (col.length or 0):
        raise EncodeError(f"{len(numbers)} dimensions, the column has {col.length}")
    return data


_TEXT_TYPES = ("char", "varchar", "tinytext", "text", "mediumtext", "longtext")
_BLOB_TYPES = ("varbinary", "tinyblob", "blob", "mediumblob", "longblob")
_CONVERT: dict[str, Convert] = {
    **dict.fromkeys(("tinyint", "smallint", "mediumint", "int", "bigint"), _integer),
    "year": _integer,
    "bit": _integer,
    "decimal": _decimal,
    "float": _float,
    "double": _float,
    "date": _date,
    "datetime": _datetime,
    "timestamp": _datetime,
    "time": _time,
    **dict.fromkeys(_TEXT_TYPES, _text),
    **dict.fromkeys(_BLOB_TYPES, _bytes),
    "binary": _binary,
    "enum": _member,
    "set": _members,
    "json": _json_document,
    "inet4": _address,
    "inet6": _address,
    "uuid": _uuid,
    **dict.fromkeys(GEOMETRY_TYPES, _geometry),
}
"""information_schema's DATA_TYPE → how an outside value becomes the column's value."""


class ColumnInput:
    """Turns outside values into one column's values, checked to fit it."""

    __slots__ = ("_convert", "_encode", "_scratch", "column", "info")

    def __init__(self, column: ColumnDef, info: ColumnInfo) -> None:
        self.column = column
        self.info = info
        self._convert = self._converter(column, info)
        self._encode: ValueEncoder = COLUMN_CODECS[info.type].encoder(info, DecodeOptions())
        self._scratch = bytearray()

    @staticmethod
    def _converter(column: ColumnDef, info: ColumnInfo) -> Convert:
        if column.type == "vector":  # MySQL's own type, or MariaDB's VARBINARY
            return _vector_floats if info.type == ColumnType.VECTOR else _vector_bytes
        if column.type == "longtext" and column.collation == "utf8mb4_bin":
            return _json_text  # MariaDB's JSON
        convert = _CONVERT.get(column.type)
        if convert is None:
            raise EncodeError(f"importing {column.type} values is not supported")
        return convert

    def value(self, raw: Any) -> Any:
        """``raw`` as the column's value (None stays NULL); :class:`EncodeError` when it cannot
        be one or does not fit."""
        if raw is None:
            if not self.column.nullable:
                raise EncodeError("NULL in a NOT NULL column")
            return None
        value = self._convert(raw, self.column)
        scratch = self._scratch
        try:
            self._encode(value, scratch)
        finally:
            del scratch[:]
        return value
