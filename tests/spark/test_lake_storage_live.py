"""The lake on a filesystem Python's ``open`` cannot reach: Hadoop's ``viewfs://``.

A viewfs mount table (``fs.viewfs.mounttable.NAME.link./lake``) maps
``viewfs://NAME/lake`` onto a temporary folder, reached only through Hadoop's
``FileSystem`` (Delta picks its LogStore for the scheme, the streaming
checkpoint goes there too):

- the storage seam (:mod:`binlogkit.spark.lake.storage`) writes, replaces,
  lists and reads files there, and a working copy is written back;
- ``sync`` into such a lake: snapshot, stream, the first batch failing after
  its change log commit, a run again: the mirror equals the source, each
  change is logged once, the ALTER's version is in the lake's schema history,
  ``status`` reads the lake. It runs in an empty current folder, which a URI
  taken for a local path would fill (``viewfs:/...`` folders).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from binlogkit.sandbox import MariaDBSandbox

pytest.importorskip("delta")

from binlogkit.spark.lake import storage
from binlogkit.spark.lake.batch import CRASH_ENV
from binlogkit.spark.lake.storage import UriPath, WorkingCopy, lake_path
from binlogkit.spark.lake_status import status
from binlogkit.spark.lakehouse import sync


@pytest.fixture
def viewfs(spark: Any, tmp_path: Path) -> Callable[[str], tuple[str, Path]]:
    """``viewfs(name)``: the URI of a new viewfs mount and the local folder it maps to."""

    def mount(name: str) -> tuple[str, Path]:
        table = f"bk{uuid.uuid4().hex[:10]}"
        folder = tmp_path / name
        folder.mkdir()
        conf = spark._jsc.hadoopConfiguration()
        conf.set(f"fs.viewfs.mounttable.{table}.link./{name}", folder.as_uri())
        return f"viewfs://{table}/{name}", folder

    return mount


def test_the_seam_writes_replaces_lists_and_reads_through_hadoop(
    viewfs: Callable[[str], tuple[str, Path]],
) -> None:
    uri, folder = viewfs("lake")
    root = lake_path(uri)
    assert isinstance(root, UriPath) and lake_path(folder.as_uri()) == folder
    with pytest.raises(TypeError):  # no __fspath__: never taken for a local file
        Path(root)  # type: ignore[arg-type]
    state = root / "_binlogkit" / "sync.json"
    assert storage.read_text(state) is None and not storage.exists(state)
    storage.replace_json(state, {"a": 1})
    storage.replace_text(state, "second\n")
    assert (folder / "_binlogkit" / "sync.json").read_text() == "second\n"
    assert storage.read_text(state) == "second\n" and storage.exists(state)
    # The temporary file is renamed away (Hadoop's local checksum files start with a dot).
    assert [n for n in storage.names(root / "_binlogkit") if n[0] != "."] == ["sync.json"]
    assert storage.is_dir(root / "_binlogkit") and not storage.is_dir(state)
    assert storage.names(root / "none") == [] and not storage.is_dir(root / "none")
    with storage.open_text(state) as lines:
        assert list(lines) == ["second\n"]
    copy = WorkingCopy(root / "_binlogkit" / "schema.jsonl")
    try:
        assert copy.local.read_text() == ""
        copy.local.write_text('{"pos": 4}\n')
        copy.publish()
        assert (folder / "_binlogkit" / "schema.jsonl").read_text() == '{"pos": 4}\n'
    finally:
        copy.close()
    assert not copy.local.exists()


SHOP = """
CREATE DATABASE shop; USE shop;
CREATE TABLE shop.orders (id INT PRIMARY KEY, note VARCHAR(40), qty BIGINT);
INSERT INTO shop.orders SELECT seq, CONCAT('order ', seq), seq * 3 FROM seq_1_to_200;
"""
LATER = """
UPDATE shop.orders SET qty = qty + 1 WHERE id % 10 = 0;
ALTER TABLE shop.orders ADD COLUMN tag VARCHAR(10) DEFAULT 'new';
UPDATE shop.orders SET id = id + 1000, tag = 'moved' WHERE id <= 3;
DELETE FROM shop.orders WHERE id BETWEEN 50 AND 54;
"""


def _mirror(spark: Any, uri: str) -> list[tuple[str | None, ...]]:
    rows = spark.read.format("delta").load(f"{uri}/shop/orders/mirror").collect()
    return sorted(tuple(None if v is None else str(v) for v in row) for row in rows)


def test_sync_into_a_viewfs_lake_exactly_once(
    spark: Any,
    mariadb_factory: Callable[..., MariaDBSandbox],
    viewfs: Callable[[str], tuple[str, Path]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = mariadb_factory("lake-viewfs")
    server.execute(SHOP)
    url = f"mariadb://root@localhost/?socket={server.socket}"
    lake, folder = viewfs("lake")
    here = tmp_path / "cwd"
    here.mkdir()
    monkeypatch.chdir(here)
    changed: list[Any] = []

    def change(note: Any) -> None:
        if not changed:  # the snapshot has its start: these come after it, in batch 0
            server.execute(LATER)
        changed.append(note)

    monkeypatch.setenv(CRASH_ENV, "0")
    with pytest.raises(Exception, match=CRASH_ENV):
        sync(url, lake, once=True, spark=spark, progress=change)
    monkeypatch.delenv(CRASH_ENV)
    sync(url, lake, once=True, spark=spark)

    source = sorted(server.query("SELECT id, note, qty, tag FROM shop.orders"))
    assert _mirror(spark, lake) == source
    changes = spark.read.format("delta").load(f"{lake}/shop/orders/changes")
    logged = [tuple(row) for row in changes.select("file", "pos", "row", "op").collect()]
    assert len(set(logged)) == len(logged) == 20 + 3 + 5
    history = (folder / "_binlogkit" / "schema.jsonl").read_text()
    assert '"tag"' in history  # the ALTER's version, written back to the lake
    shown = status(lake, spark=spark)
    assert [(t.table, t.mirror_rows, t.change_rows) for t in shown.tables] == [
        ("shop.orders", 195, 28)
    ]
    assert shown.snapshot == (1, 1) and shown.batches >= 1
    assert list(here.iterdir()) == []
