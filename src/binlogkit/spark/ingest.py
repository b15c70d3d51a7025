"""Binlog files into an append-only change-log table in Parquet, each change exactly once.

:func:`ingest` decodes binlog files in Spark tasks and appends their row
changes (the ``binlog`` source's default schema plus a ``date`` column) to a
plain Parquet table partitioned by ``db``, ``table`` and ``date`` (the UTC day
of the event timestamp ``ts``). Each task decodes its partition (the data
source's partitions of equal work) and writes the Parquet files itself
(:mod:`binlogkit.spark.changelog_files`): the rows go from the decoder's Arrow
batches to Parquet in the Python worker, without the trip through the JVM that
Spark's own writer would need. A ledger inside the lake records what was read,
so a re-run on a grown archive adds only what is new. Layout of ``LAKE``::

    changes/db=D/table=T/date=YYYY-MM-DD/batch-<id>-part-*.parquet   the table
    _binlogkit/ledger/<id>.json      one record per committed batch
    _binlogkit/staging/<id>/         a batch as its tasks wrote it, before its commit
    _binlogkit/lake.json             the table filter the lake was made with, schemas on or off
    _binlogkit/schema.jsonl          the schema history: table definitions by binlog position
    _binlogkit/lock                  held (flock) by the ingest running on the lake

Read the table with :func:`read_change_log` (explicit partition types) or
``spark.read.parquet("LAKE/changes")``.

Schemas. Rows logged without ``binlog_row_metadata=FULL`` get their column
names and exact values from the lake's schema history
(:mod:`binlogkit.schema.store`), as ``binlogkit.open`` gives them: before a
batch is read, the driver follows the history from the batch's start (as of
which the file gives the definitions) through the batch's DDL
(:func:`binlogkit.schema.scan.catalogs_at`), appending each change, and every
partition starts with the definitions in force there. The file is appended
to, never rewritten, and a change read again is not recorded twice, so a
batch rolled back (below) and read again leaves it as it was; a line a crash
cut short is dropped. A lake's first ingest may seed the history with a
schema file (the tables created before its first binlog).

Commit protocol. The files to read are cut into batches; batch ``<id>`` (a
sequence number and a random tag) goes through these steps, and the ledger
record is its single commit point:

1. The batch's tasks write its rows under ``staging/<id>/`` (hidden from
   readers of ``changes/``), each task attempt into files of its own name.
2. Each staged Parquet file that a finished task reported is fsynced and
   renamed into ``changes/`` with the batch id in its name (a rename within
   one filesystem is atomic); files of failed attempts stay behind.
3. The ledger record (files with their byte ranges, size and checksums; data
   files; row count) is written to a temporary name, fsynced and renamed to
   ``ledger/<id>.json``: the batch is committed.
4. ``staging/<id>/`` is removed.

An ingest holds ``lock`` while it runs and starts by rolling back what an
interrupted run left: for each ``staging/<id>`` whose id has no ledger record
it deletes the ``changes/`` files of that batch, then it clears the staging
area and temporary ledger files. A process killed at any moment therefore
leaves either a committed batch (its files all in place, the ledger saying so)
or one that the next run removes and reads again: no change is lost or doubled.
Readers that run while an ingest is moving a batch can see that batch in part.

Files. The ledger key of a file is its absolute path; per file it keeps the
byte range read so far ``[0, end)``, the SHA-256 of those bytes and of the
first 4 KiB (both as if the BINLOG_IN_USE flag of the format description were
clear: a server clears it in place when it closes the file). A file of the
recorded size (with the same first 4 KiB) is done; one that grew is read on
from ``end`` once its first ``end`` bytes still hash the same; one that shrank
or changed stops the ingest with an error, since binlogs only grow. The newest
file of each ``name.NNNNNN`` sequence may be the server's active binlog, so it
is read only up to the end of its last complete transaction: up to its last
event when that is a ROTATE, STOP, XID or TRANSACTION_PAYLOAD, otherwise up to
the start of its last transaction (a GTID event); the rest waits for the next
run. Older files of a sequence were closed by the server and are read whole.
(Without GTID events, as in MySQL before 5.7, an open file waits until it is
closed.)

A batch reads the byte range of each file, so the bytes a server writes after
``end`` are never read, and a grown file is decoded from ``start`` on.

Cluster use: ``LAKE`` must be one POSIX path that the driver and every
executor see (a local disk for ``local[N]``, a shared mount on a cluster), and
the binlog files must be readable at the same paths on the executors. The
tasks run as an RDD job, so the session must be a classic one (not Spark
Connect).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import InputPartition

from binlogkit.binlog.constants import MAGIC, EventFlag, EventType
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.header import (
    FLAGS_OFFSET,
    TYPE_CODE_OFFSET,
)
from binlogkit.errors import BinlogError
from binlogkit.io.atomic import replace_json, sync_file, sync_folder
from binlogkit.io.binlog_index import Source, binlog_order, resolve_sources, split_binlog_name
from binlogkit.io.complete import complete_end
from binlogkit.schema.model import Catalog
from binlogkit.schema.seed import seed_from_path
from binlogkit.schema.store import HistoryStore, Position
from binlogkit.spark import session_parallelism
from binlogkit.spark.changelog_files import PARTITIONS, ChangeLogWriter
from binlogkit.spark.schema import CHANGE_SCHEMA
from binlogkit.spark.source import BinlogSourceReader, ReadPlan

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "IngestProgress",
    "IngestReport",
    "TaskWatch",
    "ingest",
    "read_change_log",
    "spark_session",
]

log = logging.getLogger(__name__)

CHANGES = "changes"
META = "_binlogkit"
HEAD_BYTES = 4096
DEFAULT_BATCH_BYTES = 512 << 20
READ_CHUNK = 8 << 20
_FSYNC_THREADS = 8
CRASH_ENV = "BINLOGKIT_INGEST_CRASH"
"""Test hook: ``STEP:N`` kills the process (SIGKILL) at STEP of the N-th batch of a run.

