"""Answering queries from an index's files, without Spark: pyarrow and delta-rs (``deltalake``).

Each Delta table is opened at the version the manifest names
(:mod:`binlogkit.search.manifest`), so a query sees the last finished batch.
Only the postings of the query's terms are read: their ``bucket`` partitions
(pruned from the Delta log's file list) and, in those files, the row groups
whose term statistics can hold them. Postings and docs rows of the document
versions ``deletes`` names (replaced or removed by a later batch, not yet
compacted away) are left out. A prefix is expanded from the ``terms`` table
(each term's document frequency changes, summed). Matches are decided from the
postings (phrases from positions), ranked by BM25 (:mod:`binlogkit.search.bm25`)
with ties in order of table, key and column, and the top hits' texts read from
``docs`` (per partition, with that partition's keys) for their snippets.

Shortcuts that give the same hits (``exhaustive=True`` leaves them out): the rows
of documents without the query's rarest required term are dropped before
documents are numbered; a query that is a phrase or an AND of terms and phrases
reads no positions at first, scores the documents that hold all its terms, and
checks the phrases of the best of them (positions read from their row groups
only) until the ``limit`` best matches are known
(:meth:`~binlogkit.search.matching.Postings.best`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import BinlogError
from binlogkit.search import kernels as pc
from binlogkit.search.analysis import Analyzer
from binlogkit.search.arrow import flags, integers, numbers, string, truths
from binlogkit.search.bm25 import Stats
from binlogkit.search.files import PLACE, DeltaFiles, Wanted
from binlogkit.search.manifest import IndexLayout, Manifest, doc_bucket, term_bucket
from binlogkit.search.matching import TIE, Doc, Postings, conjunction, required
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

__all__ = ["MAX_EXPANSIONS", "Hit", "SearchIndex", "search", "snippet"]

MAX_EXPANSIONS = 1024
"""A prefix that matches more index terms is an error (as Lucene's clause limit)."""

SNIPPET_CHARS = 160
MARKS = ("**", "**")
VERSION = ["table", "key", "column", "batch"]
"""A document version: the document and the batch that wrote it."""
SEPARATOR = "\x1f"
"""Joins the parts of a document version into one text."""
CODED = ["term", "table", "column"]
"""Columns of few distinct texts, read as dictionary arrays."""


@frozen_dataclass
class Hit:
    """A matching document: its table, row key (JSON text of the primary-key values), column,
    BM25 score and a snippet of its text with the query's terms marked."""

    table: str
    key: str
    column: str
    score: float
    snippet: str

    def to_json(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "key": json.loads(self.key),
            "column": self.column,
            "score": self.score,
            "snippet": self.snippet,
        }


def search(
    index: str | Path,
    query: str,
    *,
    limit: int = 10,
    tables: Sequence[str] = (),
    columns: Sequence[str] = (),
) -> list[Hit]:
    """The ``limit`` best hits of ``query`` in the index folder ``index`` (see
    :class:`SearchIndex`)."""
    return SearchIndex(index).search(query, limit=limit, tables=tables, columns=columns)


class SearchIndex:
    """An index folder opened at its last finished batch, for any number of queries."""

    def __init__(self, path: str | Path) -> None:
        layout = IndexLayout(Path(path))
        manifest = Manifest.load(layout)
        if manifest is None or manifest.batch < 0:
            raise BinlogError(
                f"{path} holds no search index (no finished batch in {layout.manifest})",
                hint="build it with: binlogkit spark index SOURCE --to INDEX --columns ...",
            )
        self.manifest = manifest
        self.analyzer: Analyzer = manifest.analyzer
        self.stats: Stats = manifest.stats
        self._layout = layout
        self._tables: dict[str, DeltaFiles] = {}
        self._dead: tuple[Any, Any] | None = None

    def _table(self, name: str) -> DeltaFiles:
        table = self._tables.get(name)
        if table is None:
            table = DeltaFiles(self._layout.table(name), self.manifest.versions[name])
            self._tables[name] = table
        return table

    def _read_live(
        self,
        name: str,
        wanted: Wanted,
        buckets: set[int],
        columns: list[str],
        *,
        located: bool = False,
    ) -> Any:
        """The ``columns`` of the ``wanted`` rows of ``postings`` or ``docs`` in ``buckets``,
        without the rows of dead versions (:data:`CODED` columns as dictionary arrays;
        ``located``: with their places, :data:`~binlogkit.search.files.PLACE`)."""
        partitions = {"bucket": buckets}
        coded = [c for c in CODED if c in columns]
        table = self._table(name)
        if not self.manifest.dead:
            return table.read(columns, wanted, partitions, coded, located=located)
        rows = table.read([*columns, "batch"], wanted, partitions, coded, located=located)
        dead, dead_keys = self._deletes()
        suspect = np.flatnonzero(truths(pc.is_in(rows.column("key"), value_set=dead_keys)))
        if len(suspect) == 0:
            return rows
        versions = _version(pc.take(rows, integers(suspect)))
        keep = np.ones(rows.num_rows, dtype=bool)
        keep[suspect[truths(pc.is_in(versions, value_set=dead))]] = False
        return pc.filter(rows, flags(keep))

    def _deletes(self) -> tuple[Any, Any]:
        """The dead versions (``deletes``, read once, as :func:`_version` texts) and their
        distinct keys."""
        if self._dead is None:
            dead = self._table("deletes").read(VERSION, Wanted())
            keys = pc.unique(dead.column("key").combine_chunks())
            self._dead = (_version(dead).combine_chunks(), keys)
        return self._dead

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        tables: Sequence[str] = (),
        columns: Sequence[str] = (),
        exhaustive: bool = False,
    ) -> list[Hit]:
        """The ``limit`` best hits of ``query``; ``tables`` (``db.t``) and ``columns`` restrict
        them as ``table:`` and ``column:`` in the query do. ``exhaustive``: every posting of
        the query's terms matched and scored, without the shortcuts (rarest required term
        first, phrases checked in order of score only until the top hits are known) that give
        the same hits."""
        parsed = parse(query)
        if parsed.expr is None:
            raise BinlogError(f"query {query!r} has filters but no term to search for")
        expr = resolve(parsed.expr, self.analyzer)
        if expr is None:
            return []
        expanded = self._expand(expr)
        marked = _terms(expr, expanded, negated=False)
        phrases = None if exhaustive or limit < 1 else conjunction(expr)
        rows = self._postings(expr, expanded, located=phrases is not None)
        postings = Postings(
            rows,
            set(parsed.tables) | set(tables),
            set(parsed.columns) | set(columns),
            () if exhaustive else sorted(required(expr, expanded)),
            _Positions(self._table("postings")),
        )
        if phrases is None:
            matched = postings.matches(expr, expanded)
            scores = postings.scores(matched, sorted(marked), self.stats)
        else:
            matched, scores = postings.best(phrases, sorted(marked), self.stats, limit)
        ranked = _top(postings, matched, scores, limit)
        texts = self._texts([doc for doc, _ in ranked])
        return [
            Hit(doc[0], doc[1], doc[2], score, snippet(self.analyzer, texts[doc], marked))
            for doc, score in ranked
        ]

    def _expand(self, expr: Resolved) -> dict[str, tuple[str, ...]]:
        """Each prefix of ``expr`` with the index terms it matches."""
        found: dict[str, tuple[str, ...]] = {}
        for node in _walk(expr):
            if isinstance(node, Prefix) and node.prefix not in found:
                found[node.prefix] = self._terms_with(node.prefix)
        return found

    def _terms_with(self, prefix: str) -> tuple[str, ...]:
        end = prefix[:-1] + chr(ord(prefix[-1]) + 1) if ord(prefix[-1]) < 0x10FFFF else None
        rows = self._table("terms").read(["term", "df"], Wanted("term", start=prefix, stop=end))
        names = pc.dictionary_encode(rows.column("term")).combine_chunks()
        codes = numbers(names.indices)
        df = np.bincount(codes, weights=numbers(rows.column("df")), minlength=len(names.dictionary))
        held = pc.filter(names.dictionary, flags(df > 0)).to_pylist()
        terms = tuple(sorted(t for t in held if t.startswith(prefix)))
        if len(terms) > MAX_EXPANSIONS:
            raise BinlogError(
                f"prefix {prefix}* matches {len(terms):,} terms, more than {MAX_EXPANSIONS:,}",
                hint="make the prefix longer",
            )
        return terms

    def _postings(
        self, expr: Resolved, expanded: dict[str, tuple[str, ...]], *, located: bool
    ) -> Any:
        """The postings rows of every term ``expr`` needs: ``positions`` for phrases, or
        (``located``) where each row is, to read the positions of some of them later."""
        wanted = sorted(_terms(expr, expanded, negated=True))
        buckets = {term_bucket(t, self.manifest.buckets) for t in wanted}
        names = ["term", "table", "key", "column", "tf", "length"]
        if not located and any(isinstance(node, Phrase) for node in _walk(expr)):
            names.append("positions")
        wanted_rows = Wanted("term", wanted)
        return self._read_live("postings", wanted_rows, buckets, names, located=located)

    def _texts(self, docs: list[Doc]) -> dict[Doc, str]:
        if not docs:
            return {}
        keys: dict[int, set[str]] = {}
        for t, k, _ in docs:
            keys.setdefault(doc_bucket(t, k, self.manifest.doc_buckets), set()).add(k)
        names = ["table", "key", "column", "text"]
        wanted = set(docs)
        found = {}
        # one bucket at a time, with its own keys: the keys of all buckets would fall in the
        # key range of most row groups of each bucket's file (keys are spread by hash)
        for bucket, held in sorted(keys.items()):
            rows = self._read_live("docs", Wanted("key", sorted(held)), {bucket}, names)
            for t, k, c, text in zip(*(rows.column(n).to_pylist() for n in names), strict=True):
                if (t, k, c) in wanted:
                    found[(t, k, c)] = text
        return found


