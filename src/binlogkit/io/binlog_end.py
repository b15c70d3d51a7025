"""Where the complete events of a binlog file end: what a writer continues after a crash."""

from __future__ import annotations

import os

from binlogkit.binlog.context import FormatContext
from binlogkit.binlog.framing import EventFramer, Frame
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.io.streams import FileInputStream

__all__ = ["FileEnd", "scan_to_end"]

_SCAN_CHUNK = 1 << 20


@frozen_dataclass
class FileEnd:
    """The end of the complete events of a file, its first and last event, the format in force."""

    end: int
    first: Frame | None
    last: Frame | None
    fmt: FormatContext


def scan_to_end(path: str | os.PathLike[str], *, verify_checksum: bool = True) -> FileEnd:
    """Frame every event of the binlog at ``path``; bytes after :attr:`FileEnd.end` are a
    partial event (a write cut short). A damaged event before that raises."""
    framer = EventFramer(file=str(path), verify_checksum=verify_checksum)
    first: Frame | None = None
    last: Frame | None = None
    with FileInputStream(path) as stream:
        while chunk := stream.read(_SCAN_CHUNK):
            framer.receive_data(chunk)
            while isinstance(frame := framer.next_frame(), Frame):
                first = first or frame
                last = frame
    return FileEnd(framer.offset, first, last, framer.fmt)
