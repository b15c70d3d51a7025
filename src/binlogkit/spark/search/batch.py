"""One index batch: the documents of some mirror rows replaced in ``postings``, ``docs`` and
``terms``, exactly once.

A batch names, per table, the mirror versions it brings in (a
:class:`~binlogkit.search.manifest.MirrorRange`): the rows whose key the change
data feed of ``(start, end]`` touches (inserted, updated before or after, deleted),
or every row when the table is rebuilt. Their documents in the index as of the
manifest's versions (old) are replaced by their documents in the mirror at
``end`` (new): one MERGE per table of the index, each with the Delta transaction
id ``(app_id, batch)``, so a rerun of the batch skips the writes done before.
Old and new are read at fixed versions, so a rerun computes the same writes. The
first batch of an index appends instead (there is nothing to replace).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import reduce
from pathlib import Path
from typing import Any

from delta.tables import DeltaTable
from pyspark.sql import functions as F

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.search.manifest import IndexLayout, Manifest, MirrorRange
from binlogkit.spark.lake.tables import quote, transaction
from binlogkit.spark.search.analyze import (
    DOCS_SCHEMA,
    POSTINGS_SCHEMA,
    TERMS_SCHEMA,
    analysed,
    docs_of,
    documents,
    postings_of,
)

__all__ = ["CRASH_ENV", "BatchResult", "create_tables", "run_batch", "table_version"]

CRASH_ENV = "BINLOGKIT_SEARCH_CRASH"
"""Test hook: ``BATCH:TABLE`` (``2:terms``) stops batch ``BATCH`` after its write of ``TABLE``
(``postings``, ``docs`` or ``terms``), before the manifest records it."""

log = logging.getLogger(__name__)

DELETED = "_binlogkit_deleted"
DELTA_DF = "_binlogkit_delta"

INDEX_PROPERTIES = {"delta.enableDeletionVectors": "false"}
"""The index's tables keep to Delta features every reader has (delta-rs reads them)."""

PARTITIONS = {"postings": "bucket", "docs": "bucket", "terms": None}
SCHEMAS = {"postings": POSTINGS_SCHEMA, "docs": DOCS_SCHEMA, "terms": TERMS_SCHEMA}
DOC_ID = ("table", "key", "column")


@frozen_dataclass
class BatchResult:
    """What a batch changed: documents added (new) and removed (old), and the totals."""

    added: int
    removed: int
    docs: int
    length: int


def create_tables(spark: Any, layout: IndexLayout) -> None:
    """The index's Delta tables, empty, unless they exist."""
    for name, schema in SCHEMAS.items():
        builder = DeltaTable.createIfNotExists(spark).location(str(layout.table(name)))
        builder = builder.addColumns(schema)
        if PARTITIONS[name]:
            builder = builder.partitionedBy(PARTITIONS[name])
        for key, value in INDEX_PROPERTIES.items():
            builder = builder.property(key, value)
        builder.execute()


def table_version(spark: Any, path: str | Path) -> int:
    return int(DeltaTable.forPath(spark, str(path)).history(1).collect()[0]["version"])


ROW_GROUP_BYTES = 1 << 20
"""Parquet row groups of the index's files: small, so that a query reads the row groups of its
terms (files are sorted by term) and keys, not whole files."""


@contextmanager
def _row_groups(spark: Any, size: int) -> Iterator[None]:
    """Parquet row groups of about ``size`` bytes for the session's writes meanwhile."""
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    old = conf.get("parquet.block.size")
    conf.set("parquet.block.size", str(size))
    try:
        yield
    finally:
        if old is None:
            conf.unset("parquet.block.size")
        else:
            conf.set("parquet.block.size", old)


def run_batch(
    spark: Any, layout: IndexLayout, manifest: Manifest, report: Callable[[str], None]
) -> Manifest:
    """Carry out the manifest's pending batch; the manifest after it (not saved)."""
    with _row_groups(spark, ROW_GROUP_BYTES):
        return _run_batch(spark, layout, manifest, report)


