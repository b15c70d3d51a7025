"""``binlogkit events``: list events the way SHOW BINLOG EVENTS does."""

from __future__ import annotations

import click

from binlogkit.cli.main import binlog_files, command, emit, open_files, read_modes, reading_errors
from binlogkit.cli.render import EVENT_FORMATS


@command("events")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(sorted(EVENT_FORMATS)),
    default="text",
    show_default=True,
    help="text: SHOW BINLOG EVENTS columns, tab-separated; jsonl: one JSON object per event.",
)
@binlog_files
@read_modes
@click.option("--pass-unknown", is_flag=True, help="List unknown event types instead of stopping.")
def events_command(
    fmt: str,
    start_position: int | None,
    no_verify_checksum: bool,
    follow: bool,
    skip_corrupt: bool,
    key_file: str | None,
    filekey: str | None,
    pass_unknown: bool,
    files: tuple[str, ...],
) -> None:
    """List the events of binlog FILES (paths, an index file, a directory, a glob or -)."""
    from binlogkit.binlog.info import list_events

    render = EVENT_FORMATS[fmt]
    if render.header is not None:
        emit(render.header)
    on_unknown = "pass" if pass_unknown else "error"
    with (
        reading_errors(),
        open_files(
            files,
            start_position,
            no_verify_checksum,
            on_unknown=on_unknown,
            follow=follow,
            skip_corrupt=skip_corrupt,
            key_file=key_file,
            filekey=filekey,
            schema=None,  # a listing shows no columns: no schema history (nor its SQL parser)
        ) as reader,
    ):
        for row in list_events(reader):
            emit(render.line(row))
