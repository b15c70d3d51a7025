"""Live: the transactions of a real MariaDB's binlog (binlogkit.pipeline.transactions).

A fresh server runs DDL, autocommitted and multi-statement transactions, a
statement-logged transaction rolled back after changing a MyISAM table, and
XA transactions prepared then committed, prepared then rolled back, and
committed in one phase. Each must come out as one transaction with the
server's GTID, the outcome and XA phase it had, the DDL text, its row
changes, and positions that follow one another through the file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import binlogkit
from binlogkit.binlog.events.transaction import Xid
from binlogkit.pipeline.transactions import Outcome, Transaction, XaPhase, grouped
from binlogkit.sandbox import MariaDBSandbox

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

WORKLOAD = """
CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB;
CREATE TABLE m (id INT) ENGINE=MyISAM;
INSERT INTO t VALUES (1, 'a'), (2, 'b');
BEGIN; INSERT INTO t VALUES (3, 'c'); UPDATE t SET v = 'z' WHERE id = 1; COMMIT;
SET SESSION binlog_format = STATEMENT;
BEGIN; INSERT INTO t VALUES (9, 'gone'); INSERT INTO m VALUES (1); ROLLBACK;
SET SESSION binlog_format = ROW;
XA START 'x1'; INSERT INTO t VALUES (4, 'd'); XA END 'x1'; XA PREPARE 'x1'; XA COMMIT 'x1';
XA START 'x2'; INSERT INTO t VALUES (5, 'e'); XA END 'x2'; XA PREPARE 'x2'; XA ROLLBACK 'x2';
XA START 'x3'; INSERT INTO t VALUES (6, 'f'); XA END 'x3'; XA COMMIT 'x3' ONE PHASE;
DROP TABLE m;
"""

C, R, P = Outcome.COMMITTED, Outcome.ROLLED_BACK, Outcome.PREPARED
X1, X2 = Xid(1, b"x1"), Xid(1, b"x2")
EXPECTED = [
    # (outcome, XA phase, XID, DDL starts with, row changes)
    (C, None, None, "CREATE DATABASE tx", 0),
    (C, None, None, "CREATE TABLE t", 0),
    (C, None, None, "CREATE TABLE m", 0),
    (C, None, None, None, 2),
    (C, None, None, None, 2),
    (R, None, None, None, 0),  # statement-based: the statements, then ROLLBACK
    (P, XaPhase.PREPARE, X1, None, 1),
    (C, XaPhase.COMMIT, X1, None, 0),
    (P, XaPhase.PREPARE, X2, None, 1),
    (R, XaPhase.ROLLBACK, X2, None, 0),
    (C, None, None, None, 1),  # MariaDB logs XA ... ONE PHASE as a plain transaction
    (C, None, None, "DROP TABLE `m`", 0),
]


@pytest.fixture(scope="module")
def binlogs(mariadb_factory: Callable[..., MariaDBSandbox]) -> list[Path]:
    server = mariadb_factory("transactions")
    server.execute("CREATE DATABASE tx")
    server.execute(WORKLOAD, database="tx")
    files = server.flush_binlogs()[:-1]
    server.stop()
    return files


def test_transactions_of_a_live_binlog(binlogs: list[Path]) -> None:
    seen = []
    position = None  # where the previous event or transaction ended
    with binlogkit.open([str(p) for p in binlogs]) as events:
        for item in grouped(events):
            if not isinstance(item, Transaction):
                assert position is None or item.header.offset == position[1]
                position = (item.header.file, item.header.end)
                continue
            changes = list(item.changes())
            assert (item.start.file, item.start.offset) == position
            position = (item.end.file, item.end.offset)
            seen.append((item.outcome, item.xa, item.xid, item.ddl, len(changes)))
            assert item.gtid is not None and str(item.gtid) == f"0-1-{len(seen)}"
            assert item.commit_time is not None
            if len(seen) == 5:
                update = changes[1]
                assert (update.op, update.before, update.after) == (
                    "u",
                    {"id": 1, "v": "a"},
                    {"id": 1, "v": "z"},
                )
                assert update.source.gtid == "0-1-5"
    assert len(seen) == len(EXPECTED)
    for (*got, ddl, count), (*want, ddl_start, want_count) in zip(seen, EXPECTED, strict=True):
        assert (got, count) == (want, want_count)
        assert ddl == ddl_start or (ddl or "").startswith(ddl_start or "\0")
