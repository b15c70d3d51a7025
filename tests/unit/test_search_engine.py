"""The search engine's answers equal a brute-force scan, on an index written without Spark.

The index's Delta tables are written here with delta-rs (``deltalake``), in the
layout the Spark build writes (docs/search.md), from random documents; random
queries of every kind (terms, phrases, prefixes, AND, OR, NOT, filters, CJK,
stop words) are answered by :class:`SearchIndex` and by the brute force of
``search_brute``, which must agree on every hit, its order and its score.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from search_brute import Corpus, Doc

from binlogkit.errors import BinlogError
from binlogkit.search import files, matching, pruning
from binlogkit.search.analysis import ENGLISH_STOP_WORDS, Analyzer
from binlogkit.search.arrow import flags, integers, numbers
from binlogkit.search.engine import SearchIndex, snippet
from binlogkit.search.files import PLACE, Wanted, place
from binlogkit.search.manifest import (
    IndexLayout,
    Manifest,
    MirrorRange,
    Pending,
    Segment,
    doc_bucket,
    doc_number,
    term_bucket,
)
from binlogkit.search.query import QueryError

deltalake = pytest.importorskip("deltalake")

WORDS = (
    *("apple", "apples", "apply", "banana", "band", "bandit", "the", "of", "red", "green"),
    *("blue", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "data", "date"),
    *("привет", "мир", "данные", "東京", "京都", "大阪"),
)
ANALYZER = Analyzer(stem="english", stop_words=ENGLISH_STOP_WORDS)


def _documents(rng: random.Random, count: int) -> dict[Doc, str]:
    docs = {}
    for i in range(count):
        table = rng.choice(["shop.items", "shop.notes"])
        for column in ("name", "body"):
            if rng.random() < 0.9:
                words = [rng.choice(WORDS) for _ in range(rng.randint(0, 12))]
                docs[(table, json.dumps({"id": i}, separators=(",", ":")), column)] = " ".join(
                    words
                )
    return docs


BUCKETS, DOC_BUCKETS = 8, 4
INT32 = pa.int32()


ROW_GROUP = 16
"""Rows per Parquet row group of the test index: many per term, so that the engine's skipping
of row groups (by term, document number and bounds) has something to skip."""


class _Writer:
    """An index in the build's layout written with delta-rs: batch 0 appended whole, each later
    batch appended as a segment (new versions of changed documents, the old ones in
    ``deletes``, document frequency changes in ``terms``), as the Spark build does: documents
    numbered by batch, partition and rank, ``postings`` sorted by term and number."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.live: dict[Doc, tuple[str, int, int, int]] = {}
        """Each live document's text, the batch that wrote it, its length and its number."""
        self.batch = -1
        self.dead = 0

    def apply(self, changes: dict[Doc, str | None]) -> None:
        """One batch: each document of ``changes`` set to its text, or removed (None)."""
        self.batch += 1
        postings: dict[str, list[object]] = {n: [] for n in POSTINGS}
        rows: dict[str, list[object]] = {n: [] for n in DOCS}
        deletes: dict[str, list[object]] = {n: [] for n in DELETES}
        df: Counter[str] = Counter()
        new: dict[Doc, list[tuple[str, int]]] = {}
        for doc, text in changes.items():
            old = self.live.get(doc)
            if old is not None and old[0] == text:
                continue
            if old is not None:
                del self.live[doc]
                for name, value in zip(deletes, (*doc, old[1], old[3]), strict=True):
                    deletes[name].append(value)
                df.subtract({t for t, _ in ANALYZER.terms(old[0])})
            terms = ANALYZER.terms(text or "")
            if terms:
                new[doc] = terms
        ranks: Counter[int] = Counter()
        for doc in sorted(new):  # numbered by partition and rank in it by table, key, column
            table, key, _ = doc
            bucket, terms, text = doc_bucket(table, key, DOC_BUCKETS), new[doc], changes[doc]
            number = doc_number(self.batch, bucket, ranks[bucket])
            ranks[bucket] += 1
            self.live[doc] = (text or "", self.batch, len(terms), number)
            df.update({t for t, _ in terms})
            positions: dict[str, list[int]] = {}
            for term, position in terms:
                positions.setdefault(term, []).append(position)
            for term, places in positions.items():
                bucket_of = term_bucket(term, BUCKETS)
                values = (term, bucket_of, *doc, len(places), places, len(terms), self.batch)
                for name, value in zip(postings, (*values, number), strict=True):
                    postings[name].append(value)
            values = (bucket, *doc, text, len(terms), self.batch, number)
            for name, value in zip(rows, values, strict=True):
                rows[name].append(value)
        self.dead += len(deletes["key"])
        self._append("postings", postings, ["bucket"], ["bucket", "term", "doc"])
        self._append("docs", rows, ["bucket"], ["bucket", "table", "key", "column"])
        terms = sorted(t for t, n in df.items() if n)
        self._append("terms", {"term": terms, "df": [df[t] for t in terms]}, None, ["term"])
        self._append("deletes", deletes, None, [])
        self._manifest()

    def _append(
        self, name: str, columns: dict[str, list[object]], partitions: Any, order: list[str]
    ) -> None:
        types = {"bucket": INT32, "tf": INT32, "length": INT32, "batch": INT32}
        types |= {"positions": pa.list_(INT32), "df": pa.int64(), "doc": pa.int64()}
        data = pa.table({n: pa.array(v, types.get(n, pa.string())) for n, v in columns.items()})
        if order and data.num_rows:
            data = data.sort_by([(n, "ascending") for n in order])
        small = deltalake.WriterProperties(max_row_group_size=ROW_GROUP, write_batch_size=ROW_GROUP)
        deltalake.write_deltalake(
            self.folder / name,
            data,
            partition_by=partitions,
            mode="append",
            writer_properties=small,
        )

    def _manifest(self) -> None:
        manifest = Manifest(
            analyzer=ANALYZER,
            lake="/nowhere",
            columns={"shop.items": ("name", "body"), "shop.notes": ("name", "body")},
            keys={"shop.items": ("id",), "shop.notes": ("id",)},
            app_id="test",
            buckets=BUCKETS,
            doc_buckets=DOC_BUCKETS,
            pending=Pending(self.batch, {"shop.items": MirrorRange(-1, 0, "x", True)}),
        )
        versions = {n: self.batch for n in ("postings", "docs", "terms", "deletes")}
        length = sum(n for _, _, n, _ in self.live.values())
        appended = tuple(Segment(b, b, 0) for b in range(1, self.batch + 1))
        done = manifest.finished(
            versions, docs=len(self.live), length=length, dead=self.dead, tiers=appended
        )
        done.save(IndexLayout(self.folder))


