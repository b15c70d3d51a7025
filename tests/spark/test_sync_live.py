"""``binlogkit spark sync`` end to end: a live MariaDB into Delta mirrors, snapshot then binlog.

- The sandbox workload (every column type) and a sysbench table, sysbench
  writing all through the snapshot and the stream, primary keys moved while
  the snapshot reads: every mirror equals the mirror a lake built from the
  server's whole binlog has (the binlog path, independent of the snapshot's
  reads), holds the server's rows, and the change log holds each change from
  the snapshot's position on once; inserts after the end of the snapshot's
  reads are appended to the mirror (not MERGEd), and it stays equal.
- The sync process killed (SIGKILL) in the snapshot and after a micro-batch's
  writes but before its checkpoint, then run again: the same result.
- A streaming sync rides out killed dump threads and a server restart, and
  follows ADD, DROP and RENAME COLUMN and a new table (docs/lakehouse.md); a
  table keyed by a NOT NULL unique key is mirrored by it.
- A purged binlog gives the documented error; a second source or selection
  for a lake is a one-line error of the command.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from missing_tool import missing_tool

from binlogkit.errors import BinlogError
from binlogkit.io.binlog_index import binlog_order
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.sandbox.workload import run_workload

pytest.importorskip("delta")

from binlogkit.spark.lake_status import status
from binlogkit.spark.lakehouse import KILL_ENV, apply, sync
from binlogkit.spark.sync_progress import StreamProgress

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

ROOT = Path(__file__).parents[2]

WORKLOAD_TABLES = [
    f"bk.{name}"
    for name in (
        *("t_int", "t_decimal", "t_float", "t_bit", "t_temporal", "t_str_utf8mb4", "t_str_gbk"),
        *("t_bin", "t_enum_set", "t_json", "t_geo", "t_mariadb", "t_nopk", "t_cpk"),
    )
]
"""A table of each column type of the sandbox workload, one without a key, one with two."""
AFTER_SNAPSHOT = """
UPDATE bk.t_int SET id = id + 100 WHERE id <= 3;
UPDATE bk.t_int SET big_u = 18446744073709551615 WHERE id = 104;
DELETE FROM bk.t_decimal WHERE id = 4;
UPDATE bk.t_temporal SET id = 50 WHERE id = 5;
UPDATE bk.t_cpk SET k2 = k2 + 10 WHERE k1 = 'beta';
INSERT INTO bk.t_nopk (a, b) VALUES (7, 'late'), (7, 'late');
UPDATE bk.t_nopk SET d = 1.5 WHERE a = 7 LIMIT 1;
"""


def _url(server: MariaDBSandbox) -> str:
    return f"mariadb://root@localhost/?socket={server.socket}"


def _sysbench(server: MariaDBSandbox, *args: str) -> list[str]:
    return [
        "sysbench",
        "oltp_write_only",
        "--db-driver=mysql",
        f"--mysql-socket={server.socket}",
        "--mysql-user=root",
        "--mysql-db=sbtest",
        "--tables=1",
        "--table-size=2000",
        *args,
    ]


def _plain(value: Any) -> Any:
    """A collected value as plain, comparable Python data."""
    if isinstance(value, bytearray):
        return bytes(value)
    if isinstance(value, list | tuple):
        return tuple(_plain(v) for v in value)
    return value


def _rows(spark: Any, path: Path, *columns: str) -> list[tuple[Any, ...]]:
    """The rows of a Delta table, sorted; none when there is no table (a change log of a
    table that did not change)."""
    if not (path / "_delta_log").is_dir():
        return []
    df = spark.read.format("delta").load(str(path))
    if columns:
        df = df.select(*columns)
    return sorted((_plain(tuple(row)) for row in df.collect()), key=repr)


def _columns(spark: Any, path: Path) -> list[tuple[str, str]]:
    schema = spark.read.format("delta").load(str(path)).schema
    return [(field.name, field.dataType.simpleString()) for field in schema]


def _server_rows(server: MariaDBSandbox, sql: str) -> list[tuple[str | None, ...]]:
    return sorted(server.query(sql), key=repr)


def _text(rows: list[tuple[Any, ...]]) -> list[tuple[str | None, ...]]:
    return sorted((tuple(None if v is None else str(v) for v in row) for row in rows), key=repr)


CHANGE = ("file", "pos", "row", "op", "before", "after")


@pytest.mark.slow
def test_snapshot_under_load_then_stream_equals_the_source(
    spark: Any, mariadb_factory: Callable[..., MariaDBSandbox], tmp_path: Path
) -> None:
    if shutil.which("sysbench") is None:
        missing_tool("sysbench is not installed (apt-get install sysbench)")
    server = mariadb_factory("sync-load")
    run_workload(server)
    server.execute("CREATE DATABASE sbtest")
    subprocess.run(_sysbench(server, "prepare"), check=True, capture_output=True)
    tables = [*WORKLOAD_TABLES, "sbtest.sbtest1"]
    lake, reference = tmp_path / "lake", tmp_path / "reference"
    seen: list[Any] = []

    def note(progress: Any) -> None:
        if not seen:  # the snapshot has its start: these changes come after it
            server.execute(AFTER_SNAPSHOT)
        seen.append(progress)

    load = subprocess.Popen(
        _sysbench(server, "--time=0", "--events=0", "--rate=20", "run"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        first = sync(_url(server), lake, tables=tables, once=True, spark=spark, progress=note)
        assert load.poll() is None, "sysbench stopped before the sync ended"
    finally:
        load.terminate()
        load.wait()
    sync(_url(server), lake, tables=tables, once=True, spark=spark)
    # A batch of inserts alone, well past the end of the snapshot's reads: appended.
    server.execute("INSERT INTO sbtest.sbtest1 (k, c, pad) VALUES (1, 'late', 'x'), (2, 'y', 'z')")
    sync(_url(server), lake, tables=tables, once=True, spark=spark)
    apply(server.binlog_dir, reference, tables=tables, once=True, spark=spark)

    start, end = first.snapshot.start, first.snapshot.end
    assert end is not None and end.key() >= start.key()
    assert end.gtid  # E's GTID position: what names E after a failover
    log = lake / "sbtest" / "sbtest1" / "mirror" / "_delta_log"
    lines = max(log.glob("*.json")).read_text().splitlines()
    (last,) = [json.loads(line)["commitInfo"] for line in lines if '"commitInfo"' in line[:15]]
    assert last["operation"] == "WRITE", last
    assert set(first.snapshot.no_key) == {"bk.t_nopk"}
    assert any(getattr(note, "table", None) == "sbtest.sbtest1" for note in seen)
    assert any(isinstance(note, StreamProgress) and note.rows for note in seen)
    for table in tables:
        db, name = table.split(".")
        mine, theirs = lake / db / name, reference / db / name
        if table != "bk.t_nopk":
            assert _columns(spark, mine / "mirror") == _columns(spark, theirs / "mirror"), table
            assert _rows(spark, mine / "mirror") == _rows(spark, theirs / "mirror"), table
            (count,) = server.query(f"SELECT COUNT(*) FROM {table}")[0]
            assert len(_rows(spark, mine / "mirror")) == int(str(count)), table
        changes = _rows(spark, mine / "changes", *CHANGE)
        assert len(set(changes)) == len(changes), f"{table}: a change logged twice"
        after_start = [
            c
            for c in _rows(spark, theirs / "changes", *CHANGE)
            if (binlog_order(c[0]), c[1]) >= (binlog_order(start.file or ""), start.pos)
        ]
        assert changes == after_start, table
    sbtest = _rows(spark, lake / "sbtest" / "sbtest1" / "mirror", "id", "k", "c", "pad")
    assert _text(sbtest) == _server_rows(server, "SELECT id, k, c, pad FROM sbtest.sbtest1")
    assert len(_rows(spark, lake / "sbtest" / "sbtest1" / "changes", "file")) > 0


SHOP = """
CREATE DATABASE shop; USE shop;
CREATE TABLE shop.orders (id INT PRIMARY KEY, note VARCHAR(40), qty BIGINT);
CREATE TABLE shop.lines (id INT PRIMARY KEY, order_id INT, sku VARCHAR(20));
INSERT INTO shop.orders SELECT seq, CONCAT('order ', seq), seq * 3 FROM seq_1_to_3000;
INSERT INTO shop.lines SELECT seq, seq % 3000 + 1, CONCAT('sku-', seq) FROM seq_1_to_3000;
"""


def _command(url: str, lake: Path) -> list[str]:
    return [sys.executable, "-m", "binlogkit", "spark", "sync", url, "--to", str(lake), "--once"]


def _environment(**extra: str) -> dict[str, str]:
    java = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"
    return {
        **os.environ,
        "BINLOGKIT_JARS": str(ROOT / ".cache" / "jars"),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_SUBMIT_ARGS": f'--master local[2] --driver-java-options "{java}" pyspark-shell',
        **extra,
    }


def _run(
    command: list[str], env: dict[str, str], kill_at: str | None = None, timeout: float = 300
) -> tuple[int, str]:
    """Run ``command`` in a process group of its own; with ``kill_at``, SIGKILL the whole group
    (driver, JVM, Python workers) at the first stderr line holding that text. Its exit status
    and stderr."""
    proc = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    watchdog = threading.Timer(timeout, os.killpg, (proc.pid, signal.SIGKILL))
    watchdog.start()
    lines = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if kill_at is not None and kill_at in line:
                os.killpg(proc.pid, signal.SIGKILL)
                break
        proc.wait()
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    _reap(proc.pid)
    return proc.returncode, "".join(lines)


def _reap(group: int) -> None:
    """Kill what is left of a killed run's process group (its JVM may outlive the driver)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)


