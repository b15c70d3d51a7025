"""Spark ingest throughput: ``local[1]`` against ``local[2]``, next to the plain Python reader.

Makes two inputs with throwaway MariaDB servers running sysbench
``oltp_read_write``: a multi-file archive (``max_binlog_size`` 4 MiB) and one
big file (the sysbench binlog of ``benchmarks/decode.py``). For each input it
reports rows/s of

- ``python``: the plain reader (``binlogkit rows``' code: row changes with
  before/after as JSON text) in one process pinned to one core;
- ``read local[N]``: the ``binlog`` data source into Spark's ``noop`` sink
  (decoding only);
- ``ingest local[N]``: ``binlogkit spark ingest`` into a fresh lake (decoding,
  Parquet, commit),

then the scaling ratio from one core to two (target at least 1.8x) and the
rows/s per core of each. Spark's start-up and a first warm-up job are not timed.
Spark runs with its default JVM options (not the tests' fast-start ones) and
the data source's default split size (about two splits per core). Both
sessions stay up and take turns, run by run, so a change in the machine's
load hits both alike; the table shows each read's partitions, the cores the
Spark processes kept busy (CPU seconds / wall seconds; about 2 for a
``local[2]`` that scales), rows per CPU second (how much work a row costs,
whatever the load) and the load average before the run.

    .venv/bin/python benchmarks/spark_ingest.py [--scale 1.0] [--repeat 2] [--inputs DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from decode import SYSBENCH_TABLES, generate, run_child

MASTERS = ("local[1]", "local[2]")


def generate_archive(base: Path, scale: float) -> list[Path]:
    """A sysbench oltp_read_write run cut into many binlog files; returns the closed files."""
    from binlogkit.sandbox import MariaDBSandbox

    options = {"max_binlog_size": "4M", "innodb_buffer_pool_size": "256M"}
    with MariaDBSandbox(base / "archive-server", options=options) as server:
        server.execute("CREATE DATABASE sbtest")
        sysbench = [
            "sysbench",
            "oltp_read_write",
            "--db-driver=mysql",
            f"--mysql-socket={server.socket}",
            "--mysql-user=root",
            "--mysql-db=sbtest",
            f"--tables={SYSBENCH_TABLES}",
            f"--table-size={int(10000 * scale)}",
            "--threads=2",
        ]
        subprocess.run([*sysbench, "prepare"], check=True, capture_output=True)
        subprocess.run(
            [*sysbench, f"--events={int(20000 * scale)}", "--time=0", "run"],
            check=True,
            capture_output=True,
        )
        return server.flush_binlogs()[:-1]


def measure_python(paths: list[str]) -> dict[str, float]:
    """Row changes with JSON images, as the data source makes them; runs in a child process."""
    import binlogkit
    from binlogkit import jsonenc
    from binlogkit.pipeline.changes import row_changes

    rows = 0
    start = time.perf_counter()
    with binlogkit.open(paths) as reader:
        for change in row_changes(reader):
            rows += 1
            _ = (
                None if change.before is None else jsonenc.dumps(change.before),
                None if change.after is None else jsonenc.dumps(change.after),
            )
    return {"rows": rows, "seconds": time.perf_counter() - start}


def session(master: str) -> Any:
    from pyspark.sql import SparkSession

    from binlogkit.spark import register

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master(master)
        .appName("binlogkit spark_ingest benchmark")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", master[6:-1])
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds (user + system, waited-for children included) of ``root`` and its descendants.

    Linux only (``/proc``); the JVM and its Python workers are descendants of the driver.
    """
    tick = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        parents[int(entry)] = int(fields[1])
        cpu[int(entry)] = sum(int(v) for v in fields[11:15]) / tick
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += cpu.get(pid, 0.0)
        todo += [child for child, parent in parents.items() if parent == pid]
    return total


def serve_spark(master: str, inputs: dict[str, list[str]], work: Path) -> None:
    """Run the measurements the parent asks for on stdin (``read NAME`` or ``ingest NAME``).

    Prints one JSON line per request: rows, seconds, CPU seconds of this process
    tree, partitions and the load average before the run.
    """
    from binlogkit.spark.ingest import ingest

    spark = session(master)
    try:
        warm = min((p for paths in inputs.values() for p in paths), key=os.path.getsize)
        ingest(spark, warm, work / f"warm-up-{master}")
        print(json.dumps({"ready": master}), flush=True)
        for number, line in enumerate(sys.stdin):
            step, name = line.split(maxsplit=1)
            paths = inputs[name.strip()]
            frame = spark.read.format("binlog").load(paths)
            load, cpu = os.getloadavg()[0], tree_cpu_seconds(os.getpid())
            start = time.perf_counter()
            if step == "read":
                frame.write.format("noop").mode("overwrite").save()
                rows = None
            else:
                lake = work / f"lake-{master}-{number}"
                rows = ingest(spark, paths, lake, batch_bytes=1 << 40).rows
            seconds = time.perf_counter() - start
            cpu = tree_cpu_seconds(os.getpid()) - cpu
            if step != "read":
                shutil.rmtree(lake)
            result = {"rows": rows, "seconds": seconds, "cpu": cpu, "load": load}
            result["partitions"] = frame.rdd.getNumPartitions()
            print(json.dumps(result), flush=True)
    finally:
        spark.stop()