POSTINGS = (
    *("term", "bucket", "table", "key", "column", "tf", "positions", "length", "batch", "doc"),
)
DOCS = ("bucket", "table", "key", "column", "text", "length", "batch", "doc")
DELETES = ("table", "key", "column", "batch", "doc")


def _write_index(folder: Path, docs: dict[Doc, str]) -> None:
    """The index of ``docs`` as the Spark build lays it out, in one batch."""
    _Writer(folder).apply(dict(docs))


def _queries(rng: random.Random, docs: dict[Doc, str]) -> list[str]:
    texts = [t for t in docs.values() if len(t.split()) >= 3]
    out = [
        "apple",
        "apples",
        "東京",
        "京都 大阪",
        "данные",
        "the",
        "ap*",
        "ban*",
        "da*",
        "zzz",
        '"quick brown"',
        '"the fox"',
        '"fox the dog"',
        "apple NOT banana",
        "(red OR blue) fox",
        "fox OR dog table:shop.notes",
        "data column:name",
        "band* NOT (apple OR the)",
    ]
    for _ in range(40):
        words = rng.choice(texts).split()
        at = rng.randrange(len(words) - 1)
        kind = rng.randrange(5)
        if kind == 0:
            out.append(f'"{words[at]} {words[at + 1]}"')
        elif kind == 1:
            out.append(f"{rng.choice(WORDS)} {rng.choice(WORDS)}")
        elif kind == 2:
            out.append(f"{rng.choice(WORDS)} OR {rng.choice(WORDS)} NOT {rng.choice(WORDS)}")
        elif kind == 3:
            out.append(f"{rng.choice(WORDS)[:2]}* column:{rng.choice(['name', 'body'])}")
        else:
            out.append(f'({rng.choice(WORDS)} OR "{words[at]} {words[at + 1]}") {words[-1]}')
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[Doc, str]]:
    folder = tmp_path_factory.mktemp("index")
    docs = _documents(random.Random(7), 400)
    _write_index(folder, docs)
    return folder, docs


