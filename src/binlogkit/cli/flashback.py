"""``binlogkit flashback``: the undo of a range of binlog events, as BINLOG statements or SQL."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import click

from binlogkit.cli.main import (
    POSITION,
    binlog_files,
    command,
    emit,
    key_file_options,
    key_options,
    reading_errors,
)
from binlogkit.cli.selecting import GTID_SET, ID_LIST, REWRITE_DB

if TYPE_CHECKING:
    from binlogkit.dump.selection import Selection

F = TypeVar("F", bound=Callable[..., Any])

_SELECTION_OPTIONS = (
    click.option(
        "--stop-position", type=POSITION, help="Stop at the first event at or past this offset."
    ),
    click.option("--start-datetime", help="Begin at the first event at or after this local time."),
    click.option("--stop-datetime", help="Stop at the first event at or after this local time."),
    click.option("-d", "--database", help="Only this database's statements and rows."),
    click.option("-T", "--table", help="Only this table's rows (MariaDB)."),
    click.option("--rewrite-db", multiple=True, type=REWRITE_DB, help="Rename a database."),
    click.option("--include-gtids", type=GTID_SET, help="Only these GTIDs (MySQL)."),
    click.option("--exclude-gtids", type=GTID_SET, help="Not these GTIDs (MySQL)."),
    click.option("--do-domain-ids", type=ID_LIST, help="Only these GTID domains (MariaDB)."),
    click.option("--ignore-domain-ids", type=ID_LIST, help="Not these GTID domains (MariaDB)."),
    click.option(
        "--do-server-ids", type=ID_LIST, help="Only events of these server ids (MariaDB)."
    ),
    click.option(
        "--ignore-server-ids", type=ID_LIST, help="Not events of these server ids (MariaDB)."
    ),
    click.option("--server-id", type=int, help="Only events of this server id."),
)


def selection_options(function: F) -> F:
    """Decorator: the selection options of mysqlbinlog / mariadb-binlog (see :func:`selection`)."""
    for option in reversed(_SELECTION_OPTIONS):
        function = option(function)
    return function


def _datetime(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError:
        raise click.BadParameter(f"not a date and time: {text!r}") from None


def selection(start_position: int | None, **options: Any) -> Selection:
    """The :class:`Selection` of the values of :func:`selection_options` (and --start-position)."""
    from binlogkit.dump.selection import Selection

    return Selection(
        start_position=start_position,
        stop_position=options["stop_position"],
        start_datetime=_datetime(options["start_datetime"]),
        stop_datetime=_datetime(options["stop_datetime"]),
        database=options["database"],
        table=options["table"],
        rewrite_db=dict(options["rewrite_db"]),
        include_gtids=options["include_gtids"],
        exclude_gtids=options["exclude_gtids"],
        do_domain_ids=options["do_domain_ids"],
        ignore_domain_ids=options["ignore_domain_ids"],
        do_server_ids=options["do_server_ids"],
        ignore_server_ids=options["ignore_server_ids"],
        server_id=options["server_id"],
    )


def _columns(values: tuple[str, ...]) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {}
    for value in values:
        name, sep, names = value.partition("=")
        db, dot, table = name.partition(".")
        if not (sep and dot and db and table and names):
            raise click.BadParameter(f"--columns takes DB.TABLE=col1,col2,..., got {value!r}")
        out[(db, table)] = [n.strip() for n in names.split(",")]
    return out


@command("flashback")
@binlog_files
@selection_options
@click.option(
    "--sql",
    "output",
    flag_value="sql",
    help="Plain INSERT/UPDATE/DELETE statements (needs column names).",
)
@click.option(
    "--binlog-base64",
    "output",
    flag_value="binlog",
    default=True,
    help="BINLOG '...' statements, like mariadb-binlog --flashback (the default).",
)
@click.option(
    "--to",
    "to_file",
    type=click.Path(dir_okay=False),
    help="Write the undo as a binlog FILE instead (apply: mariadb-binlog FILE | mariadb).",
)
@click.option(
    "--columns",
    multiple=True,
    metavar="DB.TABLE=a,b,c",
    help="Column names of a table whose table maps lack them (for --sql; repeatable).",
)
@key_options
def flashback_command(
    files: tuple[str, ...],
    start_position: int | None,
    no_verify_checksum: bool,
    output: str,
    to_file: str | None,
    columns: tuple[str, ...],
    key_file: str | None,
    filekey: str | None,
    **options: Any,
) -> None:
    """Print the undo of the selected range of binlog FILES, ready for the mysql client.

    Rows events are turned around (inserts become deletes, deletes inserts,
    updates swap their images) and put in reverse order, last transaction
    first. Statements (DDL, statement-based changes) are not undone. With
    --to, the undo is written as a binlog file (in the source's format).
    """
    from binlogkit.dump.selection import read_selected
    from binlogkit.pipeline.flashback import flashback, undo_script
    from binlogkit.pipeline.sql import undo_sql
    from binlogkit.writer.undo import write_undo_binlog

    with reading_errors():
        chosen = selection(start_position, **options)
        names = _columns(columns)
        events = read_selected(
            list(files),
            chosen,
            verify_checksum=not no_verify_checksum,
            **key_file_options(key_file, filekey),
        )
        undo = flashback(events)
        if to_file is not None:
            write_undo_binlog(undo, to_file)
            return
        lines = undo_sql(undo, names) if output == "sql" else undo_script(undo)
        for line in lines:
            emit(line)
