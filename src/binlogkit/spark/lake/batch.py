"""A batch of row changes of many tables (JSON images) applied to the lake, exactly once.

Each change is typed by its table's definition at its position, from the
schema history file (:class:`~binlogkit.spark.lake.timeline.Timeline`). A
table's changes in the batch are cut where its definition changes (segments),
and the batch's work is done in binlog order: each segment of row changes
(the mirror's DDL steps, then the change log append beside the mirror's MERGE,
then the SCD type 2 history; or the append of a batch of inserts alone), each
DROP, RENAME or TRUNCATE TABLE the history recorded up to the batch's end, and
each table's last definition change within the batch (its mirror brought to it,
or made empty for a table created there). See docs/lakehouse.md for the DDL
policy and the exactly-once argument.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import field, replace
from pathlib import Path
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.util import inheritable_thread_target

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import BinlogError
from binlogkit.schema.model import TableDef, TableName, fold_column
from binlogkit.schema.store import Position
from binlogkit.spark.lake.changelog import append_created, create_log
from binlogkit.spark.lake.evolve import (
    Plan,
    apply_plan,
    plan_change,
    resnapshot_hint,
    spark_columns,
)
from binlogkit.spark.lake.images import typed_images
from binlogkit.spark.lake.marks import Mark, holds_earlier
from binlogkit.spark.lake.mirror import append_mirror, merge_mirror, warm_mirror
from binlogkit.spark.lake.scd2 import close_all, merge_history
from binlogkit.spark.lake.snapshot_end import past_end
from binlogkit.spark.lake.storage import LakePath, lake_path
from binlogkit.spark.lake.tables import (
    DEFINITION,
    SNAPSHOT_READING,
    TABLE_PROPERTIES,
    UNKNOWN_COLUMNS,
    LakeTables,
    literal,
    position_property,
    quote,
    snapshot_end,
)
from binlogkit.spark.lake.timeline import Timeline, Version
from binlogkit.spark.lake.truncate import empty_mirror, log_truncate
from binlogkit.spark.schema import typed_schema
from binlogkit.spark.sync_state import LakeLayout

__all__ = ["CRASH_ENV", "Applied", "ApplyOptions", "apply_batch"]

CRASH_ENV = "BINLOGKIT_DELTA_CRASH"
"""Test hook: set to a batch version, the apply fails after that batch's first change log
commit, before its mirror."""

log = logging.getLogger(__name__)


@frozen_dataclass
class _Run:
    """One batch's apply: where, how, and the history's timeline."""

    lake: LakePath
    app_id: str
    version: int
    scd2: bool
    timeline: Timeline
    start: Position
    """Where the batch begins: the source's offset (the previous batch's end: a statement
    that ends there belongs to that batch), else its first change."""
    keys: Mapping[str, Sequence[str]]
    tables: LakeTables
    created: Callable[[str, str], bool]
    """Whether a table created within the batch gets its (empty) mirror at the batch's end."""
    replayed: Mapping[str, Position | None]
    warned: set[str] = field(default_factory=set)
    made: dict[str, Position | bool] = field(default_factory=dict)
    """Per mirror path, what filled it, as the batch found it (:func:`_origin`)."""

    def paths(self, db: str, name: str) -> tuple[str, str, str]:
        base = self.lake / db / name
        return str(base / "changes"), str(base / "mirror"), str(base / "history")


@frozen_dataclass
class Applied:
    """What a batch held: its row changes, and the newest commit time among them (the event
    time where the server logs no commit time; None for an empty batch), seconds since the
    epoch."""

    rows: int
    newest: float | None


@frozen_dataclass
class _Segment:
    """A table's changes under one of its versions (None: no definition known there)."""

    db: str
    name: str
    version: Version | None
    index: int
    rows: Any
    single: bool
    inserts_only: bool
    """The table's changes in the batch are all inserts (op ``c``)."""


