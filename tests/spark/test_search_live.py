"""``binlogkit spark index`` and ``binlogkit search`` end to end on a live MariaDB.

A database with text in utf8mb4, latin1 and gbk (Latin, Cyrillic and CJK words,
NULLs, empty strings, a composite key) is indexed from the server's URL (the
indexer syncs the tables into ``INDEX/lake`` itself, each round). After the
first build, after a workload of inserts, updates (text changed, primary key
changed) and deletes brought in from the mirrors' change data feed (appended,
the replaced versions subtracted), after a batch that stopped after its writes
but before its manifest and was run again, after an indexer process killed by
SIGKILL in the middle of a batch and run again, after a compaction stopped
halfway and run again, after a DROP COLUMN, after an ADD COLUMN of text to a
table indexed whole, and after a mirror replaced by a new Delta table (a
rebuild), every query's hits equal a brute-force scan
(``search_brute``): every row the server gives for ``SELECT``, analysed the same
way, each query matched against each document's terms directly and ranked by
the same BM25.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pytest
from cli_run import invoke
from search_brute import Corpus, Doc

from binlogkit.sandbox import MariaDBSandbox
from binlogkit.search.engine import SearchIndex
from binlogkit.search.manifest import IndexLayout, Manifest

pytest.importorskip("delta")

from binlogkit.spark.search.batch import CRASH_ENV
from binlogkit.spark.search.build import index

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

WORDS = (
    *("apple", "apples", "banana", "running", "runner", "runs", "data", "database"),
    *("databases", "blue", "green", "red", "the", "and", "of", "quick", "brown", "fox"),
    *("jumps", "lazy", "dog", "привет", "мир", "данные", "база", "синий"),
    *("東京", "京都", "大阪", "データ", "検索"),
)
LATIN1_WORDS = ("café", "naïve", "crème", "brûlée", "data", "apple", "fox")
GBK_WORDS = ("数据", "搜索", "北京", "苹果", "东京")

SCHEMA = """
CREATE DATABASE shop;
CREATE TABLE shop.items (
  id INT PRIMARY KEY,
  name VARCHAR(100) CHARACTER SET utf8mb4,
  body TEXT CHARACTER SET utf8mb4,
  qty INT
);
CREATE TABLE shop.notes (
  k1 VARCHAR(10) CHARACTER SET ascii,
  k2 INT,
  note TEXT CHARACTER SET latin1,
  memo VARCHAR(200) CHARACTER SET gbk,
  PRIMARY KEY (k1, k2)
);
"""

TABLES = {"shop.items": ("id",), "shop.notes": ("k1", "k2")}
COLUMNS = {"shop.items": ("name", "body"), "shop.notes": ("note", "memo")}

QUERIES = (
    "apple",
    "apples",  # stems to appl
    "run",
    "data database",
    "data OR банан OR синий",
    "данные",
    "東京",
    "京都 大阪",
    "数据",
    "café",
    '"quick brown"',
    '"brown fox jumps"',
    '"fox the dog"',
    "data*",
    "ru*",
    "app* NOT banana",
    "(red OR blue) green",
    "fox NOT (dog OR lazy)",
    "the",  # a stop word: nothing
    "apple table:shop.notes",
    "data column:body",
    "data* column:note column:memo",
)


def _text(rng: random.Random, words: tuple[str, ...], most: int) -> str | None:
    roll = rng.random()
    if roll < 0.08:
        return None
    if roll < 0.12:
        return ""
    return " ".join(rng.choice(words) for _ in range(rng.randint(1, most))).capitalize()


def _sql(value: str | None) -> str:
    return "NULL" if value is None else "'" + value.replace("'", "''") + "'"


def _items(rng: random.Random, ids: range) -> str:
    rows = [
        f"({i}, {_sql(_text(rng, WORDS, 4))}, {_sql(_text(rng, WORDS, 25))}, {i % 7})" for i in ids
    ]
    return f"INSERT INTO shop.items VALUES {', '.join(rows)};"


def _notes(rng: random.Random, count: int, start: int = 0) -> str:
    rows = [
        f"('k{i % 5}', {i}, {_sql(_text(rng, LATIN1_WORDS, 8))}, {_sql(_text(rng, GBK_WORDS, 6))})"
        for i in range(start, start + count)
    ]
    return f"INSERT INTO shop.notes VALUES {', '.join(rows)};"


def _url(server: MariaDBSandbox) -> str:
    return f"mariadb://root@localhost/?socket={server.socket}"


# -- the brute force --------------------------------------------------------------------------


def _source_documents(
    server: MariaDBSandbox, indexed: dict[str, tuple[str, ...]]
) -> dict[Doc, str]:
    """Every text value of the ``indexed`` columns as the server gives it, by document."""
    docs = {}
    for table, key in TABLES.items():
        columns = indexed[table]
        for row in server.query(f"SELECT {', '.join((*key, *columns))} FROM {table}"):
            values = dict(zip((*key, *columns), row, strict=True))
            key_json = json.dumps(
                {k: int(v) if k in ("id", "k2") else v for k, v in values.items() if k in key},
                separators=(",", ":"),
            )
            for column in columns:
                if values[column] is not None:
                    docs[(table, key_json, column)] = str(values[column])
    return docs


def _check_index(
    server: MariaDBSandbox, folder: Path, indexed: dict[str, tuple[str, ...]] = COLUMNS
) -> int:
    """Every query's hits from the index equal the brute force's; the hits compared."""
    docs = _source_documents(server, indexed)
    engine = SearchIndex(folder)
    corpus = Corpus(docs, engine.analyzer)
    assert engine.stats.docs == len(corpus.terms)
    assert engine.stats.length == corpus.length
    compared = 0
    for query in QUERIES:
        expected = corpus.hits(query)
        hits = engine.search(query, limit=10_000)
        got = [((h.table, h.key, h.column), h.score) for h in hits]
        assert [doc for doc, _ in got] == [doc for doc, _ in expected], query
        assert [s for _, s in got] == pytest.approx([s for _, s in expected], rel=1e-9), query
        for hit in hits:
            assert "**" in hit.snippet or query.startswith("fox NOT"), (query, hit)
        compared += len(hits)
    return compared


def test_index_equals_a_brute_force_scan_through_changes_and_a_crash(
    spark: Any,
    mariadb_factory: Callable[..., MariaDBSandbox],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(18)
    server = mariadb_factory("search")
    server.execute(SCHEMA + _items(rng, range(1, 201)) + _notes(rng, 80))
    url, folder = _url(server), tmp_path / "index"
    lake = folder / "lake"  # the index syncs the server's tables into it
    notes: list[str] = []
    built = index(
        url,
        folder,
        tables=["shop.items"],
        columns=["shop.notes.note", "shop.notes.memo"],
        once=True,
        stem="english",
        stop_words=True,
        spark=spark,
        progress=notes.append,
    )
    assert built.batches == 1
    assert any("change data feed switched on" in n for n in notes)
    assert _check_index(server, folder) > 100

    # inserts, text changed, primary key changed (both tables), deletes; some rows twice
    server.execute(
        _items(rng, range(201, 231))
        + _notes(rng, 10, start=80)
        + "UPDATE shop.items SET body = 'lazy dog data apple' WHERE id % 9 = 0;"
        + "UPDATE shop.items SET id = id + 1000 WHERE id % 13 = 0;"
        + "UPDATE shop.items SET name = NULL WHERE id % 17 = 0;"
        + "UPDATE shop.items SET qty = qty + 1 WHERE id % 5 = 0;"  # no indexed column changed
        + "UPDATE shop.notes SET k2 = k2 + 500 WHERE k2 % 7 = 0;"
        + "UPDATE shop.notes SET memo = '北京 数据' WHERE k2 % 3 = 0;"
        + "DELETE FROM shop.items WHERE id % 11 = 0;"
        + "DELETE FROM shop.notes WHERE k2 % 10 = 1;"
        + "UPDATE shop.items SET body = 'quick brown fox' WHERE id = 1018;"
    )
    second = index(url, folder, once=True, spark=spark, compact=False)
    assert second.batches == 1
    _check_index(server, folder)
    manifest = Manifest.load(IndexLayout(folder))
    assert manifest is not None and manifest.batch == 1
    assert manifest.segments == 1 and manifest.dead > 30  # replaced versions, subtracted

    # a batch that stops after its last write, before the manifest records it, run again:
    # the rerun's writes are skipped (a terms MERGE applied twice would double its counts)
    server.execute(
        "UPDATE shop.items SET body = CONCAT(body, ' blue') WHERE id % 4 = 0;"
        + "DELETE FROM shop.items WHERE id % 6 = 0;"
        + _items(rng, range(300, 310))
    )
    monkeypatch.setenv(CRASH_ENV, "2:deletes")
    with pytest.raises(RuntimeError, match=CRASH_ENV):
        index(url, folder, once=True, spark=spark, compact=False)
    crashed = Manifest.load(IndexLayout(folder))
    assert crashed is not None and crashed.batch == 1 and crashed.pending is not None
    _check_index_unchanged(folder, manifest)
    monkeypatch.delenv(CRASH_ENV)
    rerun = index(url, folder, once=True, spark=spark, compact=False)
    assert rerun.batches == 1
    _check_index(server, folder)
    done = Manifest.load(IndexLayout(folder))
    assert done is not None and done.batch == 2 and done.pending is None
    nothing = index(url, folder, once=True, spark=spark, compact=False)
    assert nothing.batches == 0

    # the indexer process killed (SIGKILL) in the middle of a batch, then run again
    server.execute(
        "UPDATE shop.items SET name = 'red runner' WHERE id % 5 = 1;"
        + "DELETE FROM shop.notes WHERE k2 % 4 = 2;"
        + _items(rng, range(400, 420))
    )
    _kill_mid_batch(url, folder, batch=3)
    _check_index_unchanged(folder, done)
    assert index(url, folder, once=True, spark=spark, compact=False).batches == 1
    _check_index(server, folder)
    _check_no_doubles(folder)

    # a compaction stopped halfway and run again: the dead versions gone, files vacuumed
    monkeypatch.setenv(CRASH_ENV, "4:docs")
    with pytest.raises(RuntimeError, match=CRASH_ENV):
        index(url, folder, once=True, spark=spark, compact="whole", retain_hours=0)
    monkeypatch.delenv(CRASH_ENV)
    compacted = index(url, folder, once=True, spark=spark, compact="whole", retain_hours=0)
    assert (compacted.batches, compacted.compactions) == (0, 1)
    after = Manifest.load(IndexLayout(folder))
    assert after is not None and (after.batch, after.dead, after.segments) == (4, 0, 0)
    _check_index(server, folder)
    _check_no_doubles(folder, compacted=True)

    # a column dropped: followed through the change data feed
    server.execute(
        "ALTER TABLE shop.items DROP COLUMN qty;"
        "UPDATE shop.items SET name = 'green apple' WHERE id = 2;"
    )
    assert index(url, folder, once=True, spark=spark).batches == 1
    _check_index(server, folder)

    # a text column added to a table indexed whole (--tables): its documents indexed too
    server.execute(
        "ALTER TABLE shop.items ADD COLUMN extra TEXT CHARACTER SET utf8mb4;"
        "UPDATE shop.items SET extra = 'apple pie data' WHERE id % 3 = 0;"
    )
    notes.clear()
    assert index(url, folder, once=True, spark=spark, progress=notes.append).batches == 1
    assert "shop.items: text column(s) extra added: rebuilding its documents" in notes
    indexed = {**COLUMNS, "shop.items": ("name", "body", "extra")}
    _check_index(server, folder, indexed)

    # columns renamed: followed in a table indexed whole (RENAME COLUMN) and in one whose
    # columns were named (CHANGE), the manifest listing the new names (the lake renames a
    # mirror's column with the table's next row change, so each table gets one)
    server.execute(
        "ALTER TABLE shop.items RENAME COLUMN extra TO extras;"
        "UPDATE shop.items SET extras = 'renamed pie data' WHERE id % 4 = 0;"
        "ALTER TABLE shop.notes CHANGE note remark TEXT CHARACTER SET latin1;"
        "UPDATE shop.notes SET remark = 'café data crème' WHERE k2 % 9 = 0;"
    )
    notes.clear()
    assert index(url, folder, once=True, spark=spark, progress=notes.append).batches == 1
    assert "shop.items: column extra renamed to extras: rebuilding its documents" in notes
    assert "shop.notes: column note renamed to remark: rebuilding its documents" in notes
    indexed = {"shop.items": ("name", "body", "extras"), "shop.notes": ("remark", "memo")}
    renamed = Manifest.load(IndexLayout(folder))
    assert renamed is not None and renamed.columns == indexed
    _check_index(server, folder, indexed)

    # the mirror replaced by another Delta table (as a resnapshot makes one), which lacks the
    # odd rows the server lost meanwhile: the table's documents are rebuilt from it
    mirror, aside = lake / "shop" / "items" / "mirror", tmp_path / "aside"
    shutil.move(mirror, aside)
    odd = "id % 2 = 1"
    server.execute(f"DELETE FROM shop.items WHERE {odd}")
    spark.read.format("delta").load(str(aside)).where(f"NOT ({odd})").write.format("delta").save(
        str(mirror)
    )
    notes.clear()
    assert index(url, folder, once=True, spark=spark, progress=notes.append).batches == 1
    assert "shop.items: its mirror was replaced: rebuilding its documents" in notes
    assert "shop.items: change data feed switched on in its mirror" in notes
    _check_index(server, folder, indexed)

    # the command line
    run = invoke("search", str(folder), "apple", "--format", "jsonl", "--limit", "3")
    assert run.exit_code == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.decode().splitlines()]
    best = SearchIndex(folder).search("apple", limit=3)
    assert [(h["table"], h["key"], h["column"]) for h in lines] == [
        (h.table, json.loads(h.key), h.column) for h in best
    ]
    text = invoke("search", str(folder), "apple", "--table", "shop.notes", "--limit", "1")
    assert text.stdout.decode().count("\n") == 1 and " shop.notes k1=" in text.stdout.decode()
    bad = invoke("search", str(folder), "apple (")
    assert bad.failed_cleanly() is None and "'(' not closed" in bad.stderr


def _kill_mid_batch(url: str, folder: Path, batch: int) -> None:
    """``binlogkit spark index`` in a process of its own, killed with its Spark JVM by SIGKILL
    as soon as it reports the first write of ``batch``: the batch is left pending."""
    command = [sys.executable, "-m", "binlogkit", "spark", "index", url, "--to", str(folder)]
    command += ["--once", "--no-compact", "--master", "local[1]"]
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")
    env["BINLOGKIT_JARS"] = str(Path(__file__).parents[2] / ".cache" / "jars")
    env["JAVA_TOOL_OPTIONS"] = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"
    child = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    seen = []
    try:
        assert child.stderr is not None
        for line in child.stderr:
            seen.append(line.decode(errors="replace"))
            if f"batch {batch}: postings written" in seen[-1]:
                break
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    assert f"batch {batch}: postings written" in seen[-1], "".join(seen)
    killed = Manifest.load(IndexLayout(folder))
    assert killed is not None and killed.pending is not None and killed.pending.batch == batch


def _check_no_doubles(folder: Path, *, compacted: bool = False) -> None:
    """Each document version's postings are in ``postings`` once; after a compaction, each
    document has one version."""
    import deltalake

    manifest = Manifest.load(IndexLayout(folder))
    assert manifest is not None
    postings = deltalake.DeltaTable(
        str(folder / "postings"), version=manifest.versions["postings"]
    ).to_pyarrow_table(columns=["term", "table", "key", "column", "batch"])
    version = ["term", "table", "key", "column", "batch"]
    groups = postings.group_by(version).aggregate([])
    assert groups.num_rows == postings.num_rows
    if compacted:
        docs = postings.group_by(version[:-1]).aggregate([])
        assert docs.num_rows == postings.num_rows
        assert pc.max(postings.column("batch")).as_py() > 0


def _check_index_unchanged(folder: Path, before: Manifest) -> None:
    """A reader still sees the last finished batch while the next one is half written."""
    engine = SearchIndex(folder)
    assert engine.stats == before.stats
    assert engine.manifest.versions == before.versions
