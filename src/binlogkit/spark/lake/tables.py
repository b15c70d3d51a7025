"""Delta tables of the lake: creation with binlogkit's settings, properties, transactions.

Every table binlogkit writes uses column mapping by name (so columns can be
dropped and renamed) and type widening (so columns can be widened in place).
A mirror records in the table property :data:`DEFINITION` the position where
the table definition it holds begins (or where the table was dropped): the
apply compares it with the schema history to know which DDL it has followed.
:class:`LakeTables` remembers, between the batches of one driver, which tables
exist and the properties it read, so that a steady stream reads them once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from delta.tables import DeltaTable

from binlogkit.schema.store import Position
from binlogkit.spark.lake import storage

__all__ = [
    "DEFINITION",
    "SNAPSHOT_END",
    "SNAPSHOT_READING",
    "TABLE_PROPERTIES",
    "UNKNOWN_COLUMNS",
    "LakeTables",
    "create_table",
    "end_property",
    "exists",
    "literal",
    "position_property",
    "properties",
    "quote",
    "resnapshot_hint",
    "set_properties",
    "snapshot_end",
    "transaction",
]

DEFINITION = "binlogkit.definition"
"""Mirror property: JSON ``{"file": ..., "pos": ...}``, where the definition it holds begins."""

SNAPSHOT_END = "binlogkit.snapshotEnd"
"""Mirror property of a snapshot's mirror (the first snapshot's, or a resnapshot's): JSON
``{"file": ..., "pos": ..., "gtid": ...}``, the end E of the reads that filled it (changes
before it may be in the mirror already, none from it on), or :data:`SNAPSHOT_READING` while
the snapshot still reads it."""

SNAPSHOT_READING = "reading"
""":data:`SNAPSHOT_END` of a mirror whose snapshot has not ended: its E is not known yet."""

UNKNOWN_COLUMNS = "binlogkit.unknownColumns"
"""Mirror property: JSON ``{column: "file:pos"}``, columns added by DDL whose values in the rows
not changed since are not known (NULL)."""

TABLE_PROPERTIES = {
    "delta.columnMapping.mode": "name",
    "delta.enableTypeWidening": "true",
    "delta.logRetentionDuration": "interval 7 days",
}
"""Settings of every table binlogkit creates. The log keeps 7 days of commits (Delta's
default: 30), as long as VACUUM keeps the files they need by default
(``delta.deletedFileRetentionDuration``): older versions cannot be read once vacuumed, and
a stream writes a commit per table per second, which each write lists (Delta, and
:func:`~binlogkit.spark.lake.marks.holds`)."""

TXN_APP_ID = "spark.databricks.delta.write.txnAppId"
TXN_VERSION = "spark.databricks.delta.write.txnVersion"


def exists(spark: Any, path: str) -> bool:
    log = storage.lake_path(path) / "_delta_log"
    return storage.is_dir(log) and DeltaTable.isDeltaTable(spark, path)


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


class LakeTables:
    """The lake's tables as this driver knows them: which exist, and the properties each had
    when the driver last read them. The driver is the lake's only writer, and every change of
    a table's properties or its replacement goes through :meth:`create` or
    :meth:`set_properties` (or :meth:`forget`), which drop what was read; row writes (appends,
    MERGE, DELETE) leave the properties as they are. A new driver (a restart) knows nothing
    and reads each table once."""

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self._existing: set[str] = set()
        self._properties: dict[str, dict[str, str]] = {}
        self._merged: set[str] = set()

    def wrote(self, path: str, *, merged: bool) -> None:
        """Note a row write of the mirror at ``path`` by this driver: a MERGE or not."""
        if merged:
            self._merged.add(path)
        else:
            self._merged.discard(path)

    def merged(self) -> list[str]:
        """The mirrors whose last row write by this driver was a MERGE."""
        return sorted(self._merged)

    def exists(self, path: str) -> bool:
        if path not in self._existing and exists(self.spark, path):
            self._existing.add(path)
        return path in self._existing

    def properties(self, path: str) -> dict[str, str]:
        if path not in self._properties:
            self._properties[path] = properties(self.spark, path)
        return dict(self._properties[path])

    def create(self, path: str, schema: Any, **options: Any) -> None:
        """:func:`create_table` (``options`` are its keywords), done only when the table is not
        known to exist, or to ``replace`` it."""
        if options.get("replace") or not self.exists(path):
            with self._changing(path):
                create_table(self.spark, path, schema, **options)
            self._existing.add(path)

    def set_properties(self, path: str, values: Mapping[str, str]) -> None:
        with self._changing(path):
            set_properties(self.spark, path, values)

    def forget(self, path: str) -> None:
        """Read the table again when next asked (something else replaced it)."""
        self._existing.discard(path)
        self._properties.pop(path, None)

    @contextmanager
    def _changing(self, path: str) -> Iterator[None]:
        self.forget(path)
        try:
            yield
        finally:
            self.forget(path)


def position_property(at: Position) -> str:
    return json.dumps({"file": at.file, "pos": at.pos})


def end_property(at: Position) -> str:
    """:data:`SNAPSHOT_END`'s value for E ``at``."""
    return json.dumps({"file": at.file, "pos": at.pos, "gtid": at.gtid})


def snapshot_end(props: Mapping[str, str]) -> Position | str | None:
    """A mirror's :data:`SNAPSHOT_END` (its properties ``props``): E, :data:`SNAPSHOT_READING`,
    or None (not a snapshot's mirror, or one written before E was recorded on mirrors)."""
    text = props.get(SNAPSHOT_END)
    if text is None or text == SNAPSHOT_READING:
        return text
    found = json.loads(text)
    return Position(found["file"], int(found["pos"]), found.get("gtid"))


def resnapshot_hint(table: str) -> str:
    """How to read ``db.t``'s mirror again from the server (docs/lakehouse.md, Resnapshot)."""
    return f"resnapshot {table}: binlogkit spark sync URL --to LAKE --resnapshot {table}"


def quote(name: str) -> str:
    """A Spark SQL identifier."""
    return "`" + name.replace("`", "``") + "`"


def literal(text: str) -> str:
    """A Spark SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


@contextmanager
def session_settings(spark: Any, settings: Mapping[str, str]) -> Iterator[None]:
    """The session's ``settings`` meanwhile; each restored after (unset if it was)."""
    before = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, old in before.items():
            if old is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, old)


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
