"""The live stream survives broken connections exactly: no row change lost or repeated.

A long workload of inserts, updates and deletes in many multi-statement
transactions runs on three tables while the stream (``binlogkit.open`` of a
``mariadb://`` URL through :class:`FaultProxy`) is broken again and again: the
proxy cuts the connection at random byte counts (mid-packet, mid-header,
between packets), the dump thread is KILLed, and the server is restarted once.
The row changes delivered, applied in order to an in-memory model of the
tables, must then equal the tables' contents exactly; applying a change that
does not fit (an insert of an existing key, an update or delete of a missing
row or with a wrong before image) fails the test at once.

The random seed is printed (``-s`` shows it) and can be fixed with
``BINLOGKIT_FAULT_SEED``.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Callable
from typing import Any

from fault_proxy import FaultProxy

import binlogkit
from binlogkit.pipeline.changes import row_changes
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.services.replica_stream import Backoff

USER, PASSWORD = "faults", "faults-pass"
DB = "faults"
TABLES = {
    "t1": "id INT PRIMARY KEY, a INT, s VARCHAR(40)",
    "t2": "id INT PRIMARY KEY, n BIGINT, txt TEXT",
    "t3": "id INT PRIMARY KEY, x VARCHAR(10), y INT",
}
PHASE_SECONDS = 8.0

Row = dict[str, str | None]
Model = dict[str, dict[str, Row]]


class Workload:
    """Random transactions; keeps which keys exist so updates and deletes hit rows."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.keys: dict[str, set[int]] = {table: set() for table in TABLES}
        self.next_id = 1
        self.transactions = 0

    def _values(self, table: str, key: int) -> str:
        r = self.rng
        if table == "t1":
            return f"{key}, {r.randrange(-(10**6), 10**6)}, 's{r.randrange(10**9)}'"
        if table == "t2":
            return f"{key}, {r.randrange(-(2**62), 2**62)}, REPEAT('t', {r.randrange(0, 3000)})"
        return f"{key}, 'x{r.randrange(1000)}', {r.choice(['NULL', str(r.randrange(100))])}"

    def _statement(self) -> str:
        r = self.rng
        table = r.choice(list(TABLES))
        keys = self.keys[table]
        kind = r.random()
        if kind < 0.45 or len(keys) < 5:
            new = [self.next_id + i for i in range(r.randrange(1, 6))]
            self.next_id += len(new)
            keys.update(new)
            rows = ", ".join(f"({self._values(table, key)})" for key in new)
            return f"INSERT INTO {table} VALUES {rows}"
        chosen = r.sample(sorted(keys), min(len(keys), r.randrange(1, 4)))
        where = f"id IN ({', '.join(map(str, chosen))})"
        if kind < 0.8:
            column, value = {
                "t1": ("a", "a + 1"),
                "t2": ("txt", f"REPEAT('u', {r.randrange(0, 2000)})"),
                "t3": ("x", f"'y{r.randrange(1000)}'"),
            }[table]
            return f"UPDATE {table} SET {column} = {value} WHERE {where}"
        keys.difference_update(chosen)
        return f"DELETE FROM {table} WHERE {where}"

    def batch(self, transactions: int) -> str:
        parts = []
        for _ in range(transactions):
            statements = [self._statement() for _ in range(self.rng.randrange(1, 5))]
            parts.append("BEGIN; " + "; ".join(statements) + "; COMMIT;")
            self.transactions += 1
        return "\n".join(parts)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode()
    return str(value)


class Consumer:
    """Applies the stream's row changes to the model, checking each fits."""

    def __init__(self, url: str, start: tuple[str, int]) -> None:
        self.model: Model = {table: {} for table in TABLES}
        self.changes = 0
        self.done = threading.Event()
        self.error: BaseException | None = None
        self.stream = binlogkit.open(
            url,
            start=start,
            server_id=7301,
            blocking=True,
            heartbeat=1.0,
            reconnect=Backoff(initial=0.02, maximum=0.5),
        )
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            for change in row_changes(self.stream):
                table = change.source.table
                if change.source.db != DB or table not in self.model:
                    if table == "done":
                        self.done.set()
                    continue
                self._apply(self.model[table], change.op, change.before, change.after)
                self.changes += 1
        except BaseException as err:  # handed to the test thread
            self.error = err
            self.done.set()

    @staticmethod
    def _apply(rows: dict[str, Row], op: str, before: Any, after: Any) -> None:
        if before is not None:
            old = {k: _text(v) for k, v in before.items()}
            key = str(old["id"])
            assert rows.get(key) == old, f"{op} of {old}: the model has {rows.get(key)}"
            del rows[key]
        if after is not None:
            new = {k: _text(v) for k, v in after.items()}
            key = str(new["id"])
            assert key not in rows, f"{op} of {new}: key already there (duplicate delivery?)"
            rows[key] = new


