"""The tables a statement changes, as the parser reads them (for replication filters)."""

from __future__ import annotations

import pytest

from binlogkit.schema.statements import TableRef, changed_tables


@pytest.mark.parametrize(
    ("sql", "tables"),
    [
        ("INSERT INTO db.t (a) VALUES (1)", [("db", "t")]),
        ("INSERT INTO t SELECT * FROM u", [(None, "t")]),  # u is read, not changed
        ("UPDATE t1 JOIN db2.t2 ON t1.a = t2.a SET t1.b = 1", [(None, "t1"), ("db2", "t2")]),
        ("DELETE FROM t WHERE a = 1", [(None, "t")]),
        ("DELETE t1 FROM t1 JOIN t2 ON t1.a = t2.a", [(None, "t1")]),
        ("CREATE TABLE t2 LIKE t1", [(None, "t2")]),
        ("CREATE TABLE x.c (id INT, p INT REFERENCES x.p (id))", [("x", "c")]),
        ("DROP TABLE a, b.c", [(None, "a"), ("b", "c")]),
        ("RENAME TABLE a TO b", [(None, "a"), (None, "b")]),
        ("/*!40000 ALTER TABLE t DISABLE KEYS */", [(None, "t")]),
        ("REPLACE INTO t VALUES (1)", None),
        ("LOAD DATA INFILE 'f' INTO TABLE t", None),
        ("CREATE DATABASE q", None),
        ("BEGIN", None),
        ("INSERT INTO", None),
    ],
)
def test_changed_tables(sql: str, tables: list[TableRef] | None) -> None:
    assert changed_tables(sql) == (None if tables is None else tuple(tables))
