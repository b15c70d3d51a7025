"""A query's postings as arrays: documents numbered, terms matched and scored with numpy.

The postings of a query's terms (rows ``term, table, column, doc, tf, length``
and, for phrases, ``positions``) are numbered by document once (``doc``, the
index's document number, mapped to 0, 1, ...); each term's
documents are then a sorted array of numbers, AND, OR and NOT are set
operations on those, a phrase is an intersection of (document, position -
offset) pairs, and BM25 adds each scoring term's contribution per document in
the order of the terms (the order :mod:`binlogkit.search.bm25` is defined in).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from binlogkit.search import kernels as pc
from binlogkit.search.arrow import flags, integers, numbers
from binlogkit.search.bm25 import K1, B, Stats, idf
from binlogkit.search.query import AllOf, AnyOf, Phrase, Prefix, Resolved, Term, Without

__all__ = ["TIE", "Postings", "conjunction", "postings_columns", "required", "within"]

_PAIR = 1 << 32
"""(document, position) pairs as one int64: document * _PAIR + position - offset + _BIAS."""
_BIAS = 1 << 31
FIRST_CHECK = 16
"""Documents whose phrases :meth:`Postings.best` checks first (at least 2 per hit asked for);
each further round checks twice the documents the share of matches so far says the missing
hits need, and at least as many as were checked before (:func:`_next_step`)."""
TIE = 1e-8
"""Scores this close to the last hit's may rank above it once rounded to 9 decimals."""


