"""The ``binlogkit`` command: a click group whose subcommands register themselves.

Each command lives in its own module under :mod:`binlogkit.cli` and is declared
with :func:`command`, so a new command is one new module. A command runs with
only its own module imported when the module bears the command's name; listing
the commands imports them all. The command modules import what does the work
(the decoder, the dump, the network code) when the command runs, in its body or
through :func:`lazy`, so ``--help`` and ``--version`` start quickly.
"""

from __future__ import annotations

import errno
import importlib
import importlib.util
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import click

import binlogkit
from binlogkit.binlog import utf8
from binlogkit.errors import BinlogError

if TYPE_CHECKING:
    from binlogkit.services.replica_stream import BinlogStream

__all__ = [
    "POSITION",
    "Parsed",
    "binlog_files",
    "cli",
    "command",
    "emit",
    "key_file_options",
    "key_options",
    "lazy",
    "main",
    "open_files",
    "os_error_text",
    "read_modes",
    "read_options",
    "reading_errors",
    "show_progress",
]

F = TypeVar("F", bound=Callable[..., Any])


class _Commands(click.Group):
    """A group that imports its command modules only when they are needed.

    The command ``name`` is looked up first in the module of the same name
    (``-`` as ``_``), so running one command imports only its module; listing
    the commands (``--help``), or a name no module is named after, imports
    every module of :mod:`binlogkit.cli`.
    """

    _loaded = False

    def _load(self) -> None:
        import pkgutil

        if not self._loaded:
            self._loaded = True
            package = importlib.import_module(_PACKAGE)
            for module in pkgutil.iter_modules(package.__path__):
                if module.name != "main":
                    importlib.import_module(f"{_PACKAGE}.{module.name}")

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._load()
        return super().list_commands(ctx)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; a library or system error becomes one ``Error:`` line, exit 1."""
        try:
            return super().invoke(ctx)
        except BinlogError as err:
            raise click.ClickException(str(err)) from err
        except OSError as err:
            if err.errno == errno.EPIPE:
                raise  # click quiets a closed pipe
            raise click.ClickException(os_error_text(err)) from err

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and not self._loaded:
            name = cmd_name.replace("-", "_")
            if name.isidentifier() and importlib.util.find_spec(f"{_PACKAGE}.{name}"):
                importlib.import_module(f"{_PACKAGE}.{name}")
            if cmd_name not in self.commands:
                self._load()
        return super().get_command(ctx, cmd_name)


_PACKAGE = "binlogkit.cli"


_WRITE_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
"""Errors of an output that is full."""


def os_error_text(err: OSError) -> str:
    """An OSError as one line: the path and the system's reason, or where it came from."""
    reason = err.strerror or str(err)
    if err.filename is not None:
        return f"{err.filename}: {reason}"
    if err.errno in _WRITE_ERRORS:
        return f"cannot write the output: {reason}"
    return reason


def lazy(target: str) -> Callable[..., Any]:
    """The function at ``target`` ("module:name.attr"), imported on the first call.

    For option parsers and renderers a command module names at import time but
    only calls when the command runs.
    """
    module, _, path = target.partition(":")
    found: list[Callable[..., Any]] = []

    def call(*args: Any, **kwargs: Any) -> Any:
        if not found:
            value: Any = importlib.import_module(module)
            for name in path.split("."):
                value = getattr(value, name)
            found.append(value)
        return found[0](*args, **kwargs)

    call.__qualname__ = call.__name__ = path.rpartition(".")[2]
    return call


class Parsed(click.ParamType):
    """An option value that a library function parses; its complaint is a usage error."""

    def __init__(self, name: str, parse: Callable[[str], Any]) -> None:
        self.name = name
        self.parse = parse

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return self.parse(value)
        except (BinlogError, ValueError) as err:
            self.fail(str(err), param, ctx)


POSITION = click.IntRange(min=0, max=(1 << 63) - 1)
"""A file offset: not negative, and one a file system can seek to."""


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(binlogkit.__version__, message="binlogkit %(version)s")
@click.option("-v", "--verbose", count=True, help="Log more to stderr (-v info, -vv debug).")
def cli(verbose: int) -> None:
    """Read, stream, process and write MySQL and MariaDB binary logs."""
    import logging  # not for --help and --version, which end before this runs

    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="binlogkit: %(levelname)s: %(message)s")


