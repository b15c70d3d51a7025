"""YEAR, DATE, TIME, DATETIME and TIMESTAMP, in their old and their 5.6 (``*2``) formats.

Layouts (MySQL's field.cc and my_time.cc; MariaDB's compat56.cc):

- YEAR: one byte, 0 for the year 0, else the year minus 1900.
- DATE (and NEWDATE): 3 bytes little-endian, ``year << 9 | month << 5 | day``.
- TIME (old): 3 bytes little-endian signed, ``±(hh * 10000 + mm * 100 + ss)``.
- DATETIME (old): 8 bytes little-endian, the decimal number YYYYMMDDhhmmss.
- TIMESTAMP (old): 4 bytes little-endian, seconds since 1970-01-01 UTC.
- TIME2, DATETIME2, TIMESTAMP2: big-endian, followed by the fraction of a
  second in (fsp + 1) // 2 bytes (fsp, 0-6, is the table-map metadata byte):
  hundredths, then 1/10000ths, then microseconds.

  - DATETIME2: 5 bytes, ``0x8000000000 + (((year * 13 + month) << 5 | day) << 17
    | hour << 12 | minute << 6 | second)``.
  - TIMESTAMP2: 4 bytes of seconds since the epoch.
  - TIME2: 3 bytes, ``0x800000 + (±(hour << 12 | minute << 6 | second))``; a
    negative time with a fraction stores the next integer second down and the
    fraction's complement, so that the bytes sort like the times.

  Less their offsets, the integer parts of DATETIME2 and TIME2 are those of
  MySQL's packed DATETIME and TIME (my_time.cc: the integer part shifted left
  24 bits, plus the microseconds). MySQL's binary JSON stores DATE, DATETIME
  and TIMESTAMP (in local time) as a packed DATETIME, and TIME as a packed
  TIME, each an 8-byte little-endian signed integer; :func:`pack_datetime`,
  :func:`unpack_datetime`, :func:`pack_time` and :func:`unpack_time` serve
  both.

Values:

- YEAR: ``int`` (0, or 1901-2155).
- DATE: ``datetime.date``; DATETIME: naive ``datetime.datetime``. A value
  Python cannot hold (the zero date, a zero month or day, February 30 under
  ALLOW_INVALID_DATES) is an :class:`InvalidDate` / :class:`InvalidDateTime`
  with the stored fields, so nothing is lost.
- TIME: ``datetime.timedelta`` (negative for negative times, up to ±838:59:59.999999).
- TIMESTAMP: an aware ``datetime.datetime`` in ``DecodeOptions.timezone``
  (UTC when unset); MySQL stores TIMESTAMP as a UTC instant, so the zone only
  changes how the instant is shown. The zero TIMESTAMP decodes to
  :data:`ZERO_DATETIME` (``0000-00-00 00:00:00``).

Raw mode gives the stored number: YEAR the byte, DATE the 3-byte number, TIME
the signed HHMMSS number, DATETIME the YYYYMMDDhhmmss number, TIMESTAMP the
seconds, and for TIME2, DATETIME2 and TIMESTAMP2 all their bytes (integer part
and fraction) read as one unsigned big-endian number.

Encoders take the same values. A naive datetime given to a TIMESTAMP encoder
is read in ``DecodeOptions.timezone`` (UTC when unset).

MariaDB 5.3-10.0 wrote TIME(n), DATETIME(n) and TIMESTAMP(n) columns with a
fraction under the old type codes and without metadata (before
``mysql56_temporal_format``); their width cannot be told from the binlog, so
such columns decode wrongly, as they do with mariadb-binlog.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta, tzinfo
from functools import partial
from typing import Any, ClassVar

from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.rows.columns import (
    ColumnCodec,
    ColumnInfo,
    DateTime2Form,
    ValueDecoder,
    ValueEncoder,
    ValueLayout,
    ValuePacking,
    column_codec,
)
from binlogkit.binlog.rows.types._base import (
    fixed_encoder,
    invalid,
    layout_decoder,
    packing_encoder,
    unencodable,
)
from binlogkit.binlog.rows.types.values import ZERO_DATETIME, InvalidDate, InvalidDateTime
from binlogkit.errors import DecodeError

_U8 = struct.Struct("<B")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_from_bytes = int.from_bytes
_be_int = partial(_from_bytes, byteorder="big")

_DATETIMEF_OFFSET = 0x8000000000
_TIMEF_INT_OFFSET = 0x800000
_TIMEF_OFFSET = 0x800000000000

# Fraction bytes of a *2 type by fsp, and the microseconds one stored unit is worth.
_FRACTION_BYTES = (0, 1, 1, 2, 2, 3, 3)
_FRACTION_UNIT = {0: 1_000_000, 1: 10_000, 2: 100, 3: 1}
_FRACTION_LIMIT = {0: 0, 1: 99, 2: 9_999, 3: 999_999}


def pack_datetime(year: int, month: int, day: int, hour: int, minute: int, second: int) -> int:
    """The integer part of MySQL's packed DATETIME (the packed value shifted right 24 bits)."""
    return ((year * 13 + month) << 5 | day) << 17 | hour << 12 | minute << 6 | second


