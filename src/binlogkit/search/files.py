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
from binlogkit.search.arrow import flags, integers, numbers, string, strings, truths

__all__ = ["PLACE", "Block", "DeltaFiles", "Wanted", "concat", "place"]

PLACE = "_place"
"""Where a row is, as one number: ``file << 44 | group << 24 | row``, its file's number in the
table's file list, its row group and its row there (:func:`place`)."""
_GROUP_SHIFT, _FILE_SHIFT = 24, 44


DOC = "doc"
"""The document number column (docs/search.md, The index)."""


@frozen_dataclass
class Wanted:
    """The rows whose ``column`` is one of ``values`` (sorted texts or numbers), or when
    ``values`` is None, in ``[start, stop)`` (``stop`` None: no upper end); every row when
    ``column`` is None. ``docs``: only rows whose document number is one of these (a sorted
    numpy array), from the files and row groups whose number range holds one of them."""

    column: str | None = None
    values: Sequence[Any] | None = None
    start: str = ""
    stop: str | None = None
    docs: Any = None

    def may_hold(self, low: Any, high: Any) -> bool:
        """Whether a file or row group whose ``column`` spans ``[low, high]`` can hold some."""
        if self.column is None or low is None or high is None:
            return True
        if self.values is not None:
            at = bisect_left(self.values, low)
            return at < len(self.values) and self.values[at] <= high
        return high >= self.start and (self.stop is None or low < self.stop)

    def may_hold_docs(self, low: int | None, high: int | None) -> bool:
        """Whether a file or row group whose numbers span ``[low, high]`` can hold one of
        ``docs``."""
        if self.docs is None or low is None or high is None:
            return True
        at = int(np.searchsorted(self.docs, low))
        return at < len(self.docs) and int(self.docs[at]) <= high

    def mask(self, rows: Any) -> Any:
        assert self.column is not None or self.docs is not None
        mask = None
        if self.column is not None:
            values = rows.column(self.column)
            if self.values is not None:
                mask = pc.is_in(values, value_set=_array(self.values))
            else:
                mask = pc.greater_equal(values, string(self.start))
                if self.stop is not None:
                    mask = pc.and_(mask, pc.less(values, string(self.stop)))
        if self.docs is not None:
            docs = numbers(rows.column(DOC))
            at = np.minimum(np.searchsorted(self.docs, docs), len(self.docs) - 1)
            held = flags(self.docs[at] == docs) if len(self.docs) else flags(docs < 0)
            mask = held if mask is None else pc.and_(mask, held)
        return mask

    @property
    def filters(self) -> bool:
        return self.column is not None or self.docs is not None


@frozen_dataclass
class Block:
    """A row group of a file that may hold wanted rows, with the bounds its statistics give:
    its document numbers' range, its greatest ``tf`` and least ``length`` (which bound the
    BM25 contribution of any of its postings)."""

    file: int
    group: int
    low: int
    high: int
    tf: int
    length: int
    least: Any = None
    """The least and greatest value of the wanted column in it (None: unknown)."""
    greatest: Any = None


def _array(values: Sequence[Any]) -> Any:
    if values and not isinstance(values[0], str):
        return integers(np.asarray(values, dtype=np.int64))
    return strings(values)