def _run_batch(
    spark: Any, layout: IndexLayout, manifest: Manifest, report: Callable[[str], None]
) -> Manifest:
    assert manifest.pending is not None
    batch, ranges = manifest.pending
    old = _old_docs(spark, layout, manifest, ranges)
    new = _new_docs(spark, manifest, ranges, report)
    a = manifest.analyzer
    new_docs = analysed(new, a, manifest.buckets, manifest.doc_buckets).persist()
    old_docs = None if old is None else analysed(old, a, manifest.buckets, manifest.doc_buckets)
    old_docs = None if old_docs is None else old_docs.persist()
    try:
        result = _totals(manifest, new_docs, old_docs)
        paths = {name: str(layout.table(name)) for name in SCHEMAS}
        if old_docs is None:
            _append(new_docs, paths, manifest.app_id, batch)
        else:
            _replace(new_docs, old_docs, paths, manifest.app_id, batch)
    finally:
        new_docs.unpersist()
        if old_docs is not None:
            old_docs.unpersist()
    report(
        f"batch {batch}: {result.added:,} documents in, {result.removed:,} out; "
        f"{result.docs:,} documents in the index"
    )
    versions = {name: table_version(spark, path) for name, path in paths.items()}
    return manifest.finished(versions, result.docs, result.length)


def _crash_point(batch: int, table: str) -> None:
    if os.environ.get(CRASH_ENV) == f"{batch}:{table}":
        raise RuntimeError(f"{CRASH_ENV}={batch}:{table}: stopping after the {table} write")


def _append(new_docs: Any, paths: Mapping[str, str], app_id: str, batch: int) -> None:
    """The first batch: every table written by an append."""

    def write(df: Any, name: str) -> None:
        writer = df.write.format("delta").mode("append")
        writer = writer.option("txnAppId", app_id).option("txnVersion", batch)
        if PARTITIONS[name]:
            writer = writer.partitionBy(PARTITIONS[name])
        writer.save(paths[name])

    postings = postings_of(new_docs)
    write(postings.repartition("bucket").sortWithinPartitions("bucket", "term"), "postings")
    _crash_point(batch, "postings")
    docs = docs_of(new_docs).repartition("bucket").sortWithinPartitions("bucket", *DOC_ID)
    write(docs, "docs")
    _crash_point(batch, "docs")
    terms = postings.groupBy("term").agg(F.count(F.lit(1)).alias("df"))
    write(terms.repartition(1).sortWithinPartitions("term"), "terms")
    _crash_point(batch, "terms")


def _replace(
    new_docs: Any, old_docs: Any, paths: Mapping[str, str], app_id: str, batch: int
) -> None:
    """A later batch: old documents replaced by new ones in each table, one MERGE each."""
    spark = new_docs.sparkSession
    new_postings = postings_of(new_docs)
    old_postings = postings_of(old_docs)
    posting_id = ("bucket", "term", *DOC_ID)
    _merge(paths["postings"], new_postings, old_postings, posting_id, app_id, batch)
    _crash_point(batch, "postings")
    _merge(paths["docs"], docs_of(new_docs), docs_of(old_docs), ("bucket", *DOC_ID), app_id, batch)
    _crash_point(batch, "docs")
    counts = new_postings.select("term", F.lit(1).alias("n")).unionByName(
        old_postings.select("term", F.lit(-1).alias("n"))
    )
    deltas = counts.groupBy("term").agg(F.sum("n").alias(DELTA_DF)).where(F.col(DELTA_DF) != 0)
    merge = (
        DeltaTable.forPath(spark, paths["terms"])
        .alias("t")
        .merge(deltas.alias("s"), "t.term = s.term")
    )
    merge = merge.whenMatchedDelete(f"t.df + s.{DELTA_DF} = 0")
    merge = merge.whenMatchedUpdate(set={"df": f"t.df + s.{DELTA_DF}"})
    merge = merge.whenNotMatchedInsert(values={"term": "s.term", "df": f"s.{DELTA_DF}"})
    with transaction(spark, app_id, batch):
        merge.execute()
    _crash_point(batch, "terms")


