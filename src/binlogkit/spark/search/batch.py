"""One index batch, exactly once: appended to ``postings``, ``docs``, ``terms`` and ``deletes``,
or (a compaction) those tables rewritten without their dead entries.

An update batch names, per table, the mirror versions it brings in (a
:class:`~binlogkit.search.manifest.MirrorRange`): the rows whose key the change
data feed of ``(start, end]`` touches (inserted, updated before or after,
deleted), or every row when the table is rebuilt. Their live documents in the
index as of the manifest's versions (old) are compared with their documents at
``end`` (new: each row's last image in the feed, or the mirror at ``end`` for a
rebuild); a document whose text did not change stays as it is. The others are
appended, never merged, so a batch costs what it changes:

- ``postings`` and ``docs``: the new documents' rows, tagged with the batch
  number (a document version is ``table, key, column, batch``);
- ``deletes``: the old versions replaced or removed, which readers subtract;
- ``terms``: each term's change of document frequency (+1 per new document that
  holds it, -1 per old one).

A compaction rewrites ``postings`` and ``docs`` without the versions in
``deletes`` (one file per partition, sorted as a build writes them, the
documents numbered anew), ``terms``
summed per term, and ``deletes`` empty; a tiered one (a merge) rewrites the
rows of a range of batches after the base (some segments) into one segment,
without their dead versions, which leave ``deletes``
(:mod:`binlogkit.search.tiers`). Every write carries the Delta
transaction id ``(app_id, batch)``, so a rerun of the batch skips the writes
done before; old and new are read at fixed versions, so a rerun computes the
same writes.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import reduce
from pathlib import Path
from typing import Any

from delta.tables import DeltaTable
from pyspark.sql import functions as F
from pyspark.sql.window import Window

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.search import tiers as segments
from binlogkit.search.manifest import TABLES, IndexLayout, Manifest, MirrorRange, doc_bucket
from binlogkit.spark.lake.tables import quote, session_settings
from binlogkit.spark.lake.upkeep import vacuum as vacuum_table
from binlogkit.spark.search.analyze import (
    DELETES_SCHEMA,
    DOCS_SCHEMA,
    POSTINGS_SCHEMA,
    TERMS_SCHEMA,
    analysed,
    docs_of,
    documents,
    numbered,
    postings_of,
)

__all__ = [
    "CRASH_ENV",
    "BatchResult",
    "create_tables",
    "live",
    "read_table",
    "run_batch",
    "table_state",
    "table_version",
    "vacuum",
]

CRASH_ENV = "BINLOGKIT_SEARCH_CRASH"
"""Test hook: ``BATCH:TABLE`` (``2:terms``) stops batch ``BATCH`` after its write of ``TABLE``
(``postings``, ``docs``, ``terms`` or ``deletes``), before the manifest records it."""

log = logging.getLogger(__name__)

INDEX_PROPERTIES = {"delta.enableDeletionVectors": "false"}
"""The index's tables keep to Delta features every reader has (delta-rs reads them)."""

PARTITIONS = {"postings": "bucket", "docs": "bucket", "terms": None, "deletes": None}
SCHEMAS = {
    "postings": POSTINGS_SCHEMA,
    "docs": DOCS_SCHEMA,
    "terms": TERMS_SCHEMA,
    "deletes": DELETES_SCHEMA,
}
DOC_ID = ("table", "key", "column")
LAST = "_binlogkit_last"
OLD_DOC, NEW_DOC = "_binlogkit_old_doc", "_binlogkit_new_doc"
VERSION = [*DOC_ID, "batch"]
SORTS = {"postings": ("bucket", "term", "doc"), "docs": ("bucket", *DOC_ID), "terms": ("term",)}
"""How each table's files are sorted (``deletes``: not at all): a query reads the row groups of
its terms and keys only, and of a term's postings (in order of document number) those whose
numbers it needs."""


@frozen_dataclass
class BatchResult:
    """What a batch changed: documents added (new) and removed (old; ``removed_by[b]`` of them
    written by batch ``b``), and the totals."""

    added: int
    removed: int
    docs: int
    length: int
    removed_by: dict[int, int]


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


def table_state(path: str | Path) -> tuple[int, str]:
    """A Delta table's last version and its id, read from its log by delta-rs: no Spark job
    (``history``/``detail`` took seconds each on a loaded machine)."""
    import deltalake

    table = deltalake.DeltaTable(str(path))
    return table.version(), table.metadata().id


def table_version(path: str | Path) -> int:
    return table_state(path)[0]


