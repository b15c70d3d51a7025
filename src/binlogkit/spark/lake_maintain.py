"""A lake kept healthy: ``binlogkit spark maintain LAKE`` and :func:`maintain`.

Per table of the lake, its change log, mirror and SCD type 2 history get their
upkeep (:func:`~binlogkit.spark.lake.upkeep.upkeep`: small files compacted, files
no version of the last ``retain_hours`` needs vacuumed). ``sync`` and ``apply``
do the same every ``maintain_every`` minutes, between two micro-batches
(:class:`Schedule`); the command is for a lake no ``sync`` runs on (an OPTIMIZE
beside a batch's MERGE would make one of them fail). See docs/lakehouse.md,
"Maintenance".
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import BinlogError
from binlogkit.spark.lake.storage import lake_path
from binlogkit.spark.lake.tables import exists
from binlogkit.spark.lake.upkeep import DEFAULT_RETAIN_HOURS, Upkept, upkeep
from binlogkit.spark.sync_state import LakeLayout

__all__ = ["KINDS", "Schedule", "TableUpkeep", "maintain", "maintain_tables", "summary"]

KINDS = ("changes", "mirror", "history")
"""The Delta tables of a lake table's folder."""


@frozen_dataclass
class TableUpkeep:
    """One Delta table's upkeep: ``table`` (``db.t``), ``kind`` (:data:`KINDS`), and what
    was done."""

    table: str
    kind: str
    done: Upkept

    def __str__(self) -> str:
        done = self.done
        how = "compacted" if done.compacted else "not compacted"
        return (
            f"{self.table} {self.kind}: {done.files_before:,} -> {done.files_after:,} files "
            f"({how}), {done.seconds:.1f} s"
        )


def maintain(
    lake: str | Path,
    *,
    retain_hours: float = DEFAULT_RETAIN_HOURS,
    tables: Sequence[str] | None = None,
    spark: Any = None,
    master: str | None = None,
    progress: Callable[[TableUpkeep], None] | None = None,
) -> list[TableUpkeep]:
    """Compact and vacuum the Delta tables of ``lake`` (``tables``: only these ``db.t``),
    keeping the files of the last ``retain_hours``; each table's upkeep goes to
    ``progress`` as it ends. Run it while no ``sync`` or ``apply`` writes the lake."""
    layout = LakeLayout(lake_path(lake))
    found = layout.tables()
    chosen = found if not tables else list(tables)
    missing = sorted(set(chosen) - set(found))
    if missing:
        raise BinlogError(
            f"lake {layout.root} has no table {', '.join(missing)}",
            hint=f"its tables: {', '.join(found) or 'none'}",
        )
    if spark is None:
        from binlogkit.spark.lakehouse import lake_session

        spark = lake_session(master)
    return maintain_tables(spark, layout, chosen, retain_hours, progress)


def maintain_tables(
    spark: Any,
    layout: LakeLayout,
    tables: Sequence[str],
    retain_hours: float,
    progress: Callable[[TableUpkeep], None] | None = None,
) -> list[TableUpkeep]:
    """The upkeep of each Delta table of ``tables`` (``db.t``) in ``layout``'s lake."""
    done = []
    for table in tables:
        for kind in KINDS:
            path = layout.table(table) / kind
            if not exists(spark, str(path)):
                continue
            one = TableUpkeep(table, kind, upkeep(spark, str(path), retain_hours))
            if progress is not None:
                progress(one)
            done.append(one)
    return done


def summary(done: Sequence[TableUpkeep], seconds: float) -> str:
    """One line for a round of upkeep: tables, files before and after, seconds."""
    before = sum(d.done.files_before for d in done)
    after = sum(d.done.files_after for d in done)
    compacted = sum(d.done.compacted for d in done)
    return (
        f"maintenance: {len(done)} Delta tables ({compacted} compacted), "
        f"{before:,} -> {after:,} files, {seconds:.1f} s"
    )


class Schedule:
    """The lake's upkeep every ``minutes`` (0: never), the first ``minutes`` after the stream
    starts: :meth:`between_batches` is called by the ``foreachBatch`` function after a batch's
    writes, so no batch write runs beside it."""

    def __init__(
        self,
        spark: Any,
        layout: LakeLayout,
        minutes: float,
        progress: Callable[[str], None] | None = None,
        retain_hours: float = DEFAULT_RETAIN_HOURS,
    ) -> None:
        self.spark = spark
        self.layout = layout
        self.every = minutes * 60.0
        self.progress = progress
        self.retain_hours = retain_hours
        self.next_at = time.monotonic() + self.every

    def between_batches(self) -> None:
        """Run the lake's upkeep if it is due; its summary goes to the progress."""
        if self.every <= 0 or time.monotonic() < self.next_at:
            return
        began = time.monotonic()
        done = maintain_tables(self.spark, self.layout, self.layout.tables(), self.retain_hours)
        ended = time.monotonic()
        self.next_at = ended + self.every
        if self.progress is not None:
            self.progress(summary(done, ended - began))
