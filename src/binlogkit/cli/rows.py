"""``binlogkit rows``: one row change per line, in a Debezium-style envelope."""

from __future__ import annotations

from collections.abc import Callable

import click

from binlogkit import jsonenc
from binlogkit.cli.main import binlog_files, command, emit, open_files, reading_errors
from binlogkit.pipeline.changes import ChangeEvent, row_changes

_OPS = {"c": "INSERT", "u": "UPDATE", "d": "DELETE"}


def _json_lines(change: ChangeEvent) -> list[str]:
    return [jsonenc.dumps(change.to_dict())]


def _text_lines(change: ChangeEvent) -> list[str]:
    src = change.source
    lines = [
        f"{_OPS[change.op]} {src.db}.{src.table} at {src.file}:{src.pos} row {src.row}"
        f" gtid {src.gtid or '-'} server {src.server_id} ts_ms {src.ts_ms}"
    ]
    if change.before is not None:
        lines.append(f"  before: {jsonenc.dumps(change.before)}")
    if change.after is not None:
        lines.append(f"  after:  {jsonenc.dumps(change.after)}")
    return lines


_FORMATS: dict[str, Callable[[ChangeEvent], list[str]]] = {
    "jsonl": _json_lines,
    "text": _text_lines,
}


@command("rows")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(sorted(_FORMATS)),
    default="jsonl",
    show_default=True,
    help="jsonl: one JSON envelope per row change (docs/json-encoding.md); text: for reading.",
)
@binlog_files
@click.option("--raw", is_flag=True, help="Values as stored (ints and bytes), not converted.")
@click.option(
    "--table",
    "tables",
    multiple=True,
    metavar="DB.TABLE",
    help="Only this table (repeatable); other tables' rows are never decoded.",
)
def rows_command(
    fmt: str,
    start_position: int | None,
    no_verify_checksum: bool,
    raw: bool,
    tables: tuple[str, ...],
    files: tuple[str, ...],
) -> None:
    """Print the row changes of binlog FILES (paths, an index file, a directory, a glob or -).

    Each change is {"op": c|u|d, "before", "after", "source": {file, pos, row,
    gtid, server_id, db, table, ts_ms}}.
    """
    render = _FORMATS[fmt]
    wanted = {tuple(name.split(".", 1)) for name in tables}
    if any(len(name) != 2 for name in wanted):
        raise click.BadParameter("give tables as DB.TABLE", param_hint="--table")
    keep = (lambda db, table: (db, table) in wanted) if wanted else None
    options = {"raw_values": raw, "tables": keep}
    with reading_errors():
        reader = open_files(files, start_position, no_verify_checksum, **options)
        with reader:
            for change in row_changes(reader):
                for line in render(change):
                    emit(line)