def _merge(
    path: str,
    new: Any,
    old: Any,
    key: tuple[str, ...],
    app_id: str,
    batch: int,
) -> None:
    """MERGE into ``path``: rows of ``new`` upserted, rows of ``old`` whose ``key`` is not in
    ``new`` deleted."""
    spark = new.sparkSession
    names = [quote(k) for k in key]
    gone = old.select(*names).join(new.select(*names), on=list(key), how="left_anti")
    source = new.withColumn(DELETED, F.lit(False)).unionByName(
        gone.withColumn(DELETED, F.lit(True)), allowMissingColumns=True
    )
    on = " AND ".join(f"t.{quote(k)} = s.{quote(k)}" for k in key)
    values = {quote(c): f"s.{quote(c)}" for c in new.columns}
    merge = DeltaTable.forPath(spark, path).alias("t").merge(source.alias("s"), on)
    merge = merge.whenMatchedDelete(f"s.{DELETED}").whenMatchedUpdate(set=values)
    merge = merge.whenNotMatchedInsert(condition=f"NOT s.{DELETED}", values=values)
    with transaction(spark, app_id, batch):
        merge.execute()


def _totals(manifest: Manifest, new_docs: Any, old_docs: Any | None) -> BatchResult:
    def count(df: Any | None) -> tuple[int, int]:
        if df is None:
            return 0, 0
        row = df.agg(F.count(F.lit(1)), F.sum("length")).first()
        return int(row[0]), int(row[1] or 0)

    added, added_length = count(new_docs)
    removed, removed_length = count(old_docs)
    docs = manifest.docs + added - removed
    length = manifest.length + added_length - removed_length
    return BatchResult(added, removed, docs, length)


def _new_docs(
    spark: Any, manifest: Manifest, ranges: Mapping[str, MirrorRange], report: Callable[[str], None]
) -> Any:
    """The documents, in the mirrors at the batch's end, of the rows the batch touches."""
    parts = []
    for table, span in ranges.items():
        mirror = _mirror(spark, manifest, table).option("versionAsOf", span.end).load()
        columns = [c for c in manifest.columns[table] if c in mirror.columns]
        gone = [c for c in manifest.columns[table] if c not in columns]
        if gone:
            report(f"{table}: column(s) {', '.join(gone)} no longer in its mirror: not indexed")
        docs = documents(mirror, table, columns, manifest.keys[table])
        if not span.rebuild:
            docs = docs.join(_touched(spark, manifest, table, span), on="key", how="left_semi")
        parts.append(docs)
    return reduce(lambda a, b: a.unionByName(b), parts)


def _old_docs(
    spark: Any, layout: IndexLayout, manifest: Manifest, ranges: Mapping[str, MirrorRange]
) -> Any | None:
    """The index's documents (at the manifest's version) of the rows the batch touches; None
    for an index's first batch."""
    if manifest.batch < 0:
        return None
    docs = spark.read.format("delta").option("versionAsOf", manifest.versions["docs"])
    docs = docs.load(str(layout.table("docs")))
    parts = []
    for table, span in ranges.items():
        mine = docs.where(F.col("table") == table).select("table", "key", "column", "text")
        if not span.rebuild:
            mine = mine.join(_touched(spark, manifest, table, span), on="key", how="left_semi")
        parts.append(mine)
    return reduce(lambda a, b: a.unionByName(b), parts)


def _touched(spark: Any, manifest: Manifest, table: str, span: MirrorRange) -> Any:
    """The keys (JSON text) of the rows the change data feed of ``span`` touches."""
    changes = _mirror(spark, manifest, table).option("readChangeFeed", "true")
    changes = changes.option("startingVersion", span.start + 1)
    changes = changes.option("endingVersion", span.end).load()
    key = F.to_json(F.struct(*(F.col(quote(k)) for k in manifest.keys[table])))
    return changes.select(key.alias("key")).distinct()


def _mirror(spark: Any, manifest: Manifest, table: str) -> Any:
    return spark.read.format("delta").option("path", mirror_path(manifest.lake, table))


def mirror_path(lake: str, table: str) -> str:
    db, _, name = table.partition(".")
    return str(Path(lake, db, name, "mirror"))