class _Positions:
    """Reads the positions lists of postings rows read with their places, a row group once."""

    def __init__(self, table: DeltaFiles) -> None:
        self._table = table
        self._groups: dict[tuple[int, int], Any] = {}

    def __call__(self, rows: Any, picked: Any) -> Any:
        """The positions lists of the rows ``picked`` (numpy row numbers) of ``rows``."""
        file, group, row = (numbers(rows.column(name))[picked] for name in PLACE)
        order = np.lexsort((group, file))
        ends = np.flatnonzero(np.diff(file[order]) | np.diff(group[order])) + 1
        parts = []
        for run in np.split(order, ends):
            if len(run):
                lists = self._group(int(file[run[0]]), int(group[run[0]]))
                parts.append(pc.take(lists, integers(row[run])))
        inverse = np.empty(len(order), dtype=np.int64)
        inverse[order] = np.arange(len(order))
        if not parts:
            return self._table.schema.empty_table().column("positions").combine_chunks()
        return pc.take(pa.concat_arrays(parts), integers(inverse))

    def _group(self, file: int, group: int) -> Any:
        lists = self._groups.get((file, group))
        if lists is None:
            lists = self._table.read_group(["positions"], file, group).column(0).combine_chunks()
            self._groups[(file, group)] = lists
        return lists


