"""``binlogkit spark ingest`` on the binlog folder of a running MariaDB, while it writes.

The newest file is the server's active binlog: each run reads its complete
transactions, the next run goes on from there, and in the end the lake holds
the plain reader's row changes of every file exactly once.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from binlogkit.sandbox import MariaDBSandbox

pytest.importorskip("pyspark")

from test_ingest import lake_changes, plain_changes

from binlogkit.spark.ingest import ingest, read_change_log


def test_ingest_follows_the_active_binlog(
    spark: Any, mariadb_factory: Callable[..., MariaDBSandbox], tmp_path: Path
):
    server = mariadb_factory("spark-ingest")
    server.execute("CREATE DATABASE shop")
    server.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))", database="shop")
    lake = tmp_path / "lake"

    def insert(first: int, count: int) -> None:
        values = ", ".join(f"({i}, 'v{i}')" for i in range(first, first + count))
        server.execute(f"INSERT INTO t VALUES {values}", database="shop")

    def ops() -> Counter[str]:
        table = read_change_log(spark, lake).where("db = 'shop' AND table = 't'")
        return Counter(row.op for row in table.select("op").collect())

    insert(1, 20)
    ingest(spark, str(server.binlog_dir), lake)
    assert ops() == Counter(c=20)

    server.execute("UPDATE t SET v = 'x' WHERE id <= 5", database="shop")
    server.execute("DELETE FROM t WHERE id > 15", database="shop")
    insert(100, 10)
    ingest(spark, str(server.binlog_dir), lake)
    assert ops() == Counter(c=30, u=5, d=5)

    server.flush_binlogs()
    insert(200, 5)
    ingest(spark, str(server.binlog_dir), lake)
    assert ops() == Counter(c=35, u=5, d=5)
    assert lake_changes(spark, lake) == plain_changes(server.binlog_files())

    ledger = lake / "_binlogkit" / "ledger"
    reads = Counter(
        Path(f["path"]).name
        for record in ledger.glob("*.json")
        for f in json.loads(record.read_text())["files"]
    )
    assert max(reads.values()) >= 2  # the first active file was read on twice
