"""Search queries answered on Spark: a DataFrame of queries in, a DataFrame of hits out.

Each query is parsed and resolved into index terms on the executors, with the
index's analysis (:mod:`binlogkit.search.query`). Its leaves (terms, phrases,
prefixes: each numbered) become rows: a term, each term of a phrase with its
offset, each index term a prefix expands to (from ``terms``, as the engine
expands them). The live postings of those terms (their ``bucket`` partitions
only, without the versions in ``deletes``) are read once and joined with the
leaves:

- a term or prefix leaf matches the documents that hold one of its terms; a
  phrase leaf those where all its terms stand at their offsets from one position
  (positions exploded, grouped by start);
- each document that holds some leaf is checked against the query's AND, OR and
  NOT over the leaves it matched, and scored by BM25
  (:func:`binlogkit.search.bm25.term_score`, terms in sorted order) with ``df`` the
  live postings of each term in the whole index and N and the average length from
  the manifest;
- hits are ranked per query (score rounded to 9 decimals, then table, key, column),
  cut at the query's limit, and given snippets
  (:func:`binlogkit.search.engine.snippet`) from their ``docs`` text.

So each query's hits are those of :meth:`binlogkit.search.engine.SearchIndex.search`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)
from pyspark.sql.window import Window

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import BinlogError
from binlogkit.search.analysis import Analyzer
from binlogkit.search.bm25 import Stats, idf, term_score
from binlogkit.search.engine import MAX_EXPANSIONS, SearchIndex, snippet
from binlogkit.search.manifest import BATCH_SHIFT, BUCKET_SHIFT, TABLES, IndexLayout, Manifest
from binlogkit.search.query import (
    AllOf,
    AnyOf,
    Phrase,
    Prefix,
    QueryError,
    Resolved,
    Term,
    Without,
    parse,
    resolve,
)
from binlogkit.spark.lake.tables import quote, session_settings
from binlogkit.spark.search.batch import IN_FILTER, PUSHED_KEYS, SCHEMAS, live

__all__ = ["HITS", "batch_search"]

DOC = ["table", "key", "column"]
NUMBERED = [*DOC, "doc"]
"""A document and the number of its live version (one a document)."""
QID = "_qid"
CHECK = "_check"
_NAMES = ArrayType(StringType())
_LEAF = StructType(
    [
        StructField("leaf", IntegerType(), False),
        StructField("kind", StringType(), False),  # term, phrase, prefix
        StructField("term", StringType(), False),  # a prefix's prefix
        StructField("offset", IntegerType(), False),  # in a phrase
        StructField("size", IntegerType(), False),  # a phrase's terms
        StructField("idx", IntegerType(), False),  # the term's place in its phrase
        StructField("scoring", BooleanType(), False),  # not under a NOT
    ]
)
_PLAN = StructType(
    [
        StructField("error", StringType(), True),
        StructField("leaves", ArrayType(_LEAF, False), False),
        StructField("tables", _NAMES, False),
        StructField("columns", _NAMES, False),
    ]
)
_CANDIDATE_OUT = StructType(
    [
        StructField(QID, LongType(), False),
        *(StructField(n, StringType(), False) for n in DOC),
        StructField("doc", LongType(), False),
        StructField("score", DoubleType(), False),
    ]
)
_SNIPPET_OUT = StructType(
    [
        StructField(QID, LongType(), False),
        StructField("doc", LongType(), False),
        StructField("snippet", StringType(), False),
    ]
)
HITS = "id, table, key, column, score, rank, snippet"
"""The columns of :func:`batch_search`'s answer (``id``: the query's)."""


def batch_search(spark: Any, index: str | Path, queries: Any, *, limit: int = 10) -> Any:
    """The hits of each query of the DataFrame ``queries`` in the index folder ``index``,
    computed on Spark: a DataFrame of :data:`HITS`, in order of query and rank.

    ``queries`` columns: ``query`` (the text, as ``binlogkit search`` takes it); optional
    ``id`` (any type; else the query's row number from 0), ``table`` and ``column`` (a name
    or an array of names: as the ``table:``/``column:`` filters) and ``limit`` (else
    ``limit``). A malformed query is an error that names it. The hits are computed before
    this returns (the result is checkpointed locally)."""
    if "query" not in queries.columns:
        raise BinlogError(f"the queries DataFrame has no column 'query': {queries.columns}")
    layout = IndexLayout(Path(index))  # one generation (the index may be rebuilt meanwhile)
    manifest = SearchIndex(layout.home).manifest  # checks that it has a finished batch
    tables = {name: pinned_table(spark, layout, manifest, name) for name in TABLES}
    with _query_errors(), session_settings(spark, CALL_SETTINGS):
        plans = _plans(queries, manifest.analyzer, limit)
        deletes = tables["deletes"]
        leaves = _expanded(plans, tables["terms"], manifest.buckets)
        postings = live(_postings_of(tables["postings"], leaves), deletes)
        df = F.count(F.lit(1)).over(Window.partitionBy("term"))
        postings = postings.drop("batch", "bucket").withColumn("df", df).persist()
        try:
            scored = _scores(
                _candidates(postings, leaves, plans), manifest.analyzer, manifest.stats
            )
            order = Window.partitionBy(QID).orderBy(F.col("score").desc(), *DOC)
            top = scored.withColumn("rank", F.row_number().over(order))
            limits = plans.select(QID, "limit")
            top = top.join(limits, QID).where(F.col("rank") <= F.col("limit")).drop("limit")
            marks = leaves.where("scoring").groupBy(QID).agg(F.collect_set("term").alias("marks"))
            texts = _snippets(top, marks, tables["docs"], manifest.analyzer)
            ids = plans.select(QID, "id")
            hits = top.join(texts, [QID, "doc"]).join(ids, QID)
            hits = hits.repartition(1).sortWithinPartitions(QID, "rank")  # no sampling job
            return hits.select("id", *DOC, "score", "rank", "snippet").localCheckpoint()
        finally:
            postings.unpersist()


PUSHED_TERMS = PUSHED_KEYS
"""Up to how many terms a call's postings are read with ``term IN (...)``: only the row groups
whose term statistics can hold them (files are sorted by term) of their partitions; more are
joined with all the postings of their partitions (as many values as :data:`PUSHED_KEYS`, for
the same reason)."""
CALL_SETTINGS = {
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    IN_FILTER: str(PUSHED_TERMS),
    "spark.sql.broadcastTimeout": "3600",
}
"""The session's settings during a call: no adaptive execution, which runs each shuffle stage
and broadcast of a plan as a Spark job of its own (60 of a call's 76 jobs), no broadcasts but
those asked for (each is a job), the terms' IN filter on Parquet's statistics, and an hour for
a broadcast (the hits' numbers are computed inside theirs: 300 s ran out on a 1M index)."""


def _postings_of(postings: Any, leaves: Any) -> Any:
    """The rows of ``postings`` of the leaves' terms: read from their ``bucket`` partitions and
    (up to :data:`PUSHED_TERMS` terms) row groups only. The terms are collected (one job, which
    the broadcast of a join would take too)."""
    wanted = leaves.select("bucket", "term").distinct().collect()
    buckets = sorted({row["bucket"] for row in wanted})
    postings = postings.where(F.col("bucket").isin(buckets))
    if len(wanted) <= PUSHED_TERMS:
        return postings.where(F.col("term").isin(sorted({row["term"] for row in wanted})))
    terms = postings.sparkSession.createDataFrame(wanted, "bucket int, term string")
    return postings.join(F.broadcast(terms), ["bucket", "term"], "left_semi")


LISTING = "spark.sql.sources.parallelPartitionDiscovery.threshold"
"""Above how many paths Spark lists files with a job of its own."""


def pinned_table(spark: Any, layout: IndexLayout, manifest: Manifest, name: str) -> Any:
    """Table ``name`` of the index at the manifest's version, read as the Parquet files that
    version holds, listed by delta-rs: no Spark job (a Delta read of a version computes its
    snapshot with several). The index's tables have no deletion vectors."""
    import deltalake

    root = layout.table(name).resolve()  # delta-rs lists the files by their real paths
    files = deltalake.DeltaTable(str(root), version=manifest.versions[name]).file_uris()
    schema = SCHEMAS[name]
    if not files:
        return spark.createDataFrame([], schema)
    with session_settings(spark, {LISTING: str(len(files) + 1)}):
        reader = spark.read.schema(schema).option("basePath", root.as_uri())
        return reader.parquet(*files)


ERROR_MARK = "binlogkit-query-error:"
"""Before the hexadecimal UTF-8 of the JSON ``[message, hint]`` of an error raised inside a
query plan (hexadecimal: Spark's base64 breaks long lines)."""


def _raised(condition: Any, message: Any, hint: str | None = None) -> Any:
    """A column that fails the job with ``message`` (a column) where ``condition`` holds, so
    that errors are found by the job that needs the rows, not by one more job."""
    error = F.to_json(F.array(message, F.lit(hint)))
    return F.when(condition, F.raise_error(F.concat(F.lit(ERROR_MARK), F.hex(error))))


@contextmanager
def _query_errors() -> Iterator[None]:
    """A job failed by :func:`_raised` raises its :class:`BinlogError`."""
    try:
        yield
    except BinlogError:
        raise
    except Exception as err:
        found = re.search(re.escape(ERROR_MARK) + r"([0-9A-F]+)", str(err))
        if found is None:
            raise
        message, hint = json.loads(bytes.fromhex(found.group(1)).decode())
        raise BinlogError(message, hint=hint) from None


def _plans(queries: Any, analyzer: Analyzer, limit: int) -> Any:
    """Each query parsed and resolved: ``_qid`` (the row number), ``id``, ``query``, ``limit``,
    its numbered ``leaves`` and its ``tables`` and ``columns`` filters; checkpointed, so that
    the numbers hold. A malformed query fails the checkpoint's job."""
    numbered = queries.withColumn(QID, F.monotonically_increasing_id())
    ids = F.col("id") if "id" in queries.columns else F.row_number().over(Window.orderBy(QID)) - 1
    rows_limit = (
        F.coalesce(F.col("limit").cast("int"), F.lit(limit))
        if "limit" in queries.columns
        else F.lit(limit)
    )
    text = F.col("query").cast("string")
    plan = F.udf(lambda *given: _plan_row(*given, analyzer), _PLAN)
    filters = _names(numbered, "table"), _names(numbered, "column")
    plans = numbered.select(
        QID,
        ids.alias("id"),
        rows_limit.alias("limit"),
        text.alias("query"),
        plan(text, *filters).alias("plan"),
    ).select(QID, "id", "limit", "query", "plan.*")
    failed = _raised(F.col("error").isNotNull(), F.col("error"))
    return plans.withColumn("error", failed).localCheckpoint()


def _names(queries: Any, name: str) -> Any:
    """A filter column as an array of names (a name, an array or nothing given)."""
    empty = F.array().cast(_NAMES)
    if name not in queries.columns:
        return empty
    column = F.col(quote(name))
    if isinstance(queries.schema[name].dataType, ArrayType):
        return F.coalesce(column.cast(_NAMES), empty)
    return F.when(column.isNull(), empty).otherwise(F.array(column.cast("string")))


def _plan_row(
    query: str, tables: list[str], columns: list[str], analyzer: Analyzer
) -> dict[str, Any]:
    """A query's :data:`_PLAN` row."""
    out: dict[str, Any] = {"error": None, "leaves": [], "tables": tables, "columns": columns}
    try:
        parsed = parse(query)
    except QueryError as err:
        return {**out, "error": str(err)}
    if parsed.expr is None:
        return {**out, "error": f"query {query!r} has filters but no term to search for"}
    leaves = []
    for number, (node, scoring) in enumerate(_plan(query, analyzer).leaves):
        if isinstance(node, Phrase):
            for idx, (term, offset) in enumerate(node.terms):
                leaves.append((number, "phrase", term, offset, len(node.terms), idx, scoring))
        elif isinstance(node, Prefix):
            leaves.append((number, "prefix", node.prefix, 0, 1, 0, scoring))
        else:
            assert isinstance(node, Term)
            leaves.append((number, "term", node.term, 0, 1, 0, scoring))
    names = [f.name for f in _LEAF.fields]
    return {
        **out,
        "leaves": [dict(zip(names, leaf, strict=True)) for leaf in leaves],
        "tables": sorted({*parsed.tables, *tables}),
        "columns": sorted({*parsed.columns, *columns}),
    }


@frozen_dataclass
class _Plan:
    """A resolved query: its leaves (each with whether it scores: not under a NOT), numbered
    in order, and its boolean ``tree`` over their numbers."""

    leaves: tuple[tuple[Resolved, bool], ...]
    tree: Any


@lru_cache(maxsize=4096)
def _plan(query: str, analyzer: Analyzer) -> _Plan:
    expr = resolve(parse(query).expr, analyzer)
    leaves: list[tuple[Resolved, bool]] = []

    def tree(node: Resolved, scoring: bool) -> Any:
        if isinstance(node, AllOf | AnyOf):
            kind = "all" if isinstance(node, AllOf) else "any"
            return (kind, tuple(tree(item, scoring) for item in node.items))
        if isinstance(node, Without):
            return ("not", tree(node.item, False))
        leaves.append((node, scoring))
        return ("leaf", len(leaves) - 1)

    numbered = None if expr is None else tree(expr, True)
    return _Plan(tuple(leaves), numbered)


def _holds(tree: Any, matched: set[int]) -> bool:
    """Whether a document that matched the leaves ``matched`` matches the query."""
    kind, arg = tree
    if kind == "leaf":
        return arg in matched
    if kind == "not":
        return not _holds(arg, matched)
    if kind == "any":
        return any(_holds(item, matched) for item in arg)
    return all(_holds(item, matched) for item in arg)


def _expanded(plans: Any, terms: Any, buckets: int) -> Any:
    """The leaves' rows, each prefix replaced by the index terms it matches (those whose
    ``terms`` changes sum above 0), with each term's ``bucket``; checkpointed. A prefix that
    matches more than :data:`MAX_EXPANSIONS` terms is an error, as in the engine: its rows'
    ``CHECK`` column fails the checkpoint's job (kept in the output, so that it is computed)."""
    rows = plans.select(QID, "tables", "columns", F.explode("leaves").alias("l"))
    rows = rows.select(QID, "tables", "columns", "l.*")
    held = terms.groupBy("term").agg(F.sum("df").alias("n")).where("n > 0")
    prefixes = rows.where(F.col("kind") == "prefix")
    first = F.substring("term", 1, 1)  # an equi-join (no broadcast of a nested loop join)
    held = held.select(F.col("term").alias("held"), first.alias("_first"))
    matches = prefixes.withColumn("_first", first).join(held, "_first").drop("_first")
    matches = matches.where(F.col("held").startswith(F.col("term")))
    count = F.count(F.lit(1)).over(Window.partitionBy(QID, "leaf"))
    message = F.concat(
        F.lit("prefix "),
        F.col("term"),
        F.lit("* matches "),
        F.format_number(F.col("_count"), 0),
        F.lit(f" terms, more than {MAX_EXPANSIONS:,}"),
    )
    matches = matches.withColumn("_count", count)
    check = _raised(F.col("_count") > MAX_EXPANSIONS, message, "make the prefix longer")
    expanded = matches.withColumn(CHECK, check).drop("term", "_count")
    plain = rows.where(F.col("kind") != "prefix").withColumn(CHECK, F.lit(None))
    out = plain.unionByName(expanded.withColumnRenamed("held", "term"))
    bucket = F.pmod(F.crc32(F.col("term").cast("binary")), F.lit(buckets)).cast("int")
    return out.withColumn("bucket", bucket).localCheckpoint()


def _candidates(postings: Any, leaves: Any, plans: Any) -> Any:
    """Per query, each document (within its filters) that holds some leaf: the leaves it
    matched, its scoring terms with their ``tf`` and ``df``, its length, the query's text."""
    names = F.col("tables")
    columns = F.col("columns")
    within = ((F.size(names) == 0) | F.array_contains(names, F.col("table"))) & (
        (F.size(columns) == 0) | F.array_contains(columns, F.col("column"))
    )
    joined = leaves.join(postings, "term").where(within)
    plain = joined.where(F.col("kind") != "phrase").select(QID, *NUMBERED, "leaf")
    at = joined.where(F.col("kind") == "phrase").select(
        QID, *NUMBERED, "leaf", "idx", "size", "offset", F.explode("positions").alias("at")
    )
    starts = at.withColumn("start", F.col("at") - F.col("offset"))
    phrases = (
        starts.groupBy(QID, *NUMBERED, "leaf", "start")
        .agg(F.countDistinct("idx").alias("found"), F.first("size").alias("size"))
        .where(F.col("found") == F.col("size"))
        .select(QID, *NUMBERED, "leaf")
    )
    matched = (
        plain.unionByName(phrases).groupBy(QID, *NUMBERED).agg(F.collect_set("leaf").alias("hit"))
    )
    scoring = joined.where("scoring").select(QID, *NUMBERED, "term", "tf", "df", "length")
    scoring = scoring.dropDuplicates([QID, *NUMBERED, "term"])
    terms = scoring.groupBy(QID, *NUMBERED).agg(
        F.collect_list(F.struct("term", "tf", "df")).alias("terms"),
        F.first("length").alias("length"),
    )
    found = matched.join(terms, [QID, *NUMBERED], "left")
    return found.join(plans.select(QID, "query"), QID)


def _scores(candidates: Any, analyzer: Analyzer, stats: Stats) -> Any:
    """The candidates that match their query, with their BM25 scores rounded to 9 decimals."""
    avg = stats.avg_length

    def score(row: dict[str, Any]) -> dict[str, Any] | None:
        if not _holds(_plan(row["query"], analyzer).tree, set(row["hit"])):
            return None
        total = 0.0
        for term in sorted(row["terms"] or (), key=lambda t: t["term"]):
            weight = idf(stats.docs, term["df"])
            total += term_score(term["tf"], row["length"], avg, weight)
        return {**{n: row[n] for n in (QID, *NUMBERED)}, "score": round(total, 9)}

    return _map_rows(candidates, score, _CANDIDATE_OUT)


def _map_rows(
    df: Any, function: Callable[[dict[str, Any]], dict[str, Any] | None], schema: StructType
) -> Any:
    """``function`` of each row of ``df`` (a dict) on the executors: the rows it gives (None:
    none), of ``schema``."""
    arrow = to_arrow_schema(schema)

    def apply(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            rows = [out for row in batch.to_pylist() if (out := function(row)) is not None]
            yield pa.RecordBatch.from_pylist(rows, schema=arrow)

    return df.mapInArrow(apply, schema)


def _snippets(top: Any, marks: Any, docs: Any, analyzer: Analyzer) -> Any:
    """Each top hit's snippet, from its ``docs`` text (the row of its live version's number,
    in the partition the number names) with its query's scoring terms marked."""
    bucket = F.shiftright("doc", BUCKET_SHIFT).bitwiseAND((1 << BATCH_SHIFT - BUCKET_SHIFT) - 1)
    wanted = top.select("doc").distinct().withColumn("bucket", bucket.cast("int"))
    texts = docs.join(F.broadcast(wanted), ["bucket", "doc"], "left_semi")
    rows = top.select(QID, "doc").join(texts.select("doc", "text"), "doc").join(marks, QID)

    def cut(row: dict[str, Any]) -> dict[str, Any]:
        text = snippet(analyzer, row.pop("text"), set(row.pop("marks")))
        return {**row, "snippet": text}

    return _map_rows(rows, cut, _SNIPPET_OUT)
