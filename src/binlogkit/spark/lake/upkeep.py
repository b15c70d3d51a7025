"""Upkeep of one Delta table of the lake: its small files compacted, unneeded files vacuumed.

A micro-batch appends a small file to each change log it writes (and to a mirror that
got inserts alone), and a MERGE rewrites the mirror's files it touches, leaving the old
ones on disk. :func:`upkeep` compacts a table that has :data:`SMALL_FILES` files or more
averaging under :data:`SMALL_FILE_BYTES` (Delta's OPTIMIZE: a commit with
``dataChange=false`` that changes no row and carries no mark), then VACUUMs the files no
version of the last ``hours`` needs. A table below the threshold costs a look at its
state and VACUUM's listing, no rewrite. Neither may run beside a batch write: a commit
made while the session carries a batch's mark (:func:`~binlogkit.spark.lake.marks.marked`)
would carry it too, so :func:`upkeep` refuses then.
"""

from __future__ import annotations

import time
from typing import Any

from delta.tables import DeltaTable

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import BinlogError
from binlogkit.spark.lake.marks import USER_METADATA
from binlogkit.spark.lake.tables import session_settings

__all__ = [
    "DEFAULT_RETAIN_HOURS",
    "SMALL_FILES",
    "SMALL_FILE_BYTES",
    "Upkept",
    "files",
    "upkeep",
    "vacuum",
]

DEFAULT_RETAIN_HOURS = 168.0
"""Delta's default retention (``delta.deletedFileRetentionDuration``, 7 days)."""

SMALL_FILES = 16
"""A table is compacted from this many files on (fewer: left as they are)."""

SMALL_FILE_BYTES = 128 << 20
"""... when its files average less than this (OPTIMIZE writes files of up to 1 GiB)."""

RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"


@frozen_dataclass
class Upkept:
    """What :func:`upkeep` did to one table: its files (the current version's) before and
    after, whether it was compacted, and how long it all took."""

    path: str
    files_before: int
    files_after: int
    compacted: bool
    seconds: float


def files(spark: Any, path: str) -> tuple[int, int]:
    """The number of files and bytes of the current version of the Delta table at ``path``."""
    detail = DeltaTable.forPath(spark, path).detail().collect()[0]
    return int(detail["numFiles"]), int(detail["sizeInBytes"])


def upkeep(spark: Any, path: str, hours: float = DEFAULT_RETAIN_HOURS) -> Upkept:
    """Compact the Delta table at ``path`` when it has many small files, then VACUUM it
    keeping the files of the last ``hours``."""
    if spark.conf.get(USER_METADATA, None):
        raise BinlogError(
            f"{path}: upkeep while the session carries a batch's mark "
            f"({spark.conf.get(USER_METADATA)}): its commits would carry it too",
            hint="run the lake's upkeep between micro-batches, never beside a batch write",
        )
    began = time.monotonic()
    before, size = files(spark, path)
    compacted = before >= SMALL_FILES and size < before * SMALL_FILE_BYTES
    after = before
    if compacted:
        done = DeltaTable.forPath(spark, path).optimize().executeCompaction().first()["metrics"]
        after = before - int(done["numFilesRemoved"]) + int(done["numFilesAdded"])
    vacuum(spark, path, hours)
    return Upkept(path, before, after, compacted, time.monotonic() - began)


def vacuum(spark: Any, path: str, hours: float) -> None:
    """Delete the files of the Delta table at ``path`` that no version of the last ``hours``
    needs. Below Delta's 168-hour default the session's retention check is switched off for
    this call: readers that opened a version before may lose files they still read."""
    with session_settings(spark, {RETENTION_CHECK: "false"}):
        DeltaTable.forPath(spark, path).vacuum(hours)
