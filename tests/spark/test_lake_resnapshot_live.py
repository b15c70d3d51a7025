"""A table's mirror read again while the stream goes on: ``sync --resnapshot`` (docs/lakehouse.md).

A live MariaDB into a lake (``sync --once``), then a narrowing MODIFY of
``shop.t`` (the apply stops, naming the fix) and ``shop.g``'s mirror moved
aside (the apply stops instead of making it again from the next change, which
would hold only the rows changed since). ``sync --resnapshot shop.t shop.g``
while inserts and updates keep coming to ``shop.t`` and ``shop.o`` (after each
group of 20-row chunks), stopped by a crash after its third group, then run
again without the option (it finishes the resnapshot): every mirror equals the
server's rows, ``shop.o``'s change log holds each of its changes once, and
``shop.t``'s keeps its rows from before the resnapshot. Each snapshot's mirror
records its own end E.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from binlogkit.errors import BinlogError
from binlogkit.sandbox import MariaDBSandbox

pytest.importorskip("delta")

from delta.tables import DeltaTable

from binlogkit.spark import resnapshot
from binlogkit.spark.lake.tables import SNAPSHOT_END, properties
from binlogkit.spark.lakehouse import sync
from binlogkit.spark.snapshot import CRASH_ENV, SnapshotProgress

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

TABLES = """
CREATE DATABASE shop; USE shop;
CREATE TABLE shop.t (id INT PRIMARY KEY, note VARCHAR(40), qty INT);
CREATE TABLE shop.o (id INT PRIMARY KEY, v INT);
CREATE TABLE shop.g (id INT PRIMARY KEY, v INT);
INSERT INTO shop.t SELECT seq, CONCAT('row ', seq), seq FROM seq_1_to_60;
INSERT INTO shop.o SELECT seq, seq FROM seq_1_to_20;
INSERT INTO shop.g SELECT seq, seq FROM seq_1_to_30;
"""
STOPPING = """
UPDATE shop.t SET note = 'before' WHERE id <= 5;
INSERT INTO shop.o VALUES (21, 21);
UPDATE shop.o SET v = -v WHERE id <= 3;
INSERT INTO shop.g VALUES (31, 31);
ALTER TABLE shop.t MODIFY qty SMALLINT;
INSERT INTO shop.t VALUES (61, 'after', 61);
UPDATE shop.t SET qty = 7 WHERE id = 6;
"""
O_CHANGES = 1 + 3  # STOPPING's row changes of shop.o


def _url(server: MariaDBSandbox) -> str:
    return f"mariadb://root@localhost/?socket={server.socket}"


def _writes(server: MariaDBSandbox, made: list[int]) -> Callable[[Any], None]:
    """A progress callback: after each group the resnapshot writes, an insert and an update of
    ``shop.t`` (the table it reads) and of ``shop.o``; ``made`` counts ``shop.o``'s."""

    def note(progress: Any) -> None:
        if isinstance(progress, SnapshotProgress):
            n = 100 + len(made)
            server.execute(
                f"INSERT INTO shop.t VALUES ({n}, 'during', {n}); "
                f"UPDATE shop.t SET note = 'moved {n}' WHERE id IN (1, 40, 60); "
                f"INSERT INTO shop.o VALUES ({n}, {n}); UPDATE shop.o SET v = v + 1000 WHERE id = 5"
            )
            made.append(n)

    return note


def _mirror(spark: Any, lake: Path, name: str) -> list[tuple[str, ...]]:
    df = spark.read.format("delta").load(str(lake / "shop" / name / "mirror"))
    return sorted(tuple(str(v) for v in row) for row in df.collect())


def _server(server: MariaDBSandbox, name: str) -> list[tuple[str, ...]]:
    return sorted(tuple(str(v) for v in row) for row in server.query(f"SELECT * FROM shop.{name}"))


def _end(state: Path) -> dict[str, Any]:
    """A snapshot's E as its state file has it (the fields a mirror records)."""
    end = json.loads(state.read_text())["end"]
    return {key: end[key] for key in ("file", "pos", "gtid")}


def _recorded_end(spark: Any, lake: Path, name: str) -> dict[str, Any]:
    return dict(json.loads(properties(spark, str(lake / "shop" / name / "mirror"))[SNAPSHOT_END]))


def _log(spark: Any, lake: Path, name: str) -> list[tuple[Any, ...]]:
    df = spark.read.format("delta").load(str(lake / "shop" / name / "changes"))
    return [tuple(row) for row in df.select("file", "pos", "row", "op").collect()]


def test_a_table_read_again_while_the_stream_goes_on(
    spark: Any,
    mariadb_factory: Callable[..., MariaDBSandbox],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = mariadb_factory("resnapshot")
    server.execute(TABLES)
    url, lake = _url(server), tmp_path / "lake"
    tables = ["shop.t", "shop.o", "shop.g"]
    sync(url, lake, tables=tables, once=True, spark=spark)
    end = _end(lake / "_binlogkit" / "snapshot.json")
    for name in ("t", "o", "g"):  # each snapshot mirror records E (apply_batch goes by it)
        assert _recorded_end(spark, lake, name) == end

    shutil.move(lake / "shop" / "g" / "mirror", tmp_path / "g-mirror-aside")
    server.execute(STOPPING)
    with pytest.raises(BinlogError) as stopped:
        sync(url, lake, tables=tables, once=True, spark=spark)
    text = f"{stopped.value} {stopped.value.hint}"
    assert "shop.g: its mirror" in text and str(lake / "shop" / "g" / "mirror") in text
    assert "--resnapshot shop.g" in text
    assert not (lake / "shop" / "g" / "mirror").exists()  # not made again from one change
    with pytest.raises(BinlogError, match="not a table lake"):
        sync(url, lake, tables=tables, once=True, spark=spark, resnapshot=["shop.x"])

    original = resnapshot.run_resnapshot

    def small(*args: Any, **kwargs: Any) -> Any:
        return original(*args, **{**kwargs, "chunk_rows": 20, "group_chunks": 1})

    monkeypatch.setattr(resnapshot, "run_resnapshot", small)
    made: list[int] = []
    monkeypatch.setenv(CRASH_ENV, "2")
    with pytest.raises(RuntimeError, match=CRASH_ENV):
        sync(
            url,
            lake,
            tables=tables,
            once=True,
            spark=spark,
            resnapshot=["shop.t", "shop.g"],
            progress=_writes(server, made),
        )
    monkeypatch.delenv(CRASH_ENV)
    assert len(made) == 2  # the groups before the crash's
    sync(url, lake, tables=tables, once=True, spark=spark, progress=_writes(server, made))
    assert len(made) > 2

    server.execute("INSERT INTO shop.t VALUES (500, 'late', 5); INSERT INTO shop.o VALUES (500, 5)")
    sync(url, lake, tables=tables, once=True, spark=spark)
    for name in ("t", "o", "g"):
        assert _mirror(spark, lake, name) == _server(server, name), name
    last = DeltaTable.forPath(spark, str(lake / "shop" / "t" / "mirror")).history(1).collect()
    assert last[0]["operation"] == "WRITE"  # the insert past E' appended, not MERGEd
    assert _recorded_end(spark, lake, "t") == _end(lake / "_binlogkit" / "resnapshot.json") != end

    changes = _log(spark, lake, "o")
    assert len(set(changes)) == len(changes) == O_CHANGES + 2 * len(made) + 1
    t_changes = _log(spark, lake, "t")
    assert len(set(t_changes)) == len(t_changes)
    assert len(t_changes) == 5 + 2 + 4 * len(made) + 1  # STOPPING's, the writes', the last
