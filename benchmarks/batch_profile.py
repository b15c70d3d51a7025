"""What one micro-batch of ``binlogkit.spark.sync`` spends its time on (``--profile`` of
``lakehouse_stream.py``).

Three views of the same batch, on one clock (the machine's):

- the query's phases, from its progress report (``durationMs``: ``latestOffset`` and
  ``getBatch`` run the source in a Python worker, ``addBatch`` is the ``foreachBatch``
  function, ``walCommit``/``commitOffsets`` the checkpoint);
- the driver's calls into the apply (:data:`CALLS`, timed by wrapping them where they are
  called from), nested;
- the Spark jobs (from the session's UI REST API: ``/api/v1/applications/ID/jobs``) and the
  Delta commits (each table's ``_delta_log``) inside the batch.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import re
import threading
import time
import urllib.request
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

CALLS = {
    "binlogkit.spark.lakehouse": ("_apply", "apply_batch"),
    "binlogkit.spark.lake.batch": (
        "Timeline",
        "_summary",
        "_segments",
        "_apply_segment",
        "_mirror_steps",
        "_held",
        "_follow",
        "_drop",
        "typed_images",
        "create_log",
        "append_created",
        "append_log",
        "merge_mirror",
        "merge_history",
    ),
    "binlogkit.spark.lake.tables": ("exists", "properties", "set_properties", "create_table"),
}
"""Module → the names it calls that are timed (as that module sees them)."""


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    depth: int
    began: float
    ended: float


class Profile:
    """Timings of the apply's calls (:meth:`install`), reported per micro-batch."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self._depth = threading.local()

    def install(self) -> None:
        for module_name, names in CALLS.items():
            module = importlib.import_module(module_name)
            for name in names:
                if hasattr(module, name):  # (an older binlogkit, on PYTHONPATH, may lack one)
                    setattr(module, name, self._timed(name, getattr(module, name)))

    def _timed(self, name: str, call: Any) -> Any:
        @functools.wraps(call)
        def timed(*args: Any, **kwargs: Any) -> Any:
            depth = getattr(self._depth, "n", 0)
            self._depth.n = depth + 1
            began = time.time()
            try:
                return call(*args, **kwargs)
            finally:
                self._depth.n = depth
                self.calls.append(Call(name, depth, began, time.time()))

        return timed

    def report(self, spark: Any, lake: Path, progress: dict[str, Any]) -> None:
        """Print the three views of the batch ``progress`` (a query progress report)."""
        began = instant(progress["timestamp"])
        phases = progress["durationMs"]
        ended = began + phases["triggerExecution"] / 1000
        print(
            f"\nprofile of batch {progress['batchId']} ({progress['numInputRows']} rows), "
            f"{phases['triggerExecution'] / 1000:.2f} s in all; phases (ms):"
        )
        print("  " + ", ".join(f"{k} {v}" for k, v in phases.items() if k != "triggerExecution"))
        print("driver calls (s from the trigger: duration):")
        for call in sorted(self.calls, key=lambda c: c.began):
            if began <= call.began <= ended:
                print(
                    f"  {call.began - began:6.2f}: {call.ended - call.began:5.2f}"
                    f"  {'  ' * call.depth}{call.name}"
                )
        found = [j for j in jobs(spark) if began <= j[0] <= ended]
        print(f"Spark jobs: {len(found)}, {sum(j[1] - j[0] for j in found):.2f} s in all")
        for start, end, tasks, what in found:
            print(f"  {start - began:6.2f}: {end - start:5.2f}  {tasks:3d} tasks  {what[:110]}")
        commits = sorted(c for c in _commits(lake) if began <= c[0] <= ended)
        print(f"Delta commits: {len(commits)}")
        for stamp, table, operation in commits:
            print(f"  {stamp - began:6.2f}  {table}: {operation}")


def instant(text: str) -> float:
    """Seconds since the epoch of a Spark time (``2026-11-27T04:54:33.123Z`` or ``...GMT``)."""
    text = text.replace("GMT", "Z").replace("Z", "+00:00")
    return datetime.fromisoformat(text).timestamp()


def jobs(spark: Any) -> list[tuple[float, float, int, str]]:
    """(start, end, tasks, description) of the session's finished jobs."""
    context = spark.sparkContext
    url = f"{context.uiWebUrl}/api/v1/applications/{context.applicationId}/jobs"
    with urllib.request.urlopen(url) as answer:
        jobs = json.load(answer)
    return [
        (
            instant(j["submissionTime"]),
            instant(j["completionTime"]),
            j["numTasks"],
            _what(j),
        )
        for j in jobs
        if "completionTime" in j
    ]


def tree_cpu(skip: tuple[str, ...] = ("mariadbd", "mysqld")) -> float:
    """CPU seconds (user + system, with reaped children's) of this process and its
    descendants (the JVM, Spark's Python workers), but for processes named in ``skip`` (the
    benchmark's own database server): what a batch costs whatever else shares the machine."""
    tick = os.sysconf("SC_CLK_TCK")
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        name, _, rest = text[text.index("(") + 1 :].rpartition(")")
        fields = rest.split()
        if name.startswith(skip):
            continue
        parent[int(entry.name)] = int(fields[1])
        cpu[int(entry.name)] = sum(int(f) for f in fields[11:15]) / tick
    mine = {os.getpid()}
    grew = True
    while grew:
        grew = False
        for pid, ppid in parent.items():
            if ppid in mine and pid not in mine:
                mine.add(pid)
                grew = True
    return sum(cpu.get(pid, 0.0) for pid in mine)


def _what(job: dict[str, Any]) -> str:
    """A job's description without the streaming query's prefix (``id = ... batch = N``),
    and where it was started."""
    text = " ".join(job.get("description", "").split())
    text = re.sub(r"^(Delta: )?\s*id = \S+ runId = \S+ batch = \d+(: | - )?", r"\1", text)
    return f"{text} [{job['name']}]" if text else job["name"]


def _commits(lake: Path) -> list[tuple[float, str, str]]:
    """(time, table, operation) of every Delta commit under ``lake``."""
    out = []
    for entry in lake.glob("**/_delta_log/*.json"):
        for line in entry.read_text().splitlines():
            info = json.loads(line).get("commitInfo") if line else None
            if info is not None:
                table = f"{entry.parent.parent.relative_to(lake)} v{int(entry.stem)}"
                out.append((info["timestamp"] / 1000, table, info["operation"]))
    return out