PUSHED_KEYS = 512
"""A batch that touches at most this many keys of a table reads the old documents of those keys
only: from their ``docs`` partitions, and in them (files sorted by key) the files and row
groups whose key statistics can hold them (:data:`IN_FILTER`); more are joined with all of
``docs``. Spark gives Parquet an IN filter as a chain of ORs, which its row-group filters walk
recursively: 5,000 values (terms, in ``batch_search``) overflowed an executor's stack."""
IN_FILTER = "spark.sql.parquet.pushdown.inFilterThreshold"
"""Up to how many values an IN filter goes to Parquet's row group statistics as such (Spark's
default of 10 pushes a range from the least to the greatest instead)."""

ROW_GROUP_BYTES = 1 << 20
"""Parquet row groups of the index's files: small, so that a query reads the row groups of its
terms (files are sorted by term) and keys, not whole files."""
DOCS_ROW_GROUP_BYTES = 128 << 10
"""Parquet row groups of ``docs``, smaller still: a query reads the text of each of its top
hits (and the keys of those tied at the cut) from the row group that holds it, a few hundred
texts instead of a few thousand."""


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


def read_table(spark: Any, layout: IndexLayout, manifest: Manifest, name: str) -> Any:
    """Table ``name`` of the index at the version the manifest names."""
    reader = spark.read.format("delta").option("versionAsOf", manifest.versions[name])
    return reader.load(str(layout.table(name)))


def live(rows: Any, deletes: Any) -> Any:
    """The rows of ``postings`` or ``docs`` whose document version is not in ``deletes``."""
    return rows.join(F.broadcast(deletes.select("doc")), on="doc", how="left_anti")


def run_batch(
    spark: Any, layout: IndexLayout, manifest: Manifest, report: Callable[[str], None]
) -> Manifest:
    """Carry out the manifest's pending batch; the manifest after it (not saved)."""
    assert manifest.pending is not None
    writer = _Writer(spark, layout, manifest, report)
    with (
        _row_groups(spark, ROW_GROUP_BYTES),
        session_settings(spark, {IN_FILTER: str(PUSHED_KEYS)}),
    ):
        if manifest.pending.compact:
            return _compact(writer)
        return _update(writer)


class _Writer:
    """The writes of one batch: each with the batch's transaction id, each reported."""

    def __init__(
        self, spark: Any, layout: IndexLayout, manifest: Manifest, report: Callable[[str], None]
    ) -> None:
        assert manifest.pending is not None
        self.spark, self.layout, self.manifest, self.report = spark, layout, manifest, report
        self.batch = manifest.pending.batch

    def read(self, name: str) -> Any:
        """Table ``name`` of the index at the manifest's version."""
        return read_table(self.spark, self.layout, self.manifest, name)

    def write(self, df: Any, name: str, mode: str, where: str | None = None) -> None:
        """``df`` written to table ``name``; an overwrite replaces the rows ``where`` holds
        (a SQL condition) or all."""
        partition = PARTITIONS[name]
        if name in SORTS:
            df = df.repartition(partition) if partition else df.repartition(1)
            df = df.sortWithinPartitions(*SORTS[name])
        out = df.write.format("delta").mode(mode)
        out = out.option("txnAppId", self.manifest.app_id).option("txnVersion", self.batch)
        if where is not None:
            out = out.option("replaceWhere", where)
        if partition:
            out = out.partitionBy(partition)
        if name == "docs":
            with _row_groups(self.spark, DOCS_ROW_GROUP_BYTES):
                out.save(str(self.layout.table(name)))
        else:
            out.save(str(self.layout.table(name)))
        self.report(f"batch {self.batch}: {name} written")
        if os.environ.get(CRASH_ENV) == f"{self.batch}:{name}":
            raise RuntimeError(f"{CRASH_ENV}={self.batch}:{name}: stopping after the {name} write")

    def versions(self) -> dict[str, int]:
        return {name: table_version(self.layout.table(name)) for name in TABLES}


