"""The fixed cost of a micro-batch's Delta writes: change log append and mirror MERGE.

Applies ``--batches`` batches of ``--rows`` new rows each (typed changes of one
table, as ``apply_batch`` hands them to the writes) to a change log and a mirror
on ``local[2]``, and prints the median time of each write over the batches after
the first ``--warmup``. ``--delta-txn`` makes the same writes idempotent with
Delta's transaction ids (``txnAppId``/``txnVersion`` as session settings), as
the apply did before the marks of ``binlogkit.spark.lake.marks``: Delta 4.4
then reconstructs each table's state before each write. Run both, alternating
when the machine is shared, and compare::

    .venv/bin/python benchmarks/batch_writes.py [--rows 3000] [--batches 25] [--delta-txn]
        [--snapshot-partitions N]

Measured (docs/lakehouse.md, "Cost of a micro-batch"): see there.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pyspark.sql import functions as F

from binlogkit.spark.lake import changelog, mirror
from binlogkit.spark.lake.marks import Mark
from binlogkit.spark.lake.tables import LakeTables, transaction
from binlogkit.spark.lakehouse import lake_session

sys.path.insert(0, str(Path(__file__).resolve().parent))

from batch_profile import jobs


def _changes(spark: Any, batch: int, rows: int) -> Any:
    """``rows`` inserts of new keys, in the columns the writes read."""
    ids = spark.range(batch * rows, (batch + 1) * rows)
    after = F.struct(F.col("id"), (F.col("id") % 97).alias("v"), F.lit("name").alias("name"))
    return ids.select(
        F.lit("b.000001").alias("file"),
        (F.col("id") * 100).alias("pos"),
        F.lit(0).alias("row"),
        F.lit("c").alias("op"),
        F.lit(None).cast("struct<id:bigint,v:bigint,name:string>").alias("before"),
        after.alias("after"),
        F.current_timestamp().alias("ts"),
        F.lit(None).cast("timestamp").alias("commit_ts"),
    )


@contextmanager
def _delta_txn(spark: Any, mark: Mark) -> Iterator[None]:
    with transaction(spark, mark.app, mark.batch):
        yield


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=3000)
    parser.add_argument("--batches", type=int, default=25)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--delta-txn", action="store_true")
    parser.add_argument("--snapshot-partitions", type=int, help="default: lake_session's")
    args = parser.parse_args()
    spark = lake_session("local[2]")
    if args.snapshot_partitions:
        spark.conf.set("spark.databricks.delta.snapshotPartitions", str(args.snapshot_partitions))
    if args.delta_txn:  # what the apply did before marks
        for module in (changelog, mirror):
            module.holds = lambda path, mark: False  # type: ignore[attr-defined]
            module.marked = lambda spark, mark: _delta_txn(spark, mark)  # type: ignore[attr-defined]
    tables = LakeTables(spark)
    times: dict[str, list[float]] = {"append": [], "merge": []}
    last = (0.0, 0.0)
    with tempfile.TemporaryDirectory() as folder:
        log, rows = str(Path(folder, "changes")), str(Path(folder, "mirror"))
        for batch in range(args.batches):
            frame = _changes(spark, batch, args.rows).persist()
            frame.count()
            mark = Mark("bench", batch)
            if batch == 0:
                tables.create(rows, frame.schema["after"].dataType)
            began, clock = time.monotonic(), time.time()
            changelog.append_log(frame, log, mark, tables)
            appended = time.monotonic()
            mirror.merge_mirror(frame, rows, ["id"], mark)
            times["append"].append(appended - began)
            times["merge"].append(time.monotonic() - appended)
            last = (clock, time.time())
            frame.unpersist()
    kept = {name: values[args.warmup :] for name, values in times.items()}
    how = "Delta transaction ids" if args.delta_txn else "marks"
    load = os.getloadavg()[0]
    parts = spark.conf.get("spark.databricks.delta.snapshotPartitions")
    print(
        f"{how}: {args.batches - args.warmup} batches of {args.rows:,} rows, "
        f"{parts} snapshot partitions, load {load:.1f}"
    )
    for name, values in kept.items():
        print(f"  {name}: median {statistics.median(values):.2f} s, max {max(values):.2f} s")
    both = [a + m for a, m in zip(kept["append"], kept["merge"], strict=True)]
    print(f"  both: median {statistics.median(both):.2f} s")
    done = [job for job in jobs(spark) if last[0] <= job[0] <= last[1]]
    print(f"Spark jobs of the last batch: {len(done)}")
    for start, end, tasks, what in done:
        print(f"  {start - last[0]:6.2f}: {end - start:5.2f}  {tasks:3d} tasks  {what[:100]}")


if __name__ == "__main__":
    main()
