"""Live: the binary log object on a real MariaDB 10.11.

- Observers count the transactions of a workload written while the log
  follows the server; the count of GTIDs is the server's own
  (``@@gtid_binlog_pos``), every transaction that began ended, and the
  outcomes are the workload's.
- A sleeping consumer while the server writes a large workload: the queue
  never holds more than its bound, and the process's memory stays far below
  the binlog's size.
- Positions: a saved resume point restarts the server stream exactly after
  its event; a GTID set given to a connected log restarts it there.
- Shutdown while the receiver is blocked on the server; a server error
  reaching the consumer once; the asyncio variant giving the same events.
"""

from __future__ import annotations

import asyncio
import gc
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from receiver_threads import receiver_threads, receivers_left
from time_limit import time_limit

import binlogkit
from binlogkit.binlog.events import Event
from binlogkit.errors import ServerError
from binlogkit.gtid import MariaGtid, MariaGtidList
from binlogkit.pipeline.observers import Observer
from binlogkit.pipeline.transactions import Ending
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.services.binary_log import AsyncBinaryLog, BinaryLog

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

WORKLOAD = [
    "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(30)) ENGINE=InnoDB",
    "CREATE TABLE m (id INT) ENGINE=MyISAM",
    "".join(f"INSERT INTO t VALUES ({n}, 'row {n}');" for n in range(1, 121)),
    "BEGIN; UPDATE t SET v = 'changed' WHERE id < 50; DELETE FROM t WHERE id > 100; COMMIT",
    "SET SESSION binlog_format = STATEMENT;"
    " BEGIN; INSERT INTO t VALUES (500, 'gone'); INSERT INTO m VALUES (1); ROLLBACK",
    "XA START 'x1'; INSERT INTO t VALUES (601, 'xa'); XA END 'x1'; XA PREPARE 'x1'; XA COMMIT 'x1'",
    "".join(f"UPDATE t SET v = 'again {n}' WHERE id = {n};" for n in range(1, 41)),
    "DROP TABLE m",
]


def url(server: MariaDBSandbox) -> str:
    return f"mariadb://root@127.0.0.1:{server.port}"


def key(event: Event) -> tuple[str, int, int]:
    header = event.header
    return (Path(header.file or "").name, header.offset, header.type_code)


@pytest.fixture(scope="module")
def server(mariadb_factory: Callable[..., MariaDBSandbox]) -> MariaDBSandbox:
    return mariadb_factory("binary_log", gtid_domain_id=0)


class Counter(Observer):
    def __init__(self) -> None:
        self.counts = {"begin": 0, "commit": 0, "prepare": 0, "rollback": 0, "gtid": 0}
        self.open = 0

    def transaction_begin(self, first: Event) -> None:
        self.counts["begin"] += 1
        self.counts["gtid"] += getattr(first, "gtid", None) is not None
        self.open += 1

    def _end(self, name: str) -> None:
        self.counts[name] += 1
        self.open -= 1

    def transaction_commit(self, first: Event, ending: Ending) -> None:
        self._end("commit")

    def transaction_prepare(self, first: Event, ending: Ending) -> None:
        self._end("prepare")

    def transaction_rollback(self, first: Event, ending: Ending) -> None:
        self._end("rollback")


def follow_until(binlog: BinaryLog, gtid_pos: str, timeout: float = 60) -> int:
    """Take events until the transaction of the server's last GTID (one domain) is complete;
    how many were taken."""
    (wanted,) = MariaGtidList.parse(gtid_pos).gtids
    taken = 0
    last = None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        event = binlog.wait_for_next_event(1)
        if event is None:
            continue
        taken += 1
        last = getattr(event, "gtid", last)
        point = binlog.position
        if last == wanted and point is not None and point.complete:
            return taken
    raise AssertionError(f"the log did not reach {gtid_pos}: at {binlog.position}")


def test_observers_count_the_servers_transactions(server: MariaDBSandbox) -> None:
    server.execute("CREATE DATABASE count")
    file, position = server.query("SHOW MASTER STATUS")[0][:2]
    before = MariaGtidList.parse(server.gtid_binlog_pos).gtids[0].seq_no
    counter = Counter()
    start = (str(file), int(str(position)))
    with (
        time_limit(120),
        BinaryLog(url(server), server_id=301, start=start, observers=[counter]) as binlog,
    ):
        writer = threading.Thread(
            target=lambda: [server.execute(sql, database="count") for sql in WORKLOAD]
        )
        writer.start()  # while the log follows the server
        writer.join()
        pos = server.gtid_binlog_pos
        follow_until(binlog, pos)
    counts = counter.counts
    written = MariaGtidList.parse(pos).gtids[0].seq_no - before
    assert counts["gtid"] == written == 2 + 120 + 1 + 1 + 2 + 40 + 1
    assert counts["begin"] == written  # every transaction has its GTID
    assert counts["begin"] == counts["commit"] + counts["prepare"] + counts["rollback"]
    assert (counts["prepare"], counts["rollback"]) == (1, 1)
    assert counter.open == 0