def unpack_datetime(packed: int, microsecond: int) -> datetime | InvalidDateTime:
    """The DATETIME of a :func:`pack_datetime` integer part and ``microsecond``; an
    :class:`InvalidDateTime` where ``datetime`` cannot hold it."""
    ymd, hms = packed >> 17, packed & 0x1FFFF
    year_month = ymd >> 5
    year, month, day = year_month // 13, year_month % 13, ymd & 31
    hour, minute, second = hms >> 12, hms >> 6 & 63, hms & 63
    try:
        return datetime(year, month, day, hour, minute, second, microsecond)
    except ValueError:
        return InvalidDateTime(year, month, day, hour, minute, second, microsecond)


def pack_time(negative: bool, hours: int, minutes: int, seconds: int, microseconds: int) -> int:
    """MySQL's packed TIME: ``±((hours << 12 | minutes << 6 | seconds) << 24 | microseconds)``."""
    packed = (hours << 12 | minutes << 6 | seconds) << 24 | microseconds
    return -packed if negative else packed


def unpack_time(packed: int) -> tuple[bool, int, int, int, int]:
    """(negative, hours, minutes, seconds, microseconds) of a :func:`pack_time` value."""
    negative = packed < 0
    if negative:
        packed = -packed
    hms = packed >> 24
    return negative, hms >> 12, hms >> 6 & 63, hms & 63, packed & 0xFFFFFF


def _fsp(col: ColumnInfo, what: str) -> int:
    if not 0 <= col.meta <= 6:
        raise invalid(col, f"{what} fractional precision {col.meta} (0-6 expected)")
    return col.meta


def _zone(options: DecodeOptions) -> tzinfo:
    return options.timezone if options.timezone is not None else UTC


def _raw_be_encoder(col: ColumnInfo, size: int, what: str) -> ValueEncoder:
    def encode(value: Any, out: bytearray) -> None:
        try:
            out += value.to_bytes(size, "big")
        except (AttributeError, OverflowError):
            raise unencodable(col, value, f"raw {what} takes an int of {size} bytes") from None

    return encode


def _check_fraction(col: ColumnInfo, value: Any, microsecond: int, unit: int) -> int:
    if microsecond % unit:
        raise unencodable(col, value, f"the column keeps microseconds in steps of {unit}")
    return microsecond // unit


@column_codec(ColumnType.YEAR)
class YearCodec(ColumnCodec):
    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        return layout_decoder(col, cls.layout(col, options), "YEAR")

    @classmethod
    def layout(cls, col: ColumnInfo, options: DecodeOptions) -> ValueLayout:
        if options.raw_values:
            return ValueLayout("B")
        return ValueLayout("B", convert=lambda b: b + 1900 if b else 0)

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        if options.raw_values:
            return fixed_encoder(col, _U8, "YEAR")

        def encode(value: Any, out: bytearray) -> None:
            if value == 0:
                out.append(0)
            elif isinstance(value, int) and 1901 <= value <= 2155:
                out.append(value - 1900)
            else:
                raise unencodable(col, value, "YEAR is 0 or 1901-2155")

        return encode


