"""The ``binlog`` PySpark data source: binlog files → a DataFrame of row changes (or events).

Options (all optional besides the path):

- ``path`` (what ``load`` is given): a file, a directory, a glob or an
  ``.index`` file; ``load([...])`` takes a list of them.
- ``ranges``: byte ranges of files to read, as JSON ``[[path, start, end], ...]``
  (``end`` null: to the file's end), read after the files of ``path`` (which
  may then be left out). ``start`` is 0 or a transaction start, ``end`` an
  event boundary: how a read goes on from where an earlier one stopped, and
  stops before a partial transaction at the end of an active binlog.
- ``events``: ``rows`` (default; one row per row change) or ``all`` (one row per event).
- ``table``: ``db.table``; row changes of that table only, with ``before`` and
  ``after`` as typed structs, named and typed as the first table map of the
  table in the files says, completed by the schema history.
- ``schema``: where the schema history starts, which gives column names and
  exact values to tables logged without ``binlog_row_metadata=FULL``
  (:mod:`binlogkit.schema.history`, as ``binlogkit.open`` does): by default
  nothing is known at the start of the input and the binlog's own DDL defines
  the tables from there on; a ``.sql`` file of CREATE statements
  (``mariadb-dump --no-data``) or a ``.jsonl`` history file
  (``SchemaHistory(path=...)``) gives the tables as of the start of the
  input; ``none`` leaves the binlog's own columns (``@1``, ``@2`` ...). The
  driver follows the history through the input first, reading only the
  events DDL needs (:func:`binlogkit.schema.scan.catalogs_at`), and each
  partition starts with the definitions in force where it starts.
- ``schemaHistory`` (streams only): a schema history file the stream's driver
  keeps (:mod:`binlogkit.spark.stream_history`); ``table`` takes the table's
  columns from its last version there, when it has one.
- ``splitSize``: bytes per partition on average (``k``/``m``/``g`` suffixes
  allowed). The files are taken as one stream of bytes and cut into
  partitions of about equal work at transaction starts
  (:func:`binlogkit.io.splits.plan_partitions`; the work of a byte range is
  its bytes plus :data:`EVENT_COST` for each event): a big file is cut in
  several, small files share one. Default: about :data:`SPLITS_PER_CORE`
  partitions per core of the session :func:`~binlogkit.spark.register` was
  given, each between 1 MiB and 64 MiB (:func:`partition_count`), so one big
  file or many small ones keep every core busy, in tasks of equal length.
- ``verifyChecksum``: ``true`` (default) or ``false``.
- ``keyFile``: the key file of encrypted binlogs (MariaDB's
  ``file_key_management`` keys or MySQL's ``keyring_file``, as
  ``binlogkit.open(key_file=...)`` takes it); ``filekey``: the secret of an
  encrypted MariaDB key file, or better ``FILE:path`` of a file holding it.
  Only the paths (and ``filekey`` as given) go to the executors, which read
  the key file themselves. An encrypted file is one partition (its events
  are not walked by size), and the schema history decodes it whole. Batch
  reads only: a stream over a folder of encrypted binlogs is refused.
- Replication filters, as a replica's variables of the same names take them
  (:meth:`~binlogkit.pipeline.filters.ReplicationFilter.from_variables`):
  ``replicateDoDb``, ``replicateIgnoreDb``, ``replicateDoTable``,
  ``replicateIgnoreTable``, ``replicateWildDoTable``,
  ``replicateWildIgnoreTable`` (comma-separated lists), ``replicateRewriteDb``
  (``from->to,...``), ``includeRegex``, ``excludeRegex`` (one regex each),
  ``lowerCaseTableNames`` and ``filterFlavor`` (``mariadb``, the default, or
  ``mysql``: whose case rules). The rows are those a replica with these
  options applies; ``db`` is the rewritten name, and so are the ``table``
  option and pushed ``db`` filters.

Filters on ``file``, ``db``, ``table``, ``op`` and ``pos`` are pushed down: files
and splits out of range are not read, table maps of other tables drop their
rows events before the rows are decoded, and rows events of other operations
are skipped whole.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    EqualNullSafe,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    InputPartition,
    LessThan,
    LessThanOrEqual,
)
from pyspark.sql.types import StructType

from binlogkit.binlog.constants import Flavor
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.events import Event
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.errors import BinlogError
from binlogkit.io.binlog_index import resolve_sources
from binlogkit.io.key_files import KeyFile, read_key_file
from binlogkit.io.splits import (
    DEFAULT_SPLIT_SIZE,
    Split,
    plan_partitions,
    plan_splits,
    read_split,
    split_decoder,
)
from binlogkit.pipeline.filters import ReplicationFilter
from binlogkit.schema.history import SchemaHistory
from binlogkit.schema.model import Catalog
from binlogkit.schema.scan import catalogs_at
from binlogkit.schema.seed import seed_from_path
from binlogkit.schema.store import Position
from binlogkit.spark.arrow import change_batches, event_batches
from binlogkit.spark.schema import CHANGE_SCHEMA, EVENT_SCHEMA, typed_columns, typed_schema
from binlogkit.spark.stream_history import last_columns

__all__ = [
    "BinlogDataSource",
    "BinlogPartition",
    "BinlogSourceReader",
    "PushdownBinlogReader",
    "partition_count",
]

MIN_SPLIT_SIZE = 1 << 20
"""The smallest automatic split: below it a task's fixed cost (about 0.1 s) outweighs the gain."""
EVENT_COST = 150
"""What reading an event costs beyond its bytes, in bytes (partitions are cut to equal work).

Fitted on sysbench binlogs, one core: a 4.7 MB partition of OLTP transactions
(29,500 events) took 0.32 s to turn into Arrow row changes, one of bulk inserts
(5.2 MB, 340 events) 0.18 s: about 35 ns a byte and 5.3 µs an event.
"""
SPLITS_PER_CORE = 1
"""Partitions per core by default (each at most :data:`DEFAULT_SPLIT_SIZE`): partitions of equal
work need no spare ones to even out, and a task's fixed cost (an exchange with a Python worker; in
an ingest, 0.1-0.3 s for a Parquet file per table and day) is paid once a core: two per core
made a two-core ingest of a 60 MB archive 8% slower, four per core one of a 75 MB file 25%."""

