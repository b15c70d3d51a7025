"""``binlogkit dump``: binlog files as ``mariadb-binlog`` / ``mysqlbinlog`` print them."""

from __future__ import annotations

import io
import sys
from collections import OrderedDict
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import click

from binlogkit.binlog.constants import Flavor
from binlogkit.binlog.context import FormatContext
from binlogkit.binlog.decoder import encode_event
from binlogkit.binlog.events import Event, FormatDescriptionEvent, StartEventV3
from binlogkit.cli.main import binlog_files, command, reading_errors
from binlogkit.dump import Base64Output, Dumper, DumpOptions
from binlogkit.errors import BinlogError
from binlogkit.gtid import GtidSet
from binlogkit.io.files import open_binlog, resolve_sources
from binlogkit.pipeline.selection import Selection, parse_id_list, parse_rewrite_db

_FLAVORS = {"auto": None, "mariadb": Flavor.MARIADB, "mysql": Flavor.MYSQL}
_KEEP_RAW = 4096
"""How many decoded events' raw bytes are kept while the selection may hold them back."""


def _datetime(text: str | None) -> datetime | None:
    """A ``--start-datetime`` value: ``YYYY-MM-DD HH:MM:SS`` (local time), like the tools."""
    if text is None:
        return None
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError:
        raise click.BadParameter(f"not a date and time: {text!r}") from None


class _Source:
    """The events of the inputs, each with its raw bytes and the format it was read with."""

    def __init__(self, files: tuple[str, ...], start: int | None, options: dict[str, Any]) -> None:
        self.paths = resolve_sources(list(files))
        self.start = start
        self.options = options
        self._raw: OrderedDict[int, tuple[Event, bytes, FormatContext]] = OrderedDict()

    def events(self) -> Iterator[Event]:
        start = self.start
        if start is not None and start > 4 and self.paths and self.paths[0] != "-":
            with open_binlog(self.paths[0], **self.options) as reader:  # its format description
                for event in self._recorded(reader):
                    if isinstance(event, FormatDescriptionEvent | StartEventV3):
                        yield event
                        break
                    if event.header.end > start:
                        break
        with open_binlog(self.paths, start_position=start, **self.options) as reader:
            yield from self._recorded(reader)

    def _recorded(self, reader: Any) -> Iterator[Event]:
        raws = self._raw
        for event in reader:
            frame = reader.decoder.last_frame
            if frame is not None:
                raws[id(event)] = (event, bytes(frame.raw), frame.fmt)
                if len(raws) > _KEEP_RAW:
                    raws.popitem(last=False)
            yield event

    def raw(self, event: Event, fmt: FormatContext) -> tuple[bytes, FormatContext]:
        """The bytes an event was read from, or its encoding when the selection rewrote it."""
        entry = self._raw.pop(id(event), None)
        if entry is not None and entry[0] is event:
            return entry[1], entry[2]
        return encode_event(event, fmt), fmt


