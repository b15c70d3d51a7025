"""The README's demo (``scripts/demo.sh``, ``binlogkit.spark.demo``) on a sandbox with the
server's default ``binlog_row_metadata``: each mirror is stated equal to its table on the
server, and the first query finds the row inserted between the two syncs. Then the check it
prints can fail: a row changed on the server and not synced makes its table NOT equal."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from binlogkit.sandbox import MariaDBSandbox

pytest.importorskip("delta")
pytest.importorskip("deltalake")

from binlogkit.spark.demo import QUERIES, run
from binlogkit.spark.mirror_check import check_mirror

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

MIRRORED = ("bk.t_decimal", "bk.t_enum_set", "bk.t_int", "bk.t_str_utf8mb4", "bk.t_temporal")


def test_the_demo_states_every_mirror_equal_and_finds_the_new_row(
    spark: Any, mariadb_factory: Callable[..., MariaDBSandbox], tmp_path: Path
) -> None:
    server = mariadb_factory("demo", binlog_row_metadata=None)
    out = io.StringIO()
    assert run(server, tmp_path, spark=spark, out=out), out.getvalue()
    lines = [line.strip() for line in out.getvalue().splitlines()]
    assert lines[0].startswith("MariaDB ") and "binlog_row_metadata=NO_LOG" in lines[0]
    checks = [line for line in lines if " rows, contents " in line]
    assert [line.split(":")[0] for line in checks] == list(MIRRORED), checks
    assert all(line.endswith("contents equal") for line in checks), checks
    assert "bk.t_nopk: no primary key, so no mirror (its changes are logged only)" in lines
    first = lines.index(next(line for line in lines if QUERIES[0] in line and "search" in line))
    assert 'bk.t_str_utf8mb4 {"id":101} v300: Inserted after the **first** **sync**' in " ".join(
        lines[first + 1 : first + 4]
    ), lines[first:]
    assert "id=101, int_s=-42, big_u=18446744073709551615, note='set after the ALTER'" in lines

    server.execute("UPDATE bk.t_temporal SET y = 1999 WHERE id = 1")
    changed = check_mirror(
        spark,
        server.url,
        tmp_path / "lake",
        "bk.t_temporal",
    )
    assert (changed.server_rows, changed.only_server, changed.only_mirror) == (6, 1, 1)
    assert not changed.equal and "contents NOT equal (1 rows only on the server" in changed.text()
