"""``spark.readStream.format("binlog").option("url", ...)`` on a live MariaDB.

- ``Trigger.AvailableNow`` runs from one checkpoint, the server writing and
  rotating its binlog in between, give the row changes a non-blocking
  :class:`~binlogkit.services.replica_stream.BinlogStream` reads from the
  oldest binlog, each once, in order.
- With ``maxBytesPerTrigger`` every checkpointed offset is a complete resume
  point of that stream, and there are many batches.
- An offset in a purged binlog is a clear error.
- The server's own binlog folder, streamed as files while the server writes
  its last file, gives the plain reader's row changes of the files.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_source import change_tuples, plain_changes
from test_stream import checkpoint_offsets, run_available_now, run_batches

from binlogkit.errors import BinlogError
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.services.replica_stream import BinlogStream

SERVER_ID = 4242
"""The server id of the test's own dumps (the source's use its default)."""


def _url(server: MariaDBSandbox) -> str:
    return f"mariadb://root@localhost/?socket={server.socket}"


def _write(server: MariaDBSandbox, first: int, count: int) -> None:
    """``count`` transactions on shop.orders: inserts of two rows, an update, a delete."""
    for n in range(first, first + count):
        server.execute(
            "BEGIN; INSERT INTO shop.orders (id, note)"
            f" VALUES ({2 * n}, 'a{n}'), ({2 * n + 1}, 'b{n}');"
            f" UPDATE shop.orders SET note = 'u{n}' WHERE id = {2 * n};"
            f" DELETE FROM shop.orders WHERE id = {2 * n + 1}; COMMIT"
        )


@pytest.fixture
def server(mariadb_factory: Callable[..., MariaDBSandbox]) -> MariaDBSandbox:
    server = mariadb_factory("spark-stream")
    server.execute("CREATE DATABASE shop")
    server.execute("CREATE TABLE shop.orders (id INT PRIMARY KEY, note VARCHAR(20))")
    return server


def _stream_changes(server: MariaDBSandbox) -> list[tuple[Any, ...]]:
    with BinlogStream(
        _url(server), server_id=SERVER_ID, start="oldest", blocking=False, heartbeat=None
    ) as stream:
        return change_tuples(stream)


def test_runs_from_one_checkpoint_read_each_change_once_in_order(
    spark: Any, server: MariaDBSandbox, tmp_path: Path
) -> None:
    options = {"url": _url(server), "start": "oldest"}
    _write(server, 0, 5)
    first = run_available_now(spark, tmp_path, **options)
    _write(server, 5, 5)
    server.flush_binlogs()
    server.execute("ALTER TABLE shop.orders ADD COLUMN qty INT")
    _write(server, 10, 5)
    second = run_available_now(spark, tmp_path, **options)
    third = run_available_now(spark, tmp_path, **options)
    assert len(first) == 5 * 4 and len(second) == 10 * 4 and third == []
    assert first + second == _stream_changes(server)


@pytest.mark.parametrize(
    ("limit", "most"), [({"maxBytesPerTrigger": "2k"}, None), ({"maxRowsPerTrigger": "6"}, 6)]
)
def test_every_offset_is_a_complete_resume_point(
    spark: Any, server: MariaDBSandbox, tmp_path: Path, limit: dict[str, str], most: int | None
) -> None:
    _write(server, 0, 20)
    server.flush_binlogs()
    _write(server, 20, 20)
    batches = run_batches(spark, tmp_path, url=_url(server), start="oldest", **limit)
    assert [row for batch in batches for row in batch] == _stream_changes(server)
    if most is not None:  # 4 rows a transaction: one a batch (two would be 8)
        assert max(len(batch) for batch in batches) <= most
    with BinlogStream(
        _url(server), server_id=SERVER_ID, start="oldest", blocking=False, heartbeat=None
    ) as stream:
        complete = {(p.file, p.position) for _, p in stream.pairs() if p.complete}
    offsets = [(offset["file"], offset["pos"]) for offset in checkpoint_offsets(tmp_path)]
    assert len(offsets) > 10
    assert [offset for offset in offsets if offset not in complete] == []


def test_a_purged_binlog_is_a_clear_error(spark: Any, server: MariaDBSandbox) -> None:
    from pyspark.sql.streaming.datasource import ReadAllAvailable

    from binlogkit.spark.server_stream import ServerOffset, ServerPartition
    from binlogkit.spark.source import BinlogDataSource

    source = BinlogDataSource({"url": _url(server), "start": "oldest"})
    reader = source.streamReader(source.schema())
    start = reader.initialOffset()
    _write(server, 0, 2)
    newest = server.flush_binlogs()[-1].name
    server.wait_for_checkpoint()  # else MariaDB keeps the older files for crash recovery
    server.execute(f"PURGE BINARY LOGS TO '{newest}'")
    assert [path.name for path in server.binlog_files()] == [newest]
    with pytest.raises(BinlogError, match=r"gone from the server: .* purged") as err:
        reader.latestOffset(start, ReadAllAvailable())
    assert "fresh snapshot" in str(err.value)
    partition = ServerPartition(ServerOffset.load(start), ServerOffset(newest, 4))
    with pytest.raises(BinlogError, match=r"mysql-bin\.000001 is gone"):
        list(reader.read(partition))


def test_the_servers_own_folder_streams_as_it_grows(
    spark: Any, server: MariaDBSandbox, tmp_path: Path
) -> None:
    _write(server, 0, 5)
    first = run_available_now(spark, tmp_path, server.binlog_dir)
    _write(server, 5, 5)
    server.flush_binlogs()
    _write(server, 10, 3)
    second = run_available_now(spark, tmp_path, server.binlog_dir)
    assert len(first) == 5 * 4 and len(second) == 8 * 4
    assert first + second == plain_changes(server.binlog_files())


def test_available_now_ends_where_the_server_was_at_its_start(
    spark: Any, server: MariaDBSandbox
) -> None:
    from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

    from binlogkit.spark.source import BinlogDataSource

    source = BinlogDataSource({"url": _url(server), "start": "now"})
    reader = source.streamReader(source.schema())
    start = reader.initialOffset()
    _write(server, 0, 2)
    reader.prepareForTriggerAvailableNow()
    _write(server, 2, 2)  # after the query's start: not for this run
    target = reader.latestOffset(start, ReadAllAvailable())
    one = reader.latestOffset(start, ReadMaxRows(4))  # a transaction of 4 rows
    assert start["pos"] < one["pos"] < target["pos"]
    assert reader.latestOffset(one, ReadMaxRows(100)) == target
    assert reader.latestOffset(target, ReadMaxRows(100)) == target
