"""JSON and VECTOR columns as MySQL 8/9's ``mysqlbinlog -v`` prints them.

Follows MySQL's ``log_event.cc``:

- a JSON value (a u32 length, then binary JSON) prints as its JSON text
  (``Json_wrapper::to_string`` of ``json_dom.cc``, not JSON-quoted at the top:
  a top-level string prints bare) inside :func:`mysql_quoted` quotes; an empty
  value reads as ``null``, one that does not parse prints ``Invalid JSON`` and a
  newline;
- in the after-image of a PARTIAL_UPDATE_ROWS event, a JSON column logged as
  diffs prints as nested ``JSON_REPLACE``/``JSON_INSERT``/``JSON_ARRAY_INSERT``/
  ``JSON_REMOVE`` calls on the column (``print_json_diff``, :func:`diff_text`);
- a VECTOR value (a u32 length, then float32s) prints as ``[%.5e,...]``.

The JSON text: objects as ``{"k": v, ...}`` in stored key order, arrays as
``[a, b]``, strings double-quoted with JSON escapes (``\\uXXXX`` below 0x20),
doubles in ``my_gcvt`` form with ``.0`` added when it shows no point or
exponent, DECIMAL, DATE/TIME/DATETIME/TIMESTAMP opaque values as their
text (six fraction digits), other opaque values as ``base64:typeN:...`` (with
MySQL's line break every 76 base64 characters).
"""

from __future__ import annotations

import base64
import struct
from typing import Any

from binlogkit.binlog.constants import ColumnType as CT
from binlogkit.binlog.info import format_double
from binlogkit.binlog.jsonb import JsonEmpty, JsonOpaque, decode_jsonb
from binlogkit.dump.values import PrintFn, c_g, mysql_quoted, printer_for
from binlogkit.errors import DecodeError

__all__ = ["column_text", "diff_text", "json_text", "partial_json_printer"]

_JSON_ESCAPES = {c: f"\\u{c:04x}" for c in range(0x20)} | {
    0x08: "\\b",
    0x09: "\\t",
    0x0A: "\\n",
    0x0C: "\\f",
    0x0D: "\\r",
    0x22: '\\"',
    0x5C: "\\\\",
}
_TEMPORAL = frozenset({CT.DATE, CT.TIME, CT.DATETIME, CT.TIMESTAMP})


def _double_quoted(text: str) -> str:
    """A JSON string: ``"..."`` with MySQL's escapes (json_dom.cc double_quote)."""
    return '"' + text.translate(_JSON_ESCAPES) + '"'


def _opaque_text(value: JsonOpaque) -> tuple[str, str]:
    """An opaque value's text and its kind: ``number``, ``string`` (quoted when nested) or ``raw``.

    ``raw`` is MySQL's base64 form, JSON-quoted when nested.
    """
    kind = value.mysql_type
    if kind == CT.VAR_STRING:  # strings kept as opaque print as strings
        return value.data.decode("utf-8", "surrogateescape"), "string"
    if kind == CT.NEWDECIMAL:
        return value.to_text(), "number"
    if kind in _TEMPORAL:
        return value.to_text(), "temporal"
    encoded = base64.b64encode(value.data).decode("ascii")
    lines = "\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76))
    return f"base64:type{kind}:{lines}", "string"


def json_text(value: Any, quoted: bool = False) -> str:
    """``value`` (from :func:`~binlogkit.binlog.jsonb.decode_jsonb`) as MySQL's JSON text.

    ``quoted``: strings, dates and opaque values in double quotes, as inside a
    container; at the top MySQL leaves them bare.
    """
    if value is None or isinstance(value, JsonEmpty):
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        text = format_double(value)
        return text if "." in text or "e" in text else text + ".0"
    if isinstance(value, str):
        return _double_quoted(value) if quoted else value
    if isinstance(value, dict):
        items = (f"{_double_quoted(k)}: {json_text(v, True)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(json_text(v, True) for v in value) + "]"
    if isinstance(value, JsonOpaque):
        text, kind = _opaque_text(value)
        if not quoted or kind == "number":
            return text
        return '"' + text + '"' if kind == "temporal" else _double_quoted(text)
    raise DecodeError(f"no JSON text for a {type(value).__name__}")


def _sql_value(value: Any) -> str:
    """A diff's value as mysqlbinlog prints it (json_wrapper_to_string, not as JSON type).

    Numbers, booleans and null bare; strings, dates and opaque values quoted;
    objects and arrays as ``CAST('...' AS JSON)``.
    """
    text = json_text(value)
    if isinstance(value, dict | list):
        return f"CAST({_sql_quoted(text)} AS JSON)"
    if isinstance(value, str) or (
        isinstance(value, JsonOpaque) and value.mysql_type != CT.NEWDECIMAL
    ):
        return _sql_quoted(text)
    return text


def _sql_quoted(text: str) -> str:
    return mysql_quoted(text.encode("utf-8", "surrogateescape"))


