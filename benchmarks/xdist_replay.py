"""Replays the test suite's xdist scheduling on measured test durations: how long ``-n N``
would take, without running the suite again.

The durations come from a run's ``--durations=0`` report (setup, call and teardown of
each test added up; a test it does not list counts 0 s); ``--scale FILE:FACTOR`` rescales
one module (a module measured before and after a change on its own). The order and the
work units are the suite's own: the tests are collected here with tests/conftest.py's
grouping and ordering, and handed out as pytest-xdist's ``--dist loadgroup`` does (one
unit to each worker, then one more to each; after each finished test, one more unit to
its worker while it has at most two tests left; a worker runs its tests in the order
received).

    .venv/bin/python -m pytest -n 2 --dist loadgroup --durations=0 > run.txt
    .venv/bin/python benchmarks/xdist_replay.py run.txt [-n 2] [--scale tests/spark/x.py:0.7]
        [-- SELECTION]  # the run's pytest arguments (e.g. tests/unit), when it had any

It leaves out each worker's start and the collection (tens of seconds).
"""

from __future__ import annotations

import argparse
import heapq
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

DURATION = re.compile(r"^\s*([0-9.]+)s (setup|call|teardown)\s+(\S+)")


class _Collected:
    """A pytest plugin keeping the collected tests in order, with their xdist work unit."""

    def __init__(self) -> None:
        self.units: dict[str, list[str]] = {}

    @pytest.hookimpl(trylast=True)  # after tests/conftest.py grouped and sorted them
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            group = item.get_closest_marker("xdist_group")
            unit = item.nodeid if group is None else str(group.args[0])
            self.units.setdefault(unit, []).append(item.nodeid)


def durations(report: Path) -> dict[str, float]:
    """Each test's setup + call + teardown seconds from a ``--durations=0`` report."""
    found: dict[str, float] = {}
    for line in report.read_text(errors="replace").splitlines():
        match = DURATION.match(line)
        if match:
            found[match[3]] = found.get(match[3], 0.0) + float(match[1])
    return found


def replay(units: Sequence[Sequence[float]], workers: int) -> tuple[float, list[float]]:
    """The suite's wall time and each worker's busy time for ``units`` (each a list of its
    tests' durations, in queue order) on ``workers`` workers."""
    queue = list(units)
    assigned: list[list[float]] = [[] for _ in range(workers)]  # tests not yet finished
    clock = [0.0] * workers

    def give(worker: int) -> None:
        if queue:
            assigned[worker].extend(queue.pop(0))

    for worker in range(workers):
        give(worker)
    for worker in range(workers):
        if len(assigned[worker]) <= 2:
            give(worker)
    running = [(clock[w] + assigned[w][0], w) for w in range(workers) if assigned[w]]
    heapq.heapify(running)
    while running:
        now, worker = heapq.heappop(running)
        clock[worker] = now
        assigned[worker].pop(0)
        if len(assigned[worker]) <= 2:
            give(worker)
        if assigned[worker]:
            heapq.heappush(running, (now + assigned[worker][0], worker))
    return max(clock), clock


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path, help="pytest output with --durations=0")
    parser.add_argument("-n", type=int, default=2, help="workers (default 2)")
    parser.add_argument("--scale", action="append", default=[], help="FILE:FACTOR")
    parser.add_argument("pytest_args", nargs="*", help="selection, as given to the run")
    args = parser.parse_args(argv)
    seconds = durations(args.report)
    scales = {name: float(factor) for name, factor in (s.rsplit(":", 1) for s in args.scale)}
    collected = _Collected()
    code = pytest.main(["--collect-only", "-q", "-p", "no:xdist", *args.pytest_args], [collected])
    if code not in (0, 5):
        sys.exit(f"xdist_replay: collecting the tests failed (pytest exit code {code})")
    units = []
    for tests in collected.units.values():
        units.append([seconds.get(t, 0.0) * scales.get(t.split("::")[0], 1.0) for t in tests])
    wall, busy = replay(units, args.n)
    total = sum(map(sum, units))
    print(f"{len(units)} work units, {total:.0f} s of tests")
    print(f"replayed on {args.n} workers: {wall:.0f} s ({wall / 60:.1f} min)")
    for worker, seconds_busy in enumerate(busy):
        print(f"  worker {worker}: ends at {seconds_busy:.0f} s")
    longest = sorted(collected.units.items(), key=lambda u: -sum(seconds.get(t, 0) for t in u[1]))
    for unit, tests in longest[:12]:
        print(f"  {sum(seconds.get(t, 0.0) for t in tests):7.1f} s  {unit}")


if __name__ == "__main__":
    main()
