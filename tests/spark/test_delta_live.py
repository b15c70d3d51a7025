"""Row changes of a live MariaDB applied to Delta tables in batches, exactly once.

A workload of inserts, updates and deletes (a primary key moved, keys changed
several times within a batch, a key deleted and inserted again) is cut into
three batches of binlog files. Applied in order (``apply_batch`` with the
schema history of the files), the mirror equals the
server's table and the change log holds each change once; a batch applied
again changes nothing; a run stopped between the change log and the MERGE is
completed by applying its batch again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lake_commits import newest_commit

from binlogkit.errors import BinlogError
from binlogkit.sandbox import MariaDBSandbox

pytest.importorskip("delta")

from pyspark.sql.types import DecimalType, IntegerType, TimestampNTZType

from binlogkit.schema.history import SchemaHistory
from binlogkit.sources import open_binlog
from binlogkit.spark.delta import (
    CODEGEN_CACHE,
    CRASH_ENV,
    ApplyOptions,
    apply_batch,
    apply_changes,
    check_codegen_cache,
    table_key,
)
from binlogkit.spark.lake.marks import Mark, holds

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

SETUP = """
CREATE DATABASE shop; USE shop;
CREATE TABLE items (id INT PRIMARY KEY, qty BIGINT UNSIGNED, name VARCHAR(20),
                    price DECIMAL(8,2), at DATETIME, pos SMALLINT DEFAULT 7, file CHAR(2));
