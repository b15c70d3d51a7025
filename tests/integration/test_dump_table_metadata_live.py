"""Live: ``binlogkit dump --print-table-metadata`` prints what ``mariadb-binlog`` prints.

A real MariaDB (binlog_row_metadata=FULL, the sandbox default) runs the small
workload of :mod:`binlogkit.sandbox.workload` (every column type) plus a table
with awkward names, ENUM/SET values that need escaping, a prefix primary key
and mixed charsets; both tools print each binlog with the option, and the
outputs must be equal as a whole. The server's own collation table is the
known answer for the collation names the comments show.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from dump_compare import TOOL, assert_same_dump, our_dump, tool_dump

from binlogkit.binlog.rows.charsets import charset_name, collation_name, max_char_length
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.sandbox.workload import build_workload, run_workload

pytestmark = [
    pytest.mark.mariadb,
    pytest.mark.xdist_group("mariadb"),
    pytest.mark.skipif(TOOL is None, reason="mariadb-binlog not installed"),
]

EXTRA = """
CREATE DATABASE IF NOT EXISTS meta;
CREATE TABLE meta.`odd``name` (
  `a``b` INT UNSIGNED NOT NULL,
  `it's` VARCHAR(40) CHARACTER SET latin1,
  e ENUM('x''y', 'back\\\\slash', 'tab\\there') CHARACTER SET utf8mb3,
  s SET('a', 'b''c') NOT NULL,
  t TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_520_ci,
  bl BLOB,
  c CHAR(10) CHARACTER SET ucs2,
  g POINT,
  d DECIMAL(12,4) UNSIGNED,
  y YEAR,
  PRIMARY KEY (`a``b`, `it's`(5))
) ENGINE=InnoDB;
INSERT INTO meta.`odd``name` (`a``b`, `it's`, s) VALUES (1, 'x', 'a');
"""


def test_print_table_metadata_equals_mariadb_binlog(
    mariadb_factory: Callable[..., MariaDBSandbox],
) -> None:
    server = mariadb_factory("dump-table-metadata")
    try:
        assert server.variable("binlog_row_metadata") == "FULL"
        run_workload(server, build_workload(small=True))
        server.execute(EXTRA)
        collations = server.query(
            "SELECT c.ID, c.FULL_COLLATION_NAME, c.CHARACTER_SET_NAME, s.MAXLEN"
            " FROM information_schema.COLLATION_CHARACTER_SET_APPLICABILITY c"
            " JOIN information_schema.CHARACTER_SETS s USING (CHARACTER_SET_NAME)"
        )
        files = server.flush_binlogs()[:-1]
    finally:
        server.stop()
    for cid, name, charset, maxlen in collations:
        assert cid is not None and maxlen is not None
        assert (collation_name(int(cid)), charset_name(int(cid))) == (name, charset), cid
        assert max_char_length(int(cid)) == int(maxlen), cid
    shown = 0
    for path in files:
        for args in (("--print-table-metadata",), ("--print-table-metadata", "-vv")):
            want = tool_dump(path, *args)
            shown += want.count(b"# Columns(")
            assert_same_dump(want, our_dump(path, *args), f"{path.name} {args}")
    assert shown > 10
