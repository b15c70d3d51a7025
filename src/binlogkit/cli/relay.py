"""``binlogkit relay URL --to DIR``: keep a byte-exact copy of a server's binlog files."""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Literal

import click

from binlogkit.cli.connection import (
    credential_options,
    first_retries,
    retry_option,
    server_spec,
)
from binlogkit.cli.main import command, reading_errors, show_progress

if TYPE_CHECKING:  # the relay's modules are imported when the command runs
    from binlogkit.services.relay import BinlogRelay

log = logging.getLogger(__name__)


def _default_server_id() -> int:
    """A replica id unlikely to clash with real servers or another relay: high bits and the pid."""
    return 0x6B720000 | (os.getpid() & 0xFFFF)


@contextmanager
def _stopped_by_signals(relay: BinlogRelay) -> Iterator[None]:
    """SIGINT and SIGTERM stop the relay cleanly (the copy stays resumable)."""

    def handler(signum: int, frame: FrameType | None) -> None:
        log.info("%s: stopping", signal.Signals(signum).name)
        relay.stop()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@command("relay")
@click.argument("url")
@click.option(
    "--to",
    "directory",
    required=True,
    type=click.Path(file_okay=False),
    help="Folder of the copy (created when missing; an earlier copy there is resumed).",
)
@click.option("--server-id", type=int, help="Replica server id (default: made from the pid).")
@click.option(
    "--start-file", help="In an empty folder, start with this binlog (default: the oldest)."
)
@click.option(
    "--stop-never/--non-blocking",
    default=True,
    show_default=True,
    help="Follow the server until stopped, or end at the end of its last binlog.",
)
@click.option("--no-verify-checksum", is_flag=True, help="Do not check the events' CRC32.")
@click.option("--sync", is_flag=True, help="fsync each file when complete, and the index.")
@click.option(
    "--heartbeat", type=float, default=5.0, show_default=True, help="Heartbeat period, seconds."
)
@click.option(
    "--encrypt-key-file",
    type=click.Path(dir_okay=False),
    help="The server's file_key_management key file: the files of a server with "
    "encrypt_binlog are copied encrypted as the server's are (needed to copy them).",
)
@click.option(
    "--filekey",
    metavar="SECRET",
    help="The secret of an encrypted --encrypt-key-file (FILE:path reads it from a file).",
)
@click.option(
    "--encrypt-algorithm",
    type=click.Choice(["cbc", "ctr"]),
    default="cbc",
    show_default=True,
    help="The server's file_key_management_encryption_algorithm (AES_CBC or AES_CTR).",
)
@credential_options
@retry_option
def relay_command(
    url: str,
    directory: str,
    server_id: int | None,
    start_file: str | None,
    stop_never: bool,
    no_verify_checksum: bool,
    sync: bool,
    heartbeat: float,
    encrypt_key_file: str | None,
    filekey: str | None,
    encrypt_algorithm: Literal["cbc", "ctr"],
    password: str | None,
    password_file: str | None,
    defaults_extra_file: str | None,
    connect_retries: int,
) -> None:
    """Copy the binlogs of the server at URL (mysql://user:pw@host:port) into DIR.

    The files get the server's names and bytes, with an index file; a rerun
    resumes after the last complete event. Reconnects after a broken
    connection; SIGINT or SIGTERM stops it cleanly. A MariaDB server with
    encrypt_binlog sends its binlogs decrypted: with --encrypt-key-file the
    copy is encrypted again, byte for byte the server's files.
    """
    from binlogkit.io.key_files import BinlogEncryption
    from binlogkit.services.relay import RECONNECT, BinlogRelay

    show_progress()
    with reading_errors():
        encryption = None
        if encrypt_key_file is not None:
            encryption = BinlogEncryption.from_key_file(
                encrypt_key_file, filekey=filekey, algorithm=encrypt_algorithm
            )
        elif filekey is not None:
            raise click.UsageError("--filekey decrypts an --encrypt-key-file: give it too")
        try:
            relay = BinlogRelay(
                server_spec(url, password, password_file, defaults_extra_file),
                directory,
                server_id=server_id if server_id is not None else _default_server_id(),
                start_file=start_file,
                blocking=stop_never,
                verify_checksum=not no_verify_checksum,
                sync=sync,
                heartbeat=heartbeat,
                reconnect=first_retries(RECONNECT, connect_retries),
                encryption=encryption,
            )
        except ValueError as err:
            raise click.UsageError(str(err)) from None
        with _stopped_by_signals(relay):
            end = relay.run()
    if end is not None:
        click.echo(f"{end.file}:{end.position}", err=True)
