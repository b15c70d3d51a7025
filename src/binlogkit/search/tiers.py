"""The segments of a search index after its base, and which of them to merge (docs/search.md,
Compaction).

Each update batch appends a segment (its rows in ``postings`` and ``docs``); a
merge rewrites adjacent segments, without their dead versions, as one (their
rows keep their batch numbers, so a segment is a range of batches). As in
Lucene's log merge policy, segments are grouped in tiers by size, each
:data:`MERGE_FACTOR` times the one below (tier 0: under :data:`TIER_FLOOR`
document versions), and :data:`MERGE_FACTOR` adjacent segments of one tier
are merged into one of the next: each document version is rewritten about once
per tier (the logarithm of the index's size), not at every merge, while the
segments a query opens stay few (at most ``MERGE_FACTOR - 1`` per tier, plus
the ones merging).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from binlogkit.search.manifest import Segment

__all__ = ["MERGE_FACTOR", "TIER_FLOOR", "appended", "merged", "next_merge", "tier", "wasteful"]

MERGE_FACTOR = 4
"""Segments of one tier merged together; also the ratio of the tiers' sizes."""
TIER_FLOOR = 1_000
"""Segments of fewer document versions are all of tier 0."""


def tier(docs: int, factor: int | None = None, floor: int | None = None) -> int:
    """The tier of a segment of ``docs`` document versions (by default :data:`MERGE_FACTOR`
    and :data:`TIER_FLOOR`, as set when called)."""
    factor, floor = factor or MERGE_FACTOR, floor or TIER_FLOOR
    level, bound = 0, floor
    while docs >= bound:
        level, bound = level + 1, bound * factor
    return level


def appended(
    tiers: Sequence[Segment], batch: int, added: int, removed: Mapping[int, int]
) -> tuple[Segment, ...]:
    """The segments after batch ``batch`` appended ``added`` document versions and replaced
    or removed ``removed[b]`` of those written by batch ``b`` (those of the base's batches
    are not counted here)."""

    def dead(segment: Segment) -> int:
        return sum(n for b, n in removed.items() if segment.first <= b <= segment.last)

    kept = tuple(Segment(s.first, s.last, s.docs, s.dead + dead(s)) for s in tiers)
    return (*kept, Segment(batch, batch, added))


def merged(tiers: Sequence[Segment], first: int, last: int) -> tuple[Segment, ...]:
    """The segments after those of batches ``first`` to ``last`` were merged into one, their
    dead versions left out."""
    inside = [s for s in tiers if first <= s.first and s.last <= last]
    if not inside or inside[0].first != first or inside[-1].last != last:
        raise ValueError(f"batches {first} to {last} are not whole segments of {list(tiers)}")
    one = Segment(first, last, sum(s.docs - s.dead for s in inside))
    at = list(tiers).index(inside[0])
    return (*tiers[:at], one, *tiers[at + len(inside) :])


def next_merge(
    tiers: Sequence[Segment], factor: int | None = None, floor: int | None = None
) -> tuple[int, int] | None:
    """The batches (first, last) of the next tier merge: the oldest ``factor`` adjacent
    segments of the lowest tier that has that many in a row (sizes without their dead
    versions); None when no tier has."""
    factor = factor or MERGE_FACTOR
    levels = [tier(s.docs - s.dead, factor, floor) for s in tiers]
    best: tuple[int, int] | None = None  # (level, start)
    for start in range(len(tiers) - factor + 1):
        level = levels[start]
        alike = all(x == level for x in levels[start : start + factor])
        if alike and (best is None or level < best[0]):
            best = (level, start)
    if best is None:
        return None
    start = best[1]
    return tiers[start].first, tiers[start + factor - 1].last


def wasteful(tiers: Sequence[Segment]) -> tuple[int, int] | None:
    """The batches of the segment with the most dead versions (the oldest of equals), to be
    rewritten alone; None when none has any."""
    worst = max(tiers, key=lambda s: (s.dead, -s.first), default=None)
    if worst is None or worst.dead == 0:
        return None
    return worst.first, worst.last
