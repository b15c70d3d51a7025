"""The replication filter against the documented ``replicate-*`` cases.

Known answers from the MySQL manual ("How Servers Evaluate Replication
Filtering Rules", its rule application examples and the option
descriptions) and from MariaDB's ``sql/rpl_filter.cc`` where the manual
leaves a point open (case rules, ``db.`` matching of database statements).
"""

# ruff: noqa: E501  (one case a line in the tables)

from __future__ import annotations

import pickle
from typing import Any

import pytest

from binlogkit.binlog.constants import ColumnType, EventType, Flavor
from binlogkit.binlog.events import Event
from binlogkit.binlog.events.control import XidEvent
from binlogkit.binlog.events.informational import AnnotateRowsEvent
from binlogkit.binlog.events.query import QueryEvent, QueryStatus
from binlogkit.binlog.events.rows import RowChange, RowsFlag, WriteRowsEvent
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.binlog.header import EventHeader
from binlogkit.errors import BinlogError
from binlogkit.pipeline.filters import ReplicationFilter, like_pattern, parse_rewrite_db
from binlogkit.schema.ddl import named_database

F = ReplicationFilter

# fmt: off
TABLE_CASES: list[tuple[str, dict[str, Any], str, str, bool]] = [
    ("no rules", {}, "db1", "t1", True),
    # Database rules, on the database of the changed table (row events).
    ("do_db match", {"do_db": ["sales"]}, "sales", "january", True),
    ("do_db no match", {"do_db": ["sales"]}, "prices", "march", False),
    ("ignore_db match", {"ignore_db": ["sales"]}, "sales", "january", False),
    ("ignore_db no match", {"ignore_db": ["sales"]}, "prices", "march", True),
    ("do_db wins over ignore_db", {"do_db": ["a"], "ignore_db": ["a"]}, "a", "t", True),
    ("ignore_db unseen with do_db", {"do_db": ["a"], "ignore_db": ["b"]}, "c", "t", False),
    # Manual: replicate-ignore-db=db1, replicate-do-table=db2.tbl2; USE db1; INSERT INTO
    # db2.tbl2: with rows the database checked is db2, then the table rule keeps it.
    ("manual example, row format", {"ignore_db": ["db1"], "do_table": ["db2.tbl2"]}, "db2", "tbl2", True),
    ("db rules before table rules", {"do_db": ["db1"], "do_table": ["db2.t"]}, "db2", "t", False),
    # Table rules, in order do_table, ignore_table, wild_do_table, wild_ignore_table.
    ("do_table match", {"do_table": ["db1.t1"]}, "db1", "t1", True),
    ("do_table no match", {"do_table": ["db1.t1"]}, "db1", "t2", False),
    ("ignore_table match", {"ignore_table": ["db1.t1"]}, "db1", "t1", False),
    ("ignore_table no match", {"ignore_table": ["db1.t1"]}, "db1", "t2", True),
    ("do_table before wild_ignore", {"do_table": ["db1.t1"], "wild_ignore_table": ["db1.%"]}, "db1", "t1", True),
    ("wild_ignore after do_table", {"do_table": ["db1.t1"], "wild_ignore_table": ["db1.%"]}, "db1", "t2", False),
    ("do list, no rule matches", {"do_table": ["db1.t1"], "wild_ignore_table": ["db1.%"]}, "db2", "t", False),
    ("ignore_table before wild_do", {"ignore_table": ["db1.t1"], "wild_do_table": ["db1.%"]}, "db1", "t1", False),
    ("wild_do before wild_ignore", {"wild_do_table": ["db1.%"], "wild_ignore_table": ["db1.%"]}, "db1", "t", True),
    ("only ignores, no match", {"wild_ignore_table": ["db1.%"]}, "db2", "t", True),
    # LIKE patterns on db.table: % any run, _ one character, \ escapes.
    ("foo%.bar% match", {"wild_do_table": ["foo%.bar%"]}, "foodb", "barn", True),
    ("foo%.bar% other table", {"wild_do_table": ["foo%.bar%"]}, "foodb", "stool", False),
    ("_ is one character", {"wild_do_table": ["shop_eu.%"]}, "shopXeu", "orders", True),
    ("_ is not zero characters", {"wild_do_table": ["shop_eu.%"]}, "shopeu", "orders", False),
    ("escaped _ is literal", {"wild_do_table": ["shop\\_eu.%"]}, "shopXeu", "orders", False),
    ("escaped _ matches _", {"wild_do_table": ["shop\\_eu.%"]}, "shop_eu", "orders", True),
    ("manual my\\_own\\%db", {"wild_do_table": ["my\\_own\\%db.%"]}, "my_own%db", "t", True),
    ("manual my1ownAABCdb", {"wild_do_table": ["my\\_own\\%db.%"]}, "my1ownAABCdb", "t", False),
    ("pattern must match whole name", {"wild_do_table": ["db.t"]}, "db", "t1", False),
    # Case: MariaDB compares databases exactly, tables without regard to case.
    ("mariadb do_db exact", {"do_db": ["Shop"]}, "shop", "t", False),
    ("mariadb do_table any case", {"do_table": ["SHOP.Orders"]}, "shop", "orders", True),
    ("mariadb wild any case", {"wild_do_table": ["shop.ORD%"]}, "Shop", "orders", True),
    ("mysql lctn 0: tables exact", {"do_table": ["SHOP.Orders"], "flavor": Flavor.MYSQL}, "shop", "orders", False),
    ("mysql lctn 1: names folded", {"do_db": ["Shop"], "flavor": Flavor.MYSQL, "lower_case_table_names": 1}, "SHOP", "t", True),
    ("mariadb lctn 1: binlog names folded", {"do_db": ["shop"], "lower_case_table_names": 1}, "SHOP", "t", True),
    ("mariadb lctn 1: rules not folded", {"do_db": ["Shop"], "lower_case_table_names": 1}, "Shop", "t", False),
    # rewrite_db comes first: every rule sees the new name.
    ("rewrite then do_db", {"rewrite_db": {"a": "b"}, "do_db": ["b"]}, "a", "t", True),
    ("old name no longer matches", {"rewrite_db": {"a": "b"}, "do_db": ["a"]}, "a", "t", False),
    ("rewrite then ignore_db", {"rewrite_db": {"a": "b"}, "ignore_db": ["a"]}, "a", "t", True),
    ("rewrite then do_table", {"rewrite_db": {"a": "b"}, "do_table": ["b.t"]}, "a", "t", True),
    ("rewrite is one step", {"rewrite_db": [("a", "b"), ("b", "c")], "do_db": ["b"]}, "a", "t", True),
    ("first rewrite wins", {"rewrite_db": [("a", "b"), ("a", "c")], "do_db": ["c"]}, "a", "t", False),
    # Regexes (binlogkit's own) after the rules, on the whole db.table.
    ("include matches", {"include_regex": [r"shop\..*"]}, "shop", "orders", True),
    ("include must match all", {"include_regex": [r"shop"]}, "shop", "orders", False),
    ("exclude", {"include_regex": [r"shop\..*"], "exclude_regex": [r".*_archive"]}, "shop", "o_archive", False),
    ("regex after rules", {"ignore_db": ["shop"], "include_regex": [r"shop\..*"]}, "shop", "orders", False),
    ("regex sees rewritten name", {"rewrite_db": {"a": "b"}, "include_regex": [r"b\.t"]}, "a", "t", True),
]
# fmt: on


