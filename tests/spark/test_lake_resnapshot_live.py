"""A table's mirror read again while the stream goes on: ``sync --resnapshot`` (docs/lakehouse.md).

A live MariaDB into a lake with SCD type 2 history (``sync --once --scd2``),
then a narrowing MODIFY of ``shop.t`` (the apply stops, naming the fix) and
``shop.g``'s mirror moved aside (the apply stops instead of making it again
from the next change, which would hold only the rows changed since).
``sync --resnapshot shop.t shop.g shop.u`` (``shop.u`` keyed by a NOT NULL
unique key, no primary key) while inserts and updates keep coming to
``shop.t``, ``shop.u`` and ``shop.o`` (after each group of 20-row chunks),
stopped by a crash after its third group (``status`` there shows it reading),
then run again without the option (it finishes the resnapshot; what
``status`` shows then: done, with E'): every mirror equals the server's rows, ``shop.o``'s
change log holds each of its changes once, and ``shop.t``'s keeps its rows from
before the resnapshot. Each snapshot's mirror records its own end E. Each
resnapshotted table's history holds one version per change that opened one (none opened or
closed by the resnapshot), chained without gaps, its current versions the
mirror's rows.
"""

from __future__ import annotations

import itertools
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
from binlogkit.spark.lake_status import resnapshot_status, status
from binlogkit.spark.lakehouse import sync
from binlogkit.spark.snapshot import CRASH_ENV, SnapshotProgress

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

TABLES = """
CREATE DATABASE shop; USE shop;
CREATE TABLE shop.t (id INT PRIMARY KEY, note VARCHAR(40), qty INT);
CREATE TABLE shop.o (id INT PRIMARY KEY, v INT);
CREATE TABLE shop.g (id INT PRIMARY KEY, v INT);
CREATE TABLE shop.u (code VARCHAR(8) NOT NULL, v INT, UNIQUE KEY (code));
INSERT INTO shop.t SELECT seq, CONCAT('row ', seq), seq FROM seq_1_to_60;
INSERT INTO shop.o SELECT seq, seq FROM seq_1_to_20;
INSERT INTO shop.g SELECT seq, seq FROM seq_1_to_30;
INSERT INTO shop.u SELECT CONCAT('c', LPAD(seq, 3, '0')), seq FROM seq_1_to_30;
"""
STOPPING = """
UPDATE shop.t SET note = 'before' WHERE id <= 5;
INSERT INTO shop.o VALUES (21, 21);
UPDATE shop.o SET v = -v WHERE id <= 3;
INSERT INTO shop.g VALUES (31, 31);
UPDATE shop.u SET v = -v WHERE code <= 'c003';
ALTER TABLE shop.t MODIFY qty SMALLINT;
INSERT INTO shop.t VALUES (61, 'after', 61);
UPDATE shop.t SET qty = 7 WHERE id = 6;
"""
O_CHANGES = 1 + 3  # STOPPING's row changes of shop.o


def _url(server: MariaDBSandbox) -> str:
    return f"mariadb://root@localhost/?socket={server.socket}"


