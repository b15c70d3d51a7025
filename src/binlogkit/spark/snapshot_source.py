"""Chunks of a table read as Spark tasks, each in its own consistent-snapshot transaction.

:func:`chunk_frame` gives a DataFrame whose partitions are chunks
(:mod:`binlogkit.spark.chunks`) of one table: each task connects with
binlogkit's client, starts ``START TRANSACTION WITH CONSISTENT SNAPSHOT``,
selects its key range, and turns every text value into the binlog decoder's
value (:mod:`binlogkit.protocol.text_values`), then into the Spark value of
:func:`binlogkit.spark.schema.typed_columns`, so the rows equal what the binlog
path writes for them. The reader holds plain data only (URL, definitions,
bounds): it pickles to the executors and opens its connection there.

The chunks are read with the table's columns at the snapshot's start S, but
each in a snapshot of its own, at a position P >= S: DDL on the table in
between is seen (:func:`check_definition`). An ALTER that commits after a
chunk's snapshot began and before its SELECT makes InnoDB refuse the read
("table definition has changed"): the chunk is read again in a new snapshot.
Once its SELECT has read the table, the transaction's metadata lock keeps the
definition until COMMIT, so the definition read then is the one the rows were
read with: when every column of S is there with the same type (columns added,
indexes changed), the rows hold S's columns exactly as of P, and the stream
from S replays the DDL and the changes up to P over them. A column of S gone,
renamed or retyped is an error naming the table, the column and both positions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructField, StructType

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.errors import BinlogError, ServerError
from binlogkit.io.mysql import ConnectionSpec, MySQLConnection
from binlogkit.protocol.text_values import text_column
from binlogkit.schema.model import Catalog, ColumnDef, TableDef, TableName
from binlogkit.schema.seed import reread_tables
from binlogkit.schema.store import Position
from binlogkit.schema.table_map import column_infos
from binlogkit.spark.chunks import Chunk, chunk_where, table_sql
from binlogkit.spark.schema import typed_columns

__all__ = [
    "SESSION_SQL",
    "check_definition",
    "chunk_frame",
    "mirror_schema",
    "open_snapshot",
    "read_chunk",
    "reads_alike",
    "snapshot_position",
]

SESSION_SQL = (
    "SET NAMES utf8mb4",
    "SET character_set_results = binary",
    "SET time_zone = '+00:00'",
    "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
)
"""The session a snapshot reads in: values as stored, TIMESTAMP in UTC."""

BATCH_ROWS = 8192
"""Rows per Arrow record batch."""

Convert = Callable[[str], Any]

_DEFINITION_CHANGED = 1412
"""ER_TABLE_DEF_CHANGED: the table was altered after the transaction's snapshot began."""
_UNKNOWN_COLUMN = 1054
READ_ATTEMPTS = 5
"""How many snapshots a chunk is read in while ALTERs keep landing before its SELECT."""


def open_snapshot(url: str) -> MySQLConnection:
    """A connection in the snapshot's session, inside ``START TRANSACTION WITH CONSISTENT
    SNAPSHOT`` (read only)."""
    conn = MySQLConnection.connect(ConnectionSpec.from_url(url))
    try:
        for sql in SESSION_SQL:
            conn.execute(sql)
        conn.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY")
    except BaseException:
        conn.close()
        raise
    return conn


def snapshot_position(conn: MySQLConnection) -> Position:
    """The binlog position (and GTID position) a consistent-snapshot transaction sees."""
    status = {
        str(name).lower(): value
        for name, value in conn.query("SHOW STATUS LIKE 'binlog_snapshot_%'").rows
    }
    file, pos = status.get("binlog_snapshot_file"), status.get("binlog_snapshot_position")
    if not file or pos is None:
        raise BinlogError(
            "the server gives no binlog position of a consistent snapshot "
            "(status binlog_snapshot_file/binlog_snapshot_position)",
            hint="the snapshot needs MariaDB with the binary log on",
        )
    (gtid,) = conn.query(f"SELECT BINLOG_GTID_POS('{file}', {int(pos)})").rows[0]
    return Position(file, int(pos), gtid or None)


def _reading(info: ColumnInfo) -> ColumnInfo:
    """What of a column says how its values read (not its place, key or visibility)."""
    return replace(info, index=0, primary_key=False, visible=None)


def _type(column: ColumnDef) -> str:
    """A column's type, short: ``varchar(20)``, ``decimal(10,2) unsigned``."""
    size = [n for n in (column.length, column.precision) if n is not None]
    if column.scale is not None and size:
        size.append(column.scale)
    text = column.type + (f"({','.join(map(str, size))})" if size else "")
    charset = f" {column.charset}" if column.charset else ""
    return text + (" unsigned" if column.unsigned else "") + charset


def reads_alike(table: TableDef, now: TableDef) -> bool:
    """Whether ``now`` has the columns of ``table``, in its order, each read the same, and its
    primary key."""

    def reading(t: TableDef) -> list[tuple[str, ColumnInfo]]:
        return [((i.name or "").lower(), _reading(i)) for i in column_infos(t)]

    def key(t: TableDef) -> list[str]:
        return [k.lower() for k in t.primary_key]

    return reading(table) == reading(now) and key(table) == key(now)


