"""Where a lake keeps its pipeline state, and ``LAKE/_binlogkit/sync.json``.

The sync state names what a lake mirrors: its source (a server's URL without
the password, or a folder of binlogs), the tables selected, whether SCD type 2
history is kept, and the Delta transaction id of its micro-batches. A later
run checks it asks for the same, so one lake never mixes two sources or two
table selections. Plain JSON, written whole to a temporary file and renamed.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict, replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import BinlogError
from binlogkit.protocol.spec import ConnectionSpec
from binlogkit.spark.lake import storage
from binlogkit.spark.lake.storage import LakePath

__all__ = ["LakeLayout", "SyncState", "redact_url", "source_address"]

META = "_binlogkit"
"""The lake's folder of binlogkit's own files, beside the ``db`` folders."""


def batch_offset(checkpoint: LakePath, batch: int) -> dict[str, Any] | None:
    """The source offset a streaming query's ``checkpoint`` records for micro-batch ``batch``
    (where it ends; written before the batch runs), None when it has none."""
    path = checkpoint / "offsets" / str(batch)
    text = storage.read_text(path)
    if text is None:
        return None
    lines = text.splitlines()
    try:  # "v1", the batch's settings, then the source's offset
        offset = json.loads(lines[2])
    except (IndexError, ValueError) as err:
        offset = err
    if not isinstance(offset, dict):
        raise BinlogError(
            f"{path}: not a binlog source's offset ({offset!r})",
            hint="the lake's checkpoint is damaged: restore it, or start a new lake",
        )
    return offset


@frozen_dataclass
class LakeLayout:
    """The paths of a lake (see ``docs/lakehouse.md``): local, or URIs
    (:mod:`binlogkit.spark.lake.storage`)."""

    root: LakePath

    @property
    def meta(self) -> LakePath:
        return self.root / META

    @property
    def history(self) -> LakePath:
        """The schema history (:class:`binlogkit.schema.store.HistoryStore`)."""
        return self.meta / "schema.jsonl"

    @property
    def checkpoint(self) -> LakePath:
        """The Structured Streaming checkpoint of the lake's query."""
        return self.meta / "checkpoint"

    @property
    def state(self) -> LakePath:
        return self.meta / "sync.json"

    @property
    def snapshot(self) -> LakePath:
        """The first snapshot's state (:mod:`binlogkit.spark.snapshot`)."""
        return self.meta / "snapshot.json"

    @property
    def resnapshot(self) -> LakePath:
        """The last resnapshot's state (:mod:`binlogkit.spark.resnapshot`)."""
        return self.meta / "resnapshot.json"

    def snapshot_mirrors(self) -> set[str]:
        """The tables whose mirror the snapshot or a resnapshot wrote (by their states)."""
        found: set[str] = set()
        for path in (self.snapshot, self.resnapshot):
            text = storage.read_text(path)
            tables = {} if text is None else json.loads(text).get("tables", {})
            found.update(name for name, table in tables.items() if table.get("key"))
        return found

    def table(self, name: str) -> LakePath:
        """The folder of ``db.table``: its ``mirror``, ``changes`` and ``history``."""
        db, _, table = name.partition(".")
        return self.root / db / table

    def tables(self) -> list[str]:
        """``db.table`` of every table folder that holds a mirror or a change log."""
        found = []
        for db in sorted(storage.names(self.root)):
            if db == META or db.startswith("."):
                continue
            for table in sorted(storage.names(self.root / db)):
                folder = self.root / db / table
                if any(storage.is_dir(folder / kind) for kind in ("mirror", "changes")):
                    found.append(f"{db}.{table}")
        return found


def redact_url(url: str) -> str:
    """``url`` without its password (``mariadb://user@host``)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    netloc = f"{parts.username}@{host}" if parts.username else host
    return urlunsplit(parts._replace(netloc=netloc))


def source_address(url: str) -> str:
    """Which server a URL reaches: its socket, else host:port (not the user or options)."""
    return ConnectionSpec.from_url(url).address


@frozen_dataclass
class SyncState:
    """What a lake mirrors and how (the content of ``sync.json``)."""

    source: str
    """The server's URL without password, or the binlog folder (absolute)."""
    kind: str
    """``server`` (``sync``) or ``files`` (``apply``)."""
    tables: tuple[str, ...] | None
    """The selected ``db.table`` names; None: every table."""
    scd2: bool = False
    app_id: str = ""
    """The Delta transaction id of the lake's micro-batches (``txnAppId``)."""
    streaming: bool = False
    """Whether the streaming query has started (so its checkpoint must be there)."""

    @classmethod
    def new(cls, source: str, kind: str, tables: tuple[str, ...] | None, scd2: bool) -> SyncState:
        app_id = f"binlogkit-sync-{uuid.uuid4()}"
        return cls(source, kind, tables, scd2, app_id)

    @classmethod
    def load(cls, path: LakePath) -> SyncState | None:
        """The state in ``path``; None when there is none yet."""
        text = storage.read_text(path)
        if text is None:
            return None
        try:
            data: dict[str, Any] = json.loads(text)
            tables = data["tables"]
            return cls(
                str(data["source"]),
                str(data["kind"]),
                None if tables is None else tuple(str(t) for t in tables),
                bool(data["scd2"]),
                str(data["app_id"]),
                bool(data["streaming"]),
            )
        except (ValueError, KeyError, TypeError) as err:
            raise BinlogError(
                f"{path}: not a binlogkit sync state ({err})",
                hint="the lake's state is damaged; start a new lake",
            ) from None

    def save(self, path: LakePath) -> None:
        storage.replace_json(path, asdict(self))

    def started(self) -> SyncState:
        return replace(self, streaming=True)

    def check(self, wanted: SyncState, lake: LakePath, same_source: bool) -> None:
        """Refuse a run of ``lake`` (this state) that asks for something else (``wanted``)."""
        if self.kind != wanted.kind or not same_source:
            raise BinlogError(
                f"lake {lake} mirrors {self.source}, not {wanted.source}",
                hint="give the lake's own source, or a new --to folder for another one "
                "(after a failover to a replica of the lake's server: sync --failover)",
            )
        if self.tables != wanted.tables:
            raise BinlogError(
                f"lake {lake} mirrors tables {_names(self.tables)}, not {_names(wanted.tables)}",
                hint="give the same tables, or a new --to folder for another selection",
            )
        if self.scd2 != wanted.scd2:
            raise BinlogError(
                f"lake {lake} was made {'with' if self.scd2 else 'without'} SCD type 2 history",
                hint=f"run it {'with' if self.scd2 else 'without'} --scd2, or start a new lake",
            )


def _names(tables: tuple[str, ...] | None) -> str:
    return "(all)" if tables is None else ", ".join(tables)