def _version(rows: Any) -> Any:
    """Each row's document version (table, key, column, batch) as one text."""
    parts = [pc.cast(rows.column(n), pa.string()) for n in VERSION[:3]]
    batch = pc.cast(rows.column("batch"), pa.string())
    return pc.binary_join_element_wise(*parts, batch, string(SEPARATOR))


def _walk(node: Resolved, *, negated: bool = True) -> Iterator[Resolved]:
    """``node`` and the nodes under it (``negated``: those under a NOT too)."""
    yield node
    if isinstance(node, AllOf | AnyOf):
        for item in node.items:
            yield from _walk(item, negated=negated)
    elif isinstance(node, Without) and negated:
        yield from _walk(node.item)


def _terms(expr: Resolved, expanded: dict[str, tuple[str, ...]], *, negated: bool) -> set[str]:
    """The index terms of ``expr``, prefixes expanded: all of them (``negated``) or those that
    score (not under a NOT)."""
    out: set[str] = set()
    for node in _walk(expr, negated=negated):
        if isinstance(node, Term):
            out.add(node.term)
        elif isinstance(node, Phrase):
            out.update(term for term, _ in node.terms)
        elif isinstance(node, Prefix):
            out.update(expanded[node.prefix])
    return out


def _top(postings: Postings, matched: Any, scores: Any, limit: int) -> list[tuple[Doc, float]]:
    """The ``limit`` best documents: by score rounded to 9 decimals, then table, key, column.
    Only those within rounding of the ``limit``-th raw score are rounded and sorted."""
    if len(matched) == 0:
        return []
    if len(matched) > limit:
        cut = np.partition(scores, len(scores) - limit)[len(scores) - limit]
        near = scores >= cut - TIE
        matched, scores = matched[near], scores[near]
    ranked = sorted(
        (postings.doc(int(n)), round(float(s), 9)) for n, s in zip(matched, scores, strict=True)
    )
    ranked.sort(key=lambda item: -item[1])
    return ranked[:limit]


def snippet(analyzer: Analyzer, text: str, terms: set[str], marks: tuple[str, str] = MARKS) -> str:
    """About :data:`SNIPPET_CHARS` characters of ``text`` around its first token of ``terms``,
    each such token inside marked; ``…`` where the text goes on."""
    tokens = analyzer.tokens(text)
    hits = [t for t in tokens if t.term in terms]
    first = hits[0].start if hits else 0
    start = max(0, first - SNIPPET_CHARS // 3)
    starts = [t.start for t in tokens if start <= t.start <= first]
    start = starts[0] if start and starts else start
    end = min(len(text), start + SNIPPET_CHARS)
    ends = [t.end for t in tokens if t.end <= end and t.end > first]
    end = ends[-1] if end < len(text) and ends else end
    out, at = [], start
    spans: list[list[int]] = []
    for s, e in sorted({(t.start, t.end) for t in hits if t.start >= start and t.end <= end}):
        if spans and s < spans[-1][1]:  # overlapping bigrams: one marked span
            spans[-1][1] = max(spans[-1][1], e)
        else:
            spans.append([s, e])
    for s, e in spans:
        out.append(text[at:s])
        out.append(marks[0] + text[s:e] + marks[1])
        at = e
    out.append(text[at:end])
    body = "".join(out)
    return ("…" if start > 0 else "") + body + ("…" if end < len(text) else "")
