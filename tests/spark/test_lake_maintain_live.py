"""A lake's upkeep (``binlogkit spark maintain``) between batches of a MariaDB's binlog.

Batches of inserts leave many small files in the change log and the mirror (each
appended); the upkeep compacts them (OPTIMIZE) and, retaining 0 hours, vacuums the
files no current version needs: the same mirror rows and change log rows, fewer files,
no unreferenced data file left, the lake's own state untouched. After it a batch
applied again adds no commit (its marks are found past the OPTIMIZE commits), the
next batch (a MERGE) leaves the mirror as the server had it, and once Delta's log
cleanup has removed every commit before the newest checkpoint (the upkeep's VACUUM
END, no mark after it), a mirror that is gone still stops the apply. The upkeep a stream runs
between its batches (:class:`Schedule`) reports a summary line when due.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from binlog_batches import binlog_batches

from binlogkit.errors import BinlogError
from binlogkit.sandbox import MariaDBSandbox

pytest.importorskip("delta")

from binlogkit.spark.delta import ApplyOptions, apply_batch
from binlogkit.spark.lake import upkeep
from binlogkit.spark.lake.marks import Mark, holds_earlier
from binlogkit.spark.lake.tables import LakeTables
from binlogkit.spark.lake_maintain import Schedule, maintain
from binlogkit.spark.sync_state import LakeLayout

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

FILLS = 2
ROWS = 20
CREATE = "CREATE DATABASE m; CREATE TABLE m.t (id INT PRIMARY KEY, v INT, s VARCHAR(10));"
SQLS = [
    *(
        "INSERT INTO m.t VALUES "
        + ", ".join(f"({i}, {i}, 'r{i}')" for i in range(b * ROWS, (b + 1) * ROWS))
        for b in range(FILLS)
    ),
    "UPDATE m.t SET v = v + 1, s = 'upd' WHERE id % 3 = 0; DELETE FROM m.t WHERE id % 7 = 1;",
    "UPDATE m.t SET v = 0 WHERE id < 5;",
]
SQLS[0] = CREATE + SQLS[0]


@pytest.fixture(scope="module")
def batches(
    mariadb_factory: Callable[..., MariaDBSandbox], tmp_path_factory: pytest.TempPathFactory
) -> tuple[list[list[str]], Path]:
    """Each batch's binlog files, and the schema history."""
    server = mariadb_factory("maintain", binlog_row_metadata="NO_LOG")
    history = tmp_path_factory.mktemp("history") / "schema.jsonl"
    return binlog_batches(server, SQLS, history), history


def _commits(lake: Path) -> dict[str, list[str]]:
    return {log.parent.name: sorted(p.name for p in log.glob("*.json")) for log in _logs(lake)}


def _logs(lake: Path) -> list[Path]:
    return sorted(lake.glob("m/t/*/_delta_log"))


def _data_files(table: Path) -> int:
    return sum(1 for p in table.rglob("*.parquet") if "_delta_log" not in p.parts)


def test_upkeep_compacts_and_vacuums_and_batches_stay_exactly_once(
    spark: Any, batches: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files, history = batches
    tables = LakeTables(spark)
    lake = tmp_path / "lake"
    changes, mirror = lake / "m" / "t" / "changes", lake / "m" / "t" / "mirror"
    state = lake / "_binlogkit" / "snapshot.json"

    def apply(version: int) -> None:
        rows = spark.read.format("binlog").option("schema", str(history)).load(files[version])
        options = ApplyOptions(history=history, app_id="m", tables=tables)
        apply_batch(rows, lake, options, version=version)

    def read(path: Path, order: str) -> list[tuple[Any, ...]]:
        return [
            tuple(r)
            for r in spark.read.format("delta").load(str(path)).orderBy(*order.split()).collect()
        ]

    for version in range(FILLS):
        apply(version)
    state.parent.mkdir()
    state.write_text('{"tables": {}}')
    mirror_rows, change_rows = read(mirror, "id"), read(changes, "file pos row")
    before = {p.parent.name: _data_files(p.parent) for p in _logs(lake)}
    assert before["changes"] >= 2 and before["mirror"] >= 2, before

    monkeypatch.setattr(upkeep, "SMALL_FILES", 2)
    done = {d.kind: d.done for d in maintain(lake, retain_hours=0, spark=spark, tables=["m.t"])}
    assert set(done) == {"changes", "mirror"}
    for kind, path in (("changes", changes), ("mirror", mirror)):
        assert done[kind].compacted and done[kind].files_before == before[kind], done[kind]
        assert done[kind].files_after < done[kind].files_before
        assert _data_files(path) == done[kind].files_after  # the rewritten files vacuumed
    assert read(mirror, "id") == mirror_rows and read(changes, "file pos row") == change_rows
    assert state.read_text() == '{"tables": {}}'

    commits = _commits(lake)
    apply(FILLS - 1)  # applied again: its marks are found past the OPTIMIZE commits
    assert _commits(lake) == commits
    apply(FILLS)  # a MERGE of the compacted mirror
    got = [tuple(None if v is None else str(v) for v in r) for r in read(mirror, "id")]
    assert got == [
        (str(i), str(i + 1), "upd") if i % 3 == 0 else (str(i), str(i), f"r{i}")
        for i in range(FILLS * ROWS)
        if i % 7 != 1
    ]

    # Delta's log cleanup leaves the commits from the newest checkpoint on, here an OPTIMIZE's
    tables.set_properties(str(changes), {"delta.checkpointInterval": "1"})
    assert upkeep.upkeep(spark, str(changes), 0).compacted
    log = changes / "_delta_log"
    newest = json.loads((log / "_last_checkpoint").read_text())["version"]
    assert newest == int(max(log.glob("*.json")).stem)
    for old in log.glob("*.json"):
        if int(old.stem) < newest:
            old.unlink()
    assert len(list(log.glob("*.json"))) == 1  # VACUUM END alone: no mark of the lake left
    assert read(changes, "file pos row")[: len(change_rows)] == change_rows  # still readable
    assert holds_earlier(str(changes), Mark("m", FILLS + 1))
    shutil.rmtree(mirror)
    tables.forget(str(mirror))
    with pytest.raises(BinlogError, match="is gone, but earlier batches wrote it"):
        apply(FILLS + 1)


def test_the_stream_schedule_runs_the_upkeep_when_due(spark: Any, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    rows = spark.createDataFrame([(1, "a"), (2, "b")], "id INT, s STRING")
    for _ in range(2):
        rows.write.format("delta").mode("append").save(str(lake / "d" / "t" / "changes"))
    lines: list[str] = []
    Schedule(spark, LakeLayout(lake), 0, lines.append).between_batches()
    Schedule(spark, LakeLayout(lake), 60, lines.append).between_batches()
    assert lines == []
    Schedule(spark, LakeLayout(lake), 1e-9, lines.append).between_batches()
    assert lines and lines[0].startswith("maintenance: 1 Delta tables (0 compacted), ")