class DeltaFiles:
    """A Delta table at one version: its file list read once, rows read on demand."""

    def __init__(self, path: Path, version: int) -> None:
        table = DeltaTable(str(path), version=version)
        self._root = path
        self.schema = pa.schema(table.schema().to_arrow())
        stream = table.get_add_actions(flatten=True)
        self._files = pa.RecordBatchReader.from_stream(stream).read_all()
        self._opened: dict[tuple[int, tuple[str, ...]], Any] = {}
        self._listed: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        self._groups: dict[tuple[int, str | None], list[_Group]] = {}

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
        text per row. ``located``: with the :data:`PLACE` column, where each row is, for
        :meth:`read_groups`."""
        blocks = self.blocks(wanted, partitions)
        return self.read_blocks(blocks, columns, wanted, coded, located=located)

    def blocks(self, wanted: Wanted, partitions: dict[str, set[int]] | None) -> list[Block]:
        """The row groups that may hold the rows ``wanted`` in ``partitions``, with their
        bounds (for tables with ``doc``, ``tf`` and ``length``: ``postings``)."""
        found = []
        for number in self._files_for(wanted, partitions):
            found.extend(self._blocks(number, wanted))
        return found

    def read_blocks(
        self,
        blocks: Sequence[Block],
        columns: list[str],
        wanted: Wanted,
        coded: Sequence[str],
        *,
        located: bool = False,
    ) -> Any:
        """The ``columns`` of the rows ``wanted`` of ``blocks`` (from :meth:`blocks`; only
        their files are opened), as :meth:`read` gives them."""
        by_file: dict[int, list[int]] = {}
        for block in blocks:
            by_file.setdefault(block.file, []).append(block.group)
        parts = []
        for number, groups in sorted(by_file.items()):
            parquet, ordered = self._open(number, coded), sorted(groups)
            pure = self._pure(number, ordered, wanted)
            parts.extend(_read_groups(parquet, number, ordered, columns, wanted, located, pure))
        return concat(parts) if parts else self._empty(columns, located)

    def _path(self, number: int) -> Path:
        return self._root / str(self._files.column("path")[number].as_py())

    def _files_for(self, wanted: Wanted, partitions: dict[str, set[int]] | None) -> list[int]:
        """The numbers of the files in ``partitions`` whose statistics (in the Delta
        log) can hold rows ``wanted``."""
        if self._files.num_rows == 0:
            return []
        names = self._files.column_names
        stats = (f"min.{wanted.column}", f"max.{wanted.column}", f"min.{DOC}", f"max.{DOC}")
        keys = [f"partition.{name}" for name in partitions or {}]
        selected = ("path", *keys, *(s for s in stats if s in names))
        listed = self._listed.get(selected)
        if listed is None:  # the file list as Python values once per set of columns
            listed = self._listed[selected] = self._files.select(list(selected)).to_pylist()
        found = []
        for number, file in enumerate(listed):
            if any(file[f"partition.{n}"] not in v for n, v in (partitions or {}).items()):
                continue
            if wanted.may_hold(file.get(stats[0]), file.get(stats[1])) and wanted.may_hold_docs(
                file.get(stats[2]), file.get(stats[3])
            ):
                found.append(number)
        return found

    def _empty(self, columns: list[str], located: bool) -> Any:
        """No rows, in one empty chunk per column (``combine_chunks`` of none imports pandas)."""
        schema = pa.schema([self.schema.field(name) for name in columns])
        arrays = [pa.nulls(0, field.type) for field in schema]
        empty = pa.Table.from_batches([pa.RecordBatch.from_arrays(arrays, schema=schema)])
        return _place(empty, 0, [], [], None) if located else empty

    def read_groups(self, columns: list[str], file: int, groups: list[int]) -> Any:
        """The ``columns`` of row groups ``groups`` of file number ``file`` (places that
        :meth:`read` gave), in that order."""
        return self._open(file).read_row_groups(groups, columns=columns)

    def group_sizes(self, file: int, groups: list[int]) -> list[int]:
        """The rows of each of row groups ``groups`` of file number ``file``."""
        return [self._stats(file, None)[g].rows for g in groups]

    def _open(self, number: int, coded: Sequence[str] = ()) -> Any:
        """File number ``number`` opened (footer parsed) once per opened table and
        ``coded`` columns; the least recently used closed past :data:`OPEN_FILES`."""
        key = (number, tuple(coded))
        parquet = self._opened.pop(key, None)
        if parquet is None:
            meta = next((f.metadata for (n, _), f in self._opened.items() if n == number), None)
            parquet = pq.ParquetFile(self._path(number), metadata=meta, read_dictionary=coded)
        self._opened[key] = parquet  # the last used at the end
        if len(self._opened) > OPEN_FILES:
            self._opened.pop(next(iter(self._opened))).close()
        return parquet

    def _stats(self, number: int, column: str | None) -> list[_Group]:
        """Each row group's statistics of file number ``number`` (``column``: its range
        too), read from its footer once."""
        found = self._groups.get((number, column))
        if found is None:
            found = _group_stats(self._open(number).metadata, column)
            self._groups[number, column] = found
        return found

    def _blocks(self, number: int, wanted: Wanted) -> list[Block]:
        """The row groups of file number ``number`` whose statistics can hold rows
        ``wanted``."""
        found = []
        for g, group in enumerate(self._stats(number, wanted.column)):
            if wanted.may_hold(group.least, group.greatest) and wanted.may_hold_docs(
                group.low, group.high
            ):
                bounds = _or(group.low, group.high, group.tf, group.length)
                found.append(Block(number, g, *bounds, group.least, group.greatest))
        return found

    def _pure(self, number: int, groups: list[int], wanted: Wanted) -> list[bool]:
        """Which of row groups ``groups`` of file number ``number`` hold only rows ``wanted``
        (their statistics say so: one wanted value in the whole group), which need no mask."""
        if wanted.docs is not None or wanted.column is None or wanted.values is None:
            return [False] * len(groups)
        stats = self._stats(number, wanted.column)
        return [
            stats[g].least is not None
            and stats[g].least == stats[g].greatest
            and wanted.may_hold(stats[g].least, stats[g].greatest)
            for g in groups
        ]


OPEN_FILES = 128
"""Parquet files a :class:`DeltaFiles` keeps open (footers parsed) between reads."""


@frozen_dataclass
class _Group:
    """A row group's statistics: its rows, document numbers' range, greatest ``tf``, least
    ``length``, and one column's range (None: unknown)."""

    rows: int
    low: Any
    high: Any
    tf: Any
    length: Any
    least: Any
    greatest: Any


