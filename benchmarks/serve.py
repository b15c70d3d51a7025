"""Serving binlogs: ``binlogkit serve`` next to the MariaDB primary that wrote the same files.

Starts a throwaway MariaDB, runs the sandbox workload ``--scale`` times (each
in its own database), flushes the binlogs and copies them into a folder that
``binlogkit serve`` (its own process) serves. Then the same raw dump (every
file from the first, non-blocking, events not decoded: each client only reads
packets, so what is measured is the server) is read from both servers by 1, 4
and 16 concurrent client processes. Reports events/s and MB/s summed over the
clients, the best of ``--repeat`` runs, and binlogkit's rate as a share of
MariaDB's.

    .venv/bin/python benchmarks/serve.py [--scale 5] [--repeat 3] [--clients 1,4,16] [--stream]

``--stream``: the clients are binlogkit streams (``BinlogStream``, every event
decoded, rows not), as an application reading the served binlogs would be.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from binlogkit.io.binlog_index import write_index
from binlogkit.io.mysql import MySQLConnection
from binlogkit.protocol.replication import BinlogDump, DumpFlag
from binlogkit.protocol.spec import ConnectionSpec
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.sandbox.workload import build_workload, run_workload

USER, PASSWORD = "bench", "bench-pass"


def read_dump(port: int, first: str, server_id: int) -> tuple[int, int, float]:
    """One client: the whole non-blocking dump as raw packets; (events, bytes, seconds)."""
    spec = ConnectionSpec.from_url(f"mariadb://{USER}:{PASSWORD}@127.0.0.1:{port}")
    with MySQLConnection.connect(spec) as conn:
        conn.execute("SET @master_binlog_checksum = 'CRC32', @mariadb_slave_capability = 4")
        started = time.perf_counter()
        conn.send_command(BinlogDump(first, 4, server_id, DumpFlag.NON_BLOCK).encode())
        events = size = 0
        while (packet := conn.read_packet())[:1] == b"\0":
            events += 1
            size += len(packet) - 1
        return events, size, time.perf_counter() - started


def read_stream(port: int, first: str, server_id: int) -> tuple[int, int, float]:
    """One binlogkit stream client: every event decoded (rows left undecoded); as read_dump."""
    from binlogkit.services.replica_stream import BinlogStream

    url = f"mariadb://{USER}:{PASSWORD}@127.0.0.1:{port}"
    events = size = 0
    started = time.perf_counter()
    start = (first, 4)
    with BinlogStream(url, start=start, server_id=server_id, blocking=False) as stream:
        for event in stream:
            events += 1
            size += event.header.event_size
    return events, size, time.perf_counter() - started


def measure(port: int, first: str, clients: int, stream: bool) -> tuple[float, float, int]:
    """(events/s, MB/s, events per client) of ``clients`` concurrent dumps (raw: connecting
    and logging in not counted)."""
    client = read_stream if stream else read_dump
    with multiprocessing.Pool(clients) as pool:
        results = pool.starmap(client, [(port, first, 1000 + i) for i in range(clients)])
    elapsed = max(r[2] for r in results)  # from the dump commands to the last EOF
    events = sum(r[0] for r in results)
    size = sum(r[1] for r in results)
    return events / elapsed, size / elapsed / 1e6, results[0][0]


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process (all its threads) has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_serve(folder: Path, log: Path) -> tuple[subprocess.Popen[bytes], int]:
    command = [sys.executable, "-m", "binlogkit", "serve", str(folder), "--port", "0"]
    out = log.open("wb")
    proc = subprocess.Popen([*command, "--user", f"{USER}:{PASSWORD}"], stderr=out)
    deadline = time.monotonic() + 30
    while not (found := re.search(r"on 127\.0\.0\.1:(\d+)", log.read_text())):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"binlogkit serve did not start: {log.read_text()}")
        time.sleep(0.05)
    return proc, int(found[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=5, help="workload runs (about 4 MB each)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--clients", default="1,4,16")
    parser.add_argument(
        "--stream", action="store_true", help="binlogkit stream clients instead of raw readers"
    )
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    primary = MariaDBSandbox(base / "primary", options={"max_binlog_size": 16 << 20}).start()
    serve = None
    try:
        primary.execute(
            f"CREATE USER '{USER}'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'; "
            f"GRANT REPLICATION SLAVE ON *.* TO '{USER}'@'127.0.0.1'"
        )
        for i in range(args.scale):
            run_workload(primary, build_workload(database=f"bk{i}"))
        files = primary.flush_binlogs()
        primary.wait_for_checkpoint()  # the last event MariaDB writes by itself after a flush
        folder = base / "served"
        folder.mkdir()
        for path in files:
            shutil.copyfile(path, folder / path.name)
        write_index(folder / "mysql-bin.index", [p.name for p in files])
        total = sum(p.stat().st_size for p in files)
        print(f"{len(files)} binlogs, {total / 1e6:.1f} MB", flush=True)
        serve, port = start_serve(folder, base / "serve.log")
        columns = ("clients", 7), ("server", 9), ("events/s", 10), ("MB/s", 7), ("share", 6)
        print(*(f"{name:>{width}}" for name, width in columns), f"{'CPU µs/event':>12}")
        servers = (("mariadb", primary.port, primary.pid), ("binlogkit", port, serve.pid))
        for clients in (int(c) for c in args.clients.split(",")):
            rates, cpu = {}, {}
            for name, server_port, pid in servers:
                runs, used = [], []
                for _ in range(args.repeat):
                    before = cpu_seconds(pid or 0)
                    runs.append(measure(server_port, files[0].name, clients, args.stream))
                    used.append((cpu_seconds(pid or 0) - before) / (runs[-1][2] * clients))
                rates[name], cpu[name] = max(runs), min(used)
            for name, (events, mbs, _) in rates.items():
                share = events / rates["mariadb"][0]
                print(
                    f"{clients:>7} {name:>9} {events:>10.0f} {mbs:>7.1f} {share:>6.0%}"
                    f" {cpu[name] * 1e6:>12.1f}"
                )
            counts = {n: r[2] for n, r in rates.items()}
            assert counts["mariadb"] == counts["binlogkit"], f"not the same events: {counts}"
    finally:
        if serve is not None:
            serve.terminate()
            serve.wait()
        primary.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
