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
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
from search_brute import Corpus, Doc

from binlogkit.errors import BinlogError
from binlogkit.search.analysis import ENGLISH_STOP_WORDS, Analyzer
from binlogkit.search.engine import SearchIndex, snippet
from binlogkit.search.manifest import IndexLayout, Manifest, MirrorRange, doc_bucket, term_bucket
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


def _write_index(folder: Path, docs: dict[Doc, str]) -> None:
    """The index of ``docs`` as the Spark build lays it out: postings, docs, terms, manifest."""
    buckets, doc_buckets = 8, 4
    postings: dict[str, list[object]] = {
        n: [] for n in ("term", "bucket", "table", "key", "column", "tf", "positions", "length")
    }
    rows: dict[str, list[object]] = {
        n: [] for n in ("bucket", "table", "key", "column", "text", "length")
    }
    df: Counter[str] = Counter()
    for (table, key, column), text in docs.items():
        terms = ANALYZER.terms(text)
        if not terms:
            continue
        positions: dict[str, list[int]] = {}
        for term, position in terms:
            positions.setdefault(term, []).append(position)
        for term, places in positions.items():
            for name, value in zip(
                postings,
                (
                    term,
                    term_bucket(term, buckets),
                    table,
                    key,
                    column,
                    len(places),
                    places,
                    len(terms),
                ),
                strict=True,
            ):
                postings[name].append(value)
            df[term] += 1
        for name, value in zip(
            rows,
            (doc_bucket(table, key, doc_buckets), table, key, column, text, len(terms)),
            strict=True,
        ):
            rows[name].append(value)
    int32 = pa.int32()
    deltalake.write_deltalake(
        folder / "postings",
        pa.table(
            {
                **{n: postings[n] for n in ("term", "table", "key", "column")},
                "bucket": pa.array(postings["bucket"], int32),
                "tf": pa.array(postings["tf"], int32),
                "positions": pa.array(postings["positions"], pa.list_(int32)),
                "length": pa.array(postings["length"], int32),
            }
        ),
        partition_by=["bucket"],
    )
    deltalake.write_deltalake(
        folder / "docs",
        pa.table(
            {
                **rows,
                "bucket": pa.array(rows["bucket"], int32),
                "length": pa.array(rows["length"], int32),
            }
        ),
        partition_by=["bucket"],
    )
    terms = sorted(df)
    deltalake.write_deltalake(
        folder / "terms", pa.table({"term": terms, "df": [df[t] for t in terms]})
    )
    manifest = Manifest(
        analyzer=ANALYZER,
        lake="/nowhere",
        columns={"shop.items": ("name", "body"), "shop.notes": ("name", "body")},
        keys={"shop.items": ("id",), "shop.notes": ("id",)},
        app_id="test",
        buckets=buckets,
        doc_buckets=doc_buckets,
        pending=(0, {"shop.items": MirrorRange(-1, 0, "x", True)}),
    )
    total = sum(rows["length"])  # type: ignore[arg-type]
    manifest.finished({"postings": 0, "docs": 0, "terms": 0}, len(rows["key"]), total).save(
        IndexLayout(folder)
    )


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


def test_answers_equal_the_brute_force(built: tuple[Path, dict[Doc, str]]) -> None:
    folder, docs = built
    engine = SearchIndex(folder)
    corpus = Corpus(docs, ANALYZER)
    compared = 0
    for query in _queries(random.Random(8), docs):
        expected = corpus.hits(query)
        hits = engine.search(query, limit=100_000)
        assert [(h.table, h.key, h.column) for h in hits] == [d for d, _ in expected], query
        assert [h.score for h in hits] == [s for _, s in expected], query
        compared += len(hits)
    assert compared > 2_000


def test_limit_keeps_the_best(built: tuple[Path, dict[Doc, str]]) -> None:
    engine = SearchIndex(built[0])
    everything = engine.search("apple OR fox", limit=100_000)
    assert engine.search("apple OR fox", limit=7) == everything[:7]
    assert (
        engine.search("apple OR fox", limit=7, tables=["shop.notes"])
        == [h for h in everything if h.table == "shop.notes"][:7]
    )


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
