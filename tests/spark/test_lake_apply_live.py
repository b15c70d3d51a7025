"""Batches of a NO_LOG MariaDB's binlog (JSON images, many tables) applied to Delta tables,
typed by a schema history file, with DDL between and inside batches.

The workload adds, renames, widens and drops columns, moves rows by primary-key
updates, creates, renames and drops tables, and has a table without a primary
key. Applied batch by batch, every mirror equals ``SELECT *`` of its table, the
change log holds each change once, the SCD type 2 history has a version per
change; a batch of a table's inserts alone is appended to its mirror, not
MERGEd, unless it starts before the end of changes the mirror may hold already
(a snapshot's); a batch applied again changes nothing, a run stopped between
writes is completed by a rerun, and a type change no Delta table can hold
exactly stops with an error naming the column.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from binlog_batches import binlog_batches
from lake_commits import newest_commits

from binlogkit.errors import BinlogError
from binlogkit.sandbox import MariaDBSandbox

pytest.importorskip("delta")

from binlogkit.schema.history import SchemaHistory
from binlogkit.schema.store import Position
from binlogkit.sources import open_binlog
from binlogkit.spark.delta import CRASH_ENV, ApplyOptions, apply_batch
from binlogkit.spark.lake.tables import DEFINITION, UNKNOWN_COLUMNS, LakeTables, properties

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

BATCHES = [
    """
    CREATE DATABASE shop; USE shop;
    CREATE TABLE items (id INT PRIMARY KEY, qty BIGINT UNSIGNED, name VARCHAR(20),
                        price DECIMAL(8,2), at DATETIME, small TINYINT);
    CREATE TABLE notes (a INT, b VARCHAR(5));
    INSERT INTO items VALUES (1, 18446744073709551615, 'one', 1.50, '2024-01-02 03:04:05', 1),
      (2, 0, 'two', 2.00, NULL, -2), (3, 3, 'three', -3.25, NULL, 3), (4, 4, 'four', 4, NULL, 4);
    UPDATE items SET qty = qty + 1 WHERE id = 2;
    UPDATE items SET id = 40 WHERE id = 4;
    DELETE FROM items WHERE id = 3;
    INSERT INTO notes VALUES (1, 'x'), (1, 'x');
    """,
    """
    USE shop;
    UPDATE items SET name = 'deux' WHERE id = 2;
    ALTER TABLE items ADD COLUMN extra INT DEFAULT 5;
    INSERT INTO items (id, qty, name, price, extra) VALUES (5, 5, 'five', 5, 55);
    UPDATE items SET extra = id + 100 WHERE id <> 5;
    ALTER TABLE items RENAME COLUMN name TO label, MODIFY small INT;
    UPDATE items SET small = 100000 + id, label = concat(label, '!') WHERE id IN (1, 5);
    """,
    """
    USE shop;
    UPDATE items SET id = 6 WHERE id = 5;
    ALTER TABLE items DROP COLUMN at;
    UPDATE items SET price = price * 2, id = id + 1000 WHERE id = 40;
    CREATE TABLE fresh (k INT PRIMARY KEY, v TEXT);
    INSERT INTO fresh VALUES (1, 'a'), (2, 'b');
    RENAME TABLE fresh TO renamed;
    INSERT INTO renamed VALUES (3, 'c');
    CREATE TABLE gone (id INT PRIMARY KEY);
    INSERT INTO gone VALUES (1), (2);
    DROP TABLE gone;
    """,
    """
    USE shop;
    DELETE FROM renamed WHERE k = 1;
    INSERT INTO items (id, qty, label, price, small, extra) VALUES (7, 7, 'seven', 7, 7, 7);
    CREATE TABLE gone (id INT PRIMARY KEY, note VARCHAR(3));
    INSERT INTO gone VALUES (9, 'new');
    """,
]
RETYPED = "USE shop; ALTER TABLE items MODIFY price VARCHAR(20); UPDATE items SET label = 'x';"
TABLES = {"items": "id", "renamed": "k", "gone": "id"}


@pytest.fixture(scope="module")
def workload(
    mariadb_factory: Callable[..., MariaDBSandbox], tmp_path_factory: pytest.TempPathFactory
) -> tuple[MariaDBSandbox, list[list[str]], Path]:
    """The server, the binlog files of each batch, and the schema history file of them all."""
    server = mariadb_factory("lake", binlog_row_metadata="NO_LOG")
    history = tmp_path_factory.mktemp("history") / "schema.jsonl"
    return server, binlog_batches(server, BATCHES, history), history


def _read(spark: Any, files: list[str], history: Path) -> Any:
    return spark.read.format("binlog").option("schema", str(history)).load(files)


def _apply(
    spark: Any,
    workload: Any,
    lake: Path,
    versions: range,
    tables: LakeTables | None = None,
    **options: Any,
) -> None:
    """Apply the batches ``versions`` as one driver does: what it learns of the lake's tables
    (``tables``, else new: a driver that starts) kept from batch to batch."""
    _, batches, history = workload
    tables = tables or LakeTables(spark)
    for version in versions:
        changes = _read(spark, batches[version], history)
        apply_batch(
            changes, lake, ApplyOptions(history, "t", tables=tables, **options), version=version
        )


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _table(spark: Any, lake: Path, table: str, kind: str) -> Any:
    return spark.read.format("delta").load(str(lake / "shop" / table / kind))


def _mirrors_equal_server(spark: Any, server: MariaDBSandbox, lake: Path) -> None:
    for table, key in TABLES.items():
        mirror = _table(spark, lake, table, "mirror")
        rows = [tuple(_text(v) for v in row) for row in mirror.orderBy(key).collect()]
        assert rows == server.query(f"SELECT * FROM shop.{table} ORDER BY {key}"), table


def _log_positions(spark: Any, lake: Path, table: str) -> list[tuple[Any, ...]]:
    log = _table(spark, lake, table, "changes")
    return sorted(tuple(r) for r in log.select("file", "pos", "row", "op").collect())


@pytest.fixture(scope="module")
def source_positions(spark: Any, workload: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Each table's row changes in the workload's binlog, (file, pos, row, op) sorted: the
    files read once for every test and table."""
    _, batches, history = workload
    every = _read(spark, [f for files in batches for f in files], history)
    found: dict[str, list[tuple[Any, ...]]] = {}
    for row in every.select("table", "file", "pos", "row", "op").collect():
        found.setdefault(row[0], []).append(tuple(row[1:]))
    return {table: sorted(rows) for table, rows in found.items()}


