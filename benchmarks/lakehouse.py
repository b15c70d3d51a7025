"""Lakehouse benchmarks (issue 17): ``--part snapshot``, ``stream``, ``apply`` or ``all``.

``stream`` runs ``lakehouse_stream.py`` (streaming lag commit → mirror under a
steady load, catch-up rows/s) and ``apply`` runs ``apply_rows.py`` (typing and
apply_batch rows/s), each in a process of its own; options this script does not
know go to them. ``snapshot`` is this script's own:

Starts a sandbox MariaDB, fills ``--rows`` rows into three tables (an INT key
with unsigned BIGINT, DECIMAL, ENUM, DATETIME(6), VARCHAR; a BIGINT key with
TIMESTAMP(3), TEXT, DOUBLE; a VARCHAR key with FLOAT, BLOB, DATE) and the
sandbox workload's edge-value tables, then measures, each Spark session in a
process of its own pinned to its cores (``local[1]`` on one CPU, ``local[2]``
on two; the server is not pinned):

- ``snapshot``: :func:`binlogkit.spark.snapshot.run_snapshot` of the three
  tables into a fresh lake (plan, chunk reads, Delta appends), rows/s;
- ``jdbc``: Spark's JDBC source with MariaDB Connector/J (partitioned on an
  integer column, ``numPartitions`` 2 per core) appending the same tables to
  Delta, rows/s, on ``local[2]``;

with the CPU seconds of the Spark process tree and of the server (rows per CPU
second does not depend on what else the machine runs; wall times do), then the
scaling of the snapshot from one core to two (target 1.8x), and which
column types JDBC reads otherwise than the binlog path (the snapshot's values,
which equal the binlog path's: tests/spark/test_snapshot_live.py). A warm-up
run precedes the timed ones; the best of ``--repeat`` runs is kept.

    .venv/bin/python benchmarks/lakehouse.py --part snapshot [--rows 300000] [--repeat 2]
    .venv/bin/python benchmarks/lakehouse.py --part stream [--rate 1000] [--seconds 60]
    .venv/bin/python benchmarks/lakehouse.py --part all
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from spark_ingest import cpu_between, process_tree

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OTHER_PARTS = {"stream": "lakehouse_stream.py", "apply": "apply_rows.py"}
"""The parts other scripts measure."""
JAR_FOLDER = ROOT / ".cache" / "jars"
CONNECTOR_J = "org.mariadb.jdbc:mariadb-java-client:3.5.7"
TARGET = 1.8
"""Snapshot rows/s on two cores over one (issue 17)."""

BENCH_TABLES = ("bench.orders", "bench.events", "bench.items")
JDBC_KEYS = {"bench.orders": "id", "bench.events": "id", "bench.items": "n"}
EDGE_TABLES = (
    "t_int",
    "t_decimal",
    "t_float",
    "t_bit",
    "t_temporal",
    "t_str_latin1",
    "t_str_utf16",
    "t_bin",
    "t_enum_set",
    "t_json",
    "t_mariadb",
)

SETUP = """
CREATE DATABASE bench; USE bench;
CREATE TABLE orders (id INT PRIMARY KEY, customer BIGINT UNSIGNED, amount DECIMAL(12,2),
  status ENUM('new','paid','shipped'), created DATETIME(6), note VARCHAR(100));
CREATE TABLE events (id BIGINT PRIMARY KEY, ts TIMESTAMP(3) NULL, kind VARCHAR(20),
  payload TEXT, score DOUBLE);
CREATE TABLE items (sku VARCHAR(32) PRIMARY KEY, n INT NOT NULL UNIQUE, qty INT, price FLOAT,
  data BLOB, day DATE);
INSERT INTO orders SELECT seq, seq * 2654435761 % 18446744073709551557, seq % 100000 / 7,
  1 + seq % 3, '2024-01-01' + INTERVAL seq SECOND + INTERVAL seq % 999999 MICROSECOND,
  CONCAT('order note ', seq) FROM seq_1_to_{each};
INSERT INTO events SELECT seq, FROM_UNIXTIME(1700000000 + seq + (seq % 1000) / 1000),
  ELT(1 + seq % 4, 'click', 'view', 'buy', 'ünïcode'), REPEAT(CONCAT('payload ', seq, ' '), 5),
  seq / 3e0 FROM seq_1_to_{each};
