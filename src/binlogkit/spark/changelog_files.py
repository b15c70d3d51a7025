"""Row-change batches into the Parquet files of a change log, a folder per db, table and day.

An ingest task decodes its partition into Arrow batches and writes them with
pyarrow's Parquet writer in the same Python worker, so the rows never travel
to the JVM and back. Layout under a task's folder, Hive-style as Spark reads
it (the partition columns live in the folder names only)::

    db=D/table=T/date=YYYY-MM-DD/NAME.parquet

one file per folder and task, its rows in binlog order.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from binlogkit.binlog.frozen import frozen_dataclass

__all__ = ["PARTITIONS", "ChangeLogWriter", "WrittenFile"]

PARTITIONS = ("db", "table", "date")
"""The partition columns of the change log, in folder order."""

ROW_GROUP_BYTES = 64 << 20
"""Rows of one file held in memory before they are written as a row group."""

HELD_BYTES = 256 << 20
"""Rows held over all of a task's files; past it the largest holding is written."""

_PLAIN_COLUMNS = frozenset({"before", "after"})
"""Unique JSON texts: a dictionary would only cost the writer its attempt."""

_ESCAPED = frozenset("\"#%'*/:=?\\\x7f{[]^") | frozenset(map(chr, range(1, 32)))
"""Characters Spark escapes as ``%XX`` in a partition folder name (and unescapes on read)."""


@frozen_dataclass
class WrittenFile:
    """A Parquet file a task wrote: its path relative to the task's folder, and its rows."""

    path: str
    rows: int


@dataclass(slots=True)
class _OpenFile:
    writer: pq.ParquetWriter
    path: str
    rows: int = 0
    held: list[pa.RecordBatch] = field(default_factory=list)
    held_bytes: int = 0


class ChangeLogWriter:
    """Writes row-change batches (the ``binlog`` source's default schema) under ``folder``.

    ``name`` is the file name in each partition folder (unique per task
    attempt); with ``tables``, only those ``(db, table)`` pairs are kept.
    Call :meth:`write` for each batch, then :meth:`close` for the files.
    """

    def __init__(
        self, folder: str | os.PathLike[str], name: str, tables: Iterable[tuple[str, str]] = ()
    ) -> None:
        self._folder = Path(folder)
        self._name = name
        self._tables = frozenset(tables)
        self._files: dict[str, _OpenFile] = {}
        self._held_bytes = 0

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        # The UTC day of each change (a date32 cast follows the timestamp's time zone).
        days = batch.column("ts").cast(pa.timestamp("us", tz="UTC")).cast(pa.date32())
        keys = pc.binary_join_element_wise(
            batch.column("db"), batch.column("table"), days.cast(pa.string()), "\x00"
        ).dictionary_encode()
        data = batch.drop_columns(["db", "table"])
        groups = keys.dictionary.to_pylist()
        for index, key in enumerate(groups):
            db, table, day = key.split("\x00")
            if self._tables and (db, table) not in self._tables:
                continue
            rows = data if len(groups) == 1 else data.filter(pc.equal(keys.indices, index))
            self._hold(self._file(db, table, day, data.schema), rows)

    def close(self) -> list[WrittenFile]:
        """Write what is held and close every file; the files written."""
        written = []
        for file in self._files.values():
            self._flush(file)
            file.writer.close()
            written.append(WrittenFile(file.path, file.rows))
        self._files.clear()
        return written

    def abort(self) -> None:
        """Close every file without writing what is held (the task failed)."""
        for file in self._files.values():
            file.writer.close()
        self._files.clear()

    def _file(self, db: str, table: str, day: str, schema: pa.Schema) -> _OpenFile:
        path = f"db={_escape(db)}/table={_escape(table)}/date={day}/{self._name}"
        file = self._files.get(path)
        if file is None:
            (self._folder / path).parent.mkdir(parents=True, exist_ok=True)
            dictionary = [name for name in schema.names if name not in _PLAIN_COLUMNS]
            writer = pq.ParquetWriter(
                self._folder / path, schema, compression="snappy", use_dictionary=dictionary
            )
            file = self._files[path] = _OpenFile(writer, path)
        return file

    def _hold(self, file: _OpenFile, rows: pa.RecordBatch) -> None:
        file.held.append(rows)
        file.held_bytes += rows.nbytes
        self._held_bytes += rows.nbytes
        if file.held_bytes >= ROW_GROUP_BYTES:
            self._flush(file)
        while self._held_bytes > HELD_BYTES:
            self._flush(max(self._files.values(), key=lambda f: f.held_bytes))

    def _flush(self, file: _OpenFile) -> None:
        if not file.held:
            return
        table = pa.Table.from_batches(file.held)
        file.writer.write_table(table, row_group_size=table.num_rows)
        file.rows += table.num_rows
        self._held_bytes -= file.held_bytes
        file.held, file.held_bytes = [], 0


def _escape(value: str) -> str:
    """A partition value as Spark writes it in a folder name."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in value)
