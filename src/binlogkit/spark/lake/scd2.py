"""SCD type 2 history of a table: every version of every row, with when it was valid.

Columns: the table's columns, then ``valid_from`` and ``valid_to`` (structs of
``ts``: the commit time, else the event time; ``file``, ``pos``, ``row``: the
binlog position of the change) and ``is_current``. An insert opens a version
of its key; an update closes the version of its before image's key and opens
one of its after image's key (so a key change closes one key and opens
another); a delete closes. Each change of a key in a batch gives a version.
``valid_to`` is NULL while a version is current. A dropped table's current
versions are closed at the DROP's position (``ts`` the DROP's time, NULL in
schema histories written before statement times were recorded); so are a
truncated table's, at the TRUNCATE.

The history's columns follow the table's DDL except drops: a new column is
added, a renamed one renamed (its old versions' values with it), a widened one
widened, a dropped one stays (NULL in the versions opened since).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from delta.tables import DeltaTable
from pyspark.sql import Window
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from binlogkit.errors import BinlogError
from binlogkit.schema.model import fold_column
from binlogkit.schema.store import Position
from binlogkit.spark.lake.evolve import delta_widens
from binlogkit.spark.lake.marks import Mark, write_once
from binlogkit.spark.lake.tables import create_table, exists, quote

__all__ = ["SCD2_COLUMNS", "close_all", "merge_history"]

SCD2_COLUMNS = ("valid_from", "valid_to", "is_current")
KIND = "_binlogkit_kind"
AT = "_binlogkit_at"
AT_TYPE = StructType(
    [
        StructField("ts", TimestampType(), True),
        StructField("file", StringType(), True),
        StructField("pos", LongType(), True),
        StructField("row", IntegerType(), True),
    ]
)
"""``valid_from``/``valid_to``: commit time and binlog position of a change."""


def _at(changes: Any) -> Any:
    return F.struct(
        F.coalesce(F.col("commit_ts"), F.col("ts")).alias("ts"),
        F.col("file"),
        F.col("pos"),
        F.col("row"),
    )


def _versions(changes: Any, key: Sequence[str], columns: Sequence[str]) -> Any:
    """The batch's opened versions and the closes of versions opened before it."""
    at = _at(changes)
    closes = changes.where(F.col("op") != "c").select(
        *(F.col(f"before.{quote(k)}").alias(k) for k in key),
        at.alias(AT),
        F.lit(0).alias("step"),
    )
    opens = changes.where(F.col("op") != "d").select(
        *(F.col(f"after.{quote(c)}").alias(c) for c in columns),
        at.alias(AT),
        F.lit(1).alias("step"),
    )
    events = closes.unionByName(opens, allowMissingColumns=True)
    order = Window.partitionBy(*(F.col(quote(k)) for k in key)).orderBy(
        F.col(f"{AT}.file"), F.col(f"{AT}.pos"), F.col(f"{AT}.row"), F.col("step")
    )
    events = events.withColumn("_next", F.lead(AT).over(order))
    events = events.withColumn("_first", F.row_number().over(order) == 1)
    opened = events.where(F.col("step") == 1).select(
        *(F.col(quote(c)) for c in columns),
        F.col(AT).alias("valid_from"),
        F.col("_next").alias("valid_to"),
        F.col("_next").isNull().alias("is_current"),
        F.lit("open").alias(KIND),
    )
    closed = events.where((F.col("step") == 0) & F.col("_first")).select(
        *(F.col(quote(k)) for k in key),
        F.col(AT).alias("valid_to"),
        F.lit("close").alias(KIND),
    )
    return opened.unionByName(closed, allowMissingColumns=True)


def _schema(changes: Any) -> StructType:
    image = changes.schema["after"].dataType
    names = {fold_column(f.name) for f in image.fields}
    taken = [c for c in SCD2_COLUMNS if fold_column(c) in names]
    if taken:
        raise BinlogError(f"columns {taken} clash with the SCD type 2 history's own columns")
    return StructType(
        [
            *image.fields,
            StructField("valid_from", AT_TYPE, True),
            StructField("valid_to", AT_TYPE, True),
            StructField("is_current", BooleanType(), True),
        ]
    )


def _evolve(spark: Any, path: str, schema: StructType, table: str) -> None:
    """Add the columns the history lacks; widen those Delta can widen."""
    have = {fold_column(f.name): f for f in spark.read.format("delta").load(path).schema.fields}
    target = f"delta.{quote(path)}"
    adds = []
    for field in schema.fields:
        old = have.get(fold_column(field.name))
        if old is None:
            adds.append(f"{quote(field.name)} {field.dataType.simpleString()}")
        elif old.dataType != field.dataType:
            if delta_widens(old.dataType, field.dataType):
                kind = field.dataType.simpleString()
                spark.sql(f"ALTER TABLE {target} ALTER COLUMN {quote(field.name)} TYPE {kind}")
            elif not delta_widens(field.dataType, old.dataType):
                raise BinlogError(
                    f"{table}: the SCD type 2 history's column {field.name} is "
                    f"{old.dataType.simpleString()}, its values now are "
                    f"{field.dataType.simpleString()}",
                    hint=f"move {path} aside to start a new history",
                )
    if adds:
        spark.sql(f"ALTER TABLE {target} ADD COLUMNS ({', '.join(adds)})")


def merge_history(changes: Any, path: str, table: str, key: Sequence[str], mark: Mark) -> None:
    """Record typed row changes as versions in the history at ``path``, as the write ``mark``;
    skipped when it holds that write already."""
    spark = changes.sparkSession
    schema = _schema(changes)
    if exists(spark, path):
        _evolve(spark, path, schema, table)
    else:
        create_table(spark, path, schema)
    write_once(spark, path, mark, lambda: _merge(changes, path, key).execute())


def _merge(changes: Any, path: str, key: Sequence[str]) -> Any:
    columns = changes.schema["after"].dataType.fieldNames()
    source = _versions(changes, key, columns)
    on = " AND ".join(
        [f"s.{KIND} = 'close'", "t.is_current", *(f"t.{quote(k)} <=> s.{quote(k)}" for k in key)]
    )
    inserted = {quote(c): f"s.{quote(c)}" for c in (*columns, *SCD2_COLUMNS)}
    merge = DeltaTable.forPath(changes.sparkSession, path).alias("t").merge(source.alias("s"), on)
    merge = merge.whenMatchedUpdate(set={"valid_to": "s.valid_to", "is_current": "false"})
    return merge.whenNotMatchedInsert(condition=f"s.{KIND} = 'open'", values=inserted)


def close_all(spark: Any, path: str, at: Position) -> None:
    """Close every current version (the table was dropped or truncated at ``at``; ``ts`` its
    statement's time where the schema history has it, else NULL)."""
    closed = F.struct(
        F.lit(at.time()).cast("timestamp").alias("ts"),
        F.lit(os.path.basename(at.file or "")).alias("file"),  # as the change log names it
        F.lit(at.pos).cast("long").alias("pos"),
        F.lit(None).cast("int").alias("row"),
    )
    DeltaTable.forPath(spark, path).update(
        "is_current", {"valid_to": closed, "is_current": "false"}
    )
