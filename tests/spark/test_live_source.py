"""The ``binlog`` source on a binlog a real MariaDB writes from the live workload.

- The workload's file read in many small splits, or in the default splits
  (one per core), equals the file read whole, and the plain reader's row changes.
- ``table=db.t`` typed columns, for every table of the workload (every
  column type MariaDB has, binlog_row_metadata=FULL), hold the plain reader's
  values under the documented mapping (zero dates → NULL, SET → its members,
  JSON → its JSON text, DECIMAL wider than 38 digits → the text the server's
  ``CAST(d AS CHAR)`` gives, GEOMETRY → (srid, wkb), COMPRESSED → the value,
  TIME → microseconds).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from test_source import collected, plain_changes

import binlogkit
from binlogkit import jsonenc
from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.rows.charsets import BINARY_COLLATION
from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.binlog.rows.types.values import Compressed, Geometry
from binlogkit.pipeline.changes import row_changes
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.sandbox.workload import Workload, build_workload, run_workload

WideDecimals = dict[tuple[str, Decimal], str]
"""The server's text of a value of a DECIMAL column wider than Spark's, by column and value."""
LiveBinlog = tuple[Path, list[str], WideDecimals]


def _wide_decimals(server: MariaDBSandbox, workload: Workload) -> WideDecimals:
    """What ``CAST(... AS CHAR)`` shows for each value the workload gives its DECIMAL columns
    of more than 38 digits."""
    out: WideDecimals = {}
    for table in workload.tables:
        for column in table.columns:
            wide = re.match(r"DECIMAL\((\d+),(\d+)\)", column.sql_type)
            if wide is None or int(wide[1]) <= 38:
                continue
            casts = [f"CAST(CAST({v} AS {wide[0]}) AS CHAR)" for v in column.values]
            (shown,) = server.query("SELECT " + ", ".join(casts))
            out.update({(column.name, Decimal(str(text))): str(text) for text in shown})
    assert len(out) > 10, out
    return out


@pytest.fixture(scope="module")
def live_binlog(mariadb_factory: Callable[..., MariaDBSandbox]) -> LiveBinlog:
    """The binlog file holding the workload's row changes, the workload's table names, and
    the server's text of its wide DECIMAL values."""
    server = mariadb_factory("spark-source")
    try:
        workload = run_workload(server, build_workload())
        files = server.flush_binlogs()
        wide = _wide_decimals(server, workload)
    finally:
        server.stop()
    biggest = max(files, key=lambda p: p.stat().st_size)
    return biggest, [f"{workload.database}.{t.name}" for t in workload.tables], wide


def test_many_splits_equal_the_whole_file(spark: Any, live_binlog: LiveBinlog) -> None:
    path, _, _ = live_binlog
    expected = plain_changes([path])
    assert len(expected) > 1000
    whole = spark.read.format("binlog").option("splitSize", "1g").load(str(path))
    auto = spark.read.format("binlog").load(str(path))  # one split per core
    split = spark.read.format("binlog").option("splitSize", "16k").load(str(path))
    assert whole.rdd.getNumPartitions() == 1
    assert auto.rdd.getNumPartitions() == spark.sparkContext.defaultParallelism > 1
    assert split.rdd.getNumPartitions() > 10
    assert collected(split) == collected(auto) == collected(whole) == expected


def _plain_images(path: Path, table: str) -> tuple[list[tuple[Any, ...]], dict[str, ColumnInfo]]:
    """(pos, row, op, before, after) of each change of ``table``, and its columns."""
    db, name = table.split(".")
    out: list[tuple[Any, ...]] = []
    columns: dict[str, ColumnInfo] = {}
    with binlogkit.open(str(path), tables=lambda d, t: (d, t) == (db, name)) as reader:
        for change in row_changes(reader):
            src = change.source
            out.append((src.pos, src.row, change.op, change.before, change.after))
    with binlogkit.open(str(path)) as reader:
        for event in reader:
            if getattr(event, "qualified_name", None) == f"`{db}`.`{name}`":
                columns = {c.key: c for c in event.columns}
                break
    return out, columns


_DATES = frozenset(
    {
        ColumnType.DATE,
        ColumnType.NEWDATE,
        ColumnType.DATETIME,
        ColumnType.DATETIME2,
        ColumnType.TIMESTAMP,
        ColumnType.TIMESTAMP2,
    }
)


_TIMESTAMPS = (ColumnType.TIMESTAMP, ColumnType.TIMESTAMP2)