@pytest.mark.slow
def test_killed_in_the_snapshot_and_after_a_batch_then_run_again(
    spark: Any, mariadb_factory: Callable[..., MariaDBSandbox], tmp_path: Path
) -> None:
    server = mariadb_factory("sync-kill")
    server.execute(SHOP)
    url, lake = _url(server), tmp_path / "lake"
    code, err = _run(_command(url, lake), _environment(), kill_at="snapshot shop.")
    assert code == -signal.SIGKILL, err
    assert not (lake / "_binlogkit" / "checkpoint").exists(), "the snapshot was not cut short"
    server.execute(
        "UPDATE shop.orders SET qty = qty + 1 WHERE id % 100 = 0;"
        "UPDATE shop.orders SET id = id + 10000 WHERE id <= 5;"
        "DELETE FROM shop.lines WHERE id BETWEEN 10 AND 19;"
        "INSERT INTO shop.lines VALUES (5001, 1, 'new');"
    )
    code, err = _run(_command(url, lake), _environment(**{KILL_ENV: "0"}))
    assert code == -signal.SIGKILL, err
    server.execute(
        "UPDATE shop.lines SET sku = 'again' WHERE id = 5001;"
        "UPDATE shop.orders SET note = NULL WHERE id = 10001;"
    )
    code, err = _run(_command(url, lake), _environment())
    assert code == 0, err
    for table, columns in (("orders", "id, note, qty"), ("lines", "id, order_id, sku")):
        mirror = _rows(spark, lake / "shop" / table / "mirror", *columns.split(", "))
        assert _text(mirror) == _server_rows(server, f"SELECT {columns} FROM shop.{table}")
    logged = {
        table: _rows(spark, lake / "shop" / table / "changes", "file", "pos", "row", "op")
        for table in ("orders", "lines")
    }
    assert [op for *_, op in logged["orders"]].count("u") == 30 + 5 + 1
    assert sorted(op for *_, op in logged["lines"]) == ["c"] + ["d"] * 10 + ["u"]
    assert all(len(set(rows)) == len(rows) for rows in logged.values())
    shown = subprocess.run(
        [sys.executable, "-m", "binlogkit", "spark", "status", str(lake), "--format", "json"],
        env=_environment(),
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(shown.stdout)
    tables = {t["table"]: (t["mirror_rows"], t["change_rows"]) for t in found["tables"]}
    assert tables == {"shop.lines": (2991, 12), "shop.orders": (3000, 36)}
    assert found["source"] == url and found["position"]["file"].startswith("mysql-bin.")


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    from binlogkit.spark.sync_state import LakeLayout, SyncState

    lake = tmp_path / "lake"
    SyncState.new("mariadb://u@elsewhere:3306", "server", None, False).save(LakeLayout(lake).state)
    runs = {
        "status": ["status", str(tmp_path / "none")],
        "sync": ["sync", "mariadb://u:secret@here:3306", "--to", str(lake), "--once"],
        "tables": ["sync", "mariadb://u@elsewhere:3306", "--to", str(lake), "--tables", "x"],
        "failover": ["sync", "mariadb://u@here:3306", "--to", str(lake), "--failover"],
        "resnapshot": [
            "sync",
            "mariadb://u@elsewhere:3306",
            "--to",
            str(lake),
            "--resnapshot",
            "a.b",
        ],
    }
    for name, args in runs.items():
        done = subprocess.run(
            [sys.executable, "-m", "binlogkit", "spark", *args], capture_output=True, text=True
        )
        assert done.returncode == 1, name
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("Error: "), done.stderr
        assert "secret" not in done.stderr
        runs[name] = [done.stderr]
    assert "not a binlogkit lake" in runs["status"][0]
    assert "mirrors mariadb://u@elsewhere:3306, not mariadb://u@here:3306" in runs["sync"][0]
    assert "give tables as DB.TABLE" in runs["tables"][0]
    assert "still in its snapshot of mariadb://u@elsewhere:3306" in runs["failover"][0]
    assert "has not finished its first snapshot: nothing to resnapshot" in runs["resnapshot"][0]


def test_a_truncate_or_drop_last_in_a_once_run_reaches_the_mirror(
    spark: Any, mariadb_factory: Callable[..., MariaDBSandbox], tmp_path: Path
) -> None:
    server = mariadb_factory("sync-truncate")
    server.execute(
        "CREATE DATABASE shop; CREATE TABLE shop.t (id INT PRIMARY KEY, v INT);"
        "CREATE TABLE shop.d (id INT PRIMARY KEY); INSERT INTO shop.t VALUES (1, 1), (2, 2);"
        "INSERT INTO shop.d VALUES (1)"
    )
    url, lake = _url(server), tmp_path / "lake"
    sync(url, lake, spark=spark, once=True)  # the snapshot
    mirror = {name: lake / "shop" / name / "mirror" for name in ("t", "d")}
    assert len(_rows(spark, mirror["t"])) == 2 and len(_rows(spark, mirror["d"])) == 1
    # a batch of no row change: the TRUNCATE and the DROP only; the lake's upkeep after it
    server.execute("TRUNCATE TABLE shop.t; DROP TABLE shop.d")
    notes: list[Any] = []
    report = sync(url, lake, spark=spark, once=True, maintain_every=1e-9, progress=notes.append)
    assert (report.batches, report.rows) == (1, 0)
    assert _rows(spark, mirror["t"]) == [] and _rows(spark, mirror["d"]) == []
    assert [n for n in notes if str(n).startswith("maintenance: 3 Delta tables")], notes
    # a row change, then the TRUNCATE last in the batch
    server.execute("INSERT INTO shop.t VALUES (3, 3); TRUNCATE TABLE shop.t")
    report = sync(url, lake, spark=spark, once=True)
    assert (report.batches, report.rows) == (1, 1)
    assert _rows(spark, mirror["t"]) == []
    ops = [op for (op,) in _rows(spark, lake / "shop" / "t" / "changes", "op")]
    assert sorted(ops) == ["c", "t", "t"]


STREAMED = """
CREATE DATABASE shop;
CREATE TABLE shop.a (id INT PRIMARY KEY, v VARCHAR(20), w INT);
CREATE TABLE shop.plain (n INT, t VARCHAR(10));
CREATE TABLE shop.u (code VARCHAR(8) NOT NULL, v INT, UNIQUE KEY (code));
INSERT INTO shop.a VALUES (1, 'one', 1), (2, 'two', 2);
INSERT INTO shop.u VALUES ('a', 1), ('b', 2);
"""
BIG = "INSERT INTO shop.a SELECT seq, REPEAT('b', 20), seq FROM seq_100_to_40000"
DDL = """
ALTER TABLE shop.a ADD COLUMN x INT;
INSERT INTO shop.a (id, v, w, x) VALUES (50000, 'with x', 0, 42);
UPDATE shop.a SET x = 7 WHERE id = 1;
ALTER TABLE shop.a DROP COLUMN w;
ALTER TABLE shop.a RENAME COLUMN v TO v2;
UPDATE shop.a SET v2 = 'renamed', id = 60000 WHERE id = 5;
CREATE TABLE shop.b (k VARCHAR(10) PRIMARY KEY, n DECIMAL(10,2));
INSERT INTO shop.b VALUES ('x', 1.50), ('y', NULL);
INSERT INTO shop.plain VALUES (1, 'dup'), (1, 'dup');
UPDATE shop.u SET v = 9 WHERE code = 'a';
UPDATE shop.u SET code = 'c' WHERE code = 'b';
"""


def _wait(ready: Callable[[], bool], what: str, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


def _kill_dumps(server: MariaDBSandbox, stop: threading.Event, killed: list[int]) -> None:
    """KILL every binlog dump thread of the server until ``stop`` (through the server's
    restart too)."""
    from binlogkit.io.mysql import MySQLConnection
    from binlogkit.protocol.spec import ConnectionSpec

    sql = "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND = 'Binlog Dump'"
    while not stop.is_set():
        try:
            with MySQLConnection.connect(ConnectionSpec.from_url(_url(server))) as conn:
                while not stop.is_set():
                    for (thread,) in conn.query(sql).rows:
                        conn.execute(f"KILL {thread}")
                        killed.append(int(str(thread)))
                    time.sleep(0.02)
        except (BinlogError, OSError):
            time.sleep(0.2)


def _equal(spark: Any, server: MariaDBSandbox, lake: Path, table: str, columns: str) -> bool:
    db, name = table.split(".")
    path = lake / db / name / "mirror"
    if not (path / "_delta_log").is_dir():
        return False
    df = spark.read.format("delta").load(str(path))
    if df.columns != columns.split(", "):
        return False
    ((count,),) = server.query(f"SELECT COUNT(*) FROM {table}")
    if df.count() != int(str(count)):
        return False
    mirror = _text(_rows(spark, path, *columns.split(", ")))
    return mirror == _server_rows(server, f"SELECT {columns} FROM {table}")


def _streaming(lake: Path) -> bool:
    from binlogkit.spark.sync_state import LakeLayout, SyncState

    state = SyncState.load(LakeLayout(lake).state)
    return state is not None and state.streaming


@pytest.mark.slow
def test_a_stream_rides_out_killed_dumps_and_a_restart_follows_ddl_and_stops_when_purged(
    spark: Any, mariadb_factory: Callable[..., MariaDBSandbox], tmp_path: Path
) -> None:
    server = mariadb_factory("sync-stream")
    server.execute(STREAMED)
    url, lake = _url(server), tmp_path / "lake"
    notes: list[Any] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            sync(url, lake, spark=spark, trigger="1 second", progress=notes.append)
        except BaseException as err:
            failed.append(err)

    streaming = threading.Thread(target=run)
    streaming.start()
    try:
        _wait(lambda: _streaming(lake) or bool(failed), "the snapshot")
        server.execute("INSERT INTO shop.a VALUES (3, 'three', 3)")
        _wait(lambda: any(isinstance(n, StreamProgress) for n in notes) or bool(failed), "a batch")
        stop, killed = threading.Event(), []
        killer = threading.Thread(target=_kill_dumps, args=(server, stop, killed))
        killer.start()
        try:
            # A big transaction keeps the batch's dump reading long enough to be killed.
            server.execute(BIG, database="shop")
            _wait(lambda: bool(killed) or bool(failed), "a dump thread to kill")
            stop.set()
            server.execute("UPDATE shop.a SET v = 'before restart' WHERE id = 1")
            server.restart()
            server.execute("UPDATE shop.a SET id = 5 WHERE id = 2")
            _wait(lambda: _equal(spark, server, lake, "shop.a", "id, v, w"), "the rows")
        finally:
            stop.set()
            killer.join()
        assert killed, "no dump thread was running to kill"
        server.execute(DDL)
        _wait(lambda: _equal(spark, server, lake, "shop.a", "id, v2, x"), "the DDL")
        _wait(lambda: _equal(spark, server, lake, "shop.b", "k, n"), "the new table")
        _wait(lambda: _equal(spark, server, lake, "shop.u", "code, v"), "the unique key")
        assert not failed, failed
    finally:
        for query in spark.streams.active:
            query.stop()
        streaming.join(120)
    assert not failed, failed
    a = lake / "shop" / "a" / "mirror"
    assert [name for name, _ in _columns(spark, a)] == ["id", "v2", "x"]
    assert not (lake / "shop" / "plain" / "mirror").exists()
    plain = _rows(spark, lake / "shop" / "plain" / "changes", "op", "after")
    assert plain == [("c", (1, "dup")), ("c", (1, "dup"))]

    server.execute("INSERT INTO shop.a (id) VALUES (99999)")
    newest = server.flush_binlogs()[-1].name
    server.wait_for_checkpoint()
    server.execute(f"PURGE BINARY LOGS TO '{newest}'")
    with pytest.raises(BinlogError, match=r"gone from the server: .* purged") as err:
        sync(url, lake, spark=spark, once=True)
    assert "fresh snapshot" in str(err.value)
    assert status(lake, spark=spark).position is not None
