"""Where the complete transactions of a binlog that may still be written end.

A server appends to its active binlog while it is read: :func:`complete_end`
says how far the transactions are whole, so a reader that comes back later
(an incremental ingest) goes on from there and never takes half a transaction.
"""

from __future__ import annotations

import mmap
import os
from typing import Any

from binlogkit.binlog.constants import MAGIC, V4_HEADER_LENGTH, EventType
from binlogkit.binlog.framing import EventFramer, Frame
from binlogkit.binlog.header import (
    SIZES_STOP_AFTER,
    TYPE_CODE_OFFSET,
    HeaderWalk,
    format_description_size,
)
from binlogkit.binlog.transactions import END_CODES, GTID_CODES
from binlogkit.errors import BinlogError
from binlogkit.io.resync import find_event_start, resync_checksum

__all__ = ["complete_end"]

_READ_CHUNK = 8 << 20
"""Bytes read at a time where the framer walks a file."""
_CLOSING_CODES = END_CODES | {
    int(code) for code in (EventType.ROTATE, EventType.STOP, EventType.TRANSACTION_PAYLOAD)
}
"""The last events after which a file's transactions are all whole."""
_BETWEEN_CODES = frozenset(
    int(code)
    for code in (
        EventType.MARIADB_BINLOG_CHECKPOINT,
        EventType.MARIADB_GTID_LIST,
        EventType.PREVIOUS_GTIDS,
    )
)
"""Events a server writes between transactions, never inside one: after a transaction's
closing event, the complete part goes on to their end."""
_TAIL_BYTES = 64 << 10
"""How far before a file's end :func:`complete_end` looks for its last transaction first
(then twice as far, and so on, before it walks the whole file)."""
_TAIL_SEARCH = 4 << 10
"""How many bytes from each such place are searched for an event start."""


def complete_end(path: str | os.PathLike[str], start: int, size: int) -> int:
    """Where the complete transactions of a binlog that may still be written end.

    Walks the event headers of ``[start, size)``: the end of the last event when
    it closes a file or a transaction (ROTATE, STOP, XID, XA_PREPARE,
    TRANSACTION_PAYLOAD), or when only events written between transactions
    (BINLOG_CHECKPOINT, GTID_LIST, PREVIOUS_GTIDS) follow such an event; else the
    offset of the last transaction start (a GTID event) after ``start``, else
    ``start``. A partial last event is not an error here.
    """
    found = _complete_end_v4(os.fspath(path), start, size)
    return found if found is not None else _complete_end_framed(path, start, size)


def _complete_end_v4(path: str, start: int, size: int) -> int | None:
    """:func:`complete_end` of a v4 binlog from its event sizes alone (no decoding).

    A file as its server wrote it (:func:`~binlogkit.io.resync.resync_checksum`)
    is read from an event start found near its end, when its last transaction
    starts or its last event closes after it; others are walked from ``start``.
    None when the file is not a plain v4 binlog or looks damaged or encrypted:
    the framer then walks it and reports what it finds.
    """
    if size < len(MAGIC) + V4_HEADER_LENGTH:
        return None
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        fde_size = format_description_size(data, size) if len(data) >= size else 0
        if not fde_size:
            return None
        second = len(MAGIC) + fde_size
        if (
            second + V4_HEADER_LENGTH <= size
            and data[second + TYPE_CODE_OFFSET] in SIZES_STOP_AFTER
        ):
            return None  # MariaDB encrypts the events after its second one
        back = _TAIL_BYTES
        checksum = resync_checksum(data, size) if size - start > 2 * back else None
        while checksum is not None and size - back > start + back:
            found = find_event_start(data, size - back, size - back + _TAIL_SEARCH, size, checksum)
            end = None if found is None else _walk_to_complete_end(data, found, size, start)
            if end is not None and end > start:
                return end
            back *= 2
        return _walk_to_complete_end(data, max(start, len(MAGIC)), size, start)


def _walk_to_complete_end(data: mmap.mmap, offset: int, size: int, start: int) -> int | None:
    """:func:`complete_end` from the event sizes of the events from ``offset`` (an event start
    at or past ``start``) to ``size``; ``start`` when no transaction starts there and the
    last event does not close one. None for events only the framer walks."""
    end = start
    last_code = -1
    closed = False  # whether a closing event came last, bar events between transactions
    walk = HeaderWalk(data, offset, size)  # to the partial last event, if there is one
    for offset, code, _ in walk:
        if code in GTID_CODES and offset > start:
            end = offset
        closed = code in _CLOSING_CODES or (closed and code in _BETWEEN_CODES)
        last_code = code
    if walk.damaged or last_code in SIZES_STOP_AFTER:
        return None
    if closed:
        end = max(end, walk.stop)
    return end


def _complete_end_framed(path: str | os.PathLike[str], start: int, size: int) -> int:
    """:func:`complete_end` by the event framer (any binlog version; reports damage)."""
    framer = EventFramer(file=os.fspath(path), verify_checksum=False)
    end = start
    closed_at: int | None = None  # the end of a closing event followed only by events between
    with open(path, "rb") as stream:
        offset = 0
        if start > 4:
            _read_format(framer, stream)
            framer.seek(start)
            stream.seek(start)
            offset = start
        while offset < size:
            chunk = stream.read(min(_READ_CHUNK, size - offset))
            if not chunk:
                break
            offset += len(chunk)
            framer.receive_data(chunk)
            while isinstance(frame := framer.next_frame(), Frame):
                header = frame.header
                code = header.type_code
                if code in GTID_CODES and header.offset > start:
                    end = header.offset
                if code in _CLOSING_CODES or (closed_at is not None and code in _BETWEEN_CODES):
                    closed_at = header.end
                else:
                    closed_at = None
    return end if closed_at is None else max(end, closed_at)


def _read_format(framer: EventFramer, stream: Any) -> None:
    """Feed the framer up to its first event, the one that tells the format."""
    while not isinstance(framer.next_frame(), Frame):
        chunk = stream.read(4096)
        if not chunk:
            raise BinlogError("the file has no format description", file=framer.file)
        framer.receive_data(chunk)
