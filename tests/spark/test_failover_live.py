"""``binlogkit spark sync`` moved to another server after a failover, by GTID (MariaDB).

A primary A (log_slave_updates, GTIDs) and B, a real replica of it
(``MASTER_USE_GTID=slave_pos``, its own binlog with log_slave_updates). A is
synced into a lake; A goes on writing (rows and an ADD COLUMN) and rotates its
binlogs, so that B's files and positions name other points, earlier by name,
than A's; B catches up, takes over, and the lake goes on from B: its mirror
equals B's table (with a column added on B: the schema history goes on at B's
positions), and its change log holds each change from the snapshot's
position on exactly once (the transactions by GTID, as B's binlog has them).
Before that, B stopped short of A's last transactions: the move is a clear
error that says what is missing, and the lake is untouched.

A sync of A killed (SIGKILL) after a micro-batch's writes, before its
checkpoint commit, leaves a batch planned with A's offsets: the sync moved to
B reads that batch again from B (both ends found by GTID), exactly once.

A transaction written on B alone (errant) while the lake followed A, before
the failover point: the move is refused, the errant GTID named, the lake
untouched. A URL (a TCP proxy) that switches from A to B while the stream
runs: the driver and a batch's task refuse B (another server_id) without
failover, and with it the running sync goes on at B by GTID, then back at A
(B's replica, taking over again: B's GTIDs in its binlog state are not
errant), each change once.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from test_lake_apply_live import _operations
from test_stream import checkpoint_offsets
from test_sync_live import _command, _environment, _run, _wait

import binlogkit
from binlogkit.errors import BinlogError, ServerChanged
from binlogkit.pipeline.changes import row_changes
from binlogkit.sandbox import MariaDBSandbox

pytest.importorskip("delta")

sys.path.insert(0, str(Path(__file__).parents[1] / "integration" / "faults"))
from fault_proxy import FaultProxy

from binlogkit.schema.store import Position
from binlogkit.spark.lake.tables import (
    SNAPSHOT_END,
    end_property,
    properties,
    set_properties,
    snapshot_end,
)
from binlogkit.spark.lakehouse import KILL_ENV, sync

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

SCHEMA = """
CREATE DATABASE shop; USE shop;
CREATE TABLE shop.orders (id INT PRIMARY KEY, note VARCHAR(40), qty BIGINT);
INSERT INTO shop.orders SELECT seq, CONCAT('order ', seq), seq * 3 FROM seq_1_to_200;
"""
ON_A = """
UPDATE shop.orders SET qty = qty + 1 WHERE id <= 20;
DELETE FROM shop.orders WHERE id BETWEEN 21 AND 30;
ALTER TABLE shop.orders ADD COLUMN flag INT NOT NULL DEFAULT 7;
INSERT INTO shop.orders (id, note, qty, flag) VALUES (1001, 'after the alter', 5, 1);
UPDATE shop.orders SET id = 2001 WHERE id = 31;
"""
LAST_ON_A = "UPDATE shop.orders SET note = 'last on A' WHERE id BETWEEN 40 AND 44"
ON_B = """
ALTER TABLE shop.orders ADD COLUMN tag VARCHAR(10) DEFAULT 'b';
INSERT INTO shop.orders (id, note, qty, tag) VALUES (3001, 'written on B', 9, 'new');
UPDATE shop.orders SET flag = 0 WHERE id = 1001;
DELETE FROM shop.orders WHERE id = 50;
"""


def _url(server: MariaDBSandbox) -> str:
    return f"mariadb://root@localhost/?socket={server.socket}"


def _mirror(spark: Any, lake: Path) -> list[tuple[str, ...]]:
    rows = spark.read.format("delta").load(str(lake / "shop" / "orders" / "mirror")).collect()
    return sorted(tuple(str(v) for v in row) for row in rows)


def _changes(spark: Any, lake: Path) -> list[tuple[Any, ...]]:
    """The change log's (GTID, op, key before, key after) per row change, and its files."""
    df = spark.read.format("delta").load(str(lake / "shop" / "orders" / "changes"))
    return [tuple(r) for r in df.select("gtid", "op", "before.id", "after.id", "file").collect()]


