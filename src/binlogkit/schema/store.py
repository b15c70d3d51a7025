"""The schema history's file: table versions with the positions where they begin.

One JSON object per line, appended and synced as each DDL statement is applied,
never rewritten::

    {"file": "mysql-bin.000003", "pos": 4711, "gtid": "0-1-42", "db": "shop", "table": "t",
     "definition": {...}}          # the table's definition from there on
    {... "db": "shop", "table": "t", "definition": null}        # dropped (or renamed away)
    {... "db": "shop", "table": "t", "unknown": true}           # changed by unreadable DDL
    {... "db": "shop", "table": "t", "truncated": true}         # TRUNCATE TABLE: rows removed
    {... "db": "shop", "table": "t", "truncated": ["p0", "p1"]} # only those partitions' rows
    {... "db": "shop", "database": {...}}                       # a database's defaults
    {... "db": "shop", "database": null}                        # a dropped database

``pos`` is the position just past the statement: a reader that starts at a
position gets every version that begins at or before it. ``ts`` (where known)
is the statement's time in microseconds since the epoch (the QUERY event's
timestamp with MariaDB's fraction of it): the value ``DEFAULT CURRENT_TIMESTAMP``
gives the existing rows of a column it adds. A truncation changes no
definition; files written before truncations and times were recorded read the
same as before. A line cut short by
a crash is ignored on reading and dropped before the next append; a statement
read again (a run over the same files) is not recorded twice.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import BinlogError
from binlogkit.io.binlog_index import split_binlog_name, split_generation
from binlogkit.schema.model import Catalog, ColumnDef, DatabaseDef, TableDef, TableName

__all__ = ["HistoryStore", "Position", "Truncation"]


@frozen_dataclass
class Position:
    """A place in a binlog: file, byte offset, and the GTID of its transaction (if any);
    ``time_us``: when the statement there ran (microseconds since the epoch), where known."""

    file: str | None
    pos: int
    gtid: str | None = None
    time_us: int | None = field(default=None, compare=False)

    def key(self) -> tuple[str, int, int]:
        """Orders positions of one server's binlog files (``name.000009`` before ``.000010``),
        and those of the servers a stream switched to after them (names with a generation,
        :func:`~binlogkit.io.binlog_index.generation_name`): ``(generation and base name,
        number, pos)``."""
        generation, name = split_generation(os.path.basename(self.file or ""))
        base, number = split_binlog_name(name) or (name, -1)
        return (f"{generation:010d}~{base}", number, self.pos)

    def time(self) -> datetime | None:
        """:attr:`time_us` as an aware datetime (UTC), None where not known."""
        if self.time_us is None:
            return None
        seconds, micros = divmod(self.time_us, 1_000_000)
        return datetime.fromtimestamp(seconds, UTC).replace(microsecond=micros)

    def __str__(self) -> str:
        where = f"{self.file or '<input>'}:{self.pos}"
        return where if self.gtid is None else f"{where} (GTID {self.gtid})"


@frozen_dataclass
class Truncation:
    """Rows of a table removed without row events at ``at``: all of them (``partitions``
    None), or those of the named partitions."""

    at: Position
    table: TableName
    partitions: tuple[str, ...] | None = None


class HistoryStore:
    """Appends table versions to a history file and replays them."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._last: tuple[str, int, int] | None = None
        for record in self._records():
            self._last = _position(record).key()

    def record(
        self,
        position: Position,
        before: Catalog,
        after: Catalog,
        truncated: tuple[Truncation, ...] = (),
    ) -> None:
        """Append what changed from ``before`` to ``after`` at ``position``, and the tables
        ``truncated`` there."""
        if self._last is not None and position.key() <= self._last:
            return  # read before: already recorded
        where: dict[str, Any] = {"file": position.file, "pos": position.pos, "gtid": position.gtid}
        if position.time_us is not None:
            where["ts"] = position.time_us
        changes = _changes(before, after) + [
            {
                "db": t.table.db,
                "table": t.table.name,
                "truncated": True if t.partitions is None else list(t.partitions),
            }
            for t in truncated
        ]
        lines = [json.dumps({**where, **change}) for change in changes]
        if not lines:
            return
        with self.path.open("a+b") as out:
            _cut_torn_line(out)
            out.write("".join(line + "\n" for line in lines).encode())
            out.flush()
            os.fsync(out.fileno())
        self._last = position.key()

    def catalog_at(self, at: Position | None = None) -> Catalog:
        """The catalog with every version that begins at or before ``at`` (all by default)."""
        catalog = Catalog()
        limit = None if at is None else at.key()
        for record in self._records():
            if limit is not None and _position(record).key() > limit:
                break
            catalog = _apply(catalog, record)
        return catalog

    def timeline(self) -> list[tuple[Position, Catalog]]:
        """The catalog after each recorded position, in binlog order."""
        steps: list[tuple[Position, Catalog]] = []
        catalog = Catalog()
        for record in self._records():
            catalog = _apply(catalog, record)
            position = _position(record)
            if steps and steps[-1][0].key() == position.key():
                steps.pop()
            steps.append((position, catalog))
        return steps

    def truncations(self) -> list[Truncation]:
        """The truncations recorded, in binlog order."""
        return [
            Truncation(
                _position(record),
                TableName(record["db"], record["table"]),
                None if record["truncated"] is True else tuple(record["truncated"]),
            )
            for record in self._records()
            if "truncated" in record
        ]

    def _records(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        lines = self.path.read_text(encoding="utf-8").split("\n")
        records = []
        for number, line in enumerate(lines, 1):
            if not line:
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as err:
                if number == len(lines):  # the last line, cut short by a crash
                    break
                raise BinlogError(
                    f"schema history {self.path}, line {number}: not a JSON record ({err})",
                    hint="the file is damaged; rebuild it from the binlogs or a schema seed",
                ) from err
        return records


def _cut_torn_line(out: BinaryIO) -> None:
    """Drop a last line without its newline (an append a crash cut short), so that the
    next record starts a line of its own."""
    size = out.seek(0, os.SEEK_END)
    if size and (out.seek(size - 1), out.read(1))[1] != b"\n":
        out.seek(0)
        out.truncate(out.read().rfind(b"\n") + 1)


def _position(record: dict[str, Any]) -> Position:
    return Position(record.get("file"), record["pos"], record.get("gtid"), record.get("ts"))


def _changes(before: Catalog, after: Catalog) -> list[dict[str, Any]]:
    """The records that turn ``before`` into ``after``."""
    out: list[dict[str, Any]] = []
    old_dbs = {db.name: db for db in before.databases()}
    new_dbs = {db.name: db for db in after.databases()}
    for name, database in new_dbs.items():
        if old_dbs.get(name) != database:
            out.append({"db": name, "database": asdict(database)})
    out += [{"db": name, "database": None} for name in old_dbs.keys() - new_dbs.keys()]
    old = {(t.db, t.name): t for t in before.tables()}
    new = {(t.db, t.name): t for t in after.tables()}
    for key, table in new.items():
        if old.get(key) is not table:
            out.append({"db": key[0], "table": key[1], "definition": asdict(table)})
    old_unknown = set(before.unknown_tables())
    unknown = set(after.unknown_tables())
    out += [{"db": t.db, "table": t.name, "unknown": True} for t in unknown - old_unknown]
    gone = old.keys() - new.keys() - {(t.db, t.name) for t in unknown}
    out += [{"db": db, "table": name, "definition": None} for db, name in sorted(gone)]
    return out


def _apply(catalog: Catalog, record: dict[str, Any]) -> Catalog:
    if "truncated" in record:
        return catalog
    db = record["db"]
    if "database" in record:
        database = record["database"]
        if database is None:
            return catalog.without_database(db)
        return catalog.with_database(DatabaseDef(**database))
    if record.get("unknown"):
        return catalog.with_unknown(db, record["table"])
    definition = record["definition"]
    if definition is None:
        return catalog.without_table(db, record["table"])
    return catalog.with_table(_table(definition))


def _table(data: dict[str, Any]) -> TableDef:
    columns = tuple(
        ColumnDef(**{**col, "values": None if col["values"] is None else tuple(col["values"])})
        for col in data["columns"]
    )
    return TableDef(**{**data, "columns": columns, "primary_key": tuple(data["primary_key"])})
