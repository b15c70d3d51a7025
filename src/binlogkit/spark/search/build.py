"""``binlogkit spark index``: a search index of a lake's text columns, built and kept current.

The source is a lake kept by ``spark sync``/``spark apply``, or a server URL or
binlog folder, which is first synced into ``INDEX/lake``. On the first run each
indexed mirror gets ``delta.enableChangeDataFeed`` and the index is built from
the mirrors as of that version; every later round brings in the mirrors'
change data feed from the version after the last one indexed, appended to the
index. Where the feed cannot be read across a change (a column renamed or
dropped, a mirror replaced), that table is rebuilt from its mirror. When the
dead entries or the appended segments pass a threshold (or when asked), the
index is compacted and its unneeded files vacuumed. See docs/search.md.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pyspark.errors import AnalysisException, UnsupportedOperationException

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import BinlogError
from binlogkit.schema.store import HistoryStore
from binlogkit.search.analysis import ENGLISH_STOP_WORDS, Analyzer, read_stop_words
from binlogkit.search.manifest import (
    CURRENT,
    GENERATIONS,
    TABLES,
    IndexLayout,
    Manifest,
    MirrorRange,
    Pending,
)
from binlogkit.search.tiers import next_merge as tier_merge
from binlogkit.search.tiers import wasteful
from binlogkit.spark.lake.tables import properties, set_properties
from binlogkit.spark.search.batch import (
    create_tables,
    mirror_path,
    run_batch,
    table_state,
    table_version,
    vacuum,
)
from binlogkit.spark.search.columns import text_columns

__all__ = [
    "CDF",
    "COMPACT_DEAD_SHARE",
    "COMPACT_SEGMENTS",
    "IndexReport",
    "compaction_due",
    "index",
]

CDF = "delta.enableChangeDataFeed"
COLUMN_ID = "delta.columnMapping.id"
COMPACT_DEAD_SHARE = 0.1
"""Compact when the dead document versions pass this share of the live documents ..."""
COMPACT_SEGMENTS = 64
"""... or when this many segments follow the base (each adds a small file to each partition
it touches, which every query of it opens) and no tier merge is due."""

Progress = Callable[[str], None]
Compact = bool | Literal["whole", "tiered"] | None


@frozen_dataclass
class IndexReport:
    """What a run did: update batches and compactions run, and the documents in the index
    after it."""

    batches: int
    docs: int
    compactions: int = 0


def index(
    source: str | Path,
    to: str | Path,
    *,
    columns: Sequence[str] | None = None,
    tables: Sequence[str] | None = None,
    once: bool = False,
    stem: str | None = None,
    stop_words: bool | str | Path = False,
    spark: Any = None,
    master: str | None = None,
    interval: float = 5.0,
    compact: Compact = None,
    retain_hours: float = 168.0,
    rebuild: bool = False,
    progress: Progress | None = None,
) -> IndexReport:
    """Build the search index ``to`` of ``source`` (a lake folder, a server URL or a folder
    of binlogs) and keep it current: until stopped (Ctrl-C), or with ``once`` until caught up.

    ``columns``: ``db.table.column`` names; ``tables``: ``db.table`` names, each of whose text
    columns is indexed (one of the two, for a new index; an index keeps its own).
    ``stem``: a Snowball language; ``stop_words``: True for the English list, or a file of
    words. ``interval``: seconds between rounds when not ``once``. ``compact``: True compacts
    the index after each round that leaves dead entries or segments, False never, None when
    due; ``"whole"`` rewrites it whole, ``"tiered"`` merges its segments only (see
    :func:`compaction_due`). After a compaction, files that no version of the last
    ``retain_hours`` needs are vacuumed. ``rebuild``: build the existing index again, in
    place, with the analysis given (``stem``, ``stop_words``): into a new generation folder,
    which readers open once it is complete (:func:`_switch`).
    """
    from binlogkit.spark.lakehouse import lake_session

    report = progress or (lambda line: None)
    layout = IndexLayout(Path(to))
    manifest = Manifest.load(layout)
    wanted = _wanted(columns, tables)
    lake = _lake(source, layout, manifest, wanted)
    asked = None if stem is None and stop_words is False else _analyzer(stem, stop_words)
    if manifest is None and rebuild:
        raise BinlogError(
            f"{layout.root} holds no search index to rebuild", hint="build it without --rebuild"
        )
    if manifest is not None and asked is not None and asked != manifest.analyzer and not rebuild:
        raise BinlogError(
            f"index {layout.root} analyses text with {_settings(manifest.analyzer)}, "
            f"not {_settings(asked)}",
            hint="an index keeps its analysis: leave out --stem and --stop-words, "
            "or rebuild it in place with these settings (--rebuild)",
        )
    if manifest is not None and not rebuild:
        manifest.require_numbered(layout)
    synced = sorted(wanted or (manifest.columns if manifest else ()))
    session = spark or lake_session(master)
    done = {False: 0, True: 0}  # update batches, compactions

    def run(pending: Manifest) -> Manifest:
        assert pending.pending is not None
        compacting = pending.pending.compact
        pending.save(layout)
        finished = run_batch(session, layout, pending, report)
        finished.save(layout)
        done[compacting] += 1
        if compacting:
            vacuum(session, layout, retain_hours)
            report(f"vacuumed the files older versions needed (kept {retain_hours:g} hours)")
        return finished

    try:
        while True:
            _sync(source, lake, layout, synced, session, report)
            if rebuild and manifest is not None:
                rebuild, replaced = False, layout.home
                layout = layout.generation(_next_generation(layout.root))
                report(f"rebuilding the index with {_settings(_analyzer(stem, stop_words))}")
                selection = {
                    t: [] if t in manifest.whole else list(c) for t, c in manifest.columns.items()
                }
                manifest = run(_create(session, layout, lake, selection, stem, stop_words, report))
                _switch(layout, replaced, report)
            if manifest is None:
                manifest = _create(session, layout, lake, wanted, stem, stop_words, report)
            if manifest.pending is not None:  # a batch a crash left half done
                manifest = run(manifest)
            manifest = _plan(session, manifest, report)
            if manifest.pending is not None:
                manifest = run(manifest)
            compaction = compaction_due(manifest, compact)
            if compaction is not None:
                manifest = run(manifest.with_pending(compaction))
            if once:
                break
            time.sleep(interval)
    except KeyboardInterrupt:
        report("stopped")
    docs = 0 if manifest is None else manifest.docs
    return IndexReport(done[False], docs, done[True])


def _next_generation(root: Path) -> int:
    folder = root / GENERATIONS
    numbers = [int(p.name) for p in folder.iterdir() if p.name.isdigit()] if folder.exists() else []
    return max(numbers, default=0) + 1


def _switch(layout: IndexLayout, replaced: Path, report: Progress) -> None:
    """Make the complete generation ``layout.home`` the one readers open: ``current`` linked to
    it in one rename (a reader resolves the link once, so it sees the old index or the new
    one). The generation it replaced is kept for the readers that opened it; older ones, and
    unfinished ones a crashed rebuild left, are deleted."""
    root = layout.root
    link, staged = root / CURRENT, root / f".{CURRENT}.new"
    staged.unlink(missing_ok=True)
    staged.symlink_to(layout.home.relative_to(root))
    os.replace(staged, link)
    report(f"rebuilt: readers now open {layout.home}")
    keep = {layout.home, replaced}
    for old in (root / GENERATIONS).iterdir():
        if old not in keep:
            shutil.rmtree(old)
    if root not in keep:
        for name in (*TABLES, "_search"):
            if (root / name).exists():
                shutil.rmtree(root / name)


def compaction_due(manifest: Manifest, compact: Compact) -> Pending | None:
    """The compaction to run now, if any. ``compact`` None (when due): the index rewritten
    whole when the base's dead versions pass :data:`COMPACT_DEAD_SHARE` of the documents;
    else the next tier merge (:func:`binlogkit.search.tiers.next_merge`); else, when the
    dead versions pass that share, the segment with the most rewritten alone; else, at
    :data:`COMPACT_SEGMENTS` segments, all of them merged. ``compact`` True: everything
    cleaned up, the segments merged into one (tiered) unless the base's dead versions pass
    the share; ``"whole"`` or ``"tiered"`` forces that kind."""
    if compact is False or manifest.batch < 0:
        return None
    docs, tiers = manifest.docs, manifest.tiers
    everything = (manifest.base + 1, manifest.batch)  # the segments after the base
    waste = len(tiers) > 1 or manifest.dead > manifest.base_dead  # in the segments
    base_waste = manifest.base_dead > COMPACT_DEAD_SHARE * docs
    merge: tuple[int, int] | None = None
    if compact == "whole":
        whole = bool(manifest.dead or tiers)
    elif compact == "tiered":
        whole, merge = False, everything if waste else None
    elif compact is True:
        whole = base_waste
        merge = everything if waste and not whole else None
    else:
        whole = base_waste
        if not whole:
            merge = tier_merge(tiers)
        if merge is None and not whole and manifest.dead > COMPACT_DEAD_SHARE * docs:
            merge = wasteful(tiers)
        if merge is None and not whole and len(tiers) >= COMPACT_SEGMENTS:
            merge = everything
    if whole:
        return Pending(manifest.batch + 1, {}, True)
    if merge is None:
        return None
    return Pending(manifest.batch + 1, {}, True, tiered=True, merge=merge)


def _wanted(columns: Sequence[str] | None, tables: Sequence[str] | None) -> dict[str, list[str]]:
    """The selection: ``{"db.t": [columns]}``, an empty list for every text column."""
    wanted: dict[str, list[str]] = {}
    for name in columns or ():
        table, dot, column = name.rpartition(".")
        if not dot or "." not in table:
            raise BinlogError(f"column {name!r}: give columns as DB.TABLE.COLUMN")
        wanted.setdefault(table, []).append(column)
    for name in tables or ():
        if name.count(".") != 1:
            raise BinlogError(f"table {name!r}: give tables as DB.TABLE")
        wanted.setdefault(name, [])
    return wanted


def _lake(
    source: str | Path, layout: IndexLayout, manifest: Manifest | None, wanted: dict[str, Any]
) -> str:
    """The lake the index reads: the source itself when it is one, else ``INDEX/lake``."""
    text = str(source)
    is_lake = Path(text, "_binlogkit").is_dir() and not (Path(text) / "_search").exists()
    lake = str(Path(text).resolve()) if is_lake else str(layout.lake.resolve())
    if manifest is not None:
        if manifest.lake != lake:
            raise BinlogError(
                f"index {layout.root} is of the lake {manifest.lake}, not {lake}",
                hint="give the source it was built from, or build a new index",
            )
        if wanted and not _same_selection(wanted, manifest.columns):
            raise BinlogError(
                f"index {layout.root} indexes {_describe(manifest.columns)}",
                hint="an index keeps the columns it was built with: leave out --columns "
                "and --tables, or build a new index",
            )
    elif not wanted:
        raise BinlogError("a new index needs its columns (--columns) or tables (--tables)")
    return lake


def _same_selection(wanted: dict[str, list[str]], columns: dict[str, tuple[str, ...]]) -> bool:
    """Whether ``wanted`` names the tables of ``columns``, and each listed column of them."""
    return set(wanted) == set(columns) and all(
        not chosen or tuple(chosen) == columns[t] for t, chosen in wanted.items()
    )


def _describe(columns: dict[str, tuple[str, ...]]) -> str:
    return ", ".join(f"{t}.{c}" for t, cs in columns.items() for c in cs)


def _sync(
    source: str | Path,
    lake: str,
    layout: IndexLayout,
    tables: list[str],
    session: Any,
    report: Progress,
) -> None:
    """Bring ``INDEX/lake`` up to date with a server or binlog source (a lake source is kept
    by its own ``spark sync``)."""
    if lake != str(layout.lake.resolve()):
        return
    from binlogkit.spark import lakehouse

    text = str(source)
    run = lakehouse.sync if "://" in text else lakehouse.apply

    def forward(item: Any) -> None:
        from binlogkit.spark.sync_progress import describe

        report(f"lake: {describe(item)}")

    run(text, lake, tables=tables, once=True, spark=session, progress=forward)


def _create(
    spark: Any,
    layout: IndexLayout,
    lake: str,
    wanted: dict[str, list[str]],
    stem: str | None,
    stop_words: bool | str | Path,
    report: Progress,
) -> Manifest:
    """A new index's manifest with its first batch pending: change data feed switched on in
    each mirror, the index built from the mirrors at that version."""
    analyzer = _analyzer(stem, stop_words)
    columns: dict[str, tuple[str, ...]] = {}
    ranges: dict[str, MirrorRange] = {}
    for table, chosen in sorted(wanted.items()):
        path = mirror_path(lake, table)
        if not Path(path, "_delta_log").is_dir():
            raise BinlogError(
                f"{table} has no mirror in {lake} ({path})",
                hint="only tables with a key are mirrored; check the name and the lake",
            )
        columns[table] = _text_columns(spark, lake, table, chosen)
        _feed_on(spark, table, path, report)
        ranges[table] = MirrorRange(-1, *table_state(path), True)
    manifest = Manifest(
        analyzer=analyzer,
        lake=lake,
        columns=columns,
        keys=_keys(lake, list(columns)),
        app_id=f"binlogkit-search-{uuid.uuid4()}",
        whole=tuple(t for t, chosen in sorted(wanted.items()) if not chosen),
    )
    create_tables(spark, layout)
    return manifest.with_pending(Pending(0, ranges))


def _analyzer(stem: str | None, stop_words: bool | str | Path) -> Analyzer:
    words: frozenset[str] = frozenset()
    if stop_words is True:
        words = ENGLISH_STOP_WORDS
    elif stop_words:
        words = read_stop_words(stop_words)
    return Analyzer(stem=stem, stop_words=words)


def _settings(analyzer: Analyzer) -> str:
    """An analysis described for an error message."""
    stem = f"stemming {analyzer.stem}" if analyzer.stem else "no stemming"
    if not analyzer.stop_words:
        return f"{stem} and no stop words"
    if analyzer.stop_words == ENGLISH_STOP_WORDS:
        return f"{stem} and the English stop words"
    return f"{stem} and {len(analyzer.stop_words)} stop words of a file"


def _feed_on(spark: Any, table: str, path: str, report: Progress) -> None:
    """Switch on the change data feed of a mirror (from its next version on)."""
    if properties(spark, path).get(CDF) != "true":
        set_properties(spark, path, {CDF: "true"})
        report(f"{table}: change data feed switched on in its mirror")


def _text_columns(
    spark: Any, lake: str, table: str, chosen: list[str], version: int | None = None
) -> tuple[str, ...]:
    """The columns to index (:func:`binlogkit.spark.search.columns.text_columns`) of the mirror
    at ``version``, else at its last, by their types in the lake's schema history."""
    reader = spark.read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", version)
    schema = reader.load(mirror_path(lake, table)).schema
    history = _history(lake)
    db, _, name = table.partition(".")
    definition = history.catalog_at().table(db, name) if history.path.exists() else None
    return text_columns(table, schema, definition, chosen)