STEP is ``staged`` (Spark wrote the batch), ``moved`` (one file moved into the
table) or ``committed`` (ledger record written, staging not yet removed).
"""

_FDE_TYPE = len(MAGIC) + TYPE_CODE_OFFSET
_FDE_FLAGS = len(MAGIC) + FLAGS_OFFSET  # the low byte of the first event's flags
_DATA_FILE = re.compile(r"^batch-(\d{8}-[0-9a-f]{8})-")
_LEDGER_FILE = re.compile(r"^(\d{8}-[0-9a-f]{8})\.json$")


@frozen_dataclass
class Span:
    """The bytes ``[start, end)`` of one file to ingest, with the checksums of ``[0, end)``."""

    path: str
    start: int
    end: int
    size: int
    sha256: str
    head: str

    @property
    def name(self) -> str:
        return os.path.basename(self.path)


@frozen_dataclass
class IngestProgress:
    """Where a run is, handed to the ``progress`` callback during and after each batch.

    ``files_done`` and ``rows`` count committed batches. While Spark writes a
    batch, ``tasks_done``/``tasks_total`` are the finished and planned tasks of
    its jobs (about one per split); between batches they are None.
    """

    files_done: int
    files_total: int
    rows: int
    seconds: float
    tasks_done: int | None = None
    tasks_total: int | None = None

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0

    def __str__(self) -> str:
        text = f"files {self.files_done}/{self.files_total}"
        if self.tasks_total is not None:
            text += f", next batch: Spark tasks {self.tasks_done}/{self.tasks_total}"
        return f"{text}, {self.rows} rows, {self.rows_per_second:,.0f} rows/s, {self.seconds:.0f} s"


class TaskWatch:
    """Reports the tasks of one Spark job group from a thread, every ``interval`` seconds.

    Use as a context manager around the jobs: it sets the job group, polls
    Spark's status tracker, and reports a last time when the jobs are done.
    Without a SparkContext (Spark Connect) it reports nothing.
    """

    def __init__(
        self, spark: SparkSession, group: str, report: Callable[[int, int], None], interval: float
    ) -> None:
        self._group = group
        self._report = report
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"ingest-progress-{group}")
        self._thread.daemon = True
        try:
            self._context: Any = spark.sparkContext
        except Exception:  # Spark Connect
            self._context = None

    def __enter__(self) -> TaskWatch:
        if self._context is not None:
            self._context.setJobGroup(self._group, f"binlogkit ingest batch {self._group}")
            self._thread.start()
        return self

    def __exit__(self, kind: object, *_: object) -> None:
        if self._context is None:
            return
        self._stop.set()
        self._thread.join()
        self._context.setLocalProperty("spark.jobGroup.id", None)
        self._context.setLocalProperty("spark.job.description", None)
        if kind is None:
            self._poll()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._poll()
            except Exception:  # progress must never break the ingest
                log.debug("cannot poll Spark's status tracker", exc_info=True)

    def _poll(self) -> None:
        tracker = self._context.statusTracker()
        done = total = 0
        for job in tracker.getJobIdsForGroup(self._group):
            info = tracker.getJobInfo(job)
            for stage in info.stageIds if info is not None else ():
                stage_info = tracker.getStageInfo(stage)
                if stage_info is not None:
                    done += stage_info.numCompletedTasks
                    total += stage_info.numTasks
        if total:
            self._report(done, total)


@dataclass(slots=True)
class IngestReport:
    """What a run did: batches committed, files read (in part or whole), rows added."""

    batches: list[str] = field(default_factory=list)
    files: int = 0
    rows: int = 0
    skipped: int = 0
    rolled_back: list[str] = field(default_factory=list)
    seconds: float = 0.0


class Lake:
    """The folders of a lake and its ledger; see the module docstring."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).absolute()
        self.table = self.root / CHANGES
        self.meta = self.root / META
        self.ledger_dir = self.meta / "ledger"
        self.staging = self.meta / "staging"
        self.history = self.meta / "schema.jsonl"
        self.records: dict[str, dict[str, Any]] = {}
        self.run_batches = 0

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the lake's lock; a second ingest on the same lake fails at once."""
        self.ledger_dir.mkdir(parents=True, exist_ok=True)
        self.staging.mkdir(parents=True, exist_ok=True)
        with open(self.meta / "lock", "a+") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise BinlogError(
                    f"another ingest is running on {self.root}",
                    hint="wait for it to end; its lock is " + str(self.meta / "lock"),
                ) from None
            yield

    def load(self) -> None:
        """Read every committed batch record."""
        self.records = {}
        if not self.ledger_dir.is_dir():
            return
        for entry in sorted(self.ledger_dir.iterdir()):
            m = _LEDGER_FILE.match(entry.name)
            if m:
                self.records[m[1]] = json.loads(entry.read_text())

    def files(self) -> dict[str, dict[str, Any]]:
        """Per file path, the ledger entry with the furthest end."""
        done: dict[str, dict[str, Any]] = {}
        for record in self.records.values():
            for item in record["files"]:
                known = done.get(item["path"])
                if known is None or item["end"] > known["end"]:
                    done[item["path"]] = item
        return done

    def check_config(self, tables: Sequence[str], schemas: bool = True) -> None:
        """Tie the lake to its table filter and to whether it tracks schemas: a later run must
        do the same (lakes made before schemas were tracked track them from now on)."""
        config = self.meta / "lake.json"
        wanted = sorted(set(tables))
        if config.exists():
            stored = {"schemas": True, **json.loads(config.read_text())}
            if stored["tables"] != wanted:
                raise BinlogError(
                    f"the lake {self.root} holds tables {stored['tables'] or 'all'}, "
                    f"not {wanted or 'all'}",
                    hint="give the same --table options as the first ingest, or a new lake",
                )
            if stored["schemas"] != schemas:
                raise BinlogError(
                    f"the lake {self.root} was made "
                    + ("with a schema history" if stored["schemas"] else "with --schema none"),
                    hint="read all of a lake's files alike: --schema none always or never",
                )
        else:
            replace_json(config, {"format": 1, "tables": wanted, "schemas": schemas})

    def schema_history(self, seed: str | os.PathLike[str] | None, first: str) -> str | None:
        """The lake's schema history file, seeded for a new lake (no batch committed yet) from
        ``seed`` at the start of ``first``, its first file; None when ``seed`` is None (off)."""
        if seed is None:
            return None
        if self.records:
            if seed != "auto":
                raise BinlogError(
                    f"the lake {self.root} has followed its schema history since its first "
                    "ingest: a schema file seeds a new lake only",
                    hint=f"leave out the schema file; the history is {self.history}",
                )
            return str(self.history)
        self.history.unlink(missing_ok=True)  # a first run that committed nothing left it
        if seed != "auto":
            at = Position(first, 0)
            HistoryStore(self.history).record(at, Catalog(), seed_from_path(seed, at=at))
        return str(self.history)

    def recover(self) -> list[str]:
        """Roll back batches an interrupted run left uncommitted; returns their ids."""
        rolled_back = [
            entry.name
            for entry in self.staging.iterdir()
            if entry.name not in self.records and not entry.name.startswith(".")
        ]
        if rolled_back:
            doomed = set(rolled_back)
            for folder, _, names in os.walk(self.table):
                for name in names:
                    m = _DATA_FILE.match(name)
                    if m and m[1] not in self.records:
                        doomed.add(m[1])
                        os.unlink(os.path.join(folder, name))
            _remove_empty_folders(self.table)
            log.warning("rolled back uncommitted batches %s", ", ".join(sorted(doomed)))
        for entry in self.staging.iterdir():
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
        for entry in self.ledger_dir.iterdir():
            if entry.name.startswith("."):
                entry.unlink()
        return sorted(rolled_back)

    def new_batch_id(self) -> str:
        """The id of the next batch: a sequence number and a random tag."""
        self.run_batches += 1
        last = max((int(batch[:8]) for batch in self.records), default=0)
        return f"{last + 1:08d}-{secrets.token_hex(4)}"

    def publish(self, batch: str, files: Sequence[str]) -> list[str]:
        """Move a batch's staged ``files`` into the table (step 2); returns the table-relative
        paths. Only the files the batch's tasks reported: a failed attempt's are left behind.
        """
        staged = self.staging / batch
        moves = [
            (staged / path, self.table / Path(path).parent / f"batch-{batch}-{Path(path).name}")
            for path in sorted(files)
        ]
        # fsync waits on the disk, not the CPU: the files (then the folders) all at once.
        with ThreadPoolExecutor(_FSYNC_THREADS, thread_name_prefix="ingest-fsync") as pool:
            list(pool.map(sync_file, [source for source, _ in moves]))
            for source, target in moves:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.rename(source, target)
                _crash_point("moved", self.run_batches)
            list(pool.map(sync_folder, {target.parent for _, target in moves}))
        return [str(target.relative_to(self.table)) for _, target in moves]

    def commit(self, batch: str, record: dict[str, Any]) -> None:
        """Write the ledger record of a batch (step 3) and drop its staging folder (step 4)."""
        replace_json(self.ledger_dir / f"{batch}.json", record)
        self.records[batch] = record
        _crash_point("committed", self.run_batches)
        shutil.rmtree(self.staging / batch, ignore_errors=True)


