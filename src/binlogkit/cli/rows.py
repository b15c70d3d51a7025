"""``binlogkit rows``: one row change per line, in a Debezium-style envelope."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from binlogkit.cli.filtering import replication_filter
from binlogkit.cli.main import binlog_files, command, emit, open_files, read_modes, reading_errors
from binlogkit.cli.render import ROW_FORMATS
from binlogkit.cli.schema_source import SchemaChoice, schema_options

if TYPE_CHECKING:
    from binlogkit.pipeline.filters import ReplicationFilter


@command("rows")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(sorted(ROW_FORMATS)),
    default="jsonl",
    show_default=True,
    help="jsonl: one JSON envelope per row change (docs/json-encoding.md); text: for reading.",
)
@binlog_files
@read_modes
@click.option("--raw", is_flag=True, help="Values as stored (ints and bytes), not converted.")
@replication_filter
@schema_options
def rows_command(
    fmt: str,
    start_position: int | None,
    no_verify_checksum: bool,
    follow: bool,
    skip_corrupt: bool,
    key_file: str | None,
    filekey: str | None,
    raw: bool,
    rules: ReplicationFilter,
    schema: SchemaChoice,
    files: tuple[str, ...],
) -> None:
    """Print the row changes of binlog FILES (paths, an index file, a directory, a glob or -).

    Each change is {"op": c|u|d, "before", "after", "source": {file, pos, row,
    gtid, server_id, db, table, ts_ms}}. The --replicate-* options (each repeatable) keep what a
    replica with those options would apply (rows of other tables are never decoded). Column
    names and types come from the binlog's metadata and the schema history (--schema).
    """
    from binlogkit.io.binlog_index import resolve_sources
    from binlogkit.pipeline.changes import row_changes
    from binlogkit.schema.store import Position

    render = ROW_FORMATS[fmt]
    with reading_errors():
        first = files[0] if files[0] == "-" else resolve_sources(list(files))[0]
        history = schema.history(Position(first, start_position or 4))
        options = {"raw_values": raw, "tables": rules.table_predicate, "schema": history}
        reader = open_files(
            files,
            start_position,
            no_verify_checksum,
            follow=follow,
            skip_corrupt=skip_corrupt,
            key_file=key_file,
            filekey=filekey,
            **options,
        )
        with reader:
            for change in row_changes(rules.filter(reader)):
                for line in render(change):
                    emit(line)
