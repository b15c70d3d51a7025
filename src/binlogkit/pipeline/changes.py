"""Row changes in a Debezium-style envelope: ``op``, ``before``, ``after`` and ``source``.

:func:`row_changes` walks decoded events and gives one :class:`ChangeEvent` per
changed row, with where it came from: the file and position of its rows event,
the row's index in that event, the GTID of its transaction (MySQL GTID or
MariaDB GTID event before it; None in anonymous and pre-GTID transactions),
the server id, database, table and event time.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

from binlogkit.binlog.events import Event, FormatDescriptionEvent
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.transactions import GTID_EVENTS

__all__ = ["ChangeEvent", "ChangeSource", "row_changes"]


@frozen_dataclass
class ChangeSource:
    """Where a row change comes from (Debezium's ``source`` block)."""

    file: str | None
    pos: int
    row: int
    gtid: str | None
    server_id: int
    db: str | None
    table: str | None
    ts_ms: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "pos": self.pos,
            "row": self.row,
            "gtid": self.gtid,
            "server_id": self.server_id,
            "db": self.db,
            "table": self.table,
            "ts_ms": self.ts_ms,
        }


@frozen_dataclass
class ChangeEvent:
    """One changed row: ``op`` is ``c`` (insert), ``u`` (update) or ``d`` (delete).

    ``before`` and ``after`` map column names to values (None for the image an
    operation lacks); a column missing from a map was not logged (MINIMAL or
    NOBLOB row images).
    """

    op: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    source: ChangeSource

    def to_dict(self) -> dict[str, Any]:
        """The envelope as plain data, ready for :func:`binlogkit.jsonenc.dumps`."""
        return {
            "op": self.op,
            "before": self.before,
            "after": self.after,
            "source": self.source.to_dict(),
        }


def _op(event: RowsEvent) -> str:
    if not event.has_before:
        return "c"
    return "u" if event.has_after else "d"


def row_changes(events: Iterable[Event]) -> Iterator[ChangeEvent]:
    """The row changes of a stream of decoded events, in binlog order."""
    gtid: str | None = None
    for event in events:
        if isinstance(event, GTID_EVENTS):
            current = event.gtid
            gtid = None if current is None else str(current)
        elif isinstance(event, FormatDescriptionEvent):
            gtid = None
        elif isinstance(event, RowsEvent):
            header = event.header
            op = _op(event)
            file = os.path.basename(header.file) if header.file else None
            for index, row in enumerate(event.rows):
                source = ChangeSource(
                    file,
                    header.offset,
                    index,
                    gtid,
                    header.server_id,
                    event.schema,
                    event.table_name,
                    header.timestamp * 1000,
                )
                yield ChangeEvent(op, row.before, row.after, source)
