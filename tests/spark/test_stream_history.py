"""The streams' schema history (option ``schemaHistory``), GTID offsets and broken dumps.

Two MariaDB servers run the same statements, one with the default
``binlog_row_metadata=NO_LOG`` and one with ``FULL``: streamed with a
schema history, the NO_LOG server gives the same named, typed row changes as
the FULL one (JSON images and typed structs), through ALTER TABLE ADD, DROP and
RENAME COLUMN and a new table, inside one batch and across batch boundaries;
so does its binlog folder. The history file then holds each DDL statement once,
even after a batch is read again from the checkpoint. Offsets carry the
server's GTID position, and a dump thread killed (or a connection cut) in the
middle of a batch's read loses and repeats nothing. A checkpoint taken to a
server that never had its GTIDs is an error that says which it lacks.
"""

from __future__ import annotations

import json
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_stream import checkpoint_offsets, run_batches

from binlogkit.sandbox import MariaDBSandbox
from binlogkit.schema.store import HistoryStore, Position

sys.path.insert(0, str(Path(__file__).parents[1] / "integration" / "faults"))
from fault_proxy import FaultProxy

CONTENT = ("db", "table", "op", "before", "after")
"""The columns compared between the two servers (positions differ: table maps do)."""
ITEMS = (
    "CREATE TABLE shop.items (id INT UNSIGNED PRIMARY KEY, big BIGINT UNSIGNED,"
    " price DECIMAL(10,2), name VARCHAR(30) CHARACTER SET utf8mb4, kind ENUM('a','b','ü'),"
    " at DATETIME(3), flags SET('x','y'), raw VARBINARY(8), tiny TINYINT UNSIGNED)"
)
ROW = (
    "18446744073709551615, -12.34, 'grüße 😀', 'ü', '2024-01-02 03:04:05.678', 'x,y', x'00ff', 255"
)
"""The values of shop.items after ``id``: unsigned maxima, text beyond latin-1, members."""
IN_ONE_BATCH = (
    "ALTER TABLE shop.items ADD COLUMN note VARCHAR(10) AFTER name",
    "INSERT INTO shop.items (id, note, tiny) VALUES (10, 'n', 200)",
    "ALTER TABLE shop.items DROP COLUMN kind",
    "UPDATE shop.items SET note = 'm', big = 1 WHERE id = 10",
    "ALTER TABLE shop.items RENAME COLUMN note TO memo",
    "UPDATE shop.items SET memo = 'r' WHERE id = 10",
    "CREATE TABLE shop.more (id INT PRIMARY KEY, v MEDIUMINT UNSIGNED, t TEXT)",
    "INSERT INTO shop.more VALUES (1, 16777215, 'ça')",
)
ACROSS_BATCHES = (
    "ALTER TABLE shop.more ADD COLUMN w SMALLINT UNSIGNED FIRST",
    "INSERT INTO shop.more VALUES (65535, 2, 1, 'b')",
    "INSERT INTO shop.items (id, memo) VALUES (11, 'x')",
    "ALTER TABLE shop.more DROP COLUMN v, RENAME COLUMN t TO txt",
    "UPDATE shop.more SET txt = 'ü' WHERE id = 2",
    "DELETE FROM shop.items WHERE id = 11",
)
DDL_COUNT = 6
"""The DDL statements of IN_ONE_BATCH and ACROSS_BATCHES."""


def _url(server: MariaDBSandbox) -> str:
    return f"mariadb://root@localhost/?socket={server.socket}"


@pytest.fixture
def servers(mariadb_factory: Callable[..., MariaDBSandbox]) -> dict[str, MariaDBSandbox]:
    """A NO_LOG and a FULL server, each with shop.items."""
    found = {}
    for metadata in ("NO_LOG", "FULL"):
        server = mariadb_factory(f"history-{metadata}", binlog_row_metadata=metadata)
        server.execute(f"CREATE DATABASE shop; {ITEMS}")
        found[metadata] = server
    return found


def _run(servers: dict[str, MariaDBSandbox], *statements: str) -> None:
    for server in servers.values():
        server.execute("; ".join(statements))


