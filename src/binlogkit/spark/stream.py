"""Structured Streaming over a folder of binlogs that grows: ``spark.readStream.format("binlog")``.

The folder is what ``binlogkit relay`` writes (or a server's own binlog
folder): binlog files and an index, the last file still being written. An
offset is JSON ``{"origin": name, "file": name, "pos": n}``: ``pos`` is a
transaction boundary of ``file`` (0: its start), so every micro-batch holds
whole transactions; ``origin`` is the query's first file.

The driver keeps the schema history (:mod:`binlogkit.spark.stream_history`;
option ``schemaHistory=PATH`` keeps it in that file, else in a temporary one):
as each batch's end is chosen it records the batch's DDL, read with
:func:`~binlogkit.schema.scan.catalogs_at` (only format descriptions and the
QUERY events that may be DDL), and each partition starts with the catalog in
force at its start. When the history is empty as the driver starts, it is
followed from the start of ``origin`` first (seeded with option ``schema``,
if given), as a batch read of the whole folder would. Option ``table`` takes
the table's columns from the history file's last version when it has one,
else from the table's first table map in the folder.

:meth:`FileStreamReader.latestOffset` costs a listing of the folder (its
index) and :func:`~binlogkit.io.complete.complete_end` of the last file,
which reads only near the file's end. Option ``maxBytesPerTrigger`` caps a
batch's bytes (at least one transaction is taken); ``Trigger.AvailableNow``
reads up to the last complete transaction at the query's start, then stops.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxBytes,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import BinlogError
from binlogkit.io.binlog_index import binlog_order, resolve_sources
from binlogkit.io.complete import complete_end
from binlogkit.schema.history import SchemaHistory
from binlogkit.schema.scan import catalogs_at
from binlogkit.schema.seed import seed_from_path
from binlogkit.schema.store import Position
from binlogkit.spark.source import BinlogSourceReader, ReadPlan
from binlogkit.spark.stream_history import StreamHistory

__all__ = ["FileOffset", "FileStreamReader"]

Range = tuple[str, int, int]


@frozen_dataclass
class FileOffset:
    """Where a micro-batch of a folder stream ends: a transaction boundary of a file."""

    origin: str
    """The query's first file (the schema history is followed from its start)."""
    file: str
    pos: int

    @classmethod
    def load(cls, offset: dict[str, Any]) -> FileOffset:
        return cls(str(offset["origin"]), str(offset["file"]), int(offset["pos"]))

    def dump(self) -> dict[str, Any]:
        return {"origin": self.origin, "file": self.file, "pos": self.pos}

    def key(self) -> tuple[tuple[str, int, str], int]:
        """Stream order: by file (name, then number) and position."""
        return (binlog_order(self.file), self.pos)

    def position(self) -> Position:
        return Position(self.file, self.pos)


class FileStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batches of the whole transactions a folder of binlogs gained; plain data only
    (the driver's schema history is made on first use)."""

    def __init__(
        self,
        plan: ReadPlan,
        schema: StructType,
        source: str,
        max_bytes: int | None = None,
        history_path: str | None = None,
    ) -> None:
        self.plan = plan
        self.schema = schema
        self.source = source
        self.max_bytes = max_bytes
        self.history_path = history_path
        self.target: FileOffset | None = None
        self._history: StreamHistory | None = None

    def _files(self) -> list[str]:
        return resolve_sources(self.source)

    def _find(self, files: Sequence[str], name: str, what: str) -> int:
        """The index of file ``name`` in ``files``; a clear error when it is gone."""
        for index, path in enumerate(files):
            if os.path.basename(path) == name:
                return index
        raise BinlogError(
            f"binlog {name} ({what}) is gone from {self.source}: the position is purged",
            hint="start a new query (a new checkpoint) from a fresh snapshot of the tables",
        )

    def initialOffset(self) -> dict[str, Any]:
        first = os.path.basename(self._files()[0])
        return FileOffset(first, first, 0).dump()

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadAllAvailable() if self.max_bytes is None else ReadMaxBytes(self.max_bytes)

    def prepareForTriggerAvailableNow(self) -> None:
        last = self._files()[-1]
        end = complete_end(last, 0, os.path.getsize(last))
        self.target = FileOffset("", os.path.basename(last), end)

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        begin = FileOffset.load(start)
        budget = limit.max_bytes if isinstance(limit, ReadMaxBytes) else None
        name, pos = self._advance(begin, budget)
        end = FileOffset(begin.origin, name, pos)
        target = self.target
        if target is not None and end.key() > target.key():
            end = max(begin, replace(target, origin=begin.origin), key=FileOffset.key)
        self._keep(begin, end)
        return end.dump()

    def _advance(self, begin: FileOffset, budget: int | None) -> tuple[str, int]:
        """The last transaction boundary after ``begin``, within ``budget`` bytes if given."""
        files = self._files()
        first = self._find(files, begin.file, "where the stream stopped")
        pos, taken = begin.pos, False
        for index in range(first, len(files)):
            path, last = files[index], index == len(files) - 1
            size = os.path.getsize(path)
            end = complete_end(path, pos, size) if last else size
            if budget is not None and end - pos > budget:
                return os.path.basename(path), _cut(path, pos, end, budget, taken)
            if last:
                return os.path.basename(path), end
            if budget is not None:
                budget -= end - pos
            pos, taken = 0, taken or end > pos
        raise AssertionError("unreachable: the loop returns at the last file")

    def _ranges(self, files: Sequence[str], begin: FileOffset, end: FileOffset) -> list[Range]:
        """The non-empty byte ranges from ``begin`` to ``end``."""
        first = self._find(files, begin.file, "where the batch starts")
        stop = self._find(files, end.file, "where the batch ends")
        ranges = []
        for index in range(first, stop + 1):
            path = files[index]
            low = begin.pos if index == first else 0
            high = end.pos if index == stop else os.path.getsize(path)
            if high > low:
                ranges.append((path, low, high))
        return ranges

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        begin, stop = FileOffset.load(start), FileOffset.load(end)
        ranges = self._ranges(self._files(), begin, stop)
        if not ranges:
            return []
        history = self._keep(begin, stop)  # a batch replayed after a restart: kept already?
        catalog = None if history is None else history.catalog_at(begin.position())
        plan = replace(self.plan, ranges=tuple(ranges), catalog=catalog)
        return BinlogSourceReader(plan, self.schema).partitions()

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return BinlogSourceReader(self.plan, self.schema).read(partition)

    def stop(self) -> None:
        if self._history is not None:
            self._history.close()

    def _keep(self, begin: FileOffset, end: FileOffset) -> StreamHistory | None:
        """The schema history with the DDL up to ``end`` recorded; None when it is off (option
        ``schema=none``, or ``events=all``, which shows no column)."""
        if self.plan.seed is None or self.plan.events:
            return None
        history, start = self._history, begin
        if history is None:
            history = self._history = StreamHistory(self.history_path)
            if history.empty:
                self._find(self._files(), begin.origin, "where the schema history starts")
                start = FileOffset(begin.origin, begin.origin, 0)
                if self.plan.seed != "auto":
                    at = start.position()
                    history.seed(seed_from_path(self.plan.seed, at=at), at)
        files = self._files()
        options = DecodeOptions(verify_checksum=self.plan.verify_checksum)

        def scan(schema: SchemaHistory, at: Position) -> None:
            assert at.file is not None
            ranges = self._ranges(files, FileOffset(begin.origin, at.file, at.pos), end)
            catalogs_at(ranges, [], schema, options=options, whole=True)

        history.keep(start.position(), end.position(), scan)
        return history


def _cut(path: str, pos: int, end: int, budget: int, taken: bool) -> int:
    """The last transaction boundary of ``path`` in ``(pos, pos + budget]`` (``end`` at most);
    when there is none and nothing is ``taken`` yet, the first one after ``pos``."""
    window = max(1, budget)
    while pos + window < end:
        cut = complete_end(path, pos, pos + window)
        if cut > pos or taken:
            return cut
        window *= 2
    return end
