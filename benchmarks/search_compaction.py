"""Search index maintenance: compaction whole (the index rewritten) against two tiers (every
segment merged into one) and multi-tier (tier merges), and small batches reading the old
documents by key against joining all of them.

Writes ``--docs`` generated rows as a lake's mirror (``benchmarks/search.py``'s corpus),
builds the index, then runs ``--batches`` small index batches of ``--changes`` updated
rows each without compaction, so the index has that many segments and their dead
versions; the batches alternate between reading the old documents by key (the
default: their ``docs`` partitions and row groups, ``PUSHED_KEYS``) and joining the
touched keys with all of ``docs`` (before), and the median seconds of each are
printed. The index is copied three times; one copy is compacted whole
(``compact="whole"``), one with its segments merged into one (``compact="tiered"``:
the two tiers of before), one by the multi-tier policy (``compact=None``, rounds
until no merge is due; ``--factor`` segments per tier merge): seconds of each
(vacuum included), the ``postings`` files before and after, and a check that all
answer a few queries the same. One Spark session (``--master``) for all of it.

Then, without Spark, what each policy rewrites over a long life (``--life`` batches
of ``--changes`` documents after an index of ``--docs``; the policy's own code on
manifests): document versions rewritten in all, and the most segments a query
opened, for a whole compaction or a merge of all segments at every
``--factor``-th batch, and the multi-tier policy after every batch.

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
import time
from pathlib import Path
from typing import Any

from search import corpus, session, work_folder, work_options, write_mirror


def files(folder: Path, name: str) -> int:
    import deltalake

    from binlogkit.search.manifest import IndexLayout, Manifest

    manifest = Manifest.load(IndexLayout(folder))
    assert manifest is not None
    table = deltalake.DeltaTable(str(folder / name), version=manifest.versions[name])
    return len(table.file_uris())


def simulated(docs: int, changes: int, life: int, factor: int) -> dict[str, Any]:
    """Document versions rewritten by each policy over ``life`` batches, and the most segments
    after the base at any time."""
    from dataclasses import replace

    from binlogkit.search import tiers
    from binlogkit.search.analysis import Analyzer
    from binlogkit.search.manifest import Manifest
    from binlogkit.spark.search.build import compaction_due

    out: dict[str, Any] = {}
    for policy in ("whole", "two_tier", "multi_tier"):
        manifest = Manifest(Analyzer(), "", {}, {}, "", batch=0, docs=docs)
        rewritten = most = 0
        for batch in range(1, life + 1):
            grown = tiers.appended(manifest.tiers, batch, changes, {})
            manifest = replace(manifest, batch=batch, tiers=grown)
            most = max(most, len(manifest.tiers))
            if policy == "multi_tier":
                due = compaction_due(manifest, None)
                span = None if due is None else due.merge
                if span is not None:
                    inside = [s for s in manifest.tiers if span[0] <= s.first <= span[1]]
                    rewritten += sum(s.docs for s in inside)
                    manifest = replace(manifest, tiers=tiers.merged(manifest.tiers, *span))
            elif batch % factor == 0:
                every = tiers.merged(manifest.tiers, manifest.tiers[0].first, batch)
                rewritten += every[0].docs + (docs if policy == "whole" else 0)
                manifest = replace(manifest, tiers=() if policy == "whole" else every)
        out[policy] = {"rewritten": rewritten, "most_segments": most}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=50_000)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--changes", type=int, default=200)
    parser.add_argument("--factor", type=int, default=4)
    parser.add_argument("--life", type=int, default=1000)
    work_options(parser)
    args = parser.parse_args()
    work = work_folder(args, "search-compaction-")
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    from binlogkit.search import tiers
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
        tiers.MERGE_FACTOR = args.factor
        for kind in ("whole", "tiered", "tiers"):
            copy = work / f"index-{kind}"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(folder, copy)
            started, rounds, merged = time.monotonic(), 0, 1
            while merged and (kind == "tiers" or rounds == 0):  # tiers: until none is due
                how = None if kind == "tiers" else kind
                merged = index(lake, copy, once=True, spark=spark, compact=how).compactions
                rounds += 1
            out[f"{kind}_s"] = round(time.monotonic() - started, 1)
            out[f"{kind}_rounds"] = rounds
            out[f"postings_files_{kind}"] = files(copy, "postings")
            engine = SearchIndex(copy)
            answers[kind] = [engine.search(q, limit=20) for q in ("zq1", "zq2 OR zq3", "ba*")]
        out["same_answers"] = answers["whole"] == answers["tiered"] == answers["tiers"]
        out["load"] = os.getloadavg()
    finally:
        spark.stop()
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(out))
    print(json.dumps(simulated(args.docs, args.changes, args.life, args.factor)))


if __name__ == "__main__":
    main()
