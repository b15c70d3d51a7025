"""``binlogkit dump --flashback``: the undo of the dumped range, as BINLOG statements.

The undo comes from :func:`binlogkit.pipeline.flashback.flashback`: rows
events turned around (inserts ↔ deletes, update images swapped), last
transaction first. It is printed inside the dump's usual opening and
closing lines: the format description as a BINLOG statement (a BINLOG
statement needs one first), then per undone transaction ``BEGIN``, one
BINLOG statement with its table maps and reversed rows events, ``COMMIT``.

This is not the text ``mariadb-binlog --flashback`` prints (which also
carries the headers of the events it read, in their own order, and on some
files only part of the reversed rows events); the reversed rows events
themselves are the tool's, byte for byte but the checksum, which the tool
leaves stale and which is right here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from binlogkit.binlog.decoder import encode_event
from binlogkit.binlog.events import Event
from binlogkit.dump.text import base64_lines
from binlogkit.pipeline.flashback import flashback

__all__ = ["print_flashback"]


def print_flashback(events: Iterable[Event], write: Callable[[str], object]) -> int:
    """Write the undo of ``events`` (statements only, no opening or closing lines).

    Returns the number of transactions undone.
    """
    undo = flashback(events)
    if not undo:
        return 0
    delimiter = "/*!*/;"
    first = undo[0]
    write(f"BINLOG '\n{base64_lines(encode_event(first.format_event, first.fmt))}'{delimiter}\n")
    for transaction in undo:
        source = transaction.source
        if source is not None:
            header = source.header
            write(f"# undo of the transaction at {header.file}:{header.offset}\n")
        fmt = transaction.fmt
        data = b"".join(encode_event(e, fmt) for e in transaction.events())
        write(f"BEGIN{delimiter}\nBINLOG '\n{base64_lines(data)}'{delimiter}\nCOMMIT{delimiter}\n")
    return len(undo)
