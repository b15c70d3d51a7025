"""Decoding throughput: binlogkit next to mariadb-binlog on the same files, in one run.

Generates two MariaDB binlogs with a throwaway server (a sysbench
``oltp_read_write`` run and a bulk insert), then for each file reports size,
row changes, and for both decoders the wall time, MB/s, rows/s and peak
resident memory. binlogkit decodes every row value to Python objects;
mariadb-binlog runs with ``--base64-output=decode-rows -v`` into /dev/null.
Each measurement runs in its own process, on one core (taskset); peak memory
is that process's own (wait4), and binlogkit's time excludes interpreter start-up.

    .venv/bin/python benchmarks/decode.py [--scale 1.0] [--keep DIR]

A second, smaller bulk file shows whether peak memory grows with file size.
Last, the cost of the schema history: the sysbench run again on a server that
logs ``binlog_row_metadata=NO_LOG`` (MariaDB's default), decoded with the
history that ``binlogkit.open`` keeps by default (names and types from the
binlog's CREATE TABLEs), against the FULL-metadata file decoded without one
(best of three runs each).

NF5 of the storage streams (WL#10956): every event of the sysbench file framed
(cut and checksum-verified) from chunks read through a ``FileInputStream`` and
from chunks read with a plain ``open()``, best of five each, in one process.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SYSBENCH_TABLES = 4


def measure_binlogkit(path: str, schema: str = "auto") -> dict[str, float]:
    """Decode every event and every row value of ``path``; runs in a child process.

    ``schema``: "auto" (the default schema history) or "none" (the binlog's own columns).
    """
    import binlogkit

    start = time.perf_counter()
    if schema == "auto":  # start-up, like the interpreter's: timed apart
        import binlogkit.schema.ddl  # the SQL parser, imported at the first DDL
    parser_import = time.perf_counter() - start
    events = rows = 0
    start = time.perf_counter()
    with binlogkit.open(path, schema=None if schema == "none" else "auto") as reader:
        for event in reader:
            events += 1
            changes = getattr(event, "rows", None)
            if changes is not None:
                for change in changes:
                    rows += 1
                    _ = change.before, change.after
    seconds = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "events": events,
        "rows": rows,
        "seconds": seconds,
        "peak_mib": peak_kib / 1024,
        "parser_import_s": parser_import,
    }


def best_rows_per_second(path: Path, schema: str, runs: int = 3) -> tuple[float, float]:
    """The best rows/s of ``runs`` binlogkit decodes of ``path`` (each in its own process),
    and the least time its SQL parser took to import (0 without a schema history)."""
    best = 0.0
    parser = float("inf")
    for _ in range(runs):
        command = [sys.executable, __file__, "--measure", str(path), "--schema", schema]
        result = json.loads(run_child(command, capture=True)[2])
        best = max(best, result["rows"] / result["seconds"])
        parser = min(parser, result["parser_import_s"])
    return best, parser


def run_child(args: list[str], *, capture: bool) -> tuple[float, float, bytes]:
    """Run a command pinned to one core: its wall time, its own peak RSS (MiB), its stdout."""
    pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
    start = time.perf_counter()
    child = subprocess.Popen(pin + args, stdout=subprocess.PIPE if capture else subprocess.DEVNULL)
    out = child.stdout.read() if child.stdout else b""
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise subprocess.CalledProcessError(child.returncode, args)
    return seconds, usage.ru_maxrss / 1024, out


def sysbench_command(server: Any, test: str, *extra: str) -> list[str]:
    """``sysbench TEST`` against ``server``'s socket, on the benchmark tables of ``sbtest``."""
    return [
        "sysbench",
        test,
        "--db-driver=mysql",
        f"--mysql-socket={server.socket}",
        "--mysql-user=root",
        "--mysql-db=sbtest",
        f"--tables={SYSBENCH_TABLES}",
        *extra,
    ]


def run_oltp(server: Any, table_size: int, events: int) -> None:
    """Prepare the tables and run ``events`` sysbench oltp_read_write transactions (2 threads)."""
    base = sysbench_command(server, "oltp_read_write", f"--table-size={table_size}", "--threads=2")
    subprocess.run([*base, "prepare"], check=True, capture_output=True)
    run = [*base, f"--events={events}", "--time=0", "run"]
    subprocess.run(run, check=True, capture_output=True)


def generate_oltp_no_metadata(base: Path, scale: float) -> Path:
    """The sysbench binlog of :func:`generate` from a server with ``binlog_row_metadata=NO_LOG``."""
    from binlogkit.sandbox import MariaDBSandbox

    options = {**_SERVER_OPTIONS, "binlog_row_metadata": "NO_LOG"}
    with MariaDBSandbox(base / "server-nolog", options=options) as server:
        server.execute("CREATE DATABASE sbtest")
        run_oltp(server, int(20000 * scale), int(20000 * scale))
        return server.flush_binlogs()[-2]


_SERVER_OPTIONS = {"max_binlog_size": "1G", "innodb_buffer_pool_size": "256M"}


def generate(base: Path, scale: float) -> list[Path]:
    """Write the benchmark binlogs with a throwaway MariaDB; returns the files."""
    from binlogkit.sandbox import MariaDBSandbox

    files: list[Path] = []
    with MariaDBSandbox(base / "server", options=_SERVER_OPTIONS) as server:
        server.execute("CREATE DATABASE sbtest")
        run_oltp(server, int(20000 * scale), int(20000 * scale))
        files.append(server.flush_binlogs()[-2])
        for name, count in (("bulk_small", int(100_000 * scale)), ("bulk", int(1_000_000 * scale))):
            server.execute(
                f"CREATE TABLE sbtest.{name} (id INT PRIMARY KEY, k INT UNSIGNED,"
                " price DECIMAL(12,2), label VARCHAR(64), created DATETIME(3), ratio DOUBLE)"
            )
            server.execute(
                f"INSERT INTO sbtest.{name} SELECT seq, seq * 7919 % 100003,"
                " seq / 100, CONCAT('label-', seq), '2024-01-01' + INTERVAL seq SECOND,"
                f" seq / 3 FROM seq_1_to_{count}",
                database="sbtest",
            )
            files.append(server.flush_binlogs()[-2])
    return files


def framing_mb_per_second(path: Path, runs: int = 5) -> tuple[float, float]:
    """The best MB/s of framing every event of ``path`` from 1 MiB chunks read with a plain
    ``open()``, and read through a ``FileInputStream`` (runs of the two interleaved)."""
    from binlogkit.binlog.framing import EventFramer, Frame
    from binlogkit.io.streams import FileInputStream

    best = [float("inf"), float("inf")]
    for _ in range(runs):
        for through_streams in (False, True):
            start = time.perf_counter()
            framer = EventFramer(file=str(path))
            with FileInputStream(path) if through_streams else path.open("rb") as source:
                while chunk := source.read(1 << 20):
                    framer.receive_data(chunk)
                    while isinstance(framer.next_frame(), Frame):
                        pass
            best[through_streams] = min(best[through_streams], time.perf_counter() - start)
    mb = path.stat().st_size / 1e6
    return mb / best[0], mb / best[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="workload size factor")
    parser.add_argument("--keep", type=Path, help="keep the generated binlogs in this folder")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--schema", default="auto", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure_binlogkit(args.measure, args.schema)))
        return

    base = Path(tempfile.mkdtemp(prefix="bk-bench-"))
    try:
        print(f"generating binlogs (scale {args.scale}) ...", file=sys.stderr)
        files = generate(base, args.scale)
        header = (
            f"{'file':<14}{'MB':>8}{'rows':>10}  {'decoder':<14}{'s':>8}{'MB/s':>8}"
            f"{'rows/s':>11}{'peak MiB':>10}"
        )
        print(header)
        print("-" * len(header))
        ratios = []
        for path in files:
            label = {0: "oltp_rw", 1: "bulk_small", 2: "bulk"}[files.index(path)]
            mb = path.stat().st_size / 1e6
            _, _, out = run_child([sys.executable, __file__, "--measure", str(path)], capture=True)
            ours = json.loads(out)
            rows = ours["rows"]
            theirs_s, theirs_peak, _ = run_child(
                ["mariadb-binlog", "--base64-output=decode-rows", "-v", str(path)], capture=False
            )
            for name, s, p in (
                ("binlogkit", ours["seconds"], ours["peak_mib"]),
                ("mariadb-binlog", theirs_s, theirs_peak),
            ):
                print(
                    f"{label:<14}{mb:>8.1f}{rows:>10}  {name:<14}{s:>8.2f}{mb / s:>8.1f}"
                    f"{rows / s:>11.0f}{p:>10.1f}"
                )
            ratios.append((label, theirs_s / ours["seconds"]))
        for label, ratio in ratios:
            print(f"{label}: binlogkit rows/s = {ratio:.2f} x mariadb-binlog (target 0.20)")
        no_log = generate_oltp_no_metadata(base, args.scale)
        full, _ = best_rows_per_second(files[0], "none")
        history, parser = best_rows_per_second(no_log, "auto")
        print(
            f"schema history: {history:.0f} rows/s on NO_LOG, {full:.0f} rows/s on FULL metadata"
            f" without it: {history / full:.3f} x (target 0.95); the SQL parser's import,"
            f" once per process at the first DDL: {parser:.2f} s"
        )
        plain, streams = framing_mb_per_second(files[0])
        print(
            f"storage streams (NF5): framing {streams:.0f} MB/s through FileInputStream,"
            f" {plain:.0f} MB/s from a plain open(): {streams / plain:.3f} x (target >= 1.0)"
        )
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            for path in files:
                shutil.copy2(path, args.keep / path.name)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
