"""Partial JSON updates: the diffs of PARTIAL_UPDATE_ROWS events, and applying them.

With ``binlog_row_value_options=PARTIAL_JSON_UPDATES``, MySQL logs a JSON
column changed by ``JSON_SET``, ``JSON_REPLACE`` or ``JSON_REMOVE`` as a list of
diffs in the after-image instead of the whole new document (MySQL
``sql/json_diff.cc``, ``Json_diff_vector::write_binary``). The column value is
a u32 length and then, per diff:

- the operation, one byte: 0 REPLACE, 1 INSERT, 2 REMOVE;
- the path as text (``$.a[1]``), a length-encoded string;
- unless REMOVE, the new value in binary JSON, a length-encoded string.

:func:`apply_json_diffs` replays the diffs on the before-image the way the
replica does (``apply_json_diffs`` in json_diff.cc) to give the full
after-image.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import field
from enum import IntEnum
from typing import Any

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.jsonb import decode_jsonb, encode_jsonb
from binlogkit.errors import DecodeError
from binlogkit.wire import ByteReader, ByteWriter

__all__ = [
    "ArrayIndex",
    "JsonDiff",
    "JsonDiffOperation",
    "Member",
    "apply_json_diffs",
    "decode_json_diffs",
    "encode_json_diffs",
    "format_json_path",
    "parse_json_path",
    "read_json_diff_vector",
    "write_json_diff_vector",
]


class JsonDiffOperation(IntEnum):
    """What a diff does at its path (MySQL enum_json_diff_operation)."""

    REPLACE = 0
    """Replace the value at the path, like ``JSON_REPLACE``."""
    INSERT = 1
    """Add a member (``JSON_INSERT``) or an array element (``JSON_ARRAY_INSERT``)."""
    REMOVE = 2
    """Remove the value at the path, like ``JSON_REMOVE``."""


@frozen_dataclass
class Member:
    """A path leg naming an object member: ``.name`` or ``."quoted name"``."""

    name: str


@frozen_dataclass
class ArrayIndex:
    """A path leg naming an array cell: ``[3]``, ``[last]`` or ``[last-2]``."""

    index: int
    from_end: bool = False

    def position(self, length: int) -> int:
        """The 0-based position in an array of ``length`` elements, clamped like MySQL's."""
        if self.from_end:
            return length - self.index - 1 if self.index < length else 0
        return min(self.index, length)

    def within(self, length: int) -> bool:
        """Whether the leg names an existing element of an array of ``length``."""
        return self.index < length


PathLeg = Member | ArrayIndex


@frozen_dataclass
class JsonDiff:
    """One change to a JSON document: an operation, a path and (unless REMOVE) a value.

    ``path`` is the text MySQL logged, kept as is so the diff re-encodes
    byte for byte; ``legs`` is its parsed form. ``value`` is the new value as
    :func:`~binlogkit.binlog.jsonb.decode_jsonb` gives it (None for REMOVE).
    """

    operation: JsonDiffOperation
    path: str
    value: Any = None
    legs: tuple[PathLeg, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "operation", JsonDiffOperation(self.operation))
        if self.operation == JsonDiffOperation.REMOVE and self.value is not None:
            raise ValueError("a REMOVE diff has no value")
        object.__setattr__(self, "legs", parse_json_path(self.path))


# --- paths --------------------------------------------------------------------

