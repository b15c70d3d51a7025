"""``binlogkit schema``: the tables as of a position of a binlog, from its schema history."""

from __future__ import annotations

import json
from dataclasses import asdict
from math import inf
from typing import TYPE_CHECKING, Any

import click

from binlogkit.cli.main import (
    command,
    emit,
    key_file_options,
    key_options,
    open_files,
    reading_errors,
)
from binlogkit.cli.schema_source import SchemaChoice, load_catalog, schema_options

if TYPE_CHECKING:  # the schema's modules are imported when the command runs
    from binlogkit.schema.model import Catalog
    from binlogkit.schema.store import Position


def _position(text: str | None) -> Position | None:
    from binlogkit.schema.store import Position

    if text is None:
        return None
    file, sep, pos = text.rpartition(":")
    if not sep or not file or not pos.isdigit():
        raise click.BadParameter(f"{text!r} is not FILE:POSITION", param_hint="--at")
    return Position(file, int(pos))


@command("schema")
@click.argument("sources", nargs=-1, required=True)
@click.option("--at", "at_text", metavar="FILE:POS", help="The tables as of this position.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["sql", "json"]),
    default="sql",
    show_default=True,
    help="sql: CREATE statements; json: one definition per line.",
)
@schema_options
@key_options
def schema_command(
    sources: tuple[str, ...],
    at_text: str | None,
    fmt: str,
    schema: SchemaChoice,
    key_file: str | None,
    filekey: str | None,
) -> None:
    """Print the tables that SOURCES define as of a position (default: their end).

    SOURCES are binlog files (their DDL is applied to the --schema seed, up to --at;
    --history writes what they change), a schema history file, or a server URL (its
    tables now). Tables a statement could not be read for are listed as unknown.
    """
    from binlogkit.schema.seed import is_history_file

    at = _position(at_text)
    with reading_errors():
        if len(sources) == 1 and (
            sources[0].startswith(("mysql://", "mariadb://")) or is_history_file(sources[0])
        ):
            catalog, _ = load_catalog(sources[0], at)
        else:
            catalog = _from_binlogs(sources, at, schema, key_file_options(key_file, filekey))
    for line in _render(catalog, fmt):
        emit(line)


def _from_binlogs(
    files: tuple[str, ...], at: Position | None, schema: SchemaChoice, keys: dict[str, Any]
) -> Catalog:
    from binlogkit.io.binlog_index import resolve_sources
    from binlogkit.schema.store import Position

    first = files[0] if files[0] == "-" else resolve_sources(list(files))[0]
    history = schema.history(Position(first, 4))
    if history is None:
        raise click.UsageError("binlogkit schema needs a schema history: drop --schema none")
    stop = None if at is None else at.key()
    catalog = history.catalog
    file: str | None = ""
    stop_at: float = inf  # the offset to stop at in ``file``
    with open_files(files, None, False, schema=history, **keys) as events:
        for event in events:  # the history has taken an event in once it is given
            header = event.header
            if stop is not None and header.file != file:  # the file's place, once per file
                file = header.file
                place = Position(file, 0).key()
                stop_at = stop[2] if place[:2] == stop[:2] else (0 if place > stop else inf)
            if header.offset >= stop_at:
                break
            catalog = history.catalog
    return catalog


def _render(catalog: Catalog, fmt: str) -> list[str]:
    from binlogkit.schema.render import create_database_sql, create_table_sql

    if fmt == "json":
        return [json.dumps(asdict(table), ensure_ascii=False) for table in catalog.tables()]
    out = [f"{create_database_sql(db)};" for db in catalog.databases()]
    out += [f"{create_table_sql(table)};" for table in catalog.tables()]
    out += [f"-- unknown: {t.db}.{t.name}" for t in catalog.unknown_tables()]
    return out