CREATE TABLE notes (a INT, b VARCHAR(5));
"""
BATCHES = [
    """
    INSERT INTO items (id, qty, name, price, at) VALUES
      (1, 18446744073709551615, 'one', 1.50, '2024-01-02 03:04:05'),
      (2, 0, 'two', 2.00, NULL), (3, 3, 'three', -3.25, '1999-12-31 23:59:59'),
      (4, 4, 'four', 4.00, NULL), (5, 5, 'five', 5.00, NULL), (6, 6, NULL, NULL, NULL);
    UPDATE items SET qty = qty + 1 WHERE id = 2;
    UPDATE items SET qty = qty + 1 WHERE id = 2;
    UPDATE items SET name = 'deux' WHERE id = 2;
    DELETE FROM items WHERE id = 3;
    INSERT INTO notes VALUES (1, 'x'), (1, 'x');
    """,
    """
    UPDATE items SET id = 40 WHERE id = 4;
    INSERT INTO items (id, qty, name, price, at) VALUES (7, 7, 'seven', 7.00, NULL);
    UPDATE items SET name = 'sept' WHERE id = 7;
    DELETE FROM items WHERE id = 7;
    UPDATE items SET name = 'cinq' WHERE id = 5;
    UPDATE items SET id = 50 WHERE id = 5;
    UPDATE items SET name = 'fifty' WHERE id = 50;
    INSERT INTO items (id, qty, name, price, at) VALUES
      (3, 33, 'again', 3.30, '2025-06-07 08:09:10');
    """,
    """
    DELETE FROM items WHERE id = 40;
    INSERT INTO items (id, qty, name, price, at) VALUES (4, 44, 'back', 4.40, NULL);
    UPDATE items SET qty = qty DIV 2, pos = -id, file = 'f';
    UPDATE items SET id = id + 1000 WHERE id IN (1, 2);
    UPDATE items SET id = 1 WHERE id = 1002;
    """,
]


@pytest.fixture(scope="module")
def workload(
    mariadb_factory: Callable[..., MariaDBSandbox], tmp_path_factory: pytest.TempPathFactory
) -> tuple[MariaDBSandbox, list[Any], Path]:
    """The running server, the binlog files of each batch and their schema history file."""
    server = mariadb_factory("delta")
    server.execute(SETUP)
    seen: set[Path] = set()
    batches = []
    for sql in BATCHES:
        server.execute(f"USE shop; {sql}")
        closed = server.flush_binlogs()[:-1]
        batches.append([str(f) for f in closed if f not in seen])
        seen.update(closed)
    history = tmp_path_factory.mktemp("history") / "schema.jsonl"
    with open_binlog(sorted(seen), schema=SchemaHistory(path=history)) as events:
        for _ in events:
            pass
    return server, batches, history


def _batch(spark: Any, files: list[str], table: str = "shop.items") -> Any:
    return spark.read.format("binlog").option("table", table).load(files)


@pytest.fixture(scope="module")
def items_changes(spark: Any, workload: Any) -> list[tuple[Any, ...]]:
    """(file, pos, row, op) of each change of shop.items in the workload's binlog, sorted: the
    files read once for every test."""
    _, batches, _ = workload
    every = _batch(spark, [f for files in batches for f in files])
    return sorted(tuple(r) for r in every.select("file", "pos", "row", "op").collect())


def _apply_all(spark: Any, batches: list[list[str]], lake: Path) -> None:
    for version, files in enumerate(batches):
        apply_changes(_batch(spark, files), lake, "shop.items", ["id"], app_id="t", version=version)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _mirror_equals_server(spark: Any, server: MariaDBSandbox, lake: Path) -> None:
    mirror = spark.read.format("delta").load(str(lake / "shop" / "items" / "mirror"))
    types = {f.name: f.dataType for f in mirror.schema.fields}
    assert types["id"] == IntegerType() and types["qty"] == DecimalType(20, 0)
    assert types["price"] == DecimalType(8, 2) and types["at"] == TimestampNTZType()
    rows = [tuple(_text(v) for v in row) for row in mirror.orderBy("id").collect()]
    assert rows == server.query("SELECT * FROM shop.items ORDER BY id")


def _log(spark: Any, lake: Path) -> list[tuple[Any, ...]]:
    log = spark.read.format("delta").load(str(lake / "shop" / "items" / "changes"))
    return sorted(tuple(r) for r in log.select("file", "pos", "row", "op").collect())


def _versions(lake: Path) -> tuple[int, int]:
    base = lake / "shop" / "items"
    return newest_commit(base / "changes"), newest_commit(base / "mirror")


def test_mirror_and_change_log_follow_the_server(
    spark: Any, workload: Any, items_changes: list[tuple[Any, ...]], tmp_path: Path
) -> None:
    server, batches, _ = workload
    assert table_key(batches[0], "shop.items") == ("id",)
    _apply_all(spark, batches, tmp_path)
    _mirror_equals_server(spark, server, tmp_path)
    want = items_changes
    assert len(want) == 10 + 8 + 11 and {op for *_, op in want} == {"c", "u", "d"}
    assert _log(spark, tmp_path) == want

    # Applied again (a crash after both commits): nothing changes.
    versions = _versions(tmp_path)
    for version in (2, 0):
        files = batches[version]
        apply_changes(
            _batch(spark, files), tmp_path, "shop.items", ["id"], app_id="t", version=version
        )
    assert _versions(tmp_path) == versions
    assert _log(spark, tmp_path) == want
    _mirror_equals_server(spark, server, tmp_path)


def test_a_stop_between_log_and_merge_is_completed_by_a_rerun(
    spark: Any,
    workload: Any,
    items_changes: list[tuple[Any, ...]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server, batches, _ = workload
    monkeypatch.setenv(CRASH_ENV, "1")
    with pytest.raises(RuntimeError, match=CRASH_ENV):
        _apply_all(spark, batches, tmp_path)
    assert _versions(tmp_path) == (2, 1)  # both created; change log: 2 batches; mirror: 1
    monkeypatch.delenv(CRASH_ENV)
    _apply_all(spark, batches, tmp_path)
    assert _versions(tmp_path) == (3, 3)
    _mirror_equals_server(spark, server, tmp_path)
    assert _log(spark, tmp_path) == items_changes


def test_a_merge_that_changes_no_row_is_recorded_as_the_batch_write(
    spark: Any, workload: Any, tmp_path: Path
) -> None:
    _, batches, _ = workload
    apply_changes(_batch(spark, batches[0]), tmp_path, "shop.items", ["id"], app_id="t", version=0)
    # batch 1 cut down to the changes of a key it inserts and deletes: the MERGE changes nothing
    seven = _batch(spark, batches[1]).where("coalesce(after.id, before.id) = 7")
    assert sorted(r.op for r in seven.collect()) == ["c", "d", "u"]
    apply_changes(seven, tmp_path, "shop.items", ["id"], app_id="t", version=1)
    assert _versions(tmp_path) == (2, 2)
    assert holds(str(tmp_path / "shop" / "items" / "mirror"), Mark("t", 1))


def test_a_table_without_primary_key_gets_a_change_log_only(
    spark: Any, workload: Any, tmp_path: Path
) -> None:
    _, batches, _ = workload
    assert table_key(batches[0], "shop.notes") == ()
    notes = _batch(spark, batches[0], "shop.notes")
    with pytest.raises(BinlogError, match=r"no primary key(.|\n)*mirror=False"):
        apply_changes(notes, tmp_path, "shop.notes", (), app_id="t", version=0)
    assert not (tmp_path / "shop").exists()
    apply_changes(notes, tmp_path, "shop.notes", (), app_id="t", version=0, mirror=False)
    log = spark.read.format("delta").load(str(tmp_path / "shop" / "notes" / "changes"))
    assert [(r.op, r.after.asDict()) for r in log.collect()] == [("c", {"a": 1, "b": "x"})] * 2
    assert not (tmp_path / "shop" / "notes" / "mirror").exists()


def test_a_batch_with_json_images_is_applied_per_table(
    spark: Any, workload: Any, items_changes: list[tuple[Any, ...]], tmp_path: Path
) -> None:
    server, batches, history = workload
    for version, files in enumerate(batches):
        changes = spark.read.format("binlog").load(files)
        apply_batch(changes, tmp_path, ApplyOptions(history, "json"), version=version)
    _mirror_equals_server(spark, server, tmp_path)
    assert _log(spark, tmp_path) == items_changes
    notes = spark.read.format("delta").load(str(tmp_path / "shop" / "notes" / "changes"))
    assert [r.after.asDict() for r in notes.collect()] == [{"a": 1, "b": "x"}] * 2
    assert not (tmp_path / "shop" / "notes" / "mirror").exists()


def test_sessions_cache_the_generated_classes_of_a_batch(
    spark: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A Delta session keeps Spark's generated classes of its micro-batches (set at its start,
    by ``with_delta``); a session started elsewhere with fewer is warned about."""
    key, wanted = CODEGEN_CACHE
    assert int(spark.conf.get(key)) >= wanted

    class Conf:
        def __init__(self, value: str | None) -> None:
            self.value = value

        def get(self, name: str, default: str) -> str:
            assert name == key
            return self.value or default

    class Session:
        def __init__(self, value: str | None) -> None:
            self.conf = Conf(value)

    check_codegen_cache(Session(str(wanted)))
    assert not caplog.records
    check_codegen_cache(Session(None))
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert f"--conf {key}={wanted}" in caplog.records[0].getMessage()
