"""The search index's manifest: its JSON round trip, a batch finished, when to compact."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from binlogkit.errors import BinlogError
from binlogkit.search import tiers
from binlogkit.search.analysis import Analyzer
from binlogkit.search.manifest import (
    LAST_BATCH,
    IndexLayout,
    Manifest,
    MirrorRange,
    Pending,
    Segment,
    doc_number,
    number_bucket,
)

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
    tiers=(Segment(1, 2, 40, 3), Segment(3, 3, 10, 2)),
)


def test_a_batch_with_new_columns_round_trips_and_finishes(tmp_path: Path) -> None:
    pending = Pending(
        4, {"shop.items": MirrorRange(7, 9, "a", True)}, False, {"shop.items": ("name", "extra")}
    )
    manifest = MANIFEST.with_pending(pending)
    manifest.save(IndexLayout(tmp_path))
    assert Manifest.load(IndexLayout(tmp_path)) == manifest
    versions = {"postings": 6, "docs": 6, "terms": 6, "deletes": 5}
    three = (*MANIFEST.tiers, Segment(4, 4, 12))
    done = manifest.finished(versions, docs=110, length=1000, dead=20, tiers=three, base_dead=5)
    assert done.columns == {"shop.items": ("name", "extra"), "shop.notes": ("note",)}
    assert done.mirrors["shop.items"] == MirrorRange(7, 9, "a", True)
    assert done.mirrors["shop.notes"] == MirrorRange(1, 4, "b")
    assert (done.batch, done.pending, done.dead, done.segments) == (4, None, 20, 3)
    assert (done.base, done.base_dead) == (MANIFEST.base, 5)
    whole = MANIFEST.with_pending(Pending(4, {}, True)).finished(
        versions, docs=100, length=900, dead=0, whole=True
    )
    assert (whole.base, whole.base_dead, whole.segments) == (4, 0, 0)
    merging = MANIFEST.with_pending(Pending(4, {}, True, tiered=True, merge=(1, 3)))
    merging.save(IndexLayout(tmp_path))
    assert Manifest.load(IndexLayout(tmp_path)) == merging


def test_a_manifest_written_before_tiers_reads_as_one_segment(tmp_path: Path) -> None:
    """Its segments after the base as one of unknown size; its pending tiered compaction
    merges them all."""
    layout = IndexLayout(tmp_path)
    replace(MANIFEST, base=1, base_dead=5).with_pending(Pending(4, {}, True, tiered=True)).save(
        layout
    )
    data = json.loads(layout.manifest.read_text())
    del data["tiers"], data["pending"]["merge"]
    layout.manifest.write_text(json.dumps(data))
    old = Manifest.load(layout)
    assert old is not None and old.tiers == (Segment(2, 3, 0, 3),)
    assert old.pending is not None and old.pending.merge == (2, 3)


def _kind(manifest: Manifest, compact: object) -> str | tuple[int, int] | None:
    """The compaction due: "whole", the batches a tiered one merges, or None."""
    build = pytest.importorskip("binlogkit.spark.search.build")
    pending = build.compaction_due(manifest, compact)
    if pending is None:
        return None
    assert pending.compact and pending.batch == manifest.batch + 1
    return pending.merge if pending.tiered else "whole"


def test_compaction_is_due_past_its_thresholds_tiered_when_that_suffices() -> None:
    build = pytest.importorskip("binlogkit.spark.search.build")
    kind = _kind
    # 8 dead of 100 documents (3 of them in the base, 5 in the 2 segments after it)
    base = replace(MANIFEST, base_dead=3)
    assert kind(base, None) is None
    assert kind(base, True) == (1, 3)
    assert kind(replace(base, dead=11), None) == (1, 2)  # the segments hold the waste: the worst
    assert kind(replace(base, dead=30, base_dead=11), None) == "whole"  # the base does
    many = tuple(Segment(b, b, 5_000 * 4**b) for b in range(1, build.COMPACT_SEGMENTS + 1))
    assert kind(replace(base, tiers=many, batch=many[-1].last), None) == (1, 64)
    assert kind(replace(base, dead=10), None) is None
    assert kind(replace(base, dead=50), False) is None
    assert kind(replace(base, dead=0, base_dead=0, tiers=()), True) is None
    merged = replace(base, dead=3, tiers=(Segment(1, 3, 47),))  # one segment, nothing dead
    assert kind(merged, True) is None and kind(merged, "tiered") is None
    assert kind(merged, "whole") == "whole"


def test_segments_of_a_tier_merge_when_there_are_enough() -> None:
    """Four adjacent segments of one tier (without their dead versions) merge into one of the
    next, the lowest tier first, the oldest run first; a merged segment has no dead."""
    assert [tiers.tier(n) for n in (0, 999, 1_000, 3_999, 4_000, 16_000)] == [0, 0, 1, 1, 2, 3]
    small = [Segment(b, b, 100) for b in range(5, 8)]
    run = (Segment(1, 4, 5_000), *small)
    assert tiers.next_merge(run) is None  # three small ones
    run = (*run, Segment(8, 8, 1_500, 600))  # 900 live: tier 0
    assert tiers.next_merge(run) == (5, 8)
    after = tiers.merged(run, 5, 8)
    assert after == (Segment(1, 4, 5_000), Segment(5, 8, 300 + 900))
    four = tuple(Segment(b, b, 1_000) for b in range(1, 5))
    assert tiers.next_merge((*four, *small, Segment(8, 8, 10))) == (5, 8)  # tier 0 first
    assert tiers.next_merge(four) == (1, 4)
    with pytest.raises(ValueError, match="not whole segments"):
        tiers.merged(run, 2, 8)


def test_an_update_counts_its_dead_versions_in_their_segments() -> None:
    run = (Segment(1, 4, 5_000, 10), Segment(5, 5, 100))
    grown = tiers.appended(run, 6, 50, {0: 7, 2: 3, 5: 1})  # batch 0: the base's
    assert grown == (Segment(1, 4, 5_000, 13), Segment(5, 5, 100, 1), Segment(6, 6, 50))
    assert tiers.wasteful(grown) == (1, 4) and tiers.wasteful(run[1:]) is None


def test_multi_tier_compaction_rewrites_less_than_merging_every_segment() -> None:
    """100 batches of 100 documents each, compacted when due after each: the tiered policy
    rewrites fewer document versions than merging all segments (the two tiers of before) at
    every fourth batch, and keeps no more than a few segments per tier."""
    build = pytest.importorskip("binlogkit.spark.search.build")
    rewritten = {"tiers": 0, "two": 0}
    for policy in rewritten:
        manifest = replace(MANIFEST, batch=0, base=0, dead=0, base_dead=0, tiers=())
        for batch in range(1, 101):
            now = tiers.appended(manifest.tiers, batch, 100, {})
            manifest = replace(manifest, batch=batch, tiers=now)
            if policy == "tiers":
                due = build.compaction_due(manifest, None)
                span = None if due is None else due.merge
            else:
                span = (1, batch) if batch % 4 == 0 else None
            if span is not None:
                inside = [s for s in manifest.tiers if span[0] <= s.first and s.last <= span[1]]
                rewritten[policy] += sum(s.docs for s in inside)
                manifest = replace(manifest, tiers=tiers.merged(manifest.tiers, *span))
        assert len(manifest.tiers) <= 3 * 4
    assert rewritten["tiers"] < rewritten["two"] / 3, rewritten


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


def test_batch_numbers_stop_at_the_last_one_document_numbers_hold() -> None:
    """A batch takes the top bits of its documents' signed 64-bit numbers: the last batch's
    numbers stay positive and give back their partition; the batch after it (an update or a
    compaction) is refused before anything is written, naming the fix."""
    last = doc_number(LAST_BATCH, 255, 2**32 - 1)
    assert LAST_BATCH == 2**23 - 1 and 0 < last < 2**63
    assert int(np.array([last], dtype=np.int64)[0]) == last
    assert number_bucket(last) == 255
    assert Pending(LAST_BATCH, {}).batch == LAST_BATCH
    with pytest.raises(BinlogError, match=f"batch {LAST_BATCH + 1} would pass") as err:
        Pending(LAST_BATCH + 1, {}, compact=True)
    assert "--rebuild" in (err.value.hint or "")