def ingest(
    spark: SparkSession,
    source: Source,
    lake: str | os.PathLike[str],
    *,
    tables: Sequence[str] = (),
    batch_bytes: int = DEFAULT_BATCH_BYTES,
    split_size: int | None = None,
    progress: Callable[[IngestProgress], None] | None = None,
    progress_interval: float = 5.0,
    schema: str | os.PathLike[str] | None = "auto",
) -> IngestReport:
    """Append the row changes of ``source`` not yet in ``lake`` to its change-log table.

    ``source`` names binlog files as :func:`~binlogkit.io.binlog_index.resolve_sources`
    reads them (paths, a directory, an index file, a glob, a list). ``tables``
    (``db.table`` names) keeps only those tables' changes; a lake keeps the
    filter it was made with. Files are read in batches of about ``batch_bytes``
    bytes, each committed on its own (see the module docstring). A batch's files
    are cut into partitions of equal work, ``split_size`` bytes each on average (the data
    source's ``splitSize``); by default one per core of the session, between 1 and 64 MiB
    (:func:`~binlogkit.spark.source.partition_count`). ``progress`` is called
    after each batch and every ``progress_interval`` seconds while Spark writes one.
    ``schema`` seeds the schema history of a new lake (the source's option ``schema``: a
    .sql or .jsonl file; ``"auto"``: the binlogs' own DDL alone); None turns it off.
    """
    wanted = _parse_tables(tables)
    names = resolve_sources(source)
    if "-" in names:
        raise BinlogError("ingest reads files, not stdin", hint="save the input to a file first")
    paths = [os.path.abspath(path) for path in names]
    store = Lake(lake)
    report = IngestReport()
    started = time.perf_counter()
    with store.locked():
        store.load()
        store.check_config(tables, schema is not None)
        report.rolled_back = store.recover()
        done = store.files()
        pending = _pending(paths, done)
        history = store.schema_history(schema, pending[0][0]) if pending else None
        report.skipped = len(paths) - len(pending)
        log.info("%d files to read, %d already ingested", len(pending), report.skipped)

        def show(tasks_done: int | None = None, tasks_total: int | None = None) -> None:
            if progress is not None:
                elapsed = time.perf_counter() - started
                files, rows = report.files, report.rows
                progress(
                    IngestProgress(files, len(pending), rows, elapsed, tasks_done, tasks_total)
                )

        for batch in _batches(pending, done, batch_bytes):
            extents = [
                (path, ext) for path, closed in batch if (ext := _extent(path, closed, done))
            ]
            if extents:
                batch_id = store.new_batch_id()
                watch = TaskWatch(spark, batch_id, show, progress_interval)
                # The checksums are computed while Spark reads (hashlib releases the GIL).
                with ThreadPoolExecutor(1, thread_name_prefix="ingest-sha256") as pool:
                    hashed = [
                        pool.submit(_span, path, start, end, size, done.get(path))
                        for path, (start, end, size) in extents
                    ]
                    ranges = [(path, start, end) for path, (start, end, _) in extents]
                    rows = _write_batch(
                        spark,
                        store,
                        batch_id,
                        ranges,
                        hashed,
                        wanted,
                        split_size,
                        history,
                        watch,
                    )
                report.batches.append(batch_id)
                report.rows += rows
            report.files += len(batch)
            show()
    report.seconds = time.perf_counter() - started
    return report