def _update(w: _Writer) -> Manifest:
    manifest, batch = w.manifest, w.batch
    assert manifest.pending is not None
    ranges = manifest.pending.mirrors
    kept: list[Any] = []

    def keep(df: Any) -> Any:
        kept.append(df.persist())
        return df

    try:
        feeds = {
            table: keep(_feed(w.spark, manifest, table, span))
            for table, span in ranges.items()
            if not span.rebuild
        }
        new = keep(_new_docs(w.spark, manifest, ranges, feeds, w.report))
        old = None if manifest.batch < 0 else _old_docs(w, ranges, feeds)
        if old is not None:  # a document whose text did not change stays as it is
            old, same = keep(old), [*DOC_ID, "text"]
            new, old = (
                new.join(old, on=same, how="left_anti"),
                old.join(new, on=same, how="left_anti"),
            )
            old = keep(old)
        a, buckets = manifest.analyzer, (manifest.buckets, manifest.doc_buckets)
        new_docs = keep(numbered(analysed(new, a, *buckets), batch))
        result = _totals(manifest, new_docs, old)
        new_postings = postings_of(new_docs, batch)
        w.write(new_postings, "postings", "append")
        w.write(docs_of(new_docs, batch), "docs", "append")
        changes = new_postings.select("term", F.lit(1).alias("n"))
        if old is not None:
            gone = analysed(old.select(*DOC_ID, "text"), a, *buckets)
            gone_terms = gone.select(F.explode("terms.term").alias("term"))
            changes = changes.unionByName(gone_terms.select("term", F.lit(-1).alias("n")))
        deltas = changes.groupBy("term").agg(F.sum("n").cast("long").alias("df"))
        w.write(deltas.where(F.col("df") != 0), "terms", "append")
        if old is not None:
            w.write(old.select(*VERSION, "doc"), "deletes", "append")
    finally:
        for df in kept:
            df.unpersist()
    w.report(
        f"batch {batch}: {result.added:,} documents in, {result.removed:,} out; "
        f"{result.docs:,} documents in the index"
    )
    if manifest.batch < 0:
        return manifest.finished(
            w.versions(), docs=result.docs, length=result.length, dead=0, whole=True
        )
    base = sum(n for b, n in result.removed_by.items() if b <= manifest.base)
    return manifest.finished(
        w.versions(),
        docs=result.docs,
        length=result.length,
        dead=manifest.dead + result.removed,
        tiers=segments.appended(manifest.tiers, batch, result.added, result.removed_by),
        base_dead=manifest.base_dead + base,
    )


def _compact(w: _Writer) -> Manifest:
    """The index rewritten without its dead entries (``deletes``), ``terms`` summed: whole, or
    (tiered) only the segments of the pending batch's ``merge`` range, into one."""
    manifest = w.manifest
    assert manifest.pending is not None
    tiered = manifest.pending.tiered
    first, last = manifest.pending.merge
    dead = w.read("deletes")
    inside = (F.col("batch") >= first) & (F.col("batch") <= last)
    if tiered:
        where = f"batch >= {first} AND batch <= {last}"
        for name in ("postings", "docs"):
            rows = live(w.read(name).where(inside), dead.where(inside))
            w.write(rows.select(*SCHEMAS[name].fieldNames()), name, "overwrite", where)
    else:
        _renumbered(w, dead)
    terms = w.read("terms").groupBy("term").agg(F.sum("df").cast("long").alias("df"))
    w.write(terms.where(F.col("df") > 0), "terms", "overwrite")
    w.write(dead.where(~inside) if tiered else dead.limit(0), "deletes", "overwrite")
    if not tiered:
        w.report(
            f"batch {w.batch}: compacted ({manifest.dead:,} dead documents and "
            f"{manifest.segments} segments cleaned up)"
        )
        return manifest.finished(
            w.versions(), docs=manifest.docs, length=manifest.length, dead=0, whole=True
        )
    tiers = segments.merged(manifest.tiers, first, last)
    cleaned = sum(s.dead for s in manifest.tiers) - sum(s.dead for s in tiers)
    w.report(
        f"batch {w.batch}: merged the segments of batches {first} to {last} "
        f"({cleaned:,} dead documents and {len(manifest.tiers) - len(tiers) + 1} segments "
        "cleaned up)"
    )
    return manifest.finished(
        w.versions(),
        docs=manifest.docs,
        length=manifest.length,
        dead=manifest.dead - cleaned,
        tiers=tiers,
        base_dead=manifest.base_dead,
    )


def _renumbered(w: _Writer, dead: Any) -> None:
    """``postings`` and ``docs`` rewritten whole without the versions in ``dead``, each live
    document numbered anew as written by this batch (:func:`numbered`: its partition and
    rank by table, key and column), so that each ``docs`` file and each term's postings are
    in order of number, as a build writes them (the kept numbers of later batches would
    interleave with the base's). The numbers come from ``docs`` read at the manifest's
    version, so a rerun gives the same ones; ``batch`` stays the version's."""
    docs = live(w.read("docs"), dead)
    keys = docs.select("bucket", *DOC_ID, F.col("doc").alias(OLD_DOC))
    numbers = numbered(keys, w.batch).select(
        F.col(OLD_DOC).alias("doc"), F.col("doc").alias(NEW_DOC)
    )
    numbers = numbers.persist()
    try:
        for name, rows in (("postings", live(w.read("postings"), dead)), ("docs", docs)):
            rows = rows.join(numbers, "doc").drop("doc").withColumnRenamed(NEW_DOC, "doc")
            w.write(rows.select(*SCHEMAS[name].fieldNames()), name, "overwrite")
    finally:
        numbers.unpersist()


def vacuum(spark: Any, layout: IndexLayout, hours: float) -> None:
    """Delete the files of the index's tables that no version of the last ``hours`` needs
    (:func:`binlogkit.spark.lake.upkeep.vacuum`)."""
    for name in TABLES:
        vacuum_table(spark, str(layout.table(name)), hours)


