"""A column's DEFAULT as MariaDB stores it: the text of information_schema.COLUMNS.COLUMN_DEFAULT.

MariaDB (10.2.7 on) converts a literal default to the column's type when the
table is created and shows the converted value as SQL: numbers unquoted
(``7`` for ``DEFAULT '7'`` on an INT, ``1.50`` on a DECIMAL(6,2)), text,
temporal and ENUM/SET values quoted (``'2000-01-01 00:00:00.000000'`` on a
DATETIME(6), ``'a''b\\\\c\\n'``), BIT as ``b'101'``, and expressions as it
prints them (``current_timestamp(3)``, ``uuid()``, ``(1 + 2)``). The model keeps
that text, but None for a default of NULL (``NULL`` there: a nullable column's
default without a DEFAULT clause) and for none (a NOT NULL column without
DEFAULT, AUTO_INCREMENT and generated columns, SQL NULL there): a column's
nullability tells the two apart. :func:`stored_default` gives that text for a
parsed DEFAULT; :func:`unquote` reads a quoted value back.
"""

from __future__ import annotations

import re
from dataclasses import replace
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Final

from sqlglot import exp

from binlogkit.schema.model import ColumnDef

__all__ = ["CURRENT_TIMESTAMP", "implicit_timestamps", "quote", "stored_default", "unquote"]

CURRENT_TIMESTAMP: Final = re.compile(r"current_timestamp\((\d?)\)")
"""The stored form of ``CURRENT_TIMESTAMP``, ``NOW()``, ``LOCALTIMESTAMP`` ... (its precision)."""

_NOW_NAMES: Final = {"NOW", "CURRENT_TIMESTAMP", "LOCALTIME", "LOCALTIMESTAMP"}
_INTEGERS: Final = {"tinyint", "smallint", "mediumint", "int", "bigint"}
_TEMPORAL: Final = {"date", "datetime", "timestamp", "time"}
_ESCAPES: Final = {"\\": "\\\\", "'": "''", "\n": "\\n", "\r": "\\r", "\0": "\\0"}
_UNESCAPES: Final = {"\\": "\\", "'": "'", "n": "\n", "r": "\r", "0": "\0", "Z": "\x1a"}
_BINARY_OPS: Final[dict[type[exp.Expr], str]] = {
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
    exp.Mod: "%",
    exp.BitwiseAnd: "&",
    exp.BitwiseOr: "|",
}


def quote(text: str) -> str:
    """A quoted string as MariaDB shows a default (quotes doubled; ``\\``, NUL, LF and CR
    escaped)."""
    return "'" + "".join(_ESCAPES.get(ch, ch) for ch in text) + "'"


def unquote(text: str) -> str | None:
    """The value of a quoted default (:func:`quote`'s inverse); None for text not quoted."""
    if len(text) < 2 or text[0] != "'" or text[-1] != "'":
        return None
    out, i, body = [], 0, text[1:-1]
    while i < len(body):
        ch = body[i]
        if ch in ("\\", "'") and i + 1 < len(body):
            nxt = body[i + 1]
            out.append(_UNESCAPES.get(nxt, nxt) if ch == "\\" else "'")
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def stored_default(value: exp.Expr | None, column: ColumnDef, auto: bool = False) -> str | None:
    """The stored default of ``column`` given its DEFAULT expression (None: no DEFAULT
    clause); ``auto``: an AUTO_INCREMENT or SERIAL column. None for NULL and for none."""
    if auto or column.generated is not None or value is None:
        return None
    while isinstance(value, exp.Paren) and not isinstance(value.this, tuple(_BINARY_OPS)):
        value = value.this
    literal = _literal(value)
    if literal is None:
        return _expression(value)
    if isinstance(literal, exp.Null):
        return None
    return _converted(literal, column)


