"""The output formats of the commands that print binlog contents, in two registries.

:data:`ROW_FORMATS` turns a row change into lines (``binlogkit rows``, and
``binlogkit tail`` for row changes); :data:`EVENT_FORMATS` turns an event
listing into one line, with an optional header line before the first
(``binlogkit events``, and ``binlogkit tail --format events...``). A new
format is one decorated function: :func:`row_format` or :func:`event_format`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.cli.main import lazy

if TYPE_CHECKING:
    from binlogkit.binlog.info import EventListing
    from binlogkit.pipeline.changes import ChangeEvent

__all__ = [
    "EVENT_COLUMNS",
    "EVENT_FORMATS",
    "ROW_FORMATS",
    "EventFormat",
    "RowFormat",
    "event_format",
    "row_format",
]

RowFormat = Callable[["ChangeEvent"], list[str]]
"""Renders one row change as lines."""


@frozen_dataclass
class EventFormat:
    """Renders event listings: ``header`` (printed once first, if any) and one ``line`` each."""

    header: str | None
    line: Callable[[EventListing], str]


ROW_FORMATS: dict[str, RowFormat] = {}
EVENT_FORMATS: dict[str, EventFormat] = {}


def row_format(name: str) -> Callable[[RowFormat], RowFormat]:
    """Decorator: register a row-change renderer as format ``name``."""

    def register(render: RowFormat) -> RowFormat:
        ROW_FORMATS[name] = render
        return render

    return register


def event_format(
    name: str, header: str | None = None
) -> Callable[[Callable[[EventListing], str]], Callable[[EventListing], str]]:
    """Decorator: register an event-listing renderer as format ``name``."""

    def register(line: Callable[[EventListing], str]) -> Callable[[EventListing], str]:
        EVENT_FORMATS[name] = EventFormat(header, line)
        return line

    return register


# -- row changes ----------------------------------------------------------------------------

_OPS = {"c": "INSERT", "u": "UPDATE", "d": "DELETE"}
_dumps = lazy("binlogkit.jsonenc:dumps")  # loads the value types, which decoding loads anyway


@row_format("jsonl")
def _json_lines(change: ChangeEvent) -> list[str]:
    return [_dumps(change.to_dict())]


@row_format("text")
def _text_lines(change: ChangeEvent) -> list[str]:
    src = change.source
    lines = [
        f"{_OPS[change.op]} {src.db}.{src.table} at {src.file}:{src.pos} row {src.row}"
        f" gtid {src.gtid or '-'} server {src.server_id} ts_ms {src.ts_ms}"
    ]
    if change.before is not None:
        lines.append(f"  before: {_dumps(change.before)}")
    if change.after is not None:
        lines.append(f"  after:  {_dumps(change.after)}")
    return lines


# -- event listings ---------------------------------------------------------------------------

EVENT_COLUMNS = ("Log_name", "Pos", "Event_type", "Server_id", "End_log_pos", "Info")
"""The columns of SHOW BINLOG EVENTS."""

_BATCH_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\0": "\\0"})


@event_format("text", header="\t".join(EVENT_COLUMNS))
def _text_line(row: EventListing) -> str:
    """One tab-separated line, escaped as the ``mariadb --batch`` client prints results."""
    fields = (row.log_name, row.pos, row.event_type, row.server_id, row.end_log_pos, row.info)
    return "\t".join(str(field).translate(_BATCH_ESCAPES) for field in fields)


@event_format("jsonl")
def _json_line(row: EventListing) -> str:
    header = row.event.header
    return _dumps(
        {
            "file": row.log_name,
            "pos": row.pos,
            "end_log_pos": row.end_log_pos,
            "next_pos": header.end,
            "type": header.type_name,
            "type_code": header.type_code,
            "event_type": row.event_type,
            "server_id": row.server_id,
            "timestamp": header.timestamp,
            "flags": header.flags,
            "size": header.event_size,
            "info": row.info,
        }
    )
