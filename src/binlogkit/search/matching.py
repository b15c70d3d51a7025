"""A query's postings as arrays: documents numbered, terms matched and scored with numpy.

The postings of a query's terms (rows ``term, table, key, column, tf, length``
and, for phrases, ``positions``) are numbered by document once; each term's
documents are then a sorted array of numbers, AND, OR and NOT are set
operations on those, a phrase is an intersection of (document, position -
offset) pairs, and BM25 adds each scoring term's contribution per document in
the order of the terms (the order :mod:`binlogkit.search.bm25` is defined in).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow.compute as pc

from binlogkit.search.arrow import integers, numbers, string, strings
from binlogkit.search.bm25 import K1, B, Stats, idf
from binlogkit.search.query import AllOf, AnyOf, Phrase, Prefix, Resolved, Term, Without

__all__ = ["Postings"]

SEPARATOR = "\x1f"
"""Joins a document's table and column."""
_PAIR = 1 << 32
"""(document, position) pairs as one int64: document * _PAIR + position - offset + _BIAS."""
_BIAS = 1 << 31

Doc = tuple[str, str, str]


class Postings:
    """The postings ``rows`` (a pyarrow Table) read for one query."""

    def __init__(self, rows: Any, tables: set[str], columns: set[str]) -> None:
        counts = pc.value_counts(rows.column("term")).to_pylist()
        self.df: dict[str, int] = {c["values"]: c["counts"] for c in counts}
        """Documents per term in the whole index (before the filters)."""
        if tables:
            rows = rows.filter(pc.is_in(rows.column("table"), strings(sorted(tables))))
        if columns:
            rows = rows.filter(pc.is_in(rows.column("column"), strings(sorted(columns))))
        self._rows = rows
        # a document's number: its key's code and its (table, column) pair's code together
        keys = pc.dictionary_encode(rows.column("key")).combine_chunks()
        places = pc.dictionary_encode(
            pc.binary_join_element_wise(
                rows.column("table"), rows.column("column"), string(SEPARATOR)
            )
        ).combine_chunks()
        width = max(1, len(places.dictionary))
        self._keys, self._places, self._width = keys.dictionary, places.dictionary, width
        key_codes = numbers(keys.indices).astype(np.int64)
        self._ids = key_codes * width + numbers(places.indices)
        self._size = len(keys.dictionary) * width
        terms = pc.dictionary_encode(rows.column("term")).combine_chunks()
        codes = numbers(terms.indices)
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(len(terms.dictionary) + 1))
        self._term_rows = {
            term: order[bounds[i] : bounds[i + 1]]
            for i, term in enumerate(terms.dictionary.to_pylist())
        }
        self._empty = np.array([], dtype=np.int64)

    def doc(self, number: int) -> Doc:
        key, place = divmod(number, self._width)
        table, column = self._places[place].as_py().split(SEPARATOR)
        return (table, self._keys[key].as_py(), column)

    def _rows_of(self, term: str) -> Any:
        return self._term_rows.get(term, self._empty)

    def docs_of(self, term: str) -> Any:
        """The sorted numbers of the documents that hold ``term``."""
        return np.sort(self._ids[self._rows_of(term)])

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

    def _phrase(self, phrase: Phrase) -> Any:
        candidates = None
        for term, _ in phrase.terms:
            docs = self.docs_of(term)
            candidates = docs if candidates is None else np.intersect1d(candidates, docs, True)
        assert candidates is not None
        if len(candidates) == 0:
            return candidates
        positions = self._rows.column("positions")
        pairs = None
        for term, offset in phrase.terms:
            rows = self._rows_of(term)
            rows = rows[np.isin(self._ids[rows], candidates)]
            lists = positions.take(integers(rows)).combine_chunks()
            parents = numbers(pc.list_parent_indices(lists))
            values = numbers(pc.list_flatten(lists)).astype(np.int64)
            # (document, position) is unique within a term: no duplicates to remove
            keys = self._ids[rows][parents] * _PAIR + values - offset + _BIAS
            pairs = keys if pairs is None else np.intersect1d(pairs, keys, assume_unique=True)
        assert pairs is not None
        return _distinct(np.sort(pairs // _PAIR))

    def scores(self, matched: Any, terms: Sequence[str], stats: Stats) -> Any:
        """BM25 of each document of ``matched`` (in its order) for the scoring ``terms``."""
        scores = np.zeros(self._size, dtype=np.float64)
        tf_all = numbers(self._rows.column("tf")).astype(np.float64)
        length_all = numbers(self._rows.column("length")).astype(np.float64)
        avg = stats.avg_length
        for term in sorted(terms):
            rows = self._rows_of(term)
            rows = rows[np.isin(self._ids[rows], matched)]
            weight = idf(stats.docs, self.df.get(term, 0))
            tf, length = tf_all[rows], length_all[rows]
            norm = 1.0 - B + B * (length / avg if avg else 0.0 * length)
            scores[self._ids[rows]] += weight * tf * (K1 + 1.0) / (tf + K1 * norm)
        return scores[matched]


def _union(parts: list[Any], empty: Any) -> Any:
    if not parts:
        return empty
    return _distinct(np.sort(np.concatenate(parts)))


def _distinct(ordered: Any) -> Any:
    """A sorted array without its repeats (np.unique hashes, much slower on large arrays)."""
    if len(ordered) < 2:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