def test_batches_follow_the_server_through_ddl(
    spark: Any, workload: Any, source_positions: Any, tmp_path: Path
) -> None:
    server, batches, _ = workload
    _apply(spark, workload, tmp_path, range(len(batches)), scd2=True)
    _mirrors_equal_server(spark, server, tmp_path)
    for table in ("items", "notes", "renamed"):
        assert _log_positions(spark, tmp_path, table) == source_positions[table]
    assert not (tmp_path / "shop" / "notes" / "mirror").exists()
    assert not (tmp_path / "shop" / "fresh" / "mirror").exists() or (
        _table(spark, tmp_path, "fresh", "mirror").count() == 0
    )
    mirror = str(tmp_path / "shop" / "items" / "mirror")
    recorded = properties(spark, mirror)
    unknown = json.loads(recorded[UNKNOWN_COLUMNS])
    assert unknown == {}  # the added column's DEFAULT is known: nothing left unknown
    assert json.loads(recorded[DEFINITION])["pos"] > 0
    changelog = _table(spark, tmp_path, "items", "changes").schema["after"].dataType
    assert {"name", "label", "at", "extra"} <= set(changelog.fieldNames())
    # The change log is appended beside the mirror's MERGE (another thread): each batch's row
    # writes carry its mark, its table creations and DDL steps none.
    for kind in ("changes", "mirror", "history"):
        commits = _operations(tmp_path, "items", kind)
        assert [marked for _, marked in commits] == [
            op in ("WRITE", "MERGE") for op, _ in commits
        ], commits
        assert sum(marked for _, marked in commits) >= 3  # a write a batch, at least
    # The last batch holds one insert of items: appended, so the replay below replays an append.
    assert _operations(tmp_path, "items", "mirror")[-1] == ("WRITE", True)
    assert [op for op, _ in _operations(tmp_path, "items", "mirror")].count("WRITE") == 1

    # Applied again (a crash after every commit): nothing changes.
    commits = newest_commits(tmp_path)
    _apply(spark, workload, tmp_path, range(1, len(batches)), scd2=True)
    assert newest_commits(tmp_path) == commits
    _mirrors_equal_server(spark, server, tmp_path)

    _history_matches_changes(spark, tmp_path)


def _operations(lake: Path, table: str, kind: str) -> list[tuple[str, bool]]:
    """Each commit of a lake table, in order: its operation, and whether it carries a mark."""
    out = []
    for commit in sorted((lake / "shop" / table / kind / "_delta_log").glob("*.json")):
        for line in commit.read_text().splitlines():
            info = json.loads(line).get("commitInfo") if line else None
            if info is not None:
                out.append((info["operation"], '"binlogkit"' in info.get("userMetadata", "")))
    return out