_SPACE = frozenset(" \t\n\v\f\r")
_NAME_END = _SPACE | {"[", ".", "*"}
_IDENTIFIER_START = frozenset("$_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_IDENTIFIER_REST = _IDENTIFIER_START | frozenset("0123456789")


def _path_error(text: str, pos: int, why: str) -> DecodeError:
    return DecodeError(f"JSON diff path {text!r}: {why} at character {pos}")


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _SPACE:
        pos += 1
    return pos


def parse_json_path(text: str) -> tuple[PathLeg, ...]:
    """The legs of a MySQL JSON path naming one value (no wildcards or ranges).

    Follows MySQL's path grammar (sql-common/json_path.cc): ``$``, then
    ``.member``, ``."quoted member"`` and ``[index]`` legs where an index is a
    number, ``last`` or ``last-N``, with optional whitespace between tokens.
    """
    pos = _skip_space(text, 0)
    if pos >= len(text) or text[pos] != "$":
        raise _path_error(text, pos, "a path starts with $")
    pos = _skip_space(text, pos + 1)
    legs: list[PathLeg] = []
    while pos < len(text):
        char = text[pos]
        leg: PathLeg
        if char == ".":
            leg, pos = _parse_member(text, _skip_space(text, pos + 1))
        elif char == "[":
            leg, pos = _parse_cell(text, _skip_space(text, pos + 1))
        else:
            raise _path_error(text, pos, f"unexpected {char!r}")
        legs.append(leg)
        pos = _skip_space(text, pos)
    return tuple(legs)


def _parse_member(text: str, pos: int) -> tuple[Member, int]:
    if pos >= len(text):
        raise _path_error(text, pos, "a member name is missing")
    if text[pos] == "*":
        raise _path_error(text, pos, "wildcards cannot name one value")
    if text[pos] == '"':
        end = pos + 1
        while end < len(text) and text[end] != '"':
            end += 2 if text[end] == "\\" else 1
        end += 1
        quoted = text[pos:end]
    else:
        end = pos
        while end < len(text) and text[end] not in _NAME_END:
            end += 1
        quoted = f'"{text[pos:end]}"'
    try:
        name = json.loads(quoted)
    except json.JSONDecodeError as exc:
        raise _path_error(text, pos, f"bad member name ({exc.msg})") from None
    if not isinstance(name, str) or (not name and text[pos] != '"'):
        raise _path_error(text, pos, "bad member name")
    return Member(name), end


def _parse_cell(text: str, pos: int) -> tuple[ArrayIndex, int]:
    if text.startswith("*", pos):
        raise _path_error(text, pos, "wildcards cannot name one value")
    index, from_end, pos = _parse_index(text, pos)
    pos = _skip_space(text, pos)
    if text.startswith("to", pos) and text[pos - 1] in _SPACE:
        raise _path_error(text, pos, "ranges cannot name one value")
    if pos >= len(text) or text[pos] != "]":
        raise _path_error(text, pos, "expected ]")
    return ArrayIndex(index, from_end), pos + 1


def _parse_index(text: str, pos: int) -> tuple[int, bool, int]:
    from_end = False
    if text.startswith("last", pos):
        from_end = True
        pos = _skip_space(text, pos + 4)
        if not text.startswith("-", pos):
            return 0, True, pos
        pos = _skip_space(text, pos + 1)
    end = pos
    while end < len(text) and "0" <= text[end] <= "9":
        end += 1
    if end == pos:
        raise _path_error(text, pos, "expected an array index")
    index = int(text[pos:end])
    if index > 0xFFFFFFFF:
        raise _path_error(text, pos, "array index over 2**32 - 1")
    return index, from_end, end


def format_json_path(legs: Iterable[PathLeg]) -> str:
    """The text of a path, as MySQL's Json_path::to_string writes it.

    Names that are plain ASCII identifiers stay bare; others are quoted with
    JSON escapes (MySQL also leaves some non-ASCII identifiers bare).
    """
    parts = ["$"]
    for leg in legs:
        if isinstance(leg, Member):
            name = leg.name
            bare = name and name[0] in _IDENTIFIER_START and set(name) <= _IDENTIFIER_REST
            parts.append("." + (name if bare else _quote(name)))
        elif leg.from_end:
            parts.append(f"[last-{leg.index}]" if leg.index else "[last]")
        else:
            parts.append(f"[{leg.index}]")
    return "".join(parts)


_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


def _quote(name: str) -> str:
    """A double-quoted name with MySQL's escapes (json_dom.cc double_quote)."""
    out = ['"']
    for char in name:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif char < " ":
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


# --- binary form --------------------------------------------------------------


def _read_length(r: ByteReader, what: str) -> int:
    start = r.pos
    length = r.packed_length(what)
    written = r.pos - start
    minimal = 1 if length < 0xFB else 3 if length <= 0xFFFF else 4 if length <= 0xFFFFFF else 9
    if written != minimal:
        raise DecodeError(f"{what}: length {length} written in {written} bytes at offset {start}")
    return length


def decode_json_diffs(data: bytes | bytearray | memoryview) -> tuple[JsonDiff, ...]:
    """The diffs of one column, from the bytes after its u32 length."""
    r = ByteReader(bytes(data))
    diffs = []
    while not r.at_end():
        start = r.pos
        code = r.u8("JSON diff operation")
        if code > JsonDiffOperation.REMOVE:
            raise DecodeError(f"unknown JSON diff operation {code} at offset {start}")
        operation = JsonDiffOperation(code)
        raw_path = r.take(_read_length(r, "JSON diff path"), "JSON diff path")
        try:
            path = raw_path.decode("utf-8")
        except UnicodeDecodeError:
            raise DecodeError(f"JSON diff path at offset {start} is not UTF-8") from None
        value = None
        if operation != JsonDiffOperation.REMOVE:
            length = _read_length(r, "JSON diff value")
            if not length:
                raise DecodeError(f"empty JSON diff value at offset {r.pos}")
            value = decode_jsonb(r.take(length, "JSON diff value"))
        diffs.append(JsonDiff(operation, path, value))
    return tuple(diffs)


def encode_json_diffs(diffs: Iterable[JsonDiff]) -> bytes:
    """The bytes of a column's diffs, without the u32 length."""
    w = ByteWriter()
    for diff in diffs:
        w.u8(diff.operation)
        w.packed_bytes(diff.path.encode("utf-8"))
        if diff.operation != JsonDiffOperation.REMOVE:
            w.packed_bytes(encode_jsonb(diff.value))
    return w.getvalue()


def read_json_diff_vector(buf: bytes, pos: int) -> tuple[tuple[JsonDiff, ...], int]:
    """A column's u32 length and diffs at ``pos`` of a row image: (diffs, next offset)."""
    r = ByteReader(buf, pos)
    length = r.u32("JSON diff vector length")
    return decode_json_diffs(r.take(length, "JSON diff vector")), r.pos


def write_json_diff_vector(diffs: Iterable[JsonDiff], out: bytearray) -> None:
    """Append a column's u32 length and diffs, the mirror of :func:`read_json_diff_vector`."""
    payload = encode_json_diffs(diffs)
    out += len(payload).to_bytes(4, "little")
    out += payload


# --- applying -----------------------------------------------------------------


class _Missing:
    pass


_MISSING = _Missing()


def _child(container: Any, leg: PathLeg) -> Any:
    """The value a leg names in a container, or _MISSING (no auto-wrapping)."""
    if isinstance(container, dict):
        if isinstance(leg, Member):
            return container.get(leg.name, _MISSING)
    elif isinstance(container, list) and isinstance(leg, ArrayIndex) and leg.within(len(container)):
        return container[leg.position(len(container))]
    return _MISSING


def _sorted_object(members: dict[str, Any]) -> dict[str, Any]:
    """Members in MySQL's key order (byte length, then bytes), as a decoded object has them."""
    return dict(sorted(members.items(), key=lambda kv: (len(kv[0].encode()), kv[0].encode())))


def _apply(document: Any, diff: JsonDiff) -> Any:
    legs = diff.legs
    where = f"{diff.operation.name} {diff.path}"
    if not legs:
        raise DecodeError(f"JSON diff {where} targets the whole document")
    # Copy the containers along the path; untouched members stay shared.
    root: Any = document.copy() if isinstance(document, dict | list) else document
    parent = root
    for leg in legs[:-1]:
        child = _child(parent, leg)
        if not isinstance(child, dict | list):
            raise DecodeError(f"JSON diff {where}: the path is not in the before-image")
        child = dict(child) if isinstance(child, dict) else list(child)
        if isinstance(leg, Member):
            parent[leg.name] = child
        else:
            parent[leg.position(len(parent))] = child
        parent = child
    last = legs[-1]
    operation = diff.operation
    if isinstance(parent, dict) and isinstance(last, Member):
        present = last.name in parent
        if operation == JsonDiffOperation.INSERT and not present:
            parent[last.name] = diff.value
            members = _sorted_object(parent)
            parent.clear()
            parent.update(members)
            return root
        if present and operation == JsonDiffOperation.REPLACE:
            parent[last.name] = diff.value
            return root
        if present and operation == JsonDiffOperation.REMOVE:
            del parent[last.name]
            return root
    elif isinstance(parent, list) and isinstance(last, ArrayIndex):
        length = len(parent)
        if operation == JsonDiffOperation.INSERT:
            parent.insert(last.position(length), diff.value)
            return root
        if last.within(length):
            if operation == JsonDiffOperation.REPLACE:
                parent[last.position(length)] = diff.value
            else:
                del parent[last.position(length)]
            return root
    raise DecodeError(f"JSON diff {where} does not apply to the before-image")


def apply_json_diffs(document: Any, diffs: Iterable[JsonDiff]) -> Any:
    """The document after the diffs, as a MySQL replica computes it; the input is not changed.

    Containers on the changed paths are copied (as plain ``dict``/``list``);
    untouched parts are shared with ``document``. A REPLACE or REMOVE whose
    path is missing, an INSERT of a member that exists, or a path through a
    scalar raises :class:`DecodeError`, as MySQL rejects such a diff (it means
    the before-image is not the document the diffs were made from).
    """
    for diff in diffs:
        document = _apply(document, diff)
    return document
