"""``binlogkit dump --print-table-metadata`` on MySQL 8 binlogs of the corpus.

The known answers are the assertions of mysql-test's
``binlog_mysqlbinlog_source_gipk_info.test`` (MySQL 8.0.40; its ``.result`` is
under ``expected/``): mysqlbinlog ``--print-table-metadata`` of two binlogs
written with binlog_row_metadata MINIMAL and FULL, holding ``t1 (c1 BIGINT,
c2 TEXT, PRIMARY KEY(c1))`` and ``t2 (f1 INT, really_unique_column_name INT)``
created with a generated invisible primary key. Each assertion counts the lines
matching a pattern (the test's ``assert_grep.inc``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from dump_compare import our_dump

pytestmark = pytest.mark.corpus

MTR = "enhancedformysql+mysql-8.0.40/mysql-test"
GIPK_COLUMN = r"# Columns\(`my_row_id` BIGINT UNSIGNED NOT NULL INVISIBLE AUTO_INCREMENT"

# (file, pattern, expected count), as the .test file asserts them.
ASSERTIONS = [
    ("rpl_binlog_with_gipk_info_minimal_metadata.000001", GIPK_COLUMN, 1),
    ("rpl_binlog_with_gipk_info_minimal_metadata.000001", r"# Primary Key\(my_row_id\)", 1),
    ("rpl_binlog_with_gipk_info_minimal_metadata.000001", "really_unique_column_name", 1),
    ("rpl_binlog_with_gipk_info_minimal_metadata.000001", r"# Primary Key\(c1\)", 0),
    ("rpl_binlog_with_gipk_info_full_metadata.000001", GIPK_COLUMN, 1),
    ("rpl_binlog_with_gipk_info_full_metadata.000001", r"# Primary Key\(my_row_id\)", 1),
    ("rpl_binlog_with_gipk_info_full_metadata.000001", "really_unique_column_name", 2),
    ("rpl_binlog_with_gipk_info_full_metadata.000001", r"# Primary Key\(c1\)", 1),
]


@pytest.mark.parametrize(("name", "pattern", "count"), ASSERTIONS)
def test_gipk_table_metadata(corpus_dir: Path, name: str, pattern: str, count: int) -> None:
    dump = our_dump(corpus_dir / MTR / "std_data" / name, "--print-table-metadata").decode()
    assert len(re.findall(pattern, dump)) == count, pattern


def test_without_the_option_nothing_is_printed(corpus_dir: Path) -> None:
    path = corpus_dir / MTR / "std_data/rpl_binlog_with_gipk_info_full_metadata.000001"
    dump = our_dump(path).decode()
    assert "# Columns(" not in dump
    assert "# Primary Key(" not in dump


# Part 2 of the same .test: dumps (without options) of binlogs from a server that
# supports GIPKs carry the table map's flag, t1 without a GIPK and t2 with one.
@pytest.mark.parametrize(
    "name",
    [
        "rpl_binlog_with_gipk_info_with_gipk.000001",
        "rpl_binlog_with_gipk_info_minimal_metadata.000001",
    ],
)
def test_table_maps_show_the_gipk_flag(corpus_dir: Path, name: str) -> None:
    lines = our_dump(corpus_dir / MTR / "std_data" / name).decode().split("\n")
    shown = {
        re.search(r"Table_map: `test`\.`(\w+)`", line).group(1): lines[i + 1]  # type: ignore[union-attr]
        for i, line in enumerate(lines)
        if "\tTable_map: " in line
    }
    assert "t2" in shown
    want = {
        "t1": "# has_generated_invisible_primary_key=0",
        "t2": "# has_generated_invisible_primary_key=1",
    }
    assert shown == {table: want[table] for table in shown}
