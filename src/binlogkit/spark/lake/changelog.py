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

from binlogkit.spark.lake.marks import Mark, append_once
from binlogkit.spark.lake.tables import LakeTables

__all__ = ["append_log"]


def log_rows(changes: Any) -> Any:
    """The change log's rows of typed row changes."""
    return changes.withColumn("date", F.to_date(F.coalesce(F.col("commit_ts"), F.col("ts"))))


def create_log(changes: Any, path: str, tables: LakeTables | None = None) -> None:
    """The change log at ``path`` for typed row changes, created unless ``tables`` knows it."""
    rows = log_rows(changes)
    (tables or LakeTables(changes.sparkSession)).create(path, rows.schema, partition="date")


def append_log(changes: Any, path: str, mark: Mark, tables: LakeTables | None = None) -> None:
    """Append typed row changes to the change log at ``path`` (created if ``tables`` does not
    know it) as the write ``mark``; skipped when the log holds it already."""
    create_log(changes, path, tables)
    append_created(changes, path, mark)


def append_created(changes: Any, path: str, mark: Mark) -> None:
    """:func:`append_log` to a change log that exists. It sets no session setting, so it may
    run beside a MERGE of another table (from another thread)."""
    append_once(log_rows(changes), path, mark, mergeSchema="true")