def _seeded_start(server: MariaDBSandbox, history: Path) -> str:
    """Seed ``history`` from the server now (a query starting now does); that position."""
    from binlogkit.spark.source import BinlogDataSource

    options = {"url": _url(server), "schemaHistory": str(history)}
    source = BinlogDataSource(options)
    offset = source.streamReader(source.schema()).initialOffset()
    assert offset["gtid"] == server.query("SELECT @@gtid_binlog_pos")[0][0]
    return f"{offset['file']}:{offset['pos']}"


def _content(batches: list[list[tuple[Any, ...]]]) -> list[tuple[Any, ...]]:
    """(db, table, op, before, after) of each row change (CHANGE_COLUMNS order: 5, 6, 8...)."""
    return [(r[5], r[6], r[8], r[9], r[10]) for batch in batches for r in batch]


def _history_covers(path: Path) -> Callable[[list[tuple[Any, ...]]], None]:
    """A check, in ``foreachBatch``, that the history file has each change's table with the
    columns of its images."""

    def check(rows: list[tuple[Any, ...]]) -> None:
        store = HistoryStore(path)
        for file, pos, _, _, _, db, table, _, _, before, after in rows:
            definition = store.catalog_at(Position(file, pos)).table(db, table)
            assert definition is not None, (file, pos, db, table)
            names = [column.name for column in definition.columns]
            assert names == list(json.loads(after or before)), (file, pos, names)

    return check


def _history_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_no_log_server_gives_the_full_servers_changes_through_ddl(
    spark: Any, servers: dict[str, MariaDBSandbox], tmp_path: Path
) -> None:
    runs: dict[str, list[list[list[tuple[Any, ...]]]]] = {name: [] for name in servers}
    options = {}
    for name, server in servers.items():
        history = tmp_path / f"{name}.jsonl"
        options[name] = {
            "url": _url(server),
            "schemaHistory": str(history),
            "start": _seeded_start(server, history),
        }
    _run(servers, *(f"INSERT INTO shop.items VALUES ({n}, {ROW})" for n in range(1, 4)))

    def run(**extra: str) -> None:
        for name in servers:
            checkpoint = tmp_path / f"checkpoint-{name}"
            each = _history_covers(tmp_path / f"{name}.jsonl")
            runs[name].append(run_batches(spark, checkpoint, None, each, **options[name], **extra))

    run()
    _run(servers, *IN_ONE_BATCH)
    run()
    _run(servers, *ACROSS_BATCHES)
    run(maxRowsPerTrigger="1")
    no_log, full = runs["NO_LOG"], runs["FULL"]
    assert [len(batches) for batches in no_log] == [1, 1, 4]
    assert [_content(batches) for batches in no_log] == [_content(b) for b in full]
    first = json.loads(no_log[0][0][0][10])
    assert list(first) == ["id", "big", "price", "name", "kind", "at", "flags", "raw", "tiny"]
    assert (first["big"], first["name"], first["kind"], first["tiny"]) == (
        {"$int": "18446744073709551615"},
        "grüße 😀",
        "ü",
        255,
    )
    # the third run's DDL is in the history before its batches reach foreachBatch, each once
    records = _history_records(tmp_path / "NO_LOG.jsonl")
    seed = records[0]["pos"]
    ddl = {
        (r["file"], r["pos"])
        for r in records
        if (r["file"], r["pos"]) != (records[0]["file"], seed)
    }
    assert len(ddl) == DDL_COUNT
    # a batch read again after a restart records nothing twice
    checkpoint = tmp_path / "checkpoint-NO_LOG"
    last = max(int(p.name) for p in (checkpoint / "commits").glob("[0-9]*"))
    for name in (str(last), f".{last}.crc"):  # the batch as if the query died before its end
        (checkpoint / "commits" / name).unlink()
    again = run_batches(spark, checkpoint, **options["NO_LOG"])
    assert _content(again) == _content(no_log[2][-1:])
    assert _history_records(tmp_path / "NO_LOG.jsonl") == records
    # offsets: the GTID position at each, as the server knows it
    offsets = checkpoint_offsets(checkpoint)
    assert len(offsets) == 6
    for offset in offsets:
        (gtid,) = servers["NO_LOG"].query(
            f"SELECT BINLOG_GTID_POS('{offset['file']}', {offset['pos']})"
        )[0]
        assert offset["gtid"] == gtid


