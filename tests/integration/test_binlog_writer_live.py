"""Transactions written by binlogkit from Python values, applied by a real MariaDB.

A binlog built with :meth:`BinlogWriter.transaction` (table map from the
CREATE TABLE text, rows events from row values; the first transaction larger than
its binlog cache's memory, so it spills to disk) is piped through
``mariadb-binlog FILE | mariadb`` into a server that holds the table: the table
must then hold exactly the rows the transactions leave.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from binlogkit.binlog.rows.plan import RowChange
from binlogkit.gtid import MariaGtid
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.schema.create import table_from_create
from binlogkit.writer import BinlogWriter

CREATE_TABLE = (
    "CREATE TABLE t (id INT NOT NULL PRIMARY KEY, name VARCHAR(20) CHARACTER SET utf8mb4,"
    " amount DECIMAL(10,2), at DATETIME(6), big BIGINT UNSIGNED) ENGINE=InnoDB"
)


def _row(i: int) -> dict[str, object]:
    return {
        "id": i,
        "name": f"név {i}",
        "amount": Decimal(f"{i}.{i % 100:02d}"),
        "at": datetime(2024, 1, 2, 3, 4, 5, i),
        "big": 2**64 - 1 - i,
    }


def _text(value: object) -> str | None:
    """``value`` as the client prints it."""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")
    return None if value is None else str(value)


def test_written_transactions_apply_on_mariadb(
    mariadb_factory: Callable[..., MariaDBSandbox], tmp_path: Path
) -> None:
    server = mariadb_factory("writer")
    server.execute(f"CREATE DATABASE w; USE w; {CREATE_TABLE}")
    rows = [_row(i) for i in range(250)]
    with BinlogWriter.create(tmp_path, "w-bin") as writer:
        table = writer.table_map(table_from_create(CREATE_TABLE, "w"), 70)
        with writer.transaction(MariaGtid(9, 1, 1), xid=11, memory_size=1024) as tx:
            tx.rows(table, "insert", [RowChange(None, row) for row in rows])
            assert tx.cache.disk_writes > 0 and tx.cache.tmp_file_name is not None
        with writer.transaction(MariaGtid(9, 1, 2), xid=12) as tx:
            changed = [{**row, "name": None, "at": None} for row in rows[:3]]
            tx.rows(table, "update", [RowChange(a, b) for a, b in zip(rows, changed, strict=False)])
            tx.rows(table, "delete", [RowChange(row, None) for row in rows[5:7]])
        writer.rotate()
        with writer.transaction(MariaGtid(9, 1, 3), xid=13) as tx:
            tx.rows(table, "insert", [RowChange(None, _row(1000))])
    files = [str(tmp_path / "w-bin.000001"), str(tmp_path / "w-bin.000002")]
    tool = subprocess.run(["mariadb-binlog", *files], capture_output=True, check=False)
    assert (tool.returncode, tool.stderr) == (0, b"")
    applied = subprocess.run(
        server.client_command(), input=tool.stdout, capture_output=True, check=False
    )
    assert applied.returncode == 0, applied.stderr.decode(errors="replace")
    want = changed + rows[3:5] + rows[7:] + [_row(1000)]
    got = server.query("SELECT id, name, amount, at, big FROM w.t ORDER BY id")
    assert got == [tuple(_text(v) for v in row.values()) for row in want]
