"""Search benchmarks (issue 18): index build, incremental lag, query latency, next to MariaDB.

Generates ``--docs`` rows of a table ``bench.docs`` (``id INT`` key, ``body TEXT``:
10 to 60 words drawn by a Zipf law, exponent 1.1, from a made-up vocabulary of
50,000 words; one row is one document), writes them as a lake's mirror (a Delta
table with the lake's settings, as ``spark sync`` leaves it), and measures:

- ``build``: ``binlogkit.spark.index`` of ``body`` into a fresh index, on
  ``local[1]`` pinned to one CPU and ``local[2]`` on two, each in a process of
  its own: documents/s, and the CPU seconds of the Spark process tree;
- ``lag``: ``--changes`` rows updated in the mirror (one MERGE), then one index
  round: seconds from the mirror's commit to the index's manifest (the time a
  change takes from the lake to answers), on ``local[2]``; then the seconds of a
  compaction of the index (``compact=True``) that follows;
- ``query``: ``--queries`` queries of each kind, top 10 with snippets, on one
  opened :class:`~binlogkit.search.engine.SearchIndex`: one term (held by 0.1 %
  to 10 % of the documents), three terms (AND; 5 % to 30 % each), a two-word
  phrase taken from a document (its words can be the corpus's most common:
  the Zipf law makes the first few words nearly universal); p50 and p99 in ms,
  and the first query of a new process (imports and opening the index included); the
  CPU milliseconds of each query too (the machine is shared: wall times vary with its load);
- ``mariadb``: the same rows in a sandbox MariaDB (InnoDB, ``LOAD DATA``), a
  FULLTEXT index on ``body`` (build seconds), the same queries as ``MATCH (body)
  AGAINST`` (natural language mode for one term; boolean mode ``+a +b +c`` and
  ``"a b"`` for the others) ``ORDER BY`` score ``LIMIT 10``, through binlogkit's
  client on the server's socket; p50 and p99 in ms.

    .venv/bin/python benchmarks/search.py [--docs 1000000] [--part all|build|lag|query|mariadb]

The machine is shared: wall times vary; CPU seconds less so.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
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
JAR_FOLDER = ROOT / ".cache" / "jars"
VOCABULARY = 50_000
TABLE = "bench.docs"
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]


def vocabulary() -> list[str]:
    """50,000 distinct made-up words of two to four syllables (no English stop word)."""
    rng = random.Random(1)
    words: set[str] = set()
    while len(words) < VOCABULARY:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    ordered = sorted(words)
    rng.shuffle(ordered)
    return ordered


def corpus(docs: int, out: Path) -> Path:
    """The rows as a Parquet file (id, body) and a TSV beside it for LOAD DATA."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    words = vocabulary()
    weights = [1 / (rank + 1) ** 1.1 for rank in range(len(words))]
    rng = random.Random(2)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "docs.parquet"
    schema = pa.schema([("id", pa.int32()), ("body", pa.string())])
    cumulative = _cumulative(weights)
    with (
        pq.ParquetWriter(path, schema) as writer,
        open(out / "docs.tsv", "w", encoding="utf-8") as tsv,
    ):
        for start in range(0, docs, 100_000):
            ids = list(range(start + 1, min(docs, start + 100_000) + 1))
            lengths = [rng.randint(10, 60) for _ in ids]
            drawn = rng.choices(words, cum_weights=cumulative, k=sum(lengths))
            bodies, at = [], 0
            for n in lengths:
                bodies.append(" ".join(drawn[at : at + n]))
                at += n
            writer.write_table(pa.table({"id": pa.array(ids, pa.int32()), "body": bodies}))
            tsv.writelines(f"{i}\t{b}\n" for i, b in zip(ids, bodies, strict=True))
    return path


def _cumulative(weights: list[float]) -> list[float]:
    total, out = 0.0, []
    for weight in weights:
        total += weight
        out.append(total)
    return out


def queries(parquet: Path, index: Path, count: int) -> dict[str, list[str]]:
    """``count`` queries of each kind: one term held by 0.1 % to 10 % of the documents, three
    terms held by 5 % to 30 % each (so that some documents hold all three), and two adjacent
    words of a random document as a phrase."""
    import pyarrow.parquet as pq
    from deltalake import DeltaTable

    rng = random.Random(3)
    manifest = json.loads((index / "_search" / "index.json").read_text())
    table = DeltaTable(str(index / "terms"), version=manifest["versions"]["terms"])
    terms = table.to_pyarrow_table().group_by("term").aggregate([("df", "sum")]).to_pylist()
    docs = manifest["docs"]
    single = sorted(t["term"] for t in terms if 0.001 <= t["df_sum"] / docs <= 0.1)
    common = sorted(t["term"] for t in terms if 0.05 <= t["df_sum"] / docs <= 0.3)
    bodies = pq.read_table(parquet, columns=["body"]).column("body")
    phrases = []
    for _ in range(count):
        body = bodies[rng.randrange(len(bodies))].as_py().split()
        at = rng.randrange(len(body) - 1)
        phrases.append(f'"{body[at]} {body[at + 1]}"')
    return {
        "1 term": [rng.choice(single) for _ in range(count)],
        "3 terms": [" ".join(rng.sample(common, 3)) for _ in range(count)],
        "phrase": phrases,
    }


