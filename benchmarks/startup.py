"""Start-up cost: how long short ``binlogkit`` commands take, end to end, in fresh processes.

Each command runs ``--runs`` times (round robin, so a busy machine weighs on all
alike) after one warm-up run that lets Python write its bytecode caches (the
child's environment drops PYTHONDONTWRITEBYTECODE: an installed package has
them). Printed per command: the median wall time and the median CPU time (user
+ system of the child, steadier on a loaded machine), and the interpreter's own
start (``python -c pass``) for reference.

The file commands (``events``, ``rows``, ``dump``) read a small binlog: ``--binlog
FILE``, or by default the corpus' ``local-mariadb-10.11/mariadb-defaults/mysql-bin.000002``
(31 KB, MariaDB's default settings; corpus at ``$BINLOGKIT_CORPUS`` or
``../shared/corpus``); without one those lines are skipped, with a note.

    .venv/bin/python benchmarks/startup.py [--runs 21] [--binlog FILE] [--src DIR]
        [--save FILE.json] [--compare FILE.json]

``--src DIR`` measures the binlogkit package under DIR (e.g. ``git archive main
src | tar -x -C /tmp/before``, then ``--src /tmp/before/src``); ``--save`` keeps
the medians and ``--compare`` prints them next to this run's, for before/after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS_FILE = "local-mariadb-10.11/mariadb-defaults/mysql-bin.000002"
CLI = [sys.executable, "-c", "from binlogkit.cli.main import main; main()"]


def find_binlog(given: Path | None) -> Path | None:
    """The binlog the file commands read: the one given, else the corpus file if present."""
    if given is not None:
        return given
    corpus = Path(os.environ.get("BINLOGKIT_CORPUS") or ROOT.parent / "shared" / "corpus")
    path = corpus / CORPUS_FILE
    return path if path.is_file() else None


def commands(binlog: Path | None) -> dict[str, list[str]]:
    """Name → argv of each measured command."""
    runs = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "import binlogkit": [sys.executable, "-c", "import binlogkit"],
        "binlogkit --version": [*CLI, "--version"],
        "binlogkit --help": [*CLI, "--help"],
        "binlogkit events --help": [*CLI, "events", "--help"],
    }
    if binlog is not None:
        for name in ("events", "rows", "dump"):
            runs[f"binlogkit {name} FILE"] = [*CLI, name, str(binlog)]
    return runs


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Run ``argv`` with its output discarded: its wall and CPU seconds."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert child.stderr is not None
    err = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.stderr.close()
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{' '.join(argv)} failed: {err.decode(errors='replace').strip()}")
    return wall, usage.ru_utime + usage.ru_stime


def measure(runs: dict[str, list[str]], count: int, env: dict[str, str]) -> dict[str, list[float]]:
    """Name → [median wall, median CPU] in milliseconds over ``count`` round-robin runs."""
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
    for argv in runs.values():
        run_once(argv, env)  # warm-up: bytecode caches written
    for i in range(count):
        for name, argv in runs.items():
            samples[name].append(run_once(argv, env))
        print(f"\rrun {i + 1}/{count}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return {
        name: [1000 * statistics.median(s[k] for s in got) for k in (0, 1)]
        for name, got in samples.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21, help="runs of each command (median)")
    parser.add_argument("--binlog", type=Path, help="the small binlog the file commands read")
    parser.add_argument("--src", type=Path, help="measure the binlogkit package in this folder")
    parser.add_argument("--save", type=Path, help="write the medians to this JSON file")
    parser.add_argument("--compare", type=Path, help="print a saved run's medians alongside")
    args = parser.parse_args()

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if args.src is not None:
        env["PYTHONPATH"] = str(args.src.resolve())
    where = subprocess.run(
        [sys.executable, "-c", "import binlogkit; print(binlogkit.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    binlog = find_binlog(args.binlog)
    print(f"binlogkit from {where}; {args.runs} runs per command, medians")
    if binlog is None:
        print(f"note: no binlog (--binlog, or the corpus' {CORPUS_FILE}): file commands skipped")
    else:
        print(f"binlog: {binlog} ({binlog.stat().st_size} bytes)")

    result = measure(commands(binlog), args.runs, env)
    before: dict[str, list[float]] = json.loads(args.compare.read_text()) if args.compare else {}
    head = f"{'command':<28}{'wall ms':>9}{'cpu ms':>9}"
    if before:
        head += f"{'before wall':>13}{'before cpu':>12}{'wall x':>8}"
    print(head)
    for name, (wall, cpu) in result.items():
        line = f"{name:<28}{wall:9.1f}{cpu:9.1f}"
        if name in before:
            old_wall, old_cpu = before[name]
            line += f"{old_wall:13.1f}{old_cpu:12.1f}{old_wall / wall:8.2f}"
        print(line)
    if args.save:
        args.save.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