def _group_stats(meta: Any, column: str | None) -> list[_Group]:
    """The statistics of each row group of a file (its metadata), with ``column``'s range."""
    if meta.num_row_groups == 0:
        return []
    first = meta.row_group(0)
    at = {first.column(i).path_in_schema: i for i in range(first.num_columns)}
    found = []
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        span = _bounds(group, at[column]) if column is not None else (None, None)
        low, high = _bounds(group, at[DOC]) if DOC in at else (None, None)
        tf = _bounds(group, at["tf"])[1] if "tf" in at else None
        length = _bounds(group, at["length"])[0] if "length" in at else None
        found.append(_Group(group.num_rows, low, high, tf, length, *span))
    return found


def _or(low: Any, high: Any, tf: Any, length: Any) -> tuple[int, int, int, int]:
    """Bounds that hold whatever the statistics left out: the widest ones."""
    big = 1 << 62
    return (
        -1 if low is None else low,
        big if high is None else high,
        big if tf is None else tf,
        0 if length is None else length,
    )


def _read_groups(
    parquet: Any,
    number: int,
    groups: list[int],
    columns: list[str],
    wanted: Wanted,
    located: bool,
    pure: list[bool],
) -> list[Any]:
    """The ``columns`` of the rows ``wanted`` of row groups ``groups`` of a file (those
    ``pure`` hold only rows wanted)."""
    if not groups:
        return []
    extra = [c for c in (wanted.column, DOC if wanted.docs is not None else None) if c]
    rows = parquet.read_row_groups(groups, columns=list(dict.fromkeys([*columns, *extra])))
    meta = parquet.metadata
    sizes = [meta.row_group(g).num_rows for g in groups]
    kept = None
    if wanted.filters and not all(pure):
        rows, kept = _filtered(rows, sizes, pure, wanted)
        kept = kept if located else None
    rows = rows.select(columns)
    if located:
        rows = _place(rows, number, groups, sizes, kept)
    return [rows]


def _filtered(rows: Any, sizes: list[int], pure: list[bool], wanted: Wanted) -> tuple[Any, Any]:
    """``rows`` (row groups of ``sizes`` rows read in order) with the rows wanted only, the
    groups that are ``pure`` kept whole and the others masked; and the numbers of the rows
    kept."""
    if not any(pure):  # one mask for all
        mask = wanted.mask(rows)
        return pc.filter(rows, mask), np.flatnonzero(truths(mask))
    parts, kept, start = [], [], 0
    for size, whole in zip(sizes, pure, strict=True):
        part = rows.slice(start, size)
        if whole:
            kept.append(np.arange(start, start + size, dtype=np.int64))
        else:
            mask = wanted.mask(part)
            part = pc.filter(part, mask)
            kept.append(start + np.flatnonzero(truths(mask)))
        if part.num_rows:
            parts.append(part)
        start += size
    out = pa.concat_tables(parts) if parts else pc.filter(rows, flags(np.zeros(len(rows), bool)))
    return out, np.concatenate(kept) if kept else np.empty(0, dtype=np.int64)


def concat(parts: Sequence[Any]) -> Any:
    """Tables read from the same table in one (an empty one may have plain text columns where
    the others have dictionary ones: left out)."""
    held = [part for part in parts if part.num_rows] or list(parts[:1])
    return held[0] if len(held) == 1 else pa.concat_tables(held, promote_options="permissive")


def _place(rows: Any, file: int, groups: list[int], sizes: list[int], kept: Any) -> Any:
    """``rows``, the rows numbered ``kept`` (all when None) of row groups ``groups`` of
    ``sizes`` rows of file number ``file`` read in order, with their :data:`PLACE` column."""
    if max(sizes, default=0) >= 1 << _GROUP_SHIFT or max(groups, default=0) >= 1 << 20:
        raise ValueError(f"file {file}: a row group of {max(sizes):,} rows or number too large")
    starts = np.cumsum([0, *sizes])[:-1]
    firsts = (file << _FILE_SHIFT) + (np.asarray(groups, dtype=np.int64) << _GROUP_SHIFT)
    # each row's place: its group's first place, plus its number in the file read, less the
    # number of its group's first row
    places = np.repeat(firsts - starts, sizes) + np.arange(sum(sizes), dtype=np.int64)
    return rows.append_column(PLACE, integers(places if kept is None else places[kept]))


def place(places: Any) -> tuple[Any, Any, Any]:
    """The file numbers, row groups and rows of :data:`PLACE` numbers (a numpy array)."""
    group_mask = (1 << (_FILE_SHIFT - _GROUP_SHIFT)) - 1
    return (
        places >> _FILE_SHIFT,
        (places >> _GROUP_SHIFT) & group_mask,
        places & ((1 << _GROUP_SHIFT) - 1),
    )


def _bounds(group: Any, index: int) -> tuple[Any, Any]:
    stats = group.column(index).statistics
    if stats is None or not stats.has_min_max:
        return None, None
    return stats.min, stats.max