def _check(folder: Path, docs: dict[Doc, str], queries: list[str]) -> int:
    """Every query's hits (documents, order, scores) equal the brute force's; how many."""
    engine = SearchIndex(folder)
    corpus = Corpus(docs, ANALYZER)
    assert (engine.stats.docs, engine.stats.length) == (len(corpus.terms), corpus.length)
    compared = 0
    for query in queries:
        expected = corpus.hits(query)
        hits = engine.search(query, limit=100_000)
        assert [(h.table, h.key, h.column) for h in hits] == [d for d, _ in expected], query
        assert [h.score for h in hits] == [s for _, s in expected], query
        compared += len(hits)
    return compared


def test_answers_equal_the_brute_force(built: tuple[Path, dict[Doc, str]]) -> None:
    folder, docs = built
    assert _check(folder, docs, _queries(random.Random(8), docs)) > 2_000


def _changes(rng: random.Random, docs: dict[Doc, str], start: int) -> dict[Doc, str | None]:
    """Texts changed, documents removed, rows moved to a new key, new rows, texts set to what
    they were: one batch's changes."""
    fresh = _documents(rng, 60)
    changes: dict[Doc, str | None] = {}
    for doc in rng.sample(sorted(docs), 150):
        roll = rng.random()
        if roll < 0.3:
            changes[doc] = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 9)))
        elif roll < 0.55:
            changes[doc] = None
        elif roll < 0.8:  # the primary key changed
            changes[doc] = None
            moved = json.dumps({"id": start + len(changes)}, separators=(",", ":"))
            changes[(doc[0], moved, doc[2])] = docs[doc]
        else:
            changes[doc] = docs[doc]
    for (table, key, column), text in fresh.items():
        new_key = json.dumps({"id": start + 1000 + json.loads(key)["id"]}, separators=(",", ":"))
        changes[(table, new_key, column)] = text
    return changes


def _apply(writer: _Writer, docs: dict[Doc, str], changes: dict[Doc, str | None]) -> None:
    """One batch of ``changes`` written, and made to ``docs`` (the live documents)."""
    writer.apply(changes)
    for doc, text in changes.items():
        if text is None:
            docs.pop(doc, None)
        else:
            docs[doc] = text


def test_segments_and_deletes_answer_as_the_live_documents(
    tmp_path: Path, built: tuple[Path, dict[Doc, str]]
) -> None:
    """Batches appended as segments, replaced and removed versions subtracted at query time."""
    rng = random.Random(9)
    docs = _documents(random.Random(7), 400)
    writer = _Writer(tmp_path)
    writer.apply(dict(docs))
    for batch in (1, 2):
        changes = _changes(rng, docs, 10_000 * batch)
        _apply(writer, docs, changes)
        manifest = Manifest.load(IndexLayout(tmp_path))
        assert manifest is not None and manifest.dead > 50 and manifest.segments == batch
        assert _check(tmp_path, docs, _queries(random.Random(batch), docs)) > 1_500


def test_limit_keeps_the_best(built: tuple[Path, dict[Doc, str]]) -> None:
    engine = SearchIndex(built[0])
    everything = engine.search("apple OR fox", limit=100_000)
    assert engine.search("apple OR fox", limit=7) == everything[:7]
    assert (
        engine.search("apple OR fox", limit=7, tables=["shop.notes"])
        == [h for h in everything if h.table == "shop.notes"][:7]
    )


def _random_query(rng: random.Random, docs: dict[Doc, str]) -> str:
    """A query of the kinds the shortcuts handle (terms and phrases ANDed, a phrase alone)
    or leave alone (OR, NOT, prefixes), with filters now and then."""
    texts = [t.split() for t in docs.values() if len(t.split()) >= 3]

    def phrase() -> str:
        words = rng.choice(texts)
        at = rng.randrange(len(words) - 1)
        return '"' + " ".join(words[at : at + rng.randint(2, 3)]) + '"'

    def item() -> str:
        roll = rng.random()
        if roll < 0.4:
            return phrase()
        if roll < 0.75:
            return rng.choice(WORDS)
        if roll < 0.85:
            return f"{rng.choice(WORDS)} OR {phrase()}"
        if roll < 0.95:  # an OR of terms: read by row groups in order of their bounds
            return " OR ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 4)))
        return f"{rng.choice(WORDS)[:2]}*"

    parts = [item() for _ in range(rng.randint(1, 3))]
    if rng.random() < 0.15:
        parts.append(f"NOT {rng.choice(WORDS)}")
    if rng.random() < 0.2:
        parts.append(rng.choice(["table:shop.items", "column:name", "column:body"]))
    return " ".join(parts)