@column_codec(ColumnType.DATE, ColumnType.NEWDATE)
class DateCodec(ColumnCodec):
    """DATE; NEWDATE is the same 3-byte layout."""

    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        return layout_decoder(col, cls.layout(col, options), "DATE")

    @classmethod
    def layout(cls, col: ColumnInfo, options: DecodeOptions) -> ValueLayout:
        if options.raw_values:
            return ValueLayout("3s", convert=lambda data: _from_bytes(data, "little"))

        def convert(data: bytes) -> date | InvalidDate:
            packed = _from_bytes(data, "little")
            year, month, day = packed >> 9, packed >> 5 & 15, packed & 31
            try:
                return date(year, month, day)
            except ValueError:
                return InvalidDate(year, month, day)

        return ValueLayout("3s", convert=convert)

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        raw = options.raw_values

        def encode(value: Any, out: bytearray) -> None:
            if raw:
                packed = value
            elif isinstance(value, date | InvalidDate) and not isinstance(value, datetime):
                if not (
                    0 <= value.year < 1 << 15 and 0 <= value.month < 16 and 0 <= value.day < 32
                ):
                    raise unencodable(col, value, "a field is out of the DATE layout's range")
                packed = value.year << 9 | value.month << 5 | value.day
            else:
                raise unencodable(col, value, "DATE takes a date or an InvalidDate")
            try:
                out += packed.to_bytes(3, "little")
            except (AttributeError, OverflowError):
                raise unencodable(col, value, "raw DATE takes a 3-byte int") from None

        return encode


def _split_hms(col: ColumnInfo, value: Any) -> tuple[bool, int, int, int, int]:
    """A timedelta as (negative, hours, minutes, seconds, microseconds)."""
    if not isinstance(value, timedelta):
        raise unencodable(col, value, "TIME takes a timedelta")
    total = value // _MICROSECOND
    negative = total < 0
    seconds, microsecond = divmod(-total if negative else total, 1_000_000)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return negative, hours, minutes, seconds, microsecond


@column_codec(ColumnType.TIME)
class TimeCodec(ColumnCodec):
    """The old TIME: a signed decimal HHMMSS number."""

    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        return layout_decoder(col, cls.layout(col, options), "TIME")

    @classmethod
    def layout(cls, col: ColumnInfo, options: DecodeOptions) -> ValueLayout:
        if options.raw_values:
            return ValueLayout("3s", convert=lambda data: _from_bytes(data, "little", signed=True))

        def convert(data: bytes) -> timedelta:
            number = _from_bytes(data, "little", signed=True)
            hours, rest = divmod(abs(number), 10000)
            minutes, seconds = divmod(rest, 100)
            if minutes > 59 or seconds > 59:
                raise DecodeError(
                    f"column {col.key}: {number} is not an old-format TIME (a TIME(n) with a "
                    "fraction from MariaDB before mysql56_temporal_format is logged under "
                    "this type without its width, and cannot be read)"
                )
            delta = timedelta(hours=hours, minutes=minutes, seconds=seconds)
            return -delta if number < 0 else delta

        return ValueLayout("3s", convert=convert)

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        raw = options.raw_values

        def encode(value: Any, out: bytearray) -> None:
            if raw:
                number = value
            else:
                negative, hours, minutes, seconds, microsecond = _split_hms(col, value)
                if microsecond:
                    raise unencodable(col, value, "the old TIME has no fraction of a second")
                number = hours * 10000 + minutes * 100 + seconds
                if negative:
                    number = -number
            try:
                out += number.to_bytes(3, "little", signed=True)
            except (AttributeError, OverflowError):
                raise unencodable(col, value, "out of the TIME range") from None

        return encode


