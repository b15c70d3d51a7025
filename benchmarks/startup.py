"""Start-up cost: how long short ``binlogkit`` commands take, end to end, in fresh processes.

Each command runs ``--runs`` times after one warm-up run that lets Python write
its bytecode caches (the child's environment drops PYTHONDONTWRITEBYTECODE: an
installed package has them). Printed per command: the median wall time and the
median CPU time (user + system of the child, steadier on a loaded machine), and
the interpreter's own start (``python -c pass``) for reference.

The file commands (``events``, ``rows``, ``dump``) read a small binlog: ``--binlog
FILE``, or by default the corpus' ``local-mariadb-10.11/mariadb-defaults/mysql-bin.000002``
(31 KB, MariaDB's default settings; corpus at ``$BINLOGKIT_CORPUS`` or
``../shared/corpus``); without one those lines are skipped, with a note.

    .venv/bin/python benchmarks/startup.py [--runs 21] [--binlog FILE] [--src DIR ...]
        [--search INDEX QUERY]

``--search INDEX QUERY`` adds ``binlogkit search INDEX QUERY`` (a search index built by
``binlogkit spark index``, e.g. ``benchmarks/search_batch.py --work DIR``'s ``DIR/index``)
and the import of the search engine alone.

``--src DIR`` measures the binlogkit package under DIR instead of the installed
one; given several times, the trees are measured in the same round robin (so
alike under the same load) and printed side by side, e.g. before and after a
change: ``git archive main src | tar -x -C /tmp/before``, then ``--src
/tmp/before/src --src src``.
"""

from __future__ import annotations

import argparse
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


def commands(binlog: Path | None, search: list[str] | None = None) -> dict[str, list[str]]:
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
    if search is not None:
        runs["import search engine"] = [sys.executable, "-c", "import binlogkit.search.engine"]
        runs["binlogkit search INDEX Q"] = [*CLI, "search", *search]
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


def measure(
    runs: dict[str, list[str]], trees: list[dict[str, str]], count: int
) -> list[dict[str, tuple[float, float]]]:
    """Per tree (its environment), name → (median wall, median CPU) in milliseconds over
    ``count`` runs, every command of every tree in turn."""
    samples: list[dict[str, list[tuple[float, float]]]] = [{n: [] for n in runs} for _ in trees]
    for env in trees:
        for argv in runs.values():
            run_once(argv, env)  # warm-up: bytecode caches written
    for i in range(count):
        for name, argv in runs.items():
            for env, got in zip(trees, samples, strict=True):
                got[name].append(run_once(argv, env))
        print(f"\rrun {i + 1}/{count}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return [
        {
            name: (
                1000 * statistics.median(wall for wall, _ in times),
                1000 * statistics.median(cpu for _, cpu in times),
            )
            for name, times in got.items()
        }
        for got in samples
    ]


def tree_env(src: Path | None) -> dict[str, str]:
    """The children's environment: bytecode caches allowed, binlogkit from ``src`` if given."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if src is not None:
        env["PYTHONPATH"] = str(src.resolve())
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21, help="runs of each command (median)")
    parser.add_argument("--binlog", type=Path, help="the small binlog the file commands read")
    parser.add_argument(
        "--src", type=Path, action="append", help="measure the binlogkit package in this folder"
    )
    parser.add_argument("--search", nargs=2, metavar=("INDEX", "QUERY"), help="a search to time")
    args = parser.parse_args()

    sources: list[Path | None] = list(args.src or [None])
    trees = [tree_env(src) for src in sources]
    for number, env in enumerate(trees, 1):
        where = subprocess.run(
            [sys.executable, "-c", "import binlogkit; print(binlogkit.__file__)"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        print(f"tree {number}: binlogkit from {where}")
    binlog = find_binlog(args.binlog)
    if binlog is None:
        print(f"note: no binlog (--binlog, or the corpus' {CORPUS_FILE}): file commands skipped")
    else:
        print(f"binlog: {binlog} ({binlog.stat().st_size} bytes)")
    print(f"{args.runs} runs per command; medians in ms, wall / CPU")

    runs = commands(binlog, args.search)
    results = measure(runs, trees, args.runs)
    print(
        f"{'command':<26}"
        + "".join(f"{f'tree {n} wall':>14}{'cpu':>7}" for n in range(1, len(trees) + 1))
    )
    for name in runs:
        cells = "".join(f"{r[name][0]:14.1f}{r[name][1]:7.1f}" for r in results)
        print(f"{name:<26}{cells}")


if __name__ == "__main__":
    main()
