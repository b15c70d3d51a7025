"""``binlogkit tail URL``: follow a live server's binlog, printing row changes or events."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING

import click

from binlogkit.cli.connection import (
    credential_options,
    first_retries,
    retry_option,
    server_spec,
)
from binlogkit.cli.filtering import replication_filter
from binlogkit.cli.main import command, emit, reading_errors, show_progress
from binlogkit.cli.render import EVENT_FORMATS, ROW_FORMATS
from binlogkit.cli.schema_source import SchemaChoice, schema_options

if TYPE_CHECKING:  # the stream's modules are imported when the command runs
    from binlogkit.binlog.events import Event
    from binlogkit.pipeline.filters import ReplicationFilter
    from binlogkit.services.replica_stream import BinlogStream, Start


def _default_server_id() -> int:
    """A replica id unlikely to clash with real servers or another tail: high bits and the pid."""
    return 0x6B740000 | (os.getpid() & 0xFFFF)


def _start(
    start_file: str | None, start_position: int | None, start_gtid: str | None, oldest: bool
) -> Start:
    chosen = sum(x is not None for x in (start_file, start_gtid)) + oldest
    if chosen > 1:
        raise click.UsageError("give one of --start-file, --start-gtid or --oldest")
    if start_position is not None and start_file is None:
        raise click.UsageError("--start-position needs --start-file (positions are per file)")
    if start_file is not None:
        return (start_file, start_position if start_position is not None else 4)
    if start_gtid is not None:
        from binlogkit.services.replica_stream import parse_gtids

        try:
            return parse_gtids(start_gtid)
        except ValueError as err:
            raise click.BadParameter(str(err), param_hint="--start-gtid") from None
    return "oldest" if oldest else "now"


def _until(
    stream: BinlogStream, stop_position: int | None, stop_datetime: datetime | None
) -> Iterator[Event]:
    """The stream's events (the stream-only ones too) up to the stop conditions."""
    from binlogkit.protocol.replication import is_stream_only

    stop_at = None if stop_datetime is None else stop_datetime.timestamp()
    for event in stream:
        header = event.header
        if not is_stream_only(event):
            if stop_position is not None and header.offset >= stop_position:
                return
            if stop_at is not None and header.timestamp >= stop_at:
                return
        yield event


def _event_format_name(name: str) -> str:
    """``--format`` of tail for an event format: ``events`` (text) or ``events-NAME``."""
    return "events" if name == "text" else f"events-{name}"


_EVENT_CHOICES = {_event_format_name(name): name for name in EVENT_FORMATS}


def _binlog_events(events: Iterator[Event]) -> Iterator[Event]:
    """Leave out heartbeats and the other events that are not in the binlog files."""
    from binlogkit.protocol.replication import is_stream_only

    return (event for event in events if not is_stream_only(event))


@command("tail")
@click.argument("url")
@click.option(
    "--format",
    "fmt",
    type=click.Choice([*sorted(ROW_FORMATS), *sorted(_EVENT_CHOICES)]),
    default="jsonl",
    show_default=True,
    help="jsonl / text: row changes (as `binlogkit rows`); events / events-jsonl: every "
    "event (as `binlogkit events`).",
)
@click.option("--start-file", help="Start in this binlog file (at 4, or --start-position).")
@click.option("--start-position", type=int, help="Start at this offset of --start-file.")
@click.option("--start-gtid", help="Start after these GTIDs (MySQL uuid:1-5 or MariaDB 0-1-5).")
@click.option("--oldest", is_flag=True, help="Start at the oldest binlog (default: from now).")
@click.option("--stop-position", type=int, help="Stop at the first event at or past this offset.")
@click.option(
    "--stop-datetime",
    type=click.DateTime(["%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d"]),
    help="Stop at the first event at or after this local time.",
)
@click.option(
    "--non-blocking", is_flag=True, help="End at the end of the last binlog instead of waiting."
)
@click.option("--server-id", type=int, help="Replica server id (default: made from the pid).")
@click.option(
    "--heartbeat", type=float, default=30.0, show_default=True, help="Heartbeat period, seconds."
)
@click.option("--raw", is_flag=True, help="Row values as stored (ints and bytes).")
@credential_options
@retry_option
@replication_filter
@schema_options
def tail_command(
    url: str,
    fmt: str,
    start_file: str | None,
    start_position: int | None,
    start_gtid: str | None,
    oldest: bool,
    stop_position: int | None,
    stop_datetime: datetime | None,
    non_blocking: bool,
    server_id: int | None,
    heartbeat: float,
    raw: bool,
    password: str | None,
    password_file: str | None,
    defaults_extra_file: str | None,
    connect_retries: int,
    rules: ReplicationFilter,
    schema: SchemaChoice,
) -> None:
    """Follow the binlog of the server at URL (mysql://user:pw@host:port or mariadb://...).

    Reconnects by itself after a broken connection and goes on exactly after
    the last complete transaction. The --replicate-* options (each repeatable) keep what a
    replica with those options would apply. Started from now, the tables' definitions are
    read from the server at that very position (lock-free), and followed through its DDL.
    """
    from binlogkit.binlog.context import DecodeOptions
    from binlogkit.binlog.info import list_events
    from binlogkit.pipeline.changes import row_changes
    from binlogkit.protocol.replication import is_stream_only
    from binlogkit.schema.store import Position
    from binlogkit.services.live_schema import stream_schema
    from binlogkit.services.replica_stream import Backoff, BinlogStream

    show_progress()
    start = _start(start_file, start_position, start_gtid, oldest)
    with reading_errors():
        spec = server_spec(url, password, password_file, defaults_extra_file)
        if schema.source is None and schema.history_path is None:
            history, start = stream_schema(spec, start)
        else:  # a history file gives the definitions as of a (file, position) start
            at = Position(*start) if isinstance(start, tuple) else None
            history = schema.history(at)
        try:
            stream = BinlogStream(
                spec,
                server_id=server_id if server_id is not None else _default_server_id(),
                start=start,
                blocking=not non_blocking,
                heartbeat=heartbeat,
                reconnect=first_retries(Backoff(), connect_retries),
                include_stream_only=True,
                options=DecodeOptions(raw_values=raw, tables=rules.table_predicate),
                schema=history,
            )
        except ValueError as err:
            raise click.UsageError(str(err)) from None
        with stream:
            events = rules.filter(_until(stream, stop_position, stop_datetime))
            if fmt in _EVENT_CHOICES:
                render = EVENT_FORMATS[_EVENT_CHOICES[fmt]]
                if render.header is not None:
                    emit(render.header)
                for row in list_events(events):
                    if not is_stream_only(row.event):
                        emit(render.line(row))
            else:
                lines = ROW_FORMATS[fmt]
                for change in row_changes(_binlog_events(events)):
                    for line in lines(change):
                        emit(line)