def _write_batch(
    spark: SparkSession,
    store: Lake,
    batch: str,
    ranges: list[tuple[str, int, int]],
    spans: Sequence[Future[Span]],
    wanted: set[tuple[str, str]],
    split_size: int | None,
    history: str | None,
    watch: TaskWatch,
) -> int:
    """Steps 1-4 of the commit protocol for one batch; returns its row count.

    ``spans`` are the ledger entries of ``ranges`` (their checksums, or the
    error that a file changed), computed while Spark writes the batch.
    """
    plan = ReadPlan(
        tuple(ranges),
        split_size=split_size,
        parallelism=session_parallelism(spark),
        seed=history,
        keep_history=history is not None,
    )
    reader = BinlogSourceReader(plan, CHANGE_SCHEMA)
    if wanted:  # the decoder skips other tables' rows; the writer keeps the exact pairs
        reader.pushed.allowed["db"] = frozenset(db for db, _ in wanted)
        reader.pushed.allowed["table"] = frozenset(table for _, table in wanted)
    partitions = reader.partitions()
    staged = store.staging / batch
    task = _WriteTask(reader, tuple(partitions), str(staged), frozenset(wanted))
    with watch:
        tasks = _spark_context(spark).parallelize(range(len(partitions)), len(partitions))
        written: list[tuple[str, int]] = tasks.mapPartitions(task).collect()
    _crash_point("staged", store.run_batches)
    try:
        entries = [span.result() for span in spans]
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    moved = store.publish(batch, [path for path, _ in written])
    rows: int = sum(count for _, count in written)
    record = {
        "format": 1,
        "batch": batch,
        "committed_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "files": [asdict(span) for span in entries],
        "rows": rows,
        "data": moved,
    }
    store.commit(batch, record)
    return rows