def _history(lake: str) -> HistoryStore:
    """The lake's schema history."""
    return HistoryStore(Path(lake, "_binlogkit", "schema.jsonl"))


def _keys(lake: str, tables: list[str]) -> dict[str, tuple[str, ...]]:
    """Each table's mirror key: its primary key in the lake's schema history, else the key
    its snapshot chose."""
    catalog = _history(lake).catalog_at()
    snapshot = Path(lake, "_binlogkit", "snapshot.json")
    chosen = json.loads(snapshot.read_text())["tables"] if snapshot.exists() else {}
    keys = {}
    for name in tables:
        db, _, table = name.partition(".")
        definition = catalog.table(db, table)
        key = tuple(definition.primary_key) if definition and definition.primary_key else ()
        key = key or tuple((chosen.get(name) or {}).get("key") or ())
        if not key:
            raise BinlogError(f"{name} has no key in {lake}: the index names a row by its key")
        keys[name] = key
    return keys


def _plan(spark: Any, manifest: Manifest, report: Progress) -> Manifest:
    """The manifest with its next batch pending, or unchanged when no mirror moved on."""
    ranges: dict[str, MirrorRange] = {}
    for table, last in manifest.mirrors.items():
        path = mirror_path(manifest.lake, table)
        end, table_id = table_state(path)
        if table_id != last.table_id:
            report(f"{table}: its mirror was replaced: rebuilding its documents")
            _feed_on(spark, table, path, report)
            ranges[table] = MirrorRange(-1, table_version(path), table_id, True)
        elif end > last.end:
            readable = _feed_readable(spark, path, last.end + 1, end)
            if not readable:
                report(
                    f"{table}: the change data feed of versions {last.end + 1}-{end} cannot "
                    "be read (a column renamed or dropped?): rebuilding its documents"
                )
            ranges[table] = MirrorRange(last.end, end, table_id, not readable)
    columns = {}
    for table, span in ranges.items():
        path, indexed = mirror_path(manifest.lake, table), manifest.columns[table]
        if span.start >= 0:  # the same mirror: follow its renames
            renamed = _renames(path, span.start, span.end, indexed)
            for old, new in renamed.items():
                report(f"{table}: column {old} renamed to {new}: rebuilding its documents")
            indexed = tuple(renamed.get(c, c) for c in indexed)
        if table in manifest.whole:
            found = _text_columns(spark, manifest.lake, table, [], span.end)
            added = tuple(c for c in found if c not in indexed)
            if added:
                names = ", ".join(added)
                report(f"{table}: text column(s) {names} added: rebuilding its documents")
                indexed = (*indexed, *added)
        if indexed != manifest.columns[table]:
            columns[table] = indexed
            ranges[table] = MirrorRange(span.start, span.end, span.table_id, True)
    if not ranges:
        return manifest
    return manifest.with_pending(Pending(manifest.batch + 1, ranges, columns=columns))


