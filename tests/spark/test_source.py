"""The ``binlog`` Spark data source against the plain Python reader, on corpus files.

- Every small corpus file the plain reader decodes gives, through Spark, the
  row changes ``binlogkit rows`` gives: same count, values and order.
- ``events=all`` lists what ``binlogkit events`` lists, also when files are
  cut into many splits.
- Pushed-down filters give what Spark's own filtering gives, and the reader
  never decodes the rows of other tables or operations.
- The reader and its partitions pickle with plain ``pickle``.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

import binlogkit
from binlogkit import jsonenc
from binlogkit.binlog.constants import EventType
from binlogkit.binlog.events import Event
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.binlog.info import list_events
from binlogkit.errors import BinlogError
from binlogkit.pipeline.changes import row_changes

pytestmark = pytest.mark.corpus

CHANGE_COLUMNS = (
    "file",
    "pos",
    "row",
    "gtid",
    "server_id",
    "db",
    "table",
    "unix_millis(ts) AS ts_ms",
    "op",
    "before",
    "after",
)
MANY_TABLES = "local-mariadb-10.11/gtid/mysql-bin.000002"
BIG = "local-mariadb-10.11/full/mysql-bin.000002"
"""A 4 MB file of many transactions."""
ENCRYPTED = "local-mariadb-10.11/encrypted"


def plain_changes(paths: list[Path]) -> list[tuple[Any, ...]]:
    """The ``binlogkit rows`` envelope of each row change, as a tuple in CHANGE_COLUMNS order
    (the files read as one input, as the source reads them: one schema history)."""
    with binlogkit.open([str(path) for path in paths]) as reader:
        return change_tuples(reader)


def change_tuples(events: Iterable[Event]) -> list[tuple[Any, ...]]:
    """The row changes of ``events`` as tuples in CHANGE_COLUMNS order."""
    out = []
    for change in row_changes(events):
        src = change.source
        out.append(
            (
                src.file,
                src.pos,
                src.row,
                src.gtid,
                src.server_id,
                src.db,
                src.table,
                src.ts_ms,
                change.op,
                None if change.before is None else jsonenc.dumps(change.before),
                None if change.after is None else jsonenc.dumps(change.after),
            )
        )
    return out


def collected(df: Any, columns: tuple[str, ...] = CHANGE_COLUMNS) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in df.selectExpr(*columns).collect()]


def test_corpus_files_give_the_plain_readers_row_changes(
    spark: Any, sample_corpus_files: tuple[Path, ...]
) -> None:
    paths = list(sample_corpus_files)
    expected = plain_changes(paths)
    assert len(expected) > 1000
    df = spark.read.format("binlog").load([str(p) for p in paths])
    assert df.rdd.getNumPartitions() < len(paths)  # small files share partitions
    assert collected(df) == expected


def test_events_all_lists_what_binlogkit_events_lists(
    spark: Any, sample_corpus_files: tuple[Path, ...]
) -> None:
    paths = [p for p in sample_corpus_files if p.stat().st_size > 4096][:8]
    expected = []
    for path in paths:
        with binlogkit.open(str(path)) as reader:
            for row in list_events(reader):
                header = row.event.header
                listing = (row.log_name, row.pos, header.end, header.type_name, row.server_id)
                expected.append((*listing, row.end_log_pos, header.event_size, row.info))
    df = (
        spark.read.format("binlog")
        .option("events", "all")
        .option("splitSize", "2k")
        .load([str(p) for p in paths])
    )
    assert df.rdd.getNumPartitions() > 2 * len(paths)  # really cut into splits
    columns = ("file", "pos", "next_pos", "event_type", "server_id", "end_log_pos", "size", "info")
    assert collected(df, columns) == expected


def test_pushed_filters_give_what_spark_filtering_gives(spark: Any, corpus_dir: Path) -> None:
    path = str(corpus_dir / MANY_TABLES)
    everything = collected(spark.read.format("binlog").load(path))
    tables = {row[6] for row in everything}
    assert len(tables) > 5
    low = everything[len(everything) // 3][1]
    condition = "`table` IN ('t_int', 't_bit', 't_json') AND op = 'u' AND pos >= {low}"
    pushed = spark.read.format("binlog").option("splitSize", "8k").load(path)
    got = collected(pushed.where(condition.format(low=low)))
    want = [
        row
        for row in everything
        if row[6] in ("t_int", "t_bit", "t_json") and row[8] == "u" and row[1] >= low
    ]
    assert want and got == want
    db = everything[0][5]
    assert collected(pushed.where(f"db = '{db}' AND file = 'mysql-bin.000002'")) == everything
    assert collected(pushed.where("file = 'other.000001'")) == []


def _reader(path: Path | None, parallelism: int | None = None, **options: str) -> Any:
    from binlogkit.spark.source import BinlogDataSource

    source = BinlogDataSource({"path": str(path)} if path else {})
    source.options.update(options)
    source.parallelism = parallelism
    return source.reader(source.schema())


def _rows(reader: Any) -> list[dict[str, Any]]:
    return [row for part in reader.partitions() for b in reader.read(part) for row in b.to_pylist()]


def test_reader_skips_rows_of_other_tables_and_operations(
    corpus_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyspark.sql.datasource import EqualTo, In

    reader = _reader(corpus_dir / MANY_TABLES)
    filters = [In(("table",), ("t_int", "t_json")), EqualTo(("op",), "d"), EqualTo(("x",), 1)]
    left = list(reader.pushFilters(filters))
    assert left == [filters[2]]  # not a column of ours: Spark keeps it
    decoded: list[tuple[str | None, str]] = []
    original = RowsEvent._decode_rows

    def spy(self: RowsEvent) -> Any:
        decoded.append((self.table_name, type(self).__name__))
        return original(self)

    monkeypatch.setattr(RowsEvent, "_decode_rows", spy)
    rows = _rows(reader)
    assert rows and {(r["table"], r["op"]) for r in rows} <= {("t_int", "d"), ("t_json", "d")}
    assert decoded and all(t in ("t_int", "t_json") and "Delete" in k for t, k in decoded)


def test_reader_pickles_cleanly(corpus_dir: Path) -> None:
    from pyspark.sql.datasource import GreaterThan

    reader = _reader(corpus_dir / MANY_TABLES, splitSize="64k")
    list(reader.pushFilters([GreaterThan(("pos",), 5000)]))
    parts = reader.partitions()
    assert len(parts) > 1
    copy = pickle.loads(pickle.dumps(reader))
    assert [pickle.loads(pickle.dumps(p)) for p in parts] == parts
    assert _rows(copy) == _rows(reader)
    assert all(row["pos"] > 5000 for row in _rows(copy))


def test_errors_name_file_and_offset(spark: Any, corpus_dir: Path) -> None:
    path = corpus_dir / "local-mariadb-10.11/full/mysql-bin.000003"
    with pytest.raises(BinlogError) as plain:
        plain_changes([path])
    with pytest.raises(Exception) as err:
        spark.read.format("binlog").load(str(path)).collect()
    assert str(plain.value) in str(err.value)
    assert f"offset {plain.value.offset}" in str(err.value)


def test_ranges_read_the_changes_inside_them(corpus_dir: Path, tmp_path: Path) -> None:
    """Option ``ranges``: a file from a transaction start on, and an active binlog's
    complete part (its last event still being written), each cut into splits."""
    source = corpus_dir / MANY_TABLES
    with binlogkit.open(str(source)) as reader:
        gtids = [e.header.offset for e in reader if e.header.type_code == EventType.MARIADB_GTID]
    start, end = gtids[5], gtids[-5]
    active = tmp_path / source.name
    active.write_bytes(source.read_bytes()[: end + 7])
    ranges = [[str(source), start, None], [str(active), 0, end]]
    reader = _reader(None, ranges=json.dumps(ranges), splitSize="8k")
    assert len(reader.partitions()) > 4
    got = [(r["pos"], r["row"], r["gtid"], r["op"], r["before"], r["after"]) for r in _rows(reader)]
    plain = [(t[1], t[2], t[3], t[8], t[9], t[10]) for t in plain_changes([source])]
    assert got == [t for t in plain if t[0] >= start] + [t for t in plain if t[0] < end]
    with pytest.raises(BinlogError, match="option ranges must be"):
        _reader(None, ranges='[["a", 0]]')


def test_default_split_size_gives_each_core_a_split(corpus_dir: Path) -> None:
    path = corpus_dir / BIG  # 4 MB: 4 splits of at least 1 MiB, were it not for large events
    assert len(_reader(path).partitions()) == 1  # parallelism unknown: 64 MiB splits
    assert len(_reader(path, parallelism=1).partitions()) == 1
    assert len(_reader(path, parallelism=2).partitions()) == 2
    assert len(_reader(path, parallelism=3).partitions()) == 3
    assert len(_reader(path, parallelism=8).partitions()) == 3  # one transaction holds 2.3 MB


def test_encrypted_files_read_with_their_key_file(spark: Any, corpus_dir: Path) -> None:
    """Option keyFile: the corpus' encrypted MariaDB 10.11 binlogs give the row changes the
    plain reader gives with the key file; only the key file's path goes to the executors."""
    folder = corpus_dir / ENCRYPTED
    paths = [str(folder / f"mysql-bin.00000{n}") for n in (1, 2)]  # 3: a TIME without width
    keys = folder / "keys.txt"
    with binlogkit.open(paths, key_file=keys) as reader:
        expected = change_tuples(reader)
    assert len(expected) > 100
    df = spark.read.format("binlog").option("keyFile", str(keys)).load(paths)
    assert collected(df) == expected
    with pytest.raises(Exception, match="events after START_ENCRYPTION are encrypted"):
        spark.read.format("binlog").load(paths[1]).collect()
    reader = _reader(Path(paths[1]), keyFile=str(keys))
    shipped = pickle.dumps(reader) + b"".join(pickle.dumps(p) for p in reader.partitions())
    key = bytes.fromhex(keys.read_text().split("1;")[1].split()[0])
    assert str(keys).encode() in shipped and key not in shipped