def test_the_no_log_servers_folder_streams_with_its_history(
    spark: Any, servers: dict[str, MariaDBSandbox], tmp_path: Path
) -> None:
    _run(servers, "INSERT INTO shop.items VALUES (1, " + ROW + ")", *IN_ONE_BATCH)
    history = tmp_path / "folder.jsonl"
    folder = servers["NO_LOG"].binlog_dir
    each = _history_covers(history)
    first = run_batches(spark, tmp_path / "c1", folder, each, schemaHistory=str(history))
    _run(servers, *ACROSS_BATCHES)
    second = run_batches(spark, tmp_path / "c1", folder, each, schemaHistory=str(history))
    full = servers["FULL"]
    expected = run_batches(spark, tmp_path / "c2", full.binlog_dir)
    assert _content(first) + _content(second) == _content(expected)
    records = _history_records(history)
    keys = Counter((r["file"], r["pos"], r["db"], r.get("table")) for r in records)
    assert max(keys.values()) == 1
    # CREATE DATABASE, CREATE TABLE, then the 7 statements of the two runs
    assert len({(r["file"], r["pos"]) for r in records}) == 2 + DDL_COUNT


def test_typed_images_of_a_no_log_server(
    spark: Any, servers: dict[str, MariaDBSandbox], tmp_path: Path
) -> None:
    got = {}
    for name, server in servers.items():
        history = tmp_path / f"{name}.jsonl"
        start = _seeded_start(server, history)
        server.execute(f"INSERT INTO shop.items VALUES (1, {ROW}); UPDATE shop.items SET id = 2")
        stream = (
            spark.readStream.format("binlog")
            .options(url=_url(server), schemaHistory=str(history), start=start)
            .option("table", "shop.items")
            .load()
        )
        assert "before" in stream.columns
        rows: list[Any] = []
        query = (
            stream.writeStream.foreachBatch(_collector(rows))
            .option("checkpointLocation", str(tmp_path / f"typed-{name}"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(120)
        assert query.exception() is None
        got[name] = [(row.op, row.before, row.after) for row in rows]
    assert got["NO_LOG"] == got["FULL"]
    after = got["NO_LOG"][0][2]
    assert (after.id, after.big, after.tiny, after.name) == (
        1,
        18446744073709551615,
        255,
        "grüße 😀",
    )


def _collector(rows: list[Any]) -> Callable[[Any, int], None]:
    def keep(df: Any, batch_id: int) -> None:
        rows.extend(df.collect())

    return keep


def _dump_threads(server: MariaDBSandbox) -> list[str]:
    return [str(row[0]) for row in server.query("SHOW PROCESSLIST") if row[4] == "Binlog Dump"]


def _rows(batches: Iterator[Any]) -> list[tuple[Any, ...]]:
    return [row for batch in batches for row in zip(*batch.to_pydict().values(), strict=True)]


def test_a_batch_read_rides_out_a_killed_dump_and_a_cut_connection(
    spark: Any, mariadb_factory: Callable[..., MariaDBSandbox]
) -> None:
    from pyspark.sql.streaming.datasource import ReadAllAvailable

    from binlogkit.spark.source import BinlogDataSource

    server = mariadb_factory("history-faults")
    server.execute(
        "CREATE USER 'f'@'%' IDENTIFIED BY 'fpw'; GRANT ALL PRIVILEGES ON *.* TO 'f'@'%';"
        "CREATE DATABASE shop; CREATE TABLE shop.t (id INT PRIMARY KEY, s TEXT)"
    )
    source = BinlogDataSource({"url": _url(server)})  # a unix socket: small buffers
    reader = source.streamReader(source.schema())
    start = reader.initialOffset()
    for n in range(20):  # 20,000 row changes of 300 bytes: 6 MB, more than a socket holds
        values = ", ".join(f"({1000 * n + i}, REPEAT('x', 300))" for i in range(1000))
        server.execute(f"INSERT INTO shop.t VALUES {values}")
    everything = ReadAllAvailable()
    end = reader.latestOffset(start, everything)
    (partition,) = reader.partitions(start, end)
    expected = _rows(reader.read(partition))
    assert len(expected) == 20_000
    batches = reader.read(partition)
    first = next(batches)  # 8192 rows read; the server is blocked sending the rest
    killed = _dump_threads(server)
    assert killed
    for thread in killed:
        server.execute(f"KILL {thread}")
    assert _rows(iter([first, *batches])) == expected
    with FaultProxy(("127.0.0.1", server.port)) as proxy:
        url = f"mariadb://f:fpw@127.0.0.1:{proxy.port}/"
        source = BinlogDataSource({"url": url, "start": f"{start['file']}:{start['pos']}"})
        reader = source.streamReader(source.schema())
        proxy.cut_after(1_000_000)
        assert _rows(reader.read(partition)) == expected
        assert proxy.cuts == 1
        # the driver waits for a server that restarts; an offset without gtid still loads
        server.stop()
        restart = threading.Timer(1.0, _restart, (server, proxy))
        restart.start()
        later = reader.latestOffset({"file": start["file"], "pos": start["pos"]}, everything)
        restart.join()
        assert later["file"] > end["file"] and later["gtid"] == end["gtid"]
        (partition,) = reader.partitions(start, later)
        assert _rows(reader.read(partition)) == expected


def _restart(server: MariaDBSandbox, proxy: FaultProxy) -> None:
    server.start()
    proxy.upstream = ("127.0.0.1", server.port)


def test_an_empty_history_not_started_now_is_warned_of(
    spark: Any,
    mariadb_factory: Callable[..., MariaDBSandbox],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from binlogkit.spark.source import BinlogDataSource

    server = mariadb_factory("history-oldest")
    history = tmp_path / "empty.jsonl"
    source = BinlogDataSource({"url": _url(server), "start": "oldest"})
    source.options["schemaHistory"] = str(history)
    offset = source.streamReader(source.schema()).initialOffset()
    assert offset["pos"] == 4 and offset["gtid"] == ""
    assert "is empty and the stream starts at oldest, not now" in caplog.text
    assert history.read_text() == ""


def test_a_checkpoint_of_another_server_is_a_clear_error(
    spark: Any, servers: dict[str, MariaDBSandbox]
) -> None:
    from pyspark.sql.streaming.datasource import ReadAllAvailable

    from binlogkit.errors import BinlogError
    from binlogkit.spark.source import BinlogDataSource

    first, other = servers["NO_LOG"], servers["FULL"]
    first.execute("INSERT INTO shop.items (id) VALUES (1); INSERT INTO shop.items (id) VALUES (2)")
    other.execute("SET gtid_domain_id = 5; INSERT INTO shop.items (id) VALUES (1)")
    source = BinlogDataSource({"url": _url(first)})
    offset = source.streamReader(source.schema()).initialOffset()
    # both servers are server_id 1: the position, not the identity, tells them apart
    source = BinlogDataSource({"url": _url(other)})
    reader = source.streamReader(source.schema())
    moved = r"is at GTIDs \(none\) at the stream's position mysql-bin\.000001:\d+ \(GTIDs 0-1-\d+\)"
    with pytest.raises(BinlogError, match=moved) as err:
        reader.latestOffset(offset, ReadAllAvailable())
    assert "another server behind the URL" in str(err.value) and "--failover" in str(err.value)
    # allowed to move, it looks the point up by GTID: this server never wrote it
    source = BinlogDataSource({"url": _url(other), "failover": "true"})
    reader = source.streamReader(source.schema())
    lacking = r"not a point of this server's binlog .* has not written GTIDs 0-1-\d+ of it"
    with pytest.raises(BinlogError, match=lacking) as err:
        reader.latestOffset(offset, ReadAllAvailable())
    assert "fresh snapshot" in str(err.value)