@frozen_dataclass
class ApplyOptions:
    """How a lake's batches are applied: what a driver gives :func:`apply_batch` with each.

    Per table a change log, a mirror (tables with a primary key, or a key given in ``keys``
    by ``"db.t"``: a NOT NULL unique key the snapshot chose) and, with ``scd2``, an SCD type
    2 history; the columns of each change come from the schema history file ``history``;
    every write carries ``app_id`` and the batch's version (exactly once). ``tables``: what
    the driver's earlier batches learnt of the lake's tables (:class:`LakeTables`), so that
    each is read once per driver, not once per batch (None: once per batch).
    ``created(db, table)``: whether a table created (CREATE TABLE) within a batch gets its
    mirror, empty, at the batch's end without a row change (the driver's selection of
    tables); by default none does: the mirror is created with the table's first change.

    A table's batch of inserts alone is appended to its mirror, not MERGEd, where the mirror
    is the source's table as of the batch's start (docs/lakehouse.md, Mirror): a mirror the
    apply made from the binlog; a snapshot's from the end E of its reads, which the snapshot
    records on the mirror; or one without it that another writer filled, named in
    ``replayed`` by ``"db.t"`` with the position before which the batches may hold changes
    it holds already (the snapshot's :attr:`~binlogkit.spark.snapshot.SnapshotResult.end`,
    with its GTID position for batches after a failover; None: not known, always MERGEd)."""

    history: str | Path
    app_id: str
    scd2: bool = False
    keys: Mapping[str, Sequence[str]] = field(default_factory=dict)
    tables: LakeTables | None = None
    created: Callable[[str, str], bool] | None = None
    replayed: Mapping[str, Position | None] = field(default_factory=dict)


def apply_batch(
    changes: Any,
    lake: str | Path,
    options: ApplyOptions,
    *,
    version: int,
    start: Position | None = None,
    end: Position | None = None,
) -> Applied:
    """Apply batch ``version`` of row changes (a DataFrame of ``CHANGE_SCHEMA`` rows, any
    tables) to the lake as ``options`` say. A batch applied before changes nothing.

    ``start``, ``end``: where the batch begins and ends in the binlog (a streaming source's
    offsets for it; by default its first and its last change). The DROP, RENAME and TRUNCATE
    TABLE statements the history recorded up to ``end`` are applied with the batch, also when
    no row change follows them in it, or when it has none; so is each table's last definition
    change after ``start`` (ALTER TABLE: the mirror follows it; a CREATE TABLE: an empty
    mirror where ``options.created`` selects the table)."""
    spark = changes.sparkSession
    tables = options.tables or LakeTables(spark)
    changes = changes.persist()
    try:
        with _warming(tables):
            spans, applied, inserting = _summary(changes)
            ends = [Position(f, hi) for files in spans.values() for f, (_, hi) in files.items()]
            starts = [Position(f, lo) for files in spans.values() for f, (lo, _) in files.items()]
            if end is not None:
                ends.append(end)
            if not ends:
                return applied
            run = _Run(
                lake_path(lake),
                options.app_id,
                version,
                options.scd2,
                Timeline(options.history),
                start or min(starts or ends, key=Position.key),
                options.keys,
                tables,
                options.created or (lambda db, name: False),
                options.replayed,
            )
            end = max(ends, key=Position.key)
            work: list[tuple[tuple[str, int, int], int, Any]] = []
            for (db, name), files in spans.items():
                versions = run.timeline.of(db, name)
                only = (db, name) in inserting
                for segment in _segments(changes, db, name, files, versions, only):
                    at = segment.version.at if segment.version is not None else run.start
                    work.append((at.key(), 1, segment))
            for versions in run.timeline.versions.values():
                for v in versions:
                    table_step = (v.truncated or v.definition is None) and not v.unknown
                    if table_step and v.at.key() <= end.key():
                        work.append((v.at.key(), 0, (versions, v)))
                last = _last_change(versions, run.start, end)
                if last is not None:  # after a RENAME TABLE's move, and a segment, of its place
                    work.append((last.at.key(), 2, (versions, last)))
            for _, kind, item in sorted(work, key=lambda w: w[:2]):
                if kind == 1:
                    _apply_segment(run, item)
                elif kind == 2:
                    _redefine(run, *item)
                elif item[1].truncated:
                    _truncate(run, *item)
                else:
                    _drop(spark, run, *item)
    finally:
        changes.unpersist()
    return applied