@frozen_dataclass
class _WriteTask:
    """An ingest task (pickled to the executors): decode partition N, write its Parquet files.

    Runs over ``parallelize(range(count), count)``, one number per task, and
    yields (path under ``folder``, rows) per file written. The file names carry
    the partition and a random tag, so a retried task never meets the files of
    an attempt that failed (only the files the finished tasks report are
    published).
    """

    reader: BinlogSourceReader
    partitions: tuple[InputPartition, ...]
    folder: str
    tables: frozenset[tuple[str, str]]

    def __call__(self, numbers: Iterable[int]) -> Iterator[tuple[str, int]]:
        for number in numbers:
            name = f"part-{number:05d}-{secrets.token_hex(4)}.parquet"
            writer = ChangeLogWriter(self.folder, name, self.tables)
            try:
                for rows in self.reader.read(self.partitions[number]):
                    writer.write(rows)
            except BaseException:
                writer.abort()
                raise
            for file in writer.close():
                yield file.path, file.rows


def _spark_context(spark: SparkSession) -> Any:
    """The session's SparkContext: the ingest runs its tasks as an RDD job."""
    try:
        return spark.sparkContext
    except Exception as error:  # Spark Connect
        raise BinlogError(
            "ingest needs a classic Spark session (it runs its own tasks); "
            "Spark Connect sessions have no SparkContext",
            hint="run it with spark-submit or binlogkit spark ingest --master",
        ) from error


