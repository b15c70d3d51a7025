"""Fixtures for Spark tests: one local SparkSession per test process (xdist worker); corpus files.

Tests that use ``spark`` are marked ``spark``. Without pyspark or a Java runtime
they skip, except in CI (the ``CI`` environment variable set), where they fail:
CI must install both, and a silent skip would hide that it did not.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from corpus_walk import walk
from missing_tool import missing_tool


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)  # and grouped by module (../conftest.py)


def _missing() -> str | None:
    """Why Spark cannot start here, or None when it can."""
    if importlib.util.find_spec("pyspark") is None or importlib.util.find_spec("pyarrow") is None:
        return "pyspark or pyarrow not installed (pip install -e '.[spark]')"
    java_home = os.environ.get("JAVA_HOME")
    if not (java_home and (Path(java_home) / "bin" / "java").exists()) and not shutil.which("java"):
        return "no Java runtime (java on PATH or JAVA_HOME); Spark needs Java 17 or newer"
    return None


@pytest.fixture(scope="session")
def sample_corpus_files(clean_corpus_files: tuple[Path, ...]) -> tuple[Path, ...]:
    """A few clean files that together have every event type and server version of them all.

    Each Spark partition costs a task; this keeps the Spark tests to a couple dozen.
    """
    features = {path: _features(path) for path in clean_corpus_files}
    wanted = set().union(*features.values())
    chosen: list[Path] = []
    while wanted:
        best = max(clean_corpus_files, key=lambda p: len(features[p] & wanted))
        chosen.append(best)
        wanted -= features[best]
    return tuple(sorted(chosen))


def _features(path: Path) -> set[object]:
    """The event type codes of a file and its server version (from the format description)."""
    data = path.read_bytes()
    version = data[25:75].split(b"\0")[0]
    return {e.type_code for e in walk(data).events} | {version}


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A local SparkSession (``local[2]``, small and quiet) with Delta Lake (its jars fetched
    into ``.cache/jars``) and format ``binlog`` registered."""
    reason = _missing()
    if reason is not None:
        missing_tool(reason)
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    from pyspark.sql import SparkSession

    from binlogkit.spark import register
    from binlogkit.spark.delta import with_delta
    from binlogkit.spark.jars import fetch_jars

    # C1 only: with C2 as well, the viewfs sync test took 55 JVM CPU s instead of 27 (its
    # compilations do not pay off in a test run). 2 GB of heap: a worker's JVM runs every
    # Spark module of the suite, and with 1 GB its old generation filled up (full GCs).
    # C1 alone reserves 48 MB for compiled code: one module (test_lake_apply_live) filled it
    # (jcmd Compiler.codecache: full, compiler stopped), and then it flushes and recompiles.
    java_opts = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=192m"
    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    jars = fetch_jars(Path(__file__).parents[2] / ".cache" / "jars")
    session = (
        with_delta(SparkSession.builder, jars)
        .master("local[2]")
        .appName("binlogkit-tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")  # no progress bars in the output
        .config("spark.driver.memory", "2g")
        .config("spark.driver.extraJavaOptions", java_opts)
        .config("spark.executor.extraJavaOptions", java_opts)
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(warehouse))
        .config("spark.databricks.delta.snapshotPartitions", "1")
        # As lake_session's local sessions: no adaptive execution, which runs each query
        # stage as a job of its own (docs/lakehouse.md; the viewfs sync test: 37 jobs, not 70).
        .config("spark.sql.adaptive.enabled", "false")
        # The parallelism of VACUUM's file listing (Spark's default 10,000): tiny tables here.
        .config("spark.sql.sources.parallelPartitionDiscovery.parallelism", "2")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    try:
        yield session
    finally:
        session.stop()
