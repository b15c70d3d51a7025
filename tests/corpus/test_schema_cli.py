"""``binlogkit schema --at``: the tables as of a position of real binlog files."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from binlogkit.cli.main import cli

pytestmark = pytest.mark.corpus

GIPK = (
    "enhancedformysql+mysql-8.0.40/mysql-test/std_data/"
    "rpl_binlog_with_gipk_info_minimal_metadata.000001"
)
"""CREATE TABLE t1 at 234 (ends 375), CREATE TABLE t2 at 741 (ends 1028)."""


@pytest.mark.parametrize(
    ("at", "tables"),
    [(234, []), (375, ["t1"]), (741, ["t1"]), (1028, ["t1", "t2"]), (None, ["t1", "t2"])],
)
def test_schema_as_of_a_position(corpus_dir: Path, at: int | None, tables: list[str]) -> None:
    path = str(corpus_dir / GIPK)
    args = ["schema", path] if at is None else ["schema", "--at", f"{path}:{at}", path]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    created = [line.split("`")[3] for line in result.output.splitlines() if "CREATE TABLE" in line]
    assert created == tables
