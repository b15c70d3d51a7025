"""The ``--schema`` and ``--history`` options: where a command's table definitions come from.

``--schema`` takes a file of CREATE statements (``mariadb-dump --no-data``
output), a history file written by ``--history``, a server URL (its tables as
of now), or ``none`` (the binlog's own columns only). Without it the history
starts empty and learns the tables from the DDL it reads.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from binlogkit.schema.history import SchemaHistory
    from binlogkit.schema.model import Catalog
    from binlogkit.schema.store import Position

__all__ = ["SchemaChoice", "load_catalog", "schema_options"]

F = TypeVar("F", bound=Callable[..., Any])


class SchemaChoice:
    """What ``--schema`` and ``--history`` asked for; :meth:`history` makes the source."""

    def __init__(self, source: str | None, history: str | None) -> None:
        self.source = source
        self.history_path = history

    @property
    def off(self) -> bool:
        return self.source == "none"

    def history(self, at: Position | None = None) -> SchemaHistory | None:
        """The schema source for reading from ``at`` (None with ``--schema none``); a seed
        without a position of its own is recorded in ``--history`` at ``at``."""
        from binlogkit.schema.history import SchemaHistory

        if self.off:
            if self.history_path is not None:
                raise click.UsageError("--history needs a schema history: drop --schema none")
            return None
        if self.source is None:
            return SchemaHistory(path=self.history_path)
        seed, seeded_at = load_catalog(self.source, at)
        return SchemaHistory(seed, path=self.history_path, at=seeded_at or at)


def load_catalog(source: str, at: Position | None = None) -> tuple[Catalog, Position | None]:
    """The tables ``source`` defines (as of ``at`` for a history file), and where they hold."""
    if source.startswith(("mysql://", "mariadb://")):
        from binlogkit.io.mysql import MySQLConnection
        from binlogkit.protocol.spec import ConnectionSpec
        from binlogkit.schema.seed import seed_from_server

        with MySQLConnection.connect(ConnectionSpec.from_url(source)) as conn:
            return seed_from_server(conn)
    from binlogkit.schema.seed import seed_from_path  # the SQL parser, only when a seed is given

    return seed_from_path(source, at=at), None


def schema_options(command: F) -> F:
    """Decorator: ``--schema`` and ``--history``, given to the command as ``schema``."""

    @click.option(
        "--schema",
        "schema_source",
        metavar="FILE|URL|none",
        help="Table definitions to start from: CREATE statements (mariadb-dump --no-data), "
        "a --history file, a server URL, or none (the binlog's own columns). "
        "Default: learn them from the DDL read.",
    )
    @click.option(
        "--history",
        "history_path",
        type=click.Path(dir_okay=False),
        help="Append the schema history (each table's versions with positions) to this file.",
    )
    @functools.wraps(command)
    def wrapper(*args: Any, schema_source: str | None, history_path: str | None, **kw: Any) -> Any:
        return command(*args, schema=SchemaChoice(schema_source, history_path), **kw)

    return wrapper  # type: ignore[return-value]