Spans = dict[tuple[str, str], dict[str, tuple[int, int]]]


def _summary(changes: Any) -> tuple[Spans, Applied, set[tuple[str, str]]]:
    """Per table, per binlog file: the first and last position of its changes; what the batch
    holds; and the tables whose changes are all inserts (in one pass over it)."""
    newest = F.max(F.coalesce("commit_ts", "ts").cast("double"))
    others = F.sum((F.col("op") != "c").cast("int"))
    groups = changes.groupBy("db", "table", "file")
    rows = groups.agg(F.min("pos"), F.max("pos"), F.count("*"), newest, others).collect()
    spans: Spans = {}
    mixed = set()
    for db, name, file, lo, hi, _, _, not_inserts in rows:
        spans.setdefault((db, name), {})[file] = (lo, hi)
        if not_inserts:
            mixed.add((db, name))
    times = [row[6] for row in rows if row[6] is not None]
    applied = Applied(sum(row[5] for row in rows), max(times, default=None))
    return spans, applied, set(spans) - mixed


def _file_key(file: str | None) -> tuple[str, int]:
    base, number, _ = Position(file, 0).key()
    return base, number


def _at_or_after(at: Position, files: Sequence[str]) -> Column:
    """Rows at or after ``at`` among rows of ``files``."""
    name = os.path.basename(at.file or "")
    later = [f for f in files if _file_key(f) > _file_key(name)]
    same = (F.col("file") == name) & (F.col("pos") >= at.pos)
    return same | F.col("file").isin(later) if later else same


def _segments(
    changes: Any,
    db: str,
    name: str,
    files: dict[str, tuple[int, int]],
    versions: Sequence[Version],
    inserts_only: bool,
) -> list[_Segment]:
    first = min((Position(f, lo) for f, (lo, _) in files.items()), key=Position.key)
    last = max((Position(f, hi) for f, (_, hi) in files.items()), key=Position.key)
    before = [v for v in versions if v.at.key() <= first.key()]
    chain: list[Version | None] = [before[-1] if before else None]
    chain += [v for v in versions if first.key() < v.at.key() <= last.key()]
    mine = changes.where((F.col("db") == db) & (F.col("table") == name))
    out = []
    for i, version in enumerate(chain):
        rows = mine
        if i > 0 and version is not None:
            rows = rows.where(_at_or_after(version.at, list(files)))
        if i + 1 < len(chain):
            upper = chain[i + 1]
            assert upper is not None
            rows = rows.where(~_at_or_after(upper.at, list(files)))
        out.append(_Segment(db, name, version, i, rows, len(chain) == 1, inserts_only))
    return out


# -- one segment ---------------------------------------------------------------------------


def _apply_segment(run: _Run, segment: _Segment) -> None:
    if not segment.single and segment.rows.isEmpty():
        return
    table = f"{segment.db}.{segment.name}"
    version = segment.version
    if version is None or version.definition is None:
        where = "" if version is None else f" (from {version.at})"
        why = (
            "a statement binlogkit could not read changed it"
            if version is not None and version.unknown
            else "the schema history has no definition of it there"
        )
        raise BinlogError(
            f"{table}: row changes in this batch{where}, but {why}",
            hint="seed the schema history from the server (or give the table's CREATE TABLE), "
            f"then {resnapshot_hint(table)}",
        )
    definition = version.definition
    log_path, mirror_path, history_path = run.paths(segment.db, segment.name)
    mark = Mark(run.app_id, run.version, str(segment.index) if segment.index else "")
    with _cached(typed_images(segment.rows, spark_columns(definition), table)) as typed:
        key = definition.primary_key or tuple(run.keys.get(table, ()))
        versions = run.timeline.of(segment.db, segment.name)
        steps = _mirror_steps(run.tables, table, mirror_path, versions, version) if key else None
        if steps == "create":
            _check_not_lost(run, table, log_path, mirror_path)
        create_log(typed, log_path, run.tables)
        if os.environ.get(CRASH_ENV) == str(run.version):
            append_created(typed, log_path, mark)
            raise RuntimeError(f"{CRASH_ENV}={run.version}: stopping before the mirror")
        if steps is None or steps == "done":
            append_created(typed, log_path, mark)
            if steps is None:
                _warn(run, table, _no_mirror_reason(run.tables, mirror_path, versions, version))
            return
        exact = segment.inserts_only and _exact(run, table, mirror_path)
        if steps == "create":
            run.tables.create(
                mirror_path,
                typed_schema(spark_columns(definition))["after"].dataType,
                extra={DEFINITION: position_property(version.at)},
            )
        elif steps:
            _follow(run.tables, mirror_path, steps, version.at, history_path if run.scd2 else None)
        with _beside(run.tables.spark, lambda: append_created(typed, log_path, mark)):
            merging = not exact
            if merging:
                merge_mirror(typed, mirror_path, key, mark)
            else:
                append_mirror(typed, mirror_path, mark)
            run.tables.wrote(mirror_path, merged=merging)
        if run.scd2:
            merge_history(typed, history_path, table, key, mark)


