"""Chunks of a table read as Spark tasks, each in its own consistent-snapshot transaction.

:func:`chunk_frame` gives a DataFrame whose partitions are chunks
(:mod:`binlogkit.spark.chunks`) of one table: each task connects with
binlogkit's client, starts ``START TRANSACTION WITH CONSISTENT SNAPSHOT``,
selects its key range, and turns every text value into the binlog decoder's
value (:mod:`binlogkit.protocol.text_values`), then into the Spark value of
:func:`binlogkit.spark.schema.typed_columns`, so the rows equal what the binlog
path writes for them. The reader holds plain data only (URL, definitions,
bounds): it pickles to the executors and opens its connection there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructField, StructType

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.io.mysql import ConnectionSpec, MySQLConnection
from binlogkit.protocol.text_values import text_column
from binlogkit.schema.model import TableDef
from binlogkit.spark.chunks import Chunk, chunk_where, table_sql
from binlogkit.spark.schema import typed_columns

__all__ = ["SESSION_SQL", "chunk_frame", "mirror_schema", "open_snapshot", "read_chunk"]

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
    conn: MySQLConnection,
    table: TableDef,
    infos: Sequence[ColumnInfo],
    key: Sequence[str],
    chunk: Chunk,
    schema: pa.Schema,
) -> Iterator[pa.RecordBatch]:
    """The rows of one chunk as Arrow batches of ``schema`` (the mirror's)."""
    selects, converts = _converters(table, infos)
    sql = f"SELECT {', '.join(selects)} FROM {table_sql(table)} WHERE {chunk_where(key, chunk)}"
    rows = conn.query(sql).rows
    for start in range(0, len(rows), BATCH_ROWS):
        columns = zip(*rows[start : start + BATCH_ROWS], strict=True)
        arrays = [
            pa.array([None if v is None else convert(v) for v in values], type=field.type)
            for values, convert, field in zip(columns, converts, schema, strict=True)
        ]
        yield pa.RecordBatch.from_arrays(arrays, schema=schema)


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
    ) -> None:
        self.url, self.table, self.infos, self.key, self.chunks = url, table, infos, key, chunks

    def partitions(self) -> list[InputPartition]:
        return [ChunkPartition(chunk) for chunk in self.chunks]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, ChunkPartition)
        schema = to_arrow_schema(mirror_schema(self.infos, self.table), timezone="UTC")
        conn = open_snapshot(self.url)
        try:
            yield from read_chunk(conn, self.table, self.infos, self.key, partition.chunk, schema)
            conn.execute("COMMIT")
        finally:
            conn.close()


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
) -> Any:
    """A DataFrame of the rows of ``chunks`` of ``table``, one Spark task per chunk."""
    args = (url, table, tuple(infos), tuple(key), tuple(chunks))
    # A subclass made here is pickled by value, so the executors get the arguments.
    source = type(ChunkSource.__name__, (ChunkSource,), {"reader_args": args})
    spark.dataSource.register(source)
    return spark.read.format(ChunkSource.name()).load()
