"""The initial snapshot of a lake: the source's rows at a binlog position, read in parallel.

:func:`run_snapshot` (method and reasons: docs/snapshot.md):

1. The driver opens ``START TRANSACTION WITH CONSISTENT SNAPSHOT`` and reads the
   binlog position of that snapshot (``binlog_snapshot_file`` and
   ``_position``, and the GTID position there): the start S. It checks that the
   binlog can carry the stream from S (``log_bin``, ``binlog_format=ROW``,
   ``binlog_row_image=FULL``), records the tables' definitions at S in the
   schema history ``LAKE/_binlogkit/schema.jsonl``, and cuts each selected
   table into key chunks (:mod:`binlogkit.spark.chunks`) as the snapshot sees it.
2. The chunks, in groups, are read as Spark tasks, each chunk in a
   consistent-snapshot transaction of its own (at a position at or after S;
   :mod:`binlogkit.spark.snapshot_source`), and each group is one Delta append
   to ``LAKE/db/t/mirror`` with the transaction id (:data:`APP_ID`, group
   number), so a group committed before a crash is skipped when it is written
   again. The mirror is created first as the apply creates its mirrors (column
   mapping by name, type widening), noting the definition it holds (the one at S).
3. Once every group is written, the end E of the server's binlog and its GTID
   position: every chunk was read at a position at or before it (:func:`_reads_end`);
   then E is recorded on each mirror (its ``binlogkit.snapshotEnd``, ``reading``
   until then), which the apply's appends go by (:func:`finish`).
4. The stream then applies the binlog from S; a change between S and a chunk's
   own position is applied again over rows that already hold it, which the
   mirror's MERGE (last change per key wins, full row images) makes harmless.
   From E on no change is in a mirror before the stream applies it, so a batch
   that starts there (by GTID after a failover) may append a table's inserts
   (docs/lakehouse.md, Mirror).

:mod:`binlogkit.spark.resnapshot` reads tables of a streaming lake again with
the same steps (:func:`chunk_groups`, :func:`write_groups`, :func:`finish`).

The plan, S, the groups done and E are kept in ``LAKE/_binlogkit/snapshot.json``
(written atomically): a run after a crash goes on at the first group not
recorded, and a run after the end returns at once. A table without a primary
key or a NOT NULL unique key gets no mirror (its changes can only be logged).
"""

from __future__ import annotations

import fnmatch
import json
import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import BinlogError
from binlogkit.io.mysql import ConnectionSpec, MySQLConnection
from binlogkit.schema.model import Catalog, TableDef
from binlogkit.schema.seed import seed_from_server
from binlogkit.schema.store import HistoryStore, Position
from binlogkit.schema.table_map import column_infos
from binlogkit.services.replica_stream import current_position
from binlogkit.spark import session_parallelism
from binlogkit.spark.chunks import Chunk, chunk_key, chunk_where, plan_chunks, table_sql
from binlogkit.spark.failover_checks import gtid_at
from binlogkit.spark.lake import storage
from binlogkit.spark.lake.storage import LakePath, WorkingCopy, lake_path, working_copy
from binlogkit.spark.lake.tables import (
    DEFINITION,
    SNAPSHOT_END,
    SNAPSHOT_READING,
    create_table,
    end_property,
    exists,
    position_property,
    set_properties,
)
from binlogkit.spark.query_errors import query_error
from binlogkit.spark.snapshot_source import (
    SESSION_SQL,
    chunk_frame,
    open_snapshot,
    snapshot_position,
)
from binlogkit.spark.sync_state import LakeLayout

__all__ = [
    "APP_ID",
    "CHUNK_ROWS",
    "CRASH_ENV",
    "SnapshotProgress",
    "SnapshotResult",
    "check_binlog",
    "chunk_groups",
    "finish",
    "history_path",
    "mirror_path",
    "run_snapshot",
    "state_path",
    "write_groups",
]

log = logging.getLogger(__name__)

CHUNK_ROWS = 50_000
"""Rows per chunk by default: one Spark task's read."""

