"""Streaming lag and apply throughput of ``binlogkit spark sync`` (issue 17, section 6).

A throwaway MariaDB server gets a steady load: a writer thread inserts rows
into ``bench.lag`` (with ``--tables N``, into N tables in turn, a transaction
each) at ``--rate`` row changes per second (transactions of ``--rows-per-tx``
rows, ``--updates`` of them updates of random earlier rows), each row version
carrying the wall time just before its commit.
:func:`binlogkit.spark.sync` mirrors the table with a ``--trigger`` micro-batch
interval on a local session, in the same process. A row's lag is
the time from its commit on the server to the Delta commit of the mirror that
made it visible: the mirror's ``_delta_log`` gives each commit's time, and
pyarrow reads the rows of the files it added (a row is visible from the first
commit that holds it; a MERGE that rewrites a file adds its rows again). The
first ``--warmup`` seconds are left out (the snapshot, the session's first
batches, which compile and create the tables, and the JVM's warm-up: its JIT
compiles Spark's and Delta's code for the first two to three minutes of a
stream, at first with most of a core; a sync runs for hours). ``--initial``
fills the table before the sync's snapshot (the updates then go to random rows
of all of it). The same machine's clock is on
both sides. The median phases of the measured batches (``durationMs`` of the
query's progress) follow; ``--profile`` breaks a median one down into the
apply's calls, its Spark jobs and its Delta commits (``batch_profile.py``).

Then apply throughput: with the stream stopped, ``--catchup`` rows are
inserted (and half of them updated), and one ``once`` run applies them; rows/s
of the micro-batches' apply time and of the whole run are printed
(``--catchup 0``: none).

    .venv/bin/python benchmarks/lakehouse_stream.py [--rate 1000] [--seconds 60] [--trigger "1 s"]
        [--updates 2] [--tables N] [--initial ROWS] [--warmup 120] [--catchup 0] [--profile]

The lag stays bounded only while batches are applied faster than their rows
arrive: otherwise the next batch holds more rows, takes longer still, and the
lag grows for as long as the load runs. At R rows/s applied and 1,000 arriving,
a steady batch lasts F / (1 - 1000 / R) for a fixed cost F per batch, and the
p99 lag is about twice that. Measurements, before and after each change, are in
docs/lakehouse.md ("Cost of a micro-batch"); on a loaded machine (a load average
above about 6 on 2 cores) the stream reaches no steady state whichever the code.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from binlogkit.io.mysql import MySQLConnection
from binlogkit.protocol.spec import ConnectionSpec
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.spark.lakehouse import lake_session, sync
from binlogkit.spark.sync_progress import StreamProgress

sys.path.insert(0, str(Path(__file__).resolve().parent))

from batch_profile import Profile, instant, tree_cpu

PHASES = (
    "latestOffset",
    "queryPlanning",
    "getBatch",
    "addBatch",
    "walCommit",
    "commitOffsets",
    "triggerExecution",
)
"""A micro-batch's phases in its progress report (``durationMs``)."""
CREATE = (
    "CREATE TABLE {} (id BIGINT PRIMARY KEY AUTO_INCREMENT, "
    "written DOUBLE NOT NULL, n INT NOT NULL, pad VARCHAR(64) NOT NULL)"
)


def table_names(count: int) -> list[str]:
    """The benchmark's tables: ``bench.lag``, then ``bench.lag2`` ... ``bench.lagN``."""
    return ["bench.lag"] + [f"bench.lag{i}" for i in range(2, count + 1)]


def writer(
    url: str,
    tables: list[str],
    rate: float,
    per_tx: int,
    updates: int,
    stop: threading.Event,
    done: list[int],
) -> None:
    """Write ``rate`` row changes a second in transactions of ``per_tx`` until ``stop``, each
    to the next of ``tables`` in turn: ``updates`` of them updates of random rows of the table
    (their ``written`` set to the commit's time too), the rest inserts."""
    every = per_tx / rate
    chooser = random.Random(17)
    with MySQLConnection.connect(ConnectionSpec.from_url(url)) as conn:
        inserted = {
            t: int(conn.query(f"SELECT COALESCE(MAX(id), 0) FROM {t}").rows[0][0]) for t in tables
        }
        due = time.monotonic()
        turn = 0
        while not stop.is_set():
            table = tables[turn % len(tables)]
            turn += 1
            now = time.time()
            fresh = per_tx - updates if inserted[table] else per_tx
            rows = ", ".join(f"({now!r}, {i}, REPEAT('x', 40))" for i in range(fresh))
            insert = f"INSERT INTO {table} (written, n, pad) VALUES {rows}"
            if fresh < per_tx:
                ids = {1 + chooser.randrange(inserted[table]) for _ in range(updates)}
                where = ", ".join(map(str, sorted(ids)))
                update = f"UPDATE {table} SET written = {now!r}, n = n + 1 WHERE id IN ({where})"
                for sql in ("BEGIN", insert, update, "COMMIT"):
                    conn.execute(sql)
            else:
                conn.execute(insert)
            inserted[table] += fresh
            done.append(per_tx)
            due += every
            pause = due - time.monotonic()
            if pause > 0:
                time.sleep(pause)


