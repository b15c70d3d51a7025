"""Reading less of a query's postings when only its best hits are asked for.

A term's postings are sorted by document number (docs/search.md, The index), so
the row groups of its Parquet files each cover a range of numbers, and their
statistics bound what any posting in them can add to a score: its greatest
``tf`` and least ``length`` give the greatest BM25 contribution of a term in it
(:func:`~binlogkit.search.bm25.term_score` grows with ``tf`` and falls with
``length``, for any average length).

- An AND (every match holds some term) whose rarest required term is
  :data:`RARE` times rarer than another reads that term's postings first, and
  of the others only the rows, and row groups, of its documents
  (:meth:`~binlogkit.search.engine.SearchIndex.search`).
- An OR of terms (a term, a prefix) with a limit reads its row groups in order
  of their bounds (:func:`top_blocks`, block-max pruning in the manner of
  MaxScore) until the ``limit``-th best score seen is above anything the unread
  row groups could add up to; then the documents seen that could still rank
  have their remaining postings read from the row groups whose number range
  holds them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from binlogkit.search.bm25 import Stats, idf, term_score
from binlogkit.search.files import Block, DeltaFiles, Wanted, concat
from binlogkit.search.matching import TIE, Postings, postings_columns
from binlogkit.search.query import AnyOf, Prefix, Resolved, Term

__all__ = ["FIRST_BLOCKS", "RARE", "disjunction", "top_blocks"]

RARE = 4
"""An AND reads its rarest required term first when another of its terms has this many times
its document frequency."""
FIRST_BLOCKS = 4
"""Row groups :func:`top_blocks` reads first; each further round reads twice as many."""
CODED = ["term", "table", "column"]


def disjunction(node: Resolved, expanded: dict[str, tuple[str, ...]]) -> list[str] | None:
    """The terms of ``node`` when it is a term, a prefix, or an OR of them (sorted); None
    otherwise."""
    items = node.items if isinstance(node, AnyOf) else (node,)
    terms: set[str] = set()
    for item in items:
        if isinstance(item, Term):
            terms.add(item.term)
        elif isinstance(item, Prefix):
            terms.update(expanded[item.prefix])
        else:
            return None
    return sorted(terms)


def top_blocks(
    table: DeltaFiles,
    live: Callable[[Any], Any],
    stats: Stats,
    terms: list[str],
    df: dict[str, int],
    buckets: Callable[[list[str]], set[int]],
    filters: tuple[set[str], set[str]],
    limit: int,
) -> Any:
    """The postings rows (:func:`~binlogkit.search.matching.postings_columns`) of ``terms``
    that the ``limit`` best documents of their OR need (``filters``: tables and columns, as
    :class:`Postings` takes them): every posting of each document that can score within
    :data:`~binlogkit.search.matching.TIE` of the ``limit``-th best; of other documents some
    postings or none. ``live`` drops the rows
    of dead versions; ``buckets``: the partitions of terms."""
    held = [t for t in terms if df.get(t)]
    names = postings_columns(*filters)
    blocks: dict[tuple[int, int], Block] = {}
    bounds: dict[tuple[int, int], dict[str, float]] = {}
    for bucket in sorted(buckets(held)):
        mine = [t for t in held if buckets([t]) == {bucket}]
        weights = {t: idf(stats.docs, df[t]) for t in mine}
        for block in table.blocks(Wanted("term", mine), {"bucket": {bucket}}):
            key = (block.file, block.group)
            blocks[key] = block
            inside = [t for t in mine if _may_hold(block, t)]
            bound = {
                t: term_score(block.tf, block.length, stats.avg_length, weights[t]) for t in inside
            }
            bounds[key] = bound
    order = sorted(blocks, key=lambda k: (-max(bounds[k].values(), default=0.0), k))
    wanted = Wanted("term", held)
    parts: list[Any] = []
    at, step = 0, FIRST_BLOCKS
    while at < len(order):
        chunk = [blocks[k] for k in order[at : at + step]]
        at, step = at + step, 2 * step
        parts.append(live(table.read_blocks(chunk, names, wanted, CODED)))
        rest = dict.fromkeys(held, 0.0)  # the most each term's unread row groups can add
        for key in order[at:]:
            for term, most in bounds[key].items():
                rest[term] = max(rest[term], most)
        seen = Postings(concat(parts), *filters, df=df)
        docs = seen.holding_any(held)
        if at >= len(order) or len(docs) < limit:
            continue
        partial = seen.scores(docs, held, stats)
        kth = np.partition(partial, len(partial) - limit)[len(partial) - limit]
        if kth - TIE <= sum(rest.values()):
            continue  # a document not seen yet could still rank
        missing = np.zeros(len(docs))
        for term in held:
            missing += np.where(seen.holds(term, docs), 0.0, rest[term])
        need = np.sort(seen.numbers(docs[partial + missing >= kth - TIE]))
        if len(need):
            later = [blocks[k] for k in order[at:] if _holds_one(blocks[k], need)]
            within = Wanted("term", held, docs=need)
            parts.append(live(table.read_blocks(later, names, within, CODED)))
        break
    if not parts:
        return table.read(names, Wanted("term", held), {"bucket": set()}, CODED)
    return concat(parts)


def _holds_one(block: Block, docs: Any) -> bool:
    """Whether ``block``'s number range holds one of the sorted ``docs``."""
    at = int(np.searchsorted(docs, block.low))
    return at < len(docs) and int(docs[at]) <= block.high


def _may_hold(block: Block, term: str) -> bool:
    if block.least is None or block.greatest is None:
        return True
    return bool(block.least <= term <= block.greatest)
