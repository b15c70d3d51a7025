"""The initial snapshot of a live MariaDB into Delta mirrors.

- Values: every table of the sandbox workload (every column type, edge values)
  lands in its mirror exactly as the binlog path types the same rows (their
  INSERTs read from the server's binlog with option ``table``), column for
  column, with the very schema the mirror's MERGE creates.
- Chunks: composite, string (collation order), UUID and unique-but-not-primary
  keys, an empty table, chunks of 1 to n rows: the same rows as SELECT.
- A writer changes rows while the snapshot runs: the mirror with the binlog
  from the start position replayed over it equals the source.
- A crash after a group's commit, and a SIGKILL of a process mid-snapshot:
  the next run finishes with every row once; a run after the end does nothing.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lake_commits import newest_commit

from binlogkit.io.mysql import ConnectionSpec, MySQLConnection
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.sandbox.workload import build_workload

pytest.importorskip("delta")

from pyspark.sql import functions as F

from binlogkit.spark.delta import apply_changes
from binlogkit.spark.lake.tables import properties, snapshot_end
from binlogkit.spark.snapshot import (
    CRASH_ENV,
    SnapshotProgress,
    mirror_path,
    run_snapshot,
    state_path,
)

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

TOOL = Path(__file__).with_name("snapshot_tool.py")


def _url(server: MariaDBSandbox) -> str:
    return f"mariadb://root@localhost/?socket={server.socket}"


@pytest.fixture(scope="module")
def server(mariadb_factory: Callable[..., MariaDBSandbox]) -> MariaDBSandbox:
    return mariadb_factory("snapshot")


def _mirror(spark: Any, lake: Path, table: str) -> Any:
    return spark.read.format("delta").load(str(mirror_path(lake, table)))


def _sorted(rows: list[Any]) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in rows), key=repr)


# -- values ------------------------------------------------------------------------------


def test_every_type_lands_as_the_binlog_path_types_it(
    spark: Any, server: MariaDBSandbox, tmp_path: Path
) -> None:
    workload = build_workload(database="vals")
    server.execute(workload.script_of(t.create_sql() for t in workload.tables))
    inserts = [t.insert_sql(range(t.rows)) for t in workload.tables]
    server.execute(workload.script_of(inserts))
    files = [str(f) for f in server.flush_binlogs()[:-1]]

    result = run_snapshot(
        spark, _url(server), tmp_path, tables=["vals.*"], chunk_rows=4, group_chunks=64
    )
    assert result.no_key == ("vals.t_nopk",)
    assert set(result.tables) == {f"vals.{t.name}" for t in workload.tables if t.primary_key}
    for table in result.tables:
        changes = spark.read.format("binlog").option("table", table).load(files)
        after = changes.where(F.col("op") == "c").select("after.*")
        mirror = _mirror(spark, tmp_path, table)
        assert mirror.schema == changes.schema["after"].dataType, table
        assert _sorted(mirror.collect()) == _sorted(after.collect()), table

    # FLOAT's own text is rounded (16777217 stored as 16777216 prints as 16777200); the mirror
    # has the exact float32, as the binlog gives it.
    (text,) = server.query("SELECT f FROM vals.t_float WHERE f > 16777000 AND f < 16777300")[0]
    value = _mirror(spark, tmp_path, "vals.t_float").where("f > 16777000 AND f < 16777300")
    assert text == "16777200" and value.collect()[0].f == 16777216.0


# -- chunks ------------------------------------------------------------------------------

CHUNK_TABLES = """
CREATE DATABASE ch; USE ch;
CREATE TABLE cpk (k1 VARCHAR(10) CHARACTER SET latin1, k2 INT, v TEXT, PRIMARY KEY (k1, k2));
INSERT INTO cpk VALUES ('alpha', 1, 'a1'), ('alpha', -2, 'a2'), ('Beta', 1, 'b1'),
  ('gämma', 3, 'g3'), ('gämma', 4, NULL), ('b', 9, 'x'), ('', 0, 'empty key');
CREATE TABLE skey (s VARCHAR(20) CHARACTER SET utf8mb4 PRIMARY KEY, n BIGINT UNSIGNED);
INSERT INTO skey VALUES ('a', 1), ('B', 2), ('ö', 3), ('日本', 4), ('😀', 5), ('a b', 6),
  ('z', 18446744073709551615), ('A1', 8);
