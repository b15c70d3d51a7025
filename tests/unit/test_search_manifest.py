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
    done = manifest.finished(versions, docs=110, length=1000, dead=20, segments=3, base_dead=5)
    assert done.columns == {"shop.items": ("name", "extra"), "shop.notes": ("note",)}
    assert done.mirrors["shop.items"] == MirrorRange(7, 9, "a", True)
    assert done.mirrors["shop.notes"] == MirrorRange(1, 4, "b")
    assert (done.batch, done.pending, done.dead, done.segments) == (4, None, 20, 3)
    assert (done.base, done.base_dead) == (MANIFEST.base, 5)
    whole = MANIFEST.with_pending(Pending(4, {}, True)).finished(
        versions, docs=100, length=900, dead=0, segments=0, whole=True
    )
    assert (whole.base, whole.base_dead, whole.segments) == (4, 0, 0)


def test_compaction_is_due_past_its_thresholds_tiered_when_that_suffices() -> None:
    build = pytest.importorskip("binlogkit.spark.search.build")

    def kind(manifest: Manifest, compact: object) -> str | None:
        pending = build.compaction_due(manifest, compact)
        if pending is None:
            return None
        assert pending.compact and pending.batch == manifest.batch + 1
        return "tiered" if pending.tiered else "whole"

    # 8 dead of 100 documents (3 of them in the base), 2 segments
    base = replace(MANIFEST, base_dead=3)
    assert kind(base, None) is None
    assert kind(base, True) == "tiered"
    assert kind(replace(base, dead=11), None) == "tiered"  # the segments hold the waste
    assert kind(replace(base, dead=30, base_dead=11), None) == "whole"  # the base does
    assert kind(replace(base, segments=build.COMPACT_SEGMENTS), None) == "tiered"
    assert kind(replace(base, dead=10), None) is None
    assert kind(replace(base, dead=50), False) is None
    assert kind(replace(base, dead=0, base_dead=0, segments=0), True) is None
    merged = replace(base, dead=3, segments=1)  # one merged segment, nothing dead in it
    assert kind(merged, True) is None and kind(merged, "tiered") is None
    assert kind(merged, "whole") == "whole"


def test_a_damaged_manifest_is_an_error_naming_it(tmp_path: Path) -> None:
    layout = IndexLayout(tmp_path)
    MANIFEST.save(layout)
    data = json.loads(layout.manifest.read_text())
    del data["whole"]
    layout.manifest.write_text(json.dumps(data))
    with pytest.raises(BinlogError, match=r"index\.json: KeyError 'whole'"):
        Manifest.load(layout)


def test_an_index_without_document_numbers_is_read_only_to_be_rebuilt(tmp_path: Path) -> None:
    """Format 2 (before document numbers) loads, for ``--rebuild`` to take its settings, but
    is not searched: the error says how to rebuild it; other formats do not load."""
    from binlogkit.search.engine import SearchIndex

    layout = IndexLayout(tmp_path)
    replace(MANIFEST, format=2).save(layout)
    loaded = Manifest.load(layout)
    assert loaded is not None and loaded.format == 2
    with pytest.raises(BinlogError, match="format 2, without document numbers") as caught:
        SearchIndex(tmp_path)
    assert f"--to {tmp_path} --rebuild" in str(caught.value.hint)
    MANIFEST.require_numbered(layout)
    replace(MANIFEST, format=1).save(layout)
    with pytest.raises(BinlogError, match="index format 1, this binlogkit reads formats 2, 3"):
        Manifest.load(layout)
