"""Live: the replication filters against a real MariaDB replica with the same ``replicate-*``.

A primary (binlog_format=ROW) runs a workload over databases and tables whose
names exercise the rules: ``_`` and ``%`` in names (``shop_eu`` and
``shopXeu``, ``hits_1``, ``hitsX1`` and ``hits%1``), names that differ only
in case (``Shop2.Orders``), transactions over several databases and
statements run from another default database. A replica, restarted with each
option set in its config file, replays the workload (from the GTID before
it). The row changes ``binlogkit rows`` keeps from the primary's binlog with
the same options, applied to empty tables, must equal what the replica has
(SELECT of every table); ``binlogkit tail`` on the primary must give the
same changes. A second primary with binlog_format=STATEMENT checks the
database rules on the default database (USE), with and without a rewrite,
and the table rules on the table each statement changes (which the test
knows, as a SQL parser would).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from click.testing import CliRunner

import binlogkit
from binlogkit import jsonenc
from binlogkit.binlog.events.query import QueryEvent
from binlogkit.cli.main import cli
from binlogkit.pipeline.filters import ReplicationFilter
from binlogkit.sandbox import MariaDBSandbox

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

SCHEMA: dict[str, tuple[str, ...]] = {
    "shop": ("orders", "order_items", "orders_archive"),
    "shop_eu": ("orders",),
    "shopXeu": ("orders",),
    "Shop2": ("Orders", "items"),
    "logs": ("events", "ev_2024", "evXlog"),
    "stats": ("hits_1", "hitsX1", "hits%1"),
}
COPIES = {"shop_copy": "shop", "logs2": "logs"}
"""Databases only the replica has, with the tables of another: where rewrites go."""
REPLICA_SCHEMA = {**SCHEMA, **{copy: SCHEMA[source] for copy, source in COPIES.items()}}

Options = dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class Case:
    options: Options
    kept: frozenset[str]
    """The tables (as the replica names them) that end up with rows: a check that the
    case filters something, and documentation."""


def _kept(*names: str) -> frozenset[str]:
    return frozenset(names)


SHOP = ("shop.orders", "shop.order_items", "shop.orders_archive")
STATS = ("stats.hits_1", "stats.hitsX1", "stats.hits%1")
ROW_CASES = {
    "do_db is exact (Shop2 is not shop2)": Case(
        {"replicate_do_db": ("shop", "shop2")},
        _kept(*SHOP),
    ),
    "ignore_db": Case(
        {"replicate_ignore_db": ("logs", "shop_eu")},
        _kept(*SHOP, "shopXeu.orders", "Shop2.Orders", "Shop2.items", *STATS),
    ),
    "table rules in order, any case": Case(
        {
            "replicate_do_table": ("shop2.orders",),
            "replicate_ignore_table": ("stats.hits%1",),
            "replicate_wild_do_table": ("stats.%", "shop\\_eu.%"),
            "replicate_wild_ignore_table": ("shop.%",),
        },
        _kept("Shop2.Orders", "stats.hits_1", "stats.hitsX1", "shop_eu.orders"),
    ),
    "wildcards _ and %, escapes": Case(
        {
            "replicate_wild_do_table": ("shop_eu.%", "logs.ev\\_%", "stats.hits_1"),
            "replicate_wild_ignore_table": ("%.%archive",),
        },
        _kept("shop_eu.orders", "shopXeu.orders", "logs.ev_2024", *STATS),
    ),
    "rewrite before the other rules": Case(
        {
            "replicate_rewrite_db": ("shop->shop_copy", "logs->logs2"),
            "replicate_ignore_db": ("shop",),
            "replicate_wild_ignore_table": ("shop_copy.order\\_items", "logs2.ev%"),
        },
        _kept(
            "shop_copy.orders",
            "shop_copy.orders_archive",
            "shop_eu.orders",
            "shopXeu.orders",
            "Shop2.Orders",
            "Shop2.items",
            *STATS,
        ),
    ),
    "manual example: ignore_db and do_table, row format": Case(
        {"replicate_ignore_db": ("shop",), "replicate_do_table": ("logs.ev_2024",)},
        _kept("logs.ev_2024"),
    ),
}


def _name(db: str, table: str) -> str:
    return f"`{db}`.`{table}`"


def _schema_sql(schema: dict[str, tuple[str, ...]]) -> str:
    sql = []
    for db, tables in schema.items():
        sql.append(f"DROP DATABASE IF EXISTS `{db}`; CREATE DATABASE `{db}`;")
        for table in tables:
            sql.append(f"CREATE TABLE {_name(db, table)} (id INT PRIMARY KEY, note VARCHAR(80));")
    return "\n".join(sql)


def _row_workload() -> str:
    sql = []
    for db, tables in SCHEMA.items():
        for table in tables:
            name = _name(db, table)
            values = ", ".join(f"({i}, '{db}.{table} {i}')" for i in range(1, 6))
            sql.append(f"INSERT INTO {name} VALUES {values};")
            sql.append(f"UPDATE {name} SET note = CONCAT(note, ' u') WHERE id % 2 = 0;")
            sql.append(f"DELETE FROM {name} WHERE id = 3;")
    sql += [
        "BEGIN;",
        "INSERT INTO shop.orders VALUES (10, 'tx');",
        "INSERT INTO logs.events VALUES (10, 'tx');",
        "UPDATE `Shop2`.`Orders` SET note = 'tx' WHERE id = 1;",
        "DELETE FROM stats.`hits%1` WHERE id = 5;",
        "COMMIT;",
        "USE shop;",
        "INSERT INTO logs.ev_2024 VALUES (11, 'from shop');",
        "UPDATE stats.hits_1 SET note = 'from shop';",
        "USE logs;",
        "INSERT INTO shop.order_items VALUES (12, 'from logs');",
    ]
    return "\n".join(sql)


STATEMENTS = [
    ("shop", "orders", 101),
    ("shop", "logs.events", 102),
    ("logs", "shop.orders", 103),
    ("logs", "events", 104),
    ("shop_eu", "orders", 105),
    ("Shop2", "Orders", 106),
]
"""(default database, table as the statement names it, id) of each statement-format INSERT."""
STATEMENT_CASES = {
    "do_db on the default database": (
        {"replicate_do_db": ("shop",)},
        {("shop", "orders", 101), ("logs", "events", 102)},
    ),
    "rewrite, then ignore_db on the default database": (
        {"replicate_ignore_db": ("logs",), "replicate_rewrite_db": ("shop->shop_copy",)},
        {("shop_copy", "orders", 101), ("logs", "events", 102), ("shop_eu", "orders", 105),
         ("Shop2", "Orders", 106)},
    ),
    "manual example: ignore_db and do_table, statement format": (
        {"replicate_ignore_db": ("logs",), "replicate_do_table": ("shop.orders",)},
        {("shop", "orders", 101)},
    ),
    "wild table rule on the changed table, any case": (
        {"replicate_wild_do_table": ("shop%.orders",)},
        {("shop", "orders", 101), ("shop", "orders", 103), ("shop_eu", "orders", 105),
         ("Shop2", "Orders", 106)},
    ),
}  # fmt: skip
_INSERT = re.compile(r"INSERT INTO (?:`?(\w+)`?\.)?`?(\w+)`? VALUES \((\d+),")


@dataclass
class Primary:
    server: MariaDBSandbox
    start: str
    end: str
    url: str


def _primary(factory: Callable[..., MariaDBSandbox], name: str, fmt: str, work: str) -> Primary:
    server = factory(name, server_id=1, binlog_format=fmt)
    server.execute(_schema_sql(SCHEMA))
    start = server.gtid_binlog_pos
    server.execute(work)
    server.flush_binlogs()
    url = f"mariadb://root@localhost/?socket={server.socket}"
    return Primary(server, start, server.gtid_binlog_pos, url)


@pytest.fixture(scope="module")
def row_primary(mariadb_factory: Callable[..., MariaDBSandbox]) -> Primary:
    return _primary(mariadb_factory, "filters-row-primary", "ROW", _row_workload())


@pytest.fixture(scope="module")
def statement_primary(mariadb_factory: Callable[..., MariaDBSandbox]) -> Primary:
    work = "\n".join(
        f"USE `{db}`; INSERT INTO {'.'.join(f'`{p}`' for p in table.split('.'))} "
        f"VALUES ({i}, 'statement {i}');"
        for db, table, i in STATEMENTS
    )
    return _primary(mariadb_factory, "filters-statement-primary", "STATEMENT", work)


@pytest.fixture(scope="module")
def replica(mariadb_factory: Callable[..., MariaDBSandbox]) -> MariaDBSandbox:
    return mariadb_factory("filters-replica", server_id=2, skip_slave_start=True)


_ALL_OPTIONS = {
    *(name for case in ROW_CASES.values() for name in case.options),
    *(name for options, _ in STATEMENT_CASES.values() for name in options),
}


def _replicate(replica: MariaDBSandbox, primary: Primary, options: Options) -> None:
    """Restart the replica with ``options`` alone, empty its tables, let it replay the workload."""
    replica.restart({**dict.fromkeys(_ALL_OPTIONS), **options})
    replica.execute(_schema_sql(REPLICA_SCHEMA))
    replica.replicate_from(primary.server, primary.start)
    replica.wait_for_gtid(primary.end)


def _contents(server: MariaDBSandbox) -> dict[str, set[tuple[str, str]]]:
    """Every table of the replica's schema: its (id, note) rows, for the non-empty ones."""
    out = {}
    for db, tables in REPLICA_SCHEMA.items():
        for table in tables:
            rows = server.query(f"SELECT id, note FROM {_name(db, table)}")
            if rows:
                out[f"{db}.{table}"] = {(str(i), str(note)) for i, note in rows}
    return out