CREATE TABLE ukey (a INT NULL, u INT NOT NULL, w VARCHAR(5), UNIQUE KEY (a), UNIQUE KEY (u));
INSERT INTO ukey VALUES (NULL, 5, 'x'), (1, 4, 'y'), (2, 3, 'z'), (NULL, 2, 'w'), (3, 1, 'v');
CREATE TABLE ids (id UUID PRIMARY KEY, n INT);
INSERT INTO ids VALUES ('123e4567-e89b-12d3-a456-426614174000', 1),
  ('00000000-0000-0000-0000-000000000001', 2), ('ffffffff-0000-0000-0000-000000000000', 3),
  ('6ccd780c-baba-1026-9564-5b8c656024db', 4), ('01890c4e-8d3a-7a4f-b2d1-0242ac120002', 5);
CREATE TABLE empty (id INT PRIMARY KEY, v INT);
"""


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes | bytearray):
        return value.hex()
    return str(value)


@pytest.mark.parametrize("chunk_rows", [1, 3, 1000])
def test_chunks_of_any_size_give_the_rows_of_select(
    spark: Any, server: MariaDBSandbox, tmp_path: Path, chunk_rows: int
) -> None:
    if not server.query("SHOW DATABASES LIKE 'ch'"):
        server.execute(CHUNK_TABLES)
    run_snapshot(spark, _url(server), tmp_path, tables=["ch.*"], chunk_rows=chunk_rows)
    state = json.loads(state_path(tmp_path).read_text())
    assert state["tables"]["ch.ukey"]["key"] == ["u"]
    selects = {
        "cpk": "SELECT k1, k2, v FROM ch.cpk",
        "skey": "SELECT s, n FROM ch.skey",
        "ukey": "SELECT a, u, w FROM ch.ukey",
        "ids": "SELECT LOWER(HEX(id)), n FROM ch.ids",
        "empty": "SELECT id, v FROM ch.empty",
    }
    for name, sql in selects.items():
        mirror = _mirror(spark, tmp_path, f"ch.{name}").collect()
        chunks = sum(len(g["chunks"]) for g in state["groups"] if g["table"] == f"ch.{name}")
        want = server.query(sql)
        assert chunks == max(1, -(-len(want) // chunk_rows)), name
        assert _sorted([tuple(_as_text(v) for v in r) for r in mirror]) == _sorted(want), name


# -- changes while the snapshot runs -----------------------------------------------------

BUSY = """
CREATE DATABASE busy; USE busy;
CREATE TABLE t (id INT PRIMARY KEY, n INT, s VARCHAR(30), d DECIMAL(10,2));
"""


def _writer(url: str, stop: threading.Event, done: list[int]) -> None:
    rng = random.Random(7)
    with MySQLConnection.connect(ConnectionSpec.from_url(url)) as conn:
        while not stop.is_set():
            key = rng.randrange(1, 400)
            action = rng.random()
            if action < 0.4:
                sql = f"UPDATE busy.t SET n = n + 1, s = 'upd {done[0]}' WHERE id = {key}"
            elif action < 0.6:
                sql = f"DELETE FROM busy.t WHERE id = {key}"
            elif action < 0.8:
                sql = f"REPLACE INTO busy.t VALUES ({key}, {done[0]}, 'new', {key}.25)"
            else:
                sql = f"UPDATE IGNORE busy.t SET id = id + 400 WHERE id = {key}"
            conn.execute(sql)
            done[0] += 1


def test_a_writer_during_the_snapshot_is_caught_up_by_the_binlog_from_the_start(
    spark: Any, server: MariaDBSandbox, tmp_path: Path
) -> None:
    server.execute(BUSY)
    values = ", ".join(f"({i}, {i}, 'row {i}', {i}.5)" for i in range(1, 300))
    server.execute(f"INSERT INTO busy.t VALUES {values}")
    stop, done = threading.Event(), [0]
    writer = threading.Thread(target=_writer, args=(_url(server), stop, done))
    writer.start()
    try:
        result = run_snapshot(spark, _url(server), tmp_path, tables=["busy.t"], chunk_rows=25)
    finally:
        stop.set()
        writer.join()
    assert done[0] > 0
    # the end of the reads on the mirror: apply_batch appends inserts from there on, not before
    recorded = properties(spark, str(mirror_path(tmp_path, "busy.t")))
    assert snapshot_end(recorded) == result.end and result.end is not None
    files = [str(f) for f in server.flush_binlogs()[:-1]]
    start = result.start
    assert start.file is not None and start.gtid
    since = (F.col("file") > start.file) | (
        (F.col("file") == start.file) & (F.col("pos") >= start.pos)
    )
    changes = spark.read.format("binlog").option("table", "busy.t").load(files).where(since)
    apply_changes(changes, tmp_path, "busy.t", ["id"], app_id="replay", version=0)
    mirror = _mirror(spark, tmp_path, "busy.t").collect()
    want = server.query("SELECT id, n, s, d FROM busy.t")
    assert _sorted([tuple(_as_text(v) for v in r) for r in mirror]) == _sorted(want)


# -- crashes -----------------------------------------------------------------------------

CRASHY = """
CREATE DATABASE crash; USE crash;
CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(10));
CREATE TABLE b (id BIGINT UNSIGNED PRIMARY KEY, v DOUBLE);
"""


@pytest.fixture(scope="module")
def crashy(server: MariaDBSandbox) -> MariaDBSandbox:
    server.execute(CRASHY)
    server.execute(
        "INSERT INTO crash.a VALUES "
        + ", ".join(f"({i}, 'v{i}')" for i in range(40))
        + "; INSERT INTO crash.b VALUES "
        + ", ".join(f"({i * 1000}, {i}.5e0)" for i in range(30))
    )
    return server


def _check_crash_lake(spark: Any, server: MariaDBSandbox, lake: Path) -> None:
    state = json.loads(state_path(lake).read_text())
    assert state["done"] == len(state["groups"])
    for table, sql in (
        ("crash.a", "SELECT id, v FROM crash.a"),
        ("crash.b", "SELECT id, v FROM crash.b"),
    ):
        mirror = _mirror(spark, lake, table).collect()
        got = sorted(
            (str(r[0]), r[1] if isinstance(r[1], str) else repr(r[1]).removesuffix(".0"))
            for r in mirror
        )
        assert got == sorted(server.query(sql)), table


def _versions(lake: Path) -> dict[str, int]:
    return {t: newest_commit(mirror_path(lake, t)) for t in ("crash.a", "crash.b")}


def test_a_crash_after_a_groups_commit_resumes_without_doubling_it(
    spark: Any, crashy: MariaDBSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = _url(crashy)
    options: dict[str, Any] = {"tables": ["crash.*"], "chunk_rows": 5, "group_chunks": 2}
    monkeypatch.setenv(CRASH_ENV, "1")
    with pytest.raises(RuntimeError, match=CRASH_ENV):
        run_snapshot(spark, url, tmp_path, **options)
    assert (
        json.loads(state_path(tmp_path).read_text())["done"] == 1
    )  # group 1 committed, unrecorded
    monkeypatch.delenv(CRASH_ENV)
    seen: list[SnapshotProgress] = []
    result = run_snapshot(spark, url, tmp_path, progress=seen.append, **options)
    assert result.tables == ("crash.a", "crash.b")
    assert seen[-1].table == "crash.b" and seen[-1].rows == 30
    _check_crash_lake(spark, crashy, tmp_path)

    assert result.end is not None and result.end.key() >= result.start.key()
    versions = _versions(tmp_path)
    assert run_snapshot(spark, url, tmp_path, **options) == result  # the same end, recorded
    assert _versions(tmp_path) == versions


def test_a_killed_snapshot_process_is_finished_by_the_next_run(
    spark: Any, crashy: MariaDBSandbox, tmp_path: Path
) -> None:
    lake = tmp_path / "lake"
    command = [sys.executable, str(TOOL), _url(crashy), str(lake)]
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")
    env["JAVA_TOOL_OPTIONS"] = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"
    child = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()  # the first group is committed
        assert line.startswith(b"progress"), line
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    state = json.loads(state_path(lake).read_text())
    assert 1 <= state["done"] < len(state["groups"])
    run_snapshot(spark, _url(crashy), lake, tables=["crash.*"], chunk_rows=5, group_chunks=2)
    _check_crash_lake(spark, crashy, lake)
