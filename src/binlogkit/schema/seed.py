"""Seeding a schema history: from a live server, a file of CREATE statements or a history file.

A live server's definitions are read with ``SHOW CREATE DATABASE`` and ``SHOW
CREATE TABLE`` (parsed by the same DDL engine as the binlog's statements).
DDL is not transactional, so no snapshot makes those reads consistent with a
binlog position; instead the binlog position is read before and after them
(``SHOW MASTER STATUS``) and the definitions are taken as of the first one
only when the binlog between the two holds no DDL (checked with ``SHOW BINLOG
EVENTS``, each statement given to the DDL engine). Otherwise the reads are
done again. No lock is taken.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from binlogkit.binlog.context import flavor_of, parse_version
from binlogkit.errors import BinlogError, ServerError
from binlogkit.pipeline.sql import quote_name
from binlogkit.protocol.client import ResultSet
from binlogkit.schema.model import Catalog, TableName
from binlogkit.schema.script import apply_script
from binlogkit.schema.session import Session
from binlogkit.schema.store import HistoryStore, Position

log = logging.getLogger(__name__)

__all__ = [
    "SYSTEM_DATABASES",
    "is_history_file",
    "reread_tables",
    "seed_from_file",
    "seed_from_path",
    "seed_from_server",
]

SYSTEM_DATABASES = frozenset({"mysql", "information_schema", "performance_schema", "sys"})
"""Databases whose tables a seed leaves out: the server's own."""


class Queries(Protocol):
    """What a seed needs of a server connection (:class:`binlogkit.io.mysql.MySQLConnection`)."""

    def query(self, sql: str | bytes) -> ResultSet: ...


