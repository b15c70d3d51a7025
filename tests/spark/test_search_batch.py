"""Batch queries on Spark (``batch_search``, ``binlogkit spark search``) give each query the hits
of ``binlogkit search``: same documents, order, scores and snippets.

The index is built by ``binlogkit spark index`` from a lake's mirror written here with Spark
(random Latin, Cyrillic and CJK texts, stop words, stemming), then changed and indexed again
without compaction, so the queries read segments and subtract dead versions.
"""

from __future__ import annotations

import json
import random
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from cli_run import invoke
from search_brute import Corpus

from binlogkit.errors import BinlogError
from binlogkit.search.analysis import Analyzer
from binlogkit.search.engine import SearchIndex
from binlogkit.search.manifest import (
    BATCH_SHIFT,
    IndexLayout,
    Manifest,
    Pending,
    Segment,
    number_bucket,
)

pytest.importorskip("delta")

from binlogkit.spark.lake.tables import create_table
from binlogkit.spark.search import queries as search_queries
from binlogkit.spark.search.batch import CRASH_ENV
from binlogkit.spark.search.build import index
from binlogkit.spark.search.queries import batch_search

WORDS = (
    *("apple", "apples", "apply", "banana", "band", "bandit", "the", "of", "red", "green"),
    *("blue", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "data", "date"),
    *("привет", "мир", "данные", "東京", "京都", "大阪"),
)
TABLE = "shop.items"

QUERIES = (
    *("apple", "apples", "東京", "京都 大阪", "данные", "the", "ap*", "ban*", "zzz"),
    *('"quick brown"', '"fox the dog"', '"fox fox"', "apple NOT banana", "(red OR blue) fox"),
    *("fox OR dog column:name", "band* NOT (apple OR the)", "red AND green AND blue"),
    "data OR date OR dog table:shop.items",
)


def _text(rng: random.Random) -> str | None:
    if rng.random() < 0.05:
        return None
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 14)))


def _lake(spark: Any, folder: Path, rng: random.Random) -> str:
    """A lake with one mirror, ``shop.items (id, name, body)``, of 300 random rows."""
    from pyspark.sql.types import IntegerType, StringType, StructField, StructType

    schema = StructType(
        [
            StructField("id", IntegerType(), False),
            StructField("name", StringType(), True),
            StructField("body", StringType(), True),
        ]
    )
    mirror = str(folder / "shop" / "items" / "mirror")
    create_table(spark, mirror, schema)
    rows = [(i, _text(rng), _text(rng)) for i in range(300)]
    spark.createDataFrame(rows, schema).write.format("delta").mode("append").save(mirror)
    meta = folder / "_binlogkit"
    meta.mkdir(parents=True, exist_ok=True)
    (meta / "snapshot.json").write_text(json.dumps({"tables": {TABLE: {"key": ["id"]}}}))
    return mirror