def _exact(run: _Run, table: str, mirror: str) -> bool:
    """Whether the mirror is the source's table as of the batch's start, so that inserts are
    rows it does not hold. A mirror the apply made (it has the definition it holds, and no
    other writer filled it) holds every key of its changes since it was created or emptied,
    with the row of its last change, and no key the server deleted: keys the source has, with
    their rows. A snapshot's (the first one's, or a resnapshot's) is that from the end E of
    the changes its reads held (:func:`past_end`: by position, or by GTID after a failover):
    the E recorded on the mirror, else (a mirror written before E was recorded there) the
    one ``replayed`` names. Called before the segment's DDL steps: what filled the mirror is
    what the batch found (the table's properties, read once per batch for the steps too), not
    the definition its own steps record."""
    if mirror not in run.made:
        run.made[mirror] = _origin(run.tables, mirror)
    origin = run.made[mirror]
    if isinstance(origin, Position):
        return past_end(run.start, origin)
    if not origin:
        return False  # written by something else
    return table not in run.replayed or past_end(run.start, run.replayed[table])


def _origin(tables: LakeTables, mirror: str) -> Position | bool:
    """What filled the mirror: a snapshot, up to its E (the mirror's :data:`SNAPSHOT_END`);
    the apply (True; also a snapshot's mirror without E, written before E was recorded on
    mirrors); or something else (False: no definition recorded, or a snapshot's whose reads
    have not ended). A mirror not there yet is the apply's: this segment creates it."""
    if not tables.exists(mirror):
        return True
    props = tables.properties(mirror)
    end = snapshot_end(props)
    if end == SNAPSHOT_READING or DEFINITION not in props:
        return False
    return end if isinstance(end, Position) else True


def _check_not_lost(run: _Run, table: str, log_path: str, mirror: str) -> None:
    """Refuse to make the mirror of ``table`` from its changes where it had one that is gone
    (moved aside, deleted): one a snapshot wrote (the lake's snapshot states, or ``replayed``,
    name the table), or one an earlier batch made (its change log holds an earlier batch's
    write of this lake). Made from the table's next change on, it would hold only the rows
    changed since."""
    snapshot = table in run.replayed or table in LakeLayout(run.lake).snapshot_mirrors()
    if not snapshot:
        mark = Mark(run.app_id, run.version)
        if not (run.tables.exists(log_path) and holds_earlier(log_path, mark)):
            return
    where = "a snapshot wrote it" if snapshot else "earlier batches wrote it"
    raise BinlogError(
        f"{table}: its mirror {mirror} is gone, but {where}; a mirror made again from the "
        "table's next change would hold only the rows changed since",
        hint=f"restore {mirror}, or {resnapshot_hint(table)}",
    )