@command("dump")
@binlog_files
@click.option("--stop-position", type=int, help="Stop at the first event at or past this offset.")
@click.option("--start-datetime", help="Begin at the first event at or after this local time.")
@click.option("--stop-datetime", help="Stop at the first event at or after this local time.")
@click.option("-d", "--database", help="Only this database's statements and rows.")
@click.option("-T", "--table", help="Only this table's rows (MariaDB).")
@click.option("--rewrite-db", multiple=True, metavar="FROM->TO", help="Rename a database.")
@click.option("--include-gtids", help="Only these GTIDs (MySQL).")
@click.option("--exclude-gtids", help="Not these GTIDs (MySQL).")
@click.option("--do-domain-ids", help="Only these GTID domains (MariaDB).")
@click.option("--ignore-domain-ids", help="Not these GTID domains (MariaDB).")
@click.option("--do-server-ids", help="Only events of these server ids (MariaDB).")
@click.option("--ignore-server-ids", help="Not events of these server ids (MariaDB).")
@click.option("--server-id", type=int, help="Only events of this server id.")
@click.option(
    "--base64-output",
    type=click.Choice([m.value for m in Base64Output]),
    default="auto",
    show_default=True,
    help="auto: rows as BINLOG blocks; decode-rows: only ### pseudo-SQL (with -v); never.",
)
@click.option("-v", "--verbose", count=True, help="Rows as ### pseudo-SQL; -vv adds types.")
@click.option("-H", "--hexdump", is_flag=True, help="Each event's bytes as a hex dump comment.")
@click.option("-s", "--short-form", is_flag=True, help="Only the statements.")
@click.option(
    "--print-row-count/--skip-print-row-count",
    default=True,
    help="'# Number of rows' after row statements (mariadb-binlog).",
)
@click.option("--skip-annotate-row-events", is_flag=True, help="Leave Annotate_rows events out.")
@click.option(
    "--flavor",
    type=click.Choice(sorted(_FLAVORS)),
    default="auto",
    show_default=True,
    help="Print like mariadb-binlog or mysqlbinlog; auto follows the binlog.",
)
def dump_command(
    files: tuple[str, ...],
    start_position: int | None,
    no_verify_checksum: bool,
    stop_position: int | None,
    start_datetime: str | None,
    stop_datetime: str | None,
    database: str | None,
    table: str | None,
    rewrite_db: tuple[str, ...],
    include_gtids: str | None,
    exclude_gtids: str | None,
    do_domain_ids: str | None,
    ignore_domain_ids: str | None,
    do_server_ids: str | None,
    ignore_server_ids: str | None,
    server_id: int | None,
    base64_output: str,
    verbose: int,
    hexdump: bool,
    short_form: bool,
    print_row_count: bool,
    skip_annotate_row_events: bool,
    flavor: str,
) -> None:
    """Print binlog FILES as mysqlbinlog / mariadb-binlog do (paths, an index, a directory, -)."""
    options = DumpOptions(
        base64_output=Base64Output(base64_output),
        verbose=verbose,
        hexdump=hexdump,
        short_form=short_form,
        flavor=_FLAVORS[flavor],
        print_row_count=print_row_count,
        skip_annotate_row_events=skip_annotate_row_events,
        database=database,
        table=table,
        rewrite_db=dict(parse_rewrite_db(r) for r in rewrite_db),
        id_filters=any(
            x is not None
            for x in (do_domain_ids, ignore_domain_ids, do_server_ids, ignore_server_ids, server_id)
        ),
    )
    out = io.TextIOWrapper(
        sys.stdout.buffer,
        encoding="utf-8",
        errors="surrogateescape",
        newline="\n",
        write_through=False,
    )
    with reading_errors():
        try:
            selection = Selection(
                stop_position=stop_position,
                start_position=start_position,
                start_datetime=_datetime(start_datetime),
                stop_datetime=_datetime(stop_datetime),
                include_gtids=GtidSet.parse(include_gtids) if include_gtids else None,
                exclude_gtids=GtidSet.parse(exclude_gtids) if exclude_gtids else None,
                do_domain_ids=parse_id_list(do_domain_ids) if do_domain_ids else None,
                ignore_domain_ids=parse_id_list(ignore_domain_ids) if ignore_domain_ids else None,
                do_server_ids=parse_id_list(do_server_ids) if do_server_ids else None,
                ignore_server_ids=parse_id_list(ignore_server_ids) if ignore_server_ids else None,
                server_id=server_id,
            )
            source = _Source(files, start_position, {"verify_checksum": not no_verify_checksum})
            dump(source, selection, options, out.write)
        finally:
            out.flush()
            out.detach()


def dump(source: _Source, selection: Selection, options: DumpOptions, write: Any) -> None:
    """Print the selected events of ``source`` with ``write``, header and trailer included."""
    dumper = Dumper(options, write)
    dumper.begin()
    events = source.events()
    if not selection.is_empty:
        events = selection.filter(events, last_file=source.paths[-1] if source.paths else None)
    current: str | None = None
    fmt = FormatContext()
    events = iter(events)
    while True:
        try:
            event = next(events, None)
        except BinlogError:  # a read error: the tools still close the output
            if current is not None:
                dumper.end_file()
            dumper.end()
            raise
        if event is None:
            break
        if event.header.file != current:
            if current is not None:
                dumper.end_file()
            current = event.header.file
            dumper.begin_file()
        raw, fmt = source.raw(event, fmt)
        dumper.event(event, raw, fmt)
    if current is not None:
        dumper.end_file()
    dumper.end()