def show_progress() -> None:
    """Show the services' connection and progress lines (INFO) at the default verbosity."""
    import logging

    from binlogkit.services.replica_stream import progress

    if not progress.isEnabledFor(logging.INFO):
        progress.setLevel(logging.INFO)


def command(name: str, **settings: Any) -> Callable[[Callable[..., Any]], click.Command]:
    """Decorator: register a function as the subcommand ``name`` of ``binlogkit``."""
    return cli.command(name, **settings)


def binlog_files(command: F) -> F:
    """Decorator: the FILES argument, ``--start-position`` and ``--no-verify-checksum``.

    Every command that reads binlog files takes them; :func:`open_files` opens what they name.
    """
    command = click.argument("files", nargs=-1, required=True)(command)
    command = click.option(
        "--no-verify-checksum", is_flag=True, help="Do not check the events' CRC32."
    )(command)
    return click.option(
        "--start-position", type=POSITION, help="Begin the first file at this offset."
    )(command)


def key_options(command: F) -> F:
    """Decorator: ``--key-file`` and ``--filekey``, the keys of encrypted binlogs."""
    command = click.option(
        "--filekey",
        metavar="SECRET",
        help="The secret of an encrypted --key-file (file_key_management_filekey; "
        "FILE:path reads it from a file).",
    )(command)
    return click.option(
        "--key-file",
        type=click.Path(dir_okay=False),
        help="Decrypt encrypted binlogs: MariaDB's file_key_management key file "
        "or MySQL's keyring_file.",
    )(command)


def read_modes(command: F) -> F:
    """Decorator: ``--follow``, ``--skip-corrupt``, ``--key-file`` and ``--filekey``;
    :func:`read_options` turns them into :func:`binlogkit.open` options."""
    command = key_options(command)
    command = click.option(
        "--skip-corrupt",
        is_flag=True,
        help="Skip events that fail their checksum or decoding (a warning each) and go on.",
    )(command)
    return click.option(
        "--follow",
        is_flag=True,
        help="Wait for more at the end of the last file, and go on into the files it rotates to.",
    )(command)


def read_options(
    follow: bool, skip_corrupt: bool, key_file: str | None = None, filekey: str | None = None
) -> dict[str, Any]:
    """The :func:`binlogkit.open` options of :func:`read_modes`."""
    options: dict[str, Any] = {"follow": follow, "on_corrupt": "skip" if skip_corrupt else "error"}
    return options | key_file_options(key_file, filekey)


def key_file_options(key_file: str | None, filekey: str | None) -> dict[str, Any]:
    """The :func:`binlogkit.open` options of :func:`key_options`."""
    return {} if key_file is None else {"key_file": key_file, "filekey": filekey}


def open_files(
    files: tuple[str, ...],
    start_position: int | None,
    no_verify_checksum: bool,
    *,
    follow: bool = False,
    skip_corrupt: bool = False,
    key_file: str | None = None,
    filekey: str | None = None,
    **options: Any,
) -> binlogkit.BinlogReader | BinlogStream:
    """Open the files of :func:`binlog_files` (read as :func:`read_modes` say); ``options``
    go to :func:`binlogkit.open`."""
    return binlogkit.open(
        list(files),
        start_position=start_position,
        verify_checksum=not no_verify_checksum,
        **read_options(follow, skip_corrupt, key_file, filekey),
        **options,
    )


@contextmanager
def reading_errors() -> Iterator[None]:
    """Turn a library error into a one-line message on stderr and exit status 1."""
    try:
        yield
    except BinlogError as err:
        raise click.ClickException(str(err)) from err


def emit(line: str) -> None:
    """Print one line; text that came from undecodable bytes goes out as those bytes."""
    click.echo(utf8.encode(line))


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``binlogkit`` console script."""
    try:
        cli.main(args=argv, prog_name="binlogkit")  # click itself quiets a broken pipe
    finally:
        _flush_output()


def _flush_output() -> None:
    """Write out what stdout still holds; a failure is an error line, not a message at exit."""
    try:
        sys.stdout.flush()
    except OSError as err:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush
        if err.errno == errno.EPIPE:
            raise SystemExit(1) from None
        click.echo(f"Error: {os_error_text(err)}", err=True)
        raise SystemExit(1) from None