@contextmanager
def _warming(tables: LakeTables) -> Iterator[None]:
    """Meanwhile, in another thread, the newest state of each mirror this driver MERGEd last
    is reconstructed (:func:`~binlogkit.spark.lake.mirror.warm_mirror`), so that the batch's
    MERGE of it, likely again, finds it ready."""
    paths = tables.merged()
    if not paths:
        yield
        return

    def warm() -> None:
        for path in paths:
            warm_mirror(tables.spark, path)

    with _beside(tables.spark, warm):
        yield


@contextmanager
def _beside(spark: Any, work: Callable[[], object]) -> Iterator[None]:
    """Run ``work`` in another thread (with this thread's Spark job properties and the session
    ``spark``'s tags) while the block runs, and wait for it; its error, if any, is raised when
    the block is done (the block's own error first). The change log
    append and the mirror's MERGE write different tables and read the same persisted rows:
    together, each fills the time the other spends in the driver between its Spark jobs."""
    failed: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as err:  # raised in the calling thread
            failed.append(err)

    target = inheritable_thread_target(spark)(run)
    thread = threading.Thread(target=target, name="binlogkit-append")
    thread.start()
    try:
        yield
    finally:
        thread.join()
    if failed:
        raise failed[0]


@contextmanager
def _cached(frame: Any) -> Iterator[Any]:
    """The frame, computed once for the writes that read it (the change log, the MERGE's two
    passes, the history)."""
    frame = frame.persist()
    try:
        yield frame
    finally:
        frame.unpersist()


def _warn(run: _Run, table: str, reason: str) -> None:
    if table not in run.warned:
        run.warned.add(table)
        log.warning("%s: %s: change log only, no mirror", table, reason)


def _no_mirror_reason(
    tables: LakeTables, path: str, versions: Sequence[Version], at: Version
) -> str:
    if not at.definition or not at.definition.primary_key:
        if tables.exists(path):
            return (
                f"its primary key was dropped (at {at.at}): the mirror is no longer kept; "
                + resnapshot_hint(str(at.definition.table_name if at.definition else ""))
            )
        return "no primary key"
    return (
        "it got its primary key by DDL after rows were written without one, so a mirror made "
        "from its changes would lack rows; " + resnapshot_hint(str(at.definition.table_name))
    )


Steps = list[tuple[Version, Plan | None]]


def _mirror_steps(
    tables: LakeTables, table: str, path: str, versions: Sequence[Version], target: Version
) -> Steps | str | None:
    """How the mirror comes to hold ``target``'s definition: ``"create"`` it, ``"done"`` (it is
    past this segment), None (no mirror can be kept), or the steps from the version it holds:
    a plan each, or None where the table was dropped and created again (replaced)."""
    if not tables.exists(path):
        return None if _keyless_before(versions, target) else "create"
    held = _held(tables, table, path, versions, target)
    if held.at.key() > target.at.key():
        return "done"
    steps: Steps = []
    previous = held
    for v in versions:
        if not held.at.key() < v.at.key() <= target.at.key():
            continue
        if v.unknown:
            raise BinlogError(
                f"{table}: a statement binlogkit could not read changed it at {v.at}, so the "
                "mirror cannot follow",
                hint=resnapshot_hint(table),
            )
        if v.truncated:
            steps.append((v, Plan()))
        elif v.definition is not None:
            old = previous.definition
            steps.append((v, None if old is None else plan_change(old, v.definition, v.at)))
        previous = v
    return steps


def _keyless_before(versions: Sequence[Version], target: Version) -> bool:
    """Whether the table existed without a primary key before ``target`` (since its CREATE)."""
    earlier = [v for v in versions if v.at.key() < target.at.key()]
    for v in reversed(earlier):
        if v.definition is None:
            return False
        if not v.definition.primary_key:
            return True
    return False