def check_definition(conn: MySQLConnection, table: TableDef, start: Position) -> None:
    """That every column of ``table`` (its definition at the snapshot's start ``start``) reads
    the same in the table now, in ``conn``'s snapshot; else an error naming the column, the
    snapshot's position and ``start``."""
    name = TableName(table.db, table.name)
    now = reread_tables(conn, Catalog(), [name]).table(table.db, table.name)
    have = {} if now is None else {i.name.lower(): i for i in column_infos(now) if i.name}
    columns = {} if now is None else {c.name.lower(): c for c in now.columns}
    for column, info in zip(table.columns, column_infos(table), strict=True):
        found = have.get(column.name.lower())
        if found is not None and _reading(found) == _reading(info):
            continue
        what = "gone (dropped or renamed)"
        if now is None:
            what = "gone: the table was dropped or renamed"
        elif found is not None:
            what = f"{_type(columns[column.name.lower()])}, not {_type(column)} as at the start,"
        raise BinlogError(
            f"table {name} changed while the snapshot read it: column {column.name} is {what} "
            f"in a chunk's read at {snapshot_position(conn)}, after the snapshot's start "
            f"{start}, so its values as of the start cannot be read",
            hint="start the snapshot again once the DDL is done: delete "
            "LAKE/_binlogkit/snapshot.json, LAKE/_binlogkit/schema.jsonl and the mirrors it "
            "wrote (or use a new lake); a column added while the snapshot runs is followed",
        )


def mirror_schema(infos: Sequence[ColumnInfo], table: TableDef) -> StructType:
    """The mirror's columns: those of the MERGE of :mod:`binlogkit.spark.delta` (all
    nullable)."""
    typed = typed_columns(infos, f"{table.db}.{table.name}")
    return StructType([StructField(c.name, c.data_type, True) for c in typed])


def _converters(table: TableDef, infos: Sequence[ColumnInfo]) -> tuple[list[str], list[Convert]]:
    typed = typed_columns(infos, f"{table.db}.{table.name}")
    selects, converts = [], []
    for column, info, spark_column in zip(table.columns, infos, typed, strict=True):
        reader = text_column(column, info)
        selects.append(reader.select)
        parse, to_spark = reader.parse, spark_column.convert
        converts.append(lambda text, p=parse, s=to_spark: s(p(text)))
    return selects, converts


def read_chunk(
    url: str,
    table: TableDef,
    infos: Sequence[ColumnInfo],
    key: Sequence[str],
    chunk: Chunk,
    schema: pa.Schema,
    start: Position,
) -> Iterator[pa.RecordBatch]:
    """The rows of one chunk as Arrow batches of ``schema`` (the mirror's), read in a
    consistent snapshot of its own with the columns of ``table`` at the snapshot's ``start``
    (see the module doc)."""
    selects, converts = _converters(table, infos)
    sql = f"SELECT {', '.join(selects)} FROM {table_sql(table)} WHERE {chunk_where(key, chunk)}"
    rows = _select(url, sql, table, start)
    for first in range(0, len(rows), BATCH_ROWS):
        columns = zip(*rows[first : first + BATCH_ROWS], strict=True)
        arrays = [
            pa.array([None if v is None else convert(v) for v in values], type=field.type)
            for values, convert, field in zip(columns, converts, schema, strict=True)
        ]
        yield pa.RecordBatch.from_arrays(arrays, schema=schema)


def _select(url: str, sql: str, table: TableDef, start: Position) -> list[Any]:
    """The rows of ``sql`` (a chunk of ``table``) in a consistent snapshot in which the table's
    columns read as at ``start``; in a new snapshot after an ALTER that landed before the
    SELECT."""
    attempt = 1
    while True:
        with open_snapshot(url) as conn:
            try:
                rows = conn.query(sql).rows
            except ServerError as err:
                if err.code == _DEFINITION_CHANGED and attempt < READ_ATTEMPTS:
                    attempt += 1
                    continue
                if err.code in (_DEFINITION_CHANGED, _UNKNOWN_COLUMN):
                    check_definition(conn, table, start)
                raise
            check_definition(conn, table, start)
            conn.execute("COMMIT")
            return rows


@frozen_dataclass
class ChunkPartition(InputPartition):
    chunk: Chunk


class ChunkReader(DataSourceReader):
    """One partition per chunk; each read in a transaction of its own."""

    def __init__(
        self,
        url: str,
        table: TableDef,
        infos: tuple[ColumnInfo, ...],
        key: tuple[str, ...],
        chunks: tuple[Chunk, ...],
        start: Position,
    ) -> None:
        self.url, self.table, self.infos, self.key, self.chunks = url, table, infos, key, chunks
        self.start = start

    def partitions(self) -> list[InputPartition]:
        return [ChunkPartition(chunk) for chunk in self.chunks]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, ChunkPartition)
        schema = to_arrow_schema(mirror_schema(self.infos, self.table), timezone="UTC")
        chunk = partition.chunk
        yield from read_chunk(self.url, self.table, self.infos, self.key, chunk, schema, self.start)


class ChunkSource(DataSource):
    """Format ``binlogkit_snapshot``: made per read by :func:`chunk_frame`, which sets
    :attr:`reader_args`."""

    reader_args: tuple[Any, ...] = ()

    @classmethod
    def name(cls) -> str:
        return "binlogkit_snapshot"

    def schema(self) -> StructType:
        _, table, infos, *_ = self.reader_args
        return mirror_schema(infos, table)

    def reader(self, schema: StructType) -> DataSourceReader:
        return ChunkReader(*self.reader_args)


def chunk_frame(
    spark: Any,
    url: str,
    table: TableDef,
    infos: Sequence[ColumnInfo],
    key: Sequence[str],
    chunks: Sequence[Chunk],
    start: Position,
) -> Any:
    """A DataFrame of the rows of ``chunks`` of ``table`` (its definition at the snapshot's
    ``start``), one Spark task per chunk."""
    args = (url, table, tuple(infos), tuple(key), tuple(chunks), start)
    # A subclass made here is pickled by value, so the executors get the arguments.
    source = type(ChunkSource.__name__, (ChunkSource,), {"reader_args": args})
    spark.dataSource.register(source)
    return spark.read.format(ChunkSource.name()).load()
