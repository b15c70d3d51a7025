"""``binlogkit dump``: binlog files as ``mariadb-binlog`` / ``mysqlbinlog`` print them."""

from __future__ import annotations

import io
import os
import sys
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import click

from binlogkit.binlog.constants import Flavor
from binlogkit.cli.connection import (
    client_settings,
    credential_options,
    resolve_password,
    settings_port,
)
from binlogkit.cli.main import (
    POSITION,
    binlog_files,
    command,
    read_modes,
    read_options,
    reading_errors,
)
from binlogkit.cli.selecting import GTID_SET, ID_LIST, REWRITE_DB
from binlogkit.dump.options import Base64Output, DumpOptions
from binlogkit.errors import BinlogError

if TYPE_CHECKING:  # the dump's and the server's modules are imported when the command runs
    from binlogkit.dump.remote import RemoteOptions
    from binlogkit.dump.run import Source
    from binlogkit.gtid import GtidSet
    from binlogkit.protocol.spec import ConnectionSpec

_FLAVORS = {"auto": None, "mariadb": Flavor.MARIADB, "mysql": Flavor.MYSQL}
_DEFAULT_SOCKET = "/run/mysqld/mysqld.sock"
"""Where the tools look for the server when given neither host nor socket (Debian builds)."""


def _datetime(text: str | None) -> datetime | None:
    """A ``--start-datetime`` value: ``YYYY-MM-DD HH:MM:SS`` (local time), like the tools."""
    if text is None:
        return None
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError:
        raise click.BadParameter(f"not a date and time: {text!r}") from None


def _default_server_id() -> int:
    """A replica id unlikely to clash with real servers: high bits and the pid."""
    return 0x6B640000 | (os.getpid() & 0xFFFF)


def _remote_spec(
    url: str | None,
    host: str | None,
    port: int | None,
    user: str | None,
    credentials: tuple[str | None, str | None, str | None],
    socket: str | None,
) -> ConnectionSpec:
    """The server of ``-R``: a URL, overridden by --host/--port/--user/--socket.

    ``credentials``: the values of :func:`credential_options`; the option file's
    ``[client]`` settings stand in for options not given.
    """
    from binlogkit.protocol.spec import ConnectionSpec

    password, password_file, defaults_file = credentials
    settings = client_settings(defaults_file)
    host = host or settings.get("host")
    port = port or settings_port(settings)
    user = user or settings.get("user")
    socket = socket or settings.get("socket")
    password = resolve_password(url, password, password_file, settings)

    spec = ConnectionSpec.from_url(url) if url else ConnectionSpec()
    changes: dict[str, Any] = {}
    if host is not None:
        changes["host"] = host
    if port is not None:
        changes["port"] = port
    if user is not None:
        changes["user"] = user
    if socket is not None:
        changes["unix_socket"] = socket
    elif host is None and port is None and not url:
        changes["unix_socket"] = _DEFAULT_SOCKET if os.path.exists(_DEFAULT_SOCKET) else None
    spec = replace(spec, **changes)
    return spec if password is None else spec.with_password(password)


def _is_url(text: str) -> bool:
    return text.startswith(("mysql://", "mariadb://"))


