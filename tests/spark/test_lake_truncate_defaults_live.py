"""TRUNCATE TABLE and ADD COLUMN with defaults, from a live MariaDB's binlog into Delta mirrors.

A TRUNCATE in the middle of a batch (changes before it and after it), one at the
end of a batch (after the table's last change there), and an ADD COLUMN of
columns of many types with literal defaults, NOT NULL without DEFAULT and
``CURRENT_TIMESTAMP(3)`` on a table with rows: after every batch each mirror
equals ``SELECT *`` of the source, the change log has one ``t`` row per
TRUNCATE, the SCD type 2 history closes its versions there, and a batch applied
again changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lake_commits import newest_commits

from binlogkit.sandbox import MariaDBSandbox

pytest.importorskip("delta")


from binlogkit.schema.history import SchemaHistory
from binlogkit.sources import open_binlog
from binlogkit.spark.delta import ApplyOptions, apply_batch

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

BATCHES = [
    """
    CREATE DATABASE shop; USE shop;
    CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10));
    INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c');
    UPDATE t SET v = 'bb' WHERE id = 2;
    TRUNCATE TABLE t;
    INSERT INTO t VALUES (2, 'new'), (4, 'd');
    CREATE TABLE d (id INT PRIMARY KEY, x INT);
    INSERT INTO d VALUES (1, 10), (2, 20);
    """,
    r"""
    USE shop;
    INSERT INTO t VALUES (5, 'e');
    TRUNCATE t;
    ALTER TABLE d ADD COLUMN (a INT DEFAULT 5, ub BIGINT UNSIGNED DEFAULT 18446744073709551615,
      dc DECIMAL(10,3) DEFAULT -1.5, s VARCHAR(10) DEFAULT 'a''b\\c', e ENUM('x','y') DEFAULT 'y',
      dt DATE DEFAULT '2020-1-2', nn INT NOT NULL, ns VARCHAR(3) NOT NULL,
      ne ENUM('p','q') NOT NULL, ts TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
      f FLOAT DEFAULT 1.1, tm TIME(1) DEFAULT '-1:02:03.5', st SET('a','b') DEFAULT 'b,a',
      bt BIT(4) DEFAULT b'101', vb VARBINARY(4) DEFAULT 0x4142);
    INSERT INTO d (id, x, nn, ns, ne) VALUES (3, 30, 7, 'z', 'q');
    """,
    """
    USE shop;
    INSERT INTO t VALUES (6, 'f');
    UPDATE d SET x = 21 WHERE id = 2;
    """,
]

D_SERVER = (
    "SELECT id, x, a, ub, dc, s, e, dt, nn, ns, ne, CAST(UNIX_TIMESTAMP(ts) * 1000000 AS SIGNED),"
    " CAST(f AS DOUBLE), CAST(TIME_TO_SEC(tm) * 1000000 AS SIGNED), st, bt + 0, HEX(vb)"
    " FROM shop.d ORDER BY id"
)
D_MIRROR = (
    *("id", "x", "a", "ub", "dc", "s", "e", "dt", "nn", "ns", "ne", "unix_micros(ts)"),
    *("CAST(f AS DOUBLE)", "tm", "array_join(st, ',')", "bt", "hex(vb)"),
)


@pytest.fixture(scope="module")
def workload(
    mariadb_factory: Callable[..., MariaDBSandbox], tmp_path_factory: pytest.TempPathFactory
) -> tuple[MariaDBSandbox, list[list[str]], Path]:
    """The server, the binlog files of each batch, the schema history of them all; the
    server's tables are checked batch by batch, so the batches run as they are applied."""
    server = mariadb_factory("lake-truncate", binlog_row_metadata="NO_LOG")
    return server, [], tmp_path_factory.mktemp("history") / "schema.jsonl"


def _run(workload: Any, sql: str) -> list[str]:
    """Run ``sql`` on the server; its binlog files (read into the schema history)."""
    server, batches, history = workload
    seen = {str(f) for f in server.flush_binlogs()[:-1]}
    server.execute(sql)
    files = [str(f) for f in server.flush_binlogs()[:-1] if str(f) not in seen]
    batches.append(files)
    with open_binlog(files, schema=SchemaHistory.load(history)) as events:
        for _ in events:
            pass
    return files


def _apply(spark: Any, workload: Any, lake: Path, version: int) -> None:
    _, batches, history = workload
    changes = spark.read.format("binlog").option("schema", str(history)).load(batches[version])
    apply_batch(changes, lake, ApplyOptions(history, "t", scd2=True), version=version)


def _delta(spark: Any, lake: Path, table: str, kind: str) -> Any:
    return spark.read.format("delta").load(str(lake / "shop" / table / kind))


def _text(rows: list[Any]) -> list[tuple[str | None, ...]]:
    return [tuple(None if v is None else str(v) for v in row) for row in rows]


def _mirrors_equal_server(spark: Any, server: MariaDBSandbox, lake: Path, added: bool) -> None:
    t = _delta(spark, lake, "t", "mirror").orderBy("id").collect()
    assert _text(t) == server.query("SELECT * FROM shop.t ORDER BY id")
    d = _delta(spark, lake, "d", "mirror")
    if added:
        d = d.selectExpr(*D_MIRROR)
    sql = D_SERVER if added else "SELECT * FROM shop.d ORDER BY id"
    assert _text(d.orderBy("id").collect()) == server.query(sql)


def test_truncate_and_added_defaults_follow_the_server(
    spark: Any, workload: Any, tmp_path: Path
) -> None:
    server = workload[0]
    for version, sql in enumerate(BATCHES):
        _run(workload, sql)
        _apply(spark, workload, tmp_path, version)
        _mirrors_equal_server(spark, server, tmp_path, added=version > 0)
        if version == 1:
            assert _delta(spark, tmp_path, "t", "mirror").count() == 0  # truncated at the end
            commits = newest_commits(tmp_path)
            _apply(spark, workload, tmp_path, version)  # applied again: nothing changes
            assert newest_commits(tmp_path) == commits

    stamps = server.query("SELECT DISTINCT ts FROM shop.d WHERE id < 3")
    assert len(stamps) == 1 and str(stamps[0][0]).count(".") == 1  # one ALTER time, with ms

    log = _delta(spark, tmp_path, "t", "changes")
    truncates = log.where("op = 't'").orderBy("file", "pos").collect()
    assert len(truncates) == 2
    assert all(r.before is None and r.after is None and r.event_type == "QUERY" for r in truncates)
    assert log.where("op = 'c'").count() == 7

    history = _delta(spark, tmp_path, "t", "history")
    mirror = _delta(spark, tmp_path, "t", "mirror")
    current = history.where("is_current").select(*mirror.columns)
    assert sorted(current.collect()) == sorted(mirror.collect())
    closed = {(r.valid_to.file, r.valid_to.pos) for r in history.where("NOT is_current").collect()}
    truncated_at = {(r.file, r.pos) for r in truncates}
    assert truncated_at <= closed  # the versions open at each TRUNCATE are closed there
    closes = history.where("NOT is_current").collect()
    at_truncates = [r.id for r in closes if (r.valid_to.file, r.valid_to.pos) in truncated_at]
    assert sorted(at_truncates) == [1, 2, 2, 3, 4, 5]  # 1, 2 'bb', 3; then 2 'new', 4, 5

    d_history = _delta(spark, tmp_path, "d", "history")
    d_current = d_history.where("is_current").selectExpr(*D_MIRROR).orderBy("id")
    assert _text(d_current.collect()) == server.query(D_SERVER)