def column_text(data: bytes) -> str:
    """A JSON column's binary value as ``-v`` prints it."""
    try:
        text = json_text(decode_jsonb(data))
    except (DecodeError, ValueError):
        return "Invalid JSON\n"
    return _sql_quoted(text)


# -- partial updates -----------------------------------------------------------------

_SEPARATOR = "\n###      "
_NAMES = ("JSON_REPLACE", "JSON_INSERT", "JSON_REMOVE")
_REMOVE = 2


def _packed(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """A length-encoded integer at ``pos``: (value, next offset); ValueError when cut."""
    if pos >= end:
        raise ValueError
    first = buf[pos]
    if first < 0xFB:
        return first, pos + 1
    size = {0xFC: 2, 0xFD: 3, 0xFE: 8}.get(first)
    if size is None or pos + 1 + size > end:
        raise ValueError
    return int.from_bytes(buf[pos + 1 : pos + 1 + size], "little"), pos + 1 + size


def _operations(data: bytes) -> list[tuple[str, bytes, bytes | None]] | str:
    """Each diff's function name, path and value bytes, or the error mysqlbinlog reports."""
    ops: list[tuple[str, bytes, bytes | None]] = []
    pos, end = 0, len(data)
    while pos < end:
        code = data[pos]
        if code > _REMOVE:
            return "reading operation type (invalid operation code)"
        pos += 1
        try:
            size, pos = _packed(data, pos, end)
        except ValueError:
            return "reading path length to skip"
        if size > end - pos:
            return "skipping path"
        path = data[pos : pos + size]
        pos += size
        name = _NAMES[code]
        if code == 1 and data[pos - 1] == 0x5D:  # an insert at "...]"
            name = "JSON_ARRAY_INSERT"
        value = None
        if code != _REMOVE:
            try:
                size, pos = _packed(data, pos, end)
            except ValueError:
                return "reading value length to skip"
            if size > end - pos:
                return "skipping value"
            value = data[pos : pos + size]
            pos += size
        ops.append((name, path, value))
    return ops


def diff_text(data: bytes, column: str) -> str:
    """A partial JSON update's diffs (the bytes after the u32 length) as ``-v`` prints them.

    ``column`` is the column as printed (``@2``). The calls nest: the last
    group of like operations outermost, ``@N`` innermost; each diff is a
    quoted path and, unless a removal, its value.
    """
    ops = _operations(data)
    if isinstance(ops, str):
        return f"Error {ops} while printing JSON diff\n"
    out: list[str] = []
    for i in range(len(ops) - 1, -1, -1):
        if i == 0 or ops[i - 1][0] != ops[i][0]:
            if out:
                out.append(_SEPARATOR)
            out.append(ops[i][0] + "(")
    out.append(column)
    if not ops:
        return "".join(out)
    out.append(", ")
    for i, (name, path, value) in enumerate(ops):
        out.append(mysql_quoted(path))
        if value is not None:
            out.append(", ")
            try:
                out.append(_sql_value(decode_jsonb(value)))
            except (DecodeError, ValueError):
                out.append("Error parsing json value while printing JSON diff\n")
                return "".join(out)
        last = i == len(ops) - 1
        if last or ops[i + 1][0] != name:
            out.append(")")
        if not last:
            out.append("," + _SEPARATOR)
    return "".join(out)


# -- printers -----------------------------------------------------------------------


@printer_for(CT.JSON)
def _json(code: int, meta: int) -> tuple[str, PrintFn]:
    def read(buf: bytes, pos: int) -> tuple[str, int]:
        length = int.from_bytes(buf[pos : pos + 4], "little")  # four bytes whatever meta says
        start = pos + 4
        if start + length > len(buf):
            raise DecodeError("JSON value runs past the row")
        return column_text(buf[start : start + length]), pos + meta + length

    return "JSON", read


_F32 = struct.Struct("<f").unpack_from


@printer_for(CT.VECTOR)
def _vector(code: int, meta: int) -> tuple[str, PrintFn]:
    def read(buf: bytes, pos: int) -> tuple[str, int]:
        length = int.from_bytes(buf[pos : pos + 4], "little")
        start = pos + 4
        if start + length > len(buf):
            raise DecodeError("VECTOR value runs past the row")
        count = length // 4 if length % 4 == 0 else 0
        values = [c_g(_F32(buf, start + 4 * i)[0], ".5e") for i in range(count)]
        return "[" + ",".join(values) + ("]" if values else ""), start + length

    return "VECTOR", read


def partial_json_printer(meta: int, column: str) -> PrintFn:
    """The printer of a JSON column logged as diffs (``column``: ``@N``)."""

    def read(buf: bytes, pos: int) -> tuple[str, int]:
        length = int.from_bytes(buf[pos : pos + 4], "little")
        start = pos + 4
        if start + length > len(buf):
            raise DecodeError("JSON diff runs past the row")
        return diff_text(buf[start : start + length], column), pos + meta + length

    return read
