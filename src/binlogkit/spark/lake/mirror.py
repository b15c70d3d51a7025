"""The mirror of a table: its rows as the source has them, kept by a MERGE on the primary key.

Within a batch the last change of each key in binlog order (file, pos, row)
wins; an update is a delete of its before image's key followed by an upsert of
its after image, so one that changes the key moves the row.

A batch of inserts alone is appended instead (:func:`append_mirror`) where the
mirror is the source's table as of the batch's start: the server inserts a row
only where its key is not taken, so no key of the batch is in the mirror, and
the MERGE would insert exactly those rows. An append needs neither the
mirror's file list (a state reconstruction of its Delta log) nor a scan of its
files for matches.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from delta.tables import DeltaTable
from pyspark.sql import Column, Window
from pyspark.sql import functions as F

from binlogkit.spark.lake.marks import Mark, append_once, write_once
from binlogkit.spark.lake.tables import quote, session_settings

__all__ = ["ORDER", "append_mirror", "merge_mirror", "warm_mirror"]

log = logging.getLogger(__name__)

ORDER = ("file", "pos", "row")
"""Binlog order of the row changes."""

MERGE_SETTINGS = {"spark.databricks.delta.merge.materializeSource": "none"}
"""Session settings of the mirror's MERGE. Delta copies a source that is not a Delta table
into the executors' storage before a MERGE (a Spark job of its own), so that its two passes
over it (the scan for matches, the write) see the same rows. The mirror's source is checkpointed
locally instead (``localCheckpoint(eager=False)``): the first pass stores its rows as it
computes them, the second reads them back (a lost block fails the MERGE, which commits
nothing), so Delta is told not to copy it; both passes see the same rows whatever the
caller's frame."""

STEP = "_binlogkit_step"
RANK = "_binlogkit_rank"
"""Working columns of the MERGE's source, named apart from the table's columns."""


def _latest(changes: Any, key: Sequence[str]) -> Any:
    """Per key, the last step of the batch: an image to upsert or a key to delete (column
    :data:`STEP` ``.deleted``)."""

    def steps(image: str, step: int, op: str) -> Any:
        order = [F.col(c) for c in ORDER]
        mark = F.struct(*order, F.lit(step).alias("step"), F.lit(step == 0).alias("deleted"))
        return changes.where(F.col("op") != op).select(mark.alias(STEP), f"{image}.*")

    both = steps("before", 0, "c").unionByName(steps("after", 1, "d"))
    last = Window.partitionBy(*(F.col(quote(k)) for k in key)).orderBy(F.col(STEP).desc())
    both = both.withColumn(RANK, F.row_number().over(last))
    return both.where(F.col(RANK) == 1).drop(RANK)


def merge_mirror(changes: Any, path: str, key: Sequence[str], mark: Mark) -> None:
    """MERGE typed row changes into the mirror at ``path`` (which has their image's columns) as
    the write ``mark``; skipped when the mirror holds it already."""
    spark = changes.sparkSession

    def merge() -> None:
        with session_settings(spark, MERGE_SETTINGS):
            _merge(changes, path, key).execute()

    write_once(spark, path, mark, merge)


def _merge(changes: Any, path: str, key: Sequence[str]) -> Any:
    image = changes.schema["after"].dataType
    values: dict[str, str | Column] = {quote(c): f"s.{quote(c)}" for c in image.fieldNames()}
    on = " AND ".join(f"t.{quote(k)} <=> s.{quote(k)}" for k in key)
    source = _latest(changes, key).localCheckpoint(eager=False).alias("s")
    merge = DeltaTable.forPath(changes.sparkSession, path).alias("t").merge(source, on)
    merge = merge.whenMatchedDelete(f"s.{STEP}.deleted").whenMatchedUpdate(set=values)
    return merge.whenNotMatchedInsert(condition=f"NOT s.{STEP}.deleted", values=values)


def append_mirror(changes: Any, path: str, mark: Mark) -> None:
    """Append the after images of typed inserts to the mirror at ``path`` as the write ``mark``
    (skipped when the mirror holds it already): what :func:`merge_mirror` does with inserts of
    keys the mirror does not hold. It sets no session setting, so it may run beside another
    write."""
    append_once(changes.select("after.*"), path, mark)


def warm_mirror(spark: Any, path: str) -> None:
    """Reconstruct the newest state of the mirror at ``path`` (its files and their statistics:
    a Spark job, which a MERGE otherwise starts with): Delta keeps it for the session's next
    MERGE of the table at that version. Only a head start: a failure is logged, and the MERGE
    then reconstructs the state itself."""
    try:
        DeltaTable.forPath(spark, path).detail()
    except Exception as err:  # py4j's and Spark's errors alike; the MERGE will say what is wrong
        log.info("%s: the mirror's state was not reconstructed ahead of its MERGE: %s", path, err)