def _expected(value: Any, col: ColumnInfo, wide: WideDecimals) -> Any:
    """The plain reader's value as the typed column documents it."""
    if value is None:
        return None
    if isinstance(value, Compressed):
        value = value.value
    if col.type == ColumnType.JSON:
        return jsonenc.dumps(value)
    if col.type == ColumnType.NEWDECIMAL and col.meta >> 8 > 38:
        return wide[(col.key, value)]  # wider than Spark's DecimalType: the server's text
    if col.type in _DATES and not isinstance(value, date):
        return None  # zero and invalid dates
    if isinstance(value, frozenset):
        return sorted(value)
    if isinstance(value, timedelta):
        return value // timedelta(microseconds=1)  # TIME: BIGINT microseconds
    if isinstance(value, Geometry):
        return (value.srid, value.wkb)
    if isinstance(value, bytes) and col.charset != BINARY_COLLATION:
        return value.decode("utf-8", "replace")
    return value


def _expected_image(
    image: dict[str, Any] | None, columns: dict[str, ColumnInfo], wide: WideDecimals
) -> dict[str, Any] | None:
    if image is None:
        return None
    return {key: _expected(value, columns[key], wide) for key, value in image.items()}


def _spark_value(value: Any) -> Any:
    """A collected Spark value in the plain reader's Python types."""
    if isinstance(value, bytearray):
        return bytes(value)
    if isinstance(value, datetime) and value.tzinfo is None:
        return value
    if isinstance(value, list):
        return sorted(value)
    if hasattr(value, "asDict"):
        geometry = value.asDict()
        return (geometry["srid"], bytes(geometry["wkb"]))
    return value


def _image(row: Any, timestamps: set[str]) -> dict[str, Any] | None:
    if row is None:
        return None
    out = {}
    for key, value in row.asDict().items():
        if key in timestamps and value is not None:
            value = value.astimezone(UTC)  # Spark gives TIMESTAMP in the local time zone
        out[key] = _spark_value(value)
    return out


def test_typed_columns_equal_the_plain_readers_values_and_the_typed_json_images(
    spark: Any, live_binlog: LiveBinlog
) -> None:
    """Option ``table`` gives the plain reader's values; ``typed_images`` of the JSON rows
    (Delta's ``apply_batch``) gives the same rows as option ``table``."""
    from binlogkit.spark.delta import table_columns
    from binlogkit.spark.lake.images import typed_images
    from binlogkit.spark.schema import typed_columns

    path, tables, wide = live_binlog
    changes = spark.read.format("binlog").load(str(path))
    checked = 0
    for table in tables:
        plain, columns = _plain_images(path, table)
        assert plain, table
        typed = spark.read.format("binlog").option("table", table).load(str(path))
        rows = typed.collect()
        stamps = {k for k, c in columns.items() if c.type in _TIMESTAMPS}
        got = [
            (r.pos, r.row, r.op, _image(r.before, stamps), _image(r.after, stamps)) for r in rows
        ]
        want = [
            (
                *(pos, row, op),
                *(_expected_image(before, columns, wide), _expected_image(after, columns, wide)),
            )
            for pos, row, op, before, after in plain
        ]
        assert got == want, table

        db, name = table.split(".")
        mine = changes.where((changes.db == db) & (changes.table == name))
        wanted = typed_columns(table_columns([str(path)], table), table)
        from_json = typed_images(mine, wanted, table)
        assert from_json.schema == typed.schema, table
        assert from_json.collect() == rows, table
        checked += 1
    assert checked == len(tables)


def test_typed_columns_need_the_metadata_or_a_schema(spark: Any, corpus_dir: Path) -> None:
    """A NO_LOG binlog (MariaDB's default) that creates its tables: typed with the schema
    history, and a clear error with the binlog's own columns alone (``schema=none``)."""
    path = corpus_dir / "local-mariadb-10.11/mariadb-defaults/mysql-bin.000002"
    with binlogkit.open(str(path)) as reader:
        change = next(iter(row_changes(reader)))
    table = f"{change.source.db}.{change.source.table}"
    typed = spark.read.format("binlog").option("table", table).load(str(path))
    assert typed.schema["after"].dataType.fieldNames() == list(change.after or {})
    with pytest.raises(Exception, match="carries no column names") as err:
        read = spark.read.format("binlog").option("table", table).option("schema", "none")
        read.load(str(path)).collect()
    assert "binlog_row_metadata=FULL" in str(err.value) and "option schema" in str(err.value)
    with pytest.raises(Exception, match=r"no row change of nope\.nope"):
        spark.read.format("binlog").option("table", "nope.nope").load(str(path)).collect()
