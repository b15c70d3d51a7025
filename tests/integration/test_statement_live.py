"""Live: statement-based binlogs from a real MariaDB, against what ``mariadb-binlog`` prints.

A fresh server with binlog_format=STATEMENT runs statements that need every
kind of statement context: user variables of each type (latin1 and utf8mb4
strings, binary, DECIMAL, REAL, signed and unsigned INT, NULL), INSERT_ID,
LAST_INSERT_ID, RAND, LOAD DATA (BEGIN_LOAD_QUERY + EXECUTE_LOAD_QUERY), and
session settings that become QUERY status variables (time zone, locale,
auto-increment, collation_database, multi-table UPDATE, DEFINER, XA). Then
the same statements again with log_bin_compress on (QUERY_COMPRESSED).

Every event must re-encode to its bytes, and every value ``mariadb-binlog -vv``
prints must equal the decoded one (see :class:`mysqlbinlog_dump.Checker`).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pytest
from mysqlbinlog_dump import Checker, decode_all, parse_dump

from binlogkit import BinlogDecoder
from binlogkit.binlog.decoder import encode_event
from binlogkit.binlog.events.load import BeginLoadQueryEvent, ExecuteLoadQueryEvent
from binlogkit.binlog.events.query import QueryCompressedEvent, QueryEvent
from binlogkit.binlog.events.statement_context import RandEvent, UserVarEvent
from binlogkit.binlog.framing import Signal
from binlogkit.sandbox import MariaDBSandbox

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

WORKLOAD = """
CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, s VARBINARY(100), d DECIMAL(40,6),
                f DOUBLE, u BIGINT UNSIGNED, r DOUBLE) ENGINE=InnoDB;
SET @s := _latin1 X'636166E9';
SET @s8 := _utf8mb4 X'C3BCE282AC';
SET @b := _binary X'780079';
SET @d := -12345.678900;
SET @dbig := 123456789012345678.123456;
SET @f := 2.5e-3;
SET @i := -42;
SET @u := CAST(18446744073709551615 AS UNSIGNED);
SET @n := NULL;
INSERT INTO t (s, d, f, u) VALUES (@s, @d, @f, @u);
INSERT INTO t (s, d, f, u) VALUES (@s8, @dbig, @i, @u);
INSERT INTO t (s) VALUES (@b), (@n);
INSERT INTO t (r) VALUES (RAND());
INSERT INTO t (id, s) VALUES (LAST_INSERT_ID() + 100, 'last');
SET time_zone = '+05:30', lc_time_names = 'de_DE';
SET auto_increment_increment = 5, auto_increment_offset = 3;
INSERT INTO t (s) VALUES (CONCAT('tz ', NOW(), DATE_FORMAT(NOW(), '%W')));
SET collation_database = latin1_german1_ci;
INSERT INTO t (s) VALUES ('coll');
SET time_zone = 'SYSTEM', lc_time_names = 'en_US';
SET auto_increment_increment = 1, auto_increment_offset = 1;
CREATE TABLE u (a INT) ENGINE=InnoDB;
CREATE TABLE v (a INT) ENGINE=InnoDB;
INSERT INTO u VALUES (1), (2);
INSERT INTO v VALUES (1), (2);
UPDATE u, v SET u.a = u.a + 10, v.a = v.a + 20 WHERE u.a = v.a;
CREATE TABLE l (a INT, b VARCHAR(10)) ENGINE=InnoDB;
LOAD DATA INFILE '{data}' INTO TABLE l FIELDS TERMINATED BY '\\t';
LOAD DATA INFILE '{data}' REPLACE INTO TABLE l (a, @x) SET b = UPPER(@x);
CREATE DEFINER = CURRENT_USER PROCEDURE p() SELECT 1;
SET sql_mode = 'ANSI,NO_ZERO_DATE';
INSERT INTO t (s) VALUES ('ansi');
XA START 'x1';
INSERT INTO t (s) VALUES ('xa');
XA END 'x1';
XA PREPARE 'x1';
XA COMMIT 'x1';
"""


@pytest.fixture(scope="module")
def statement_binlogs(
    mariadb_factory: Callable[..., MariaDBSandbox], tmp_path_factory: pytest.TempPathFactory
) -> list[Path]:
    data = tmp_path_factory.mktemp("load") / "data.txt"
    data.write_text("1\tone\n2\ttwo\n3\tthree\n" * 2000)
    server = mariadb_factory("statement", binlog_format="STATEMENT", secure_file_priv="")
    sql = WORKLOAD.replace("{data}", str(data))
    server.execute("CREATE DATABASE sbr; CREATE DATABASE sbrz")
    server.execute(sql, database="sbr")
    server.execute("SET GLOBAL log_bin_compress = ON, GLOBAL log_bin_compress_min_len = 10")
    server.execute(sql, database="sbrz")
    files = server.flush_binlogs()[:-1]
    server.stop()
    return files


def test_statement_events_reencode_exactly(statement_binlogs: list[Path]) -> None:
    kinds: set[type] = set()
    for path in statement_binlogs:
        dec = BinlogDecoder(file=str(path))
        dec.receive_data(path.read_bytes())
        dec.receive_data(b"")
        while not isinstance(event := dec.next_event(), Signal):
            frame = dec.last_frame
            assert frame is not None
            assert encode_event(event, frame.fmt) == frame.raw, (path.name, event.header.offset)
            kinds.add(type(event))
    assert {QueryCompressedEvent, BeginLoadQueryEvent, ExecuteLoadQueryEvent} <= kinds
    assert {UserVarEvent, RandEvent, QueryEvent} <= kinds


def test_statement_events_match_mariadb_binlog(statement_binlogs: list[Path]) -> None:
    tool = shutil.which("mariadb-binlog")
    if tool is None:
        pytest.skip("mariadb-binlog is not installed")
    total = Checker("all")
    values = []
    for path in statement_binlogs:
        done = subprocess.run([tool, "-vv", str(path)], capture_output=True, check=True)
        events, error = decode_all(path)
        assert error is None
        checker = Checker(path.name)
        checker.compare(parse_dump(done.stdout), events)
        assert not checker.failed, checker.failed[:10]
        total.done.update(checker.done)
        values += [(e.name, e.value) for e in events.values() if isinstance(e, UserVarEvent)]
    # Each kind of printed value was compared (the tool prints a setting when it changes:
    # the time zone only once, the others in both the plain and the compressed run).
    for what in ("lc_time_names", "auto_increment", "collation_database", "fraction"):
        assert total.done[what] >= 2, what
    assert total.done["time_zone"] >= 1
    assert total.done["load statement"] == 4
    assert total.done["rand"] == 2
    assert total.done["user_var real"] == 2  # @f, once per run
    assert ("d", Decimal("-12345.678900")) in values
    assert ("u", 18446744073709551615) in values
    assert ("n", None) in values