def _history_matches_changes(spark: Any, lake: Path) -> None:
    """One version per insert or update, closed by the key's next change; the current versions
    are the mirror's rows."""
    history = _table(spark, lake, "items", "history")
    changes = _table(spark, lake, "items", "changes").collect()
    versions = history.collect()
    opened = sorted((c.file, c.pos, c.row) for c in changes if c.op != "d")
    assert sorted((v.valid_from.file, v.valid_from.pos, v.valid_from.row) for v in versions) == (
        opened
    )
    closes = {(c.file, c.pos, c.row): c.before.id for c in changes if c.op != "c"}
    for v in versions:
        if v.valid_to is None:
            assert v.is_current
        else:
            assert not v.is_current
            assert closes[(v.valid_to.file, v.valid_to.pos, v.valid_to.row)] == v.id
    assert "at" in history.columns and "name" not in history.columns  # dropped stays, renamed
    mirror = _table(spark, lake, "items", "mirror")
    current = history.where("is_current").select(*mirror.columns)
    assert sorted(current.collect()) == sorted(mirror.collect())
    by_key: dict[int, list[str]] = {}
    for c in sorted(changes, key=lambda c: (c.file, c.pos, c.row)):
        if c.op != "d":
            by_key.setdefault(c.after.id, []).append(c.op)
    assert by_key[2] == ["c", "u", "u", "u"]  # insert, qty + 1, 'deux', extra


def test_inserts_are_merged_while_the_mirror_may_hold_them(
    spark: Any, workload: Any, tmp_path: Path
) -> None:
    """A mirror holding the row of a later insert already, as a snapshot's chunk read after it
    leaves it: a batch with that insert, starting before the end of such changes, MERGEs it
    (an append would hold the row twice), and applied again changes nothing."""
    server, batches, _ = workload
    tables = LakeTables(spark)
    _apply(spark, workload, tmp_path, range(3), tables)
    mirror = _table(spark, tmp_path, "items", "mirror")
    ahead = spark.createDataFrame([(7, 7, "seven", 7, 7, 7)], "id INT, qty INT, label STRING, "
                                  "price INT, small INT, extra INT")  # fmt: skip
    ahead.select(*(ahead[f.name].cast(f.dataType) for f in mirror.schema)).write.format(
        "delta"
    ).mode("append").save(str(tmp_path / "shop" / "items" / "mirror"))
    end = Position(os.path.basename(batches[3][-1]), 2**40)  # past batch 3's changes
    replayed = {"shop.items": end}
    _apply(spark, workload, tmp_path, range(3, 4), tables, replayed=replayed)
    assert _operations(tmp_path, "items", "mirror")[-1] == ("MERGE", True)
    _mirrors_equal_server(spark, server, tmp_path)
    commits = newest_commits(tmp_path)
    _apply(spark, workload, tmp_path, range(3, 4), tables, replayed=replayed)
    assert newest_commits(tmp_path) == commits


def test_a_stop_between_writes_is_completed_by_a_rerun(
    spark: Any,
    workload: Any,
    source_positions: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server, batches, _ = workload
    tables = LakeTables(spark)  # the same driver goes on (a streaming query restarted)
    monkeypatch.setenv(CRASH_ENV, "1")
    with pytest.raises(RuntimeError, match=CRASH_ENV):
        _apply(spark, workload, tmp_path, range(len(batches)), tables)
    monkeypatch.delenv(CRASH_ENV)
    _apply(spark, workload, tmp_path, range(1, len(batches)), tables)
    _mirrors_equal_server(spark, server, tmp_path)
    for table in ("items", "renamed"):
        assert _log_positions(spark, tmp_path, table) == source_positions[table]


def test_a_type_change_no_table_holds_exactly_stops_the_apply(
    spark: Any, mariadb_factory: Callable[..., MariaDBSandbox], tmp_path: Path
) -> None:
    server = mariadb_factory("narrow", binlog_row_metadata="NO_LOG")
    start = set(server.flush_binlogs()[:-1])
    server.execute(BATCHES[0])
    server.execute("USE shop; ALTER TABLE items ADD COLUMN extra INT; "
                   "ALTER TABLE items RENAME COLUMN name TO label;")  # fmt: skip
    server.execute(RETYPED)
    files = [str(f) for f in server.flush_binlogs()[:-1] if f not in start]
    history = tmp_path / "schema.jsonl"
    with open_binlog(files, schema=SchemaHistory(path=history)) as events:
        for _ in events:
            pass
    changes = _read(spark, files, history)
    with pytest.raises(
        BinlogError, match=r"column price changed .* DECIMAL\(8, 2\) to `price` VARCHAR\(20\)"
    ) as err:
        apply_batch(changes, tmp_path / "lake", ApplyOptions(history, "n"), version=0)
    assert "resnapshot shop.items" in str(err.value)
