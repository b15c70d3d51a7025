"""The ``binlog`` source and the ingest on a MariaDB binlog without metadata (NO_LOG).

Tables are created inside the binlog and ALTERed (columns added, dropped,
renamed, retyped) between their row changes; the files are cut into many
small partitions, so partitions start after some ALTERs. Every row change
must carry the names and values ``binlogkit.open`` gives (its default schema
history), in JSON and typed mode; a table created before the binlog is known
from a seed file (``schema=FILE.sql``) or a history file (``.jsonl``), and
without one typed mode says what to do. The ingest keeps its history across
runs, an ALTER between them.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import binlogkit
from binlogkit import jsonenc
from binlogkit.binlog.constants import EventType
from binlogkit.binlog.events.query import QueryEvent
from binlogkit.errors import BinlogError
from binlogkit.pipeline.changes import row_changes
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.schema.history import SchemaHistory
from binlogkit.schema.seed import seed_from_file
from binlogkit.schema.store import Position

pytest.importorskip("pyspark")

from test_ingest import Killed, lake_changes, plain_changes
from test_source import collected
from test_source import plain_changes as plain_rows

from binlogkit.spark.ingest import CRASH_ENV, ingest
from binlogkit.spark.source import BinlogDataSource

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

BEFORE = (
    "CREATE TABLE before_t (id INT UNSIGNED PRIMARY KEY, name VARCHAR(20), big BIGINT UNSIGNED)"
)
"""A table created before the binlogs read: only a seed can name its columns."""

PHASES = [
    "CREATE TABLE t (id INT UNSIGNED PRIMARY KEY, a INT, b VARCHAR(20) CHARACTER SET latin1,"
    " e ENUM('x', 'y'))",
    "ALTER TABLE t ADD COLUMN c TEXT AFTER a",
    "ALTER TABLE t DROP COLUMN a",
    "ALTER TABLE t RENAME COLUMN b TO b2, MODIFY id BIGINT UNSIGNED NOT NULL",
    "ALTER TABLE t ADD COLUMN n TINYINT UNSIGNED FIRST",
]
TYPED = [
    "CREATE TABLE typed (id INT UNSIGNED PRIMARY KEY, n SMALLINT, s VARCHAR(10))",
    "ALTER TABLE typed ADD COLUMN u TINYINT UNSIGNED,"
    " CHANGE s label VARCHAR(10) CHARACTER SET utf8mb4",
]
"""A table altered before its first row: typed mode takes the altered columns."""


def _rows(phase: int, batch: int) -> list[str]:
    """One transaction's statements of a phase (the columns that phase's ``t`` has)."""
    base = 1000 * phase + 20 * batch
    ids = range(base, base + 20)
    columns = ["id, a, b, e", "id, a, c, b, e", "id, c, b, e", "id, c, b2, e", "n, id, c, b2, e"]
    values = [
        "({i}, -{i}, 'é{i}', 'y')",
        "({i}, -{i}, 'tëxt{i}', 'b{i}', 'x')",
        "({i}, 'c{i}', 'b{i}', 'y')",
        "({i}, 'c{i}', 'b2-{i}', 'x')",
        "(255, {i}, 'c{i}', 'n{i}', 'y')",
    ]
    return [
        "BEGIN",
        f"INSERT INTO t ({columns[phase]}) VALUES "
        + ", ".join(values[phase].format(i=i) for i in ids),
        f"UPDATE t SET e = 'x' WHERE id = {base}",
        f"DELETE FROM t WHERE id = {base + 1}",
        f"INSERT INTO typed VALUES ({base}, -{batch}, 'l{base}', {batch}),"
        f" ({base + 1}, NULL, 'ü', 255)",
        f"UPDATE typed SET n = 7 WHERE id = {base}",
        f"INSERT INTO before_t VALUES ({base}, 'n{base}', 18446744073709551615)",
        "COMMIT",
    ]


@pytest.fixture(scope="module")
def no_log(
    mariadb_factory: Callable[..., MariaDBSandbox], tmp_path_factory: pytest.TempPathFactory
) -> tuple[list[str], Path]:
    """The binlog files (after the one holding ``before_t``'s CREATE) and a seed file for it."""
    server = mariadb_factory("spark-no-log", binlog_row_metadata="NO_LOG")
    server.execute(f"CREATE DATABASE shop; USE shop; {BEFORE}")
    server.flush_binlogs()
    script = ["USE shop", *TYPED]
    for phase, ddl in enumerate(PHASES):
        script.append(ddl)
        for batch in range(8):
            script += _rows(phase, batch)
    server.execute(";\n".join(script) + ";")
    files = [str(f) for f in server.flush_binlogs()[1:]]
    server.stop()
    seed = tmp_path_factory.mktemp("seed") / "shop.sql"
    seed.write_text(f"CREATE DATABASE shop;\nUSE shop;\n{BEFORE};\n")
    return files, seed


def _reader(paths: list[str], **options: str) -> Any:
    source = BinlogDataSource({"paths": json.dumps(paths), **options})
    return source.reader(source.schema())


def _reader_rows(reader: Any) -> list[dict[str, Any]]:
    return [row for part in reader.partitions() for b in reader.read(part) for row in b.to_pylist()]


def _keys(rows: list[tuple[Any, ...]], table: str) -> set[str]:
    """The column names in the JSON images of a table's rows (CHANGE_COLUMNS tuples)."""
    images = [json.loads(image) for row in rows if row[6] == table for image in row[9:11] if image]
    return {key for image in images for key in image}


def test_partitions_after_alters_give_binlogkit_opens_rows(spark: Any, no_log: Any) -> None:
    files, _ = no_log
    expected = plain_rows([Path(f) for f in files])
    assert _keys(expected, "t") == {"id", "n", "a", "b", "b2", "c", "e"}
    assert _keys(expected, "typed") == {"id", "n", "label", "u"}
    df = spark.read.format("binlog").option("splitSize", "8k").load(files)
    assert df.rdd.getNumPartitions() > 8
    assert collected(df) == expected
    assert collected(spark.read.format("binlog").option("splitSize", "1g").load(files)) == expected

    # Partitions start after ALTERs, each with the definitions in force there.
    with binlogkit.open(files) as events:
        alters = [
            (e.header.file, e.header.end)
            for e in events
            if isinstance(e, QueryEvent) and e.text.startswith("ALTER TABLE t ")
        ]
    reader = _reader(files, splitSize="8k")
    parts = reader.partitions()
    last_alter = alters[-1]
    after = [p for p in parts if (p.splits[0].path, p.splits[0].start) > last_alter]
    assert after and all(p.catalogs is not None for p in parts)
    for part in after:
        table = part.catalogs[0].table("shop", "t")
        assert table is not None and [c.name for c in table.columns][:2] == ["n", "id"]
    first = parts[0].catalogs[0].table("shop", "t")
    assert first is None or [c.name for c in first.columns][1] == "a"

    # The reader and its catalogs pickle, and read the same rows.
    copy = pickle.loads(pickle.dumps(reader))
    assert [pickle.loads(pickle.dumps(p)) for p in parts] == parts
    assert _reader_rows(copy) == _reader_rows(reader)


def _open_images(files: list[str], table: str, schema: Any = "auto") -> list[tuple[Any, ...]]:
    with binlogkit.open(files, schema=schema, tables=lambda _, t: t == table) as events:
        return [(c.source.pos, c.source.row, c.op, c.before, c.after) for c in row_changes(events)]


def _spark_images(df: Any) -> list[tuple[Any, ...]]:
    def plain(image: Any) -> Any:
        return None if image is None else image.asDict()

    rows = df.select("pos", "row", "op", "before", "after").collect()
    return [(r.pos, r.row, r.op, plain(r.before), plain(r.after)) for r in rows]


def test_typed_table_takes_its_columns_from_the_history(spark: Any, no_log: Any) -> None:
    files, _ = no_log
    df = spark.read.format("binlog").option("table", "shop.typed").option("splitSize", "8k")
    df = df.load(files)
    assert df.schema["after"].dataType.fieldNames() == ["id", "n", "label", "u"]
    assert df.schema["after"].dataType["u"].dataType.typeName() == "short"  # unsigned TINYINT
    assert df.rdd.getNumPartitions() > 8
    want = _open_images(files, "typed")
    assert len(want) == 5 * 8 * 3 and want[1][4] == {"id": 1, "n": None, "label": "ü", "u": 255}
    assert _spark_images(df) == want


def test_a_table_no_schema_knows_needs_a_seed(spark: Any, no_log: Any) -> None:
    files, seed = no_log
    with pytest.raises(Exception, match=r"shop\.before_t.*option schema") as err:
        spark.read.format("binlog").option("table", "shop.before_t").load(files).collect()
    assert "CREATE TABLE" in str(err.value)

    def read() -> Any:
        return spark.read.format("binlog").option("splitSize", "8k").option("schema", str(seed))

    typed = read().option("table", "shop.before_t").load(files)
    seeded = SchemaHistory(seed_from_file(seed))
    want = _open_images(files, "before_t", seeded)
    assert want[0][4] == {"id": 0, "name": "n0", "big": 18446744073709551615}
    big = Decimal(18446744073709551615)
    assert _spark_images(typed) == [
        (pos, row, op, before, after and {**after, "big": big})
        for pos, row, op, before, after in want
    ]
    with binlogkit.open(files, schema=SchemaHistory(seed_from_file(seed))) as events:
        rows = [c for c in row_changes(events) if c.source.table == "before_t"]
    got = collected(read().load(files).where("table = 'before_t'"))
    assert [r[10] for r in got] == [jsonenc.dumps(c.after) for c in rows]
    assert '"big":{"$int":"18446744073709551615"}' in got[0][10]


def test_history_file_seeds_the_input_at_its_start(spark: Any, no_log: Any, tmp_path: Path) -> None:
    """A history written by binlogkit.open over all the files; the source reads the second half
    of them with it: the tables as of the second half's start."""
    files, seed = no_log
    path = tmp_path / "history.jsonl"
    history = SchemaHistory(seed_from_file(seed), path=path, at=Position(files[0], 0))
    with binlogkit.open(files, schema=history) as events:
        whole = [
            (c.source.pos, c.source.row, c.source.table, c.after and jsonenc.dumps(c.after))
            for c in row_changes(events)
            if c.source.file == Path(files[0]).name
        ]
    with binlogkit.open(files[0]) as events:
        gtids = [e.header.offset for e in events if e.header.type_code == EventType.MARIADB_GTID]
    middle = gtids[len(gtids) // 2]
    ranges = json.dumps([[files[0], middle, None]])
    read = spark.read.format("binlog").option("ranges", ranges).option("splitSize", "8k")
    df = read.option("schema", str(path)).load()
    assert df.rdd.getNumPartitions() > 2
    got = [(r[1], r[2], r[6], r[10]) for r in collected(df)]
    assert got == [w for w in whole if w[0] >= middle] and len(got) > 100
    assert any(t == "before_t" and after and "big" in after for _, _, t, after in got)
    assert any(t == "t" and after and "b2" in after for _, _, t, after in got)


def test_schema_none_gives_the_binlogs_own_columns(spark: Any, no_log: Any) -> None:
    files, _ = no_log
    df = spark.read.format("binlog").option("schema", "none").load(files)
    with binlogkit.open(files, schema=None) as events:
        expected = [c.after and jsonenc.dumps(c.after) for c in row_changes(events)]
    got = collected(df)
    assert [r[10] for r in got] == expected
    assert _keys(got, "typed") == {"@1", "@2", "@3", "@4"}


# -- ingest ------------------------------------------------------------------------------


def test_ingest_keeps_its_schema_history_across_runs(
    spark: Any,
    mariadb_factory: Callable[..., MariaDBSandbox],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = mariadb_factory("spark-ingest-no-log", binlog_row_metadata="NO_LOG")
    server.execute(f"CREATE DATABASE shop; USE shop; {BEFORE}")
    server.flush_binlogs()
    server.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10))", database="shop")
    server.execute("INSERT INTO t VALUES (1, -1, 'one'), (2, -2, 'two')", database="shop")
    server.execute("INSERT INTO before_t VALUES (1, 'x', 18446744073709551615)", database="shop")
    lake = tmp_path / "lake"
    later = [str(f) for f in server.binlog_files()[1:]]
    first = ingest(spark, later, lake, split_size=1024)
    assert first.rows == 3
    history = lake / "_binlogkit" / "schema.jsonl"
    assert '"table": "t"' in history.read_text()

    server.execute("ALTER TABLE t DROP COLUMN a, ADD COLUMN c TEXT FIRST", database="shop")
    server.execute("UPDATE t SET c = 'see', b = 'deux' WHERE id = 2", database="shop")
    server.execute("INSERT INTO t (id, b) VALUES (3, 'three')", database="shop")
    server.flush_binlogs()
    later = [str(f) for f in server.binlog_files()[1:]]

    def kill(pid: int, sig: int) -> None:
        assert (pid, sig) == (os.getpid(), signal.SIGKILL)
        raise Killed

    with monkeypatch.context() as patch:  # killed once Spark wrote the second run's batch
        patch.setenv(CRASH_ENV, "staged:1")
        patch.setattr(os, "kill", kill)
        with pytest.raises(Killed):
            ingest(spark, later, lake, split_size=1024)
    recorded = history.read_bytes()
    assert b'"c"' in recorded  # the ALTER, appended before the batch was written
    second = ingest(spark, later, lake, split_size=1024)
    assert second.rows == 2 and second.rolled_back
    assert history.read_bytes() == recorded  # read again, recorded once

    expected = plain_changes([Path(f) for f in later])
    assert lake_changes(spark, lake) == expected
    images = [json.loads(c[5]) for c in expected if c[5]]
    assert {"c": "see", "id": 2, "b": "deux"} in images  # names after the ALTER
    assert {"id": 1, "a": -1, "b": "one"} in images  # and before it
    assert any(set(image) == {"@1", "@2", "@3"} for image in images)  # before_t: no seed

    with pytest.raises(BinlogError, match="seeds a new lake only"):
        ingest(spark, later, lake, schema=str(tmp_path / "any.sql"))
    with pytest.raises(BinlogError, match="schema history"):
        ingest(spark, later, lake, schema=None)

    seed = tmp_path / "shop.sql"
    seed.write_text(f"CREATE DATABASE shop;\nUSE shop;\n{BEFORE};\n")
    seeded = tmp_path / "seeded"
    ingest(spark, later, seeded, schema=str(seed))
    row = [json.loads(c[5]) for c in lake_changes(spark, seeded) if c[5] and "name" in c[5]]
    assert row == [{"id": 1, "name": "x", "big": {"$int": "18446744073709551615"}}]
