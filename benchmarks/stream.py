"""Streaming: binlogkit next to python-mysql-replication on the same server, in one run.

Starts a throwaway MariaDB, writes binlogs with sysbench (``oltp_read_write``)
and a bulk insert, then streams all of them over TCP with binlogkit
(``binlogkit.open("mariadb://...")``) and with python-mysql-replication
(``pymysqlreplication.BinLogStreamReader``): a dump from the oldest binlog,
stopped at the end position the server reported (blocking mode for both:
python-mysql-replication's non-blocking mode loses its connection on MariaDB
10.11 and starts over, endlessly),
each decoding every row of every rows event. Both get the same events: without
MariaDB's ANNOTATE_ROWS events, which python-mysql-replication does not ask for
(the events column shows the counts). Reports rows/s and MB/s (binlog
bytes streamed per second) for both and the ratio: the best of ``--repeat``
runs, with the consumer pinned to core 0 and the server's threads moved to the
other cores (else, on a small machine, the server's dump thread competes for
the consumer's core). The consumer's own CPU time is shown too (rows per
CPU second, the least of the runs): it depends far less on what else the
machine is running.

Then the end-to-end lag: each library follows the server (blocking, from the
current end) while sysbench ``oltp_write_only`` runs at a fixed rate and a
heartbeat row carrying ``UNIX_TIMESTAMP(NOW(6))`` is committed every 50 ms;
the lag of a heartbeat is the time between that commit time and the moment
the consumer has it decoded (the load starts once the consumer has a warm-up
row, so its connection and start-up time is not counted). Every consumer runs
in its own process, pinned to one core (taskset), with the same decoding work
(all rows, all columns).

    .venv/bin/python benchmarks/stream.py [--scale 1.0] [--lag-seconds 10] [--rate 200] [--repeat 3]

``--receiver`` compares instead, on the same binlogs, what ``binlogkit tail``
does to each row change (the jsonl line) when the stream is iterated directly
(``binlogkit.open``) and when it comes through a ``BinaryLog``, whose receiver
thread reads and decodes the stream into its queue while the consumer renders:
rows/s of each, best of ``--repeat`` alternating runs, both pinned to core 0.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from decode import run_child, run_oltp, sysbench_command

USER, PASSWORD = "bench", "bench-pass"
SENTINEL = -1.0
WARMUP = -2.0
"""The heartbeat row a lag consumer waits for before the load starts (it is connected then)."""


def _url(port: int) -> str:
    return f"mariadb://{USER}:{PASSWORD}@127.0.0.1:{port}"


def _settings(port: int) -> dict[str, Any]:
    return {"host": "127.0.0.1", "port": port, "user": USER, "passwd": PASSWORD}


# -- consumers (each runs in a child process) ------------------------------------


def consume_binlogkit(
    port: int, start: tuple[str, int] | None, lag: bool, end: tuple[str, int] | None
) -> dict[str, Any]:
    import binlogkit
    from binlogkit.binlog.events.rows import RowsEvent

    rows = events = 0
    lags: list[float] = []
    where: Any = "oldest" if start is None else start
    with binlogkit.open(
        _url(port), start=where, server_id=9001, blocking=True, annotate_rows=False
    ) as stream:
        if not lag:
            print("ready", flush=True)
        begin = _now()
        for event in stream:
            events += 1
            header = event.header
            # header.file is the server's base name, as python-mysql-replication's log_file.
            if end is not None and (header.file, header.log_pos) >= end:
                return _result(events, rows, begin, lags)
            if isinstance(event, RowsEvent):
                for change in event.rows:
                    rows += 1
                    after = change.after
                    if lag and event.table_name == "heartbeat" and after is not None:
                        sent = after["t"]
                        if sent == SENTINEL:
                            return _result(events, rows, begin, lags)
                        if sent == WARMUP:
                            print("ready", flush=True)
                            continue
                        lags.append(time.time() - sent)
    return _result(events, rows, begin, lags)


def consume_pymysqlreplication(
    port: int, start: tuple[str, int] | None, lag: bool, end: tuple[str, int] | None
) -> dict[str, Any]:
    from pymysqlreplication import BinLogStreamReader
    from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

    rows = events = 0
    lags: list[float] = []
    position: dict[str, Any] = {}
    if start is not None:
        position = {"resume_stream": True, "log_file": start[0], "log_pos": start[1]}
    stream = BinLogStreamReader(
        connection_settings=_settings(port),
        server_id=9002,
        blocking=True,
        is_mariadb=True,
        **position,
    )
    if not lag:
        print("ready", flush=True)
    begin = _now()
    try:
        for event in stream:
            events += 1
            if end is not None and (stream.log_file, event.packet.log_pos) >= end:
                return _result(events, rows, begin, lags)
            if isinstance(event, WriteRowsEvent | UpdateRowsEvent | DeleteRowsEvent):
                for row in event.rows:
                    rows += 1
                    after = row.get("values", row.get("after_values"))
                    if lag and event.table == "heartbeat" and after is not None:
                        sent = after["t"]
                        if sent == SENTINEL:
                            return _result(events, rows, begin, lags)
                        if sent == WARMUP:
                            print("ready", flush=True)
                            continue
                        lags.append(time.time() - sent)
    finally:
        stream.close()
    return _result(events, rows, begin, lags)


def _now() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _result(
    events: int, rows: int, begin: tuple[float, float], lags: list[float]
) -> dict[str, Any]:
    wall, cpu = _now()
    return {
        "events": events,
        "rows": rows,
        "seconds": wall - begin[0],
        "cpu": cpu - begin[1],
        "lags": lags,
    }


CONSUMERS = {"binlogkit": consume_binlogkit, "python-mysql-replication": consume_pymysqlreplication}


def _tail_work(events: Any, end: tuple[str, int], begin: tuple[float, float]) -> dict[str, Any]:
    """What ``binlogkit tail`` does with each row change: its jsonl line (not printed)."""
    from binlogkit.cli.render import ROW_FORMATS
    from binlogkit.pipeline.changes import row_changes

    render = ROW_FORMATS["jsonl"]
    counted = {"events": 0}

    def until_end() -> Any:
        for event in events:
            counted["events"] += 1
            header = event.header
            if (header.file, header.log_pos) >= end:
                return
            yield event

    rows = size = 0
    for change in row_changes(until_end()):
        rows += 1
        size += sum(map(len, render(change)))
    return _result(counted["events"], rows, begin, [])


def tail_direct(
    port: int, start: tuple[str, int] | None, lag: bool, end: tuple[str, int] | None
) -> dict[str, Any]:
    import binlogkit

    assert end is not None
    options = {"start": "oldest", "server_id": 9003, "annotate_rows": False}
    with binlogkit.open(_url(port), **options) as stream:
        print("ready", flush=True)
        return _tail_work(stream, end, _now())


def tail_receiver(
    port: int, start: tuple[str, int] | None, lag: bool, end: tuple[str, int] | None
) -> dict[str, Any]:
    from binlogkit.services.binary_log import BinaryLog

    assert end is not None
    options = {"start": "oldest", "server_id": 9004, "annotate_rows": False}
    with BinaryLog(_url(port), **options) as binlog:
        print("ready", flush=True)
        return _tail_work(binlog, end, _now())


RECEIVER_MODES = {
    "direct (binlogkit.open)": tail_direct,
    "receiver thread (BinaryLog)": tail_receiver,
}


def receiver_comparison(port: int, end: tuple[str, int], repeat: int, mb: float) -> None:
    """``binlogkit tail``'s work on the stream, iterated directly and through a BinaryLog."""
    header = f"{'stream':<30}{'events':>8}{'rows':>8}{'s':>7}{'cpu s':>7}{'rows/s':>9}{'MB/s':>7}"
    print(header)
    print("-" * len(header))
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in RECEIVER_MODES}
    for _ in range(repeat):  # alternating, so that both see the same machine
        for name in RECEIVER_MODES:
            _, _, out = run_child(_consumer(name, port, None, False, end), capture=True)
            runs[name].append(json.loads(out.splitlines()[-1]))
    speed = {}
    for name, results in runs.items():
        r = min(results, key=lambda r: r["seconds"])
        speed[name] = r["rows"] / r["seconds"]
        print(
            f"{name:<30}{r['events']:>8}{r['rows']:>8}{r['seconds']:>7.2f}"
            f"{min(x['cpu'] for x in results):>7.2f}{speed[name]:>9.0f}{mb / r['seconds']:>7.1f}"
        )
    direct, threaded = speed.values()
    print(f"receiver thread: {threaded / direct:.2f} x the rows/s of the direct stream")


