"""The change log of a table: its row changes as read, appended once per batch.

Columns: those of the source's typed row changes (op, typed ``before``/``after``,
file, pos, row, GTID, times) plus ``date``, the day of ``commit_ts`` (else of
``ts``) in the session time zone, the partition column. The images' structs
follow the table's DDL by Delta's schema evolution: added (and renamed)
columns become new fields, dropped ones stay (NULL from then on), widened ones
are widened.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import functions as F

from binlogkit.spark.lake.marks import Mark, holds, marked
from binlogkit.spark.lake.tables import LakeTables

__all__ = ["append_log"]


def append_log(changes: Any, path: str, mark: Mark, tables: LakeTables | None = None) -> None:
    """Append typed row changes to the change log at ``path`` (created if ``tables`` does not
    know it) as the write ``mark``; skipped when the log holds it already."""
    day = F.to_date(F.coalesce(F.col("commit_ts"), F.col("ts")))
    rows = changes.withColumn("date", day)
    (tables or LakeTables(changes.sparkSession)).create(path, rows.schema, partition="date")
    if holds(path, mark):
        return
    writer = rows.write.format("delta").mode("append").option("mergeSchema", "true")
    with marked(changes.sparkSession, mark):
        writer.save(path)