def _held(
    tables: LakeTables, table: str, path: str, versions: Sequence[Version], target: Version
) -> Version:
    """The version the mirror holds: its property, else the last version up to ``target``
    whose columns are the mirror's (a mirror written by the snapshot)."""
    text = tables.properties(path).get(DEFINITION)
    if text is not None:
        at = Position(**json.loads(text))
        for v in versions:
            if v.at.key() == at.key():
                return v
        raise BinlogError(
            f"the mirror of {table} holds the definition from {at}, which the schema history "
            "does not have",
            hint="give the schema history this lake was written with; else "
            + resnapshot_hint(table),
        )
    schema = tables.spark.read.format("delta").load(path).schema
    have = [(fold_column(f.name), f.dataType) for f in schema]
    for v in reversed([v for v in versions if v.at.key() <= target.at.key()]):
        if v.definition is not None and _typed(v.definition) == have:
            return v
    raise BinlogError(
        f"the mirror of {table} has columns {have} that no definition in the schema history has",
        hint=resnapshot_hint(table),
    )


def _typed(definition: TableDef) -> list[tuple[str, Any]]:
    return [(fold_column(c.name), c.data_type) for c in spark_columns(definition)]


def _follow(
    tables: LakeTables, path: str, steps: Steps, target: Position, history: str | None
) -> None:
    """Carry the DDL steps out on the mirror (and the renames and widenings on the SCD type 2
    ``history``), then record that the mirror holds ``target``."""
    spark = tables.spark
    unknown: dict[str, str] = json.loads(tables.properties(path).get(UNKNOWN_COLUMNS, "{}"))
    for version, plan in steps:
        assert version.definition is not None
        if version.truncated:
            empty_mirror(tables, path, history, version)
            continue
        if plan is None:
            schema = typed_schema(spark_columns(version.definition))["after"].dataType
            tables.create(path, schema, replace=True)
            unknown = {}
            continue
        apply_plan(spark, path, plan)
        if history is not None and tables.exists(history):
            apply_plan(spark, history, replace(plan, drops=(), order=()), rows="is_current")
        unknown = _unknown_after(unknown, plan)
    tables.set_properties(
        path, {DEFINITION: position_property(target), UNKNOWN_COLUMNS: json.dumps(unknown)}
    )


def _unknown_after(unknown: dict[str, str], plan: Plan) -> dict[str, str]:
    """The columns of unknown value (added by lakes written before defaults were followed),
    after a plan."""
    out = {k: v for k, v in unknown.items() if k not in plan.drops}
    for old, new in plan.renames:
        if old in out:
            out[new] = out.pop(old)
    return out


# -- ALTER and CREATE TABLE at the batch's end -------------------------------------------------


def _last_change(versions: Sequence[Version], start: Position, end: Position) -> Version | None:
    """The table's last version up to ``end``, when it is a definition change (not a drop, a
    truncation or an unreadable statement) after ``start``: the one its mirror is brought to
    at the batch's end. Earlier ones are followed by the table's segments, truncations and
    drops, and by the batches before."""
    last = next((v for v in reversed(versions) if v.at.key() <= end.key()), None)
    if last is None or last.definition is None or last.truncated or last.unknown:
        return None
    return last if last.at.key() > start.key() else None


def _redefine(run: _Run, versions: Sequence[Version], target: Version) -> None:
    """Bring the table's mirror (and SCD type 2 history) to the definition ``target``, once: a
    mirror that holds it or a later one is left as it is. A table without a mirror gets an
    empty one where it was created within the batch (and ``run.created`` selects it)."""
    definition = target.definition
    assert definition is not None
    table_name = definition.table_name
    table = str(table_name)
    _, mirror, history = run.paths(definition.db, definition.name)
    if not (definition.primary_key or run.keys.get(table)):
        return  # no mirror is kept: the table's next change says why
    if not run.tables.exists(mirror):
        if _created(run.timeline, versions, run.start, target) and run.created(*table_name):
            schema = typed_schema(spark_columns(definition))["after"].dataType
            run.tables.create(mirror, schema, extra={DEFINITION: position_property(target.at)})
        return
    steps = _mirror_steps(run.tables, table, mirror, versions, target)
    if isinstance(steps, list) and steps:
        _follow(run.tables, mirror, steps, target.at, history if run.scd2 else None)