# -- the server side ----------------------------------------------------------------


def load(server: Any, scale: float) -> None:
    """The binlogs to stream: a sysbench run and a bulk insert."""
    size = int(20000 * scale)
    server.execute(
        f"CREATE DATABASE sbtest; CREATE DATABASE bench;"
        f"CREATE USER '{USER}'@'%' IDENTIFIED BY '{PASSWORD}';"
        f"GRANT ALL PRIVILEGES ON *.* TO '{USER}'@'%';"
        "CREATE TABLE bench.heartbeat (id INT AUTO_INCREMENT PRIMARY KEY, t DOUBLE)"
    )
    run_oltp(server, size, size)
    server.execute(
        "CREATE TABLE sbtest.bulk (id INT PRIMARY KEY, k INT UNSIGNED, price DECIMAL(12,2),"
        " label VARCHAR(64), created DATETIME(3), ratio DOUBLE)"
    )
    server.execute(
        "INSERT INTO sbtest.bulk SELECT seq, seq * 7919 % 100003, seq / 100,"
        " CONCAT('label-', seq), '2024-01-01' + INTERVAL seq SECOND, seq / 3"
        f" FROM seq_1_to_{int(300_000 * scale)}",
        database="sbtest",
    )
    server.flush_binlogs()


def _consumer(
    name: str,
    port: int,
    start: tuple[str, int] | None,
    lag: bool,
    end: tuple[str, int] | None = None,
) -> list[str]:
    spec = json.dumps({"name": name, "port": port, "start": start, "lag": lag, "end": end})
    return [sys.executable, __file__, "--consume", spec]


