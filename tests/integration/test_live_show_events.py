"""Live: ``binlogkit events`` lists what MariaDB's own SHOW BINLOG EVENTS lists, column for column.

A throwaway MariaDB 10.11 runs statements chosen to give every Info text the
server writes for its own binlogs: statements with and without a default
database (one with a backquote in its name), session options that MariaDB
spells out in a QUERY's Info, statement-based DML with user variables of every
type, RAND() and auto-increment ids, row events, MyISAM commits, XA
transactions, and a second server with ``log_bin_compress``. Then every row of
``SHOW BINLOG EVENTS`` for every file must equal the listing binlogkit makes
from the file alone, Info text included.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

import binlogkit
from binlogkit.binlog.info import list_events
from binlogkit.cli.main import cli
from binlogkit.sandbox import MariaDBSandbox

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

WORKLOAD = """
CREATE DATABASE bkinfo;
CREATE DATABASE `we``ird`;
USE bkinfo;
CREATE TABLE t (
  id INT AUTO_INCREMENT PRIMARY KEY, a VARCHAR(200), d DOUBLE, n DECIMAL(10,3),
  u BIGINT UNSIGNED, i BIGINT
) ENGINE=InnoDB;
CREATE TABLE m (id INT PRIMARY KEY, a VARCHAR(20)) ENGINE=MyISAM;
INSERT INTO t (a) VALUES ('one'), ('two'), ('three');
UPDATE t SET a = 'uno' WHERE id = 1;
DELETE FROM t WHERE id = 3;
INSERT INTO m VALUES (1, 'my');
BEGIN; INSERT INTO m VALUES (2, 'mixed'); INSERT INTO t (a) VALUES ('mixed'); COMMIT;
SET SESSION foreign_key_checks = 0;
CREATE TABLE fk (id INT PRIMARY KEY) ENGINE=InnoDB;
SET SESSION foreign_key_checks = 1;
SET SESSION unique_checks = 0;
CREATE TABLE uq (id INT PRIMARY KEY) ENGINE=InnoDB;
SET SESSION unique_checks = 1;
SET SESSION sql_auto_is_null = 1;
CREATE TABLE autonull (id INT PRIMARY KEY) ENGINE=InnoDB;
SET SESSION sql_auto_is_null = 0;
SET SESSION check_constraint_checks = 0;
CREATE TABLE nocheck (id INT PRIMARY KEY) ENGINE=InnoDB;
SET SESSION foreign_key_checks = 0, unique_checks = 0, sql_auto_is_null = 1;
SET SESSION sql_if_exists = 1;
DROP TABLE IF EXISTS nocheck;
SET SESSION foreign_key_checks = 1, unique_checks = 1, sql_auto_is_null = 0;
SET SESSION check_constraint_checks = 1, sql_if_exists = 0;
SET SESSION system_versioning_insert_history = 1;
CREATE TABLE hist (id INT PRIMARY KEY) ENGINE=InnoDB;
SET SESSION system_versioning_insert_history = 0;
SET SESSION binlog_format = 'STATEMENT';
SET @s = 'text ''quoted''', @e = '', @l = _latin1 'caf\\xe9', @bin = _binary 0x00ff;
SET @i = -5, @u = CAST(18446744073709551615 AS UNSIGNED), @nul = NULL;
SET @r1 = 0.1e0, @r2 = 1.5e10, @r3 = -2.5e-7, @r4 = 1e300, @r5 = 123456789012345678e0;
SET @r6 = 1e15, @r7 = 1e16, @r8 = 1.2345678901234567e-5, @r9 = -1e-14, @r10 = 1e-15;
SET @r11 = 0e0, @r12 = 1234567.890123;
SET @dec = 12.345, @dec2 = -0.5;
INSERT INTO t (a, d, n, u, i) VALUES (CONCAT(@s, @e, @nul), @r1, @dec, @u, @i);
INSERT INTO t (a, d, n) VALUES (CONCAT(@l, HEX(@bin)), @r2 + @r3, @dec2);
INSERT INTO t (d) VALUES (@r4), (@r5), (@r6), (@r7), (@r8), (@r9), (@r10), (@r11), (@r12);
INSERT INTO t (d) VALUES (RAND());
INSERT INTO t (a) VALUES (LAST_INSERT_ID());
SET SESSION binlog_format = 'ROW';
USE `we``ird`;
CREATE TABLE q (id INT PRIMARY KEY);
INSERT INTO q VALUES (1), (2);
XA START 'gtrid', 'bq', 7;
INSERT INTO bkinfo.t (a) VALUES ('xa');
XA END 'gtrid', 'bq', 7;
XA PREPARE 'gtrid', 'bq', 7;
XA COMMIT 'gtrid', 'bq', 7;
XA START X'00ff7f', '', 1;
INSERT INTO bkinfo.t (a) VALUES ('xa one phase');
XA END X'00ff7f', '', 1;
XA COMMIT X'00ff7f', '', 1 ONE PHASE;
DROP TABLE q;
"""

Row = tuple[str | None, ...]


def _server_rows(server: MariaDBSandbox, path: Path) -> list[Row]:
    return server.query(f"SHOW BINLOG EVENTS IN '{path.name}'")


def _our_rows(path: Path) -> list[Row]:
    with binlogkit.open(path) as reader:
        return [
            (r.log_name, str(r.pos), r.event_type, str(r.server_id), str(r.end_log_pos), r.info)
            for r in list_events(reader)
        ]


@pytest.fixture(scope="module", params=["plain", "compressed"])
def listed(
    request: pytest.FixtureRequest, mariadb_factory: Callable[..., MariaDBSandbox]
) -> list[tuple[Path, list[Row], list[Row]]]:
    """(file, server's SHOW BINLOG EVENTS rows, binlogkit's rows) for each binlog file."""
    options = {"log_bin_compress": True, "log_bin_compress_min_len": 10}
    server = mariadb_factory(
        f"show-events-{request.param}", **(options if request.param == "compressed" else {})
    )
    try:
        server.execute(WORKLOAD)
        files = server.flush_binlogs()
        out = [(path, _server_rows(server, path), _our_rows(path)) for path in files]
    finally:
        server.stop()
    return out


def test_listing_equals_show_binlog_events(
    listed: list[tuple[Path, list[Row], list[Row]]],
) -> None:
    compared = 0
    for index, (path, theirs, ours) in enumerate(listed):
        if index == len(listed) - 1:
            # The file that was active at shutdown got more events since.
            ours = ours[: len(theirs)]
        mismatches = [(t, o) for t, o in zip(theirs, ours, strict=True) if t != o]
        assert not mismatches, f"{path.name}: first differences:\n" + "\n".join(
            f"server:    {t}\nbinlogkit: {o}" for t, o in mismatches[:8]
        )
        compared += len(theirs)
    assert compared > 50


def test_workload_reached_every_info_kind(
    listed: list[tuple[Path, list[Row], list[Row]]],
) -> None:
    kinds = {row[2] for _, theirs, _ in listed for row in theirs}
    assert {"User var", "RAND", "Intvar", "XA_prepare", "Gtid_list", "Binlog_checkpoint"} <= kinds
    infos = [str(row[5]) for _, theirs, _ in listed for row in theirs]
    assert any(info.startswith("use `we``ird`; ") for info in infos)
    assert any(info.startswith("XA START X'") for info in infos)


def test_cli_text_lines_are_the_server_rows(
    listed: list[tuple[Path, list[Row], list[Row]]],
) -> None:
    path, theirs, _ = listed[0]
    out = CliRunner().invoke(cli, ["events", str(path)], catch_exceptions=False).stdout_bytes
    lines = out.decode("utf-8", "surrogateescape").splitlines()
    escape = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\0": "\\0"})
    assert lines[1 : 1 + len(theirs)] == [
        "\t".join(str(value).translate(escape) for value in row) for row in theirs
    ]
