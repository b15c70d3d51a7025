"""Tables of a streaming lake read again from the server: a resnapshot (docs/lakehouse.md).

Where the apply stops for a table (a DDL whose effect on its rows it cannot
know, an unreadable statement, a mirror that is gone), the table's mirror is
read again, while the stream for the other tables goes on from its checkpoint C.
:func:`run_resnapshot`:

1. In a consistent snapshot at S' (the server's binlog position now, so at or
   past C): each table's definition as the server has it must be the one the
   lake's schema history has last for it (the stream has read its last DDL), the
   version the new mirror holds (its ``binlogkit.definition``). Its key chunks
   are planned as the first snapshot's (:func:`~binlogkit.spark.snapshot.chunk_groups`).
2. Each table's mirror is replaced by an empty one (a new Delta version of the
   same table: the old rows stay readable by time travel), then the groups are
   written as the first snapshot's with a transaction id of this resnapshot,
   and the end E' of the reads is recorded on each mirror
   (:func:`~binlogkit.spark.snapshot.finish`).
3. The stream then goes on from C. The table's changes under definitions
   before the one the mirror holds are past for the mirror (they are before
   S'); the later ones are MERGEd, over rows a chunk may have read after them,
   which the MERGE makes harmless as for the first snapshot; its inserts are
   appended only from E' on (the mirror's own E).

The change log keeps its rows, and the stream appends each change from C on
once, as for every table. The SCD type 2 history keeps its versions (reading a
table again changes no row of the source: it opens and closes none), and the
stream goes on writing it from C: a version current across the resnapshot is
closed by the key's next change, as before.

The plan, the groups done and E' are kept in ``LAKE/_binlogkit/resnapshot.json``
(written atomically): a run after a crash finishes the resnapshot before its
stream starts.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from binlogkit.errors import BinlogError
from binlogkit.schema.model import Catalog, TableDef, TableName
from binlogkit.schema.seed import reread_tables
from binlogkit.schema.store import Position
from binlogkit.schema.table_map import column_infos
from binlogkit.spark import session_parallelism
from binlogkit.spark.lake import storage
from binlogkit.spark.lake.storage import lake_path, working_copy
from binlogkit.spark.lake.tables import (
    DEFINITION,
    SNAPSHOT_END,
    SNAPSHOT_READING,
    UNKNOWN_COLUMNS,
    create_table,
    exists,
    position_property,
    set_properties,
)
from binlogkit.spark.lake.timeline import Timeline
from binlogkit.spark.snapshot import (
    CHUNK_ROWS,
    SnapshotProgress,
    SnapshotResult,
    check_binlog,
    chunk_groups,
    finish,
    mirror_path,
    write_groups,
)
from binlogkit.spark.snapshot_source import (
    SESSION_SQL,
    mirror_schema,
    open_snapshot,
    reads_alike,
    snapshot_position,
)
from binlogkit.spark.sync_state import LakeLayout

__all__ = ["run_resnapshot"]

log = logging.getLogger(__name__)


def run_resnapshot(
    spark: Any,
    url: str,
    lake: str | Path,
    tables: Sequence[str],
    *,
    selected: Callable[[str, str], bool],
    chunk_rows: int = CHUNK_ROWS,
    group_chunks: int | None = None,
    progress: Callable[[SnapshotProgress], None] | None = None,
) -> SnapshotResult | None:
    """Read the tables ``tables`` names (``db.t``; each of the lake's selection, as
    ``selected(db, t)`` tells) of the server at ``url`` again into the lake's mirrors, or
    finish the resnapshot a crash cut short (``tables`` then names the same, or none); the
    result of the lake's last resnapshot, None when it has none. See the module doc."""
    layout = LakeLayout(lake_path(lake))
    path = layout.resnapshot
    text = storage.read_text(path)
    state = None if text is None else json.loads(text)
    wanted = sorted(set(tables))
    if wanted and (state is None or state.get("marked")):
        per_group = group_chunks or 4 * (session_parallelism(spark) or 1)
        state = _plan(url, layout, wanted, selected, chunk_rows, per_group)
        storage.replace_json(path, state)
    elif state is None:
        return None
    elif wanted and wanted != state["selection"]:
        unfinished = ", ".join(state["selection"])
        raise BinlogError(
            f"lake {layout.root} has an unfinished resnapshot of {unfinished}: it cannot "
            f"start one of {', '.join(wanted)}",
            hint=f"finish it first (sync with --resnapshot {unfinished}, or without)",
        )
    if not state.get("emptied"):
        _empty_mirrors(spark, layout, state)
        state["emptied"] = True
        storage.replace_json(path, state)
    write_groups(spark, url, str(layout.root), state, path, progress)
    return finish(spark, url, str(layout.root), state, path)