@pytest.fixture(scope="module")
def changed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[Doc, str]]:
    """An index of a first batch and two batches of changes (segments, dead versions)."""
    folder = tmp_path_factory.mktemp("changed")
    docs = _documents(random.Random(7), 400)
    writer, rng = _Writer(folder), random.Random(11)
    writer.apply(dict(docs))
    for batch in (1, 2):
        changes = _changes(rng, docs, 10_000 * batch)
        _apply(writer, docs, changes)
    return folder, docs


@pytest.fixture(scope="module")
def opened(changed: tuple[Path, dict[Doc, str]]) -> tuple[SearchIndex, Corpus]:
    """The changed index opened, and its brute force."""
    return SearchIndex(changed[0]), Corpus(changed[1], ANALYZER)


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    limit=st.integers(1, 12),
    first=st.sampled_from([1, 3, 64]),
    rare=st.sampled_from([1, 4]),
    blocks=st.sampled_from([1, 4]),
)
def test_shortcuts_give_the_exhaustive_hits(
    changed: tuple[Path, dict[Doc, str]],
    opened: tuple[SearchIndex, Corpus],
    seed: int,
    limit: int,
    first: int,
    rare: int,
    blocks: int,
) -> None:
    """The shortcuts give exactly the hits, scores and order of matching every posting, and of
    the brute force, on an index with segments and dead versions: rarest required term first
    (``rare``: 1 reads it first always) and of the others only the row groups of its
    documents; an OR of terms read by row groups in order of their bounds until the rest
    cannot rank (``blocks``: row groups read first); phrases checked in order of score until
    the top hits are known (``first``: the documents checked in the first round)."""
    query = _random_query(random.Random(seed), changed[1])
    engine, corpus = opened
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(matching, "FIRST_CHECK", first)
        patch.setattr(pruning, "RARE", rare)
        patch.setattr(pruning, "FIRST_BLOCKS", blocks)
        pruned = engine.search(query, limit=limit)
    assert pruned == engine.search(query, limit=limit, exhaustive=True), query
    expected = corpus.hits(query)[:limit]
    assert [((h.table, h.key, h.column), h.score) for h in pruned] == expected, query


def test_an_or_of_terms_completes_the_documents_that_can_rank(
    opened: tuple[SearchIndex, Corpus],
) -> None:
    """An OR of terms read by row groups in order of their bounds, one more each round: a
    document seen in some terms' row groups that could still rank has its other terms'
    postings read too (left out, about one query in ten of these ranks wrongly)."""
    engine, _ = opened
    rng = random.Random(5)
    pairs = [rng.sample(sorted(set(WORDS)), 2) for _ in range(100)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pruning, "FIRST_BLOCKS", 1)
        for a, b in pairs:
            query, limit = f"{a} OR {b}", rng.randint(1, 3)
            assert engine.search(query, limit=limit) == engine.search(
                query, limit=limit, exhaustive=True
            ), query


def test_rows_read_with_their_places(opened: tuple[SearchIndex, Corpus]) -> None:
    """Rows read with their places (row groups of one wanted term read whole, the others
    masked) are the wanted terms' rows, found again at those places: each place's row holds
    the same term and document."""
    engine, corpus = opened
    table = engine._table("postings")
    common = sorted(corpus.df, key=lambda t: (-corpus.df[t], t))  # the most common first
    pure = 0
    for terms in (common[:1], common[:3], [common[0], common[-1]]):
        terms = sorted(terms)
        buckets = {term_bucket(t, BUCKETS) for t in terms}
        rows = table.read(["term", "doc"], Wanted("term", terms), {"bucket": buckets}, located=True)
        assert rows.num_rows > ROW_GROUP
        assert set(rows.column("term").to_pylist()) == set(terms)
        file, group, row = place(numbers(rows.column(PLACE)))
        for f, g in set(zip(file.tolist(), group.tolist(), strict=True)):
            at = (file == f) & (group == g)
            found = table.read_groups(["term", "doc"], f, [g]).take(integers(row[at]))
            kept = rows.filter(flags(at))
            assert found.column("term").to_pylist() == kept.column("term").to_pylist()
            assert found.column("doc").to_pylist() == kept.column("doc").to_pylist()
            pure += len(set(kept.column("term").to_pylist())) == 1 and found.num_rows == ROW_GROUP
    assert pure  # some row groups were read whole


