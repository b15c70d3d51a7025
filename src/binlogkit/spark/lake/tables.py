"""Delta tables of the lake: creation with binlogkit's settings, properties, transactions.

Every table binlogkit writes uses column mapping by name (so columns can be
dropped and renamed) and type widening (so columns can be widened in place).
A mirror records in the table property :data:`DEFINITION` the position where
the table definition it holds begins (or where the table was dropped): the
apply compares it with the schema history to know which DDL it has followed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from delta.tables import DeltaTable

from binlogkit.schema.store import Position

__all__ = [
    "DEFINITION",
    "TABLE_PROPERTIES",
    "UNKNOWN_COLUMNS",
    "create_table",
    "exists",
    "literal",
    "position_property",
    "properties",
    "quote",
    "resnapshot_hint",
    "set_properties",
    "transaction",
]

DEFINITION = "binlogkit.definition"
"""Mirror property: JSON ``{"file": ..., "pos": ...}``, where the definition it holds begins."""

UNKNOWN_COLUMNS = "binlogkit.unknownColumns"
"""Mirror property: JSON ``{column: "file:pos"}``, columns added by DDL whose values in the rows
not changed since are not known (NULL)."""

TABLE_PROPERTIES = {
    "delta.columnMapping.mode": "name",
    "delta.enableTypeWidening": "true",
}

TXN_APP_ID = "spark.databricks.delta.write.txnAppId"
TXN_VERSION = "spark.databricks.delta.write.txnVersion"


def exists(spark: Any, path: str) -> bool:
    return Path(path, "_delta_log").is_dir() and DeltaTable.isDeltaTable(spark, path)


def create_table(
    spark: Any,
    path: str,
    schema: Any,
    *,
    partition: str | None = None,
    extra: Mapping[str, str] | None = None,
    replace: bool = False,
) -> None:
    """Create the table at ``path`` (unless it exists; ``replace``: in place of it, empty)."""
    props = {**TABLE_PROPERTIES, **(extra or {})}
    if replace:  # keeps the table's properties (and its history for time travel)
        empty = spark.createDataFrame([], schema).write.format("delta").mode("overwrite")
        empty.option("overwriteSchema", "true").save(path)
        return
    builder = DeltaTable.createIfNotExists(spark).location(path).addColumns(schema)
    if partition is not None:
        builder = builder.partitionedBy(partition)
    for key, value in props.items():
        builder = builder.property(key, value)
    builder.execute()


def properties(spark: Any, path: str) -> dict[str, str]:
    return dict(DeltaTable.forPath(spark, path).detail().collect()[0]["properties"])


def set_properties(spark: Any, path: str, values: Mapping[str, str]) -> None:
    pairs = ", ".join(f"{literal(k)} = {literal(v)}" for k, v in values.items())
    spark.sql(f"ALTER TABLE delta.{quote(path)} SET TBLPROPERTIES ({pairs})")


def position_property(at: Position) -> str:
    return json.dumps({"file": at.file, "pos": at.pos})


def resnapshot_hint(table: str) -> str:
    """How to start ``db.t``'s lake tables again from a snapshot."""
    db, name = table.split(".", 1)
    return (
        f"resnapshot {table}: move LAKE/{db}/{name} aside, then snapshot the table again "
        f"(binlogkit spark sync ... --tables {table})"
    )


def quote(name: str) -> str:
    """A Spark SQL identifier."""
    return "`" + name.replace("`", "``") + "`"


def literal(text: str) -> str:
    """A Spark SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


@contextmanager
def transaction(spark: Any, app_id: str, version: int) -> Iterator[None]:
    """The session settings that make Delta skip a MERGE (or UPDATE) of ``(app_id, version)``
    done before."""
    spark.conf.set(TXN_APP_ID, app_id)
    spark.conf.set(TXN_VERSION, str(version))
    try:
        yield
    finally:
        spark.conf.unset(TXN_APP_ID)
        spark.conf.unset(TXN_VERSION)
