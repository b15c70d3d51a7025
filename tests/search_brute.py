"""The hits of search queries found by brute force: every document analysed and matched
directly against the query, ranked by the same BM25; what the index's answers must equal.

A plain module, not a conftest, so tests in any folder can import it by name.
"""

from __future__ import annotations

from collections import Counter

from binlogkit.search.analysis import Analyzer
from binlogkit.search.bm25 import idf, term_score
from binlogkit.search.query import (
    AllOf,
    AnyOf,
    Phrase,
    Prefix,
    Resolved,
    Term,
    Without,
    parse,
    resolve,
)

Doc = tuple[str, str, str]
"""table, key (JSON text), column"""


class Corpus:
    """Documents analysed once, for any number of brute-force queries."""

    def __init__(self, docs: dict[Doc, str], analyzer: Analyzer) -> None:
        self.analyzer = analyzer
        analysed = {doc: analyzer.terms(text) for doc, text in docs.items()}
        self.terms = {doc: terms for doc, terms in analysed.items() if terms}
        self.names = {doc: Counter(t for t, _ in terms) for doc, terms in self.terms.items()}
        self.pairs = {doc: set(terms) for doc, terms in self.terms.items()}
        self.df: Counter[str] = Counter(t for names in self.names.values() for t in names)
        self.length = sum(len(t) for t in self.terms.values())

    def hits(self, query: str) -> list[tuple[Doc, float]]:
        """The hits of ``query`` by scanning every document: its terms matched directly."""
        parsed = parse(query)
        expr = resolve(parsed.expr, self.analyzer)
        if expr is None or not self.terms:
            return []
        avg = self.length / len(self.terms)
        positive = _scoring(expr, self.df)
        hits = []
        for doc, terms in self.terms.items():
            if parsed.tables and doc[0] not in parsed.tables:
                continue
            if parsed.columns and doc[2] not in parsed.columns:
                continue
            names = self.names[doc]
            if not _matches(expr, self.pairs[doc], names):
                continue
            score = 0.0
            for term in sorted(positive & names.keys()):
                weight = idf(len(self.terms), self.df[term])
                score += term_score(names[term], len(terms), avg, weight)
            hits.append((doc, round(score, 9)))
        return sorted(hits, key=lambda hit: (-hit[1], hit[0]))


def _matches(node: Resolved, pairs: set[tuple[str, int]], terms: Counter[str]) -> bool:
    if isinstance(node, Term):
        return node.term in terms
    if isinstance(node, Prefix):
        return any(t.startswith(node.prefix) for t in terms)
    if isinstance(node, Phrase):
        first = node.terms[0][0]
        return any(
            all((t, p + off) in pairs for t, off in node.terms) for t0, p in pairs if t0 == first
        )
    if isinstance(node, AnyOf):
        return any(_matches(i, pairs, terms) for i in node.items)
    assert isinstance(node, AllOf)
    return all(
        (not _matches(i.item, pairs, terms))
        if isinstance(i, Without)
        else _matches(i, pairs, terms)
        for i in node.items
    )


def _scoring(node: Resolved, vocabulary: Counter[str]) -> set[str]:
    """The terms of ``node`` that score: not under a NOT, prefixes expanded over the corpus."""
    if isinstance(node, Term):
        return {node.term}
    if isinstance(node, Phrase):
        return {t for t, _ in node.terms}
    if isinstance(node, Prefix):
        return {t for t in vocabulary if t.startswith(node.prefix)}
    if isinstance(node, AllOf | AnyOf):
        return set().union(*(_scoring(i, vocabulary) for i in node.items))
    return set()