def test_a_sleeping_consumer_keeps_the_queue_and_memory_bounded(server: MariaDBSandbox) -> None:
    server.execute("CREATE DATABASE big; CREATE TABLE big.b (id INT PRIMARY KEY, v TEXT)")
    max_events, max_bytes = 32, 256 << 10
    start_file = server.query("SHOW MASTER STATUS")[0]
    before_size = sum(p.stat().st_size for p in server.binlog_files())
    binlog = BinaryLog(
        url(server),
        server_id=302,
        start=(str(start_file[0]), int(str(start_file[1]))),
        max_events=max_events,
        max_bytes=max_bytes,
    )
    with time_limit(240), binlog:
        writer = threading.Thread(
            target=server.execute,
            args=(
                "INSERT INTO big.b SELECT seq, REPEAT(CHAR(65 + seq % 26), 4000)"
                " FROM seq_1_to_15000",
            ),
            kwargs={"database": "big"},
        )
        baseline = rss()
        writer.start()
        peak = 0
        time.sleep(2)  # the consumer sleeps: the receiver fills the queue and waits
        queue = binlog.queue
        assert queue is not None
        assert len(queue) <= max_events
        writer.join()
        written = sum(p.stat().st_size for p in server.binlog_files()) - before_size
        pos = server.gtid_binlog_pos
        (wanted,) = MariaGtidList.parse(pos).gtids
        taken = 0
        last = None
        while True:
            event = binlog.wait_for_next_event(10)
            assert event is not None, "the stream stopped before the workload's end"
            taken += 1
            last = getattr(event, "gtid", last)
            if taken % 200 == 0:
                time.sleep(0.05)  # still slow: the receiver keeps waiting for room
                peak = max(peak, rss())
            point = binlog.position
            if last == wanted and point is not None and point.complete:
                break
        assert queue.high_water <= max_events
        assert queue.high_water_bytes <= max_bytes
    assert written > 50 << 20
    grown = peak - baseline
    assert grown < written / 3, (grown, written)


def rss() -> int:
    """This process's resident memory in bytes."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


def file_keys(server: MariaDBSandbox) -> list[tuple[str, int, int]]:
    with binlogkit.open([str(p) for p in server.binlog_files()]) as events:
        return [key(e) for e in events]


def test_a_saved_position_restarts_the_stream_exactly(server: MariaDBSandbox) -> None:
    server.execute("CREATE DATABASE pos; CREATE TABLE pos.p (id INT PRIMARY KEY)")
    server.execute("".join(f"INSERT INTO pos.p VALUES ({n});" for n in range(30)))
    server.flush_binlogs()
    server.execute("INSERT INTO pos.p VALUES (100), (101)")
    server.wait_for_checkpoint()
    seen = []
    with (
        time_limit(60),
        BinaryLog(url(server), server_id=303, start="oldest", blocking=False) as binlog,
    ):
        for event in binlog:
            seen.append((key(event), binlog.position))
    every = [k for k, _ in seen]
    assert every == [k for k in file_keys(server) if k in every]
    complete = [n for n, (_, point) in enumerate(seen) if point and point.complete]
    for n in complete[len(complete) // 3 :: max(1, len(complete) // 5)]:
        point = seen[n][1]
        with (
            time_limit(60),
            BinaryLog(url(server), server_id=304, start=point, blocking=False) as binlog,
        ):
            assert [key(e) for e in binlog] == every[n + 1 :], point
    # a GTID set given to a connected log starts it over there
    last = MariaGtidList.parse(server.gtid_binlog_pos).gtids[0]
    earlier = f"0-1-{last.seq_no - 2}"
    with (
        time_limit(60),
        BinaryLog(url(server), server_id=305, start="oldest", blocking=False) as binlog,
    ):
        assert binlog.wait_for_next_event(10) is not None
        binlog.set_position(earlier)
        point = binlog.position
        assert point is not None and str(point.gtids) == earlier
        got = [str(e.gtid) for e in binlog if isinstance(getattr(e, "gtid", None), MariaGtid)]
    assert got == [f"0-1-{last.seq_no - 1}", str(last)]


def test_disconnect_while_the_receiver_waits_on_the_server(server: MariaDBSandbox) -> None:
    binlog = BinaryLog(url(server), server_id=306, start="now")
    binlog.connect()
    while binlog.wait_for_next_event(0.5) is not None:
        pass  # what is there, then quiet
    threading.Timer(0.3, binlog.disconnect).start()
    start = time.monotonic()
    assert binlog.wait_for_next_event() is None  # blocked until the disconnect
    assert time.monotonic() - start < 5
    assert not binlog.connected
    assert not receivers_left()
    # and dropped while it waits: the garbage collector stops it
    dropped = BinaryLog(url(server), server_id=307, start="now")
    dropped.connect()
    dropped.wait_for_next_event(0.3)
    assert receiver_threads()
    del dropped
    gc.collect()
    assert not receivers_left()


def test_a_server_error_reaches_the_consumer_once(server: MariaDBSandbox) -> None:
    binlog = BinaryLog(url(server), server_id=308, start=("mysql-bin.999999", 4))
    with time_limit(60):
        binlog.connect()
        with pytest.raises(ServerError, match="1236"):
            binlog.wait_for_next_event(30)
        assert binlog.wait_for_next_event(0.1) is None
        assert not binlog.connected


def test_asyncio_gives_what_the_thread_gives(server: MariaDBSandbox) -> None:
    server.wait_for_checkpoint()
    with (
        time_limit(60),
        BinaryLog(url(server), server_id=309, start="oldest", blocking=False) as binlog,
    ):
        expected = [key(e) for e in binlog]

    async def read() -> list[tuple[str, int, int]]:
        async with AsyncBinaryLog(
            url(server), server_id=310, start="oldest", blocking=False, max_events=8
        ) as binlog:
            return [key(e) async for e in binlog]

    with time_limit(60):
        assert asyncio.run(read()) == expected
    assert len(expected) > 100
