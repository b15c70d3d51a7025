"""A database into Delta mirrors on Spark in one call: :func:`sync`, :func:`apply`.

:func:`sync` snapshots the selected tables of a server
(:func:`binlogkit.spark.snapshot.run_snapshot`, which resumes an unfinished
snapshot and returns at once after a finished one), then runs a Structured
Streaming query of the server's binlog from the snapshot's start position;
each micro-batch goes to :func:`binlogkit.spark.delta.apply_batch` with
``(app_id, batch id)``, which marks each of its writes' commits
(:mod:`binlogkit.spark.lake.marks`) and skips a write its table holds already, so a
batch replayed after a crash changes nothing. :func:`apply` does the same from a folder of binlogs,
without a snapshot. The lake's layout is :class:`~binlogkit.spark.sync_state.LakeLayout`'s.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

from pyspark.errors import StreamingQueryException
from pyspark.sql import SparkSession

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import BinlogError
from binlogkit.io.binlog_index import generation_name
from binlogkit.pipeline.filters import ReplicationFilter
from binlogkit.schema.store import Position
from binlogkit.services.replica_stream import Backoff
from binlogkit.spark import register
from binlogkit.spark.delta import ApplyOptions, apply_batch, check_codegen_cache, with_delta
from binlogkit.spark.jars import fetch_jars
from binlogkit.spark.lake import storage
from binlogkit.spark.lake.storage import LakePath, UriPath, WorkingCopy, lake_path
from binlogkit.spark.lake.tables import LakeTables
from binlogkit.spark.lake_maintain import Schedule
from binlogkit.spark.query_errors import query_error, restartable, server_changed
from binlogkit.spark.sync_progress import AppliedBatch, BatchLog, Sizes, file_sizes
from binlogkit.spark.sync_state import (
    LakeLayout,
    SyncState,
    batch_offset,
    redact_url,
    source_address,
)

__all__ = ["JARS_ENV", "KILL_ENV", "SYSTEM_TABLES", "RunReport", "apply", "lake_session", "sync"]

Progress = Callable[[Any], None]
"""Gets the snapshot's progress of each table, then a
:class:`~binlogkit.spark.sync_progress.StreamProgress` after each micro-batch."""

SYSTEM_TABLES = "mysql.%,information_schema.%,performance_schema.%,sys.%"
"""The server's own tables, left out when no tables are selected."""

JARS_ENV = "BINLOGKIT_JARS"
"""The folder Delta's jars are fetched into for a local session (default
``~/.cache/binlogkit/jars``)."""

RESTARTS_ONCE = 5
"""With ``once``, how many restarts in a row a lost source connection gets before the run
fails (without: as many as it takes, like ``binlogkit tail``)."""

log_ = logging.getLogger(__name__)

KILL_ENV = "BINLOGKIT_SYNC_KILL"
"""Test hook: set to a batch id, the process kills itself (SIGKILL) once that micro-batch is
applied, before the query's checkpoint records it."""

MAINTAIN_EVERY = 60.0
"""Minutes between two rounds of the lake's upkeep while a stream runs (docs/lakehouse.md,
Maintenance)."""

POLL_SECONDS = 1.0
"""How often the driver's loop reports progress while the query runs."""


@frozen_dataclass
class RunReport:
    """What one run did: the snapshot's result (:func:`sync`) and the micro-batches applied."""

    snapshot: Any
    batches: int
    rows: int