@command("dump", context_settings={"help_option_names": ["--help"]})
@binlog_files
@read_modes
@click.option(
    "-R",
    "--read-from-remote-server",
    "remote",
    is_flag=True,
    help="FILES are binlog names on a server (or a mysql:// URL comes first).",
)
@click.option("-h", "--host", help="The server's host (with -R).")
@click.option("-P", "--port", type=int, help="The server's port (with -R).")
@click.option("-u", "--user", help="User name on the server (with -R).")
@click.option("-S", "--socket", help="The server's unix socket (with -R).")
@click.option(
    "-t", "--to-last-log", is_flag=True, help="With -R: go on through the server's later binlogs."
)
@click.option(
    "--stop-never", is_flag=True, help="With -R: wait for new events (implies --to-last-log)."
)
@click.option(
    "--stop-never-slave-server-id",
    "--connection-server-id",
    "connection_server_id",
    type=int,
    help="The replica server id of the dump (default: made from the pid).",
)
@click.option(
    "--raw",
    is_flag=True,
    help="With -R: write the server's files byte for byte into the --result-file folder.",
)
@click.option(
    "-r",
    "--result-file",
    help="Write the dump here; with --raw the folder for the files.",
)
@click.option(
    "--stop-position", type=POSITION, help="Stop at the first event at or past this offset."
)
@click.option("--start-datetime", help="Begin at the first event at or after this local time.")
@click.option("--stop-datetime", help="Stop at the first event at or after this local time.")
@click.option("-d", "--database", help="Only this database's statements and rows.")
@click.option("-T", "--table", help="Only this table's rows (MariaDB).")
@click.option("--rewrite-db", multiple=True, type=REWRITE_DB, help="Rename a database.")
@click.option("--include-gtids", type=GTID_SET, help="Only these GTIDs (MySQL).")
@click.option("--exclude-gtids", type=GTID_SET, help="Not these GTIDs (MySQL).")
@click.option("--do-domain-ids", type=ID_LIST, help="Only these GTID domains (MariaDB).")
@click.option("--ignore-domain-ids", type=ID_LIST, help="Not these GTID domains (MariaDB).")
@click.option("--do-server-ids", type=ID_LIST, help="Only events of these server ids (MariaDB).")
@click.option("--ignore-server-ids", type=ID_LIST, help="Not events of these server ids (MariaDB).")
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
@click.option("--skip-gtids", is_flag=True, help="Leave GTID events and GTID_NEXT out (MySQL).")
@click.option(
    "--print-table-metadata", is_flag=True, help="Each table map's columns and primary key."
)
@click.option(
    "-B",
    "--flashback",
    is_flag=True,
    help="Print the undo of the range: rows events reversed, last transaction first.",
)
@click.option(
    "--flavor",
    type=click.Choice(sorted(_FLAVORS)),
    default="auto",
    show_default=True,
    help="Print like mariadb-binlog or mysqlbinlog; auto follows the binlog.",
)
@credential_options
def dump_command(
    files: tuple[str, ...],
    start_position: int | None,
    no_verify_checksum: bool,
    follow: bool,
    skip_corrupt: bool,
    key_file: str | None,
    filekey: str | None,
    stop_position: int | None,
    start_datetime: str | None,
    stop_datetime: str | None,
    database: str | None,
    table: str | None,
    rewrite_db: tuple[tuple[str, str], ...],
    include_gtids: GtidSet | None,
    exclude_gtids: GtidSet | None,
    do_domain_ids: frozenset[int] | None,
    ignore_domain_ids: frozenset[int] | None,
    do_server_ids: frozenset[int] | None,
    ignore_server_ids: frozenset[int] | None,
    server_id: int | None,
    base64_output: str,
    verbose: int,
    hexdump: bool,
    short_form: bool,
    print_row_count: bool,
    skip_annotate_row_events: bool,
    skip_gtids: bool,
    print_table_metadata: bool,
    flavor: str,
    flashback: bool,
    remote: bool,
    host: str | None,
    port: int | None,
    user: str | None,
    password: str | None,
    password_file: str | None,
    defaults_extra_file: str | None,
    socket: str | None,
    to_last_log: bool,
    stop_never: bool,
    connection_server_id: int | None,
    raw: bool,
    result_file: str | None,
) -> None:
    """Print binlog FILES as mysqlbinlog / mariadb-binlog do (paths, an index, a directory, -).

    With -R (or a mysql:// / mariadb:// URL first), FILES are binlog names on
    the server, each dumped from its start (the first from --start-position)
    to its end, or on to the last binlog with --to-last-log / --stop-never.
    """
    url = files[0] if files and _is_url(files[0]) else None
    remote = remote or url is not None
    if url is not None:
        files = files[1:]
    if (raw or to_last_log or stop_never) and not remote:
        raise click.UsageError("--raw, --to-last-log and --stop-never need -R")
    remote_options: RemoteOptions | None = None
    if remote:
        from binlogkit.dump.remote import RemoteOptions

        try:
            remote_options = RemoteOptions(
                spec=_remote_spec(
                    url, host, port, user, (password, password_file, defaults_extra_file), socket
                ),
                files=files,
                start_position=start_position,
                to_last_log=to_last_log,
                stop_never=stop_never,
                server_id=connection_server_id or _default_server_id(),
                verify_checksum=not no_verify_checksum,
                annotate_rows=not skip_annotate_row_events,
            )
        except BinlogError as err:
            raise click.UsageError(str(err)) from None
    if raw:
        assert remote_options is not None
        from binlogkit.dump.remote import copy_raw

        if result_file is None:
            raise click.UsageError("--raw needs --result-file DIR (where the files go)")
        with reading_errors():
            copy_raw(remote_options, result_file)
        return
    options = DumpOptions(
        base64_output=Base64Output(base64_output),
        verbose=verbose,
        hexdump=hexdump,
        short_form=short_form,
        flavor=_FLAVORS[flavor],
        print_row_count=print_row_count,
        skip_annotate_row_events=skip_annotate_row_events,
        skip_gtids=skip_gtids,
        print_table_metadata=print_table_metadata,
        database=database,
        table=table,
        rewrite_db=dict(rewrite_db),
        id_filters=any(
            x is not None
            for x in (do_domain_ids, ignore_domain_ids, do_server_ids, ignore_server_ids, server_id)
        ),
    )
    target = open(result_file, "wb") if result_file else sys.stdout.buffer  # noqa: SIM115
    out = io.TextIOWrapper(
        target,
        encoding="utf-8",
        errors="surrogateescape",
        newline="\n",
        write_through=False,
    )
    from binlogkit.dump.run import FileSource, dump, dump_flashback
    from binlogkit.dump.selection import Selection

    with reading_errors():
        try:
            selection = Selection(
                stop_position=stop_position,
                start_position=start_position,
                start_datetime=_datetime(start_datetime),
                stop_datetime=_datetime(stop_datetime),
                include_gtids=include_gtids,
                exclude_gtids=exclude_gtids,
                do_domain_ids=do_domain_ids,
                ignore_domain_ids=ignore_domain_ids,
                do_server_ids=do_server_ids,
                ignore_server_ids=ignore_server_ids,
                server_id=server_id,
            )
            source: Source
            if remote_options is not None:
                from binlogkit.dump.remote import RemoteSource

                source = RemoteSource(remote_options)
            else:
                source = FileSource(
                    files,
                    start_position,
                    {"verify_checksum": not no_verify_checksum}
                    | read_options(follow, skip_corrupt, key_file, filekey),
                    held=not selection.is_empty,
                )
            if flashback:
                dump_flashback(source, selection, options, out.write)
            else:
                dump(source, selection, options, out.write, out.flush)
        finally:
            out.flush()
            out.detach()
            if target is not sys.stdout.buffer:
                target.close()