@pytest.mark.parametrize(
    ("rules", "db", "table", "kept"),
    [case[1:] for case in TABLE_CASES],
    ids=[case[0] for case in TABLE_CASES],
)
def test_table(rules: dict[str, Any], db: str, table: str, kept: bool) -> None:
    assert F(**rules).keeps_table(db, table) is kept


Tables = list[tuple[str | None, str]] | None

# fmt: off
STATEMENT_CASES: list[tuple[str, dict[str, Any], str, bytes, Tables, bool]] = [
    # Database rules on the default database (USE), whatever the statement changes.
    ("do_db, USE prices; UPDATE sales.january", {"do_db": ["sales"]}, "prices", b"UPDATE sales.january SET a = 1", None, False),
    ("do_db, USE sales; UPDATE prices.march", {"do_db": ["sales"]}, "sales", b"UPDATE prices.march SET a = 1", None, True),
    ("ignore_db, USE prices; UPDATE sales.january", {"ignore_db": ["sales"]}, "prices", b"UPDATE sales.january SET a = 1", None, True),
    ("manual example, statement format", {"ignore_db": ["db1"], "do_table": ["db2.tbl2"]}, "db1", b"INSERT INTO db2.tbl2 VALUES (1)", [("db2", "tbl2")], False),
    ("no default database passes", {"do_db": ["sales"]}, "", b"INSERT INTO x.t VALUES (1)", None, True),
    ("transaction keywords pass", {"do_db": ["sales"]}, "prices", b"BEGIN", None, True),
    ("XA passes", {"do_db": ["sales"]}, "prices", b"XA END 'x'", None, True),
    ("rewrite before db rules", {"rewrite_db": {"a": "b"}, "do_db": ["b"]}, "a", b"INSERT INTO t VALUES (1)", None, True),
    # Table rules only with the changed tables given; unqualified ones are in the
    # (rewritten) default database, qualified ones are not rewritten.
    ("tables read by the parser", {"do_table": ["db1.t1"]}, "db1", b"INSERT INTO t2 VALUES (1)", None, False),
    ("parser: the updated table", {"do_table": ["db1.t1"]}, "x", b"UPDATE db1.t1 SET a = 1", None, True),
    ("parser: DDL names the table", {"ignore_table": ["db1.t1"]}, "db1", b"ALTER TABLE t1 ADD c INT", None, False),
    ("tables unknown: table rules not checked", {"do_table": ["db1.t1"]}, "db1", b"REPLACE INTO t2 VALUES (1)", None, True),
    ("unqualified table in default db", {"do_table": ["db1.t1"]}, "db1", b"", [(None, "t1")], True),
    ("unqualified table, rewritten db", {"rewrite_db": {"a": "b"}, "do_table": ["b.t"]}, "a", b"", [(None, "t")], True),
    ("qualified table not rewritten", {"rewrite_db": {"a": "b"}, "do_table": ["b.t"]}, "a", b"", [("a", "t")], False),
    ("first deciding table wins (ignore first)", {"do_table": ["db2.t2"], "ignore_table": ["db1.t1"]}, "", b"", [("db1", "t1"), ("db2", "t2")], False),
    ("first deciding table wins (do first)", {"do_table": ["db2.t2"], "ignore_table": ["db1.t1"]}, "", b"", [("db2", "t2"), ("db1", "t1")], True),
    ("no changed table: rules not checked", {"do_table": ["db1.t1"]}, "db1", b"", [], True),
    ("regex on any changed table", {"include_regex": [r"db2\..*"]}, "", b"", [("db1", "t"), ("db2", "t")], True),
    # Database statements: the named database against db rules and db. against wild rules.
    ("wild foo%.% keeps CREATE DATABASE foobar", {"wild_do_table": ["foo%.%"]}, "", b"CREATE DATABASE foobar", None, True),
    ("wild foo%.% drops DROP DATABASE bar", {"wild_do_table": ["foo%.%"]}, "", b"DROP DATABASE bar", None, False),
    ("wild foo%.t% does not cover the database", {"wild_do_table": ["foo%.t%"]}, "", b"CREATE DATABASE foo", None, False),
    ("wild ignore db1.% drops DROP DATABASE db1", {"wild_ignore_table": ["db1.%"]}, "db1", b"DROP DATABASE IF EXISTS `db1`", None, False),
    ("do_db on the created database", {"do_db": ["a"]}, "", b"CREATE SCHEMA b", None, False),
    ("ALTER DATABASE without a name: the default one", {"wild_ignore_table": ["db1.%"]}, "db1", b"ALTER DATABASE CHARACTER SET utf8mb4", None, False),
]
# fmt: on


