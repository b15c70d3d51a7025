"""DDL on a table while the snapshot reads its chunks (docs/snapshot.md, "DDL during the snapshot").

The snapshot's driver calls ``progress`` after each group's commit: the test
alters the table there, so the next groups' chunks are read (each in its own
consistent snapshot) after the ALTER, at positions past the snapshot's start S.

- ADD COLUMN (and rows written with it): the chunks read the columns of S, the
  stream from S adds the column at the ALTER: the mirror equals the source.
- DROP COLUMN: the values of S's column are gone from the later chunks'
  snapshots; the snapshot stops with an error naming the table, the column and
  the positions, and saying how to start again (``slow``; a retyped column, read
  by a chunk reader without Spark, gives the same error in the default run).
- An ALTER that rebuilds the table (ALGORITHM=COPY) between a chunk's START
  TRANSACTION and its SELECT: InnoDB refuses the read (error 1412), and the
  chunk is read again in a new snapshot.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from binlogkit.errors import BinlogError
from binlogkit.io.mysql import ConnectionSpec, MySQLConnection
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.schema.model import Catalog, TableName
from binlogkit.schema.seed import reread_tables
from binlogkit.schema.table_map import column_infos

pytest.importorskip("delta")

from pyspark.sql.pandas.types import to_arrow_schema

from binlogkit.spark import snapshot_source
from binlogkit.spark.lakehouse import sync
from binlogkit.spark.snapshot import SnapshotProgress

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

TABLE = """
CREATE DATABASE IF NOT EXISTS ddl; USE ddl;
CREATE TABLE ddl.{name} (id INT PRIMARY KEY, note VARCHAR(40), qty INT);
INSERT INTO ddl.{name} SELECT seq, CONCAT('row ', seq), seq FROM seq_1_to_120;
"""


def _url(server: MariaDBSandbox) -> str:
    return f"mariadb://root@localhost/?socket={server.socket}"


@pytest.fixture(scope="module")
def server(mariadb_factory: Callable[..., MariaDBSandbox]) -> MariaDBSandbox:
    return mariadb_factory("snapshot-ddl")


def _altering(server: MariaDBSandbox, sql: str) -> Callable[[Any], None]:
    """A progress callback that runs ``sql`` after the snapshot's first group."""
    done: list[bool] = []

    def note(progress: Any) -> None:
        if isinstance(progress, SnapshotProgress) and not done:
            done.append(True)
            server.execute(sql)

    return note


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """sync's snapshot in groups of one 10-row chunk (12 groups for a table)."""
    from binlogkit.spark import snapshot

    original = snapshot.run_snapshot

    def run(*args: Any, **kwargs: Any) -> Any:
        return original(*args, **{**kwargs, "chunk_rows": 10, "group_chunks": 1})

    monkeypatch.setattr(snapshot, "run_snapshot", run)


def _sync(server: MariaDBSandbox, lake: Path, table: str, spark: Any, sql: str) -> Any:
    note = _altering(server, sql)
    return sync(_url(server), lake, tables=[table], once=True, spark=spark, progress=note)


@pytest.mark.usefixtures("small_chunks")
def test_add_column_while_chunks_are_read_is_followed(
    spark: Any, server: MariaDBSandbox, tmp_path: Path
) -> None:
    server.execute(TABLE.format(name="added"))
    alter = (
        "ALTER TABLE ddl.added ADD COLUMN tag VARCHAR(10) NOT NULL DEFAULT 'x' AFTER note; "
        "UPDATE ddl.added SET tag = 'late', qty = -qty WHERE id % 7 = 0"
    )
    _sync(server, tmp_path, "ddl.added", spark, alter)
    mirror = spark.read.format("delta").load(str(tmp_path / "ddl" / "added" / "mirror"))
    assert mirror.columns == ["id", "note", "tag", "qty"]
    got = sorted(tuple(str(v) for v in row) for row in mirror.collect())
    assert got == sorted(server.query("SELECT id, note, tag, qty FROM ddl.added"))


@pytest.mark.slow
@pytest.mark.usefixtures("small_chunks")
def test_drop_column_while_chunks_are_read_is_a_clear_error(
    spark: Any, server: MariaDBSandbox, tmp_path: Path
) -> None:
    server.execute(TABLE.format(name="dropped"))
    with pytest.raises(BinlogError) as caught:
        _sync(server, tmp_path, "ddl.dropped", spark, "ALTER TABLE ddl.dropped DROP COLUMN qty")
    text = str(caught.value)
    assert "ddl.dropped" in text and "qty" in text and "mysql-bin." in text, text
    assert "snapshot.json" in text, text


def _at_start(server: MariaDBSandbox, name: str) -> tuple[Any, Any, Any]:
    """Table ``ddl.name`` (made from TABLE): its definition, the binlog position now (a
    snapshot's start) and its mirror's Arrow schema."""
    server.execute(TABLE.format(name=name))
    with MySQLConnection.connect(ConnectionSpec.from_url(_url(server))) as conn:
        table = reread_tables(conn, Catalog(), [TableName("ddl", name)]).table("ddl", name)
        start = snapshot_source.snapshot_position(conn)
    assert table is not None
    schema = snapshot_source.mirror_schema(column_infos(table), table)
    return table, start, to_arrow_schema(schema, timezone="UTC")


def test_a_column_retyped_before_a_chunks_read_is_an_error_naming_it(
    server: MariaDBSandbox,
) -> None:
    table, start, schema = _at_start(server, "retyped")
    server.execute("ALTER TABLE ddl.retyped MODIFY qty BIGINT")
    infos = column_infos(table)
    url = _url(server)
    with pytest.raises(BinlogError) as caught:
        list(snapshot_source.read_chunk(url, table, infos, ["id"], (None, None), schema, start))
    text = str(caught.value)
    assert "ddl.retyped changed while the snapshot read it: column qty is bigint" in text, text
    assert f"after the snapshot's start {start}" in text and "snapshot.json" in text, text


def test_a_rebuild_between_a_chunks_snapshot_and_its_select_reads_it_again(
    server: MariaDBSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    table, start, schema = _at_start(server, "rebuilt")
    url = _url(server)
    infos = column_infos(table)
    opened: list[MySQLConnection] = []
    original = snapshot_source.open_snapshot

    def open_then_alter(url: str) -> MySQLConnection:
        conn = original(url)
        opened.append(conn)
        if len(opened) == 1:
            server.execute("ALTER TABLE ddl.rebuilt ADD COLUMN extra INT, ALGORITHM=COPY")
        return conn

    monkeypatch.setattr(snapshot_source, "open_snapshot", open_then_alter)
    batches = list(
        snapshot_source.read_chunk(url, table, infos, ["id"], (None, None), schema, start)
    )
    assert len(opened) == 2
    rows = sorted(tuple(str(v) for v in row.values()) for b in batches for row in b.to_pylist())
    assert rows == sorted(server.query("SELECT id, note, qty FROM ddl.rebuilt"))
