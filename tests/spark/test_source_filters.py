"""The ``binlog`` source's replication filter options, against the engine on the plain reader."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

import binlogkit
from binlogkit.errors import BinlogError
from binlogkit.pipeline.changes import row_changes
from binlogkit.pipeline.filters import ReplicationFilter

pytestmark = pytest.mark.corpus

MANY_TABLES = "local-mariadb-10.11/gtid/mysql-bin.000002"
OPTIONS = {
    "replicateRewriteDb": "typesdb->copy",
    "replicateWildDoTable": "copy.t\\_%, copy.s%",
    "replicate_ignore_table": "copy.t_int",
    "excludeRegex": r".*\.t_(geo|gen)",
}


def _reader(path: Path, **options: str) -> Any:
    from binlogkit.spark.source import BinlogDataSource

    source = BinlogDataSource({"path": str(path), **options})
    return source.reader(source.schema())


def _rows(reader: Any) -> list[tuple[Any, ...]]:
    return [
        (row["pos"], row["row"], row["db"], row["table"], row["op"])
        for part in reader.partitions()
        for batch in reader.read(part)
        for row in batch.to_pylist()
    ]


def test_filter_options_give_what_the_engine_keeps(corpus_dir: Path) -> None:
    path = corpus_dir / MANY_TABLES
    flt = ReplicationFilter.from_variables(OPTIONS)
    with binlogkit.open(str(path), schema=None) as reader:
        want = [
            (c.source.pos, c.source.row, "copy", c.source.table, c.op)
            for c in row_changes(reader)
            if flt.keeps_table(str(c.source.db), str(c.source.table))
        ]
    reader = _reader(path, splitSize="64k", **OPTIONS)
    got = _rows(reader)
    assert got == want
    tables = {row[3] for row in got}
    assert {"s1", "t_json"} <= tables and not {"t_int", "t_geo", "t_gen", "tä名 x"} & tables
    assert _rows(pickle.loads(pickle.dumps(reader))) == got


def test_pushed_db_filter_sees_the_rewritten_name(corpus_dir: Path) -> None:
    from pyspark.sql.datasource import EqualTo

    path = corpus_dir / MANY_TABLES
    reader = _reader(path, replicateRewriteDb="typesdb->copy", table="copy.t_json")
    assert list(reader.pushFilters([EqualTo(("db",), "copy")])) == []
    rows = _rows(reader)
    assert rows and {(db, table) for _, _, db, table, _ in rows} == {("copy", "t_json")}
    other = _reader(path, replicateRewriteDb="typesdb->copy")
    list(other.pushFilters([EqualTo(("db",), "typesdb")]))
    assert _rows(other) == []


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"replicateDoTable": "nodot"}, "DB.TABLE"),
        ({"replicateRewriteDb": "a=b"}, "FROM->TO"),
        ({"filterFlavor": "oracle"}, "filterFlavor"),
        ({"lowerCaseTableNames": "3"}, "lower_case_table_names"),
    ],
)
def test_malformed_filter_options(corpus_dir: Path, options: dict[str, str], message: str) -> None:
    with pytest.raises(BinlogError, match=message):
        _reader(corpus_dir / MANY_TABLES, **options)