def pin_server(server: Any) -> str:
    """Move every thread of the server off core 0, where the consumers run (taskset -c 0).

    On a small machine the server's dump thread otherwise shares the consumer's
    core, and both libraries measure the server's CPU time as much as their own.
    New threads (each connection's) inherit the affinity of the thread making them.
    """
    cpus = set(range(1, os.cpu_count() or 1))
    if not cpus or not hasattr(os, "sched_setaffinity") or server.pid is None:
        return "server not pinned (one core)"
    for task in Path(f"/proc/{server.pid}/task").iterdir():
        os.sched_setaffinity(int(task.name), cpus)
    return f"server on cores {','.join(map(str, sorted(cpus)))}"


def throughput(name: str, port: int, end: tuple[str, int], repeat: int) -> dict[str, Any]:
    """The best of ``repeat`` runs (least disturbed by other load): the run with the least
    wall time, with the least CPU time of all runs as its ``cpu``."""
    runs: list[dict[str, Any]] = []
    for _ in range(repeat):
        _, peak, out = run_child(_consumer(name, port, None, False, end), capture=True)
        result: dict[str, Any] = json.loads(out.splitlines()[-1])
        result["peak_mib"] = peak
        runs.append(result)
    best = min(runs, key=lambda r: r["seconds"])
    return {**best, "cpu": min(r["cpu"] for r in runs)}


