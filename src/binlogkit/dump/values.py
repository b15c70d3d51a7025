"""Column values as ``mysqlbinlog -v`` prints them, read straight from the row image bytes.

The tools print a value from its bytes in the row image, not from a decoded
value (the servers' ``log_event_print_value``), so this module does the same:
for each column of a table map, :func:`value_printer` builds once a function
``(buf, pos) -> (text, next_pos)`` and the ``-vv`` type name. Printers are
registered per column type with :func:`printer_for`.

``meta`` here is the metadata as the tools' ``table_def`` holds it (see
:func:`table_def_metas`), which is what ``-vv`` prints after ``meta=``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from binlogkit.binlog.constants import ColumnType as CT
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.rows.types.decimal import decimal_size
from binlogkit.errors import DecodeError

__all__ = [
    "MYSQL_QUOTES",
    "QUOTES",
    "ColumnPrinter",
    "DecimalLayout",
    "PrintFn",
    "decimal_layout",
    "mysql_quoted",
    "quoted",
    "table_def_metas",
    "value_printer",
]

PrintFn = Callable[[bytes, int], tuple[str, int]]
"""Prints the value at ``buf[pos:]``: its text and the offset after it."""


@frozen_dataclass
class ColumnPrinter:
    """How one column prints: its ``-vv`` type name, table_def metadata and value printer."""

    typestr: str
    meta: int
    nullable: bool
    print: PrintFn
    sized: bool = True
    """Whether the tools' row counter knows this type's size (calc_field_event_length)."""
    code: int = 0
    """The column's type as the tools see it (ENUM and SET, not the STRING they are logged as)."""
    width: int = 0
    """The value's size in bytes when it is fixed and the printer reads exactly that, else 0."""
    prefix: int = 0
    """For a string: the size of its length prefix (its printer is :func:`quoted`), else 0."""
    mysql: bool = False
    """Strings are quoted as mysqlbinlog quotes them (:func:`mysql_quoted`), not mariadb-binlog."""


Builder = Callable[[int, int], tuple[str, PrintFn]]
"""``(type, meta) -> (typestr, printer)``."""

_PRINTERS: dict[int, Builder] = {}


def printer_for(*types: int) -> Callable[[Builder], Builder]:
    """Decorator: the printer builder of the given column types."""

    def mark(fn: Builder) -> Builder:
        for code in types:
            _PRINTERS[code] = fn
        return fn

    return mark


# -- table_def metadata --------------------------------------------------------------

_ONE_BYTE = frozenset(
    {
        CT.TINY_BLOB,
        CT.BLOB,
        CT.MEDIUM_BLOB,
        CT.LONG_BLOB,
        CT.DOUBLE,
        CT.FLOAT,
        CT.GEOMETRY,
        CT.BLOB_COMPRESSED,
        CT.TIME2,
        CT.DATETIME2,
        CT.TIMESTAMP2,
        CT.JSON,
        CT.VECTOR,
    }
)
_BIG_ENDIAN_TWO = frozenset({CT.SET, CT.ENUM, CT.STRING, CT.NEWDECIMAL})
_LITTLE_ENDIAN_TWO = frozenset({CT.VARCHAR, CT.VARCHAR_COMPRESSED, CT.VAR_STRING})


def table_def_metas(column_types: bytes, metadata: bytes | None) -> list[int]:
    """Each column's metadata as the tools' ``table_def`` reads it from a table map."""
    metas: list[int] = []
    data = metadata or b""
    pos = 0
    for code in column_types:
        if code in _ONE_BYTE:
            meta = data[pos] if pos < len(data) else 0
            pos += 1
        elif code in _BIG_ENDIAN_TWO:
            meta = int.from_bytes(data[pos : pos + 2], "big")
            pos += 2
        elif code == CT.BIT:
            meta = data[pos] | data[pos + 1] << 8 if pos + 1 < len(data) else 0
            pos += 2
        elif code in _LITTLE_ENDIAN_TWO:
            meta = int.from_bytes(data[pos : pos + 2], "little")
            pos += 2
        else:
            meta = 0
        metas.append(meta)
    return metas


