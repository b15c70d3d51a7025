"""The lake's upkeep (``binlogkit spark maintain``): files before and after, and seconds.

Builds a lake of ``--tables`` tables written as a stream writes them, for ``--batches``
micro-batches: each batch appends ``--rows`` rows to each table's change log and, every
``--merge-every``-th batch, MERGEs an update of as many rows into its mirror (the other
batches append inserts to it), each write with the batch's mark (``marks.append_once``,
``marks.write_once``). Then runs :func:`binlogkit.spark.maintain` with ``--retain`` hours
(0: the files the OPTIMIZE replaced are vacuumed too) twice: the first compacts, the
second finds nothing to do (the cost of a no-op round). Prints per round the Delta
tables, files (the current versions') before and after, data files on disk before and
after, and seconds; one Spark session (``--master``) for all of it.

    .venv/bin/python benchmarks/lake_maintain.py [--batches 200] [--tables 4] [--rows 20]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any


def build(spark: Any, lake: Path, tables: int, batches: int, rows: int, merge_every: int) -> None:
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    from binlogkit.spark.lake.marks import Mark, append_once, write_once

    for batch in range(batches):
        began = batch * rows
        mark = Mark("bench", batch)
        changes = spark.range(began, began + rows).select(
            F.col("id"), F.lit("c").alias("op"), F.current_date().alias("date")
        )
        for t in range(tables):
            base = lake / "db" / f"t{t}"
            append_once(changes, str(base / "changes"), mark, partitionBy="date")
            mirror = str(base / "mirror")
            if batch % merge_every or batch == 0:
                rows_in = spark.range(began, began + rows).select("id", F.lit(0).alias("v"))
                append_once(rows_in, mirror, mark)
                continue
            updates = spark.range(0, rows).select(
                (F.col("id") * (began // rows)).alias("id"), F.lit(batch).alias("v")
            )

            def merge(path: str = mirror, source: Any = updates) -> None:
                target = DeltaTable.forPath(spark, path).alias("m")
                condition = "m.id = u.id"
                target.merge(source.alias("u"), condition).whenMatchedUpdateAll().execute()

            write_once(spark, mirror, mark, merge)


def disk_files(lake: Path) -> int:
    return sum(1 for p in lake.rglob("*.parquet") if "_delta_log" not in p.parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--rows", type=int, default=20)
    parser.add_argument("--merge-every", type=int, default=5)
    parser.add_argument("--retain", type=float, default=0.0)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()

    from binlogkit.spark.lake_maintain import maintain, summary
    from binlogkit.spark.lakehouse import lake_session

    spark = lake_session(args.master)
    lake = Path(tempfile.mkdtemp(prefix="lake_maintain."))
    try:
        began = time.monotonic()
        build(spark, lake, args.tables, args.batches, args.rows, args.merge_every)
        print(
            f"lake: {args.tables} tables x {args.batches} batches of {args.rows} rows "
            f"(a MERGE every {args.merge_every}), built in {time.monotonic() - began:.1f} s"
        )
        for round_ in ("first", "again"):
            on_disk = disk_files(lake)
            began = time.monotonic()
            done = maintain(lake, retain_hours=args.retain, spark=spark)
            seconds = time.monotonic() - began
            print(
                f"{round_}: {summary(done, seconds)}; data files on disk {on_disk:,} -> "
                f"{disk_files(lake):,}"
            )
    finally:
        shutil.rmtree(lake, ignore_errors=True)


if __name__ == "__main__":
    main()