INSERT INTO items SELECT CONCAT('sku-', LPAD(seq, 10, '0')), seq, seq % 50, seq / 7e0,
  UNHEX(SHA2(seq, 256)), '2020-01-01' + INTERVAL seq % 2000 DAY FROM seq_1_to_{each};
CREATE USER bench@'%'; GRANT ALL ON *.* TO bench@'%';
"""


def session(master: str, jars: list[Path]) -> Any:
    from pyspark.sql import SparkSession

    from binlogkit.spark import register
    from binlogkit.spark.delta import with_delta

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (
        SparkSession.builder.master(master)
        .appName("binlogkit lakehouse benchmark")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", master[6:-1])
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
        .config("spark.driver.extraJavaOptions", "-XX:+UseSerialGC")
        .config("spark.databricks.delta.snapshotPartitions", "1")
    )
    spark = with_delta(builder, jars).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


# -- in a child process: one Spark session --------------------------------------------------


def child(job: dict[str, Any]) -> None:
    """Run the job's measurements in one session; print one JSON line of results."""
    from binlogkit.spark.jars import DELTA_JARS, fetch_jars

    os.sched_setaffinity(0, job["cpus"])
    jars = fetch_jars(JAR_FOLDER, (*DELTA_JARS, CONNECTOR_J))
    spark = session(job["master"], jars)
    work = Path(job["work"])
    try:
        out: dict[str, Any] = {}
        measure = snapshot_seconds if job["step"] == "snapshot" else jdbc_seconds
        measure(spark, job, work / "warm-up")  # untimed: the JVM compiles its hot code
        runs = []
        for number in range(job["repeat"]):
            spark_cpu, server_cpu = process_tree(os.getpid()), process_tree(job["server"])
            seconds = measure(spark, job, work / f"run-{number}")
            spark_cpu = cpu_between(spark_cpu, process_tree(os.getpid()))
            server_cpu = cpu_between(server_cpu, process_tree(job["server"]))
            runs.append({"seconds": seconds, "spark_cpu": spark_cpu, "server_cpu": server_cpu})
        out.update(min(runs, key=lambda run: run["seconds"]))
        if job["step"] == "jdbc":
            out["types"] = jdbc_differences(spark, job, work / "types")
        print(json.dumps(out), flush=True)
    finally:
        spark.stop()


def snapshot_seconds(spark: Any, job: dict[str, Any], lake: Path) -> float:
    from binlogkit.spark.snapshot import run_snapshot

    start = time.perf_counter()
    run_snapshot(spark, job["url"], lake, tables=list(BENCH_TABLES), chunk_rows=job["chunk_rows"])
    seconds = time.perf_counter() - start
    shutil.rmtree(lake)
    return seconds


def _jdbc(spark: Any, job: dict[str, Any], table: str, key: str | None = None) -> Any:
    reader = spark.read.format("jdbc").option("url", job["jdbc"]).option("dbtable", table)
    reader = reader.option("user", "bench").option("driver", "org.mariadb.jdbc.Driver")
    if key is not None:
        reader = reader.option("partitionColumn", key).option("lowerBound", 1)
        reader = reader.option("upperBound", job["each"] + 1)
        reader = reader.option("numPartitions", 2 * len(job["cpus"]))
    return reader.load()


def jdbc_seconds(spark: Any, job: dict[str, Any], lake: Path) -> float:
    start = time.perf_counter()
    for table in BENCH_TABLES:
        frame = _jdbc(spark, job, table, JDBC_KEYS[table])
        frame.write.format("delta").mode("append").save(str(lake / table))
    seconds = time.perf_counter() - start
    shutil.rmtree(lake)
    return seconds


def jdbc_differences(spark: Any, job: dict[str, Any], lake: Path) -> list[str]:
    """Per edge-value column: how JDBC's values differ from the snapshot's (the binlog's)."""
    from binlogkit.spark.snapshot import mirror_path, run_snapshot

    tables = [f"vals.{name}" for name in EDGE_TABLES]
    run_snapshot(spark, job["url"], lake, tables=tables)
    found = []
    for table in tables:
        ours = spark.read.format("delta").load(str(mirror_path(lake, table)))
        key = ours.columns[0]
        want = {row[key]: row.asDict() for row in ours.collect()}
        try:
            got = {row[key]: row.asDict() for row in _jdbc(spark, job, table).collect()}
            types = {f.name: f.dataType.simpleString() for f in _jdbc(spark, job, table).schema}
        except Exception as err:  # the reason JDBC cannot read the table at all
            found.append(f"{table}: JDBC fails: {str(err).splitlines()[0][:160]}")
            continue
        for field in ours.schema.fields:
            name = field.name
            wrong = [k for k in want if k not in got or got[k][name] != want[k][name]]
            if wrong or types[name] != field.dataType.simpleString():
                example = ""
                if wrong:
                    ours, theirs = want[wrong[0]][name], got.get(wrong[0], {}).get(name)
                    example = f"; e.g. {ours!r:.60} read as {theirs!r:.60}"
                found.append(
                    f"{table}.{name}: {field.dataType.simpleString()} vs JDBC {types[name]}, "
                    f"{len(wrong)}/{len(want)} values differ{example}"
                )
    return found


