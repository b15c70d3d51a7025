"""The ``--replicate-*`` options of ``rows`` and ``tail``: one :class:`ReplicationFilter`."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import click

from binlogkit.cli.main import lazy
from binlogkit.errors import BinlogError

__all__ = ["replication_filter"]

F = TypeVar("F", bound=Callable[..., Any])


def _each(parse: Callable[[str], Any]) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """A click callback that parses every value of a repeated option, as a usage error."""

    def check(
        ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
    ) -> tuple[Any, ...]:
        try:
            return tuple(parse(value) for value in values)
        except BinlogError as err:
            raise click.BadParameter(str(err)) from None

    return check


def _regex(text: str) -> str:
    return _parse_regex(text).pattern


_parse_regex = lazy("binlogkit.pipeline.filters:parse_regex")
_TABLE = _each(lazy("binlogkit.pipeline.filters:parse_table_rule"))
_REWRITE = _each(lazy("binlogkit.pipeline.filters:parse_rewrite_db"))
_OPTIONS: tuple[tuple[tuple[str, ...], str, str, Any, str], ...] = (
    (("--replicate-do-db",), "do_db", "DB", None,
     "Only this database: the table's for row events, the default (USE) one for statements."),
    (("--replicate-ignore-db",), "ignore_db", "DB", None,
     "Not this database (looked at only when no --replicate-do-db is given)."),
    (("--replicate-do-table", "--table"), "do_table", "DB.TABLE", _TABLE,
     "Only this table (with the other table rules, in the server's order)."),
    (("--replicate-ignore-table",), "ignore_table", "DB.TABLE", _TABLE, "Not this table."),
    (("--replicate-wild-do-table",), "wild_do_table", "PATTERN", _TABLE,
     "Only tables whose DB.TABLE is LIKE this pattern (% any run, _ one character, \\ escapes)."),
    (("--replicate-wild-ignore-table",), "wild_ignore_table", "PATTERN", _TABLE,
     "Not the tables whose DB.TABLE is LIKE this pattern."),
    (("--replicate-rewrite-db",), "rewrite_db", "FROM->TO", _REWRITE,
     "Rename database FROM to TO before the other rules (and in the output)."),
    (("--include-regex",), "include_regex", "REGEX", _each(_regex),
     "Only tables whose whole DB.TABLE matches a REGEX (after the replicate rules)."),
    (("--exclude-regex",), "exclude_regex", "REGEX", _each(_regex),
     "Not the tables whose whole DB.TABLE matches this REGEX."),
)  # fmt: skip


def replication_filter(command: F) -> F:
    """Decorator: the replication filter options, given to the command as ``rules``.

    Each ``--replicate-*`` option is the server's option of that name (repeatable);
    ``--filter-flavor`` and ``--lower-case-table-names`` pick the server's case rules.
    """

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        from binlogkit.binlog.constants import Flavor
        from binlogkit.pipeline.filters import ReplicationFilter

        rules = {name: kwargs.pop(f"filter_{name}") for _, name, _, _, _ in _OPTIONS}
        kwargs["rules"] = ReplicationFilter(
            **rules,
            flavor=Flavor[kwargs.pop("filter_flavor").upper()],
            lower_case_table_names=kwargs.pop("lower_case_table_names"),
        )
        return command(*args, **kwargs)

    options = [
        click.option(*flags, f"filter_{name}", multiple=True, metavar=metavar, callback=check,
                     help=help_text)
        for flags, name, metavar, check, help_text in _OPTIONS
    ]  # fmt: skip
    options.append(
        click.option(
            "--filter-flavor",
            type=click.Choice(["mariadb", "mysql"]),
            default="mariadb",
            show_default=True,
            help="Whose case rules the filters follow (MariaDB: databases exact, tables any case).",
        )
    )
    options.append(
        click.option(
            "--lower-case-table-names",
            type=click.IntRange(0, 2),
            default=0,
            show_default=True,
            help="The server's lower_case_table_names: not 0 lowercases the binlog's names.",
        )
    )
    for option in reversed(options):
        run = option(run)
    return run  # type: ignore[return-value]
