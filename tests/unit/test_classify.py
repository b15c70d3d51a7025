"""Event helpers (binlogkit.pipeline.classify): database, table, DDL, DML, row, statement."""

from __future__ import annotations

import pytest
from tx_events import gtid, head, intvar, query, table_map, write_rows, xid

from binlogkit.binlog.constants import EventType
from binlogkit.binlog.events import Event
from binlogkit.binlog.events.load import LoadEvent, LoadOptions
from binlogkit.binlog.events.query import QueryEvent, QueryStatus
from binlogkit.pipeline.classify import (
    database_of,
    is_ddl,
    is_dml,
    is_row,
    is_statement,
    table_of,
)


def statement(text: str, db: str = "shop") -> QueryEvent:
    return QueryEvent(head(EventType.QUERY), 1, 0, 0, QueryStatus(), db, text.encode())


# (statement, is_ddl, is_dml)
STATEMENTS = [
    ("CREATE TABLE t (a INT)", True, False),
    ("  alter table t add column b int", True, False),
    ("DROP TABLE IF EXISTS `t`", True, False),
    ("RENAME TABLE a TO b", True, False),
    ("TRUNCATE t", True, False),
    ("CREATE VIEW v AS SELECT 1", True, False),
    ("CREATE DATABASE d", True, False),
    ("CREATE INDEX i ON t (a)", True, False),
    ("/*!40000 ALTER TABLE t DISABLE KEYS */", True, False),
    ("INSERT INTO t VALUES (1)", False, True),
    ("update t set a = 2", False, True),
    ("DELETE FROM t WHERE a = 1", False, True),
    ("REPLACE INTO t VALUES (1)", False, True),
    ("LOAD DATA INFILE 'x' INTO TABLE t", False, True),
    ("INSERT /* a comment */ INTO t SELECT 1", False, True),
    ("GRANT SELECT ON *.* TO u", False, False),
    ("SET PASSWORD FOR u = 'x'", False, False),
    ("USE shop", False, False),
]


@pytest.mark.parametrize(("text", "ddl", "dml"), STATEMENTS)
def test_statements(text: str, ddl: bool, dml: bool) -> None:
    event = statement(text)
    assert is_statement(event)
    assert (is_ddl(event), is_dml(event)) == (ddl, dml)
    assert not is_row(event)
    assert database_of(event) == "shop"
    assert table_of(event) is None


@pytest.mark.parametrize("text", ["BEGIN", "COMMIT", "ROLLBACK", "XA START 'x'", "SAVEPOINT a"])
def test_transaction_control_is_no_statement(text: str) -> None:
    event = query(text.encode())
    assert not is_statement(event)
    assert not is_ddl(event)
    assert not is_dml(event)


def test_versioned_comments_follow_the_server_version() -> None:
    assert is_ddl(statement("/*!40000 ALTER TABLE t ADD b INT */"))
    event = statement("/*!50700 ALTER TABLE t ADD b INT */")
    assert is_ddl(event, "8.0.36")
    assert not is_ddl(event)  # read as the newest MariaDB reads it
    assert not is_ddl(event, "5.6.51-log")  # older: the comment is a comment
    assert not is_ddl(event, "10.11.5-MariaDB")  # MariaDB skips MySQL's 5.7+ comments
    assert not is_dml(statement("/*!90000 INSERT INTO t VALUES (1) */"), "8.0.36")


def test_a_statement_without_default_database() -> None:
    assert database_of(statement("CREATE DATABASE d", db="")) is None


def test_row_events() -> None:
    for event in (table_map(), write_rows(1)):
        assert is_row(event)
        assert not is_statement(event)
        assert not is_ddl(event)
        assert (database_of(event), table_of(event)) == ("db", "t")
    assert is_dml(write_rows(1))
    assert not is_dml(table_map())  # it only names the table


def test_load_statements() -> None:
    options = LoadOptions(b"\t", b"", b"\n", b"", b"\\", 0, 0)
    load = LoadEvent(head(EventType.LOAD), 1, 0, 0, options, (), "tbl", "data", "file.txt")
    assert (database_of(load), table_of(load)) == ("data", "tbl")
    assert is_statement(load)
    assert is_dml(load)
    assert not is_ddl(load)


@pytest.mark.parametrize("event", [gtid(1), xid(), intvar()], ids=["gtid", "xid", "intvar"])
def test_other_events_are_none_of_these(event: Event) -> None:
    assert (database_of(event), table_of(event)) == (None, None)
    assert not (is_row(event) or is_statement(event) or is_ddl(event) or is_dml(event))