class Postings:
    """The postings ``rows`` (a pyarrow Table; ``term`` plain or dictionary-coded, ``doc`` the
    document number; ``table`` and ``column`` too when ``tables`` or ``columns`` filter them:
    :func:`postings_columns`) read for one query. ``required``: terms
    every match holds (see :func:`required`); the rows of documents without the rarest of them
    are dropped first, so that the work after the first pass over the rows grows with that
    term's documents. ``fetch(rows, numbers)``: the positions lists of the rows ``numbers`` of
    ``rows``, when ``rows`` has no ``positions`` column (read for the phrases' checks only
    where needed). ``df``: each term's document frequency in the index (from ``terms``), when
    the rows are not all of the terms' postings; else counted from them."""

    def __init__(
        self,
        rows: Any,
        tables: set[str],
        columns: set[str],
        required: Sequence[str] = (),
        fetch: Callable[[Any, Any], Any] | None = None,
        df: dict[str, int] | None = None,
    ) -> None:
        self._fetch = fetch
        rows = rows.unify_dictionaries()
        term_codes, term_names = _codes(rows.column("term"))
        counts = np.bincount(term_codes, minlength=len(term_names))
        counted = {t: int(n) for t, n in zip(term_names, counts, strict=True) if n}
        self.df: dict[str, int] = counted if df is None else {t: n for t, n in df.items() if n}
        """Documents per term in the whole index (before the filters)."""
        docs = numbers(rows.column("doc"))
        keep = np.ones(len(term_codes), dtype=bool)
        if tables:
            table_codes, table_names = _codes(rows.column("table"))
            keep &= np.isin(table_codes, [i for i, t in enumerate(table_names) if t in tables])
        if columns:
            column_codes, column_names = _codes(rows.column("column"))
            keep &= np.isin(column_codes, [i for i, c in enumerate(column_names) if c in columns])
        held = [t for t in required if t in counted]
        if len(held) < len(required):  # a required term no document holds: no match
            keep[:] = False
        distinct = None
        rare = term_names.index(min(held, key=lambda t: (counted[t], t))) if held else -1
        mine = keep & (term_codes == rare)
        if held and 3 * np.count_nonzero(mine) < np.count_nonzero(keep):
            # the rarest required term's documents: the rows of other documents are dropped,
            # and these number the rest
            distinct = _distinct(np.sort(docs[mine]))
            keep &= within(docs, distinct)
        if not keep.all():
            rows = pc.filter(rows, flags(keep))
            term_codes, docs = term_codes[keep], docs[keep]
        self._rows = rows
        if distinct is None:
            distinct, self._ids = _numbered(docs)
        else:
            self._ids = np.searchsorted(distinct, docs)
        self._numbers = distinct
        """Each document's number in the index, by its number here (its place in this)."""
        self._size = len(distinct)
        order = np.argsort(term_codes, kind="stable")
        bounds = np.searchsorted(term_codes[order], np.arange(len(term_names) + 1))
        self._term_rows = {
            term: order[bounds[i] : bounds[i + 1]] for i, term in enumerate(term_names)
        }
        self._empty = np.array([], dtype=np.int64)
        self._by_term: dict[str, tuple[Any, Any]] = {}
        self._where: dict[str, Any] = {}

    def numbers(self, docs: Any) -> Any:
        """The index's document numbers of the documents numbered ``docs`` here."""
        return self._numbers[docs]

    def _rows_of(self, term: str) -> Any:
        return self._term_rows.get(term, self._empty)

    def docs_of(self, term: str) -> Any:
        """The sorted numbers of the documents that hold ``term``."""
        where = self._dense(term)
        return self._sorted(term)[0] if where is None else np.flatnonzero(where >= 0)

    def _dense(self, term: str) -> Any:
        """For a term that many documents hold, each document number's row of it (-1: none),
        which answers without sorting; None for the others."""
        rows = self._rows_of(term)
        if 4 * len(rows) <= self._size:
            return None
        where = self._where.get(term)
        if where is None:
            where = np.full(self._size, -1, dtype=np.int64)
            where[self._ids[rows]] = rows
            self._where[term] = where
        return where

    def _sorted(self, term: str) -> tuple[Any, Any]:
        """The sorted numbers of the documents that hold ``term``, and their rows."""
        found = self._by_term.get(term)
        if found is None:
            rows = self._rows_of(term)
            order = np.argsort(self._ids[rows], kind="stable")
            found = (self._ids[rows][order], rows[order])
            self._by_term[term] = found
        return found

    def _rows_at(self, term: str, docs: Any) -> Any:
        """The row of ``term`` of each of the sorted documents ``docs`` (-1: it has none)."""
        where = self._dense(term)
        if where is not None:
            return where[docs]
        ids, rows = self._sorted(term)
        if len(ids) == 0:
            return np.full(len(docs), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(ids, docs), len(ids) - 1)
        return np.where(ids[at] == docs, rows[at], -1)

    def _rows_in(self, term: str, docs: Any) -> Any:
        """The rows of ``term`` of the documents ``docs`` (sorted numbers) that hold it."""
        rows = self._rows_at(term, docs)
        return rows[rows >= 0]

    def holds(self, term: str, docs: Any) -> Any:
        """Which of the sorted documents ``docs`` hold ``term``."""
        return self._rows_at(term, docs) >= 0

    def holding_any(self, terms: Sequence[str]) -> Any:
        """The sorted numbers of the documents that hold one of ``terms``."""
        return _union([self.docs_of(t) for t in terms], self._empty)

    def _holding(self, terms: Sequence[str], within: Any = None) -> Any:
        """The sorted numbers of the documents (of the sorted ``within``, if given) that hold
        every one of ``terms``: the rarest term's documents, kept where the others hold."""
        docs = within
        for term in sorted(terms, key=lambda t: (len(self._rows_of(t)), t)):
            docs = self.docs_of(term) if docs is None else docs[self._rows_at(term, docs) >= 0]
        assert docs is not None
        return docs

    def matches(self, node: Resolved, expanded: dict[str, tuple[str, ...]]) -> Any:
        """The sorted numbers of the documents that match ``node``."""
        if isinstance(node, Term):
            return self.docs_of(node.term)
        if isinstance(node, Prefix):
            return _union([self.docs_of(t) for t in expanded[node.prefix]], self._empty)
        if isinstance(node, Phrase):
            return self._phrase(node)
        if isinstance(node, AnyOf):
            return _union([self.matches(i, expanded) for i in node.items], self._empty)
        assert isinstance(node, AllOf)
        found = None
        for item in node.items:
            if not isinstance(item, Without):
                docs = self.matches(item, expanded)
                found = docs if found is None else np.intersect1d(found, docs, assume_unique=True)
        assert found is not None
        for item in node.items:
            if isinstance(item, Without):
                gone = self.matches(item.item, expanded)
                found = np.setdiff1d(found, gone, assume_unique=True)
        return found

    def _phrase(self, phrase: Phrase, within: Any = None) -> Any:
        """The sorted numbers of the documents (of the sorted ``within``, if given) in which
        ``phrase`` stands."""
        candidates = self._holding([term for term, _ in phrase.terms], within)
        if len(candidates) == 0:
            return candidates
        pairs = None
        for term, offset in phrase.terms:
            rows = self._rows_in(term, candidates)
            lists = self._positions(rows)
            parents = numbers(pc.list_parent_indices(lists))
            values = numbers(pc.list_flatten(lists)).astype(np.int64)
            # (document, position) is unique within a term: no duplicates to remove
            keys = self._ids[rows][parents] * _PAIR + values - offset + _BIAS
            pairs = keys if pairs is None else np.intersect1d(pairs, keys, assume_unique=True)
        assert pairs is not None
        return _distinct(np.sort(pairs // _PAIR))

    def _positions(self, rows: Any) -> Any:
        """The positions lists of ``rows`` (numpy row numbers), from the rows read or fetched."""
        if "positions" in self._rows.column_names:
            return pc.take(self._rows.column("positions"), integers(rows)).combine_chunks()
        if self._fetch is None:
            raise ValueError("phrase postings read without positions and no way to fetch them")
        return self._fetch(self._rows, rows)

    def best(
        self, phrases: Sequence[Phrase], terms: Sequence[str], stats: Stats, limit: int
    ) -> tuple[Any, Any]:
        """The matches of a conjunction of ``terms`` (all of them, sorted) and ``phrases`` that
        can be among the ``limit`` best, with their scores: the documents that hold every term,
        in order of score, have the phrases' positions checked until ``limit`` matches were
        found and no unchecked document can score within :data:`TIE` of the last of them (the
        rest could not rank; :func:`~binlogkit.search.engine.SearchIndex.search` ranks these
        exactly as all the matches)."""
        candidates = self._holding(terms)
        scores = self.scores(candidates, terms, stats)
        found: list[Any] = []
        checked, step = 0, max(FIRST_CHECK, 2 * limit)
        while checked < len(candidates):
            order = _best_first(scores, checked + step + 1)
            docs = np.sort(candidates[order[checked : checked + step]])
            checked += step
            for phrase in phrases:
                docs = self._phrase(phrase, docs)
            found.append(docs)
            held = np.concatenate(found)
            if len(held) >= limit and checked < len(candidates):
                held_scores = scores[np.searchsorted(candidates, held)]
                kth = np.partition(held_scores, len(held) - limit)[len(held) - limit]
                if scores[order[checked]] < kth - TIE:
                    break
            step = _next_step(checked, len(held), limit)
        matched = np.sort(np.concatenate(found)) if found else candidates[:0]
        return matched, scores[np.searchsorted(candidates, matched)]

    def scores(self, matched: Any, terms: Sequence[str], stats: Stats) -> Any:
        """BM25 of each document of ``matched`` (sorted numbers) for the scoring ``terms``."""
        scores = np.zeros(len(matched), dtype=np.float64)
        tf_all = numbers(self._rows.column("tf"))
        length_all = numbers(self._rows.column("length"))
        avg = stats.avg_length
        for term in sorted(terms):
            rows = self._rows_at(term, matched)
            held = rows >= 0
            rows = rows[held]
            weight = idf(stats.docs, self.df.get(term, 0))
            tf, length = tf_all[rows].astype(np.float64), length_all[rows].astype(np.float64)
            norm = 1.0 - B + B * (length / avg if avg else 0.0 * length)
            contribution = weight * tf * (K1 + 1.0) / (tf + K1 * norm)
            if len(rows) == len(matched):
                scores += contribution
            else:
                scores[held] += contribution
        return scores


def postings_columns(tables: set[str], columns: set[str]) -> list[str]:
    """The ``postings`` columns :class:`Postings` needs to match and score, with the filters
    ``tables`` and ``columns`` (``table`` and ``column`` are read only to filter by them)."""
    names = ["term", "doc", "tf", "length"]
    return [*(["table"] if tables else []), *(["column"] if columns else []), *names]


def required(node: Resolved, expanded: dict[str, tuple[str, ...]]) -> set[str]:
    """Terms that every document matching ``node`` holds."""
    if isinstance(node, Term):
        return {node.term}
    if isinstance(node, Phrase):
        return {term for term, _ in node.terms}
    if isinstance(node, Prefix):
        terms = expanded[node.prefix]
        return set(terms) if len(terms) == 1 else set()
    if isinstance(node, AnyOf):
        return set.intersection(*(required(item, expanded) for item in node.items))
    if isinstance(node, AllOf):
        return set().union(
            *(required(i, expanded) for i in node.items if not isinstance(i, Without))
        )
    return set()


def conjunction(node: Resolved) -> list[Phrase] | None:
    """The phrases of ``node`` when it is a phrase or an AND of terms and phrases (at least
    one): a query whose matches :meth:`Postings.best` can find without checking every
    document's positions; None otherwise."""
    items = node.items if isinstance(node, AllOf) else (node,)
    if not all(isinstance(item, Term | Phrase) for item in items):
        return None
    phrases = [item for item in items if isinstance(item, Phrase)]
    return phrases or None


def _codes(column: Any) -> tuple[Any, list[str]]:
    """A text column as numpy codes and the texts they stand for."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if not pa.types.is_dictionary(array.type):
        array = pc.dictionary_encode(array)
    return numbers(array.indices), array.dictionary.to_pylist()


def _next_step(checked: int, found: int, limit: int) -> int:
    """Documents to check in the next round after ``found`` of ``checked`` matched: twice what
    that share of matches needs for the ``limit``-th (four times as many when none matched),
    and no fewer than ``checked`` (so rounds at least double)."""
    if found == 0:
        return 4 * checked
    needed = -(-max(limit - found, 1) * checked // found)  # ceiling
    return max(2 * needed, checked)


def _best_first(scores: Any, count: int) -> Any:
    """The first ``count`` places of ``np.argsort(-scores, kind="stable")`` (by score, highest
    first, equal scores in order of place), without sorting all of ``scores``."""
    if count >= len(scores):
        return np.argsort(-scores, kind="stable")
    least = np.partition(scores, len(scores) - count)[len(scores) - count]
    places = np.flatnonzero(scores >= least)  # the ``count`` best and any equal to the last
    return places[np.argsort(-scores[places], kind="stable")][:count]


def _union(parts: list[Any], empty: Any) -> Any:
    if not parts:
        return empty
    return _distinct(np.sort(np.concatenate(parts)))


def _numbered(docs: Any) -> tuple[Any, Any]:
    """The distinct sorted values of ``docs`` and each one's place among them. A stable sort:
    the rows of each term and file are in order of number already, which it merges."""
    order = np.argsort(docs, kind="stable")
    ordered = docs[order]
    first = np.ones(len(ordered), dtype=bool)
    first[1:] = ordered[1:] != ordered[:-1]
    ids = np.empty(len(docs), dtype=np.int64)
    ids[order] = np.cumsum(first) - 1
    return ordered[first], ids


def within(values: Any, ordered: Any) -> Any:
    """Which of ``values`` are in the sorted array ``ordered``."""
    if len(ordered) == 0:
        return np.zeros(len(values), dtype=bool)
    at = np.minimum(np.searchsorted(ordered, values), len(ordered) - 1)
    return ordered[at] == values


def _distinct(ordered: Any) -> Any:
    """A sorted array without its repeats (np.unique hashes, much slower on large arrays)."""
    if len(ordered) < 2:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