@pytest.mark.parametrize(
    ("rules", "db", "query", "tables", "kept"),
    [case[1:] for case in STATEMENT_CASES],
    ids=[case[0] for case in STATEMENT_CASES],
)
def test_statement(
    rules: dict[str, Any], db: str, query: bytes, tables: Tables, kept: bool
) -> None:
    assert F(**rules).keeps_statement(db, query, tables) is kept


@pytest.mark.parametrize(
    ("query", "name"),
    [
        (b"CREATE DATABASE shop", "shop"),
        (b"create schema if not exists `a``b` CHARACTER SET utf8", "a`b"),
        (b"/* c */ DROP DATABASE IF EXISTS x;", "x"),
        (b"CREATE OR REPLACE DATABASE y", "y"),
        (b"ALTER DATABASE DEFAULT CHARACTER SET latin1", ""),
        (b"ALTER DATABASE shop COMMENT 'x'", "shop"),
        (b"CREATE TABLE db.t (a INT)", None),
        (b"DROP TABLE database_x", None),
    ],
)
def test_database_statement(query: bytes, name: str | None) -> None:
    assert named_database(query.decode()) == name


def test_like_pattern() -> None:
    assert like_pattern("a_b%c\\%d\\") == "a.b.*c%d\\\\"


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ({"do_table": ["shop"]}, "DB.TABLE"),
        ({"wild_ignore_table": [".%"]}, "DB.TABLE"),
        ({"do_db": "shop"}, "list of strings"),
        ({"include_regex": ["("]}, "not a regular expression"),
    ],
)
def test_malformed_rules(rules: dict[str, Any], message: str) -> None:
    with pytest.raises(BinlogError, match=message):
        F(**rules)


