"""Inserting events into an existing binlog: the events after them move, positions with them.

An encrypted MariaDB binlog is read through the decrypting stage and written
again through the encrypting one, under a fresh nonce in its START_ENCRYPTION
event: every event after the insertion point lands at a new offset, so it is
encrypted again there, and no IV encrypts other bytes than in the old file.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from binlogkit.binlog.context import FormatContext
from binlogkit.binlog.events import Event
from binlogkit.binlog.framing import event_crc32
from binlogkit.binlog.header import EVENT_SIZE_OFFSET
from binlogkit.binlog.transactions import TransactionState
from binlogkit.errors import BinlogError
from binlogkit.io.binlog_end import FileEnd, plain_input, scan_to_end
from binlogkit.io.files import BinlogReader
from binlogkit.io.streams import FileOutputStream, InputStream, OutputStream
from binlogkit.writer.binlog_file import encode_at
from binlogkit.writer.positions import ShiftPositions

if TYPE_CHECKING:
    from binlogkit.io.key_files import BinlogEncryption, KeyFile

__all__ = ["insert_events"]

_COPY_CHUNK = 1 << 20
_NONCE_AT = 19 + 5
"""Where the nonce is in a START_ENCRYPTION event: after the header, scheme and key version."""


def insert_events(
    path: str | os.PathLike[str],
    offset: int,
    events: Sequence[Event],
    *,
    encryption: BinlogEncryption | None = None,
) -> int:
    """Put ``events`` into the binlog ``path`` at ``offset``; returns the bytes inserted.

    ``offset`` must be where an event after the format description starts (or the
    end of the file) and between two transactions. The events from ``offset`` on
    move by the inserted size, their ``log_pos`` (and CRC32) with them. The file is
    replaced whole: a crash leaves the old file or the new one. An encrypted MariaDB
    binlog needs ``encryption`` (its binlog key); the inserted events are encrypted
    and ``offset`` must be after its START_ENCRYPTION.
    """
    target = Path(path)
    size = target.stat().st_size
    keys = None if encryption is None else encryption.keys()
    scanned = scan_to_end(target, keys=keys)
    if scanned.end != size:
        raise BinlogError(
            f"the file ends with a partial event at {scanned.end}",
            file=str(target),
            offset=scanned.end,
            hint="cut it off first (BinlogFileWriter.append does)",
        )
    start = scanned.encryption
    if start is not None and offset < start.encrypted_from:
        raise BinlogError(
            f"offset {offset} is before the end of START_ENCRYPTION ({start.encrypted_from})",
            file=str(target),
            offset=offset,
            event_type="START_ENCRYPTION",
            hint="insert after it: the events of an encrypted binlog are all encrypted",
        )
    fmt = _format_at(target, offset, keys)
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    try:
        with FileOutputStream(temporary) as file, plain_input(target, keys) as source:
            out: OutputStream = file
            if start is not None and encryption is not None:
                out = _encrypted_again(file, source, scanned, encryption, target)
            _copy(source, out, offset - out.position, target)
            for event in events:
                out.write(encode_at(event, fmt, out.position))
            inserted = out.position - offset
            shift = ShiftPositions(out, inserted, fmt.checksum_length)
            _copy(source, shift, size - offset, target)
            shift.flush()
            out.sync()
        os.replace(temporary, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
    return inserted


def _encrypted_again(
    file: FileOutputStream,
    source: InputStream,
    scanned: FileEnd,
    encryption: BinlogEncryption,
    scanned_path: Path,
) -> OutputStream:
    """The encrypting stage over ``file`` under a fresh nonce, the plain events up to the end
    of START_ENCRYPTION (its nonce replaced) already written through it."""
    start = scanned.encryption
    assert start is not None
    head = bytearray(_read(source, start.encrypted_from, scanned_path))
    at = start.starts_at
    nonce = secrets.token_bytes(len(start.nonce))
    head[at + _NONCE_AT : at + _NONCE_AT + len(nonce)] = nonce
    size = int.from_bytes(head[at + EVENT_SIZE_OFFSET : at + EVENT_SIZE_OFFSET + 4], "little")
    if scanned.fmt.checksum_length:
        event = head[at : at + size]
        head[at + size - 4 : at + size] = event_crc32(event).to_bytes(4, "little")
    file.write(head)
    return encryption.stage(file, replace(start, nonce=nonce))


def _format_at(path: Path, offset: int, keys: KeyFile | None) -> FormatContext:
    """The format in force at ``offset``, once it is known to be a place to insert at."""
    state = TransactionState()
    opened_at = start = 0
    with BinlogReader(str(path), schema=None, key_file=keys) as reader:
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


def _read(source: InputStream, count: int, name: Path) -> bytes:
    """The next ``count`` bytes of ``source``, the binlog ``name``."""
    out = bytearray()
    while len(out) < count:
        chunk = source.read(min(count - len(out), _COPY_CHUNK))
        if not chunk:
            raise BinlogError(f"{name} ended {count - len(out)} bytes early while being copied")
        out += chunk
    return bytes(out)


def _copy(source: InputStream, out: OutputStream, count: int, name: Path) -> None:
    while count > 0:
        chunk = _read(source, min(count, _COPY_CHUNK), name)
        out.write(chunk)
        count -= len(chunk)