def measure_spark(inputs: dict[str, list[str]], work: Path, repeat: int) -> dict[str, Any]:
    """Per master, input and step the fastest of ``repeat`` runs; the masters take turns.

    Both sessions stay up, and each measurement of ``local[1]`` is followed by the
    same one on ``local[2]``, so a change of the machine's load hits both alike.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS")}
    children = {}
    for master in MASTERS:
        job = {"master": master, "inputs": inputs, "work": str(work)}
        children[master] = subprocess.Popen(
            [sys.executable, __file__, "--spark", json.dumps(job)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )

    def answer(child: subprocess.Popen[str]) -> dict[str, Any]:
        assert child.stdout is not None
        for line in child.stdout:
            if line.startswith("{"):
                return dict(json.loads(line))
        raise SystemExit(f"a Spark child ended early (exit {child.wait()})")

    results: dict[str, dict[str, dict[str, dict[str, Any]]]] = {m: {} for m in MASTERS}
    try:
        for child in children.values():
            answer(child)
        for name in inputs:
            for step in ("read", "ingest"):
                for _ in range(repeat):
                    for master, child in children.items():
                        assert child.stdin is not None
                        child.stdin.write(f"{step} {name}\n")
                        child.stdin.flush()
                        got = answer(child)
                        best = results[master].setdefault(name, {}).get(step)
                        if best is None or got["seconds"] < best["seconds"]:
                            results[master][name][step] = got
    finally:
        for child in children.values():
            if child.stdin is not None:
                child.stdin.close()
            child.wait()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="workload size factor")
    parser.add_argument("--repeat", type=int, default=2, help="runs per measurement (best kept)")
    parser.add_argument(
        "--inputs", type=Path, help="keep the generated binlogs here, or reuse them"
    )
    parser.add_argument("--spark", help=argparse.SUPPRESS)
    parser.add_argument("--python", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.python:
        print(json.dumps(measure_python(json.loads(args.python))))
        return
    if args.spark:
        job = json.loads(args.spark)
        serve_spark(job["master"], job["inputs"], Path(job["work"]))
        return

    base = Path(tempfile.mkdtemp(prefix="bk-spark-bench-"))
    try:
        inputs = prepare_inputs(base, args.inputs, args.scale)
        report(inputs, base, args.repeat)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def prepare_inputs(base: Path, keep: Path | None, scale: float) -> dict[str, list[str]]:
    """The benchmark inputs: from ``keep`` when it holds them, else generated (and kept there)."""
    if keep is not None and (keep / "archive").is_dir() and (keep / "big").is_dir():
        archive = sorted(str(p) for p in (keep / "archive").iterdir())
        big = sorted(str(p) for p in (keep / "big").iterdir())
        return {"archive": archive, "big file": big}
    print(f"generating binlogs (scale {scale}) ...", file=sys.stderr)
    archive_files = generate_archive(base, scale)
    big_file = generate(base / "decode", scale)[0]
    folder = keep or base / "inputs"
    (folder / "archive").mkdir(parents=True, exist_ok=True)
    (folder / "big").mkdir(parents=True, exist_ok=True)
    for path in archive_files:
        shutil.copy2(path, folder / "archive" / path.name)
    shutil.copy2(big_file, folder / "big" / big_file.name)
    return prepare_inputs(base, folder, scale)


def report(inputs: dict[str, list[str]], base: Path, repeat: int) -> None:
    python = {}
    for name, paths in inputs.items():
        load = os.getloadavg()[0]
        _, _, out = run_child(
            [sys.executable, __file__, "--python", json.dumps(paths)], capture=True
        )
        python[name] = {**json.loads(out), "load": load}
    spark = measure_spark(inputs, base / "work", repeat)

    header = f"{'input':<10}{'files':>6}{'MB':>7}{'rows':>8}  {'mode':<16}{'parts':>6}{'s':>7}"
    header += f"{'rows/s':>9}{'rows/s/core':>12}{'cpu/s':>7}{'rows/cpu-s':>11}{'load':>6}"
    print(header)
    print("-" * len(header))
    ratios = []
    for name, paths in inputs.items():
        mb = sum(os.path.getsize(p) for p in paths) / 1e6
        rows = python[name]["rows"]
        lines = [("python (1 core)", "", python[name]["seconds"], 1, None, python[name]["load"])]
        for master in MASTERS:
            cores = int(master[6:-1])
            for step in ("read", "ingest"):
                got = spark[master][name][step]
                if step == "ingest" and got["rows"] != rows:
                    raise SystemExit(f"{name}: ingest wrote {got['rows']} rows, python read {rows}")
                busy = got["cpu"] / got["seconds"]
                mode = f"{step} {master}"
                lines.append((mode, got["partitions"], got["seconds"], cores, busy, got["load"]))
        for mode, parts, seconds, cores, busy, load in lines:
            rate = rows / seconds
            used = "" if busy is None else f"{busy:.2f}"
            per_cpu = "" if busy is None else f"{rate / busy:.0f}"
            print(
                f"{name:<10}{len(paths):>6}{mb:>7.1f}{rows:>8}  {mode:<16}{parts:>6}{seconds:>7.2f}"
                f"{rate:>9.0f}{rate / cores:>12.0f}{used:>7}{per_cpu:>11}{load:>6.1f}"
            )
        for step in ("read", "ingest"):
            one, two = (spark[m][name][step] for m in MASTERS)
            ratio = one["seconds"] / two["seconds"]
            # Rows per CPU second of local[2] against local[1]: what the extra worker costs.
            efficiency = one["cpu"] / two["cpu"]
            ratios.append(
                f"{name}: {step} local[2]/local[1] = {ratio:.2f}x (target 1.80x); "
                f"CPU per row local[1]/local[2] = {efficiency:.2f}"
            )
    print()
    print("\n".join(ratios))
    print(
        f"machine: {os.cpu_count()} cores. cpu/s: cores the Spark process tree kept busy; "
        f"load: 1-minute load average before the run ({os.getloadavg()[0]:.1f} at the end)"
    )


if __name__ == "__main__":
    main()
