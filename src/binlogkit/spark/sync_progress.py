"""Progress of a lake's streaming query: rows per second and lag behind the source.

The ``foreachBatch`` function notes each applied micro-batch in a
:class:`BatchLog` (rows, newest commit time, when it became visible); the
driver's loop pairs each note with the query's progress report, whose source
end offset says how far the batch read, and measures the bytes still to read:
the server's binlog sizes (``SHOW BINARY LOGS``) or the folder's files after
that offset.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable
from datetime import datetime

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.io.binlog_index import binlog_order, resolve_sources
from binlogkit.io.mysql import MySQLConnection
from binlogkit.protocol.spec import ConnectionSpec

__all__ = [
    "AppliedBatch",
    "BatchLog",
    "StreamProgress",
    "bytes_behind",
    "describe",
    "file_sizes",
]

Sizes = list[tuple[str, int]]
"""(binlog file name, size) of the source's files."""


@frozen_dataclass
class AppliedBatch:
    """What the ``foreachBatch`` function saw of one micro-batch."""

    batch: int
    rows: int
    seconds: float
    """How long the apply took."""
    newest_commit: datetime | None
    """The commit time of the batch's last transaction (None: no row change)."""
    applied_at: datetime
    """When the batch's changes became visible in the lake (UTC)."""


@frozen_dataclass
class StreamProgress:
    """One applied micro-batch, as the progress callback gets it."""

    batch: int
    rows: int
    seconds: float
    position: str
    """Where the batch ended in the source (``file:pos``)."""
    lag_seconds: float | None
    """From the batch's newest commit on the source to its changes visible in the lake."""
    lag_bytes: int | None
    """Binlog bytes the source had written beyond the batch's end when it was applied."""
    applied_at: datetime
    """When the batch's changes became visible in the lake (UTC)."""

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0

    def __str__(self) -> str:
        lag = [] if self.lag_seconds is None else [f"{self.lag_seconds:.1f} s"]
        lag += [] if self.lag_bytes is None else [f"{self.lag_bytes:,} bytes"]
        behind = f", lag {', '.join(lag)}" if lag else ""
        return (
            f"batch {self.batch}: {self.rows:,} row changes in {self.seconds:.1f} s "
            f"({self.rows_per_second:,.0f} rows/s), at {self.position}{behind}"
        )


class BatchLog:
    """The batches applied and not reported yet (written by ``foreachBatch``, which Spark runs
    on a thread of its own)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[int, AppliedBatch] = {}

    def add(self, batch: AppliedBatch) -> None:
        with self._lock:
            self._waiting[batch.batch] = batch

    def report(
        self, reports: Iterable[dict[str, object]], sizes: Callable[[], Sizes]
    ) -> list[StreamProgress]:
        """The progress of the batches both noted and in ``reports`` (the query's progress
        reports as JSON objects), each reported once; ``sizes`` is asked once if any."""
        ends: dict[int, tuple[str, int]] = {}
        for report in reports:
            end = _end_offset(report)
            batch = report.get("batchId")
            if end is not None and isinstance(batch, int):
                ends[batch] = end
        with self._lock:
            ready = [self._waiting.pop(b) for b in sorted(self._waiting) if b in ends]
        if not ready:
            return []
        known = sizes()
        out = []
        for done in ready:
            file, pos = ends[done.batch]
            lag = None
            if done.newest_commit is not None:
                lag = max(0.0, (done.applied_at - done.newest_commit).total_seconds())
            position = f"{file}:{pos}"
            behind = bytes_behind(known, file, pos) if known else None
            out.append(
                StreamProgress(
                    done.batch, done.rows, done.seconds, position, lag, behind, done.applied_at
                )
            )
        return out


def _end_offset(report: dict[str, object]) -> tuple[str, int] | None:
    """The (file, pos) where the report's batch ended; None for a report of a trigger that
    ran no batch (no ``addBatch`` time), which carries the next batch's id."""
    durations = report.get("durationMs")
    if not isinstance(durations, dict) or "addBatch" not in durations:
        return None
    sources = report.get("sources")
    if not isinstance(sources, list) or not sources:
        return None
    end = sources[0].get("endOffset") if isinstance(sources[0], dict) else None
    if isinstance(end, str):
        end = json.loads(end)
    if not isinstance(end, dict) or "file" not in end or "pos" not in end:
        return None
    return str(end["file"]), int(end["pos"])


def bytes_behind(sizes: Sizes, file: str, pos: int) -> int:
    """The bytes of ``sizes``'s files after ``pos`` of ``file``."""
    here = binlog_order(file)
    total = 0
    for name, size in sizes:
        order = binlog_order(name)
        if order == here:
            total += max(0, size - pos)
        elif order > here:
            total += size
    return total


def file_sizes(source: str) -> Callable[[], Sizes]:
    """How to list the files of a stream source: a server URL (``SHOW BINARY LOGS``) or a
    folder of binlogs."""
    if "://" not in source:
        return lambda: [(os.path.basename(p), os.path.getsize(p)) for p in resolve_sources(source)]

    def server() -> Sizes:
        with MySQLConnection.connect(ConnectionSpec.from_url(source)) as conn:
            rows = conn.query("SHOW BINARY LOGS").rows
        return [(str(row[0]), int(str(row[1]))) for row in rows if row[0] is not None]

    return server


def describe(progress: object) -> str:
    """A progress line: a snapshot table's (rows, share of the server's estimate, rows/s), a
    micro-batch's, or a note."""
    table, rows = getattr(progress, "table", None), getattr(progress, "rows", None)
    total, rate = getattr(progress, "total", None), getattr(progress, "rows_per_second", None)
    if isinstance(table, str) and isinstance(rows, int) and isinstance(total, int):
        share = f" ({min(100, 100 * rows // total)}% of ~{total:,})" if total > 0 else ""
        speed = f", {rate:,.0f} rows/s" if isinstance(rate, float | int) else ""
        return f"snapshot {table}: {rows:,} rows{share}{speed}"
    return str(progress)