# -- the parent ------------------------------------------------------------------------------


def run_child(job: dict[str, Any]) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS")}
    done = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(job)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    return dict(json.loads(lines[-1]))


def snapshot_part(args: argparse.Namespace) -> None:
    from binlogkit.sandbox import MariaDBSandbox
    from binlogkit.sandbox.workload import build_workload

    each = args.rows // len(BENCH_TABLES)
    cpus = sorted(os.sched_getaffinity(0))
    with (
        tempfile.TemporaryDirectory(prefix="lakehouse-") as base,
        MariaDBSandbox(
            Path(base) / "server", options={"innodb_buffer_pool_size": "256M"}
        ) as server,
    ):
        print(f"filling {each * len(BENCH_TABLES)} rows into {len(BENCH_TABLES)} tables")
        server.execute(SETUP.format(each=each))
        workload = build_workload(database="vals")
        wanted = [t for t in workload.tables if t.name in EDGE_TABLES]
        server.execute(workload.script_of(t.create_sql() for t in wanted))
        server.execute(workload.script_of(t.insert_sql(range(t.rows)) for t in wanted))
        common = {
            "url": f"mariadb://bench@127.0.0.1:{server.port}/",
            "jdbc": f"jdbc:mysql://127.0.0.1:{server.port}/?permitMysqlScheme",
            "each": each,
            "repeat": args.repeat,
            "chunk_rows": args.chunk_rows,
            "work": str(Path(base) / "work"),
            "server": server.pid,
        }
        results = {}
        for label, step, master, use in (
            ("snapshot local[1]", "snapshot", "local[1]", cpus[-1:]),
            ("snapshot local[2]", "snapshot", "local[2]", cpus[-2:]),
            ("jdbc local[2]", "jdbc", "local[2]", cpus[-2:]),
        ):
            job = {**common, "step": step, "master": master, "cpus": use}
            results[label] = run_child(job)
            got, rows = results[label], each * len(BENCH_TABLES)
            print(
                f"{label:18} {got['seconds']:6.2f} s {rows / got['seconds']:7,.0f} rows/s  "
                f"CPU s: Spark {got['spark_cpu']:5.1f}, server {got['server_cpu']:4.1f}: "
                f"{rows / (got['spark_cpu'] + got['server_cpu']):6,.0f} rows/CPU s  "
                f"load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    one, two = (results[f"snapshot local[{n}]"]["seconds"] for n in (1, 2))
    jdbc = results["jdbc local[2]"]["seconds"]
    verdict = "meets" if one / two >= TARGET else "misses"
    print(f"snapshot scaling local[1] -> local[2]: {one / two:.2f}x ({verdict} {TARGET}x)")
    print(f"snapshot local[2] / jdbc local[2] rows/s: {jdbc / two:.2f}x")
    print("JDBC reads these edge-value columns otherwise than the binlog path:")
    for line in results["jdbc local[2]"]["types"]:
        print(f"  {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=["snapshot", *OTHER_PARTS, "all"], default="all")
    parser.add_argument("--rows", type=int, default=300_000, help="rows over the three tables")
    parser.add_argument("--chunk-rows", type=int, default=50_000, help="rows per snapshot chunk")
    parser.add_argument("--repeat", type=int, default=2, help="timed runs (best kept)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.child:
        child(json.loads(args.child))
        return
    if args.part in ("snapshot", "all"):
        snapshot_part(args)
    for part, script in OTHER_PARTS.items():
        if args.part in (part, "all"):
            print(f"-- {part}: {script} {' '.join(rest)}", flush=True)
            subprocess.run([sys.executable, str(HERE / script), *rest], check=True)


if __name__ == "__main__":
    main()
