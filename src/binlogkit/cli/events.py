"""``binlogkit events``: list events the way SHOW BINLOG EVENTS does."""

from __future__ import annotations

from collections.abc import Callable

import click

from binlogkit import jsonenc
from binlogkit.binlog.info import EventListing, list_events
from binlogkit.cli.main import binlog_files, command, emit, open_files, reading_errors

COLUMNS = ("Log_name", "Pos", "Event_type", "Server_id", "End_log_pos", "Info")

_BATCH_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\0": "\\0"})


def _text_line(row: EventListing) -> str:
    """One tab-separated line, escaped as the ``mariadb --batch`` client prints results."""
    fields = (row.log_name, row.pos, row.event_type, row.server_id, row.end_log_pos, row.info)
    return "\t".join(str(field).translate(_BATCH_ESCAPES) for field in fields)


def _json_line(row: EventListing) -> str:
    header = row.event.header
    return jsonenc.dumps(
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


_FORMATS: dict[str, tuple[str | None, Callable[[EventListing], str]]] = {
    "text": ("\t".join(COLUMNS), _text_line),
    "jsonl": (None, _json_line),
}


@command("events")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(sorted(_FORMATS)),
    default="text",
    show_default=True,
    help="text: SHOW BINLOG EVENTS columns, tab-separated; jsonl: one JSON object per event.",
)
@binlog_files
@click.option("--pass-unknown", is_flag=True, help="List unknown event types instead of stopping.")
def events_command(
    fmt: str,
    start_position: int | None,
    no_verify_checksum: bool,
    pass_unknown: bool,
    files: tuple[str, ...],
) -> None:
    """List the events of binlog FILES (paths, an index file, a directory, a glob or -)."""
    header, render = _FORMATS[fmt]
    if header is not None:
        emit(header)
    on_unknown = "pass" if pass_unknown else "error"
    with (
        reading_errors(),
        open_files(files, start_position, no_verify_checksum, on_unknown=on_unknown) as reader,
    ):
        for row in list_events(reader):
            emit(render(row))