def value_printer(
    code: int, meta: int, nullable: bool, *, mysql: bool = False, dimensions: int = 0
) -> ColumnPrinter:
    """The printer of a column of type ``code`` with table_def metadata ``meta``.

    ``mysql``: print as MySQL 8's mysqlbinlog (strings quoted by :func:`mysql_quoted`);
    ``dimensions``: a VECTOR column's dimensionality (table map metadata), for ``-vv``.
    """
    length = 0
    if code == CT.STRING and meta >> 8 in (CT.ENUM, CT.SET):
        code = meta >> 8  # table_def::type(): ENUM and SET are logged as STRING
    if code == CT.STRING:
        if meta >= 256:
            byte0, byte1 = meta >> 8, meta & 0xFF
            if byte0 & 0x30 != 0x30:  # a long CHAR(): length bits live in byte0
                length = byte1 | ((byte0 & 0x30) ^ 0x30) << 4
                code = byte0 | 0x30
            else:
                length = byte1
        else:
            length = meta
    if code == CT.STRING:
        typestr, fn = _string(length)
        prefix = 1 if length < 256 else 2
    else:
        builder = _PRINTERS.get(code)
        if builder is None:
            typestr, fn = "", _unprintable(code, meta)
        else:
            typestr, fn = builder(code, meta)
        prefix = _prefix_size(code, meta)
    if code == CT.VECTOR:
        typestr = f"VECTOR({dimensions})"
    if mysql and prefix:
        fn = _prefixed(prefix, mysql_quoted)
    elif mysql and code == CT.GEOMETRY:
        fn = _geometry_printer(meta, mysql_quoted)
    return ColumnPrinter(
        typestr,
        meta,
        nullable,
        fn,
        code in _SIZED,
        code,
        _fixed_width(code, meta),
        prefix,
        mysql,
    )


_FIXED: dict[int, int] = {
    CT.TINY: 1,
    CT.SHORT: 2,
    CT.INT24: 3,
    CT.LONG: 4,
    CT.LONGLONG: 8,
    CT.FLOAT: 4,
    CT.DOUBLE: 8,
    CT.YEAR: 1,
    CT.DATE: 3,
    CT.NEWDATE: 3,
    CT.TIME: 3,
    CT.TIMESTAMP: 4,
    CT.DATETIME: 8,
}
_FRACTIONAL: dict[int, int] = {CT.TIMESTAMP2: 4, CT.DATETIME2: 5, CT.TIME2: 3}


def _fixed_width(code: int, meta: int) -> int:
    """What :attr:`ColumnPrinter.width` says of a column (0: not fixed, or the printer fails)."""
    if code in _FIXED:
        return _FIXED[code]
    if code in _FRACTIONAL:
        return _FRACTIONAL[code] + _FRAC_BYTES[meta] if meta <= 6 else 0
    if code == CT.NEWDECIMAL:
        precision, scale = meta >> 8, meta & 0xFF
        return decimal_size(precision, scale) if precision >= scale else 0
    if code == CT.BIT:
        return ((meta >> 8) * 8 + (meta & 0xFF) + 7) // 8
    if code == CT.ENUM:
        return meta & 0xFF if meta & 0xFF in (1, 2) else 0
    if code == CT.SET:
        return meta & 0xFF
    return 0


def _prefix_size(code: int, meta: int) -> int:
    """What :attr:`ColumnPrinter.prefix` says of a column that is not a CHAR."""
    if code in (CT.VARCHAR, CT.VAR_STRING, CT.VARCHAR_COMPRESSED):
        return 1 if meta < 256 else 2
    if code in _BLOB_TYPES and meta in _BLOB_NAMES:
        return meta
    return 0


_SIZED = frozenset(
    {
        CT.LONG,
        CT.TIMESTAMP,
        CT.TINY,
        CT.YEAR,
        CT.SHORT,
        CT.INT24,
        CT.TIME,
        CT.NEWDATE,
        CT.DATE,
        CT.LONGLONG,
        CT.DATETIME,
        CT.NEWDECIMAL,
        CT.FLOAT,
        CT.DOUBLE,
        CT.BIT,
        CT.TIMESTAMP2,
        CT.DATETIME2,
        CT.TIME2,
        CT.ENUM,
        CT.SET,
        CT.BLOB,
        CT.VARCHAR,
        CT.VAR_STRING,
        CT.STRING,
    }
)


