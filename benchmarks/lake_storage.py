"""What the lake's own file work costs a micro-batch, on a local folder and through Hadoop.

One folder is reached two ways: as a local path (Python's file I/O) and as
``viewfs://bench/lake``, a Hadoop viewfs mount onto it (Hadoop's
``FileSystem`` through the session's JVM, as for ``s3a://`` lakes; the store's
own latency comes on top). In it: a Delta table of ``--commits`` commits (made
with delta-rs, no Spark job) and the lake's small state files. Prints the
median time of each call of ``binlogkit.spark.lake.storage`` a batch makes:
the marks check of a table (its commit files read newest first; here none holds
the mark, so all are read: the worst case), a checkpoint offset read, the
schema history written back, a state file replaced::

    .venv/bin/python benchmarks/lake_storage.py [--commits 60] [--repeat 30]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
from deltalake import write_deltalake

from binlogkit.spark.delta import delta_session
from binlogkit.spark.lake import storage
from binlogkit.spark.lake.marks import Mark, holds
from binlogkit.spark.sync_state import batch_offset

ROOT = Path(__file__).resolve().parents[1]


def median_ms(call: Callable[[], object], repeat: int) -> float:
    call()  # warm: JVM classes, the filesystem cache
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        call()
        times.append(time.perf_counter() - began)
    return statistics.median(times) * 1000


def _calls(root: storage.LakePath, history: str) -> dict[str, Callable[[], object]]:
    mark = Mark("binlogkit-sync-none", 5)
    meta = root / "_binlogkit"
    return {
        "marks check (all commits read)": lambda: holds(str(root / "db/t/changes"), mark),
        "checkpoint offset read": lambda: batch_offset(meta / "checkpoint", 0),
        "history written back (replace)": lambda: storage.replace_text(
            meta / "schema.jsonl", history
        ),
        "state file read": lambda: storage.read_text(meta / "schema.jsonl"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--commits", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    folder = Path(tempfile.mkdtemp(prefix="binlogkit-lake-storage-"))
    spark = delta_session(ROOT / ".cache" / "jars", master="local[1]")
    spark._jsc.hadoopConfiguration().set("fs.viewfs.mounttable.bench.link./lake", folder.as_uri())
    table = folder / "db" / "t" / "changes"
    for number in range(args.commits):
        write_deltalake(str(table), pa.table({"x": [number]}), mode="append")
    offsets = folder / "_binlogkit" / "checkpoint" / "offsets"
    offsets.mkdir(parents=True)
    offset = json.dumps({"file": "mysql-bin.000001", "pos": 4})
    (offsets / "0").write_text(f'v1\n{{"batchWatermarkMs":0}}\n{offset}')
    history = "".join(json.dumps({"file": "b.1", "pos": n, "db": "d"}) + "\n" for n in range(50))
    results: dict[str, dict[str, float]] = {}
    for where in ("local", "viewfs"):
        root = storage.lake_path(str(folder) if where == "local" else "viewfs://bench/lake")
        for name, call in _calls(root, history).items():
            results.setdefault(name, {})[where] = median_ms(call, args.repeat)
    print(f"{args.commits} commits, median of {args.repeat} calls each, ms")
    print(f"{'call':<34}{'local':>10}{'viewfs':>10}")
    for name, found in results.items():
        print(f"{name:<34}{found['local']:>10.2f}{found['viewfs']:>10.2f}")
    spark.stop()


if __name__ == "__main__":
    main()
