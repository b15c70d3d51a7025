"""Answering queries from an index's files, without Spark: pyarrow and delta-rs (``deltalake``).

Each Delta table is opened at the version the manifest names
(:mod:`binlogkit.search.manifest`), so a query sees the last finished batch.
Only the postings of the query's terms are read: their ``bucket`` partitions
(pruned from the Delta log's file list) and, in those files, the row groups
whose term statistics can hold them; no key text: documents are known by their
numbers (``doc``). Postings rows of the document versions ``deletes`` names
(replaced or removed by a later batch, not yet compacted away) are left out.
Document frequencies and prefixes come from the ``terms`` table (each term's
changes, summed). Matches are decided from the postings (phrases from
positions), ranked by BM25 (:mod:`binlogkit.search.bm25`) with ties in order of
table, key and column, and the top hits' keys and texts read from ``docs`` by
number (each from its partition and the row groups whose numbers hold it).

Shortcuts that give the same hits (``exhaustive=True`` leaves them out, and
counts document frequencies from the postings read): an AND reads its rarest
required term first and of the others only the row groups of its documents, an
OR of terms reads row groups in order of their score bounds until the rest
cannot rank (:mod:`binlogkit.search.pruning`); the rows of documents without
the query's rarest required term are dropped before documents are numbered; a
query that is a phrase or an AND of terms and phrases reads no positions at
first, scores the documents that hold all its terms, and checks the phrases of
the best of them (positions read from their row groups only) until the
``limit`` best matches are known
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
from binlogkit.search import pruning
from binlogkit.search.analysis import Analyzer
from binlogkit.search.arrow import flags, integers, numbers
from binlogkit.search.bm25 import Stats
from binlogkit.search.files import PLACE, DeltaFiles, Wanted, concat, place
from binlogkit.search.manifest import IndexLayout, Manifest, number_bucket, term_bucket
from binlogkit.search.matching import (
    TIE,
    Postings,
    conjunction,
    postings_columns,
    required,
    within,
)
from binlogkit.search.pruning import disjunction, top_blocks
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
        manifest.require_numbered(layout)
        self.manifest = manifest
        self.analyzer: Analyzer = manifest.analyzer
        self.stats: Stats = manifest.stats
        self._layout = layout
        self._tables: dict[str, DeltaFiles] = {}
        self._dead: Any = None

    def _table(self, name: str) -> DeltaFiles:
        table = self._tables.get(name)
        if table is None:
            table = DeltaFiles(self._layout.table(name), self.manifest.versions[name])
            self._tables[name] = table
        return table

    def _read_live(
        self,
        wanted: Wanted,
        buckets: set[int],
        columns: list[str],
        *,
        located: bool = False,
    ) -> Any:
        """The ``columns`` of the ``wanted`` rows of ``postings`` in ``buckets``, without the
        rows of dead versions (:data:`CODED` columns as dictionary arrays; ``located``: with
        their places, :data:`~binlogkit.search.files.PLACE`)."""
        coded = [c for c in CODED if c in columns]
        table = self._table("postings")
        rows = table.read(columns, wanted, {"bucket": buckets}, coded, located=located)
        return self.live(rows)

    def live(self, rows: Any) -> Any:
        """``rows`` (with ``doc``) without those of dead versions (``deletes``)."""
        if not self.manifest.dead or rows.num_rows == 0:
            return rows
        if self._dead is None:  # read once
            dead = numbers(self._table("deletes").read(["doc"], Wanted()).column("doc"))
            self._dead = np.unique(dead)
        gone = within(numbers(rows.column("doc")), self._dead)
        return pc.filter(rows, flags(~gone)) if gone.any() else rows

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
        filters = (set(parsed.tables) | set(tables), set(parsed.columns) | set(columns))
        shortcut = not exhaustive and limit >= 1
        phrases = conjunction(expr) if shortcut else None
        wanted = sorted(_terms(expr, expanded, negated=True))
        df = self._df(wanted) if shortcut else None
        either = disjunction(expr, expanded) if shortcut else None
        if either is not None and df is not None:
            postings_files, buckets = self._table("postings"), self._buckets
            rows = top_blocks(
                postings_files, self.live, self.stats, either, df, buckets, filters, limit
            )
        else:
            names = postings_columns(*filters)
            rows = self._postings(expr, expanded, wanted, df, names, located=phrases is not None)
        postings = Postings(
            rows,
            *filters,
            sorted(required(expr, expanded)) if shortcut else (),
            _Positions(self._table("postings")),
            df,
        )
        if phrases is None:
            matched = postings.matches(expr, expanded)
            scores = postings.scores(matched, sorted(marked), self.stats)
        else:
            matched, scores = postings.best(phrases, sorted(marked), self.stats, limit)
        return [
            Hit(t, k, c, score, snippet(self.analyzer, text, marked))
            for (t, k, c, text), score in self._top(postings, matched, scores, limit)
        ]

    def _df(self, terms: list[str]) -> dict[str, int]:
        """Each of ``terms``' document frequency in the index (``terms``: changes summed)."""
        return _summed(self._table("terms").read(["term", "df"], Wanted("term", terms)))

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
        terms = tuple(sorted(t for t in _summed(rows) if t.startswith(prefix)))
        if len(terms) > MAX_EXPANSIONS:
            raise BinlogError(
                f"prefix {prefix}* matches {len(terms):,} terms, more than {MAX_EXPANSIONS:,}",
                hint="make the prefix longer",
            )
        return terms

    def _postings(
        self,
        expr: Resolved,
        expanded: dict[str, tuple[str, ...]],
        wanted: list[str],
        df: dict[str, int] | None,
        names: list[str],
        *,
        located: bool,
    ) -> Any:
        """The ``names`` columns of the postings rows of the terms ``wanted`` (all ``expr``
        needs), with ``positions`` for phrases, or (``located``) where each row is, to read the
        positions of some of them later. With ``df`` (not exhaustive), when every match holds a term
        :data:`~binlogkit.search.pruning.RARE` times rarer than another, that term's rows are
        read first, and of the others' only the rows (and row groups) of its documents."""
        if not located and any(isinstance(node, Phrase) for node in _walk(expr)):
            names = [*names, "positions"]
        need = sorted(required(expr, expanded)) if df is not None else []
        rare = min(need, key=lambda t: (df.get(t, 0), t)) if df is not None and need else None
        if (
            rare is None
            or df is None
            or max(df.get(t, 0) for t in wanted) < pruning.RARE * df.get(rare, 0)
        ):
            return self._read_live(
                Wanted("term", wanted), self._buckets(wanted), names, located=located
            )
        first = self._read_live(
            Wanted("term", [rare]), self._buckets([rare]), names, located=located
        )
        others = [t for t in wanted if t != rare]
        if not others:
            return first
        held = np.unique(numbers(first.column("doc")))
        rest = self._read_live(
            Wanted("term", others, docs=held),
            self._buckets(others),
            names,
            located=located,
        )
        return concat([first, rest])

    def _buckets(self, terms: Sequence[str]) -> set[int]:
        return {term_bucket(t, self.manifest.buckets) for t in terms}

    def _top(
        self, postings: Postings, matched: Any, scores: Any, limit: int
    ) -> list[tuple[tuple[str, str, str, str], float]]:
        """The ``limit`` best documents with their texts: by score rounded to 9 decimals, then
        table, key, column. Only those within rounding of the ``limit``-th raw score are
        rounded; of those, only the ones whose rounded score ties with the ``limit``-th have
        their keys read first (from ``docs``, by number) to choose among them."""
        if len(matched) == 0:
            return []
        if len(matched) > limit:
            cut = np.partition(scores, len(scores) - limit)[len(scores) - limit]
            near = scores >= cut - TIE
            matched, scores = matched[near], scores[near]
        rounded = {
            n: round(float(s), 9)
            for n, s in zip(postings.numbers(matched).tolist(), scores, strict=True)
        }
        last = sorted(rounded.values(), reverse=True)[min(limit, len(rounded)) - 1]
        chosen = [n for n, s in rounded.items() if s > last]
        tied = [n for n, s in rounded.items() if s == last]
        if len(chosen) + len(tied) > limit:  # the ties at the cut: the first by table, key, column
            keys = self._docs(tied, ["table", "key", "column"])
            tied = sorted(tied, key=lambda n: keys[n])[: limit - len(chosen)]
        found = self._docs([*chosen, *tied], ["table", "key", "column", "text"])
        ranked = sorted((-rounded[n], found[n]) for n in [*chosen, *tied])
        return [(doc, -score) for score, doc in ranked]

    def _docs(self, docs: list[int], names: list[str]) -> dict[int, tuple[Any, ...]]:
        """The ``names`` columns of the ``docs`` rows of document numbers ``docs``, read from
        each one's partition (its number names it) and there the row groups whose numbers can
        hold them."""
        ordered = np.unique(np.asarray(docs, dtype=np.int64))
        partitions = number_bucket(ordered)
        found = {}
        for bucket in np.unique(partitions).tolist():
            mine = ordered[partitions == bucket].tolist()
            rows = self._table("docs").read(
                [*names, "doc"], Wanted("doc", mine), {"bucket": {bucket}}
            )
            for values in zip(*(rows.column(n).to_pylist() for n in [*names, "doc"]), strict=True):
                found[values[-1]] = values[:-1]
        return found