def _created(
    timeline: Timeline, versions: Sequence[Version], start: Position, target: Version
) -> bool:
    """Whether the table was created after ``start`` (CREATE TABLE: the name's first
    definition, or one after a drop; not a table of the history's first record, a seed's,
    which existed before it, nor one a RENAME TABLE brought, whose rows are not known) with a
    key, and kept a definition up to ``target``."""
    if timeline.first is not None and timeline.first.key() > start.key():
        start = timeline.first
    for i in range(len(versions) - 1, -1, -1):
        v = versions[i]
        if v.at.key() > target.at.key():
            continue
        if v.at.key() <= start.key() or v.definition is None:
            return False
        if i == 0 or versions[i - 1].definition is None:
            return v.moved_from is None and not _keyless_before(versions, target)
    return False


# -- TRUNCATE TABLE ------------------------------------------------------------------------


def _truncate(run: _Run, versions: Sequence[Version], truncated: Version) -> None:
    """A truncation, once: its change log row, then the mirror brought up to it (emptied).
    A mirror past it was truncated before; a table without a mirror gets the change log row
    only for a truncation within the batch."""
    assert truncated.definition is not None
    table = str(truncated.definition.table_name)
    log_path, mirror, history = run.paths(truncated.definition.db, truncated.definition.name)
    key = truncated.definition.primary_key or run.keys.get(table, ())
    spark = run.tables.spark
    if key and run.tables.exists(mirror):
        steps = _mirror_steps(run.tables, table, mirror, versions, truncated)
        if not isinstance(steps, list) or not steps:
            return  # done before
        log_truncate(spark, log_path, truncated, Mark(run.app_id, run.version))
        _follow(run.tables, mirror, steps, truncated.at, history if run.scd2 else None)
    elif truncated.at.key() > run.start.key() and run.tables.exists(log_path):
        log_truncate(spark, log_path, truncated, Mark(run.app_id, run.version))


# -- DROP / RENAME TABLE -------------------------------------------------------------------


def _drop(spark: Any, run: _Run, versions: Sequence[Version], dropped: Version) -> None:
    """Empty a dropped table's mirror (closing its history's versions), or move it to the
    table it was renamed to; once."""
    last = next(
        (
            v.definition
            for v in reversed(versions)
            if v.at.key() < dropped.at.key() and v.definition
        ),
        None,
    )
    if last is None:
        return
    _, mirror, history = run.paths(last.db, last.name)
    if not run.tables.exists(mirror):
        return
    text = run.tables.properties(mirror).get(DEFINITION)
    if text is None:
        if dropped.at.key() <= run.start.key():
            return  # a snapshot's mirror: a table of that name dropped before it was taken
    elif Position(**json.loads(text)).key() >= dropped.at.key():
        return
    if dropped.moved_to is not None:
        _move(run, mirror, history, dropped.moved_to, dropped.at)
    elif run.scd2 and run.tables.exists(history):
        close_all(spark, history, dropped.at)
    spark.sql(f"DELETE FROM delta.{quote(mirror)}")
    run.tables.set_properties(mirror, {DEFINITION: position_property(dropped.at)})


def _move(run: _Run, mirror: str, history: str, to: TableName, at: Position) -> None:
    _, new_mirror, new_history = run.paths(to.db, to.name)
    if run.tables.exists(new_mirror):
        text = run.tables.properties(new_mirror).get(DEFINITION)
        if text is not None and Position(**json.loads(text)).key() >= at.key():
            return  # moved before a crash
    if run.tables.exists(history):
        _copy(run.tables, history, new_history, {})
    _copy(run.tables, mirror, new_mirror, {DEFINITION: position_property(at)})


def _copy(tables: LakeTables, source: str, target: str, extra: dict[str, str]) -> None:
    """Replace the table at ``target`` by a copy of ``source``'s rows, in one commit."""
    props = {**TABLE_PROPERTIES, **extra}
    pairs = ", ".join(f"{literal(k)} = {literal(v)}" for k, v in props.items())
    tables.forget(target)
    tables.spark.sql(
        f"CREATE OR REPLACE TABLE delta.{quote(target)} USING DELTA TBLPROPERTIES ({pairs}) "
        f"AS SELECT * FROM delta.{quote(source)}"
    )
    tables.forget(target)