def sync(
    url: str,
    lake: str | Path,
    *,
    tables: Sequence[str] | None = None,
    once: bool = False,
    scd2: bool = False,
    spark: Any = None,
    master: str | None = None,
    trigger: str = "1 second",
    progress: Progress | None = None,
    failover: bool = False,
    resnapshot: Sequence[str] = (),
    maintain_every: float = MAINTAIN_EVERY,
) -> RunReport:
    """Mirror the tables of the server at ``url`` (``mariadb://user:pw@host``) into ``lake``:
    a consistent snapshot, then the binlog, until stopped (Ctrl-C, SIGTERM), or with ``once``
    until caught up with the server.

    ``tables``: ``db.table`` names (default: every table but the server's own). ``scd2``:
    keep SCD type 2 history tables too. ``spark``: the session to use, else a local one with
    Delta (``master``: another Spark master). ``trigger``: the micro-batch interval.
    ``failover``: ``url`` may be another server than the lake's (a replica of it that took
    over): a streaming lake goes on there from its checkpoint's GTID position (MariaDB),
    and the lake's source becomes ``url``. ``resnapshot``: ``db.table`` names of a streaming
    lake's tables to read again from the server before the stream goes on
    (:mod:`binlogkit.spark.resnapshot`; also what ``apply`` stops with tells to do); a run
    after a crash in it finishes it first. ``maintain_every``: the lake's upkeep
    (:mod:`binlogkit.spark.lake_maintain`) every so many minutes, between micro-batches
    (0: never).
    """
    from binlogkit.spark.resnapshot import run_resnapshot
    from binlogkit.spark.snapshot import run_snapshot

    layout = LakeLayout(lake_path(lake))
    selected = _selection(tables)
    wanted = SyncState.new(redact_url(url), "server", selected, scd2)
    where = source_address(url)
    session = _session(spark, master, layout)
    state = _claim(layout, wanted, lambda old: failover or source_address(old.source) == where)
    moving = source_address(state.source) != where
    if moving:
        _check_move(layout, state, wanted)
    if resnapshot and not state.streaming:
        raise BinlogError(
            f"lake {layout.root} has not finished its first snapshot: nothing to resnapshot",
            hint="run sync without --resnapshot first",
        )
    session = session or lake_session(master)
    snapshot = run_snapshot(
        session, url, str(layout.root), tables=list(selected or ()) or None, progress=progress
    )
    again = run_resnapshot(
        session, url, layout.root, resnapshot, selected=_chosen(state.tables), progress=progress
    )
    start = snapshot.start
    reader = session.readStream.format("binlog").option("url", url)
    reader = reader.option("start", f"{start.file}:{start.pos}")
    reader = reader.option("failover", str(failover).lower())
    sizes = file_sizes(url)
    first = Position(start.file, start.pos)
    keys = {**snapshot.keys, **(again.keys if again is not None else {})}
    replayed = {table: snapshot.end for table in snapshot.keys}
    with _history(layout) as history:
        changes = _selected(reader.option("schemaHistory", str(history.local)), selected).load()
        options = _options(session, history, state, keys, replayed)
        batches, rows = _stream(
            changes,
            layout,
            history,
            state,
            once,
            trigger,
            progress,
            sizes,
            first,
            options,
            Schedule(session, layout, maintain_every, progress),
            failover,
        )
    if moving:  # the stream went on from the checkpoint there: the lake's source from now on
        replace(state, source=wanted.source).save(layout.state)
    return RunReport(snapshot, batches, rows)


def apply(
    source: str | Path,
    lake: str | Path,
    *,
    tables: Sequence[str] | None = None,
    once: bool = False,
    scd2: bool = False,
    spark: Any = None,
    master: str | None = None,
    trigger: str = "1 second",
    progress: Progress | None = None,
    maintain_every: float = MAINTAIN_EVERY,
) -> RunReport:
    """:func:`sync` from a folder of binlogs ``source`` (what ``binlogkit relay`` writes, or
    a server's binlog folder; also an ``.index`` file or a glob) instead of a server: no
    snapshot, every change of the files from their start; the folder may grow while it runs."""
    text = str(source)
    if isinstance(lake_path(text), UriPath):
        raise BinlogError(
            f"binlog source {text}: binlog files are read by Python on the Spark executors, "
            "from local paths",
            hint="give a folder every node mounts (the lake itself may be on any filesystem)",
        )
    folder = text if "*" in text or "?" in text else os.path.abspath(text)
    layout = LakeLayout(lake_path(lake))
    selected = _selection(tables)
    wanted = SyncState.new(folder, "files", selected, scd2)
    session = _session(spark, master, layout)
    state = _claim(layout, wanted, lambda old: old.source == folder)
    session = session or lake_session(master)
    reader = session.readStream.format("binlog").option("path", folder)
    sizes = file_sizes(folder)
    first = Position(None, 0)  # the folder's start
    with _history(layout) as history:
        changes = _selected(reader.option("schemaHistory", str(history.local)), selected).load()
        options = _options(session, history, state, {}, {})
        upkeep = Schedule(session, layout, maintain_every, progress)
        batches, rows = _stream(
            changes, layout, history, state, once, trigger, progress, sizes, first, options, upkeep
        )
    return RunReport(None, batches, rows)


