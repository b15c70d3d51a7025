"""Row changes of one table into Delta Lake tables, each batch exactly once.

:func:`apply_changes` takes a batch of the ``binlog`` source's typed row changes
of one table (``spark.read.format("binlog").option("table", "db.t")``) and
writes two Delta tables under ``LAKE/db/t/``:

- ``changes``: the change log, append-only: the batch's rows as read (op,
  typed before/after images, file, pos, row, GTID, times) plus ``date``, the
  day of ``commit_ts`` (else of the event time ``ts``) in the session time
  zone, the partition column.
- ``mirror``: the table's rows as the source has them after the batch, one
  column per source column (the types of :func:`binlogkit.spark.schema.typed_columns`:
  unsigned INT → BIGINT, unsigned BIGINT → DECIMAL(20,0), DATETIME →
  TIMESTAMP_NTZ, TIMESTAMP → TIMESTAMP, TIME → day-time interval, SET → array of
  strings, binary strings → BINARY ...), kept by a MERGE on the primary key.
  Within the batch the last change of each key in binlog order (file, pos,
  row) wins; an update is a delete of its before image's key followed by an
  upsert of its after image, so one that changes the key moves the row.

:func:`apply_batch` does the same for every table of a batch read with JSON
images (the source's default schema), typed by :mod:`binlogkit.spark.typed`
with the columns and primary key of each table's first table map in the batch's
binlog files (completed by the schema history).

Tables without a primary key get no mirror: :func:`apply_changes` refuses with
a clear error unless the caller names key columns, or passes ``mirror=False``
for the change log alone; :func:`apply_batch` writes their change log alone
and logs a warning. The mirror's columns are those of the batch's first
table map; an ALTER between batches is not followed (yet).

Exactly once: both writes of batch ``version`` carry the Delta transaction id
``(app_id, version)`` (``txnAppId``/``txnVersion``; for the MERGE as session
settings), and Delta skips a write whose table already holds that id or a
later one. Applying the batches in order, and a failed batch again with the
same version, leaves every change applied once, whether the run stopped
between the two writes or after both.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from delta.tables import DeltaTable
from pyspark.sql import Column, SparkSession, Window
from pyspark.sql import functions as F

from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.errors import BinlogError
from binlogkit.spark import register
from binlogkit.spark.jars import fetch_jars
from binlogkit.spark.schema import typed_columns
from binlogkit.spark.source import ReadPlan
from binlogkit.spark.typed import typed_changes

__all__ = [
    "CRASH_ENV",
    "DELTA_CONF",
    "apply_batch",
    "apply_changes",
    "delta_session",
    "table_columns",
    "table_key",
    "with_delta",
]

DELTA_CONF = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}
"""The session settings Delta needs, besides its jars."""

TXN_APP_ID = "spark.databricks.delta.write.txnAppId"
TXN_VERSION = "spark.databricks.delta.write.txnVersion"

CRASH_ENV = "BINLOGKIT_DELTA_CRASH"
"""Test hook: set to a batch version, :func:`apply_changes` fails after that batch's change log
commit, before its MERGE."""

log = logging.getLogger(__name__)

ORDER = ("file", "pos", "row")
"""Binlog order of the row changes."""

STEP = "_binlogkit_step"
RANK = "_binlogkit_rank"
"""Working columns of the MERGE's source, named apart from the table's columns."""


def with_delta(builder: Any, jars: Sequence[Path]) -> Any:
    """A SparkSession builder with Delta's jars (:func:`binlogkit.spark.jars.fetch_jars`) and
    settings."""
    builder = builder.config("spark.jars", ",".join(str(jar) for jar in jars))
    for key, value in DELTA_CONF.items():
        builder = builder.config(key, value)
    return builder


def delta_session(jar_folder: Path, master: str = "local[*]", app_name: str = "binlogkit") -> Any:
    """A SparkSession with Delta Lake and format ``binlog``; the jars are fetched into
    ``jar_folder`` when not there yet."""
    builder = SparkSession.builder.master(master).appName(app_name)
    session = with_delta(builder, fetch_jars(jar_folder)).getOrCreate()
    register(session)
    return session


def table_columns(paths: Sequence[str], table: str, **options: str) -> tuple[ColumnInfo, ...]:
    """The columns of ``db.table`` at its first row change in the binlog files (from its table
    map, completed by the schema history; ``options`` as the source's)."""
    plan = ReadPlan.from_options({"paths": json.dumps(list(paths)), "table": table, **options})
    return plan.find_columns()


def table_key(paths: Sequence[str], table: str, **options: str) -> tuple[str, ...]:
    """The primary key columns of ``db.table`` (see :func:`table_columns`)."""
    return tuple(col.key for col in table_columns(paths, table, **options) if col.primary_key)


def apply_batch(
    changes: Any, lake: str | Path, paths: Sequence[str], *, app_id: str, version: int
) -> None:
    """:func:`apply_changes` for each table of a batch of row changes with JSON images (the
    source's default schema) read from the binlog files ``paths``, which give each table's
    columns and key; a table without a primary key gets its change log alone."""
    tables = changes.select("db", "table").distinct().collect()
    for db, name in sorted(tuple(row) for row in tables):
        table = f"{db}.{name}"
        columns = table_columns(paths, table)
        key = tuple(col.key for col in columns if col.primary_key)
        if not key:
            log.warning("%s has no primary key: change log only, no mirror", table)
        mine = changes.where((F.col("db") == db) & (F.col("table") == name))
        typed = typed_changes(mine, typed_columns(columns, table))
        apply_changes(typed, lake, table, key, app_id=app_id, version=version, mirror=bool(key))


def apply_changes(
    changes: Any,
    lake: str | Path,
    table: str,
    key: Sequence[str],
    *,
    app_id: str,
    version: int,
    mirror: bool = True,
) -> None:
    """Append batch ``version`` of ``table``'s typed row changes to its change log and MERGE
    it into its mirror (see the module doc); a batch applied before is skipped."""
    columns = changes.schema["after"].dataType.fieldNames()
    if mirror:
        _check_key(table, key, columns)
    base = Path(lake, *table.split(".", 1))
    _append_log(changes, str(base / "changes"), app_id, version)
    if os.environ.get(CRASH_ENV) == str(version):
        raise RuntimeError(f"{CRASH_ENV}={version}: stopping before the MERGE")
    if mirror:
        _merge(changes, str(base / "mirror"), key, app_id, version)


def _check_key(table: str, key: Sequence[str], columns: Sequence[str]) -> None:
    if not key:
        raise BinlogError(
            f"{table} has no primary key, so its mirror cannot tell its rows apart",
            hint="name key columns that identify a row, or pass mirror=False "
            "to write the change log alone",
        )
    missing = [name for name in key if name not in columns]
    if missing:
        raise BinlogError(f"{table} has no key column(s) {missing}; its columns: {columns}")


def _append_log(changes: Any, path: str, app_id: str, version: int) -> None:
    day = F.to_date(F.coalesce(F.col("commit_ts"), F.col("ts")))
    writer = changes.withColumn("date", day).write.format("delta").mode("append")
    writer = writer.option("txnAppId", app_id).option("txnVersion", version)
    writer.partitionBy("date").save(path)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _latest(changes: Any, key: Sequence[str]) -> Any:
    """Per key, the last step of the batch: an image to upsert or a key to delete (column
    :data:`STEP` ``.deleted``)."""

    def steps(image: str, step: int, op: str) -> Any:
        order = [F.col(c) for c in ORDER]
        mark = F.struct(*order, F.lit(step).alias("step"), F.lit(step == 0).alias("deleted"))
        return changes.where(F.col("op") != op).select(mark.alias(STEP), f"{image}.*")

    both = steps("before", 0, "c").unionByName(steps("after", 1, "d"))
    last = Window.partitionBy(*(F.col(_quote(k)) for k in key)).orderBy(F.col(STEP).desc())
    both = both.withColumn(RANK, F.row_number().over(last))
    return both.where(F.col(RANK) == 1).drop(RANK)


def _merge(changes: Any, path: str, key: Sequence[str], app_id: str, version: int) -> None:
    spark = changes.sparkSession
    image = changes.schema["after"].dataType
    DeltaTable.createIfNotExists(spark).location(path).addColumns(image).execute()
    values: dict[str, str | Column] = {_quote(c): f"s.{_quote(c)}" for c in image.fieldNames()}
    on = " AND ".join(f"t.{_quote(k)} <=> s.{_quote(k)}" for k in key)
    merge = DeltaTable.forPath(spark, path).alias("t").merge(_latest(changes, key).alias("s"), on)
    merge = merge.whenMatchedDelete(f"s.{STEP}.deleted").whenMatchedUpdate(set=values)
    merge = merge.whenNotMatchedInsert(condition=f"NOT s.{STEP}.deleted", values=values)
    with _transaction(spark, app_id, version):
        merge.execute()


@contextmanager
def _transaction(spark: Any, app_id: str, version: int) -> Iterator[None]:
    """The session settings that make Delta skip a MERGE of ``(app_id, version)`` done before."""
    spark.conf.set(TXN_APP_ID, app_id)
    spark.conf.set(TXN_VERSION, str(version))
    try:
        yield
    finally:
        spark.conf.unset(TXN_APP_ID)
        spark.conf.unset(TXN_VERSION)