def _binlog_changes(server: MariaDBSandbox, after: str) -> Counter[tuple[Any, ...]]:
    """(GTID, op, key before, key after) of the row changes of shop.orders in the server's
    binlog whose transaction is not in the GTID position ``after``."""
    done = {int(g.split("-")[0]): int(g.split("-")[2]) for g in after.split(",") if g}
    found: Counter[tuple[Any, ...]] = Counter()
    paths = [str(p) for p in server.binlog_files()]
    with binlogkit.open(paths) as events:
        for change in row_changes(events):
            source = change.source
            if (source.db, source.table) != ("shop", "orders") or source.gtid is None:
                continue
            domain, _, seq = str(source.gtid).split("-")
            if int(seq) <= done.get(int(domain), 0):
                continue
            before = None if change.before is None else change.before["id"]
            after_id = None if change.after is None else change.after["id"]
            found[(str(source.gtid), change.op, before, after_id)] += 1
    return found


def _pair(factory: Callable[..., MariaDBSandbox], name: str) -> tuple[MariaDBSandbox, ...]:
    """A primary A with SCHEMA and B replicating it."""
    a = factory(f"{name}-a", server_id=1, log_slave_updates=True)
    b = factory(f"{name}-b", server_id=2, log_slave_updates=True)
    b.replicate_from(a)
    a.execute(SCHEMA)
    return a, b


def _synced(
    factory: Callable[..., MariaDBSandbox], name: str, spark: Any, lake: Path
) -> tuple[MariaDBSandbox, MariaDBSandbox, str]:
    """A primary A with SCHEMA, synced into ``lake``, and B replicating it: A, B and the GTID
    position of the snapshot's start."""
    a, b = _pair(factory, name)
    first = sync(_url(a), lake, tables=["shop.orders"], once=True, spark=spark)
    assert first.snapshot.start.gtid
    return a, b, first.snapshot.start.gtid


def _taken_over(a: MariaDBSandbox, b: MariaDBSandbox) -> None:
    """B has all of A, stops replicating and takes over; A is gone (either way round)."""
    b.wait_for_gtid(a.gtid_binlog_pos)
    b.execute("STOP SLAVE; RESET SLAVE ALL")
    a.stop()


def _check_lake(spark: Any, lake: Path, b: MariaDBSandbox, start: str, columns: str) -> None:
    """The mirror is B's table; the change log holds B's changes after ``start`` once each."""
    assert _mirror(spark, lake) == sorted(b.query(f"SELECT {columns} FROM shop.orders"))
    logged = _changes(spark, lake)
    assert Counter(row[:4] for row in logged) == _binlog_changes(b, start)


def test_a_lake_moves_to_the_replica_that_took_over_by_gtid(
    spark: Any, mariadb_factory: Callable[..., MariaDBSandbox], tmp_path: Path
) -> None:
    lake = tmp_path / "lake"
    a, b, start_gtid = _synced(mariadb_factory, "failover", spark, lake)

    a.execute(ON_A)
    for _ in range(3):  # A's files and positions now name points B's do not
        a.execute("FLUSH LOCAL BINARY LOGS")
    b.wait_for_gtid(a.gtid_binlog_pos)
    b.execute("STOP SLAVE")
    a.execute(LAST_ON_A)
    sync(_url(a), lake, tables=["shop.orders"], once=True, spark=spark)
    before = _changes(spark, lake)

    # B lacks A's last transaction: a clear error, nothing applied.
    with pytest.raises(BinlogError, match=r"has not written GTIDs 0-1-\d+ of it"):
        sync(_url(b), lake, tables=["shop.orders"], once=True, spark=spark, failover=True)
    assert _changes(spark, lake) == before

    b.execute("START SLAVE")
    _taken_over(a, b)
    b.execute(ON_B)
    sync(_url(b), lake, tables=["shop.orders"], once=True, spark=spark, failover=True)

    _check_lake(spark, lake, b, start_gtid, "id, note, qty, flag, tag")
    files = {row[4] for row in _changes(spark, lake)}
    assert any(f.startswith("1~") for f in files), files  # B's files, after A's
    assert any(not f.startswith("1~") for f in files), files
    _inserts_after_the_move(spark, lake, b)