def _plan(
    url: str,
    layout: LakeLayout,
    wanted: list[str],
    selected: Callable[[str, str], bool],
    chunk_rows: int,
    group_chunks: int,
) -> dict[str, Any]:
    names = [_name(layout, table, selected) for table in wanted]
    with working_copy(layout.history) as history:
        timeline = Timeline(history)
    with open_snapshot(url) as conn:
        check_binlog(conn)
        start = snapshot_position(conn)
        held: dict[str, Position] = {}
        chosen: list[TableDef] = []
        for name in names:
            now = reread_tables(conn, Catalog(), [name]).table(name.db, name.name)
            versions = timeline.of(name.db, name.name)
            last = versions[-1] if versions else None
            if now is None:
                raise BinlogError(f"resnapshot {name}: the server has no table {name}")
            if last is None or last.definition is None or not reads_alike(last.definition, now):
                raise BinlogError(
                    f"resnapshot {name}: the lake's schema history {layout.history} does not "
                    f"end with the definition the server has at {start}",
                    hint="the stream has not read the table's last DDL yet: let sync run past "
                    "it, then resnapshot",
                )
            held[str(name)] = last.at
            chosen.append(last.definition)
        for sql in SESSION_SQL[:3]:  # the reads set their own names
            conn.execute(sql)
        described, groups = chunk_groups(conn, chosen, chunk_rows, group_chunks)
        conn.execute("COMMIT")
    for table, info in described.items():
        if not info["key"]:
            raise BinlogError(
                f"resnapshot {table}: the table has no primary key and no NOT NULL unique key, "
                "so no mirror is kept of it"
            )
        info["definition"] = asdict(held[table])
    log.info("resnapshot at %s: %s, %d groups", start, ", ".join(described), len(groups))
    return {
        "start": asdict(start),
        "selection": wanted,
        "app_id": f"binlogkit-resnapshot-{uuid.uuid4()}",
        "chunk_rows": chunk_rows,
        "tables": described,
        "groups": groups,
        "done": 0,
        "rows": {},
    }


def _name(layout: LakeLayout, table: str, selected: Callable[[str, str], bool]) -> TableName:
    db, dot, name = table.partition(".")
    if not (dot and db and name) or any(c in table for c in "*?"):
        raise BinlogError(f"resnapshot {table!r}: give a table as DB.TABLE (no pattern)")
    if not selected(db, name):
        raise BinlogError(
            f"resnapshot {table}: not a table lake {layout.root} mirrors",
            hint="resnapshot a table of the lake's selection (binlogkit spark status LAKE)",
        )
    return TableName(db, name)


def _empty_mirrors(spark: Any, layout: LakeLayout, state: dict[str, Any]) -> None:
    """Each table's mirror made empty (a new Delta version of it, or a new table) with the
    columns of the definition the resnapshot reads, and binlogkit's properties of it."""
    start = Position(**state["start"])
    with working_copy(layout.history) as history:
        timeline = Timeline(history)
    for name, info in state["tables"].items():
        db, table = name.split(".", 1)
        held = Position(**info["definition"])
        version = next(v for v in timeline.of(db, table) if v.at.key() == held.key())
        assert version.definition is not None
        schema = mirror_schema(column_infos(version.definition), version.definition)
        properties = {
            DEFINITION: position_property(held),
            SNAPSHOT_END: SNAPSHOT_READING,
            UNKNOWN_COLUMNS: "{}",
        }
        target = str(mirror_path(str(layout.root), name))
        if exists(spark, target):
            create_table(spark, target, schema, replace=True)
            set_properties(spark, target, properties)
        else:
            create_table(spark, target, schema, extra=properties)
        log.info("resnapshot at %s: %s emptied", start, target)