@column_codec(ColumnType.TIME2)
class Time2Codec(ColumnCodec):
    meta_length: ClassVar[int] = 1

    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        return layout_decoder(col, cls.layout(col, options), "TIME")

    @classmethod
    def layout(cls, col: ColumnInfo, options: DecodeOptions) -> ValueLayout:
        fsp = _fsp(col, "TIME")
        fbytes = _FRACTION_BYTES[fsp]
        fmt = f"{3 + fbytes}s"
        if options.raw_values:
            return ValueLayout(fmt, convert=_be_int)
        unit = _FRACTION_UNIT[fbytes]
        complement = 1 << (8 * fbytes)
        frac_bits = 8 * fbytes

        def convert(data: bytes) -> timedelta:
            whole = _from_bytes(data, "big")
            if fbytes == 3:
                packed = whole - _TIMEF_OFFSET
            else:
                intpart = (whole >> frac_bits) - _TIMEF_INT_OFFSET
                frac = whole & (complement - 1)
                if intpart < 0 and frac:
                    intpart += 1
                    frac -= complement
                packed = (intpart << 24) + frac * unit
            negative, hours, minutes, seconds, microsecond = unpack_time(packed)
            if hours > 1023 or minutes > 59 or seconds > 59 or microsecond > 999_999:
                raise DecodeError(f"column {col.key}: bytes {data.hex()} are not a TIME")
            delta = timedelta(
                hours=hours, minutes=minutes, seconds=seconds, microseconds=microsecond
            )
            return -delta if negative else delta

        return ValueLayout(fmt, convert=convert)

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        fsp = _fsp(col, "TIME")
        fbytes = _FRACTION_BYTES[fsp]
        size = 3 + fbytes
        if options.raw_values:
            return _raw_be_encoder(col, size, "TIME")
        unit = _FRACTION_UNIT[fbytes]
        complement = 1 << (8 * fbytes)

        def encode(value: Any, out: bytearray) -> None:
            negative, hours, minutes, seconds, microsecond = _split_hms(col, value)
            if hours > 1023:
                raise unencodable(col, value, "more hours than TIME can hold")
            frac = _check_fraction(col, value, microsecond, unit)
            if fbytes == 3:
                whole = pack_time(negative, hours, minutes, seconds, microsecond) + _TIMEF_OFFSET
            else:
                intpart = pack_time(negative, hours, minutes, seconds, 0) >> 24
                if negative and frac:
                    intpart -= 1
                    frac = complement - frac
                whole = (intpart + _TIMEF_INT_OFFSET) << (8 * fbytes) | frac
            out += whole.to_bytes(size, "big")

        return encode


def _datetime_from_fields(
    year: int, month: int, day: int, hour: int, minute: int, second: int, microsecond: int
) -> datetime | InvalidDateTime:
    try:
        return datetime(year, month, day, hour, minute, second, microsecond)
    except ValueError:
        return InvalidDateTime(year, month, day, hour, minute, second, microsecond)


def _datetime_fields(col: ColumnInfo, value: Any) -> tuple[int, int, int, int, int, int, int]:
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            raise unencodable(col, value, "DATETIME takes a naive datetime")
    elif not isinstance(value, InvalidDateTime):
        raise unencodable(col, value, "DATETIME takes a datetime or an InvalidDateTime")
    return (
        value.year,
        value.month,
        value.day,
        value.hour,
        value.minute,
        value.second,
        value.microsecond,
    )