def _unprintable(code: int, meta: int) -> PrintFn:
    def fail(buf: bytes, pos: int) -> tuple[str, int]:
        raise DecodeError(f"Don't know how to handle column type: {code} meta: {meta} ({meta:04x})")

    return fail


# -- quoting ----------------------------------------------------------------------------

QUOTES = {c: f"\\x{c:02x}" for c in range(0x20)}
"""The ``str.translate`` table of :func:`quoted`: characters below 0x20 as ``\\xNN``."""


def quoted(raw: bytes) -> str:
    """``'...'`` with bytes below 0x20 as ``\\xNN`` and the rest as they are.

    Undecodable bytes come out as surrogate escapes, so writing the text with
    ``surrogateescape`` gives back the very bytes (the tools write raw bytes).
    """
    text = raw.decode("utf-8", "surrogateescape")
    if not text.isprintable():
        text = text.translate(QUOTES)
    return "'" + text + "'"


MYSQL_QUOTES = {
    **QUOTES,
    0x08: "\\b",
    0x09: "\\t",
    0x0A: "\\n",
    0x0C: "\\f",
    0x0D: "\\r",
    0x27: "\\'",
    0x5C: "\\\\",
}
"""The ``str.translate`` table of :func:`mysql_quoted` (MySQL 8's quote table)."""


def mysql_quoted(raw: bytes) -> str:
    """``'...'`` as MySQL 8's mysqlbinlog quotes (``my_b_write_quoted``, its quote table).

    Like :func:`quoted`, but backspace, tab, newline, form feed, carriage return,
    the quote and the backslash come out as C-style escapes (``\\n``, ``\\'`` ...).
    """
    return "'" + raw.decode("utf-8", "surrogateescape").translate(MYSQL_QUOTES) + "'"


# -- integers -------------------------------------------------------------------------


def _int_printer(size: int, name: str) -> tuple[str, PrintFn]:
    bits = size * 8
    half = 1 << (bits - 1)
    full = 1 << bits
    if size == 3:

        def read3(buf: bytes, pos: int) -> tuple[str, int]:
            u = buf[pos] | buf[pos + 1] << 8 | buf[pos + 2] << 16
            end = pos + 3
            if u >= half:
                return f"{u - full} ({u})", end
            return str(u), end

        return name, read3
    unpack = struct.Struct("<" + {1: "B", 2: "H", 4: "I", 8: "Q"}[size]).unpack_from

    def read(buf: bytes, pos: int) -> tuple[str, int]:
        (u,) = unpack(buf, pos)
        end = pos + size
        if u >= half:
            return f"{u - full} ({u})", end
        return str(u), end

    return name, read


@printer_for(CT.TINY)
def _tiny(code: int, meta: int) -> tuple[str, PrintFn]:
    return _int_printer(1, "TINYINT")


@printer_for(CT.SHORT)
def _short(code: int, meta: int) -> tuple[str, PrintFn]:
    return _int_printer(2, "SHORTINT")


@printer_for(CT.INT24)
def _int24(code: int, meta: int) -> tuple[str, PrintFn]:
    return _int_printer(3, "MEDIUMINT")


@printer_for(CT.LONG)
def _long(code: int, meta: int) -> tuple[str, PrintFn]:
    return _int_printer(4, "INT")


@printer_for(CT.LONGLONG)
def _longlong(code: int, meta: int) -> tuple[str, PrintFn]:
    return _int_printer(8, "LONGINT")


# -- decimals and floats -----------------------------------------------------------------

_DIGIT_BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


@frozen_dataclass
class DecimalLayout:
    """How a DECIMAL(precision, scale) value sits in its bytes, read as one big-endian number.

    Each group of up to nine digits is a slice of the number's bits: ``(shift, mask)``;
    the digits print with ``whole_format`` and ``frac_format`` (``%`` formats).
    """

    size: int
    sign: int
    whole_format: str
    whole_shifts: tuple[tuple[int, int], ...]
    frac_format: str
    frac_shifts: tuple[tuple[int, int], ...]