def _inserts_after_the_move(spark: Any, lake: Path, b: MariaDBSandbox) -> None:
    """On B a batch of inserts alone is appended to the snapshot's mirror when its start holds
    the GTIDs of the snapshot's end E (A's binlog position, which names nothing on B), and
    MERGEd when it does not: the mirror's E made to lie past B's start in its domain, as when
    the lake moves before its stream reached E."""
    mirror = str(lake / "shop" / "orders" / "mirror")
    recorded = snapshot_end(properties(spark, mirror))
    assert isinstance(recorded, Position) and recorded.gtid, recorded
    assert "~" not in (recorded.file or ""), recorded  # E on A, generation 0
    domain, server, seq = recorded.gtid.split(",")[0].split("-")
    ahead = Position(recorded.file, recorded.pos, f"{domain}-{server}-{int(seq) + 1_000_000}")
    set_properties(spark, mirror, {SNAPSHOT_END: end_property(ahead)})
    b.execute("INSERT INTO shop.orders (id, note, qty) VALUES (4001, 'before E', 1)")
    sync(_url(b), lake, tables=["shop.orders"], once=True, spark=spark)
    assert _operations(lake, "orders", "mirror")[-1] == ("MERGE", True)

    set_properties(spark, mirror, {SNAPSHOT_END: end_property(recorded)})
    b.execute("INSERT INTO shop.orders (id, note, qty) VALUES (4002, 'past E', 2), (4003, 'x', 3)")
    sync(_url(b), lake, tables=["shop.orders"], once=True, spark=spark)
    assert _operations(lake, "orders", "mirror")[-1] == ("WRITE", True)
    columns = "id, note, qty, flag, tag"
    assert _mirror(spark, lake) == sorted(b.query(f"SELECT {columns} FROM shop.orders"))


@pytest.mark.slow
def test_a_batch_planned_on_the_old_server_is_read_again_from_the_new_one(
    spark: Any, mariadb_factory: Callable[..., MariaDBSandbox], tmp_path: Path
) -> None:
    lake = tmp_path / "lake"
    a, b, start = _synced(mariadb_factory, "failover-kill", spark, lake)
    a.execute("UPDATE shop.orders SET qty = qty + 1 WHERE id <= 20; FLUSH LOCAL BINARY LOGS")
    a.execute("DELETE FROM shop.orders WHERE id BETWEEN 21 AND 30")
    checkpoint = lake / "_binlogkit" / "checkpoint"
    planned = len(checkpoint_offsets(checkpoint))
    command = [*_command(_url(a), lake), "--tables", "shop.orders"]
    code, err = _run(command, _environment(**{KILL_ENV: str(planned)}))
    assert code == -signal.SIGKILL, err
    assert len(checkpoint_offsets(checkpoint)) == planned + 1  # planned on A, not committed
    assert not (checkpoint / "commits" / str(planned)).exists()
    _taken_over(a, b)
    b.execute(ON_B.replace("flag = 0", "note = 'on B'"))
    sync(_url(b), lake, tables=["shop.orders"], once=True, spark=spark, failover=True)
    _check_lake(spark, lake, b, start, "id, note, qty, tag")


def test_an_errant_transaction_on_the_new_server_is_refused(
    spark: Any, mariadb_factory: Callable[..., MariaDBSandbox], tmp_path: Path
) -> None:
    lake = tmp_path / "lake"
    a, b, _ = _synced(mariadb_factory, "errant", spark, lake)
    b.wait_for_gtid(a.gtid_binlog_pos)
    b.execute("STOP SLAVE")  # without gtid_strict_mode B takes a write of its own ...
    b.execute("INSERT INTO shop.orders VALUES (5001, 'on B alone', 1)")
    errant = b.gtid_binlog_pos
    assert errant.startswith("0-2-"), errant
    b.execute("START SLAVE")  # ... and then A's next transaction, numbered as high
    a.execute(LAST_ON_A)
    sync(_url(a), lake, tables=["shop.orders"], once=True, spark=spark)
    offset = checkpoint_offsets(lake / "_binlogkit" / "checkpoint")[-1]
    assert (offset["server"], offset["state"]) == ("1", a.variable("gtid_binlog_state"))
    before = _changes(spark, lake)
    _taken_over(a, b)

    with pytest.raises(BinlogError, match=rf"errant GTIDs {errant} ") as err:
        sync(_url(b), lake, tables=["shop.orders"], once=True, spark=spark, failover=True)
    assert "server_id 2" in str(err.value) and "fresh snapshot" in str(err.value)
    assert _changes(spark, lake) == before


def _proxied(server: MariaDBSandbox) -> None:
    """A user for connections through the proxy (TCP), outside the binlog."""
    server.execute(
        "SET sql_log_bin = 0; CREATE USER 'lake'@'127.0.0.1' IDENTIFIED BY 'pw'; "
        "GRANT ALL PRIVILEGES ON *.* TO 'lake'@'127.0.0.1'"
    )


def _logged(spark: Any, lake: Path) -> int:
    """How many row changes the change log holds (none before its first write)."""
    changes = lake / "shop" / "orders" / "changes"
    return len(_changes(spark, lake)) if (changes / "_delta_log").exists() else 0