_SIZE = re.compile(r"(\d+)\s*([kmg]?)i?b?", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
_TEXT_COLUMNS = frozenset({"file", "db", "table", "op"})


def parse_size(text: str, option: str = "splitSize") -> int:
    """``"1048576"``, ``"64m"``, ``"1 GiB"`` → bytes."""
    m = _SIZE.fullmatch(text.strip())
    if m is None or int(m[1]) < 1:
        raise BinlogError(f"{option} must be a positive size such as 67108864 or 64m, not {text!r}")
    return int(m[1]) * _UNITS[m[2].lower()]


def partition_count(total: int, split_size: int | None, parallelism: int | None) -> int:
    """How many partitions ``total`` bytes are cut into.

    With a ``split_size``: enough for partitions of at most that size. Else
    :data:`SPLITS_PER_CORE` per core of ``parallelism``, each between
    :data:`MIN_SPLIT_SIZE` and :data:`DEFAULT_SPLIT_SIZE` bytes (the latter
    alone when the parallelism is unknown).
    """
    most = -(-total // (split_size or DEFAULT_SPLIT_SIZE))
    if split_size or not parallelism:
        return max(1, most)
    return max(1, most, min(SPLITS_PER_CORE * parallelism, total // MIN_SPLIT_SIZE))


def _parse_ranges(text: str) -> list[tuple[str, int, int | None]]:
    """The ``ranges`` option: ``[[path, start, end], ...]`` with ``end`` a number or null."""
    try:
        items = json.loads(text)
        ranges = [
            (str(path), int(start), None if end is None else int(end)) for path, start, end in items
        ]
    except (ValueError, TypeError) as err:
        raise BinlogError(
            f"option ranges must be JSON [[path, start, end], ...], not {text[:80]!r}: {err}"
        ) from None
    return ranges


def _flag(options: dict[str, str], name: str, default: bool) -> bool:
    value = options.get(name)
    if value is None:
        return default
    if value.lower() not in ("true", "false"):
        raise BinlogError(f"option {name} must be true or false, not {value!r}")
    return value.lower() == "true"


@frozen_dataclass
class ReadPlan:
    """What to read and how: plain, picklable data (no files, locks or Spark objects)."""

    ranges: tuple[tuple[str, int, int | None], ...]
    """(path, start, end) of each file to read; end None is the file's end."""
    events: bool = False
    table: tuple[str, str] | None = None
    columns: tuple[ColumnInfo, ...] | None = None
    split_size: int | None = None
    """Bytes per partition at most; None: :func:`partition_count` decides."""
    parallelism: int | None = None
    """The session's default parallelism, for :func:`partition_count`."""
    verify_checksum: bool = True
    rules: ReplicationFilter = field(default_factory=ReplicationFilter)
    """The replication filters; their rewrites name the output's databases."""
    seed: str | None = "auto"
    """Where the schema history starts: ``auto`` (empty), a .sql or .jsonl file; None: off."""
    keep_history: bool = False
    """Whether the DDL of the ranges is appended to ``seed``, a .jsonl history file (the
    ingest's): the driver then follows the history to the end of the ranges."""
    catalog: Catalog | None = None
    """The catalog in force at the start of the ranges (a stream's batch, from the history its
    driver keeps): where the schema history starts instead of ``seed``."""
    key_file: str | None = None
    """The key file of encrypted binlogs, read where they are read (not its keys)."""
    filekey: str | None = None
    """The secret of an encrypted MariaDB key file (or ``FILE:path``)."""

    @classmethod
    def from_options(cls, options: dict[str, str], parallelism: int | None = None) -> ReadPlan:
        opts = {key.lower(): value for key, value in options.items()}
        sources: list[str] = []
        if "paths" in opts:
            sources += json.loads(opts["paths"])
        if "path" in opts:
            sources.append(opts["path"])
        ranges: list[tuple[str, int, int | None]] = [
            (path, 0, None) for path in (resolve_sources(sources) if sources else [])
        ]
        if "ranges" in opts:
            ranges += _parse_ranges(opts["ranges"])
        if not ranges and "url" not in opts:
            raise BinlogError('give the binlog files: spark.read.format("binlog").load(path)')
        events = opts.get("events", "rows").lower()
        if events not in ("rows", "all"):
            raise BinlogError(f"option events must be rows or all, not {events!r}")
        table = None
        if "table" in opts:
            db, dot, name = opts["table"].partition(".")
            if not dot or not db or not name:
                raise BinlogError(f"option table must be db.table, not {opts['table']!r}")
            if events == "all":
                raise BinlogError(
                    "option table gives typed row changes; it cannot go with events=all"
                )
            table = (db, name)
        schema: str | None = opts.get("schema", "auto")
        if schema is not None and schema.lower() in ("auto", "none"):
            schema = None if schema.lower() == "none" else "auto"
        return cls(
            ranges=tuple(ranges),
            events=events == "all",
            table=table,
            split_size=parse_size(opts["splitsize"]) if "splitsize" in opts else None,
            parallelism=parallelism,
            verify_checksum=_flag(opts, "verifychecksum", True),
            rules=ReplicationFilter.from_variables(opts, _flavor(opts)),
            seed=schema,
            key_file=opts.get("keyfile"),
            filekey=opts.get("filekey"),
        )

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(path for path, _, _ in self.ranges))

    def partitions(self, keep: Callable[[str], bool] | None = None) -> list[list[Split]]:
        """The splits of the ranges (of the files ``keep`` accepts), packed into partitions."""
        ranges = [
            (path, start, os.path.getsize(path) if end is None else end)
            for path, start, end in self.ranges
            if keep is None or keep(path)
        ]
        total = sum(end - start for _, start, end in ranges)
        count = partition_count(total, self.split_size, self.parallelism)
        return plan_partitions(ranges, count, event_cost=EVENT_COST)

    def history(self) -> SchemaHistory | None:
        """The schema history at the start of the ranges; None when off (or of no use: the
        events listing shows no column)."""
        if self.seed is None or self.events:
            return None
        if self.catalog is not None:
            return SchemaHistory(self.catalog)
        path, start, _ = self.ranges[0]
        at = Position(path, start)
        if self.keep_history:
            return SchemaHistory.load(self.seed, at=at)
        if self.seed == "auto":
            return SchemaHistory()
        return SchemaHistory(seed_from_path(self.seed, at=at))

    def catalogs(self, splits: Sequence[Split]) -> list[Catalog] | None:
        """The catalog in force at the start of each of ``splits`` (in reading order), from a
        scan of the ranges for their DDL; None when the history is off."""
        history = self.history()
        if history is None:
            return None
        ranges = [
            (path, start, os.path.getsize(path) if end is None else end)
            for path, start, end in self.ranges
        ]
        points = [(split.path, split.start) for split in splits]
        options = DecodeOptions(verify_checksum=self.verify_checksum)
        return catalogs_at(
            ranges, points, history, options=options, whole=self.keep_history, keys=self.keys()
        )

    def keys(self) -> KeyFile | None:
        """The keys of ``key_file``, read now (cryptography is imported for an encrypted one)."""
        if self.key_file is None:
            if self.filekey is not None:
                raise BinlogError("option filekey decrypts a keyFile: give keyFile too")
            return None
        return read_key_file(self.key_file, self.filekey)

    def options(self, pushed: Callable[[str, str], bool] | None = None) -> DecodeOptions:
        """Decoding with the table predicate of the filters, the typed table and ``pushed``."""
        return DecodeOptions(
            verify_checksum=self.verify_checksum,
            tables=_table_predicate(self.rules, self.table, pushed),
        )

    def read(
        self,
        split: Split,
        pushed: Callable[[str, str], bool] | None = None,
        schema: SchemaHistory | None = None,
    ) -> Iterator[Event]:
        """The events of ``split`` the filters keep, renamed by their rewrite rules; ``schema``
        holds the definitions in force at its start."""
        events = read_split(split, self.options(pushed), schema=schema, keys=self.keys())
        return self.rules.filter(events)

    def find_columns(self) -> tuple[ColumnInfo, ...]:
        """The columns of ``table`` at its first row change in the files (its table map's,
        completed by the schema history); an error if none."""
        assert self.table is not None
        db, name = self.table
        history = self.history()
        for path, start, end in self.ranges:
            for split in plan_splits(path, sys.maxsize, start=start, end=end):
                for event in self.read(split, schema=history):
                    if isinstance(event, RowsEvent) and event.table is not None:
                        return event.table.columns
        raise BinlogError(
            f"no row change of {db}.{name} in {len(self.paths)} file(s) from {self.paths[0]}",
            hint="check the table name, or read without the table option",
        )

    def schema(self) -> StructType:
        if self.events:
            return EVENT_SCHEMA
        if self.table is None:
            return CHANGE_SCHEMA
        columns = self.columns if self.columns is not None else self.find_columns()
        return typed_schema(typed_columns(columns, ".".join(self.table)))


@frozen_dataclass
class BinlogPartition(InputPartition):
    """Splits read one after the other: parts of files, whole files, or both, each with the
    catalog in force at its start (None: no schema history)."""

    splits: tuple[Split, ...]
    catalogs: tuple[Catalog, ...] | None = None


# -- pushed-down filters -----------------------------------------------------------------


@dataclass(slots=True)
class Pushed:
    """The filters the reader applies itself: allowed values per text column, a pos range."""

    allowed: dict[str, frozenset[str]] = field(default_factory=dict)
    positions: frozenset[int] | None = None
    low: int = 0
    high: int | None = None

    def take(self, flt: Filter, columns: Iterable[str]) -> bool:
        """Record ``flt`` if it can be applied exactly here; whether it was."""
        attribute: tuple[str, ...] = getattr(flt, "attribute", ())
        if len(attribute) != 1 or attribute[0] not in columns:
            return False
        name = attribute[0]
        value = getattr(flt, "value", None)
        if name in _TEXT_COLUMNS:
            values = _texts(flt, value)
            if values is None:
                return False
            self.allowed[name] = self.allowed.get(name, values) & values
            return True
        if name == "pos":
            return self._take_pos(flt, value)
        return False

    def _take_pos(self, flt: Filter, value: Any) -> bool:
        if isinstance(flt, In):
            numbers = [v for v in value if v is not None]
            if not all(_is_int(v) for v in numbers):
                return False
            found = frozenset(numbers)
            self.positions = found if self.positions is None else self.positions & found
            return True
        if not _is_int(value):
            return False
        if isinstance(flt, EqualTo | EqualNullSafe):
            found = frozenset({value})
            self.positions = found if self.positions is None else self.positions & found
        elif isinstance(flt, GreaterThan | GreaterThanOrEqual):
            self.low = max(self.low, value + (1 if isinstance(flt, GreaterThan) else 0))
        elif isinstance(flt, LessThan | LessThanOrEqual):
            bound = value - (1 if isinstance(flt, LessThan) else 0)
            self.high = bound if self.high is None else min(self.high, bound)
        else:
            return False
        return True

    def pos_ok(self, pos: int) -> bool:
        if pos < self.low or (self.high is not None and pos > self.high):
            return False
        return self.positions is None or pos in self.positions

    def keeps_file(self, path: str) -> bool:
        """Whether the file can hold an event the filters keep (by its name)."""
        files = self.allowed.get("file")
        return files is None or os.path.basename(path) in files

    def keeps_split(self, split: Split) -> bool:
        """Whether the split can hold an event the filters keep (by file name and range)."""
        if not self.keeps_file(split.path):
            return False
        # Events expanded from a transaction payload report the payload's end: ``end`` included.
        if split.end < self.low or (self.high is not None and split.start > self.high):
            return False
        return self.positions is None or any(split.start <= p <= split.end for p in self.positions)

    def row_filter(self) -> Callable[[dict[str, Any]], bool] | None:
        """A check of a row's source values, None when nothing is pushed."""
        if not self.allowed and self.positions is None and not self.low and self.high is None:
            return None
        allowed = tuple(self.allowed.items())
        pos_ok = self.pos_ok

        def keep(values: dict[str, Any]) -> bool:
            return pos_ok(values["pos"]) and all(values[k] in ok for k, ok in allowed)

        return keep

    def table_filter(self) -> Callable[[str, str], bool] | None:
        """The decoder's table predicate from the ``db`` and ``table`` filters."""
        dbs, tables = self.allowed.get("db"), self.allowed.get("table")
        if dbs is None and tables is None:
            return None
        return lambda db, table: (dbs is None or db in dbs) and (tables is None or table in tables)

    def rows_event_filter(self) -> Callable[[RowsEvent], bool] | None:
        """Whether a rows event is worth decoding, by its operation and position."""
        ops = self.allowed.get("op")
        if ops is None and self.positions is None and not self.low and self.high is None:
            return None
        pos_ok = self.pos_ok

        def wanted(event: RowsEvent) -> bool:
            if ops is not None and _op(event) not in ops:
                return False
            return pos_ok(event.header.offset)

        return wanted


def _texts(flt: Filter, value: Any) -> frozenset[str] | None:
    if isinstance(flt, In):
        items = [v for v in value if v is not None]
        return frozenset(items) if all(isinstance(v, str) for v in items) else None
    if isinstance(flt, EqualTo | EqualNullSafe) and isinstance(value, str):
        return frozenset({value})
    return None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _op(event: RowsEvent) -> str:
    if not event.has_before:
        return "c"
    return "u" if event.has_after else "d"


def _table_predicate(
    rules: ReplicationFilter,
    table: tuple[str, str] | None,
    pushed: Callable[[str, str], bool] | None,
) -> Callable[[str, str], bool] | None:
    """The decoder's table predicate: the replication filters, then the typed table (if any)
    and the pushed filters on the names they give (rewritten)."""
    keeps = rules.table_predicate
    if table is None and pushed is None:
        return keeps

    def keep(db: str, name: str) -> bool:
        if keeps is not None and not keeps(db, name):
            return False
        db = rules.renamed_db(db) or db
        return (table is None or (db, name) == table) and (pushed is None or pushed(db, name))

    return keep


def _flavor(options: dict[str, str]) -> Flavor:
    name = options.get("filterflavor", "mariadb").upper()
    if name not in Flavor.__members__:
        raise BinlogError(f"option filterFlavor must be mariadb or mysql, not {name.lower()!r}")
    return Flavor[name]


def _skip_rows_events(
    events: Iterable[Event], wanted: Callable[[RowsEvent], bool]
) -> Iterator[Event]:
    """The events without the rows events ``wanted`` rejects (their rows are never decoded)."""
    for event in events:
        if isinstance(event, RowsEvent) and not wanted(event):
            continue
        yield event


# -- reader and source -------------------------------------------------------------------


class BinlogSourceReader(DataSourceReader):
    """Plans partitions (files and their splits) and decodes one into Arrow batches.

    Holds only plain data, so it pickles cleanly to the executors.
    """

    def __init__(self, plan: ReadPlan, schema: StructType) -> None:
        self.plan = plan
        self.schema = schema
        self.pushed = Pushed()

    def partitions(self) -> list[InputPartition]:
        pushed = self.pushed
        planned = self.plan.partitions(pushed.keeps_file)
        kept = [p for p in ([s for s in ss if pushed.keeps_split(s)] for ss in planned) if p]
        catalogs = self.plan.catalogs([split for splits in kept for split in splits])
        each = None if catalogs is None else iter(catalogs)
        return [
            BinlogPartition(
                tuple(splits), None if each is None else tuple(islice(each, len(splits)))
            )
            for splits in kept
        ]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, BinlogPartition):
            return  # Spark's stand-in when every split was pruned
        catalogs = partition.catalogs or (None,) * len(partition.splits)
        for split, catalog in zip(partition.splits, catalogs, strict=True):
            yield from self._read_split(split, catalog)

    def _read_split(self, split: Split, catalog: Catalog | None) -> Iterator[pa.RecordBatch]:
        plan, pushed = self.plan, self.pushed
        schema = None if catalog is None else SchemaHistory(catalog)
        events: Iterable[Event] = plan.read(split, pushed.table_filter(), schema)
        wanted = pushed.rows_event_filter()
        if wanted is not None:
            events = _skip_rows_events(events, wanted)
        keep = pushed.row_filter()
        if plan.events:
            _, fde = split_decoder(split)
            return event_batches(events, self.schema, format_event=fde, keep=keep)
        typed = None
        if plan.table is not None:
            columns = plan.columns if plan.columns is not None else plan.find_columns()
            typed = (typed_columns(columns, ".".join(plan.table)), ".".join(plan.table))
        return change_batches(events, self.schema, typed=typed, keep=keep)


class PushdownBinlogReader(BinlogSourceReader):
    """The reader with filter pushdown (needs ``spark.sql.python.filterPushdown.enabled``)."""

    def pushFilters(self, filters: list[Filter]) -> Iterable[Filter]:
        columns = set(self.schema.fieldNames())
        for flt in filters:
            if not self.pushed.take(flt, columns):
                yield flt


class BinlogDataSource(DataSource):
    """Format ``binlog``: row changes (or events) of MySQL/MariaDB binlog files."""

    reader_class: type[BinlogSourceReader] = PushdownBinlogReader
    parallelism: int | None = None
    """The session's default parallelism (set by :func:`~binlogkit.spark.register`)."""

    @classmethod
    def name(cls) -> str:
        return "binlog"

    def _plan(self) -> ReadPlan:
        plan: ReadPlan | None = getattr(self, "_read_plan", None)
        if plan is None:
            plan = ReadPlan.from_options(dict(self.options), self.parallelism)
            if plan.table is not None:
                plan = replace(plan, columns=self._columns(plan))
            self._read_plan = plan
        return plan

    def _columns(self, plan: ReadPlan) -> tuple[ColumnInfo, ...]:
        """The typed table's columns: its last version in a stream's schema history, else
        from the files or, for a server stream (option ``url``), the server."""
        assert plan.table is not None
        options = {key.lower(): value for key, value in self.options.items()}
        history = options.get("schemahistory")
        found = None if history is None else last_columns(history, plan.table)
        if found is not None:
            return found
        if "url" not in options:
            return plan.find_columns()
        from binlogkit.spark.server_stream import server_columns

        return server_columns(options["url"], plan.table)

    def schema(self) -> StructType:
        return self._plan().schema()

    def reader(self, schema: StructType) -> DataSourceReader:
        plan = self._plan()
        expected = plan.schema()
        if schema.fieldNames() != expected.fieldNames():
            raise BinlogError(
                "the binlog source has a fixed schema: do not pass .schema(...) to the reader"
            )
        return self.reader_class(plan, expected)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """Micro-batches of a folder of binlogs that grows (:mod:`binlogkit.spark.stream`) or
        of a live server, option ``url`` (:mod:`binlogkit.spark.server_stream`)."""
        options = {key.lower(): value for key, value in self.options.items()}
        limit = options.get("maxbytespertrigger")
        size = None if limit is None else parse_size(limit, "maxBytesPerTrigger")
        plan = self._plan()
        if "schemahistory" in options and plan.seed is None:
            raise BinlogError("option schemaHistory keeps a schema history: not with schema=none")
        if "url" in options:
            from binlogkit.spark.server_stream import server_reader

            return server_reader(plan, options, size)
        if "maxrowspertrigger" in options:
            raise BinlogError(
                "option maxRowsPerTrigger needs a server (url); give maxBytesPerTrigger"
            )
        if "path" not in options:
            raise BinlogError(
                'give the binlog folder: spark.readStream.format("binlog").load(path)'
            )
        if plan.key_file is not None:  # its offsets are found by walking the raw events
            raise BinlogError(
                "option keyFile: a stream over a folder of encrypted binlogs is not supported",
                hint="read them with spark.read (batches), or stream the server (url)",
            )
        from binlogkit.spark.stream import FileStreamReader

        history = options.get("schemahistory")
        return FileStreamReader(plan, plan.schema(), options["path"], size, history)


class PlainBinlogDataSource(BinlogDataSource):
    """Format ``binlog`` without filter pushdown (Spark evaluates every filter)."""

    reader_class = BinlogSourceReader