APP_ID = "binlogkit-snapshot"
"""The Delta transaction id (``txnAppId``) of the mirrors' snapshot appends."""

CRASH_ENV = "BINLOGKIT_SNAPSHOT_CRASH"
"""Test hook: set to a group number, :func:`run_snapshot` fails after that group's Delta
commit, before the state records it."""


@frozen_dataclass
class SnapshotResult:
    """Where the stream starts (S) and, per table whose mirror the snapshot wrote, the key it
    is kept by (the primary key, else a NOT NULL unique key); ``no_key``: selected tables
    without a key to mirror by (their changes can only be logged); ``end``: where its reads
    end (E, at or past every chunk's position, with its GTID position where the server gave
    one): changes before it may be in the mirrors already, none from it on."""

    start: Position
    keys: Mapping[str, tuple[str, ...]]
    no_key: tuple[str, ...] = ()
    end: Position | None = None

    @property
    def tables(self) -> tuple[str, ...]:
        """The tables whose mirror the snapshot wrote."""
        return tuple(self.keys)


@frozen_dataclass
class SnapshotProgress:
    """A table's progress: rows written and rows in all (both as of the snapshot's start), and
    rows per second."""

    table: str
    rows: int
    total: int
    rows_per_second: float


def state_path(lake: str | Path) -> LakePath:
    return LakeLayout(lake_path(lake)).snapshot


def history_path(lake: str | Path) -> LakePath:
    return lake_path(lake) / "_binlogkit" / "schema.jsonl"


def mirror_path(lake: str | Path, table: str) -> LakePath:
    db, name = table.split(".", 1)
    return lake_path(lake) / db / name / "mirror"


def run_snapshot(
    spark: Any,
    url: str,
    lake: str | Path,
    *,
    tables: Sequence[str] | None = None,
    chunk_rows: int = CHUNK_ROWS,
    group_chunks: int | None = None,
    progress: Callable[[SnapshotProgress], None] | None = None,
) -> SnapshotResult:
    """Snapshot the tables ``tables`` names (``db.t`` and patterns such as ``db.*``; all
    outside the system databases by default) of the server at ``url`` into ``lake``, or
    finish a snapshot a crash cut short (see the module doc). ``group_chunks``: chunks per
    Delta commit (four per core by default)."""
    if chunk_rows < 1:
        raise BinlogError(f"chunk_rows must be at least 1, not {chunk_rows}")
    path = state_path(lake)
    selection = sorted(tables) if tables is not None else None
    text = storage.read_text(path)
    if text is not None:
        state = json.loads(text)
        if state["selection"] != selection:
            raise BinlogError(
                f"{path} holds a snapshot of {state['selection'] or 'all tables'}, "
                f"not of {selection or 'all tables'}",
                hint="run it with the same tables, or start a new lake",
            )
    else:
        per_group = group_chunks or 4 * (session_parallelism(spark) or 1)
        state = _plan(url, lake, selection, chunk_rows, per_group)
        storage.replace_json(path, state)
    write_groups(spark, url, lake, state, path, progress)
    return finish(spark, url, lake, state, path)


def finish(
    spark: Any, url: str, lake: str | Path, state: dict[str, Any], path: LakePath
) -> SnapshotResult:
    """After the last group of the snapshot (or resnapshot) ``state`` kept in ``path``: its E
    (:func:`_reads_end`), then recorded on each mirror it wrote (the mirror's
    :data:`~binlogkit.spark.lake.tables.SNAPSHOT_END`, which the apply's appends of inserts
    go by); its result."""
    if "end" not in state:
        state["end"] = asdict(_reads_end(url))
        storage.replace_json(path, state)
    if not state.get("marked"):
        end = end_property(Position(**state["end"]))
        for name, table in state["tables"].items():
            target = str(mirror_path(lake, name))
            if table["key"] and exists(spark, target):
                set_properties(spark, target, {SNAPSHOT_END: end})
        state["marked"] = True
        storage.replace_json(path, state)
    return _result(state)


