"""A TRUNCATE TABLE followed in the lake: the mirror emptied, the change log told once.

The binlog logs TRUNCATE as a statement, not as row deletions; the schema
history records it (:class:`~binlogkit.schema.store.Truncation`) and the
timeline makes it a version of the table
(:class:`~binlogkit.spark.lake.timeline.Version` ``truncated``). Where the
mirror reaches that version, :func:`empty_mirror` deletes its rows (and closes
the SCD type 2 history's current versions); :func:`log_truncate` appends one
row of op ``t`` to the change log. ``ALTER TABLE ... TRUNCATE/DROP PARTITION``
removes rows the mirror cannot tell apart: it stops the table.
"""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from binlogkit.errors import BinlogError
from binlogkit.spark.lake.changelog import append_log
from binlogkit.spark.lake.evolve import spark_columns
from binlogkit.spark.lake.marks import Mark
from binlogkit.spark.lake.scd2 import close_all
from binlogkit.spark.lake.tables import LakeTables, quote, resnapshot_hint
from binlogkit.spark.lake.timeline import Version
from binlogkit.spark.schema import typed_schema

__all__ = ["TRUNCATE_OP", "empty_mirror", "log_truncate"]

TRUNCATE_OP = "t"
"""The change log's ``op`` of a TRUNCATE (row changes are ``c``, ``u``, ``d``)."""

_EPOCH = datetime.fromtimestamp(0, UTC)


def empty_mirror(tables: LakeTables, mirror: str, history: str | None, version: Version) -> None:
    """Delete every row of the mirror at ``mirror`` (a DELETE: time travel keeps them) and
    close the current versions of the SCD type 2 ``history``, for a truncation ``version``."""
    assert version.definition is not None
    table = str(version.definition.table_name)
    if version.partitions is not None:
        raise BinlogError(
            f"{table}: the rows of partitions {', '.join(version.partitions)} were removed at "
            f"{version.at} (ALTER TABLE ... TRUNCATE/DROP PARTITION), and the mirror cannot "
            "tell which rows they held",
            hint=resnapshot_hint(table),
        )
    if history is not None and tables.exists(history):
        close_all(tables.spark, history, version.at)
    tables.spark.sql(f"DELETE FROM delta.{quote(mirror)}")


def log_truncate(spark: Any, path: str, version: Version, batch: Mark) -> None:
    """Append the change log row of a truncation: op ``t``, no images, ``pos`` and
    ``next_pos`` the history's position of the statement (just past it), ``ts`` its time
    (the epoch where the history has none), ``server_id`` 0 (not recorded). Once: the write
    is ``batch``'s step ``truncate:FILE:POS``."""
    assert version.definition is not None
    at = version.at
    schema = typed_schema(spark_columns(version.definition))
    row = {name: None for name in schema.fieldNames()}
    row.update(
        file=os.path.basename(at.file or ""),
        pos=at.pos,
        next_pos=at.pos,
        event_type="QUERY",
        server_id=0,
        gtid=at.gtid,
        ts=at.time() or _EPOCH,
        db=version.definition.db,
        table=version.definition.name,
        op=TRUNCATE_OP,
        row=0,
    )
    frame = spark.createDataFrame([tuple(row.values())], schema)
    append_log(frame, path, replace(batch, step=f"truncate:{row['file']}:{at.pos}"))
