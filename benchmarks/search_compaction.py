"""Search index maintenance: compaction whole (the index rewritten) against tiered (its segments
merged), and small batches reading the old documents by key against joining all of them.

Writes ``--docs`` generated rows as a lake's mirror (``benchmarks/search.py``'s corpus),
builds the index, then runs ``--batches`` small index batches of ``--changes`` updated
rows each without compaction, so the index has that many segments and their dead
versions; the batches alternate between reading the old documents by key (the
default: their ``docs`` partitions and row groups, ``PUSHED_KEYS``) and joining the
touched keys with all of ``docs`` (before), and the median seconds of each are
printed. The index is copied twice; one copy is compacted whole
(``compact="whole"``: what every compaction did before), the other tiered
(``compact="tiered"``): seconds of each (vacuum included, the same in both), the
``postings`` files before and after, and a check that both answer a few queries the
same. One Spark session (``--master``) for all of it.

    .venv/bin/python benchmarks/search_compaction.py [--docs 50000] [--batches 10] [--changes 200]

(``--batches`` at least 2.)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from search import corpus, session, write_mirror


def files(folder: Path, name: str) -> int:
    import deltalake

    from binlogkit.search.manifest import IndexLayout, Manifest

    manifest = Manifest.load(IndexLayout(folder))
    assert manifest is not None
    table = deltalake.DeltaTable(str(folder / name), version=manifest.versions[name])
    return len(table.file_uris())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=50_000)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--changes", type=int, default=200)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--work", type=Path, help="a folder to keep (default: a temporary one)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="search-compaction-"))
    work.mkdir(parents=True, exist_ok=True)
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    from binlogkit.search.engine import SearchIndex
    from binlogkit.spark.search import batch as search_batch
    from binlogkit.spark.search.build import index

    pushed = search_batch.PUSHED_KEYS

    spark = session(args.master)
    out: dict[str, Any] = {"docs": args.docs, "batches": args.batches, "changes": args.changes}
    try:
        lake, folder = work / "lake", work / "index"
        if folder.exists():  # a --work kept from a run before: more batches on its index
            mirror = str(lake / "bench" / "docs" / "mirror")
        else:
            corpus(args.docs, work / "corpus")
            mirror = write_mirror(spark, work)["mirror"]
            started = time.monotonic()
            index(lake, folder, columns=["bench.docs.body"], once=True, spark=spark, compact=False)
            out["build_s"] = round(time.monotonic() - started, 1)
        rng = random.Random(len(list((folder / "docs" / "_delta_log").glob("*.json"))))
        table = DeltaTable.forPath(spark, mirror)
        took: dict[str, list[float]] = {"by_key": [], "joined": []}
        for batch in range(args.batches):
            ids = rng.sample(range(1, args.docs + 1), args.changes)
            word = F.lit(f" zq{batch % 4}")
            table.update(F.col("id").isin(ids), {"body": F.concat("body", word)})
            mode = "joined" if batch % 2 else "by_key"
            search_batch.PUSHED_KEYS = 1 if mode == "joined" else pushed  # 1: fewer than touched
            started = time.monotonic()
            index(lake, folder, once=True, spark=spark, compact=False)
            took[mode].append(time.monotonic() - started)
            seconds = took[mode][-1]
            print(f"batch {batch + 1} of {args.batches}: {seconds:.1f} s ({mode})", flush=True)
        search_batch.PUSHED_KEYS = pushed
        out.update({f"batch_{m}_median_s": round(statistics.median(t), 1) for m, t in took.items()})
        out["postings_files_before"] = files(folder, "postings")
        answers = {}
        for kind in ("whole", "tiered"):
            copy = work / f"index-{kind}"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(folder, copy)
            started = time.monotonic()
            index(lake, copy, once=True, spark=spark, compact=kind)
            out[f"{kind}_s"] = round(time.monotonic() - started, 1)
            out[f"postings_files_{kind}"] = files(copy, "postings")
            engine = SearchIndex(copy)
            answers[kind] = [engine.search(q, limit=20) for q in ("zq1", "zq2 OR zq3", "ba*")]
        out["same_answers"] = answers["whole"] == answers["tiered"]
        out["load"] = os.getloadavg()
    finally:
        spark.stop()
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