# -- Spark, in a child process ---------------------------------------------------------------


def work_options(parser: argparse.ArgumentParser) -> None:
    """``--master`` and ``--work`` of the search benchmarks that run Spark in their process."""
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--work", type=Path, help="a folder to keep (default: a temporary one)")


def work_folder(args: argparse.Namespace, prefix: str) -> Path:
    """The ``--work`` folder, or a new temporary one, made."""
    work: Path = args.work or Path(tempfile.mkdtemp(prefix=prefix))
    work.mkdir(parents=True, exist_ok=True)
    return work


def session(master: str) -> Any:
    from pyspark.sql import SparkSession

    from binlogkit.spark import register
    from binlogkit.spark.delta import with_delta
    from binlogkit.spark.jars import fetch_jars

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (
        SparkSession.builder.master(master)
        .appName("binlogkit search benchmark")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", master[6:-1])
        .config("spark.driver.memory", "3g")
        .config("spark.driver.extraJavaOptions", "-XX:+UseSerialGC")
        .config("spark.databricks.delta.snapshotPartitions", "1")
    )
    spark = with_delta(builder, fetch_jars(JAR_FOLDER)).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def child(job: dict[str, Any]) -> None:
    """One step in one Spark session; prints one JSON line of results."""
    os.sched_setaffinity(0, job["cpus"])
    spark = session(job["master"])
    work = Path(job["work"])
    try:
        if job["step"] == "mirror":
            print(json.dumps(write_mirror(spark, work)), flush=True)
        elif job["step"] == "build":
            print(json.dumps(build(spark, work, job["index"])), flush=True)
        else:
            print(json.dumps(lag(spark, work, job["index"], job["changes"], job["docs"])))
    finally:
        spark.stop()


def write_mirror(spark: Any, work: Path) -> dict[str, Any]:
    from pyspark.sql.types import IntegerType, StringType, StructField, StructType

    from binlogkit.spark.lake.tables import create_table

    lake = work / "lake"
    mirror = str(lake / "bench" / "docs" / "mirror")
    schema = StructType(
        [StructField("id", IntegerType(), False), StructField("body", StringType(), True)]
    )
    create_table(spark, mirror, schema)
    spark.read.parquet(str(work / "corpus" / "docs.parquet")).write.format("delta").mode(
        "append"
    ).save(mirror)
    meta = lake / "_binlogkit"
    meta.mkdir(parents=True, exist_ok=True)
    (meta / "snapshot.json").write_text(json.dumps({"tables": {TABLE: {"key": ["id"]}}}))
    return {"mirror": mirror}


def build(spark: Any, work: Path, folder: str) -> dict[str, Any]:
    from binlogkit.spark.search.build import index

    shutil.rmtree(folder, ignore_errors=True)
    before = process_tree(os.getpid())
    began = time.monotonic()
    report = index(work / "lake", folder, columns=[f"{TABLE}.body"], once=True, spark=spark)
    seconds = time.monotonic() - began
    return {
        "seconds": seconds,
        "docs": report.docs,
        "cpu": cpu_between(before, process_tree(os.getpid())),
    }


def lag(spark: Any, work: Path, folder: str, changes: int, docs: int) -> dict[str, Any]:
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    from binlogkit.spark.search.build import index

    mirror = str(work / "lake" / "bench" / "docs" / "mirror")
    rows = spark.range(1, changes + 1).select(
        (F.col("id") * 37 % docs + 1).cast("int").alias("id"),
        F.concat(F.lit("changed text number "), F.col("id").cast("string")).alias("body"),
    )
    target = DeltaTable.forPath(spark, mirror).alias("t")
    target.merge(rows.alias("s"), "t.id = s.id").whenMatchedUpdateAll().execute()
    committed = time.time()
    index(work / "lake", folder, once=True, spark=spark, compact=False)
    manifest = Path(folder, "_search", "index.json").stat().st_mtime
    began = time.monotonic()
    index(work / "lake", folder, once=True, spark=spark, compact=True)
    compaction = time.monotonic() - began
    return {"lag": manifest - committed, "changes": changes, "compaction": compaction}


def run_child(job: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(job)],
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    return dict(json.loads(lines[-1]))


# -- queries ---------------------------------------------------------------------------------


def percentiles(ms: list[float]) -> str:
    ordered = sorted(ms)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered):7.1f} ms  p99 {p99:7.1f} ms"


