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
def rows_command(
    fmt: str,
    start_position: int | None,
    no_verify_checksum: bool,
    raw: bool,
    files: tuple[str, ...],
) -> None:
    """Print the row changes of binlog FILES (paths, an index file, a directory, a glob or -).

    Each change is {"op": c|u|d, "before", "after", "source": {file, pos, row,
    gtid, server_id, db, table, ts_ms}}.
    """
    render = _FORMATS[fmt]
    with (
        reading_errors(),
        open_files(files, start_position, no_verify_checksum, raw_values=raw) as reader,
    ):
        for change in row_changes(reader):
            for line in render(change):
                emit(line)