def test_value_semantics() -> None:
    flt = F(do_table=[" db.t "], rewrite_db={"a": "b"}, include_regex=["x.*"])
    assert flt.do_table == ("db.t",) and flt.rewrite_db == (("a", "b"),)
    assert flt == F(do_table=("db.t",), rewrite_db=[("a", "b")], include_regex=("x.*",))
    assert hash(flt) == hash(pickle.loads(pickle.dumps(flt)))
    assert pickle.loads(pickle.dumps(flt)).keeps_table("a", "t") is False
    assert F().is_empty and not F(rewrite_db={"a": "b"}).is_empty
    assert F(rewrite_db={"a": "b"}).renamed_db("a") == "b"
    assert F(rewrite_db={"a": "b"}).renamed_db("b") is None
    with pytest.raises(BinlogError, match="FROM->TO"):
        parse_rewrite_db("a=b")


# -- events ------------------------------------------------------------------------------


def _header(code: int) -> EventHeader:
    return EventHeader(timestamp=1, type_code=code, server_id=1, event_size=0)


def _map(table_id: int, db: str, table: str) -> TableMapEvent:
    types = bytes([ColumnType.LONG])
    return TableMapEvent(_header(EventType.TABLE_MAP), table_id, 1, db, table, types, b"", b"\0")


def _insert(table: TableMapEvent, value: int, last: bool) -> WriteRowsEvent:
    flags = RowsFlag.STMT_END if last else 0
    rows = [RowChange(None, {"@1": value})]
    return WriteRowsEvent.from_rows(_header(EventType.WRITE_ROWS), rows, table=table, flags=flags)


def _query(db: str, sql: bytes) -> QueryEvent:
    return QueryEvent(_header(EventType.QUERY), 1, 0, 0, QueryStatus(), db, sql)


def _describe(events: list[Event]) -> list[str]:
    out = []
    for event in events:
        if isinstance(event, TableMapEvent):
            out.append(f"map {event.schema}.{event.table_name}")
        elif isinstance(event, WriteRowsEvent):
            out.append(f"rows {event.schema}.{event.table_name} {event.rows[0].after}")
        elif isinstance(event, QueryEvent):
            out.append(f"query {event.db}: {event.query.decode()}")
        else:
            out.append(type(event).__name__)
    return out


def test_filter_stream() -> None:
    kept, dropped, other = _map(1, "a", "t"), _map(2, "z", "t"), _map(3, "z", "u")
    annotate = AnnotateRowsEvent(_header(EventType.MARIADB_ANNOTATE_ROWS), b"INSERT ...")
    events: list[Event] = [
        _query("a", b"BEGIN"),
        annotate,
        dropped,
        kept,
        _insert(dropped, 1, False),
        _insert(kept, 2, True),
        annotate,
        other,
        _insert(other, 3, True),
        _query("z", b"INSERT INTO t VALUES (4)"),
        _query("a", b"INSERT INTO t VALUES (5)"),
        XidEvent(_header(EventType.XID), 7),
    ]
    flt = F(ignore_db=["z"], rewrite_db={"a": "b"})
    assert [flt.keeps_event(e) for e in events] == [
        True, True, False, True, False, True, True, False, False, False, True, True
    ]  # fmt: skip
    assert _describe(list(flt.filter(events))) == [
        "query b: BEGIN",
        "AnnotateRowsEvent",
        "map b.t",
        "rows b.t {'@1': 2}",
        "query b: INSERT INTO t VALUES (5)",
        "XidEvent",
    ]
    assert list(F().filter(events)) == events


def test_from_variables() -> None:
    variables = {
        "replicate_do_db": "a, b,,c",
        "replicateRewriteDb": "x->y, z -> w",
        "include_regex": "a,b",
        "lower_case_table_names": "1",
        "replicate_annotate_row_events": "ON",
    }
    assert F.from_variables(variables, Flavor.MYSQL) == F(
        do_db=["a", "b", "c"],
        rewrite_db=[("x", "y"), ("z", "w")],
        include_regex=["a,b"],
        lower_case_table_names=1,
        flavor=Flavor.MYSQL,
    )
    assert F.from_variables({"replicate_do_table": ""}).is_empty
    with pytest.raises(BinlogError, match="lower_case_table_names"):
        F.from_variables({"lower_case_table_names": "on"})