@pytest.fixture(scope="module")
def built(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index (its lake beside it: ``lake``) of a mirror changed twice after its build: two
    segments, dead versions of the base's documents and of the first segment's."""
    from delta.tables import DeltaTable

    rng = random.Random(18)
    root = tmp_path_factory.mktemp("search")
    lake, folder = root / "lake", root / "index"
    mirror = _lake(spark, lake, rng)
    kept = {"once": True, "spark": spark, "compact": False}
    index(lake, folder, tables=[TABLE], stem="english", stop_words=True, **kept)
    table = DeltaTable.forPath(spark, mirror)
    table.update("id % 7 = 0", {"body": "'the quick brown fox jumps over the lazy dog'"})
    table.delete("id % 11 = 0")
    index(lake, folder, **kept)
    table.update("id % 5 = 1 OR id % 7 = 0", {"name": "'red apple data'"})
    table.update("id % 14 = 0", {"body": "'red fox data'"})  # batch 1's versions replaced
    table.update("id % 13 = 0", {"id": "id + 1000"})
    assert index(lake, folder, **kept).batches == 1
    return folder


def _expected(folder: Path, query: str, limit: int, **filters: Any) -> list[tuple[Any, ...]]:
    return _expected_of(SearchIndex(folder), query, limit, **filters)


def _expected_of(
    engine: SearchIndex, query: str, limit: int = 1000, **filters: Any
) -> list[tuple[Any, ...]]:
    hits = engine.search(query, limit=limit, **filters)
    return [(h.table, h.key, h.column, h.score, rank, h.snippet) for rank, h in enumerate(hits, 1)]


def test_batch_queries_equal_the_engine(spark: Any, built: Path) -> None:
    engine = SearchIndex(built)
    assert engine.manifest.segments == 2 and engine.manifest.dead > 50
    asked = [
        {"id": f"q{i}", "query": q, "limit": 1000 if i % 3 else 4} for i, q in enumerate(QUERIES)
    ]
    asked.append({"id": "filtered", "query": "apple OR fox", "table": TABLE, "column": ["body"]})
    asked.append({"id": "both", "query": "fox", "column": ["name", "body"], "limit": 7})
    schema = "id string, query string, table string, column array<string>, limit int"
    rows = [tuple(q.get(n) for n in ("id", "query", "table", "column", "limit")) for q in asked]
    hits = batch_search(spark, built, spark.createDataFrame(rows, schema)).collect()
    got: dict[str, list[tuple[Any, ...]]] = {}
    for hit in hits:
        got.setdefault(hit["id"], []).append(tuple(hit)[1:])
    compared = 0
    for q in asked:
        filters = {}
        if q.get("table"):
            filters["tables"] = [q["table"]]
        if q.get("column"):
            filters["columns"] = q["column"]
        expected = _expected(built, q["query"], q.get("limit") or 10, **filters)
        mine = got.get(q["id"], [])
        assert [h[:3] + h[4:] for h in mine] == [h[:3] + h[4:] for h in expected], q
        assert [h[3] for h in mine] == pytest.approx([h[3] for h in expected], rel=1e-12), q
        compared += len(mine)
    assert compared > 500
    assert [h["id"] for h in hits] == sorted(
        (h["id"] for h in hits), key=[q["id"] for q in asked].index
    )


def test_batch_queries_of_many_terms(
    spark: Any, built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Queries of more terms than are read by ``term IN (...)``: their postings joined with
    the terms instead, the same hits."""
    monkeypatch.setattr(search_queries, "PUSHED_TERMS", 3)
    asked = ["apple ban*", '"quick brown" NOT dog', "данные OR 東京"]
    frame = spark.createDataFrame([(q,) for q in asked], "query string")
    hits = batch_search(spark, built, frame, limit=1000).collect()
    for number, query in enumerate(asked):
        mine = [tuple(h)[1:] for h in hits if h["id"] == number]
        expected = _expected(built, query, 1000)
        assert [h[:3] + h[4:] for h in mine] == [h[:3] + h[4:] for h in expected], query
        assert [h[3] for h in mine] == pytest.approx([h[3] for h in expected], rel=1e-12)


def test_batch_query_errors_name_the_query(
    spark: Any, built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by the jobs that plan the queries and expand their prefixes (``raise_error``)."""
    queries = spark.createDataFrame([("apple",), ("fox (",)], "query string")
    with pytest.raises(BinlogError, match="'\\(' not closed"):
        batch_search(spark, built, queries)
    with pytest.raises(BinlogError, match="has filters but no term"):
        batch_search(spark, built, spark.createDataFrame([("table:shop.items",)], "query string"))
    monkeypatch.setattr(search_queries, "MAX_EXPANSIONS", 2)  # ban*: banana, band, bandit
    prefixed = spark.createDataFrame([("apple",), ("fox ban*",)], "query string")
    with pytest.raises(BinlogError, match=r"prefix ban\* matches 3 terms, more than 2") as err:
        batch_search(spark, built, prefixed)
    assert err.value.hint == "make the prefix longer"


def test_spark_search_command(built: Path, tmp_path: Path) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"query": "apple", "limit": 3}\n{"query": "\\"quick brown\\""}\n')
    out = tmp_path / "hits"
    run = invoke(
        "spark", "search", str(built), "--queries", str(queries), "--to", str(out), seconds=300
    )
    assert run.exit_code == 0, run.stderr
    lines = [
        json.loads(line)
        for f in sorted(out.glob("part-*.json"))
        for line in f.read_text().splitlines()
    ]
    expected = [(0, *h) for h in _expected(built, "apple", 3)]
    expected += [(1, *h) for h in _expected(built, '"quick brown"', 10)]
    assert [(h["id"], h["table"], h["key"], h["column"], h["rank"]) for h in lines] == [
        (e[0], e[1], e[2], e[3], e[5]) for e in expected
    ]


def _answers(folder: Path) -> list[list[tuple[Any, ...]]]:
    return [_expected(folder, query, 1000) for query in QUERIES]


def _files(folder: Path, manifest: Manifest, last: bool = True) -> dict[str, int]:
    """The ``postings`` files at the manifest's version, with the last (or first) batch of
    each."""
    import deltalake

    table = deltalake.DeltaTable(str(folder / "postings"), version=manifest.versions["postings"])
    actions = pa.RecordBatchReader.from_stream(table.get_add_actions(flatten=True)).read_all()
    bound = actions["max.batch" if last else "min.batch"].to_pylist()
    return dict(zip(actions["path"].to_pylist(), bound, strict=True))


def test_a_segment_merged_alone_stopped_halfway(
    spark: Any, built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tier merge of some segments (here the first alone, with its dead versions: what the
    policy does to the segment with the most), stopped after its ``docs`` write and run
    again: that segment rewritten without its dead versions, the base's and the later
    segment's files left as they are, the same answers."""
    import deltalake

    folder = tmp_path / "index"
    shutil.copytree(built, folder)
    lake = built.parent / "lake"
    before = Manifest.load(IndexLayout(folder))
    assert before is not None
    first, second = before.tiers
    assert (first.first, first.last, second.first) == (1, 1, 2) and first.dead > 0
    answers = _answers(folder)
    pending = Pending(before.batch + 1, {}, True, tiered=True, merge=(1, 1))
    before.with_pending(pending).save(IndexLayout(folder))
    kept = {"once": True, "spark": spark, "compact": False}
    monkeypatch.setenv(CRASH_ENV, f"{pending.batch}:docs")
    with pytest.raises(RuntimeError, match=CRASH_ENV):
        index(lake, folder, **kept)
    monkeypatch.delenv(CRASH_ENV)
    assert (index(lake, folder, **kept).compactions) == 1
    merged = Manifest.load(IndexLayout(folder))
    assert merged is not None and merged.pending is None
    assert merged.tiers == (Segment(1, 1, first.docs - first.dead), second)
    assert (merged.dead, merged.base_dead) == (before.dead - first.dead, before.base_dead)
    assert _answers(folder) == answers
    old, new = _files(folder, before), _files(folder, merged)
    untouched = {p for p, last in old.items() if last <= 0}
    untouched |= {p for p, start in _files(folder, before, last=False).items() if start >= 2}
    assert untouched and untouched <= set(new)  # the base's and batch 2's files
    assert all(new[p] == 1 for p in set(new) - untouched)
    deletes = deltalake.DeltaTable(
        str(folder / "deletes"), version=merged.versions["deletes"]
    ).to_pyarrow_table()
    assert deletes.num_rows == merged.dead and 1 not in set(deletes["batch"].to_pylist())


def test_tiered_compaction_merges_the_segments_only(
    spark: Any, built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The segments and their dead versions merged into one segment (stopped halfway and run
    again), the base's files left as they are, the same answers (a whole compaction:
    test_search_live)."""
    import deltalake

    folder = tmp_path / "index"
    shutil.copytree(built, folder)
    lake = built.parent / "lake"
    before = Manifest.load(IndexLayout(folder))
    assert before is not None and 0 < before.base_dead < before.dead and before.segments == 2
    answers = _answers(folder)

    def files(manifest: Manifest) -> dict[str, int]:
        return _files(folder, manifest)

    kept = {"once": True, "spark": spark}
    monkeypatch.setenv(CRASH_ENV, f"{before.batch + 1}:docs")
    with pytest.raises(RuntimeError, match=CRASH_ENV):
        index(lake, folder, compact="tiered", **kept)
    monkeypatch.delenv(CRASH_ENV)
    done = index(lake, folder, compact="tiered", **kept)
    assert (done.batches, done.compactions) == (0, 1)
    merged = Manifest.load(IndexLayout(folder))
    assert merged is not None and (merged.base, merged.segments) == (0, 1)
    assert merged.dead == merged.base_dead == before.base_dead
    assert _answers(folder) == answers
    old, new = files(before), files(merged)
    base = {path for path, last in old.items() if last <= 0}
    assert base and base == {path for path, last in new.items() if last <= 0}  # not rewritten
    segment = [path for path, last in new.items() if last > 0]
    assert 0 < len(segment) < len(old) - len(base)  # merged: one file per bucket
    versions = deltalake.DeltaTable(
        str(folder / "docs"), version=merged.versions["docs"]
    ).to_pyarrow_table(columns=["table", "key", "column", "batch"])
    docs = versions.filter(pc.greater(versions.column("batch"), 0))
    assert docs.num_rows == docs.group_by(["table", "key", "column"]).aggregate([]).num_rows
    numbers = deltalake.DeltaTable(
        str(folder / "docs"), version=merged.versions["docs"]
    ).to_pyarrow_table(columns=["doc"])["doc"]
    assert len(pc.unique(numbers)) == len(numbers)  # one number a version, kept by the merge
    held = deltalake.DeltaTable(
        str(folder / "postings"), version=merged.versions["postings"]
    ).to_pyarrow_table(columns=["doc"])["doc"]
    assert set(pc.unique(held).to_pylist()) <= set(numbers.to_pylist())


def _numbers_in_order(folder: Path, manifest: Manifest) -> None:
    """Each ``docs`` file in order of number (its partition's), each ``postings`` file in order
    of term and number; one number a version, each posting's a ``docs`` row's."""
    import deltalake
    import pyarrow.parquet as pq

    numbers: list[int] = []
    for name, sort in (("docs", ["doc"]), ("postings", ["term", "doc"])):
        table = deltalake.DeltaTable(str(folder / name), version=manifest.versions[name])
        for uri in table.file_uris():
            rows = pq.read_table(uri.removeprefix("file://"), columns=[*sort, "bucket"])
            assert rows.num_rows > 0
            if name == "docs":
                docs = rows["doc"].to_pylist()
                assert docs == sorted(set(docs)), uri
                assert {number_bucket(d) for d in docs} == set(rows["bucket"].to_pylist()), uri
                assert {d >> BATCH_SHIFT for d in docs} == {manifest.base}, uri
                numbers += docs
            else:
                pairs = list(zip(rows["term"].to_pylist(), rows["doc"].to_pylist(), strict=True))
                assert pairs == sorted(set(pairs)), uri
                assert {d for _, d in pairs} <= set(numbers), uri
    assert len(numbers) == len(set(numbers)) == manifest.docs


def test_whole_compaction_renumbers_in_order(
    spark: Any, built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole compaction (stopped after its ``postings`` write and run again) numbers the
    documents anew, so that each file is in order of number as after a build; the answers are
    unchanged, and after a later batch that replaces some of the renumbered versions they are
    the brute force's."""
    from delta.tables import DeltaTable

    lake, folder = tmp_path / "lake", tmp_path / "index"
    shutil.copytree(built.parent / "lake", lake)  # changed below: the other tests' stays
    shutil.copytree(built, folder)
    layout = IndexLayout(folder)
    before = Manifest.load(layout)
    assert before is not None and before.segments == 2 and before.dead > 0
    replace(before, lake=str(lake.resolve())).save(layout)
    answers = _answers(folder)
    kept = {"once": True, "spark": spark, "compact": "whole"}
    monkeypatch.setenv(CRASH_ENV, f"{before.batch + 1}:postings")
    with pytest.raises(RuntimeError, match=CRASH_ENV):
        index(lake, folder, **kept)
    monkeypatch.delenv(CRASH_ENV)
    assert index(lake, folder, **kept).compactions == 1
    whole = Manifest.load(layout)
    assert whole is not None and (whole.base, whole.segments, whole.dead) == (
        before.batch + 1,
        0,
        0,
    )
    _numbers_in_order(folder, whole)
    assert _answers(folder) == answers
    mirror = DeltaTable.forPath(spark, str(lake / "shop" / "items" / "mirror"))
    mirror.update("id % 3 = 0", {"body": "'green apple pie'"})
    assert index(lake, folder, once=True, spark=spark, compact=False).batches == 1
    after = SearchIndex(folder)
    assert after.manifest.dead > 0
    _equal_the_brute_force(after, mirror.toDF().collect())


def _equal_the_brute_force(engine: SearchIndex, rows: list[Any]) -> None:
    """Each query's hits from ``engine`` are those of the brute force over the mirror's
    ``rows``."""
    docs = {
        (TABLE, json.dumps({"id": row["id"]}, separators=(",", ":")), column): row[column]
        for row in rows
        for column in ("name", "body")
        if row[column] is not None
    }
    corpus = Corpus(docs, engine.analyzer)
    for query in QUERIES:
        hits = [((h.table, h.key, h.column), h.score) for h in engine.search(query, limit=1000)]
        assert hits == corpus.hits(query)[:1000], query


def test_rebuild_in_place_with_new_analysis(
    spark: Any, built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--rebuild`` with other analysis settings: while it runs (stopped halfway here) readers
    see the old index whole; after it, new readers see the new one whole (its answers those of
    the brute force with the new analysis) and a reader opened before still the old one."""
    folder = tmp_path / "index"
    shutil.copytree(built, folder)
    lake = built.parent / "lake"
    old = SearchIndex(folder)
    answers = _answers(folder)
    with pytest.raises(BinlogError, match="--rebuild"):
        index(lake, folder, once=True, spark=spark, stem="russian")
    kept = {"once": True, "spark": spark, "rebuild": True}
    monkeypatch.setenv(CRASH_ENV, "0:docs")
    with pytest.raises(RuntimeError, match=CRASH_ENV):
        index(lake, folder, **kept)
    monkeypatch.delenv(CRASH_ENV)
    assert SearchIndex(folder).manifest == old.manifest and _answers(folder) == answers
    notes: list[str] = []
    assert index(lake, folder, progress=notes.append, **kept).batches == 1
    assert f"rebuilt: readers now open {folder / '_generations' / '2'}" in notes
    assert sorted(p.name for p in (folder / "_generations").iterdir()) == ["2"]  # 1: unfinished
    new = SearchIndex(folder)
    assert new.analyzer == Analyzer() and new.manifest.columns == old.manifest.columns
    rows = spark.read.format("delta").load(str(lake / "shop" / "items" / "mirror")).collect()
    _equal_the_brute_force(new, rows)
    assert [_expected_of(old, query) for query in QUERIES] == answers  # opened before
    assert index(lake, folder, once=True, spark=spark).batches == 0  # kept current from here
    layout = IndexLayout(folder)
    rebuilt = Manifest.load(layout)
    assert rebuilt is not None and rebuilt.format == 3
    replace(rebuilt, format=2).save(layout)  # as an earlier binlogkit left it
    with pytest.raises(BinlogError, match="without document numbers") as caught:
        index(lake, folder, once=True, spark=spark)
    assert "--rebuild" in str(caught.value.hint)