def _result(state: dict[str, Any]) -> SnapshotResult:
    keys = {name: tuple(t["key"]) for name, t in state["tables"].items() if t["key"]}
    no_key = tuple(name for name, t in state["tables"].items() if not t["key"])
    return SnapshotResult(Position(**state["start"]), keys, no_key, Position(**state["end"]))


def _reads_end(url: str) -> Position:
    """E: the end of the server's binlog, read once every group is written, with its GTID
    position (MariaDB's ``BINLOG_GTID_POS`` there: what names E on another server after a
    failover; None on MySQL). Each chunk was read in a consistent snapshot at a position P
    (the end of the last transaction it sees) taken before its Spark task ended, so before
    now; the binlog only grows, so P <= E, and a change logged at or after E is in no chunk.
    (E bounds the largest P from above; a snapshot that finished before this field existed
    gets it on its next run, later, still a bound.)"""
    with MySQLConnection.connect(ConnectionSpec.from_url(url)) as conn:
        file, pos = current_position(conn)
        return Position(file, pos, gtid_at(conn, file, pos))


# -- the plan, in the driver's snapshot ---------------------------------------------------


def _plan(
    url: str, lake: str | Path, selection: list[str] | None, chunk_rows: int, group_chunks: int
) -> dict[str, Any]:
    with open_snapshot(url) as conn:
        check_binlog(conn)
        start = snapshot_position(conn)
        catalog, _ = seed_from_server(conn, at=start)
        for sql in SESSION_SQL[:3]:  # the seed set its own names
            conn.execute(sql)
        chosen = _select(catalog, selection)
        copy = WorkingCopy(history_path(lake))
        try:
            copy.local.parent.mkdir(parents=True, exist_ok=True)
            history = HistoryStore(copy.local)
            history.record(start, history.catalog_at(), catalog)
            copy.publish()
        finally:
            copy.close()
        described, groups = chunk_groups(conn, chosen, chunk_rows, group_chunks)
        conn.execute("COMMIT")
    log.info("snapshot at %s: %d tables, %d groups", start, len(described), len(groups))
    return {
        "start": asdict(start),
        "selection": selection,
        "chunk_rows": chunk_rows,
        "tables": described,
        "groups": groups,
        "done": 0,
        "rows": {},
    }