def _renames(path: str, start: int, end: int, columns: Sequence[str]) -> dict[str, str]:
    """The ``columns`` renamed in a mirror between its versions ``start`` and ``end``, with
    their new names: a mirror's columns keep their Delta column mapping id when the lake
    renames them (docs/lakehouse.md), so a column whose id has another name at ``end`` was
    renamed (by RENAME COLUMN or CHANGE in the schema history)."""
    import deltalake

    def ids(version: int) -> dict[str, Any]:
        fields = deltalake.DeltaTable(path, version=version).schema().fields
        return {f.name: f.metadata.get(COLUMN_ID) for f in fields}

    before, after = ids(start), ids(end)
    names = {column_id: name for name, column_id in after.items() if column_id is not None}
    return {
        c: names[before[c]]
        for c in columns
        if before.get(c) is not None and names.get(before[c], c) != c
    }


def _feed_readable(spark: Any, path: str, start: int, end: int) -> bool:
    """Whether the change data feed of versions ``start`` to ``end`` can be read: Delta
    refuses a range across a column renamed or dropped (column mapping), with an
    ``AnalysisException`` or an ``UnsupportedOperationException``
    (``DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_SCHEMA_CHANGE``, seen for a range that ends with
    the DDL, as the lake writes it at a batch's end with no row change after it)."""
    reader = spark.read.format("delta").option("readChangeFeed", "true")
    reader = reader.option("startingVersion", start).option("endingVersion", end)
    try:
        reader.load(path).limit(1).collect()
    except (AnalysisException, UnsupportedOperationException):
        return False
    return True
