"""The mirror's MERGE of a batch that changes rows of many of its files (a MariaDB's binlog).

The mirror is filled by batches of inserts (appended, a few files each); then
one batch mixes inserts of new keys, updates of old rows spread over those
files, updates that change the key (two keys swapped through a third, moves to new keys),
deletes, and keys inserted, updated and deleted within it. Applied, the mirror
equals ``SELECT *`` of the table, the MERGE rewrote more than one file, and the
batch applied again adds no commit to any table.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from binlog_batches import binlog_batches

from binlogkit.sandbox import MariaDBSandbox

pytest.importorskip("delta")

from binlogkit.spark.delta import ApplyOptions, apply_batch
from binlogkit.spark.lake.tables import LakeTables

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

FILLS = 4
ROWS = 50
CREATE = "CREATE DATABASE m; CREATE TABLE m.t (id INT PRIMARY KEY, v INT, s VARCHAR(10));"
MIXED = f"""
    USE m;
    INSERT INTO t VALUES (1000, 0, 'new'), (1001, 0, 'new');
    UPDATE t SET v = v + 1, s = 'upd' WHERE id % 7 = 3 AND id < {FILLS * ROWS};
    DELETE FROM t WHERE id % 11 = 5 AND id < {FILLS * ROWS};
    UPDATE t SET id = 5000 WHERE id = 1;
    UPDATE t SET id = 1 WHERE id = 2;
    UPDATE t SET id = 2 WHERE id = 5000;
    UPDATE t SET id = id + 2000 WHERE id IN (12, {FILLS * ROWS - 1});
    INSERT INTO t VALUES (1002, 1, 'gone');
    UPDATE t SET v = 2 WHERE id = 1002;
    DELETE FROM t WHERE id = 1002;
    DELETE FROM t WHERE id = 20;
    INSERT INTO t VALUES (20, 20, 'again');
    UPDATE t SET id = 1003 WHERE id = 1000;
"""


@pytest.fixture(scope="module")
def batches(
    mariadb_factory: Callable[..., MariaDBSandbox], tmp_path_factory: pytest.TempPathFactory
) -> tuple[MariaDBSandbox, list[list[str]], Path]:
    """The server, each batch's binlog files (``FILLS`` of inserts, then the mixed one), and
    the schema history."""
    server = mariadb_factory("merge", binlog_row_metadata="NO_LOG")
    sqls = [CREATE] + [
        "INSERT INTO m.t VALUES "
        + ", ".join(f"({i}, {i}, 'r{i}')" for i in range(b * ROWS, (b + 1) * ROWS))
        for b in range(1, FILLS)
    ]
    sqls[0] += "INSERT INTO m.t VALUES " + ", ".join(f"({i}, {i}, 'r{i}')" for i in range(ROWS))
    history = tmp_path_factory.mktemp("history") / "schema.jsonl"
    return server, binlog_batches(server, [*sqls, MIXED], history), history


def _commits(lake: Path) -> dict[str, list[dict[str, Any]]]:
    """Each lake table's commits' ``commitInfo``, in order."""
    out = {}
    for log in sorted(lake.glob("m/t/*/_delta_log")):
        infos = []
        for commit in sorted(log.glob("*.json")):
            for line in commit.read_text().splitlines():
                if line.startswith('{"commitInfo"'):
                    infos.append(json.loads(line)["commitInfo"])
        out[log.parent.name] = infos
    return out


def test_a_batch_changing_rows_of_many_files_leaves_the_mirror_equal_to_the_server(
    spark: Any, batches: Any, tmp_path: Path
) -> None:
    server, files, history = batches
    tables = LakeTables(spark)

    def apply(version: int) -> None:
        changes = spark.read.format("binlog").option("schema", str(history)).load(files[version])
        options = ApplyOptions(history=history, app_id="m", tables=tables)
        apply_batch(changes, tmp_path, options, version=version)

    for version in range(len(files)):
        apply(version)
    mirror = spark.read.format("delta").load(str(tmp_path / "m" / "t" / "mirror"))
    rows = [tuple(None if v is None else str(v) for v in r) for r in mirror.orderBy("id").collect()]
    assert rows == server.query("SELECT * FROM m.t ORDER BY id")
    commits = _commits(tmp_path)
    operations = [c["operation"] for c in commits["mirror"]]
    assert operations[-1] == "MERGE" and operations.count("MERGE") == 1, operations
    assert int(commits["mirror"][-1]["operationMetrics"]["numTargetFilesRemoved"]) > 1

    apply(len(files) - 1)  # applied again: no table gets a commit
    assert _commits(tmp_path) == commits
