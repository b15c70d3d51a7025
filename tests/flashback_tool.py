"""The reversed rows events ``mariadb-binlog --flashback`` prints, as raw events."""

from __future__ import annotations

import base64
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

_BLOCK = re.compile(rb"BINLOG '\n(.*?)'", re.S)
_PADDED = re.compile(rb"[^=]*=*")
"""One base64 piece: the tool encodes each event on its own, padding included."""
_TABLE_MAP = 19


def split_events(data: bytes) -> list[bytes]:
    """Consecutive v4 events (each knows its size at offset 9)."""
    out = []
    pos = 0
    while pos < len(data):
        size = int.from_bytes(data[pos + 9 : pos + 13], "little")
        out.append(data[pos : pos + size])
        pos += size
    return out


def tool_flashback_rows(files: Sequence[Path], options: Sequence[str] = ()) -> list[bytes]:
    """The rows events of ``mariadb-binlog --flashback``, in the order it prints them.

    The tool does not recompute the checksums of the events it turns around,
    so their last 4 bytes are stale.
    """
    done = subprocess.run(
        ["mariadb-binlog", "--flashback", *options, *map(str, files)],
        capture_output=True,
        check=True,
    )
    events = []
    for block in _BLOCK.findall(done.stdout):
        text = block.replace(b"\n", b"")
        data = b"".join(base64.b64decode(part) for part in _PADDED.findall(text) if part)
        for raw in split_events(data):
            if raw[4] not in (_TABLE_MAP, 15):
                events.append(raw)
    return events
