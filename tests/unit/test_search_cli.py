"""``binlogkit spark index`` and ``binlogkit search``: errors found before any Spark work."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_run import invoke

pytest.importorskip("delta")


def test_a_new_index_needs_columns(tmp_path: Path) -> None:
    run = invoke("spark", "index", str(tmp_path / "lake"), "--to", str(tmp_path / "index"))
    assert run.failed_cleanly() is None, run.stderr
    assert "a new index needs its columns (--columns) or tables (--tables)" in run.stderr


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--columns", "shop.items", "give columns as DB.TABLE.COLUMN"),
        ("--tables", "items", "give tables as DB.TABLE"),
    ],
)
def test_selection_errors(tmp_path: Path, option: str, value: str, message: str) -> None:
    run = invoke("spark", "index", str(tmp_path), "--to", str(tmp_path / "index"), option, value)
    assert run.failed_cleanly() is None, run.stderr
    assert message in run.stderr


def test_search_without_an_index(tmp_path: Path) -> None:
    run = invoke("search", str(tmp_path), "apple")
    assert run.failed_cleanly() is None, run.stderr
    assert "holds no search index" in run.stderr
