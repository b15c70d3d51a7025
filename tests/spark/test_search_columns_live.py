"""What ``binlogkit spark index`` indexes of a table, by the columns' MySQL types (live MariaDB).

A table of text in utf16 and utf8mb4, MariaDB's JSON, and columns that are no
text (VARBINARY, DECIMAL(65,30), which the lake keeps as a string, ENUM), indexed
whole: the text columns are indexed (utf16 words are found), the others not; an
ENUM named in ``--columns`` is indexed; a binary column named there is refused
with the error that says why.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from binlogkit.errors import BinlogError
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.search.engine import SearchIndex
from binlogkit.search.manifest import IndexLayout, Manifest

pytest.importorskip("delta")

from binlogkit.spark.search.build import index

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

SCHEMA = """
CREATE DATABASE shop;
CREATE TABLE shop.kinds (
  id INT PRIMARY KEY,
  title VARCHAR(60) CHARACTER SET utf16,
  body TEXT CHARACTER SET utf8mb4,
  raw VARBINARY(40),
  price DECIMAL(65,30),
  state ENUM('open', 'shut'),
  doc JSON
);
INSERT INTO shop.kinds VALUES
  (1, 'Grüße aus Köln 😀', 'plain words', 'rawword', 1.5, 'open', '{"k": "jsonword"}'),
  (2, 'データ 検索 kitten', NULL, X'00ff', 0, 'shut', '[]');
"""


def _hits(folder: Path, query: str) -> list[tuple[str, str]]:
    return [(hit.key, hit.column) for hit in SearchIndex(folder).search(query)]


def test_a_table_indexed_whole_gives_its_text_columns_and_binary_ones_are_refused(
    spark: Any, mariadb_factory: Callable[..., MariaDBSandbox], tmp_path: Path
) -> None:
    server = mariadb_factory("search-columns")
    server.execute(SCHEMA)
    url, whole = f"mariadb://root@localhost/?socket={server.socket}", tmp_path / "whole"
    index(url, whole, tables=["shop.kinds"], once=True, spark=spark)
    manifest = Manifest.load(IndexLayout(whole))
    assert manifest is not None
    assert manifest.columns == {"shop.kinds": ("title", "body", "doc")}
    assert [c for _, c in _hits(whole, "köln")] == ["title"]
    assert [c for _, c in _hits(whole, "検索")] == ["title"]
    assert [c for _, c in _hits(whole, "jsonword")] == ["doc"]
    assert _hits(whole, "rawword") == [] and _hits(whole, "open") == []

    lake = str(whole / "lake")  # a lake source: no second sync
    named = tmp_path / "named"
    index(lake, named, columns=["shop.kinds.state", "shop.kinds.title"], once=True, spark=spark)
    assert [c for _, c in _hits(named, "shut")] == ["state"]
    with pytest.raises(BinlogError, match=r"shop\.kinds\.raw is varbinary, a binary string"):
        index(lake, tmp_path / "binary", columns=["shop.kinds.raw"], once=True, spark=spark)
    with pytest.raises(BinlogError, match=r"shop\.kinds\.price is decimal, not text"):
        index(lake, tmp_path / "number", columns=["shop.kinds.price"], once=True, spark=spark)


def test_a_folder_of_binlogs_is_a_source(
    spark: Any, mariadb_factory: Callable[..., MariaDBSandbox], tmp_path: Path
) -> None:
    """``spark index FOLDER``: the server's binlogs alone (no server to ask) are applied into
    the index's own lake, DDL included, then indexed; updates and deletes are followed."""
    server = mariadb_factory("search-files")
    server.execute(SCHEMA)
    server.execute("UPDATE shop.kinds SET body = 'changed words' WHERE id = 1")
    server.execute("DELETE FROM shop.kinds WHERE id = 2")
    server.execute("FLUSH BINARY LOGS")
    folder = tmp_path / "index"
    index(server.binlog_dir, folder, tables=["shop.kinds"], once=True, spark=spark)
    assert _hits(folder, "changed") == [('{"id":1}', "body")]
    assert _hits(folder, "plain") == [] and _hits(folder, "検索") == []
    assert [c for _, c in _hits(folder, "köln")] == ["title"]
