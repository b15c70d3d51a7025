"""The change log's Parquet files, as an ingest task writes them, read back by Spark."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql.pandas.types import to_arrow_schema

from binlogkit.spark import changelog_files
from binlogkit.spark.changelog_files import ChangeLogWriter
from binlogkit.spark.schema import CHANGE_SCHEMA

ARROW_SCHEMA = to_arrow_schema(CHANGE_SCHEMA, timezone="UTC")

TIMES = (
    datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC),  # before the epoch: the day rounds down
    datetime(1970, 1, 1, 0, 0, tzinfo=UTC),
    datetime(2026, 11, 22, 23, 59, 59, 999999, tzinfo=UTC),
    datetime(2026, 11, 23, 0, 0, tzinfo=UTC),
)
TABLES = (("shop", "orders"), ("shop", "odd/name=1%#"), ("audit", "orders"))


def changes(first_pos: int, count: int) -> pa.RecordBatch:
    """``count`` row changes spread over the tables and times, positions from ``first_pos``."""
    rows: dict[str, list[Any]] = {name: [] for name in ARROW_SCHEMA.names}
    for n in range(count):
        db, table = TABLES[n % len(TABLES)]
        values = {
            "file": "binlog.000001",
            "pos": first_pos + n,
            "next_pos": first_pos + n + 1,
            "event_type": "WRITE_ROWS",
            "server_id": 1,
            "gtid": None,
            "ts": TIMES[n // len(TABLES) % len(TIMES)],
            "commit_ts": None,
            "db": db,
            "table": table,
            "op": "c",
            "before": None,
            "after": f'{{"id":{first_pos + n}}}',
            "row": 0,
        }
        for name in ARROW_SCHEMA.names:
            rows[name].append(values[name])
    return pa.RecordBatch.from_pydict(rows, schema=ARROW_SCHEMA)


def expected(batches: list[pa.RecordBatch], keep: set[tuple[str, str]] | None = None) -> set[Any]:
    found = set()
    for batch in batches:
        for row in batch.to_pylist():
            if keep is None or (row["db"], row["table"]) in keep:
                found.add((row["db"], row["table"], row["ts"].date(), row["pos"], row["after"]))
    return found


def read_back(spark: Any, folder: Path) -> set[Any]:
    frame = spark.read.parquet(str(folder))
    return {
        (r.db, r.table, r.date, r.pos, r.after)
        for r in frame.select("db", "table", "date", "pos", "after").collect()
    }


def test_spark_reads_each_change_in_its_db_table_and_utc_day(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(changelog_files, "ROW_GROUP_BYTES", 1)  # a row group per batch
    batches = [changes(100, 24), changes(200, 24)]
    writer = ChangeLogWriter(tmp_path, "part-0.parquet")
    for batch in batches:
        writer.write(batch)
    written = writer.close()

    spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")  # not the folders' zone
    try:
        assert read_back(spark, tmp_path) == expected(batches)
    finally:
        spark.conf.unset("spark.sql.session.timeZone")
    days = {r[2] for r in expected(batches)}
    assert days == {date(1969, 12, 31), date(1970, 1, 1), date(2026, 11, 22), date(2026, 11, 23)}
    # One file per folder; its rows in the order written, a row group per batch.
    assert len(written) == len(TABLES) * len(days) == len({f.path for f in written})
    for file in written:
        table = pq.read_table(tmp_path / file.path)
        assert table.num_rows == file.rows
        assert table.column("pos").to_pylist() == sorted(table.column("pos").to_pylist())
        assert pq.ParquetFile(tmp_path / file.path).num_row_groups == 2
    assert sum(f.rows for f in written) == 48
    assert any("table=odd%2Fname%3D1%25%23" in f.path for f in written)


def test_only_the_wanted_db_table_pairs_are_written(spark: Any, tmp_path: Path) -> None:
    batches = [changes(1, 30)]
    wanted = {("shop", "orders")}  # not audit.orders, though db and table each match one
    writer = ChangeLogWriter(tmp_path, "part-0.parquet", wanted)
    writer.write(batches[0])
    written = writer.close()
    assert read_back(spark, tmp_path) == expected(batches, wanted)
    assert all(f.path.startswith("db=shop/table=orders/") for f in written)


def test_abort_writes_nothing_it_held(tmp_path: Path) -> None:
    writer = ChangeLogWriter(tmp_path, "part-0.parquet")
    writer.write(changes(1, 6))
    writer.abort()
    files = sorted(tmp_path.rglob("*.parquet"))
    assert files
    assert all(pq.read_metadata(path).num_rows == 0 for path in files)
