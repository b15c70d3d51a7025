"""What a lake holds: ``binlogkit spark status LAKE`` and :func:`status`.

The stream's position is the end offset of the last micro-batch the
checkpoint's commit log holds (read from the checkpoint's files, no query
started); per table, the mirror's row count and the change log's rows and
newest commit time come from the Delta tables; a table's resnapshot, how far it
got, from ``LAKE/_binlogkit/resnapshot.json`` (:mod:`binlogkit.spark.resnapshot`).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import BinlogError
from binlogkit.spark.lake import storage
from binlogkit.spark.lake.storage import LakePath, UriPath, lake_path
from binlogkit.spark.sync_state import LakeLayout, SyncState, batch_offset

__all__ = [
    "LakeStatus",
    "ResnapshotStatus",
    "TableStatus",
    "committed_offset",
    "resnapshot_status",
    "status",
]


@frozen_dataclass
class ResnapshotStatus:
    """How far a table's last resnapshot got."""

    chunks_done: int
    chunks: int
    end: dict[str, Any] | None
    """E' once the resnapshot is done (recorded on the mirror), else None: still reading."""

    def text(self) -> str:
        if self.end is None:
            return f"resnapshot: reading ({self.chunks_done} of {self.chunks} chunks)"
        return f"resnapshot: done, E' {_where(self.end)}"


@frozen_dataclass
class TableStatus:
    """One table of the lake."""

    table: str
    mirror_rows: int | None
    """None: no mirror (a table without a key, or none written yet)."""
    change_rows: int
    last_commit: datetime | None
    """The newest commit time in the change log."""
    resnapshot: ResnapshotStatus | None = None
    """None: the lake's last resnapshot (if any) did not read the table."""


@frozen_dataclass
class LakeStatus:
    """A lake's source, stream position and tables."""

    lake: str
    source: str
    kind: str
    selection: tuple[str, ...] | None
    scd2: bool
    position: dict[str, Any] | None
    """The source offset the last committed micro-batch ended at (None: no batch yet)."""
    batches: int
    tables: tuple[TableStatus, ...]
    snapshot: tuple[int, int] | None = None
    """Groups of chunks the snapshot wrote, of all (None: no snapshot, as for ``apply``)."""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for table in data["tables"]:
            commit = table["last_commit"]
            table["last_commit"] = None if commit is None else commit.isoformat()
        return data

    def text(self) -> str:
        """A few lines for people."""
        where = "none yet" if self.position is None else _where(self.position)
        lines = [f"lake {self.lake}: {self.kind} {self.source}"]
        if self.snapshot is not None:
            done, total = self.snapshot
            lines.append(f"snapshot: {done} of {total} chunk groups written")
        lines.append(f"position: {where}, after {self.batches} micro-batches")
        for t in self.tables:
            mirror = "no mirror" if t.mirror_rows is None else f"{t.mirror_rows:,} rows"
            commit = "-" if t.last_commit is None else t.last_commit.isoformat(sep=" ")
            lines.append(f"  {t.table}: {mirror}, {t.change_rows:,} changes, last commit {commit}")
            if t.resnapshot is not None:
                lines.append(f"    {t.resnapshot.text()}")
        return "\n".join(lines)


def _where(offset: dict[str, Any]) -> str:
    text = f"{offset.get('file')}:{offset.get('pos')}"
    gtid = offset.get("gtid")
    return f"{text} (GTID {gtid})" if gtid else text


def committed_offset(checkpoint: LakePath) -> tuple[int, dict[str, Any] | None]:
    """How many micro-batches the checkpoint committed, and the source offset of the last."""
    commits = [int(name) for name in storage.names(checkpoint / "commits") if name.isdigit()]
    if not commits:
        return 0, None
    last = max(commits)
    return last + 1, batch_offset(checkpoint, last)


def status(lake: str | Path, *, spark: Any = None) -> LakeStatus:
    """The status of ``lake`` (a session with Delta is started when ``spark`` is not given)."""
    layout = LakeLayout(lake_path(lake))
    if spark is None and isinstance(layout.root, UriPath):  # read through the session's JVM
        spark = _session()
    state = SyncState.load(layout.state)
    if state is None:
        raise BinlogError(
            f"{layout.root} is not a binlogkit lake (no {layout.state})",
            hint="give the folder of binlogkit spark sync --to",
        )
    batches, offset = committed_offset(layout.checkpoint)
    names = layout.tables()
    if names and spark is None:
        spark = _session()
    again = resnapshot_status(layout.resnapshot)
    tables = tuple(_table(spark, layout, name, again.get(name)) for name in names)
    return LakeStatus(
        str(layout.root),
        state.source,
        state.kind,
        state.tables,
        state.scd2,
        offset,
        batches,
        tables,
        _snapshot(layout.meta / "snapshot.json"),
    )


def _session() -> Any:
    from binlogkit.spark.lakehouse import lake_session

    return lake_session("local[1]")


def _snapshot(path: LakePath) -> tuple[int, int] | None:
    """How far the snapshot's state file says it got."""
    try:
        state = json.loads(storage.read_text(path) or "")
        return int(state["done"]), len(state["groups"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def resnapshot_status(path: LakePath) -> dict[str, ResnapshotStatus]:
    """Per table (``db.t``) the lake's last resnapshot read, how far it got, as its state
    file ``path`` says (empty: no resnapshot)."""
    text = storage.read_text(path)
    if text is None:
        return {}
    try:
        state = json.loads(text)
        groups, done = state["groups"], int(state["done"])
        end = state["end"] if state.get("marked") else None
        found = {}
        for name, info in state["tables"].items():
            if info["key"]:  # else no mirror, nothing read
                mine = [
                    (n < done, len(g["chunks"])) for n, g in enumerate(groups) if g["table"] == name
                ]
                written = sum(chunks for finished, chunks in mine if finished)
                found[name] = ResnapshotStatus(written, sum(c for _, c in mine), end)
        return found
    except (ValueError, KeyError, TypeError) as err:
        raise BinlogError(f"{path}: not a resnapshot's state ({err!r})") from None


def _table(
    spark: Any, layout: LakeLayout, name: str, again: ResnapshotStatus | None
) -> TableStatus:
    from pyspark.sql import functions as F

    folder = layout.table(name)
    mirror = None
    if storage.is_dir(folder / "mirror" / "_delta_log"):
        mirror = spark.read.format("delta").load(str(folder / "mirror")).count()
    rows, newest = 0, None
    if storage.is_dir(folder / "changes" / "_delta_log"):
        changes = spark.read.format("delta").load(str(folder / "changes"))
        rows, seconds = changes.agg(
            F.count("*"), F.max(F.coalesce("commit_ts", "ts").cast("double"))
        ).first()
        newest = None if seconds is None else datetime.fromtimestamp(seconds, UTC)
    return TableStatus(name, mirror, int(rows), newest, again)