def chunk_groups(
    conn: MySQLConnection, chosen: Sequence[TableDef], chunk_rows: int, group_chunks: int
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """In ``conn``'s consistent snapshot: per table of ``chosen``, its key and rows (no key:
    no mirror, with a warning), and its key chunks in groups of ``group_chunks``."""
    described: dict[str, Any] = {}
    groups = []
    for table in chosen:
        name = f"{table.db}.{table.name}"
        key = chunk_key(conn, table)
        if not key:
            log.warning(
                "%s has no primary key and no NOT NULL unique key: no mirror (a mirror "
                "could not tell its rows apart); its changes can only be logged",
                name,
            )
            described[name] = {"key": [], "rows": 0}
            continue
        chunks = plan_chunks(conn, table, column_infos(table), key, chunk_rows)
        last = _count(conn, table, key, chunks[-1])
        rows = [chunk_rows] * (len(chunks) - 1) + [last]
        described[name] = {"key": list(key), "rows": sum(rows)}
        for first in range(0, len(chunks), group_chunks):
            end = first + group_chunks
            groups.append(
                {"table": name, "chunks": chunks[first:end], "rows": sum(rows[first:end])}
            )
    return described, groups


def _variables(conn: MySQLConnection, sql: str) -> dict[str, str | None]:
    return {str(name).lower(): value for name, value in conn.query(sql).rows}


def check_binlog(conn: MySQLConnection) -> None:
    """The binlog can carry every change after the snapshot as full row images."""
    found = _variables(
        conn,
        "SHOW GLOBAL VARIABLES WHERE Variable_name IN "
        "('log_bin', 'binlog_format', 'binlog_row_image')",
    )
    wanted = {"log_bin": "ON", "binlog_format": "ROW", "binlog_row_image": "FULL"}
    wrong = {name: found.get(name) for name, value in wanted.items() if found.get(name) != value}
    if wrong:
        settings = ", ".join(f"{name}={value}" for name, value in wrong.items())
        raise BinlogError(
            f"the server's binlog cannot carry the changes after a snapshot: {settings}",
            hint="set log_bin, binlog_format=ROW and binlog_row_image=FULL (a mirror needs "
            "every column of every changed row)",
        )


def _select(catalog: Catalog, selection: Iterable[str] | None) -> list[TableDef]:
    everything = sorted(catalog.tables(), key=lambda t: (t.db, t.name))
    if selection is None:
        return everything
    chosen = []
    for pattern in selection:
        found = [t for t in everything if fnmatch.fnmatchcase(f"{t.db}.{t.name}", pattern)]
        if not found:
            raise BinlogError(
                f"no table of the server matches {pattern!r}",
                hint="name tables as db.table, or db.* for all of a database",
            )
        chosen += [t for t in found if t not in chosen]
    return sorted(chosen, key=lambda t: (t.db, t.name))


def _count(conn: MySQLConnection, table: TableDef, key: Sequence[str], chunk: Chunk) -> int:
    where = chunk_where(key, chunk)
    (rows,) = conn.query(f"SELECT COUNT(*) FROM {table_sql(table)} WHERE {where}").rows[0]
    return int(rows or 0)


# -- the groups, as Spark jobs ------------------------------------------------------------


def write_groups(
    spark: Any,
    url: str,
    lake: str | Path,
    state: dict[str, Any],
    path: LakePath,
    progress: Callable[[SnapshotProgress], None] | None,
) -> None:
    """Write the groups of the snapshot (or resnapshot) ``state`` kept in ``path`` from the
    first one not done, each a Delta append with the transaction id (the state's ``app_id``,
    else :data:`APP_ID`; group number) and recorded in ``path`` once committed."""
    groups = state["groups"]
    if state["done"] >= len(groups):
        return
    start = Position(**state["start"])
    with working_copy(history_path(lake)) as history:
        catalog = HistoryStore(history).catalog_at(start)
    began: dict[str, tuple[float, int]] = {}
    for number in range(state["done"], len(groups)):
        name = groups[number]["table"]
        db, table_name = name.split(".", 1)
        table = catalog.table(db, table_name)
        if table is None:
            raise BinlogError(f"the schema history {history_path(lake)} has no {name}")
        info = state["tables"][name]
        chunks: list[Chunk] = [
            (_bound(lower), _bound(upper)) for lower, upper in groups[number]["chunks"]
        ]
        frame = chunk_frame(spark, url, table, column_infos(table), info["key"], chunks, start)
        target = str(mirror_path(lake, name))
        if name not in began:  # the table's first group in this run
            began[name] = (time.monotonic(), state["rows"].get(name, 0))
            held = Position(**info.get("definition", state["start"]))
            properties = {DEFINITION: position_property(held), SNAPSHOT_END: SNAPSHOT_READING}
            create_table(spark, target, frame.schema, extra=properties)
        writer = frame.write.format("delta").mode("append")
        txn = state.get("app_id", APP_ID)
        try:
            writer.option("txnAppId", txn).option("txnVersion", number).save(target)
        except Exception as err:  # a chunk reader's error arrives inside Spark's
            if "binlogkit.errors." not in str(err):
                raise
            raise query_error(err) from None
        if os.environ.get(CRASH_ENV) == str(number):
            raise RuntimeError(f"{CRASH_ENV}={number}: stopping after the group's commit")
        rows = state["rows"][name] = state["rows"].get(name, 0) + groups[number]["rows"]
        state["done"] = number + 1
        storage.replace_json(path, state)
        if progress is not None:
            since, before = began[name]
            rate = (rows - before) / max(time.monotonic() - since, 1e-9)
            progress(SnapshotProgress(name, rows, info["rows"], rate))


def _bound(value: list[str] | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(value)
