"""``binlogkit spark index`` and ``binlogkit search``: errors found before any Spark work."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_run import invoke

from binlogkit.search.analysis import ENGLISH_STOP_WORDS, Analyzer
from binlogkit.search.manifest import IndexLayout, Manifest

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


def test_an_index_keeps_its_analysis(tmp_path: Path) -> None:
    """--stem or --stop-words that differ from an existing index's are an error, before Spark."""
    lake = tmp_path / "lake"
    (lake / "_binlogkit").mkdir(parents=True)
    manifest = Manifest(
        analyzer=Analyzer(stem="english", stop_words=ENGLISH_STOP_WORDS),
        lake=str(lake.resolve()),
        columns={"shop.items": ("name",)},
        keys={"shop.items": ("id",)},
        app_id="test",
    )
    manifest.save(IndexLayout(tmp_path / "index"))
    index = ("spark", "index", str(lake), "--to", str(tmp_path / "index"))
    run = invoke(*index, "--stem", "russian", "--stop-words")
    assert run.failed_cleanly() is None, run.stderr
    assert (
        "analyses text with stemming english and the English stop words, not stemming "
        "russian and the English stop words" in run.stderr
    )
    run = invoke(*index, "--stem", "english")
    assert run.failed_cleanly() is None, run.stderr
    assert "not stemming english and no stop words" in run.stderr