def test_files_closed_past_the_limit_answer_the_same(
    changed: tuple[Path, dict[Doc, str]], opened: tuple[SearchIndex, Corpus]
) -> None:
    """With one Parquet file open at a time (each read closes the last one used), queries
    give the hits of the index that keeps its files open."""
    engine, _ = opened
    queries = _queries(random.Random(3), changed[1])[:20]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(files, "OPEN_FILES", 1)
        closing = SearchIndex(changed[0])
        for query in queries:
            assert closing.search(query) == engine.search(query), query
        assert all(len(t._opened) == 1 for t in closing._tables.values())


@settings(max_examples=200, deadline=None)
@given(
    scores=st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0]), min_size=1, max_size=40),
    count=st.integers(1, 45),
)
def test_best_first_is_the_start_of_the_stable_sort(scores: list[float], count: int) -> None:
    """The best places by score (ties in order of place) without a sort of every score."""
    values = np.asarray(scores)
    expected = np.argsort(-values, kind="stable")[:count]
    assert matching._best_first(values, count).tolist() == expected.tolist()


def test_errors() -> None:
    with pytest.raises(BinlogError, match="holds no search index"):
        SearchIndex("/nonexistent/index")


def test_query_errors_and_filters_alone(built: tuple[Path, dict[Doc, str]]) -> None:
    engine = SearchIndex(built[0])
    with pytest.raises(QueryError, match="'\\(' not closed"):
        engine.search("apple (")
    with pytest.raises(BinlogError, match="no term to search for"):
        engine.search("table:shop.items")


def test_snippets_mark_the_terms() -> None:
    text = "Intro words here. " * 20 + "The quick brown fox jumps over the lazy dog. " + "x " * 200
    got = snippet(ANALYZER, text, {"fox", "jump"})
    assert "brown **fox** **jumps** over" in got
    assert got.startswith("…") and got.endswith("…")
    assert len(got) < 200
    assert snippet(ANALYZER, "東京都に行く", {"東京", "京都"}) == "**東京都**に行く"
    assert snippet(ANALYZER, "short text", {"zzz"}) == "short text"


def test_a_query_does_not_load_pandas(tmp_path: Path) -> None:
    """pandas (which ``pa.array``, ``to_numpy``, ``pyarrow.dataset`` and ``combine_chunks`` of
    no chunk import) and ``pyarrow.compute`` (which wraps every Arrow kernel at import; as do
    ``Table.filter`` and ``Array.take``) took longer to load than a query takes: a search
    process answers every kind of query without them, dead versions subtracted, and so
    queries that match nothing (a filter that keeps no row) and a prefix."""
    docs = _documents(random.Random(7), 200)
    writer = _Writer(tmp_path)
    writer.apply(dict(docs))
    writer.apply(_changes(random.Random(3), docs, 10_000))
    assert writer.dead
    queries = [
        "apple",
        "ap* NOT fox",
        '"quick brown" OR dog table:shop.notes column:name',
        '"quick brown" apple',
    ]
    misses = ["apple zzzq", '"dog zzzq"', "zzzq*", "apple table:no.such"]
    code = (
        "import sys\nfrom binlogkit.search.engine import SearchIndex\n"
        f"engine = SearchIndex({str(tmp_path)!r})\n"
        f"hits = [engine.search(q) for q in {queries!r}]\n"
        "assert all(hits), hits\n"
        f"assert not any(engine.search(q) for q in {misses!r})\n"
        "heavy = ('pandas', 'pyarrow.dataset', 'pyarrow.compute', 'pyspark')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