def query_part(folder: str, asked: dict[str, list[str]]) -> None:
    from binlogkit.search.engine import SearchIndex

    began = time.perf_counter()
    first = subprocess.run(
        [sys.executable, "-m", "binlogkit", "search", folder, asked["1 term"][0]],
        capture_output=True,
        check=True,
    )
    print(
        f"binlogkit search, a new process (imports, index opened, one query): "
        f"{(time.perf_counter() - began) * 1000:.0f} ms, {len(first.stdout.splitlines())} hits"
    )
    engine = SearchIndex(folder)
    engine.search(asked["1 term"][0])  # untimed: the first read of each table's log
    for kind, texts in asked.items():
        ms, cpu, hits = [], [], 0
        for text in texts:
            began, began_cpu = time.perf_counter(), time.process_time()
            hits += len(engine.search(text, limit=10))
            ms.append((time.perf_counter() - began) * 1000)
            cpu.append((time.process_time() - began_cpu) * 1000)
        print(
            f"binlogkit {kind:8} {percentiles(ms)}  ({hits / len(texts):.1f} hits each; "
            f"CPU {percentiles(cpu)}; load {os.getloadavg()[0]:.1f})",
            flush=True,
        )


def mariadb_part(work: Path, asked: dict[str, list[str]]) -> None:
    from binlogkit.io.mysql import MySQLConnection
    from binlogkit.protocol.spec import ConnectionSpec
    from binlogkit.sandbox import MariaDBSandbox

    options = {"innodb_buffer_pool_size": "1G", "innodb_ft_min_token_size": "2"}
    shutil.rmtree(work / "server", ignore_errors=True)  # a server of an earlier run
    with MariaDBSandbox(work / "server", options=options) as server:
        load = (
            "CREATE DATABASE bench; CREATE TABLE bench.docs (id INT PRIMARY KEY, body TEXT) "
            "CHARACTER SET utf8mb4;"
            f"LOAD DATA LOCAL INFILE '{work / 'corpus' / 'docs.tsv'}' INTO TABLE bench.docs;"
        )
        command = server.client_command("--local-infile=1", "--batch")
        subprocess.run(command, input=load.encode(), check=True)
        began = time.monotonic()
        server.execute("ALTER TABLE bench.docs ADD FULLTEXT INDEX ft (body)")
        print(f"MariaDB FULLTEXT index build: {time.monotonic() - began:.1f} s")
        spec = ConnectionSpec.from_url(f"mariadb://root@localhost/?socket={server.socket}")
        with MySQLConnection.connect(spec) as conn:
            for kind, texts in asked.items():
                ms, hits = [], 0
                for text in texts:
                    if kind == "1 term":
                        against = f"'{text}' IN NATURAL LANGUAGE MODE"
                    elif kind == "3 terms":
                        against = (
                            "'" + " ".join(f"+{w}" for w in text.split()) + "' IN BOOLEAN MODE"
                        )
                    else:
                        against = f"'{text}' IN BOOLEAN MODE"
                    sql = (
                        f"SELECT id, MATCH (body) AGAINST ({against}) AS score FROM bench.docs "
                        f"WHERE MATCH (body) AGAINST ({against}) ORDER BY score DESC LIMIT 10"
                    )
                    began = time.perf_counter()
                    hits += len(conn.query(sql).rows)
                    ms.append((time.perf_counter() - began) * 1000)
                print(f"MariaDB   {kind:8} {percentiles(ms)}  ({hits / len(texts):.1f} hits each)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--part", choices=["all", "build", "lag", "query", "mariadb"], default="all"
    )
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--changes", type=int, default=1_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--cores",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[1, 2],
        help="the builds to run: local[N] for each N (default 1,2)",
    )
    parser.add_argument("--work", help="keep the corpus, lake and index here (reused if there)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    work = Path(args.work or tempfile.mkdtemp(prefix="search-bench-"))
    cpus = sorted(os.sched_getaffinity(0))
    parquet = work / "corpus" / "docs.parquet"
    if not parquet.exists():
        began = time.monotonic()
        corpus(args.docs, work / "corpus")
        print(f"corpus: {args.docs:,} documents in {time.monotonic() - began:.0f} s", flush=True)
    common = {"work": str(work), "changes": args.changes, "docs": args.docs}
    index2 = str(work / "index-2")
    if not (work / "lake").exists():
        run_child({**common, "step": "mirror", "master": "local[2]", "cpus": cpus[-2:]})
    if args.part in ("all", "build"):
        for n in args.cores:
            job = {**common, "step": "build", "master": f"local[{n}]", "cpus": cpus[-n:]}
            got = run_child({**job, "index": str(work / f"index-{n}")})
            print(
                f"build local[{n}]: {got['seconds']:.0f} s, {got['docs'] / got['seconds']:,.0f} "
                f"documents/s, {got['docs'] / got['cpu']:,.0f} documents/CPU s "
                f"(load {os.getloadavg()[0]:.1f})",
                flush=True,
            )
    asked = queries(parquet, Path(index2), args.queries)
    if args.part in ("all", "query"):
        query_part(index2, asked)
    if args.part in ("all", "lag"):
        job = {**common, "step": "lag", "master": "local[2]", "cpus": cpus[-2:], "index": index2}
        got = run_child(job)
        print(
            f"incremental: {got['changes']:,} rows changed, in the index {got['lag']:.1f} s later;"
            f" a compaction after it: {got['compaction']:.1f} s"
        )
    if args.part in ("all", "mariadb"):
        mariadb_part(work, asked)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
