"""Reading a Delta table's rows by one text column, from the files and row groups that can hold
them: delta-rs (``deltalake``) for the file list at a version with each file's partition values
and statistics, ``pyarrow.parquet`` for row groups and their statistics.

Not ``pyarrow.dataset``: importing it imports pandas, which doubled the start of a
``binlogkit search`` process.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.search import kernels as pc
from binlogkit.search.arrow import integers, string, strings, truths

__all__ = ["PLACE", "DeltaFiles", "Wanted"]

PLACE = ["_file", "_group", "_row"]
"""Where a row is: its file's number in the table's file list, its row group, its row there."""


@frozen_dataclass
class Wanted:
    """The rows whose ``column`` is one of ``values`` (sorted), or when ``values`` is None, in
    ``[start, stop)`` (``stop`` None: no upper end); every row when ``column`` is None."""

    column: str | None = None
    values: Sequence[str] | None = None
    start: str = ""
    stop: str | None = None

    def may_hold(self, low: str | None, high: str | None) -> bool:
        """Whether a file or row group whose ``column`` spans ``[low, high]`` can hold some."""
        if self.column is None or low is None or high is None:
            return True
        if self.values is not None:
            at = bisect_left(self.values, low)
            return at < len(self.values) and self.values[at] <= high
        return high >= self.start and (self.stop is None or low < self.stop)

    def mask(self, rows: Any) -> Any:
        assert self.column is not None
        values = rows.column(self.column)
        if self.values is not None:
            return pc.is_in(values, value_set=strings(self.values))
        mask = pc.greater_equal(values, string(self.start))
        if self.stop is None:
            return mask
        return pc.and_(mask, pc.less(values, string(self.stop)))


class DeltaFiles:
    """A Delta table at one version: its file list read once, rows read on demand."""

    def __init__(self, path: Path, version: int) -> None:
        table = DeltaTable(str(path), version=version)
        self._root = path
        self.schema = pa.schema(table.schema().to_arrow())
        stream = table.get_add_actions(flatten=True)
        self._files = pa.RecordBatchReader.from_stream(stream).read_all()

    def read(
        self,
        columns: list[str],
        wanted: Wanted,
        partitions: dict[str, set[int]] | None = None,
        coded: Sequence[str] = (),
        *,
        located: bool = False,
    ) -> Any:
        """The ``columns`` of the rows ``wanted``, from the files in ``partitions`` (partition
        column: its values) whose statistics can hold them; the ``coded`` columns (few distinct
        texts: term, table, column) as dictionary arrays, as Parquet stores them, instead of a
        text per row. ``located``: with :data:`PLACE` columns, where each row is, for
        :meth:`read_group`."""
        if self._files.num_rows == 0:
            return self._empty(columns, located)
        names = self._files.column_names
        stats = (f"min.{wanted.column}", f"max.{wanted.column}")
        keys = [f"partition.{name}" for name in partitions or {}]
        parts = []
        for number, file in enumerate(
            self._files.select(["path", *keys, *(s for s in stats if s in names)]).to_pylist()
        ):
            if any(file[f"partition.{n}"] not in v for n, v in (partitions or {}).items()):
                continue
            if wanted.may_hold(file.get(stats[0]), file.get(stats[1])):
                path = self._root / file["path"]
                parts.extend(self._read_file(path, columns, wanted, coded, number, located))
        if not parts:
            return self._empty(columns, located)
        return pa.concat_tables(parts, promote_options="permissive")

    def _empty(self, columns: list[str], located: bool) -> Any:
        """No rows, in one empty chunk per column (``combine_chunks`` of none imports pandas)."""
        schema = pa.schema([self.schema.field(name) for name in columns])
        arrays = [pa.nulls(0, field.type) for field in schema]
        empty = pa.Table.from_batches([pa.RecordBatch.from_arrays(arrays, schema=schema)])
        return _place(empty, 0, [], [], None) if located else empty

    def read_group(self, columns: list[str], file: int, group: int) -> Any:
        """The ``columns`` of row group ``group`` of file number ``file`` (a place that
        :meth:`read` gave)."""
        path = self._root / self._files.column("path")[file].as_py()
        return pq.ParquetFile(path).read_row_group(group, columns=columns)

    def _read_file(
        self,
        path: Path,
        columns: list[str],
        wanted: Wanted,
        coded: Sequence[str],
        number: int,
        located: bool,
    ) -> list[Any]:
        parquet = pq.ParquetFile(path, read_dictionary=coded)
        meta = parquet.metadata
        groups = list(range(meta.num_row_groups))
        if wanted.column is not None and groups:
            first = meta.row_group(0)
            at = [first.column(i).path_in_schema for i in range(first.num_columns)]
            index = at.index(wanted.column)
            groups = [g for g in groups if wanted.may_hold(*_bounds(meta.row_group(g), index))]
        if not groups:
            return []
        rows = parquet.read_row_groups(groups, columns=columns + _extra(columns, wanted))
        kept = None
        if wanted.column is not None:
            mask = wanted.mask(rows)
            rows = pc.filter(rows, mask)
            kept = np.flatnonzero(truths(mask)) if located else None
        rows = rows.select(columns)
        if located:
            sizes = [meta.row_group(g).num_rows for g in groups]
            rows = _place(rows, number, groups, sizes, kept)
        return [rows]


def _place(rows: Any, file: int, groups: list[int], sizes: list[int], kept: Any) -> Any:
    """``rows``, the rows numbered ``kept`` (all when None) of row groups ``groups`` of
    ``sizes`` rows of file number ``file`` read in order, with their :data:`PLACE` columns."""
    starts = np.cumsum([0, *sizes])
    at = np.arange(starts[-1], dtype=np.int64) if kept is None else kept
    index = np.repeat(np.arange(len(sizes)), np.diff(np.searchsorted(at, starts)))
    place = {
        "_file": np.full(len(at), file, dtype=np.int64),
        "_group": np.asarray(groups, dtype=np.int64)[index],
        "_row": at - starts[index],
    }
    for name in PLACE:
        rows = rows.append_column(name, integers(place[name]))
    return rows


def _extra(columns: list[str], wanted: Wanted) -> list[str]:
    """The wanted column when it is not among ``columns`` (to filter on)."""
    return [] if wanted.column is None or wanted.column in columns else [wanted.column]


def _bounds(group: Any, index: int) -> tuple[str | None, str | None]:
    stats = group.column(index).statistics
    if stats is None or not stats.has_min_max:
        return None, None
    return stats.min, stats.max
