"""The fixed cost of a micro-batch's Delta writes: change log append and mirror MERGE.

Applies ``--batches`` batches of ``--rows`` new rows each (typed changes of one
table, as ``apply_batch`` hands them to the writes; ``--updates``: and as many
updates of keys of earlier batches) to a change log and a mirror on
``local[2]``, as the apply writes them: the change log append beside the
mirror's MERGE (``--before``: the append, then the MERGE, as it did before;
``--insert-append``: the batch's inserts appended to the mirror instead of
MERGEd, as the apply does where the mirror is exact), and prints the
median time of each write and of both over the batches after the first
``--warmup``, the CPU time of the process tree (the JVM and Python workers) and
the Spark jobs a batch. ``--delta-txn`` makes the same writes idempotent with
Delta's transaction ids (``txnAppId``/``txnVersion`` as session settings), as
the apply did before the marks of ``binlogkit.spark.lake.marks``: Delta 4.4
then reconstructs each table's state before each write. ``--set`` tries a
session setting, ``--mirror-property`` a table property of the mirror (such as
``delta.enableDeletionVectors=true``). Run variants alternating when the
machine is shared, and compare::

    .venv/bin/python benchmarks/batch_writes.py [--rows 3000] [--batches 25] [--updates N]
        [--before] [--insert-append] [--delta-txn] [--snapshot-partitions N] [--set KEY=VALUE]
        [--mirror-property KEY=VALUE]

Measured (docs/lakehouse.md, "Cost of a micro-batch"): see there.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from pyspark.sql import functions as F

from binlogkit.spark.lake import changelog, mirror
from binlogkit.spark.lake.batch import _beside
from binlogkit.spark.lake.marks import Mark
from binlogkit.spark.lake.tables import LakeTables, transaction
from binlogkit.spark.lakehouse import lake_session

sys.path.insert(0, str(Path(__file__).resolve().parent))

from batch_profile import jobs, tree_cpu


def _changes(spark: Any, batch: int, rows: int, updates: int, initial: int) -> Any:
    """``rows`` inserts of new keys, then ``updates`` updates of keys the mirror holds (the
    ``initial`` rows and earlier batches' inserts, spread over them), in the columns the writes
    read."""
    first = initial + batch * rows
    ids = spark.range(first, first + rows)
    inserts = _rows(ids, F.col("id") * 100, "c")
    if not updates or not first:
        return inserts
    spread = spark.range(updates).select(
        ((F.col("id") * 104729 + batch * 31) % first).alias("id"),
        (F.lit((first + rows) * 100) + F.col("id")).alias("pos"),
    )
    return inserts.unionByName(_rows(spread, F.col("pos"), "u"))


def _rows(ids: Any, pos: Any, op: str) -> Any:
    image = F.struct(F.col("id"), (F.col("id") % 97).alias("v"), F.lit(op).alias("name"))
    none = F.lit(None).cast("struct<id:bigint,v:bigint,name:string>")
    return ids.select(
        F.lit("b.000001").alias("file"),
        pos.alias("pos"),
        F.lit(0).alias("row"),
        F.lit(op).alias("op"),
        (image if op == "u" else none).alias("before"),
        image.alias("after"),
        F.current_timestamp().alias("ts"),
        F.lit(None).cast("timestamp").alias("commit_ts"),
    )


def _with_delta_txn(spark: Any) -> tuple[Callable[..., bool], Callable[..., bool]]:
    """``write_once`` and ``append_once`` as the apply wrote before marks: every write with a
    Delta transaction id, which Delta looks up in the table's state."""

    def write(_: Any, path: str, mark: Mark, do: Callable[[], object]) -> bool:
        with transaction(spark, mark.app, mark.batch):
            do()
        return True

    def append(rows: Any, path: str, mark: Mark, **options: str) -> bool:
        writer = rows.write.format("delta").mode("append").options(**options)
        return write(None, path, mark, lambda: writer.save(path))

    return write, append


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=3000)
    parser.add_argument("--batches", type=int, default=25)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--delta-txn", action="store_true")
    parser.add_argument(
        "--before",
        action="store_true",
        help="the append, then the MERGE (the code before)",
    )
    parser.add_argument(
        "--insert-append", action="store_true", help="append the inserts to the mirror"
    )
    parser.add_argument("--updates", type=int, default=0, help="updates of older keys a batch")
    parser.add_argument(
        "--initial", type=int, default=0, help="rows in the mirror before the first batch"
    )
    parser.add_argument(
        "--initial-files", type=int, default=8, help="the files the initial rows are written in"
    )
    parser.add_argument("--snapshot-partitions", type=int, help="default: lake_session's")
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="a session setting"
    )
    parser.add_argument(
        "--mirror-property",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a table property of the mirror when created",
    )
    args = parser.parse_args()
    spark = lake_session("local[2]")
    if args.snapshot_partitions:
        spark.conf.set("spark.databricks.delta.snapshotPartitions", str(args.snapshot_partitions))
    for setting in args.set:
        spark.conf.set(*setting.split("=", 1))
    extra = dict(p.split("=", 1) for p in args.mirror_property)
    if args.delta_txn:  # what the apply did before marks
        write, append = _with_delta_txn(spark)
        changelog.append_once = append  # type: ignore[attr-defined]
        mirror.write_once = write  # type: ignore[attr-defined]
    tables = LakeTables(spark)
    times: dict[str, list[float]] = {"append": [], "merge": [], "both": []}
    spans: list[tuple[float, float]] = []
    cpu: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        log, rows = str(Path(folder, "changes")), str(Path(folder, "mirror"))
        for batch in range(args.batches):
            frame = _changes(spark, batch, args.rows, args.updates, args.initial).persist()
            frame.count()
            mark = Mark("bench", batch)
            if batch == 0:
                tables.create(
                    rows, frame.schema["after"].dataType, **({"extra": extra} if extra else {})
                )
                if args.initial:
                    held = _rows(spark.range(args.initial), F.col("id"), "c").select("after.*")
                    held.repartition(args.initial_files, "id").write.format("delta").mode(
                        "append"
                    ).save(rows)
            began, clock, used = time.monotonic(), time.time(), tree_cpu()
            ended: dict[str, float] = {}

            def append(frame: Any = frame, mark: Mark = mark, ended: Any = ended) -> None:
                changelog.append_log(frame, log, mark, tables)
                ended["append"] = time.monotonic()

            if args.before:  # as the apply did before
                append()
            else:
                changelog.create_log(frame, log, tables)
            with nullcontext() if args.before else _beside(spark, append):
                if args.insert_append and not args.updates:
                    mirror.append_mirror(frame, rows, mark)
                else:
                    mirror.merge_mirror(frame, rows, ["id"], mark)
                ended["merge"] = time.monotonic()
            times["append"].append(ended["append"] - began)
            times["merge"].append(ended["merge"] - (ended["append"] if args.before else began))
            times["both"].append(max(ended.values()) - began)
            spans.append((clock, time.time()))
            cpu.append(tree_cpu() - used)
            frame.unpersist()
        check = spark.read.format("delta").load(rows)
        want = args.initial + args.batches * args.rows
        assert check.count() == want, f"mirror rows {check.count()}, want {want}"
    kept = {name: values[args.warmup :] for name, values in times.items()}
    how = "Delta transaction ids" if args.delta_txn else "marks"
    how += ", append then MERGE (before)" if args.before else ", append beside the MERGE"
    how += ", inserts appended to the mirror" if args.insert_append else ""
    load = os.getloadavg()[0]
    parts = spark.conf.get("spark.databricks.delta.snapshotPartitions")
    print(
        f"{how}: {args.batches - args.warmup} batches of {args.rows:,} rows "
        f"({args.updates:,} updates) into a mirror of {args.initial:,} rows and more, "
        f"{parts} snapshot partitions, load {load:.1f}"
    )
    for name, values in kept.items():
        print(f"  {name}: median {statistics.median(values):.2f} s, max {max(values):.2f} s")
    found = jobs(spark)
    counts = [sum(1 for j in found if a <= j[0] <= b) for a, b in spans[args.warmup :]]
    print(
        f"  CPU a batch (process tree): median {statistics.median(cpu[args.warmup :]):.2f} s; "
        f"Spark jobs a batch: median {statistics.median(counts):.0f}"
    )
    last = spans[-1]
    done = [job for job in found if last[0] <= job[0] <= last[1]]
    print(f"Spark jobs of the last batch: {len(done)}")
    for start, end, tasks, what in done:
        print(f"  {start - last[0]:6.2f}: {end - start:5.2f}  {tasks:3d} tasks  {what[:100]}")


if __name__ == "__main__":
    main()