def lake_session(master: str | None = None) -> Any:
    """The SparkSession of spark-submit (started with Delta's package and settings), else a
    new one on ``master`` (default ``local[*]``) with Delta's jars and format ``binlog``."""
    if "PYSPARK_GATEWAY_PORT" in os.environ:
        session = SparkSession.builder.appName("binlogkit sync").getOrCreate()
        check_codegen_cache(session)
    else:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        jars = fetch_jars(Path(os.environ.get(JARS_ENV) or _cache() / "jars"))
        builder = SparkSession.builder.master(master or "local[*]").appName("binlogkit sync")
        builder = builder.config("spark.ui.showConsoleProgress", "false")
        session = with_delta(builder, jars).getOrCreate()
    if (session.sparkContext.master or "").startswith("local"):
        # Small local batches: one shuffle partition and one Delta snapshot task per core, and
        # no adaptive execution, which has no partitions to coalesce here but runs each query
        # stage as a job of its own (a MERGE: 9 jobs instead of 6; docs/lakehouse.md).
        cores = str(session.sparkContext.defaultParallelism)
        session.conf.set("spark.sql.shuffle.partitions", cores)
        session.conf.set("spark.databricks.delta.snapshotPartitions", cores)
        session.conf.set("spark.sql.adaptive.enabled", "false")
        # VACUUM lists a table's folder in this many tasks (Spark's default 10,000: a
        # round of the lake's upkeep spent minutes on tiny tables).
        session.conf.set("spark.sql.sources.parallelPartitionDiscovery.parallelism", cores)
        session.sparkContext.setLogLevel("ERROR")
    register(session)
    return session


def _session(spark: Any, master: str | None, layout: LakeLayout) -> Any:
    """``spark``, else for a lake reached through Hadoop (a URI) a session started now (its
    files are read through the session's JVM), else None: started after the lake's checks."""
    if spark is None and isinstance(layout.root, UriPath):
        return lake_session(master)
    return spark


@contextmanager
def _history(layout: LakeLayout) -> Iterator[WorkingCopy]:
    """The lake's schema history as a local file for the stream's driver-side runner (a Python
    worker without the JVM) and the apply, written back to the lake as each batch begins and
    at the end (see :class:`~binlogkit.spark.lake.storage.WorkingCopy`)."""
    history = WorkingCopy(layout.history)
    try:
        yield history
        history.publish()
    finally:
        history.close()


def _cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "binlogkit"


def _selection(tables: Sequence[str] | None) -> tuple[str, ...] | None:
    """The selected tables, sorted, each checked to be ``db.table`` (``*`` and ``?`` match
    any characters and one character, as in ``shop.*``)."""
    if not tables:
        return None
    for name in tables:
        db, dot, table = name.partition(".")
        if not (dot and db and table):
            raise BinlogError(f"table {name!r}: give tables as DB.TABLE (or a pattern: DB.*)")
    return tuple(sorted(set(tables)))


def _selected(reader: Any, selected: tuple[str, ...] | None) -> Any:
    """The stream reader with the source's replication filter of the selection."""
    for key, value in _filter_options(selected).items():
        reader = reader.option(key, value)
    return reader