def visible_lags(mirror: Path, since: float) -> list[float]:
    """Per row version (key and ``written``) written after ``since``: seconds from its commit
    to the first Delta commit of the mirror that holds it (a MERGE that rewrites a file adds
    its rows again)."""
    seen: dict[tuple[int, float], float] = {}
    columns = ["id", "written"]
    for entry in sorted((mirror / "_delta_log").glob("*.json")):
        actions = [json.loads(line) for line in entry.read_text().splitlines() if line]
        stamps = [a["commitInfo"]["timestamp"] for a in actions if "commitInfo" in a]
        for action in actions:
            if "metaData" in action:
                schema = action["metaData"]["schemaString"]
                columns = [physical_name(schema, name) for name in ("id", "written")]
        if not stamps:
            continue
        visible = stamps[0] / 1000
        for action in actions:
            if "add" in action:
                path = mirror / action["add"]["path"]
                rows = pq.read_table(path, columns=columns).to_pylist()
                for key, written in (row.values() for row in rows):
                    if written >= since:
                        seen.setdefault((key, written), visible - written)
    return list(seen.values())


def physical_name(schema: str, name: str) -> str:
    """The name of column ``name`` in the table's Parquet files (the mirror maps column names)."""
    field = next(f for f in json.loads(schema)["fields"] if f["name"] == name)
    return str(field["metadata"].get("delta.columnMapping.physicalName", name))


def interval(text: str) -> str:
    """A trigger interval as Spark reads it: ``1 s`` (which Spark refuses) is ``1 second``."""
    number, _, unit = text.strip().partition(" ")
    return f"{number} second" if unit.strip() == "s" else text


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=1000.0, help="row changes per second")
    parser.add_argument("--rows-per-tx", type=int, default=10)
    parser.add_argument(
        "--updates", type=int, default=0, help="of each transaction's rows, updates (rest inserts)"
    )
    parser.add_argument("--seconds", type=float, default=60.0, help="measured streaming time")
    parser.add_argument(
        "--warmup",
        type=float,
        default=120.0,
        help="seconds left out: the snapshot and the JVM's warm-up (its JIT)",
    )
    parser.add_argument(
        "--trigger", default="1 second", type=interval, help='Spark interval ("1 second", "1 s")'
    )
    parser.add_argument("--catchup", type=int, default=100_000, help="rows for throughput")
    parser.add_argument(
        "--initial", type=int, default=0, help="rows in each table before the sync's snapshot"
    )
    parser.add_argument("--tables", type=int, default=1, help="tables the load goes to in turn")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument(
        "--profile", action="store_true", help="break a median measured micro-batch down"
    )
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="a session setting"
    )
    args = parser.parse_args()

    base = Path(tempfile.mkdtemp(prefix="binlogkit-lakehouse-"))
    server = MariaDBSandbox(base / "server").start()
    try:
        run(args, server, base)
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)


