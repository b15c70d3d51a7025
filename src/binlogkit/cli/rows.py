"""``binlogkit rows``: one row change per line, in a Debezium-style envelope."""

from __future__ import annotations

import click

from binlogkit.cli.filtering import replication_filter
from binlogkit.cli.main import binlog_files, command, emit, open_files, reading_errors
from binlogkit.cli.render import ROW_FORMATS
from binlogkit.pipeline.changes import row_changes
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
@click.option("--raw", is_flag=True, help="Values as stored (ints and bytes), not converted.")
@replication_filter
def rows_command(
    fmt: str,
    start_position: int | None,
    no_verify_checksum: bool,
    raw: bool,
    rules: ReplicationFilter,
    files: tuple[str, ...],
) -> None:
    """Print the row changes of binlog FILES (paths, an index file, a directory, a glob or -).

    Each change is {"op": c|u|d, "before", "after", "source": {file, pos, row,
    gtid, server_id, db, table, ts_ms}}. The --replicate-* options (each repeatable) keep what a
    replica with those options would apply (rows of other tables are never decoded).
    """
    render = ROW_FORMATS[fmt]
    options = {"raw_values": raw, "tables": rules.table_predicate}
    with reading_errors():
        reader = open_files(files, start_position, no_verify_checksum, **options)
        with reader:
            for change in row_changes(rules.filter(reader)):
                for line in render(change):
                    emit(line)