def lag(name: str, server: Any, seconds: float, rate: int) -> dict[str, Any]:
    """Follow the server with ``name`` while sysbench and the heartbeat write."""
    file, position = server.query("SHOW MASTER STATUS")[0][:2]
    pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
    child = subprocess.Popen(
        pin + _consumer(name, server.port, (str(file), int(str(position))), True),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    # The consumer says "ready" once it has the warm-up row: connected and streaming, so
    # its start-up time (seconds for python-mysql-replication) does not count as lag.
    server.execute(f"INSERT INTO bench.heartbeat (t) VALUES ({WARMUP})")
    child.stdout.readline()  # "ready"
    time.sleep(0.5)
    workload = subprocess.Popen(
        [
            *sysbench_command(server, "oltp_write_only", "--threads=2"),
            f"--rate={rate}",
            f"--time={int(seconds)}",
            "--events=0",
            "run",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    beats = subprocess.Popen(
        server.client_command("--batch", database="bench"), stdin=subprocess.PIPE, text=True
    )
    assert beats.stdin is not None
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        beats.stdin.write("INSERT INTO heartbeat (t) VALUES (UNIX_TIMESTAMP(NOW(6)));\n")
        beats.stdin.flush()
        time.sleep(0.05)
    workload.wait()
    beats.stdin.write(f"INSERT INTO heartbeat (t) VALUES ({SENTINEL});\n")
    beats.stdin.close()
    beats.wait()
    timer = threading.Timer(seconds * 20 + 60, child.kill)
    timer.start()
    out = child.stdout.read()
    child.wait()
    timer.cancel()
    if child.returncode:
        raise RuntimeError(f"{name} lag consumer failed (exit {child.returncode})")
    return dict(json.loads(out.splitlines()[-1]))


def _ms(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="workload size factor")
    parser.add_argument("--lag-seconds", type=float, default=10.0, help="live load duration")
    parser.add_argument("--rate", type=int, default=200, help="sysbench transactions/s (live)")
    parser.add_argument("--repeat", type=int, default=3, help="throughput runs per library (best)")
    parser.add_argument(
        "--receiver",
        action="store_true",
        help="compare tail's rows/s iterating the stream directly and through a BinaryLog",
    )
    parser.add_argument("--consume", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.consume:
        spec = json.loads(args.consume)
        start = tuple(spec["start"]) if spec["start"] else None
        end = tuple(spec["end"]) if spec["end"] else None
        consume = {**CONSUMERS, **RECEIVER_MODES}[spec["name"]]
        print(json.dumps(consume(spec["port"], start, spec["lag"], end)))
        return

    from binlogkit.sandbox import MariaDBSandbox

    base = Path(tempfile.mkdtemp(prefix="bk-stream-bench-"))
    options = {"max_binlog_size": "1G", "innodb_buffer_pool_size": "256M"}
    try:
        with MariaDBSandbox(base / "server", options=options) as server:
            print(f"writing binlogs (scale {args.scale}) ...", file=sys.stderr)
            load(server, args.scale)
            placement = pin_server(server)
            total = sum(int(str(row[1])) for row in server.query("SHOW BINARY LOGS"))
            file, position = server.query("SHOW MASTER STATUS")[0][:2]
            end = (str(file), int(str(position)))
            mb = total / 1e6
            if args.receiver:
                print(
                    f"\nbinlogkit tail's work ({mb:.1f} MB of binlogs, jsonl lines not printed),"
                    f" dump over TCP to the end; consumer on core 0, {placement};"
                    f" best of {args.repeat}"
                )
                receiver_comparison(server.port, end, args.repeat, mb)
                return
            print(
                f"\nthroughput: all binlogs ({mb:.1f} MB), dump over TCP to the end;"
                f" consumer on core 0, {placement}; best of {args.repeat}"
            )
            header = (
                f"{'library':<26}{'events':>8}{'rows':>8}{'s':>7}{'cpu s':>7}{'MB/s':>7}"
                f"{'rows/s':>9}{'rows/cpu-s':>12}{'peak MiB':>10}"
            )
            print(header)
            print("-" * len(header))
            speed: dict[str, tuple[float, float]] = {}
            for name in CONSUMERS:
                r = throughput(name, server.port, end, args.repeat)
                speed[name] = (r["rows"] / r["seconds"], r["rows"] / r["cpu"])
                print(
                    f"{name:<26}{r['events']:>8}{r['rows']:>8}{r['seconds']:>7.2f}{r['cpu']:>7.2f}"
                    f"{mb / r['seconds']:>7.1f}{speed[name][0]:>9.0f}{speed[name][1]:>12.0f}"
                    f"{r['peak_mib']:>10.1f}"
                )
            ours, theirs = speed["binlogkit"], speed["python-mysql-replication"]
            print(
                f"binlogkit rows/s = {ours[0] / theirs[0]:.1f} x python-mysql-replication"
                f" (per CPU second: {ours[1] / theirs[1]:.1f} x; target 10)"
            )

            print(
                f"\nlag: commit -> decoded, sysbench oltp_write_only at {args.rate} tx/s"
                f" + heartbeat every 50 ms, {args.lag_seconds:.0f} s"
            )
            header = (
                f"{'library':<26}{'beats':>7}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'mean ms':>9}"
            )
            print(header)
            print("-" * len(header))
            for name in CONSUMERS:
                r = lag(name, server, args.lag_seconds, args.rate)
                lags = r["lags"]
                mean = 1000 * statistics.fmean(lags) if lags else float("nan")
                print(
                    f"{name:<26}{len(lags):>7}{_ms(lags, 0.5):>9.1f}{_ms(lags, 0.99):>9.1f}"
                    f"{_ms(lags, 1.0):>9.1f}{mean:>9.1f}"
                )
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