def run(args: argparse.Namespace, server: MariaDBSandbox, base: Path) -> None:
    url = f"mariadb://root@localhost/?socket={server.socket}"
    tables = table_names(args.tables)
    server.execute("CREATE DATABASE bench; " + "; ".join(CREATE.format(t) for t in tables))
    for table in tables:
        fill(server, table, args.initial)
    lake = base / "lake"
    spark = lake_session(args.master)
    for setting in args.set:
        spark.conf.set(*setting.split("=", 1))
    profile = Profile() if args.profile else None
    if profile is not None:
        profile.install()
    batches: list[StreamProgress] = []

    def note(progress: Any) -> None:
        if isinstance(progress, StreamProgress):
            batches.append(progress)

    print(
        f"load: {args.rate:.0f} row changes/s ({args.rows_per_tx} rows a transaction, "
        f"{args.updates} of them updates) over {len(tables)} table(s), "
        f"trigger {args.trigger}, {args.master}, load average {os.getloadavg()[0]:.1f}"
    )
    stop, written = threading.Event(), []
    load = threading.Thread(
        target=writer,
        args=(url, tables, args.rate, args.rows_per_tx, args.updates, stop, written),
        daemon=True,
    )
    sync_run = threading.Thread(
        target=sync,
        args=(url, lake),
        kwargs={"tables": tables, "spark": spark, "trigger": args.trigger, "progress": note},
        daemon=True,
    )
    began = time.time()
    sync_run.start()
    load.start()
    time.sleep(args.warmup)
    used = tree_cpu()
    time.sleep(args.seconds)
    used = tree_cpu() - used
    stop.set()
    load.join()
    ended = time.time()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not any(
        b.lag_bytes == 0 and b.applied_at.timestamp() >= ended for b in batches
    ):
        time.sleep(0.5)  # until a batch applied after the load's end caught up with the server
    reports = []
    for query in spark.streams.active:
        reports += [json.loads(p.json) for p in query.recentProgress]
        query.stop()
    sync_run.join(60)
    measured = began + args.warmup
    reports = [r for r in reports if r["numInputRows"] and instant(r["timestamp"]) >= measured]
    lags = [
        lag
        for table in tables
        for lag in visible_lags(lake.joinpath(*table.split("."), "mirror"), measured)
    ]
    rate = sum(written) / (ended - began)
    print(f"written: {sum(written):,} rows ({rate:,.0f}/s while the load ran)")
    if lags:
        print(
            f"lag commit -> visible in the mirror: p50 {percentile(lags, 0.5):.2f} s, "
            f"p99 {percentile(lags, 0.99):.2f} s, max {max(lags):.2f} s "
            f"({len(lags):,} rows after {args.warmup:.0f} s of warm-up)"
        )
    steady = [b for b in batches if b.rows]
    if steady:
        print(
            f"micro-batches: {len(steady)}, median "
            f"{statistics.median(b.rows for b in steady):,.0f} rows, "
            f"median apply {statistics.median(b.seconds for b in steady):.2f} s"
        )
    inside = [r for r in reports if instant(r["timestamp"]) < measured + args.seconds]
    if inside:
        print(
            f"CPU of the process tree (the JVM, Python workers, the load's writer; not the "
            f"server) in the {args.seconds:.0f} s measured: {used:.1f} s, "
            f"{used / len(inside):.2f} s a batch ({len(inside)} batches began); "
            f"load average at the end {os.getloadavg()[0]:.1f}"
        )
    if reports:
        phases = {k: statistics.median(r["durationMs"].get(k, 0) for r in reports) for k in PHASES}
        print(
            f"median of {len(reports)} measured batches' phases (ms): "
            + ", ".join(f"{k} {v:.0f}" for k, v in phases.items())
        )
        if profile is not None:
            middle = sorted(reports, key=lambda r: r["durationMs"]["triggerExecution"])
            profile.report(spark, lake, middle[len(middle) // 2])

    if args.catchup:
        catchup(args, server, url, lake, spark, tables)


def fill(server: MariaDBSandbox, table: str, rows: int) -> None:
    """``rows`` rows in ``table`` (``written`` 0: not measured), 100,000 a statement."""
    step = 100_000
    for first in range(0, rows, step):
        server.execute(
            f"INSERT INTO {table} (written, n, pad) SELECT 0, seq, REPEAT('x', 40) "
            f"FROM seq_1_to_{min(step, rows - first)}",
            database="bench",
        )


def catchup(
    args: argparse.Namespace,
    server: MariaDBSandbox,
    url: str,
    lake: Path,
    spark: Any,
    tables: list[str],
) -> None:
    """Apply throughput: ``--catchup`` inserts into the first table and half as many updates,
    one ``once`` run."""
    step = 10_000
    for first in range(0, args.catchup, step):
        count = min(step, args.catchup - first)
        server.execute(
            "INSERT INTO bench.lag (written, n, pad) SELECT UNIX_TIMESTAMP(), seq, 'c' "
            f"FROM seq_1_to_{count}",
            database="bench",
        )
    server.execute("UPDATE bench.lag SET pad = 'u' WHERE n % 2 = 0 AND pad = 'c'")
    batches: list[StreamProgress] = []
    began = time.monotonic()
    report = sync(
        url,
        lake,
        tables=tables,
        spark=spark,
        once=True,
        progress=lambda p: batches.append(p) if isinstance(p, StreamProgress) else None,
    )
    wall = time.monotonic() - began
    applying = sum(b.seconds for b in batches)
    print(
        f"apply: {report.rows:,} row changes in {report.batches} micro-batches: "
        f"{report.rows / applying:,.0f} rows/s applying ({applying:.1f} s), "
        f"{report.rows / wall:,.0f} rows/s for the whole once run ({wall:.1f} s)"
    )


if __name__ == "__main__":
    sys.exit(main())