def _filter_options(selected: tuple[str, ...] | None) -> dict[str, str]:
    """The source's replication filter of the selection: names as ``replicateDoTable``,
    patterns as ``replicateWildDoTable``; none: every table but the server's own."""
    if selected is None:
        return {"replicateWildIgnoreTable": SYSTEM_TABLES}
    names = [name for name in selected if not _WILD.search(name)]
    patterns = [_WILD.sub(lambda m: _LIKE[m[0]], name) for name in selected if _WILD.search(name)]
    options = {"replicateDoTable": ",".join(names), "replicateWildDoTable": ",".join(patterns)}
    return {key: value for key, value in options.items() if value}


def _chosen(selected: tuple[str, ...] | None) -> Callable[[str, str], bool]:
    """Whether a table is in the selection, as the source's filter decides."""
    return ReplicationFilter.from_variables(_filter_options(selected)).keeps_table


_WILD = re.compile(r"[*?]")
_LIKE = {"*": "%", "?": "_"}


def _claim(
    layout: LakeLayout, wanted: SyncState, same_source: Callable[[SyncState], bool]
) -> SyncState:
    """The lake's state: ``wanted`` for a new lake (saved), else the lake's own after checking
    that it is what ``wanted`` asks for and that its checkpoint is there."""
    state = SyncState.load(layout.state)
    if state is None:
        wanted.save(layout.state)
        return wanted
    state.check(wanted, layout.root, same_source(state))
    if state.streaming and not storage.exists(layout.checkpoint / "metadata"):
        raise BinlogError(
            f"lake {layout.root} lost its streaming checkpoint {layout.checkpoint}",
            hint="without it no change can be applied exactly once: restore the folder, "
            "or start a new lake",
        )
    return state


def _check_move(layout: LakeLayout, state: SyncState, wanted: SyncState) -> None:
    """Whether the lake may move to ``wanted``'s source (a failover): only a lake already
    streaming (an unfinished snapshot was read from the old server)."""
    if not state.streaming:
        raise BinlogError(
            f"lake {layout.root} is still in its snapshot of {state.source}: it cannot move to "
            f"{wanted.source}",
            hint="finish the snapshot on the old server, or start a new lake",
        )
    log_.warning("lake %s moves from %s to %s (failover)", layout.root, state.source, wanted.source)


def _options(
    spark: Any,
    history: WorkingCopy,
    state: SyncState,
    keys: Mapping[str, Sequence[str]],
    replayed: Mapping[str, Position | None],
) -> ApplyOptions:
    """How the query's batches are applied (``keys``: the key of each table the snapshot
    mirrors, for those without a primary key; ``replayed``: per table the snapshot mirrors,
    where the changes its mirror may hold already end), with the driver's :class:`LakeTables`."""
    return ApplyOptions(
        str(history.local),
        state.app_id,
        state.scd2,
        keys,
        LakeTables(spark),
        _chosen(state.tables),
        replayed,
    )


def _stream(
    changes: Any,
    layout: LakeLayout,
    history: WorkingCopy,
    state: SyncState,
    once: bool,
    trigger: str,
    progress: Progress | None,
    sizes: Callable[[], Sizes],
    first: Position,
    options: ApplyOptions,
    upkeep: Schedule,
    failover: bool = False,
) -> tuple[int, int]:
    """Run the query that applies ``changes`` to the lake as ``options`` say (``first``: where
    the query's first batch starts), with the lake's ``upkeep`` between batches; the batches
    and rows it applied. ``failover``: another
    server behind the URL restarts the query (which goes on there by GTID) instead of ending
    the run."""
    log = BatchLog()
    failures: list[BaseException] = []
    applied: list[int] = []

    def each(df: Any, batch_id: int) -> None:
        began = time.monotonic()
        try:
            span = _span(layout.checkpoint, batch_id, first)
            history.publish()  # the batch's DDL in the lake before any of its writes
            rows, newest = _apply(df, layout, options, batch_id, span)
        except BaseException as err:
            failures.append(err)
            raise
        if os.environ.get(KILL_ENV) == str(batch_id):
            os.kill(os.getpid(), signal.SIGKILL)
        done = datetime.now(UTC)
        log.add(AppliedBatch(batch_id, rows, time.monotonic() - began, newest, done))
        applied.append(rows)
        upkeep.between_batches()

    writer = changes.writeStream.foreachBatch(each)
    writer = writer.option("checkpointLocation", str(layout.checkpoint))
    timing = {"availableNow": True} if once else {"processingTime": trigger}
    writer = writer.trigger(**timing)
    backoff = Backoff(initial=1.0, maximum=10.0, attempts=RESTARTS_ONCE if once else None)
    attempt = 0
    while True:
        failures.clear()
        done_before = len(applied)
        query = writer.start()
        if not state.streaming:  # the checkpoint is there from now on
            state = state.started()
            state.save(layout.state)
        try:
            _run_query(query, log, progress, sizes)
            break
        except StreamingQueryException as err:
            failure = failures[-1] if failures else err
            attempt = 1 if len(applied) > done_before else attempt + 1
            moved = failover and server_changed(failure)
            if not (restartable(failure) or moved) or backoff.gives_up(attempt, connected=True):
                raise query_error(failure) from None
            delay = backoff.delay(attempt)
            note = f"{query_error(failure)}: restarting the query in {delay:.0f} s"
            log_.warning("%s", note)
            if progress is not None:
                progress(note)
            time.sleep(delay)
    return len(applied), sum(applied)


