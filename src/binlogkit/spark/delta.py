"""Row changes into Delta Lake tables, each batch exactly once.

:func:`apply_batch` (from :mod:`binlogkit.spark.lake.batch`) takes a batch of
row changes of any tables with JSON images (the ``binlog`` source's default
schema, what a streaming query hands to ``foreachBatch``) and the driver's
:class:`ApplyOptions` (the schema history file among them), and keeps per
table ``LAKE/db/t/changes`` (change log), ``mirror`` and optionally ``history``
(SCD type 2), following DDL by the policy of docs/lakehouse.md.

:func:`apply_changes` does it for a batch of one table's typed row changes
(``spark.read.format("binlog").option("table", "db.t")``) with a key the caller
names: the change log and the mirror (see :mod:`binlogkit.spark.lake.mirror`),
with the columns of the batch (no DDL followed).

Tables without a primary key get no mirror: :func:`apply_changes` refuses with
a clear error unless the caller names key columns, or passes ``mirror=False``
for the change log alone; :func:`apply_batch` writes their change log alone
and logs a warning.

Exactly once: every write of batch ``version`` carries the mark
``(app_id, version)`` in its commit (:mod:`binlogkit.spark.lake.marks`), and
is skipped when its table already holds that mark or a later batch's. Applying
the batches in order, and a failed batch again with the same version, leaves
every change applied once, whether the run stopped between two writes or after
all.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.errors import BinlogError
from binlogkit.spark import register
from binlogkit.spark.jars import fetch_jars
from binlogkit.spark.lake.batch import CRASH_ENV, ApplyOptions, apply_batch
from binlogkit.spark.lake.changelog import append_log
from binlogkit.spark.lake.marks import Mark
from binlogkit.spark.lake.mirror import merge_mirror
from binlogkit.spark.lake.storage import lake_path
from binlogkit.spark.lake.tables import create_table
from binlogkit.spark.source import ReadPlan

__all__ = [
    "CODEGEN_CACHE",
    "CRASH_ENV",
    "DELTA_CONF",
    "ApplyOptions",
    "apply_batch",
    "apply_changes",
    "check_codegen_cache",
    "delta_session",
    "table_columns",
    "table_key",
    "with_delta",
]

log = logging.getLogger(__name__)

DELTA_CONF = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}
"""The session settings Delta needs, besides its jars."""

CODEGEN_CACHE = ("spark.sql.codegen.cache.maxEntries", 2000)
"""Spark's cache of the classes it generates for queries (a static setting, at the session's
start). Its default, 100, is too small for a lake's micro-batches: one table's stream (the
change log append, the mirror's state reconstruction and MERGE) uses about 130 generated
classes, so each batch compiled about 90 of them again (Janino, then the JVM's JIT on the new
classes: about half the JVM's CPU time), and with it a steady batch took 2.8 s instead of
1.8 s (docs/lakehouse.md, Cost of a micro-batch). Each further table adds its own classes."""


def with_delta(builder: Any, jars: Sequence[Path]) -> Any:
    """A SparkSession builder with Delta's jars (:func:`binlogkit.spark.jars.fetch_jars`) and
    settings."""
    builder = builder.config("spark.jars", ",".join(str(jar) for jar in jars))
    for key, value in DELTA_CONF.items():
        builder = builder.config(key, value)
    return builder.config(*CODEGEN_CACHE)


def check_codegen_cache(session: Any) -> None:
    """Warn when ``session`` (one spark-submit started) caches fewer generated classes than
    :data:`CODEGEN_CACHE`, and say how to start it."""
    key, wanted = CODEGEN_CACHE
    have = int(session.conf.get(key, "100"))
    if have < wanted:
        log.warning(
            "%s is %d: micro-batches recompile Spark's generated classes and run slower "
            "(start the session with --conf %s=%d)",
            key,
            have,
            key,
            wanted,
        )


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
    db, name = table.split(".", 1)
    base = lake_path(lake) / db / name
    mark = Mark(app_id, version)
    append_log(changes, str(base / "changes"), mark)
    if os.environ.get(CRASH_ENV) == str(version):
        raise RuntimeError(f"{CRASH_ENV}={version}: stopping before the MERGE")
    if mirror:
        path = str(base / "mirror")
        create_table(changes.sparkSession, path, changes.schema["after"].dataType)
        merge_mirror(changes, path, key, mark)


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
