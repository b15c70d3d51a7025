"""The search index's manifest: its JSON round trip, a batch finished, when to compact."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from binlogkit.errors import BinlogError
from binlogkit.search.analysis import Analyzer
from binlogkit.search.manifest import IndexLayout, Manifest, MirrorRange, Pending

MANIFEST = Manifest(
    analyzer=Analyzer(stem="english"),
    lake="/lake",
    columns={"shop.items": ("name",), "shop.notes": ("note",)},
    keys={"shop.items": ("id",), "shop.notes": ("k1", "k2")},
    app_id="test",
    whole=("shop.items",),
    batch=3,
    versions={"postings": 5, "docs": 5, "terms": 5, "deletes": 4},
    mirrors={"shop.items": MirrorRange(2, 7, "a"), "shop.notes": MirrorRange(1, 4, "b")},
    docs=100,
    length=900,
    dead=8,
    segments=2,
)


def test_a_batch_with_new_columns_round_trips_and_finishes(tmp_path: Path) -> None:
    pending = Pending(
        4, {"shop.items": MirrorRange(7, 9, "a", True)}, False, {"shop.items": ("name", "extra")}
    )
    manifest = MANIFEST.with_pending(pending)
    manifest.save(IndexLayout(tmp_path))
    assert Manifest.load(IndexLayout(tmp_path)) == manifest
    versions = {"postings": 6, "docs": 6, "terms": 6, "deletes": 5}
    done = manifest.finished(versions, docs=110, length=1000, dead=20, segments=3)
    assert done.columns == {"shop.items": ("name", "extra"), "shop.notes": ("note",)}
    assert done.mirrors["shop.items"] == MirrorRange(7, 9, "a", True)
    assert done.mirrors["shop.notes"] == MirrorRange(1, 4, "b")
    assert (done.batch, done.pending, done.dead, done.segments) == (4, None, 20, 3)


def test_compaction_is_due_past_its_thresholds() -> None:
    build = pytest.importorskip("binlogkit.spark.search.build")
    due = build.compaction_due
    assert not due(MANIFEST, None)  # 8 dead of 100, 2 segments
    assert due(replace(MANIFEST, dead=11), True)
    assert not due(replace(MANIFEST, dead=0, segments=0), True)
    assert not due(replace(MANIFEST, dead=50), False)
    assert due(replace(MANIFEST, dead=11), None) is True
    assert due(replace(MANIFEST, segments=build.COMPACT_SEGMENTS), None)
    assert not due(replace(MANIFEST, dead=10), None)


def test_a_damaged_manifest_is_an_error_naming_it(tmp_path: Path) -> None:
    layout = IndexLayout(tmp_path)
    MANIFEST.save(layout)
    data = json.loads(layout.manifest.read_text())
    del data["whole"]
    layout.manifest.write_text(json.dumps(data))
    with pytest.raises(BinlogError, match=r"index\.json: KeyError 'whole'"):
        Manifest.load(layout)