def _cli_args(options: Options) -> list[str]:
    return [a for name, values in options.items() for v in values for a in (_flag(name), v)]


def _flag(variable: str) -> str:
    return "--" + variable.replace("_", "-")


def _changes(*args: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return [jsonenc.loads(line) for line in result.stdout_bytes.splitlines()]


def _applied(changes: list[dict[str, Any]]) -> dict[str, set[tuple[str, str]]]:
    """Row changes applied to empty tables (rows keyed by id), as :func:`_contents` gives them."""
    tables: dict[str, dict[int, str]] = {}
    for change in changes:
        rows = tables.setdefault(f"{change['source']['db']}.{change['source']['table']}", {})
        if change["before"] is not None:
            del rows[change["before"]["id"]]
        if change["after"] is not None:
            rows[change["after"]["id"]] = change["after"]["note"]
    return {name: {(str(i), n) for i, n in rows.items()} for name, rows in tables.items() if rows}


@pytest.mark.parametrize("name", list(ROW_CASES))
def test_row_format(name: str, row_primary: Primary, replica: MariaDBSandbox) -> None:
    case = ROW_CASES[name]
    _replicate(replica, row_primary, case.options)
    args = _cli_args(case.options)
    changes = _changes("rows", *args, str(row_primary.server.index_file))
    expected = _applied(changes)
    assert set(expected) == case.kept
    assert _contents(replica) == expected
    tail = ["tail", row_primary.url, "--oldest", "--non-blocking", "--server-id", "77", *args]
    assert _changes(*tail) == changes


@pytest.mark.parametrize("name", list(STATEMENT_CASES))
def test_statement_format(name: str, statement_primary: Primary, replica: MariaDBSandbox) -> None:
    options, expected = STATEMENT_CASES[name]
    _replicate(replica, statement_primary, options)
    flt = ReplicationFilter.from_variables({k: ",".join(v) for k, v in options.items()})
    kept, streamed = set(), set()
    paths = [str(p) for p in statement_primary.server.binlog_files()]
    with binlogkit.open(paths) as reader:
        events = list(reader)
    for event in events:  # the tables each INSERT changes, from the SQL parser
        m = _INSERT.match(event.text) if isinstance(event, QueryEvent) else None
        if m is not None and flt.keeps_statement(event.db, event.query):
            kept.add((m[1] or flt.renamed_db(event.db) or event.db, m[2], int(m[3])))
    for event in flt.filter(events):
        m = _INSERT.match(event.text) if isinstance(event, QueryEvent) else None
        if m is not None:
            streamed.add((m[1] or event.db, m[2], int(m[3])))
    assert kept == expected
    assert streamed == expected
    want: dict[str, set[tuple[str, str]]] = {}
    for db, table, i in expected:
        want.setdefault(f"{db}.{table}", set()).add((str(i), f"statement {i}"))
    assert _contents(replica) == want
