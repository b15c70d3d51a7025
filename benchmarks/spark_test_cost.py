"""A pytest plugin that reports what each Spark test costs: its Spark jobs, wall time, the
driver's Python CPU and the CPU of the session's JVM (with its child processes, the Python
workers, as far as they were reaped), for A/B runs of the test session's settings.

``SPARK_TEST_CONF="key=value;key=value"`` adds settings to the test session (over those of
tests/spark/conftest.py, e.g. ``spark.driver.memory=1g``); ``SPARK_TEST_JOBS=FILE`` appends
each test's jobs to FILE (id, start, seconds, tasks, name, description). On a shared machine
compare the CPU seconds, not the wall times.

    PYTHONPATH=benchmarks SPARK_TEST_CONF="spark.sql.adaptive.enabled=true" \\
      .venv/bin/python -m pytest -p no:xdist -p spark_test_cost -s tests/spark/test_x.py
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TICKS = os.sysconf("SC_CLK_TCK")
_seen = {"jobs": 0}


def _jobs(spark: Any) -> int:
    """How many jobs the session has run."""
    ids = spark.sparkContext.statusTracker().getJobIdsForGroup(None)
    return max(ids) + 1 if ids else 0


def _jvm_cpu(spark: Any) -> float:
    """CPU seconds of the session's JVM and its direct children (theirs reaped included)."""
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    total = 0.0
    for process in [pid, *map(int, children)]:
        try:
            fields = Path(f"/proc/{process}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:15]) / TICKS
    return total


def _write_jobs(spark: Any, nodeid: str, first: int, path: Path) -> None:
    """The session's jobs from ``first`` on, appended to ``path`` under the test's name."""
    store = spark.sparkContext._jsc.sc().statusStore()
    rows = []
    jobs = store.jobsList(None).iterator()
    while jobs.hasNext():
        job = jobs.next()
        if job.jobId() < first:
            continue
        start, end = job.submissionTime(), job.completionTime()
        seconds = -1.0
        if start.isDefined() and end.isDefined():
            seconds = (end.get().getTime() - start.get().getTime()) / 1000
        described = str(job.description().get()) if job.description().isDefined() else ""
        began = start.get().getTime() / 1000 if start.isDefined() else 0.0
        rows.append((job.jobId(), began, seconds, job.numTasks(), job.name()[:70], described[:60]))
    with path.open("a") as out:
        out.write(f"### {nodeid} jobs={len(rows)}\n")
        for row in sorted(rows):
            out.write("{}\t{:.1f}\t{:.2f}\t{}\t{}\t{}\n".format(*row))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    spark = getattr(item, "funcargs", {}).get("spark")
    started, python = time.monotonic(), os.times()
    jvm = _jvm_cpu(spark) if spark is not None else 0.0
    yield
    if spark is None:
        return
    after = os.times()
    jobs = _jobs(spark)
    print(
        f"\nSPARK-COST {item.nodeid} jobs={jobs - _seen['jobs']}"
        f" wall={time.monotonic() - started:.1f}"
        f" python_cpu={(after.user + after.system) - (python.user + python.system):.1f}"
        f" jvm_cpu={_jvm_cpu(spark) - jvm:.1f} jvm_cpu_total={_jvm_cpu(spark):.1f}"
        f" load={os.getloadavg()[0]:.1f}"
    )
    if os.environ.get("SPARK_TEST_JOBS"):
        _write_jobs(spark, item.nodeid, _seen["jobs"], Path(os.environ["SPARK_TEST_JOBS"]))
    _seen["jobs"] = jobs


def pytest_configure(config: pytest.Config) -> None:
    """Adds ``SPARK_TEST_CONF``'s settings to every SparkSession the tests build."""
    extra = os.environ.get("SPARK_TEST_CONF")
    if not extra:
        return
    from pyspark.sql import SparkSession

    create = SparkSession.Builder.getOrCreate
    settings = [pair.split("=", 1) for pair in extra.split(";") if pair]

    def get_or_create(builder: Any) -> Any:
        for key, value in settings:
            builder.config(key, value)
        return create(builder)

    SparkSession.Builder.getOrCreate = get_or_create  # type: ignore[method-assign]