def _totals(manifest: Manifest, new_docs: Any, old_docs: Any | None) -> BatchResult:
    added, added_length = new_docs.agg(F.count(F.lit(1)), F.sum("length")).first()
    removed_by: dict[int, int] = {}
    removed_length = 0
    if old_docs is not None:  # per batch that wrote them
        counts = old_docs.groupBy("batch").agg(F.count(F.lit(1)), F.sum("length")).collect()
        removed_by = {int(row[0]): int(row[1]) for row in counts}
        removed_length = sum(int(row[2] or 0) for row in counts)
    removed = sum(removed_by.values())
    docs = manifest.docs + added - removed
    length = manifest.length + int(added_length or 0) - removed_length
    return BatchResult(int(added), removed, docs, length, removed_by)


def _new_docs(
    spark: Any,
    manifest: Manifest,
    ranges: Mapping[str, MirrorRange],
    feeds: Mapping[str, Any],
    report: Callable[[str], None],
) -> Any:
    """The documents, in the mirrors at the batch's end, of the rows the batch touches: each
    row's last image in the change data feed (``feeds``), or the whole mirror for a rebuild."""
    parts = []
    for table, span in ranges.items():
        if span.rebuild:
            rows = _mirror(spark, manifest, table).option("versionAsOf", span.end).load()
        else:
            rows = _last_images(feeds[table], manifest.keys[table])
        indexed = _columns_after(manifest, table)
        columns = [c for c in indexed if c in rows.columns]
        gone = [c for c in indexed if c not in columns]
        if gone:
            report(f"{table}: column(s) {', '.join(gone)} no longer in its mirror: not indexed")
        parts.append(documents(rows, table, columns, manifest.keys[table]))
    return reduce(lambda a, b: a.unionByName(b), parts)


def _last_images(feed: Any, key: Sequence[str]) -> Any:
    """The rows a change data feed leaves in its table: per key, the last change (by commit
    version; an insert or post-update image after a delete or pre-update image of the same
    commit, as an overwrite or an update writes them) unless it is a delete or a pre-update
    image (an update that moved the row to another key, after an earlier update of it)."""
    kind = F.col("_change_type")
    gone = kind.isin("delete", "update_preimage")
    rank = F.when(gone, 0).otherwise(1)
    order = Window.partitionBy(*(F.col(quote(k)) for k in key)).orderBy(
        F.col("_commit_version").desc(), rank.desc()
    )
    changes = feed.withColumn(LAST, F.row_number().over(order))
    return changes.where((F.col(LAST) == 1) & ~gone)


def _columns_after(manifest: Manifest, table: str) -> tuple[str, ...]:
    """The columns of ``table`` indexed after the manifest's pending batch."""
    pending = manifest.pending.columns if manifest.pending else {}
    return pending.get(table) or manifest.columns[table]


def _old_docs(w: _Writer, ranges: Mapping[str, MirrorRange], feeds: Mapping[str, Any]) -> Any:
    """The live documents of the index (at the manifest's versions) of the rows the batch
    touches (whose key is in ``feeds``, or all of a rebuilt table):
    ``table, key, column, text, batch, length, doc``."""
    docs = live(w.read("docs"), w.read("deletes"))
    parts = []
    for table, span in ranges.items():
        mine = docs.where(F.col("table") == table)
        if not span.rebuild:
            key = F.to_json(F.struct(*(F.col(quote(k)) for k in w.manifest.keys[table])))
            touched = feeds[table].select(key.alias("key")).distinct()
            keys = [row[0] for row in touched.limit(PUSHED_KEYS + 1).collect()]
            if len(keys) <= PUSHED_KEYS:  # read only their partitions and row groups
                buckets = sorted({doc_bucket(table, k, w.manifest.doc_buckets) for k in keys})
                mine = mine.where(F.col("bucket").isin(buckets) & F.col("key").isin(sorted(keys)))
            else:
                mine = mine.join(F.broadcast(touched), on="key", how="left_semi")
        parts.append(mine.select(*DOC_ID, "text", "batch", "length", "doc"))
    return reduce(lambda a, b: a.unionByName(b), parts)


def _feed(spark: Any, manifest: Manifest, table: str, span: MirrorRange) -> Any:
    """The change data feed of a mirror's versions ``(start, end]``."""
    changes = _mirror(spark, manifest, table).option("readChangeFeed", "true")
    changes = changes.option("startingVersion", span.start + 1)
    return changes.option("endingVersion", span.end).load()


def _mirror(spark: Any, manifest: Manifest, table: str) -> Any:
    return spark.read.format("delta").option("path", mirror_path(manifest.lake, table))


def mirror_path(lake: str, table: str) -> str:
    db, _, name = table.partition(".")
    return str(Path(lake, db, name, "mirror"))