def _literal(value: exp.Expr) -> str | bytes | int | exp.Null | None:
    """A literal's value: text (a number as its text), bytes (hex), int (bits); None for an
    expression."""
    if isinstance(value, exp.Null):
        return value
    if isinstance(value, exp.Introducer):
        value = value.expression
    if isinstance(value, exp.Literal):
        return str(value.this)
    if isinstance(value, exp.Neg) and isinstance(value.this, exp.Literal):
        return "-" + str(value.this.this)
    if isinstance(value, exp.Boolean):
        return "1" if value.this else "0"
    if isinstance(value, exp.HexString):
        digits = str(value.this)
        return bytes.fromhex(digits if len(digits) % 2 == 0 else "0" + digits)
    if isinstance(value, exp.BitString):
        return int(str(value.this) or "0", 2)
    return None


def _expression(value: exp.Expr) -> str:
    """An expression as MariaDB prints it; the time functions as ``current_timestamp(N)``."""
    now = _now_precision(value)
    if now is not None:
        return f"current_timestamp({now})"
    return _print(value)


def _now_precision(value: exp.Expr) -> str | None:
    """``""`` or the digits of a CURRENT_TIMESTAMP-like call; None for other expressions."""
    if isinstance(value, exp.CurrentTimestamp | exp.Localtimestamp | exp.Localtime):
        return "" if value.this is None else str(value.this.name)
    if isinstance(value, exp.Anonymous) and str(value.this).upper() in _NOW_NAMES:
        return str(value.expressions[0].name) if value.expressions else ""
    return None


def _print(value: exp.Expr) -> str:
    if isinstance(value, exp.Paren):
        return _print(value.this)
    op = _BINARY_OPS.get(type(value))
    if op is not None:
        return f"({_print(value.this)} {op} {_print(value.expression)})"
    literal = _literal(value)
    if isinstance(literal, str):
        is_string = isinstance(value, exp.Literal) and value.is_string
        return quote(literal) if is_string else literal
    if isinstance(value, exp.Column):
        return "`" + value.name.replace("`", "``") + "`"
    if isinstance(value, exp.Anonymous):
        return f"{str(value.this).lower()}({','.join(_print(a) for a in value.expressions)})"
    if isinstance(value, exp.Func):
        args = ",".join(_print(a) for a in value.iter_expressions())
        return f"{value.sql_name().lower()}({args})"
    return value.sql(dialect="mysql")


def implicit_timestamps(columns: list[ColumnDef]) -> list[ColumnDef]:
    """The defaults the server gives NOT NULL TIMESTAMP columns without DEFAULT where
    explicit_defaults_for_timestamp is off: ``current_timestamp(fsp)`` to the table's first
    TIMESTAMP column, the zero timestamp to the others."""
    out, first = [], True
    for column in columns:
        if column.type == "timestamp":
            if not column.nullable and column.default is None and column.generated is None:
                zero = quote("0000-00-00 00:00:00" + _fraction("", column.fsp or 0))
                now = f"current_timestamp({column.fsp or ''})"
                column = replace(column, default=now if first else zero)
            first = False
        out.append(column)
    return out


# -- a literal converted to the column's type ------------------------------------------------


def _converted(value: str | bytes | int, column: ColumnDef) -> str:
    kind = column.type
    if kind in _INTEGERS or kind == "year":
        number = _number(value)
        whole = int(number.to_integral_value(ROUND_HALF_UP)) if number is not None else 0
        return str(_year(whole, value) if kind == "year" else whole)
    if kind == "bit":
        bits = value if isinstance(value, int) else int(_number(value) or 0)
        return f"b'{bits:b}'"
    if kind == "decimal":
        number = _number(value) or Decimal(0)
        return str(number.quantize(Decimal(1).scaleb(-(column.scale or 0)), ROUND_HALF_UP))
    if kind in ("float", "double"):
        number = _number(value) or Decimal(0)
        return format(float(number), ".6g" if kind == "float" else ".15g").replace("e+", "e")
    text = _text(value)
    if kind in _TEMPORAL:
        return quote(_temporal(text, column))
    if kind == "enum":
        return quote(_member(text, column.values or ()))
    if kind == "set":
        chosen = {m.lower() for m in text.split(",")}
        return quote(",".join(m for m in column.values or () if m.lower() in chosen))
    if kind == "binary" and column.length:
        text = text.ljust(column.length, "\0")
    return quote(text)