@column_codec(ColumnType.DATETIME)
class DateTimeCodec(ColumnCodec):
    """The old DATETIME: the decimal number YYYYMMDDhhmmss."""

    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        return layout_decoder(col, cls.layout(col, options), "DATETIME")

    @classmethod
    def layout(cls, col: ColumnInfo, options: DecodeOptions) -> ValueLayout:
        if options.raw_values:
            return ValueLayout("Q")

        def convert(number: int) -> Any:
            day_part, time_part = divmod(number, 1_000_000)
            year, month_day = divmod(day_part, 10_000)
            month, day = divmod(month_day, 100)
            hour, minute_second = divmod(time_part, 10_000)
            minute, second = divmod(minute_second, 100)
            return _datetime_from_fields(year, month, day, hour, minute, second, 0)

        return ValueLayout("Q", convert=convert)

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        if options.raw_values:
            return fixed_encoder(col, _U64, "DATETIME")
        pack = _U64.pack

        def encode(value: Any, out: bytearray) -> None:
            year, month, day, hour, minute, second, micro = _datetime_fields(col, value)
            if micro or max(month, day, hour, minute, second) > 99 or year < 0:
                raise unencodable(col, value, "out of the old DATETIME layout's range")
            number = (
                year * 10**10 + month * 10**8 + day * 10**6 + hour * 10**4 + minute * 100 + second
            )
            try:
                out += pack(number)
            except struct.error:
                raise unencodable(col, value, "out of the old DATETIME layout's range") from None

        return encode


@column_codec(ColumnType.DATETIME2)
class DateTime2Codec(ColumnCodec):
    meta_length: ClassVar[int] = 1

    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        return layout_decoder(col, cls.layout(col, options), "DATETIME")

    @classmethod
    def layout(cls, col: ColumnInfo, options: DecodeOptions) -> ValueLayout:
        fsp = _fsp(col, "DATETIME")
        fbytes = _FRACTION_BYTES[fsp]
        fmt = f"{5 + fbytes}s"
        if options.raw_values:
            return ValueLayout(fmt, convert=_be_int)
        unit = _FRACTION_UNIT[fbytes]
        limit = _FRACTION_LIMIT[fbytes]
        frac_bits = 8 * fbytes
        frac_mask = (1 << frac_bits) - 1

        def convert(data: bytes) -> datetime | InvalidDateTime:
            whole = _from_bytes(data, "big")
            packed = (whole >> frac_bits) - _DATETIMEF_OFFSET
            frac = whole & frac_mask
            if packed < 0 or frac > limit:
                raise DecodeError(f"column {col.key}: bytes {data.hex()} are not a DATETIME")
            return unpack_datetime(packed, frac * unit)

        return ValueLayout(fmt, convert=convert, form=DateTime2Form(fbytes))

    @classmethod
    def packing(cls, col: ColumnInfo, options: DecodeOptions) -> ValuePacking | None:
        if options.raw_values:
            return None
        fsp = _fsp(col, "DATETIME")
        fbytes = _FRACTION_BYTES[fsp]
        size = 5 + fbytes
        unit = _FRACTION_UNIT[fbytes]
        frac_bits = 8 * fbytes

        def to_field(value: Any) -> bytes:
            if type(value) is datetime and value.tzinfo is None and not value.microsecond % unit:
                # a naive datetime's fields are all in the layout's ranges
                packed = (
                    ((value.year * 13 + value.month) << 5 | value.day) << 17
                    | value.hour << 12
                    | value.minute << 6
                    | value.second
                )
                whole = (packed + _DATETIMEF_OFFSET) << frac_bits | value.microsecond // unit
                return whole.to_bytes(size, "big")
            year, month, day, hour, minute, second, micro = _datetime_fields(col, value)
            if not (
                0 <= month <= 12
                and 0 <= day < 32
                and 0 <= hour < 32
                and 0 <= minute < 64
                and 0 <= second < 64
                and 0 <= year * 13 + month < 1 << 17
                and 0 <= micro <= 999_999
            ):
                raise unencodable(col, value, "a field is out of the DATETIME layout's range")
            frac = _check_fraction(col, value, micro, unit)
            packed = pack_datetime(year, month, day, hour, minute, second)
            return ((packed + _DATETIMEF_OFFSET) << frac_bits | frac).to_bytes(size, "big")

        return ValuePacking("DATETIME", f"{size}s", to_field=to_field)

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        packing = cls.packing(col, options)
        if packing is None:
            size = 5 + _FRACTION_BYTES[_fsp(col, "DATETIME")]
            return _raw_be_encoder(col, size, "DATETIME")
        return packing_encoder(col, packing)