def read_change_log(spark: SparkSession, lake: str | os.PathLike[str]) -> DataFrame:
    """The change-log table of ``lake``, with ``db`` and ``table`` read as strings."""
    from pyspark.sql.types import DateType, StringType, StructField, StructType

    table = str(Path(lake).absolute() / CHANGES)
    data = spark.read.parquet(table).drop(*PARTITIONS).schema
    partitions = [StructField("db", StringType()), StructField("table", StringType())]
    schema = StructType([*data.fields, *partitions, StructField("date", DateType())])
    return spark.read.schema(schema).parquet(table)


def spark_session(master: str | None = None, *, app_name: str = "binlogkit ingest") -> SparkSession:
    """A SparkSession: the one spark-submit made, one on ``master``, or a local one.

    Without ``master`` the usual Spark settings apply (``spark-defaults.conf``,
    ``PYSPARK_SUBMIT_ARGS``), and Spark's own default is ``local[*]``, all cores
    of this machine. A local session runs its Python workers with this interpreter.
    """
    from pyspark.sql import SparkSession

    if "PYSPARK_GATEWAY_PORT" in os.environ:
        return SparkSession.builder.appName(app_name).getOrCreate()
    builder = SparkSession.builder.appName(app_name)
    if master:
        builder = builder.master(master)
    if master is None or master.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = builder.config("spark.ui.enabled", "false")
    session = builder.config("spark.ui.showConsoleProgress", "false").getOrCreate()
    if (session.sparkContext.master or "").startswith("local"):
        session.sparkContext.setLogLevel("ERROR")
    return session


def _parse_tables(tables: Iterable[str]) -> set[tuple[str, str]]:
    wanted: set[tuple[str, str]] = set()
    for name in tables:
        db, dot, table = name.partition(".")
        if not dot or not db or not table:
            raise BinlogError(f"table {name!r}: give tables as DB.TABLE")
        wanted.add((db, table))
    return wanted


def _pending(paths: list[str], done: dict[str, dict[str, Any]]) -> list[tuple[str, bool]]:
    """The files with bytes not yet ingested, each with whether its server closed it.

    A file is closed when a later file of its ``name.NNNNNN`` sequence is there.
    """
    newest: dict[str, str] = {}
    for path in paths:
        parts = split_binlog_name(path)
        if parts and (
            parts[0] not in newest or binlog_order(path) > binlog_order(newest[parts[0]])
        ):
            newest[parts[0]] = path
    pending = []
    for path in dict.fromkeys(paths):
        entry = done.get(path)
        if entry is not None:
            size = os.path.getsize(path)
            _check_same_file(path, entry, size)
            if size == entry["end"]:
                continue
        parts = split_binlog_name(path)
        pending.append((path, parts is not None and newest[parts[0]] != path))
    return pending