def _writes(server: MariaDBSandbox, made: list[int]) -> Callable[[Any], None]:
    """A progress callback: after each group the resnapshot writes, an insert and an update of
    ``shop.t`` and ``shop.u`` (tables it reads) and of ``shop.o``; ``made`` counts them."""

    def note(progress: Any) -> None:
        if isinstance(progress, SnapshotProgress):
            n = 100 + len(made)
            server.execute(
                f"INSERT INTO shop.t VALUES ({n}, 'during', {n}); "
                f"UPDATE shop.t SET note = 'moved {n}' WHERE id IN (1, 40, 60); "
                f"INSERT INTO shop.o VALUES ({n}, {n}); "
                f"UPDATE shop.o SET v = v + 1000 WHERE id = 5; "
                f"INSERT INTO shop.u VALUES ('n{n}', {n}); "
                f"UPDATE shop.u SET v = v + 1 WHERE code IN ('c001', 'c030')"
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


def _history(spark: Any, lake: Path, name: str, key: tuple[str, ...]) -> None:
    """``shop.name``'s SCD type 2 history describes its changes: one version opened by each
    insert and update of its change log (none by a resnapshot), each key's versions chained
    (each closed where the next opens), the current ones the mirror's rows of those keys."""
    folder = lake / "shop" / name
    history = spark.read.format("delta").load(str(folder / "history")).collect()
    changes = spark.read.format("delta").load(str(folder / "changes"))
    opens = changes.where("op != 'd'").select("file", "pos", "row").collect()
    opened = [tuple(v.valid_from)[1:] for v in history]
    assert sorted(opened) == sorted(tuple(c) for c in opens), name
    chains: dict[tuple[Any, ...], list[Any]] = {}
    for version in history:
        chains.setdefault(tuple(version[k] for k in key), []).append(version)
    for versions in chains.values():
        versions.sort(key=lambda v: tuple(v.valid_from)[1:])
        for older, newer in itertools.pairwise(versions):
            assert older.valid_to == newer.valid_from and not older.is_current, name
        assert versions[-1].is_current and versions[-1].valid_to is None, name  # no deletes
    mirror = spark.read.format("delta").load(str(folder / "mirror"))
    columns = mirror.columns
    rows = {tuple(r[k] for k in key): tuple(str(r[c]) for c in columns) for r in mirror.collect()}
    current = {k: tuple(str(v[c]) for c in columns) for k, (*_, v) in chains.items()}
    assert current == {k: rows[k] for k in chains}, name


def test_a_table_read_again_while_the_stream_goes_on(
    spark: Any,
    mariadb_factory: Callable[..., MariaDBSandbox],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = mariadb_factory("resnapshot")
    server.execute(TABLES)
    url, lake = _url(server), tmp_path / "lake"
    tables = ["shop.t", "shop.o", "shop.g", "shop.u"]
    sync(url, lake, tables=tables, once=True, scd2=True, spark=spark)
    end = _end(lake / "_binlogkit" / "snapshot.json")
    for name in ("t", "o", "g", "u"):  # each snapshot mirror records E (apply_batch goes by it)
        assert _recorded_end(spark, lake, name) == end

    shutil.move(lake / "shop" / "g" / "mirror", tmp_path / "g-mirror-aside")
    server.execute(STOPPING)
    with pytest.raises(BinlogError) as stopped:
        sync(url, lake, tables=tables, once=True, scd2=True, spark=spark)
    text = f"{stopped.value} {stopped.value.hint}"
    assert "shop.g: its mirror" in text and str(lake / "shop" / "g" / "mirror") in text
    assert "--resnapshot shop.g" in text
    assert not (lake / "shop" / "g" / "mirror").exists()  # not made again from one change
    with pytest.raises(BinlogError, match="not a table lake"):
        sync(url, lake, tables=tables, once=True, scd2=True, spark=spark, resnapshot=["shop.x"])

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
            scd2=True,
            spark=spark,
            resnapshot=["shop.t", "shop.g", "shop.u"],
            progress=_writes(server, made),
        )
    monkeypatch.delenv(CRASH_ENV)
    assert len(made) == 2  # the groups before the crash's
    reading = status(lake, spark=spark).text()
    lines = reading.splitlines()
    shown = {
        lines[n - 1].split(":")[0].strip(): line.strip()
        for n, line in enumerate(lines)
        if line.startswith("    resnapshot: ")
    }
    assert shown == {  # group 2 (shop.t's first) committed, not recorded: the rerun skips it
        "shop.g": "resnapshot: reading (2 of 2 chunks)",
        "shop.t": "resnapshot: reading (0 of 4 chunks)",
        "shop.u": "resnapshot: reading (0 of 2 chunks)",
    }, reading
    sync(
        url, lake, tables=tables, once=True, scd2=True, spark=spark, progress=_writes(server, made)
    )
    assert len(made) > 2

    server.execute("INSERT INTO shop.t VALUES (500, 'late', 5); INSERT INTO shop.o VALUES (500, 5)")
    sync(url, lake, tables=tables, once=True, scd2=True, spark=spark)
    for name in ("t", "o", "g", "u"):
        assert _mirror(spark, lake, name) == _server(server, name), name
    last = DeltaTable.forPath(spark, str(lake / "shop" / "t" / "mirror")).history(1).collect()
    assert last[0]["operation"] == "WRITE"  # the insert past E' appended, not MERGEd
    again = _end(lake / "_binlogkit" / "resnapshot.json")
    assert _recorded_end(spark, lake, "t") == _recorded_end(spark, lake, "u") == again != end
    done = resnapshot_status(lake / "_binlogkit" / "resnapshot.json")  # what status shows
    read = json.loads((lake / "_binlogkit" / "resnapshot.json").read_text())["end"]
    assert {name: (t.chunks_done, t.chunks, t.end) for name, t in done.items()} == {
        "shop.g": (2, 2, read),
        "shop.t": (4, 4, read),
        "shop.u": (2, 2, read),
    }

    changes = _log(spark, lake, "o")
    assert len(set(changes)) == len(changes) == O_CHANGES + 2 * len(made) + 1
    t_changes = _log(spark, lake, "t")
    assert len(set(t_changes)) == len(t_changes)
    assert len(t_changes) == 5 + 2 + 4 * len(made) + 1  # STOPPING's, the writes', the last
    for name, key in (("t", ("id",)), ("g", ("id",)), ("u", ("code",))):  # the resnapshotted
        _history(spark, lake, name, key)
