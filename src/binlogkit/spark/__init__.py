"""PySpark integration: the ``binlog`` data source (optional extra ``binlogkit[spark]``).

>>> from binlogkit.spark import register
>>> register(spark)
>>> df = spark.read.format("binlog").load("/var/lib/mysql/binlog.*")

A database into Delta mirrors, kept current from its binlog (imported on first use)::

>>> from binlogkit.spark import index, maintain, status, sync
>>> sync("mariadb://user:pw@host", "/data/lake", once=True)
>>> maintain("/data/lake")  # small files compacted, old ones vacuumed
>>> index("/data/lake", "/data/index", columns=["shop.items.name"], once=True)  # search
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "PUSHDOWN_CONF",
    "apply",
    "index",
    "maintain",
    "register",
    "session_parallelism",
    "status",
    "sync",
]

_LAZY = {
    "sync": "binlogkit.spark.lakehouse",
    "apply": "binlogkit.spark.lakehouse",
    "status": "binlogkit.spark.lake_status",
    "maintain": "binlogkit.spark.lake_maintain",
    "index": "binlogkit.spark.search.build",
}
"""The pipeline's API, imported on first use (it needs pyspark and delta-spark)."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


def register(spark: Any, *, pushdown: bool = True) -> None:
    """Register format ``binlog`` with a SparkSession.

    With ``pushdown`` (the default) filters on file, db, table, op and pos go to
    the reader; that needs ``spark.sql.python.filterPushdown.enabled``, which
    this turns on for the session. ``pushdown=False`` leaves the setting alone
    and registers a reader that lets Spark apply every filter. The session's
    default parallelism goes with the format: the default ``splitSize`` cuts
    the input into one split per core (at most 64 MiB each).
    """
    from binlogkit.spark.source import BinlogDataSource, PlainBinlogDataSource

    base = BinlogDataSource if pushdown else PlainBinlogDataSource
    if pushdown:
        spark.conf.set(PUSHDOWN_CONF, "true")
    # A subclass made here is pickled by value, so the planner sees the parallelism.
    source = type(base.__name__, (base,), {"parallelism": session_parallelism(spark)})
    spark.dataSource.register(source)


def session_parallelism(spark: Any) -> int | None:
    """The session's default parallelism (cores of ``local[N]``), None when unknown."""
    try:
        return int(spark.sparkContext.defaultParallelism)
    except Exception:  # Spark Connect has no SparkContext
        value = spark.conf.get("spark.default.parallelism", None)
        return int(value) if value else None
