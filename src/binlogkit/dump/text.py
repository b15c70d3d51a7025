"""Small text pieces of a dump: timestamps, identifiers, base64 blocks and hex dumps."""

from __future__ import annotations

import binascii
import struct
import time
from collections.abc import Callable
from functools import lru_cache

__all__ = ["backquoted", "base64_lines", "hexdump", "timestamp"]

_BYTES_PER_LINE = 16


def timestamp(seconds: int) -> str:
    """``YYMMDD HH:MM:SS`` in local time, the hour space-padded (the tools' print_timestamp)."""
    t = time.localtime(seconds)
    return (
        f"{t.tm_year % 100:02d}{t.tm_mon:02d}{t.tm_mday:02d} "
        f"{t.tm_hour:2d}:{t.tm_min:02d}:{t.tm_sec:02d}"
    )


def backquoted(name: str) -> str:
    """A name in backquotes, inner backquotes doubled (``%`s`` of my_b_printf)."""
    return "`" + name.replace("`", "``") + "`"


_BLOCK = 1024
"""The most lines one splitter takes; longer texts go block by block."""


@lru_cache(maxsize=_BLOCK)
def _lines_of(count: int) -> Callable[[bytes, int], tuple[bytes, ...]]:
    """A splitter of ``count`` 76-character lines of a text from an offset (one C call)."""
    return struct.Struct("76s" * count).unpack_from


def base64_lines(raw: bytes) -> str:
    """``raw`` in base64, 76 characters a line, each line ended (my_base64_encode + newline)."""
    size = len(raw)
    if size <= 57:  # one line
        return binascii.b2a_base64(raw).decode("ascii") if raw else ""
    if size <= 114:  # two lines (a table map, a small rows event): one line each
        return (binascii.b2a_base64(raw[:57]) + binascii.b2a_base64(raw[57:])).decode("ascii")
    text = binascii.b2a_base64(raw, newline=False)
    whole = len(text) // 76
    end = whole * 76
    last = text[end:] + b"\n" if end < len(text) else b""
    if whole <= _BLOCK:
        return b"\n".join((*_lines_of(whole)(text, 0), last)).decode("ascii")
    lines: list[bytes] = []
    for at in range(0, end, _BLOCK * 76):
        lines += _lines_of(min(whole - at // 76, _BLOCK))(text, at)
    lines.append(last)
    return b"\n".join(lines).decode("ascii")


_SHOWN = bytes(b if 0x20 <= b < 0x7F else 0x2E for b in range(256))
"""Bytes as the hex dump's text column shows them: printable ASCII, else ``.``."""


def hexdump(raw: bytes, offset: int, header_length: int) -> str:
    """The ``--hexdump`` comment of one event at ``offset``: its header fields, then its bytes."""
    if len(raw) < 19:
        raise IndexError(f"an event of {len(raw)} bytes has no 19-byte header to dump")
    h = raw[:19].hex(" ")  # byte i at h[3 * i : 3 * i + 2]
    out = [
        "# Position\n",
        "#           |Timestamp   |Type |Master ID   |Size        |Master Pos  |Flags\n",
        f"# {offset:8x}  |{h[0:11]} |{h[12:14]}   |{h[15:26]} |{h[27:38]} "
        f"|{h[39:50]} |{h[51:56]}\n",
        "#\n",
    ]
    data = raw[header_length:]
    at = offset + header_length
    size = len(data)
    whole = size - size % _BYTES_PER_LINE
    hexes = data.hex(" ")  # three characters a byte
    text = data.translate(_SHOWN).decode("ascii")
    out += [
        f"# {at + i:8x}  {hexes[3 * i : 3 * i + 23]}  {hexes[3 * i + 24 : 3 * i + 47]}  "
        f"|{text[i : i + _BYTES_PER_LINE]}|\n"
        for i in range(0, whole, _BYTES_PER_LINE)
    ]
    if whole < size:
        chunk = data[whole:]
        left = chunk[:8].hex(" ")
        right = chunk[8:].hex(" ")
        shown = f"{left}  {right}" if right else f"{left} "
        out.append(f"# {at + whole:8x}  {shown:<49} |{text[whole:]}|\n")
    if data:
        out.append("#\n")
    return "".join(out)
