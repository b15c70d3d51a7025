"""Batch queries on Spark (``batch_search``): Spark jobs and wall time per call, by number of
queries.

Writes ``--docs`` generated rows as a lake's mirror (``benchmarks/search.py``'s corpus),
builds the index, changes ``--changes`` rows twice (two segments with dead versions,
as an index between compactions has), then calls ``batch_search`` with 1, 20 and
1,000 queries (``--sizes``; one term, three terms, a phrase and a prefix in turn,
from ``benchmarks/search.py``'s query mix), ``--runs`` times each after one
warm-up call, with the hits collected. Printed per size: the median wall seconds
of a call and the Spark jobs it ran (counted in a job group of its own by the
status tracker; Delta's snapshot jobs included), and the hits.

    .venv/bin/python benchmarks/search_batch.py [--docs 5000] [--sizes 1,20,1000] [--work DIR]

``--work DIR`` keeps the corpus and index for the next run (built once).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

from search import corpus, queries, session, work_folder, work_options, write_mirror
from spark_ingest import cpu_between, process_tree


def prepared(spark: Any, work: Path, docs: int, changes: int) -> Path:
    """The index under ``work``, built (and changed twice) unless it is there already."""
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    from binlogkit.spark.search.build import index

    folder = work / "index"
    if folder.exists():
        return folder
    corpus(docs, work / "corpus")
    mirror = write_mirror(spark, work)["mirror"]
    lake = work / "lake"
    index(lake, folder, columns=["bench.docs.body"], once=True, spark=spark, compact=False)
    table = DeltaTable.forPath(spark, mirror)
    for step in range(2):
        ids = range(1 + step, docs + 1, max(1, docs // changes))
        table.update(F.col("id").isin(list(ids)), {"body": F.concat("body", F.lit(" zqx"))})
        index(lake, folder, once=True, spark=spark, compact=False)
    return folder


def timed_call(
    spark: Any, folder: Path, texts: list[str], group: str
) -> tuple[float, float, dict[str, int], int]:
    """Wall and CPU seconds (this process and its children: the Spark JVM and Python workers),
    Spark jobs by the name of their last stage, and hits of one ``batch_search`` of ``texts``."""
    from binlogkit.spark.search.queries import batch_search

    frame = spark.createDataFrame([(text,) for text in texts], "query string")
    context = spark.sparkContext
    context.setJobGroup(group, group)
    started, cpu = time.monotonic(), process_tree(os.getpid())
    hits = len(batch_search(spark, folder, frame, limit=10).collect())
    seconds, cpu = time.monotonic() - started, cpu_between(cpu, process_tree(os.getpid()))
    context.setLocalProperty("spark.jobGroup.id", None)
    tracker = context.statusTracker()
    jobs: dict[str, int] = {}
    for job in tracker.getJobIdsForGroup(group):
        info = tracker.getJobInfo(job)
        stage = info and max(info.stageIds, default=None)
        name = getattr(stage is not None and tracker.getStageInfo(stage), "name", "?")
        jobs[name] = jobs.get(name, 0) + 1
    return seconds, cpu, jobs, hits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=5_000)
    parser.add_argument("--changes", type=int, default=100)
    parser.add_argument("--sizes", default="1,20,1000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", action="store_true", help="print the jobs by stage name too")
    work_options(parser)
    args = parser.parse_args()
    work = work_folder(args, "search-batch-")
    spark = session(args.master)
    try:
        folder = prepared(spark, work, args.docs, args.changes)
        sizes = [int(size) for size in args.sizes.split(",")]
        kinds = queries(work / "corpus" / "docs.parquet", folder, max(sizes))
        kinds["prefix"] = [f"{term[:3]}*" for term in kinds["1 term"]]
        mix = [q for row in zip(*kinds.values(), strict=True) for q in row]
        calls = itertools.count()
        for size in sizes:
            texts = mix[:size]
            timed_call(spark, folder, texts, f"warm-{next(calls)}")
            runs = [
                timed_call(spark, folder, texts, f"call-{next(calls)}") for _ in range(args.runs)
            ]
            line = {
                "queries": size,
                "seconds_median": round(statistics.median(r[0] for r in runs), 2),
                "seconds": [round(r[0], 2) for r in runs],
                "cpu_seconds_median": round(statistics.median(r[1] for r in runs), 2),
                "jobs": sorted({sum(r[2].values()) for r in runs}),
                "hits": runs[0][3],
                "load": [round(x, 1) for x in os.getloadavg()],
            }
            print(json.dumps(line), flush=True)
            if args.jobs:
                print(json.dumps({"queries": size, "jobs_by_stage": runs[0][2]}), flush=True)
    finally:
        spark.stop()
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
