"""Column DDL and CREATE TABLE with no later row change, from a live MariaDB into the lake.

``sync --once`` (snapshot, then a stream round) of a table whose columns are
then added, renamed and dropped (ADD, RENAME COLUMN, DROP, CHANGE ... AFTER)
with no row change after, beside a table created empty: at the end of the
round that carries the DDL the mirror's columns and rows equal ``SELECT *`` of
the server, the SCD type 2 history's columns follow (the dropped one kept; its
current version of the row the stream changed is the mirror's row),
and the new table's mirror is there, empty. The round's batch applied again
changes no table. The search index of the lake follows the rename at its next
round, with no row change of the table. Last, the round's batch applied again
to the lake as it was before it (a batch cut short before its DDL steps) brings
the mirrors there again.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lake_commits import newest_commits

from binlogkit.sandbox import MariaDBSandbox

pytest.importorskip("delta")


from binlogkit.schema.store import Position
from binlogkit.search.engine import SearchIndex
from binlogkit.search.manifest import IndexLayout, Manifest
from binlogkit.spark.delta import ApplyOptions, apply_batch
from binlogkit.spark.lake.storage import lake_path
from binlogkit.spark.lakehouse import sync
from binlogkit.spark.schema import CHANGE_SCHEMA
from binlogkit.spark.search.build import index
from binlogkit.spark.sync_state import LakeLayout, SyncState, batch_offset

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

SETUP = """
CREATE DATABASE shop; USE shop;
CREATE TABLE notes (id INT PRIMARY KEY, note VARCHAR(40), qty INT, memo VARCHAR(20));
INSERT INTO notes VALUES (1, 'apple pie', 3, 'x'), (2, 'plum tart', NULL, 'y'),
  (3, 'apple cake', 7, NULL);
"""

DDL = """
USE shop;
ALTER TABLE notes ADD COLUMN tag VARCHAR(10) NOT NULL DEFAULT 'new' AFTER note;
ALTER TABLE notes RENAME COLUMN note TO remark;
ALTER TABLE notes DROP COLUMN qty;
ALTER TABLE notes CHANGE memo memo VARCHAR(40) AFTER id;
CREATE TABLE fresh (id INT PRIMARY KEY, v DECIMAL(10,2));
"""


@pytest.fixture(scope="module")
def server(mariadb_factory: Callable[..., MariaDBSandbox]) -> MariaDBSandbox:
    return mariadb_factory("lake-ddl-end")


def _url(server: MariaDBSandbox) -> str:
    return f"mariadb://root@localhost/?socket={server.socket}"


def _delta(spark: Any, lake: Path, table: str, kind: str) -> Any:
    return spark.read.format("delta").load(str(lake / "shop" / table / kind))


def _text(rows: list[Any]) -> list[tuple[str | None, ...]]:
    return [tuple(None if v is None else str(v) for v in row) for row in rows]


def _columns(server: MariaDBSandbox, table: str) -> list[str]:
    rows = server.query(
        "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'shop' "
        f"AND TABLE_NAME = '{table}' ORDER BY ORDINAL_POSITION"
    )
    return [str(r[0]) for r in rows]


def _replay_last_batch(spark: Any, lake: Path) -> int:
    """Apply the lake's last micro-batch again, as a restarted query does (its offsets from
    the checkpoint; the rows of this one: none); its id."""
    layout = LakeLayout(lake_path(lake))
    state = SyncState.load(layout.state)
    assert state is not None
    offsets = (lake / "_binlogkit" / "checkpoint" / "offsets").iterdir()
    last = max(int(p.name) for p in offsets if p.name.isdigit())
    start, end = batch_offset(layout.checkpoint, last - 1), batch_offset(layout.checkpoint, last)
    assert start is not None and end is not None
    apply_batch(
        spark.createDataFrame([], CHANGE_SCHEMA),
        lake,
        ApplyOptions(
            lake / "_binlogkit" / "schema.jsonl",
            state.app_id,
            scd2=True,
            created=lambda db, table: True,
        ),
        version=last,
        start=Position(start["file"], start["pos"]),
        end=Position(end["file"], end["pos"]),
    )
    return last


def test_column_ddl_and_a_new_table_reach_the_lake_at_the_batch_end(
    spark: Any, server: MariaDBSandbox, tmp_path: Path
) -> None:
    lake, folder = tmp_path / "lake", tmp_path / "index"
    server.execute(SETUP)
    sync(_url(server), lake, tables=["shop.*"], once=True, scd2=True, spark=spark)
    index(lake, folder, columns=["shop.notes.note"], once=True, spark=spark)
    server.execute("INSERT INTO shop.notes VALUES (4, 'apple jam', 1, 'z')")
    sync(_url(server), lake, tables=["shop.*"], once=True, scd2=True, spark=spark)

    before = newest_commits(lake)
    server.execute(DDL)  # no row change after it
    report = sync(_url(server), lake, tables=["shop.*"], once=True, scd2=True, spark=spark)
    assert report.rows == 0 and report.batches >= 1
    mirror = _delta(spark, lake, "notes", "mirror")
    assert mirror.columns == _columns(server, "notes") == ["id", "memo", "remark", "tag"]
    assert _text(mirror.orderBy("id").collect()) == server.query("SELECT * FROM shop.notes")
    history = _delta(spark, lake, "notes", "history")
    assert {"remark", "tag", "qty"} <= set(history.columns)  # renamed, added; dropped: kept
    assert "note" not in history.columns
    current = history.where("is_current").select(*mirror.columns)  # the stream's row only
    assert _text(current.collect()) == server.query("SELECT * FROM shop.notes WHERE id = 4")
    fresh = _delta(spark, lake, "fresh", "mirror")  # created empty, as on the server
    assert fresh.columns == _columns(server, "fresh") and fresh.count() == 0
    assert str(fresh.schema["v"].dataType) == "DecimalType(10,2)"

    commits = newest_commits(lake)
    _replay_last_batch(spark, lake)  # the round's batch again: no table changes
    assert newest_commits(lake) == commits

    notes: list[str] = []
    assert index(lake, folder, once=True, spark=spark, progress=notes.append).batches == 1
    assert "shop.notes: column note renamed to remark: rebuilding its documents" in notes
    manifest = Manifest.load(IndexLayout(folder))
    assert manifest is not None and manifest.columns == {"shop.notes": ("remark",)}
    hits = SearchIndex(folder).search("apple", limit=10)
    assert sorted((h.key, h.column) for h in hits) == [
        ('{"id":1}', "remark"),
        ('{"id":3}', "remark"),
        ('{"id":4}', "remark"),
    ]

    # the batch cut short before its DDL steps (the lake as before it), then replayed: done
    notes_mirror = str(lake / "shop" / "notes" / "mirror")
    spark.sql(f"RESTORE TABLE delta.`{notes_mirror}` TO VERSION AS OF {before[notes_mirror]}")
    shutil.rmtree(lake / "shop" / "fresh")
    assert _delta(spark, lake, "notes", "mirror").columns == ["id", "note", "qty", "memo"]
    _replay_last_batch(spark, lake)
    mirror = _delta(spark, lake, "notes", "mirror")
    assert mirror.columns == ["id", "memo", "remark", "tag"]
    assert _text(mirror.orderBy("id").collect()) == server.query("SELECT * FROM shop.notes")
    assert _delta(spark, lake, "fresh", "mirror").count() == 0