def _dump_threads(server: MariaDBSandbox) -> list[str]:
    rows = server.query("SHOW PROCESSLIST")
    return [str(row[0]) for row in rows if row[4] == "Binlog Dump" and row[1] == USER]


def _break_things(
    server: MariaDBSandbox, proxy: FaultProxy, rng: random.Random, stop: threading.Event
) -> dict[str, int]:
    counts = {"proxy": 0, "kill": 0}
    while not stop.wait(rng.uniform(0.15, 0.5)):
        if rng.random() < 0.7:
            if not proxy.armed:
                proxy.cut_after(rng.randrange(1, 60_000))
                counts["proxy"] += 1
        else:
            for thread_id in _dump_threads(server):
                try:
                    server.execute(f"KILL {thread_id}")
                    counts["kill"] += 1
                except Exception:  # the thread may be gone already
                    pass
    return counts


def _phase(server: MariaDBSandbox, proxy: FaultProxy, work: Workload, rng: random.Random) -> dict:
    stop = threading.Event()
    result: dict[str, int] = {}

    def breaker() -> None:
        result.update(_break_things(server, proxy, random.Random(rng.random()), stop))

    thread = threading.Thread(target=breaker, daemon=True)
    thread.start()
    end = time.monotonic() + PHASE_SECONDS
    while time.monotonic() < end:
        server.execute(work.batch(rng.randrange(5, 25)), database=DB)
    stop.set()
    thread.join()
    return result


def _table(server: MariaDBSandbox, table: str) -> dict[str, Row]:
    columns = [part.split()[0] for part in TABLES[table].split(", ")]
    rows = server.query(f"SELECT {', '.join(columns)} FROM {table}", database=DB)
    return {str(row[0]): dict(zip(columns, row, strict=True)) for row in rows}


def test_no_loss_no_duplicates_under_faults(
    mariadb_factory: Callable[..., MariaDBSandbox],
) -> None:
    seed = int(os.environ.get("BINLOGKIT_FAULT_SEED", random.randrange(1 << 32)))
    print(f"fault test seed: {seed} (set BINLOGKIT_FAULT_SEED={seed} to repeat)")
    rng = random.Random(seed)
    server = mariadb_factory("faults", max_binlog_size=65536)
    schema = "; ".join(f"CREATE TABLE {DB}.{name} ({cols})" for name, cols in TABLES.items())
    server.execute(
        f"CREATE USER '{USER}'@'%' IDENTIFIED BY '{PASSWORD}';"
        f"GRANT ALL PRIVILEGES ON *.* TO '{USER}'@'%';"
        f"CREATE DATABASE {DB}; {schema}; CREATE TABLE {DB}.done (id INT PRIMARY KEY)"
    )
    file, position = server.query("SHOW MASTER STATUS")[0][:2]
    work = Workload(rng)
    with FaultProxy(("127.0.0.1", server.port)) as proxy:
        url = f"mariadb://{USER}:{PASSWORD}@127.0.0.1:{proxy.port}"
        consumer = Consumer(url, (str(file), int(str(position))))
        try:
            first = _phase(server, proxy, work, rng)
            server.stop()
            time.sleep(rng.uniform(0.1, 1.0))
            server.start()
            proxy.upstream = ("127.0.0.1", server.port)
            second = _phase(server, proxy, work, rng)
            server.execute(f"INSERT INTO {DB}.done VALUES (1)")
            deadline = time.monotonic() + 60
            while not consumer.done.wait(0.2) and consumer.thread.is_alive():
                if time.monotonic() > deadline:
                    break
            finished = consumer.done.is_set()
            assert consumer.thread.is_alive() or consumer.done.is_set(), (
                "the blocking stream ended by itself before the end of the workload "
                f"(at {consumer.stream.resume_point})"
            )
            assert finished, f"the stream did not reach the end (at {consumer.stream.resume_point})"
            if consumer.error is not None:
                raise consumer.error
            print(
                f"{work.transactions} transactions, {consumer.changes} row changes; "
                f"breaks: {first} then restart then {second}; proxy cuts {proxy.cuts}, "
                f"reconnects {consumer.stream.reconnects}"
            )
            assert consumer.stream.reconnects >= 5
            for table in TABLES:
                assert consumer.model[table] == _table(server, table), table
        finally:
            consumer.stream.close()
            proxy.close()