def _run_query(
    query: Any, log: BatchLog, progress: Progress | None, sizes: Callable[[], Sizes]
) -> None:
    """Wait for ``query`` to end (Ctrl-C and SIGTERM stop it), reporting each applied batch."""

    def report() -> None:
        reports = [json.loads(p.json) for p in query.recentProgress]
        for line in log.report(reports, _quietly(sizes)):
            if progress is not None:
                progress(line)

    try:
        with _stopped_by_sigterm():
            while not query.awaitTermination(POLL_SECONDS):
                report()
    except KeyboardInterrupt:
        query.stop()
    report()


def _apply(
    df: Any,
    layout: LakeLayout,
    options: ApplyOptions,
    batch_id: int,
    span: tuple[Position | None, Position | None],
) -> tuple[int, datetime | None]:
    """Apply one micro-batch (``span``: where it starts and ends); its row changes and newest
    commit time."""
    start, end = span
    applied = apply_batch(df, str(layout.root), options, version=batch_id, start=start, end=end)
    newest = None if applied.newest is None else datetime.fromtimestamp(applied.newest, UTC)
    return applied.rows, newest


def _span(
    checkpoint: LakePath, batch_id: int, first: Position
) -> tuple[Position | None, Position | None]:
    """Where micro-batch ``batch_id`` starts and ends in the binlog: the source's offsets the
    query's checkpoint records for the batch before it (``first`` for the first batch) and for
    it (written before the batch runs), named as the lake names positions (with the offset's
    generation after a failover), with their GTID positions; None where the checkpoint has
    none."""

    def offset(batch: int) -> Position | None:
        found = batch_offset(checkpoint, batch)
        try:
            if found is None:
                return None
            file = generation_name(str(found["file"]), int(found.get("generation", 0)))
            gtid = found.get("gtid")
            return Position(file, int(found["pos"]), None if gtid is None else str(gtid))
        except (KeyError, TypeError, ValueError) as err:
            raise BinlogError(
                f"{checkpoint}: batch {batch}'s offset names no binlog position ({err!r})",
                hint="the lake's checkpoint is damaged: restore it, or start a new lake",
            ) from None

    return first if batch_id == 0 else offset(batch_id - 1), offset(batch_id)


def _quietly(sizes: Callable[[], Sizes]) -> Callable[[], Sizes]:
    """``sizes``, or none when the source cannot be asked (a server restarting)."""

    def ask() -> Sizes:
        try:
            return sizes()
        except (BinlogError, OSError):
            return []

    return ask


class _Stop(KeyboardInterrupt):
    """SIGTERM, stopping the query like Ctrl-C."""


@contextmanager
def _stopped_by_sigterm() -> Iterator[None]:
    """SIGTERM raises :class:`_Stop` in the main thread while the query runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        raise _Stop

    old = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)
