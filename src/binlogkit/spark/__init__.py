"""PySpark integration: the ``binlog`` data source (optional extra ``binlogkit[spark]``).

>>> from binlogkit.spark import register
>>> register(spark)
>>> df = spark.read.format("binlog").load("/var/lib/mysql/binlog.*")
"""

from __future__ import annotations

from typing import Any

__all__ = ["PUSHDOWN_CONF", "register"]

PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


def register(spark: Any, *, pushdown: bool = True) -> None:
    """Register format ``binlog`` with a SparkSession.

    With ``pushdown`` (the default) filters on file, db, table, op and pos go to
    the reader; that needs ``spark.sql.python.filterPushdown.enabled``, which
    this turns on for the session. ``pushdown=False`` leaves the setting alone
    and registers a reader that lets Spark apply every filter.
    """
    from binlogkit.spark.source import BinlogDataSource, PlainBinlogDataSource

    if pushdown:
        spark.conf.set(PUSHDOWN_CONF, "true")
        spark.dataSource.register(BinlogDataSource)
    else:
        spark.dataSource.register(PlainBinlogDataSource)