@contextmanager
def _syncing(
    url: str, lake: Path, spark: Any, failover: bool, failed: list[BaseException]
) -> Iterator[threading.Thread]:
    """A sync of ``url`` running in a thread (its error goes to ``failed``), stopped at the
    end."""

    def run() -> None:
        try:
            sync(url, lake, tables=["shop.orders"], spark=spark, failover=failover)
        except BaseException as err:
            failed.append(err)

    streaming = threading.Thread(target=run)
    streaming.start()
    try:
        yield streaming
    finally:
        for query in spark.streams.active:
            query.stop()
        streaming.join(240)


def _switch(proxy: FaultProxy, to: MariaDBSandbox) -> None:
    """The proxy's URL reaches ``to`` from now on (open connections break, as when a virtual
    IP moves)."""
    proxy.upstream = ("127.0.0.1", to.port)
    proxy.drop_all()


def test_another_server_behind_the_url_stops_the_stream_or_is_followed_with_failover(
    spark: Any, mariadb_factory: Callable[..., MariaDBSandbox], tmp_path: Path
) -> None:
    from pyspark.sql.streaming.datasource import ReadAllAvailable

    from binlogkit.spark.source import BinlogDataSource

    a, b = _pair(mariadb_factory, "swap")
    for server in (a, b):
        _proxied(server)
    lake = tmp_path / "lake"
    with FaultProxy(("127.0.0.1", a.port)) as proxy:
        url = f"mariadb://lake:pw@127.0.0.1:{proxy.port}/"
        start = sync(url, lake, tables=["shop.orders"], once=True, spark=spark).snapshot.start

        # A batch planned on A, read once the URL reaches B: its task refuses, as does the
        # driver's next offset.
        source = BinlogDataSource({"url": url, "start": "oldest"})
        reader = source.streamReader(source.schema())
        first = reader.initialOffset()
        a.execute("UPDATE shop.orders SET qty = qty + 1 WHERE id <= 20")
        end = reader.latestOffset(first, ReadAllAvailable())
        [partition] = reader.partitions(first, end)
        b.wait_for_gtid(a.gtid_binlog_pos)
        _switch(proxy, b)
        with pytest.raises(ServerChanged, match="is now server_id 2, not server_id 1"):
            list(reader.read(partition))
        with pytest.raises(ServerChanged, match="is now server_id 2, not server_id 1"):
            reader.latestOffset(end, ReadAllAvailable())
        reader.stop()

        # Without failover a running sync stops at B.
        _switch(proxy, a)
        failed: list[BaseException] = []
        with _syncing(url, lake, spark, False, failed) as streaming:
            a.execute("DELETE FROM shop.orders WHERE id BETWEEN 21 AND 30")
            _wait(lambda: _logged(spark, lake) >= 30 or bool(failed), "A's rows")
            b.wait_for_gtid(a.gtid_binlog_pos)
            _switch(proxy, b)
            streaming.join(240)
        assert len(failed) == 1 and "is now server_id 2, not server_id 1" in str(failed[0])
        assert "--failover" in str(failed[0])

        # With failover it goes on at B, which takes over, by GTID.
        failed.clear()
        _switch(proxy, a)
        with _syncing(url, lake, spark, True, failed):
            a.execute("UPDATE shop.orders SET note = 'A, before the move' WHERE id <= 5")
            _wait(lambda: _logged(spark, lake) >= 35 or bool(failed), "A's last rows")
            _taken_over(a, b)
            _switch(proxy, b)
            b.execute(ON_B.replace("flag = 0", "note = 'on B'"))
            expected = sorted(b.query("SELECT id, note, qty, tag FROM shop.orders"))
            _wait(lambda: _mirror(spark, lake) == expected or bool(failed), "B's rows")

            # A, the lake's first server, comes back as B's replica and takes over again: its
            # binlog state has B's GTIDs, which the lake read from B (not errant).
            a.start()
            a.replicate_from(b, gtid_slave_pos=a.gtid_binlog_pos)
            _taken_over(b, a)
            _switch(proxy, a)
            a.execute("UPDATE shop.orders SET note = 'A again' WHERE id IN (3001, 1)")
            expected = sorted(a.query("SELECT id, note, qty, tag FROM shop.orders"))
            _wait(lambda: _mirror(spark, lake) == expected or bool(failed), "A's rows again")
    assert not failed, failed
    _check_lake(spark, lake, a, str(start.gtid), "id, note, qty, tag")