def _timestamp_encoder(
    col: ColumnInfo, options: DecodeOptions, write: Callable[[int, int, bytearray], None]
) -> ValueEncoder:
    """An encoder turning a TIMESTAMP value into (seconds, microseconds) for ``write``."""
    zone = _zone(options)

    def encode(value: Any, out: bytearray) -> None:
        if isinstance(value, InvalidDateTime):
            if not value.is_zero:
                raise unencodable(col, value, "the only invalid TIMESTAMP is the zero one")
            write(0, 0, out)
            return
        if not isinstance(value, datetime):
            raise unencodable(col, value, "TIMESTAMP takes a datetime")
        if value.tzinfo is None:
            value = value.replace(tzinfo=zone)
        seconds, microsecond = divmod((value - _EPOCH) // _MICROSECOND, 1_000_000)
        if not 0 <= seconds < 1 << 32:
            raise unencodable(col, value, "outside the TIMESTAMP range")
        write(seconds, microsecond, out)

    return encode


@column_codec(ColumnType.TIMESTAMP)
class TimestampCodec(ColumnCodec):
    """The old TIMESTAMP: whole seconds since the epoch."""

    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        return layout_decoder(col, cls.layout(col, options), "TIMESTAMP")

    @classmethod
    def layout(cls, col: ColumnInfo, options: DecodeOptions) -> ValueLayout:
        if options.raw_values:
            return ValueLayout("I")
        zone = _zone(options)
        from_timestamp = datetime.fromtimestamp
        return ValueLayout("I", convert=lambda s: from_timestamp(s, zone) if s else ZERO_DATETIME)

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        if options.raw_values:
            return fixed_encoder(col, _U32, "TIMESTAMP")

        def write(seconds: int, microsecond: int, out: bytearray) -> None:
            if microsecond:
                raise unencodable(col, seconds, "the old TIMESTAMP has no fraction of a second")
            out += _U32.pack(seconds)

        return _timestamp_encoder(col, options, write)


@column_codec(ColumnType.TIMESTAMP2)
class Timestamp2Codec(ColumnCodec):
    meta_length: ClassVar[int] = 1

    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        return layout_decoder(col, cls.layout(col, options), "TIMESTAMP")

    @classmethod
    def layout(cls, col: ColumnInfo, options: DecodeOptions) -> ValueLayout:
        fsp = _fsp(col, "TIMESTAMP")
        fbytes = _FRACTION_BYTES[fsp]
        fmt = f"{4 + fbytes}s"
        if options.raw_values:
            return ValueLayout(fmt, convert=_be_int)
        unit = _FRACTION_UNIT[fbytes]
        limit = _FRACTION_LIMIT[fbytes]
        frac_bits = 8 * fbytes
        frac_mask = (1 << frac_bits) - 1
        zone = _zone(options)
        from_timestamp = datetime.fromtimestamp

        def convert(data: bytes) -> datetime | InvalidDateTime:
            whole = _from_bytes(data, "big")
            if not whole:
                return ZERO_DATETIME
            frac = whole & frac_mask
            if frac > limit:
                raise DecodeError(f"column {col.key}: bytes {data.hex()} are not a TIMESTAMP")
            value = from_timestamp(whole >> frac_bits, zone)
            return value.replace(microsecond=frac * unit) if frac else value

        return ValueLayout(fmt, convert=convert)

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        fsp = _fsp(col, "TIMESTAMP")
        fbytes = _FRACTION_BYTES[fsp]
        size = 4 + fbytes
        if options.raw_values:
            return _raw_be_encoder(col, size, "TIMESTAMP")
        unit = _FRACTION_UNIT[fbytes]
        frac_bits = 8 * fbytes

        def write(seconds: int, microsecond: int, out: bytearray) -> None:
            frac = _check_fraction(col, seconds, microsecond, unit)
            out += (seconds << frac_bits | frac).to_bytes(size, "big")

        return _timestamp_encoder(col, options, write)