class _Positions:
    """Reads the positions lists of postings rows read with their places, a row group once
    (the row groups a call needs of a file in one read)."""

    def __init__(self, table: DeltaFiles) -> None:
        self._table = table
        self._groups: dict[tuple[int, int], Any] = {}

    def __call__(self, rows: Any, picked: Any) -> Any:
        """The positions lists of the rows ``picked`` (numpy row numbers) of ``rows``."""
        file, group, row = place(numbers(rows.column(PLACE))[picked])
        order = np.lexsort((group, file))
        ends = np.flatnonzero(np.diff(file[order]) | np.diff(group[order])) + 1
        runs = [run for run in np.split(order, ends) if len(run)]
        self._read({(int(file[run[0]]), int(group[run[0]])) for run in runs})
        parts = [
            pc.take(self._groups[int(file[run[0]]), int(group[run[0]])], integers(row[run]))
            for run in runs
        ]
        inverse = np.empty(len(order), dtype=np.int64)
        inverse[order] = np.arange(len(order))
        if not parts:
            return self._table.schema.empty_table().column("positions").combine_chunks()
        return pc.take(pa.concat_arrays(parts), integers(inverse))

    def _read(self, places: set[tuple[int, int]]) -> None:
        """Reads the positions of the row groups (file, group) ``places`` not read yet."""
        by_file: dict[int, list[int]] = {}
        for file, group in sorted(places - self._groups.keys()):
            by_file.setdefault(file, []).append(group)
        for file, groups in by_file.items():
            lists = self._table.read_groups(["positions"], file, groups).column(0)
            start = 0
            for group, size in zip(groups, self._table.group_sizes(file, groups), strict=True):
                self._groups[file, group] = lists.slice(start, size).combine_chunks()
                start += size


def _summed(rows: Any) -> dict[str, int]:
    """The ``terms`` rows (``term``, ``df`` changes) summed per term: the terms held."""
    names = pc.dictionary_encode(rows.column("term")).combine_chunks()
    codes = numbers(names.indices)
    df = np.bincount(codes, weights=numbers(rows.column("df")), minlength=len(names.dictionary))
    return {
        t: int(n) for t, n in zip(names.dictionary.to_pylist(), df.tolist(), strict=True) if n > 0
    }


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
