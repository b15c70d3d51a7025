"""The ``binlogkit`` command: a click group whose subcommands register themselves.

Each command lives in its own module under :mod:`binlogkit.cli` and is declared
with :func:`command`; the group imports every module of the package the first
time it is asked for its commands, so a new command is one new module.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from binlogkit.errors import BinlogError

__all__ = ["cli", "command", "emit", "main", "reading_errors"]


class _Commands(click.Group):
    """A group that imports the command modules of :mod:`binlogkit.cli` on first use."""

    _loaded = False

    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True
            package = importlib.import_module("binlogkit.cli")
            for module in pkgutil.iter_modules(package.__path__):
                if module.name != "main":
                    importlib.import_module(f"binlogkit.cli.{module.name}")

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._load()
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        self._load()
        return super().get_command(ctx, cmd_name)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-v", "--verbose", count=True, help="Log more to stderr (-v info, -vv debug).")
def cli(verbose: int) -> None:
    """Read, stream, process and write MySQL and MariaDB binary logs."""
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="binlogkit: %(levelname)s: %(message)s")


def command(name: str, **settings: Any) -> Callable[[Callable[..., Any]], click.Command]:
    """Decorator: register a function as the subcommand ``name`` of ``binlogkit``."""
    return cli.command(name, **settings)


@contextmanager
def reading_errors() -> Iterator[None]:
    """Turn a library error into a one-line message on stderr and exit status 1."""
    try:
        yield
    except BinlogError as err:
        raise click.ClickException(str(err)) from err


def emit(line: str) -> None:
    """Print one line; text that came from undecodable bytes goes out as those bytes."""
    click.echo(line.encode("utf-8", "surrogateescape"))


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``binlogkit`` console script."""
    cli.main(args=argv, prog_name="binlogkit")  # click itself quiets a broken pipe
