"""Inserting events into an existing binlog: the events after them move, positions with them."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Sequence
from pathlib import Path

from binlogkit.binlog.context import FormatContext
from binlogkit.binlog.events import Event
from binlogkit.binlog.transactions import TransactionState
from binlogkit.errors import BinlogError
from binlogkit.io.binlog_end import scan_to_end
from binlogkit.io.files import BinlogReader
from binlogkit.io.streams import FileInputStream, FileOutputStream
from binlogkit.writer.binlog_file import encode_at
from binlogkit.writer.positions import ShiftPositions

__all__ = ["insert_events"]

_COPY_CHUNK = 1 << 20


def insert_events(path: str | os.PathLike[str], offset: int, events: Sequence[Event]) -> int:
    """Put ``events`` into the binlog ``path`` at ``offset``; returns the bytes inserted.

    ``offset`` must be where an event after the format description starts (or the
    end of the file) and between two transactions. The events from ``offset`` on
    move by the inserted size, their ``log_pos`` (and CRC32) with them. The file is
    replaced whole: a crash leaves the old file or the new one.
    """
    target = Path(path)
    size = target.stat().st_size
    end = scan_to_end(target).end
    if end != size:
        raise BinlogError(
            f"the file ends with a partial event at {end}",
            file=str(target),
            offset=end,
            hint="cut it off first (BinlogFileWriter.append does)",
        )
    fmt = _format_at(target, offset)
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    try:
        with FileOutputStream(temporary) as out, FileInputStream(target) as source:
            _copy(source, out, offset)
            for event in events:
                out.write(encode_at(event, fmt, out.position))
            inserted = out.position - offset
            shift = ShiftPositions(out, inserted, fmt.checksum_length)
            _copy(source, shift, size - offset)
            shift.flush()
            out.sync()
        os.replace(temporary, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
    return inserted


def _format_at(path: Path, offset: int) -> FormatContext:
    """The format in force at ``offset``, once it is known to be a place to insert at."""
    state = TransactionState()
    opened_at = start = 0
    with BinlogReader(str(path), schema=None) as reader:
        for event in reader:
            start = event.header.offset
            if start >= offset:
                break
            if not state.open:
                opened_at = start
            state.step(event)
            start = event.header.end
        fmt = reader.decoder.fmt if reader.decoder is not None else FormatContext()
    if start != offset or offset <= 4 or not fmt.server_version:
        raise BinlogError(
            f"no event starts at {offset} after the format description",
            file=str(path),
            offset=offset,
            hint="insert at a Pos or End_log_pos value",
        )
    if state.open:
        raise BinlogError(
            f"offset {offset} is inside the transaction that starts at {opened_at}",
            file=str(path),
            offset=offset,
            hint="insert between two transactions",
        )
    return fmt


def _copy(source: FileInputStream, out: FileOutputStream | ShiftPositions, count: int) -> None:
    while count > 0:
        chunk = source.read(min(count, _COPY_CHUNK))
        if not chunk:
            raise BinlogError(f"{source.path} ended {count} bytes early while being copied")
        out.write(chunk)
        count -= len(chunk)
