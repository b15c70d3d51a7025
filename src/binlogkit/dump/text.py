"""Small text pieces of a dump: timestamps, identifiers, base64 blocks and hex dumps."""

from __future__ import annotations

import binascii
import time

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


def base64_lines(raw: bytes) -> str:
    """``raw`` in base64, 76 characters a line, each line ended (my_base64_encode + newline)."""
    text = binascii.b2a_base64(raw, newline=False).decode("ascii")
    return "".join([text[i : i + 76] + "\n" for i in range(0, len(text), 76)])


def hexdump(raw: bytes, offset: int, header_length: int) -> str:
    """The ``--hexdump`` comment of one event at ``offset``: its header fields, then its bytes."""
    h = raw[:19]
    out = [
        "# Position\n",
        "#           |Timestamp   |Type |Master ID   |Size        |Master Pos  |Flags\n",
        f"# {offset:8x}  |{h[0]:02x} {h[1]:02x} {h[2]:02x} {h[3]:02x} |{h[4]:02x}   "
        f"|{h[5]:02x} {h[6]:02x} {h[7]:02x} {h[8]:02x} |{h[9]:02x} {h[10]:02x} {h[11]:02x} "
        f"{h[12]:02x} |{h[13]:02x} {h[14]:02x} {h[15]:02x} {h[16]:02x} |{h[17]:02x} {h[18]:02x}\n",
        "#\n",
    ]
    data = raw[header_length:]
    at = offset + header_length
    for start in range(0, len(data), _BYTES_PER_LINE):
        chunk = data[start : start + _BYTES_PER_LINE]
        left = " ".join(f"{b:02x}" for b in chunk[:8])
        right = " ".join(f"{b:02x}" for b in chunk[8:])
        hexes = f"{left}  {right}" if right else f"{left} "
        text = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in chunk)
        out.append(f"# {at + start:8x}  {hexes:<49} |{text}|\n")
    if data:
        out.append("#\n")
    return "".join(out)