def seed_from_file(path: str | Path, *, lower_case_table_names: int = 0) -> Catalog:
    """The catalog a file of SQL statements defines (``mariadb-dump --no-data`` output)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise BinlogError(f"cannot read schema file {path}: {err}") from err
    result = apply_script(Catalog(lower_case_table_names=lower_case_table_names), text)
    for warning in result.warnings:
        log.warning("schema file %s: %s", path, warning)
    return result.catalog


def seed_from_path(path: str | Path, *, at: Position | None = None) -> Catalog:
    """The catalog a schema file gives: a history file's (as of ``at``, by default its end) or
    what a file of CREATE statements (``mariadb-dump --no-data`` output) defines."""
    if not Path(path).is_file():
        raise BinlogError(
            f"no schema file {path}",
            hint="give a file of CREATE statements (mariadb-dump --no-data) or a schema history",
        )
    if is_history_file(path):
        return HistoryStore(path).catalog_at(at)
    return seed_from_file(path)


def is_history_file(path: str | Path) -> bool:
    """Whether ``path`` is a schema history (JSON lines) rather than SQL or a binlog."""
    path = Path(path)
    if not path.is_file():
        return False
    with path.open("rb") as f:
        first = f.readline(1 << 16).strip()
    try:
        return isinstance(json.loads(first), dict)
    except ValueError:  # not JSON, or not UTF-8
        return False


def seed_from_server(
    server: Queries,
    *,
    databases: frozenset[str] | None = None,
    attempts: int = 5,
    at: Position | None = None,
) -> tuple[Catalog, Position]:
    """Every table's definition (of ``databases``, else of all but the system ones) and
    the binlog position they hold at: ``at`` when given (a position the binlog had
    before the call, such as a consistent snapshot's), else the one before the reads."""
    session, case = _session(server)
    for _ in range(attempts):
        start = at or _binlog_position(server)
        empty = Catalog(lower_case_table_names=case)
        catalog = _read_definitions(server, empty, session, databases)
        end = _binlog_position(server)
        if start == end or not _ddl_between(server, session, start, end):
            return catalog, start
        if at is not None:
            raise BinlogError(
                f"DDL ran after {at}, so the definitions read now do not hold there",
                hint="start again (from a new position)",
            )
        log.info("DDL ran while the schema was read (%s to %s); reading it again", start, end)
    raise BinlogError(
        f"the schema kept changing while it was read ({attempts} attempts)",
        hint="seed at a quieter time, or from a file of CREATE TABLE statements",
    )


def reread_tables(server: Queries, catalog: Catalog, names: Iterable[TableName]) -> Catalog:
    """``catalog`` with the server's definitions of ``names`` as they are now (a table the
    server no longer has is dropped): for tables a statement left unknown."""
    session, _ = _session(server)
    statements = []
    for name in names:
        try:
            create = _show_create(
                server, f"SHOW CREATE TABLE {quote_name(name.db)}.{quote_name(name.name)}"
            )
        except ServerError:  # gone since (or never there): nothing to know of it
            catalog = catalog.without_table(name.db, name.name)
            continue
        statements += [
            f"USE {quote_name(name.db)}",
            f"DROP TABLE IF EXISTS {quote_name(name.name)}",
            create,
        ]
    if statements:
        catalog = _applied(catalog, statements, session)
    return catalog


def _session(server: Queries) -> tuple[Session, int]:
    """The session the server's SHOW CREATE statements read in, and lower_case_table_names."""
    server.query("SET NAMES utf8mb4")  # names and ENUM members as they are, emoji included
    version, collation, case = server.query(
        "SELECT @@version, @@collation_server, @@lower_case_table_names"
    ).rows[0]
    assert version is not None
    session = Session(
        server_collation=collation, flavor=flavor_of(version), version=parse_version(version)
    )
    return session, int(case or 0)


def _read_definitions(
    server: Queries, catalog: Catalog, session: Session, databases: frozenset[str] | None
) -> Catalog:
    statements = []
    for (db,) in server.query("SHOW DATABASES").rows:
        assert db is not None
        if db in SYSTEM_DATABASES or (databases is not None and db not in databases):
            continue
        statements.append(_show_create(server, f"SHOW CREATE DATABASE {quote_name(db)}"))
        tables = server.query(
            f"SHOW FULL TABLES FROM {quote_name(db)} WHERE Table_type = 'BASE TABLE'"
        )
        for name, _ in tables.rows:
            assert name is not None
            statements.append(f"USE {quote_name(db)}")
            statements.append(
                _show_create(server, f"SHOW CREATE TABLE {quote_name(db)}.{quote_name(name)}")
            )
    return _applied(catalog, statements, session)


def _applied(catalog: Catalog, statements: list[str], session: Session) -> Catalog:
    """``catalog`` with the server's CREATE statements applied (odd ENUM members warned)."""
    result = apply_script(catalog, ";\n".join(statements), session)
    for warning in result.warnings:
        log.warning("schema seed: %s", warning)
    for table in result.catalog.tables():
        for col in table.columns:
            if col.values is not None and any("?" in value for value in col.values):
                log.warning(
                    "schema seed: %s.%s column %s: an ENUM/SET member has a '?', which is how "
                    "SHOW CREATE TABLE shows characters beyond utf8mb3 (emoji): such members "
                    "decode as '?' unless the binlog logs the table's metadata or its DDL",
                    table.db,
                    table.name,
                    col.name,
                )
    return result.catalog


def _binlog_position(server: Queries) -> Position:
    status = server.query("SHOW MASTER STATUS")
    if not status.rows:
        raise BinlogError(
            "the server has no binary log (SHOW MASTER STATUS is empty)",
            hint="start it with log_bin, or seed from a file",
        )
    file, pos = status.rows[0][:2]
    assert file is not None and pos is not None
    return Position(file, int(pos))


def _ddl_between(server: Queries, session: Session, start: Position, end: Position) -> bool:
    """Whether the binlog from ``start`` to ``end`` holds a statement that changes a table."""
    files = [row[0] for row in server.query("SHOW BINARY LOGS").rows]
    if start.file not in files or end.file not in files:
        return True  # rotated away: cannot tell
    for file in files[files.index(start.file) : files.index(end.file) + 1]:
        sql = f"SHOW BINLOG EVENTS IN '{file}'"
        if file == start.file:
            sql += f" FROM {start.pos}"
        for row in server.query(sql).rows:
            event_type, info = row[2], row[5]
            if event_type != "Query" or not info:
                continue
            results = apply_script(Catalog(), info, session).results  # "use `db`; ALTER ..."
            if any(r.is_ddl or r.warning is not None for r in results):
                return True
    return False


def _show_create(server: Queries, sql: str) -> str:
    rows = server.query(sql).rows
    if not rows or rows[0][1] is None:
        raise BinlogError(f"{sql} gave no statement")
    return rows[0][1]
