"""io.atomic: a replaced file holds the new content and no temporary file is left beside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from binlogkit.io.atomic import replace_file, replace_json


@pytest.mark.parametrize("sync", [True, False])
def test_replace_file_swaps_the_content(tmp_path: Path, sync: bool) -> None:
    target = tmp_path / "state.json"
    target.write_text("old")
    replace_file(target, "new", sync=sync)
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_replace_json_creates_the_file(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    replace_json(target, {"done": 3, "groups": [1, 2]})
    assert json.loads(target.read_text()) == {"done": 3, "groups": [1, 2]}


def test_a_failed_write_keeps_the_old_content(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    target.write_text("old")
    with pytest.raises(TypeError):
        replace_json(target, {"not json": object()})
    assert target.read_text() == "old"