def _check_same_file(path: str, entry: dict[str, Any], size: int) -> None:
    """Stop when the file at ``path`` cannot be the one the ledger recorded."""
    problem = None
    if size < entry["end"]:
        problem = f"it has {size} bytes, fewer than the {entry['end']} already ingested"
    elif _sha256(path, min(HEAD_BYTES, entry["end"])) != entry["head"]:
        problem = "its first bytes differ from the ingested ones"
    if problem:
        raise BinlogError(
            f"{problem}: a binlog only grows, so this is another file under the same name",
            file=path,
            hint="a server reset (RESET MASTER) reuses names: ingest such files into another lake",
        )


def _extent(
    path: str, closed: bool, done: dict[str, dict[str, Any]]
) -> tuple[int, int, int] | None:
    """(start, end, file size) of the part of ``path`` to read now; None when it has no
    complete transaction yet."""
    size = os.path.getsize(path)
    entry = done.get(path)
    start = entry["end"] if entry else 0
    end = size if closed else complete_end(path, start, size)
    return None if end <= start else (start, end, size)


def _span(path: str, start: int, end: int, size: int, entry: dict[str, Any] | None) -> Span:
    """The ledger entry of bytes ``start``..``end`` of ``path``: their checksums.

    Raises when the first ``start`` bytes are not the ones ``entry`` (the
    ledger's) recorded, or when the file shrank.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        read = _hash_into(digest, stream, start)
        if entry and digest.hexdigest() != entry["sha256"]:
            raise BinlogError(
                f"its first {start} bytes differ from the ingested ones",
                file=path,
                hint="a binlog only grows: this is another file under the same name",
            )
        read += _hash_into(digest, stream, end - start)
    if read < end:
        raise BinlogError(f"the file shrank to {read} bytes while being read", file=path)
    return Span(path, start, end, size, digest.hexdigest(), _sha256(path, min(HEAD_BYTES, end)))


def _batches(
    pending: list[tuple[str, bool]], done: dict[str, dict[str, Any]], batch_bytes: int
) -> Iterator[list[tuple[str, bool]]]:
    """Cut the files into batches of about ``batch_bytes`` new bytes, a name once per batch."""
    batch: list[tuple[str, bool]] = []
    size = 0
    names: set[str] = set()
    for item in pending:
        path = item[0]
        name = os.path.basename(path)
        if batch and (size >= batch_bytes or name in names):
            yield batch
            batch, size, names = [], 0, set()
        batch.append(item)
        names.add(name)
        size += os.path.getsize(path) - done.get(path, {}).get("end", 0)
    if batch:
        yield batch


def _hash_into(digest: Any, stream: Any, length: int) -> int:
    """Hash the next ``length`` bytes of ``stream`` (fewer at its end); returns how many.

    At the file's start the format description's BINLOG_IN_USE flag counts as
    clear: the server clears it in place when it closes the file.
    """
    read = 0
    while read < length:
        at = stream.tell()
        chunk = stream.read(min(READ_CHUNK, length - read))
        if not chunk:
            break
        if at == 0 and len(chunk) > _FDE_FLAGS and chunk[_FDE_TYPE] == EventType.FORMAT_DESCRIPTION:
            chunk = bytearray(chunk)
            chunk[_FDE_FLAGS] &= ~EventFlag.BINLOG_IN_USE
        digest.update(chunk)
        read += len(chunk)
    return read


def _sha256(path: str, length: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        _hash_into(digest, stream, length)
    return digest.hexdigest()


def _remove_empty_folders(root: Path) -> None:
    for folder, subfolders, names in os.walk(root, topdown=False):
        if folder != str(root) and not subfolders and not names:
            with contextlib.suppress(OSError):
                os.rmdir(folder)


def _crash_point(step: str, number: int) -> None:
    """The :data:`CRASH_ENV` test hook: SIGKILL this process at ``step`` of batch ``number``."""
    wanted = os.environ.get(CRASH_ENV)
    if wanted and wanted.partition(":")[::2] == (step, str(number)):
        import signal

        log.warning("%s=%s: killing this process", CRASH_ENV, wanted)
        os.kill(os.getpid(), signal.SIGKILL)