def _number(value: str | bytes | int) -> Decimal | None:
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, bytes):
        return Decimal(int.from_bytes(value, "big"))
    match = re.match(r"\s*[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?", value, re.IGNORECASE)
    try:
        return Decimal(match.group(0)) if match else None
    except InvalidOperation:
        return None


def _year(year: int, written: str | bytes | int) -> int:
    """A YEAR: two digits become 1970-2069 (a number 0 stays 0, the text '0' is 2000)."""
    if year == 0 and not (isinstance(written, str) and written.strip("'\" ") in ("0", "00")):
        return 0
    if year < 70:
        return 2000 + year
    return 1900 + year if year < 100 else year


def _text(value: str | bytes | int) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    return str(value)


def _member(text: str, members: tuple[str, ...]) -> str:
    """The ENUM member a default names (by value, case-insensitively, or by number)."""
    for member in members:
        if member.lower() == text.rstrip(" ").lower():
            return member
    if text.isdigit() and 0 < int(text) <= len(members):
        return members[int(text) - 1]
    return text


_DATE = re.compile(r"(\d{1,4})\D(\d{1,2})\D(\d{1,2})")
_TIME = re.compile(r"(-)?(?:(\d+) )?(\d+):(\d{1,2})(?::(\d{1,2}))?(?:\.(\d+))?")
_CLOCK = re.compile(r"[ T](\d{1,2})\D(\d{1,2})\D(\d{1,2})(?:\.(\d+))?")


def _temporal(text: str, column: ColumnDef) -> str:
    """A date, datetime or time in the form the server shows it (fraction to the column's
    digits); text it cannot read is kept."""
    digits = column.fsp or 0
    if column.type == "time":
        return _time(text, digits)
    date = _DATE.match(text)
    if date is None and re.fullmatch(r"\d{8}(\d{6})?", text):
        compact = f"{text[:4]}-{text[4:6]}-{text[6:8]}"
        text = compact + (f" {text[8:10]}:{text[10:12]}:{text[12:14]}" if len(text) > 8 else "")
        date = _DATE.match(text)
    if date is None:
        return text
    year, month, day = (int(g) for g in date.groups())
    if len(date.group(1)) <= 2:
        year += 2000 if year < 70 else 1900
    shown = f"{year:04d}-{month:02d}-{day:02d}"
    if column.type == "date":
        return shown
    clock = _CLOCK.match(text, date.end())
    hour, minute, second, fraction = (
        (int(clock[1]), int(clock[2]), int(clock[3]), clock[4] or "") if clock else (0, 0, 0, "")
    )
    shown += f" {hour:02d}:{minute:02d}:{second:02d}"
    return shown + _fraction(fraction, digits)


def _time(text: str, digits: int) -> str:
    match = _TIME.fullmatch(text.strip())
    if match is None:
        number = re.fullmatch(r"(-)?(\d{1,7})(?:\.(\d+))?", text.strip())
        if number is None:
            return text
        whole = number[2].rjust(6, "0")
        shown = f"{number[1] or ''}{int(whole[:-4]):02d}:{whole[-4:-2]}:{whole[-2:]}"
        return shown + _fraction(number[3] or "", digits)
    sign, days, hours, minutes, seconds, fraction = match.groups()
    total = int(days or 0) * 24 + int(hours)
    clock = f"{sign or ''}{total:02d}:{int(minutes):02d}:{int(seconds or 0):02d}"
    return clock + _fraction(fraction or "", digits)


def _fraction(fraction: str, digits: int) -> str:
    return "." + fraction[:digits].ljust(digits, "0") if digits else ""
