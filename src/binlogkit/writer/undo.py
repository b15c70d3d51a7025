"""A flashback written as a binlog file: the undo that ``mariadb-binlog FILE | mariadb`` applies."""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from binlogkit.binlog.constants import EventType
from binlogkit.binlog.events import StopEvent
from binlogkit.binlog.events.query import QueryEvent, QueryStatus
from binlogkit.binlog.header import EventHeader
from binlogkit.errors import BinlogError
from binlogkit.pipeline.flashback import UndoTransaction
from binlogkit.writer.binlog_file import BinlogFileWriter

__all__ = ["write_undo_binlog"]


def write_undo_binlog(
    transactions: Sequence[UndoTransaction],
    path: str | os.PathLike[str],
    *,
    clock: Callable[[], float] = time.time,
) -> None:
    """Write ``transactions`` (from :func:`~binlogkit.pipeline.flashback.flashback`) into the
    binlog ``path``: the first one's format description, then each undo between a BEGIN
    and a COMMIT, then a STOP. The file appears whole or not at all."""
    if not transactions:
        raise BinlogError("nothing to undo: the events hold no row changes")
    target = Path(path)
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    source_fde = transactions[0].format_event
    now = int(clock())
    fde = replace(source_fde, header=replace(source_fde.header, timestamp=now, flags=0), created=0)
    server_id = fde.header.server_id

    def query(text: bytes) -> QueryEvent:
        header = EventHeader(now, EventType.QUERY, server_id, 0)
        return QueryEvent(header, 0, 0, 0, QueryStatus(), "", text)

    try:
        writer = BinlogFileWriter.create(temporary, fde)
        try:
            for undo in transactions:
                writer.write(query(b"BEGIN"))
                for event in undo.events():
                    writer.write(event)
                writer.write(query(b"COMMIT"))
            writer.write(StopEvent(EventHeader(now, EventType.STOP, server_id, 0)))
        finally:
            writer.close()
        os.replace(temporary, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