def decimal_layout(precision: int, scale: int) -> DecimalLayout:
    """The layout of a DECIMAL(precision, scale) value (size 0: not a valid declaration)."""
    intg = precision - scale
    whole: list[tuple[int, int]] = []  # (digits, bytes) of each group, most significant first
    if intg % 9:
        whole.append((intg % 9, _DIGIT_BYTES[intg % 9]))
    whole += [(9, 4)] * (intg // 9)
    frac = [(9, 4)] * (scale // 9)
    if scale % 9:
        frac.append((scale % 9, _DIGIT_BYTES[scale % 9]))
    size = decimal_size(precision, scale) if precision >= scale else 0
    shifts: list[tuple[int, int]] = []
    left = size
    for _, nbytes in whole + frac:
        left -= nbytes
        shifts.append((left * 8, (1 << nbytes * 8) - 1))
    return DecimalLayout(
        size,
        1 << (size * 8 - 1) if size else 0,
        "".join(f"%0{digits}d" for digits, _ in whole),
        tuple(shifts[: len(whole)]),
        "." + "".join(f"%0{digits}d" for digits, _ in frac) if scale else "",
        tuple(shifts[len(whole) :]),
    )


@printer_for(CT.NEWDECIMAL)
def _newdecimal(code: int, meta: int) -> tuple[str, PrintFn]:
    precision, scale = meta >> 8, meta & 0xFF
    layout = decimal_layout(precision, scale)
    size, sign = layout.size, layout.sign
    whole_format, whole_shifts = layout.whole_format, layout.whole_shifts
    frac_format, frac_shifts = layout.frac_format, layout.frac_shifts
    ones = (1 << size * 8) - 1

    def read(buf: bytes, pos: int) -> tuple[str, int]:
        end = pos + size
        if end > len(buf) or size == 0:
            raise DecodeError(f"DECIMAL({precision},{scale}) value runs past the row")
        value = int.from_bytes(buf[pos:end], "big") ^ sign
        negative = value & sign  # the sign bit was clear: a negative number, stored inverted
        if negative:
            value ^= ones
        text = (whole_format % tuple([value >> s & m for s, m in whole_shifts])).lstrip("0") or "0"
        if scale:
            text += frac_format % tuple([value >> s & m for s, m in frac_shifts])
        return ("-" + text if negative else text), end

    return f"DECIMAL({precision},{scale})", read


_FLOAT = struct.Struct("<f").unpack_from
_DOUBLE = struct.Struct("<d").unpack_from


def c_g(value: float, spec: str) -> str:
    """``value`` formatted like C's printf ``%g`` family (``spec`` without the %)."""
    text = format(value, spec)
    if value != value:  # NaN: glibc prints the sign
        return text.replace("nan", "-nan" if struct.pack("<d", value)[7] & 0x80 else "nan")
    return text


@printer_for(CT.FLOAT)
def _float(code: int, meta: int) -> tuple[str, PrintFn]:
    def read(buf: bytes, pos: int) -> tuple[str, int]:
        return c_g(_FLOAT(buf, pos)[0], "<20g"), pos + 4

    return "FLOAT", read


@printer_for(CT.DOUBLE)
def _double(code: int, meta: int) -> tuple[str, PrintFn]:
    def read(buf: bytes, pos: int) -> tuple[str, int]:
        return c_g(_DOUBLE(buf, pos)[0], ".20g"), pos + 8

    return "DOUBLE", read


@printer_for(CT.BIT)
def _bit(code: int, meta: int) -> tuple[str, PrintFn]:
    nbits = (meta >> 8) * 8 + (meta & 0xFF)
    size = (nbits + 7) // 8

    def read(buf: bytes, pos: int) -> tuple[str, int]:
        bits = f"{int.from_bytes(buf[pos : pos + size], 'big'):0{size * 8}b}"
        return f"b'{bits[size * 8 - nbits :]}'", pos + size

    return f"BIT({nbits})", read


# -- temporal ---------------------------------------------------------------------------


def _fraction(usec: int, dec: int) -> str:
    return "." + f"{usec:06d}"[:dec] if dec else ""


_FRAC_BYTES = (0, 1, 1, 2, 2, 3, 3)


def _read_frac(buf: bytes, pos: int, dec: int) -> int:
    """The fraction of a TIMESTAMP2/DATETIME2 as microseconds (unsigned reading)."""
    n = _FRAC_BYTES[dec]
    if n == 0:
        return 0
    value = int.from_bytes(buf[pos : pos + n], "big")
    return value * (10000, 100, 1)[n - 1]


@printer_for(CT.TIMESTAMP)
def _timestamp(code: int, meta: int) -> tuple[str, PrintFn]:
    def read(buf: bytes, pos: int) -> tuple[str, int]:
        value = int.from_bytes(buf[pos : pos + 4], "little")
        return str(value - (1 << 32) if value >= 1 << 31 else value), pos + 4

    return "TIMESTAMP", read


@printer_for(CT.TIMESTAMP2)
def _timestamp2(code: int, meta: int) -> tuple[str, PrintFn]:
    dec = meta
    size = 4 + _FRAC_BYTES[min(dec, 6)]

    def read(buf: bytes, pos: int) -> tuple[str, int]:
        seconds = int.from_bytes(buf[pos : pos + 4], "big")
        return str(seconds) + _fraction(_read_frac(buf, pos + 4, dec), dec), pos + size

    return f"TIMESTAMP({meta})", read


@printer_for(CT.DATETIME)
def _datetime(code: int, meta: int) -> tuple[str, PrintFn]:
    def read(buf: bytes, pos: int) -> tuple[str, int]:
        value = int.from_bytes(buf[pos : pos + 8], "little")
        d, t = divmod(value, 1_000_000)
        text = (
            f"'{d // 10000:04d}-{d % 10000 // 100:02d}-{d % 100:02d} "
            f"{t // 10000:02d}:{t % 10000 // 100:02d}:{t % 100:02d}'"
        )
        return text, pos + 8

    return "DATETIME", read


@printer_for(CT.DATETIME2)
def _datetime2(code: int, meta: int) -> tuple[str, PrintFn]:
    dec = meta
    size = 5 + _FRAC_BYTES[min(dec, 6)]

    def read(buf: bytes, pos: int) -> tuple[str, int]:
        packed = int.from_bytes(buf[pos : pos + 5], "big") - 0x8000000000
        ymd, hms = packed >> 17, packed & 0x1FFFF
        ym = ymd >> 5
        year, month, day = ym // 13, ym % 13, ymd & 31
        text = (
            f"'{year:04d}-{month:02d}-{day:02d} "
            f"{hms >> 12:02d}:{hms >> 6 & 63:02d}:{hms & 63:02d}"
            f"{_fraction(_read_frac(buf, pos + 5, dec), dec)}'"
        )
        return text, pos + size

    return f"DATETIME({meta})", read


@printer_for(CT.TIME)
def _time(code: int, meta: int) -> tuple[str, PrintFn]:
    def read(buf: bytes, pos: int) -> tuple[str, int]:
        value = int.from_bytes(buf[pos : pos + 3], "little", signed=True)
        sign, value = ("-", -value) if value < 0 else ("", value)
        text = f"'{sign}{value // 10000:02d}:{value % 10000 // 100:02d}:{value % 100:02d}'"
        return text, pos + 3

    return "TIME", read


@printer_for(CT.TIME2)
def _time2(code: int, meta: int) -> tuple[str, PrintFn]:
    dec = meta
    nfrac = _FRAC_BYTES[min(dec, 6)]

    def read(buf: bytes, pos: int) -> tuple[str, int]:
        intpart = int.from_bytes(buf[pos : pos + 3], "big") - 0x800000
        if nfrac == 3:
            packed = int.from_bytes(buf[pos : pos + 6], "big") - 0x800000000000
        else:
            frac = int.from_bytes(buf[pos + 3 : pos + 3 + nfrac], "big") if nfrac else 0
            if intpart < 0 and frac:
                intpart += 1
                frac -= 1 << (8 * nfrac)
            packed = (intpart << 24) + frac * (1, 10000, 100)[nfrac]
        sign = "-" if packed < 0 else ""
        packed = abs(packed)
        hms, usec = packed >> 24, packed % (1 << 24)
        text = (
            f"'{sign}{hms >> 12 & 1023:02d}:{hms >> 6 & 63:02d}:{hms & 63:02d}"
            f"{_fraction(usec, dec)}'"
        )
        return text, pos + 3 + nfrac

    return f"TIME({meta})", read


@printer_for(CT.DATE, CT.NEWDATE)
def _date(code: int, meta: int) -> tuple[str, PrintFn]:
    def read(buf: bytes, pos: int) -> tuple[str, int]:
        value = buf[pos] | buf[pos + 1] << 8 | buf[pos + 2] << 16
        return f"'{value // 512:04d}:{value // 32 % 16:02d}:{value % 32:02d}'", pos + 3

    return "DATE", read


@printer_for(CT.YEAR)
def _year(code: int, meta: int) -> tuple[str, PrintFn]:
    def read(buf: bytes, pos: int) -> tuple[str, int]:
        return f"{buf[pos] + 1900:04d}", pos + 1

    return "YEAR", read


# -- ENUM and SET ---------------------------------------------------------------------


@printer_for(CT.ENUM)
def _enum(code: int, meta: int) -> tuple[str, PrintFn]:
    size = meta & 0xFF
    if size not in (1, 2):
        return "", _unprintable(code, meta)

    def read(buf: bytes, pos: int) -> tuple[str, int]:
        return str(int.from_bytes(buf[pos : pos + size], "little")), pos + size

    return f"ENUM({size} byte{'s' if size == 2 else ''})", read


@printer_for(CT.SET)
def _set(code: int, meta: int) -> tuple[str, PrintFn]:
    size = meta & 0xFF

    def read(buf: bytes, pos: int) -> tuple[str, int]:
        return "b'" + "".join(f"{b:08b}" for b in buf[pos : pos + size]) + "'", pos + size

    return f"SET({size} bytes)", read


# -- strings ----------------------------------------------------------------------------


def _prefixed(prefix: int, quote: Callable[[bytes], str] = quoted) -> PrintFn:
    def read(buf: bytes, pos: int) -> tuple[str, int]:
        start = pos + prefix
        end = start + int.from_bytes(buf[pos:start], "little")
        if end > len(buf):
            raise DecodeError("string value runs past the row")
        return quote(buf[start:end]), end

    return read


def _string(length: int) -> tuple[str, PrintFn]:
    return f"STRING({length})", _prefixed(1 if length < 256 else 2)


@printer_for(CT.VARCHAR, CT.VAR_STRING, CT.VARCHAR_COMPRESSED)
def _varchar(code: int, meta: int) -> tuple[str, PrintFn]:
    suffix = " COMPRESSED" if code == CT.VARCHAR_COMPRESSED else ""
    return f"VARSTRING({meta}){suffix}", _prefixed(1 if meta < 256 else 2)


_BLOB_NAMES = {
    1: "TINYBLOB/TINYTEXT",
    2: "BLOB/TEXT",
    3: "MEDIUMBLOB/MEDIUMTEXT",
    4: "LONGBLOB/LONGTEXT",
}


_BLOB_TYPES = (CT.BLOB, CT.BLOB_COMPRESSED, CT.TINY_BLOB, CT.MEDIUM_BLOB, CT.LONG_BLOB)


@printer_for(*_BLOB_TYPES)
def _blob(code: int, meta: int) -> tuple[str, PrintFn]:
    if meta not in _BLOB_NAMES:
        return "", _unprintable(code, meta)
    suffix = " COMPRESSED" if code == CT.BLOB_COMPRESSED else ""
    return _BLOB_NAMES[meta] + suffix, _prefixed(meta)


@printer_for(CT.GEOMETRY)
def _geometry(code: int, meta: int) -> tuple[str, PrintFn]:
    return "GEOMETRY", _geometry_printer(meta, quoted)


def _geometry_printer(meta: int, quote: Callable[[bytes], str]) -> PrintFn:
    def read(buf: bytes, pos: int) -> tuple[str, int]:
        length = int.from_bytes(buf[pos : pos + 4], "little")
        start = pos + meta
        return quote(buf[start : start + length]), start + length

    return read


# The JSON and VECTOR printers (MySQL only) register themselves on import.
from binlogkit.dump import json_values as _json_values  # noqa: E402, F401
