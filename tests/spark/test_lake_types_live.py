"""Every column type of the sandbox workload in Delta mirrors, checked against the server's SELECT.

``binlogkit spark sync --once`` snapshots the workload's typed tables (integers
and unsigned BIGINT, DECIMAL up to (65,30), FLOAT/DOUBLE, BIT, zero dates, TIME
beyond 24 h, DATETIME/TIMESTAMP fractions, latin1/utf16/ucs2/utf32/gbk text,
binary strings, ENUM, SET, JSON, GEOMETRY), then streams inserts of every
value, an update of every column and a delete. After each run every mirror
equals the server's rows, read through casts that give both sides one text
form (the mapping of docs/lakehouse.md): a direct oracle, independent of the
binlog path's typing code.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from binlogkit.sandbox import MariaDBSandbox
from binlogkit.sandbox.workload import DATABASE, Column, Table, Workload, build_workload

pytest.importorskip("delta")

from binlogkit.spark.lakehouse import sync

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

TABLES = (
    *("t_int", "t_decimal", "t_float", "t_bit", "t_temporal", "t_bin", "t_enum_set", "t_json"),
    *("t_geo", "t_str_latin1", "t_str_utf16", "t_str_ucs2", "t_str_utf32", "t_str_gbk"),
)

Check = tuple[str, str, Callable[[str], Any]]
"""A column's server expression, mirror (Spark SQL) expression, and the form compared."""


_GEOMETRIES = frozenset(
    {"GEOMETRY", "POINT", "LINESTRING", "POLYGON", "GEOMETRYCOLLECTION"}
    | {"MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON"}
)


def _text(value: str) -> str:
    return value


def _zero_or(column: str, server: str) -> str:
    """``server``, NULL where the server holds a zero date or one with a zero part (the lake's
    NULL: Spark's dates cannot hold them)."""
    parts = f"YEAR({column}) = 0 OR MONTH({column}) = 0 OR DAYOFMONTH({column}) = 0"
    return f"IF({parts}, NULL, {server})"


def _check(column: Column) -> Check:
    """How to compare ``column`` of the server and of the mirror."""
    name, kind = f"`{column.name}`", column.sql_type.split("(")[0].split(" ")[0]
    if kind in ("FLOAT", "DOUBLE", "REAL"):
        return f"CAST({name} AS DOUBLE)", f"CAST({name} AS DOUBLE)", float
    if kind in ("BIT", "YEAR") or "ZEROFILL" in column.sql_type:
        return f"{name} + 0", f"CAST({name} AS STRING)", _text
    if kind == "DATE":
        return _zero_or(name, name), f"CAST({name} AS STRING)", _text
    if kind == "DATETIME":
        shown = f"DATE_FORMAT({name}, '%Y-%m-%d %H:%i:%s.%f')"
        return _zero_or(name, shown), f"date_format({name}, 'yyyy-MM-dd HH:mm:ss.SSSSSS')", _text
    if kind == "TIMESTAMP":
        micros = f"NULLIF(CAST(UNIX_TIMESTAMP({name}) * 1000000 AS SIGNED), 0)"
        return micros, f"CAST(unix_micros({name}) AS STRING)", _text
    if kind == "TIME":
        micros = f"CAST(TIME_TO_SEC({name}) * 1000000 AS SIGNED)"
        return micros, f"CAST({name} AS STRING)", _text
    if kind == "SET":
        return name, f"array_join({name}, ',')", _text
    if kind in ("BINARY", "VARBINARY") or "BLOB" in kind or "SET binary" in column.sql_type:
        return f"HEX({name})", f"hex({name})", _text
    if kind in _GEOMETRIES:
        server = f"CONCAT(ST_SRID({name}), ':', HEX(ST_AsBinary({name})))"
        return server, f"concat({name}.srid, ':', hex({name}.wkb))", _text
    return f"CAST({name} AS CHAR)", f"CAST({name} AS STRING)", _text  # numbers, text, ENUM, JSON


def _rows(rows: list[tuple[Any, ...]], forms: list[Callable[[str], Any]]) -> list[tuple[Any, ...]]:
    compared = (
        tuple(None if v is None else form(str(v)) for v, form in zip(row, forms, strict=True))
        for row in rows
    )
    return sorted(compared, key=repr)


def _mirrors_equal_the_server(spark: Any, server: MariaDBSandbox, lake: Path, tables: Any) -> None:
    for table in tables:
        checks = [_check(column) for column in table.columns]
        forms = [form for _, _, form in checks]
        sql = f"SELECT {', '.join(s for s, _, _ in checks)} FROM `{DATABASE}`.`{table.name}`"
        mirror = spark.read.format("delta").load(str(lake / DATABASE / table.name / "mirror"))
        mine = mirror.selectExpr(*(m for _, m, _ in checks)).collect()
        theirs = server.query(sql)
        assert len(theirs) >= table.rows - 3, table.name
        assert _rows([tuple(r) for r in mine], forms) == _rows(theirs, forms), table.name


def _streamed(table: Table) -> list[str]:
    """Inserts that give every column each of its values, an update of every column of one
    row (to NULL where it can), a delete."""
    count = max(len(c.values) for c in table.columns)
    data = [c for c in table.columns if c.name != "id"]
    sets = ", ".join(f"`{c.name}` = {table.value(c, 0 if c.nullable else 2)}" for c in data)
    return [
        table.insert_sql(range(500, 500 + count)),
        f"UPDATE `{table.name}` SET {sets} WHERE `id` = 2",
        f"DELETE FROM `{table.name}` WHERE `id` = 3",
    ]


def test_snapshot_and_stream_equal_the_servers_select_for_every_type(
    spark: Any, mariadb_factory: Callable[..., MariaDBSandbox], tmp_path: Path
) -> None:
    tables = [t for t in build_workload().tables if t.name in TABLES]
    assert {t.name for t in tables} == set(TABLES)
    created = (s for t in tables for s in (t.create_sql(), t.insert_sql(range(t.rows))))
    workload = Workload(DATABASE, tuple(tables), tuple(created))
    server = mariadb_factory("lake-types")
    server.execute(workload.script)
    url = f"mariadb://root@localhost/?socket={server.socket}"
    names = [f"{DATABASE}.{t.name}" for t in tables]

    first = sync(url, tmp_path, tables=names, once=True, spark=spark)
    assert first.snapshot is not None and first.snapshot.start is not None
    _mirrors_equal_the_server(spark, server, tmp_path, tables)

    server.execute(workload.script_of(s for t in tables for s in _streamed(t)))
    sync(url, tmp_path, tables=names, once=True, spark=spark)
    _mirrors_equal_the_server(spark, server, tmp_path, tables)
