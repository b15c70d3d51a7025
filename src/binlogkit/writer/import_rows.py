"""Rows held elsewhere (JSON lines, CSV, Parquet) written as a binlog of row inserts.

:func:`import_rows` reads the rows of one table from a file, turns each value
into its column's value (:class:`~binlogkit.writer.import_values.ColumnInput`)
and writes a binlog a server applies (``mariadb-binlog FILE | mariadb``): a
format description, then transactions of ``rows_per_transaction`` inserts
(GTID, the table map written from the table's definition, rows events, XID),
then a STOP. The file is written under a temporary name next to the target and
renamed at the end, so a bad row (an error naming its line and column) leaves
nothing behind; the file is fsynced before the rename and its folder after it,
so a crash leaves either the old target (or none) or the whole new file.

Inputs: JSON lines, one object per line (values in binlogkit's JSON encoding,
docs/json-encoding.md: plain JSON, or tagged values such as ``{"$decimal":
"1.50"}``); CSV with a header line of column names (``\\N`` is NULL, as MySQL
writes it); Parquet (one row per record, read with pyarrow).
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import os
import secrets
import shutil
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from binlogkit.binlog.constants import ChecksumAlg, Flavor
from binlogkit.binlog.context import flavor_of
from binlogkit.binlog.events.table_map import metadata_rules
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.rows.plan import RowChange
from binlogkit.errors import BinlogError, EncodeError
from binlogkit.gtid import MariaGtid
from binlogkit.io.atomic import sync_file, sync_folder
from binlogkit.schema.model import TableDef
from binlogkit.schema.table_map import column_infos
from binlogkit.writer.binlog import BinlogWriter
from binlogkit.writer.format import format_description
from binlogkit.writer.import_values import ColumnInput

__all__ = ["FORMATS", "ImportSettings", "import_rows", "input_format"]

Format = Literal["jsonl", "csv", "parquet"]
FORMATS: dict[str, Format] = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".csv": "csv",
    ".parquet": "parquet",
}
"""File name endings → input format."""

_MISSING = object()
"""A column a record lacks."""


@frozen_dataclass
class ImportSettings:
    """How the binlog is written: the server it looks written by, its transactions."""

    flavor: Flavor = Flavor.MARIADB
    server_version: str | None = None
    server_id: int = 1
    checksum: ChecksumAlg = ChecksumAlg.CRC32
    compress: bool = False
    rows_per_transaction: int = 1000
    first_gtid: MariaGtid | None = None
    """MariaDB: the first transaction's GTID, the next ones count on (default 0-SERVER_ID-1)."""
    table_id: int = 1
    csv_null: str = "\\N"


def input_format(path: Path) -> Format:
    """The input format a file name says."""
    found = FORMATS.get(path.suffix.lower())
    if found is None:
        raise BinlogError(
            f"{path}: cannot tell the input format from the name",
            hint=f"name it {', '.join(FORMATS)}, or give --format",
        )
    return found


def import_rows(
    source: Path,
    target: Path,
    definition: TableDef,
    settings: ImportSettings | None = None,
    fmt: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Write the rows of ``source`` as inserts into ``definition``'s table, into the binlog
    ``target`` (replaced whole at the end, or left as it was on an error); the row count.

    ``fmt``: one of :data:`FORMATS`' values (default: from the name); ``progress`` hears
    the number of rows written after each transaction."""
    settings = settings or ImportSettings()
    kind = fmt or input_format(source)
    if kind not in _RECORDS:
        raise BinlogError(f"unknown input format {kind!r}", hint=f"use one of {sorted(_RECORDS)}")
    records = _RECORDS[kind](source, settings)
    fde = format_description(
        settings.flavor,
        server_version=settings.server_version,
        checksum=settings.checksum,
        server_id=settings.server_id,
    )
    rows = _Rows(definition, fde.server_version)
    folder = target.parent / f".{target.name}.{secrets.token_hex(4)}.tmp"
    count = 0
    try:
        with BinlogWriter.create(folder, "import", fde=fde, server_id=settings.server_id) as writer:
            table = writer.table_map(definition, settings.table_id)
            gtid = settings.first_gtid or MariaGtid(0, settings.server_id, 1)
            batch: list[RowChange] = []
            for where, record in records:
                batch.append(RowChange(None, rows.row(record, f"{source} {where}")))
                if len(batch) == settings.rows_per_transaction:
                    _commit(writer, table, batch, gtid, settings)
                    count += len(batch)
                    batch = []
                    if progress is not None:
                        progress(count)
                    gtid = replace(gtid, seq_no=gtid.seq_no + 1)
            if batch:
                _commit(writer, table, batch, gtid, settings)
                count += len(batch)
            written = writer.file
        sync_file(written)
        os.replace(written, target)
        sync_folder(target.parent)
    finally:
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(folder)
    return count


def _commit(
    writer: BinlogWriter,
    table: Any,
    batch: list[RowChange],
    gtid: MariaGtid,
    settings: ImportSettings,
) -> None:
    mariadb = settings.flavor is Flavor.MARIADB
    with writer.transaction(gtid if mariadb else None, compress=settings.compress) as tx:
        tx.rows(table, "insert", batch)


class _Rows:
    """Records (column name → outside value) as rows of the table's values."""

    def __init__(self, definition: TableDef, server_version: str) -> None:
        self.definition = definition
        infos = column_infos(definition, metadata_rules(server_version), flavor_of(server_version))
        self.inputs: list[ColumnInput] = []
        for column, info in zip(definition.columns, infos, strict=True):
            try:
                self.inputs.append(ColumnInput(column, info))
            except EncodeError as err:
                raise BinlogError(f"column {column.name}: {err}") from None

    def row(self, record: dict[Any, Any], where: str) -> dict[str, Any]:
        row: dict[str, Any] = {}
        for key in record:
            if not isinstance(key, str) or self.definition.column_index(key) is None:
                raise BinlogError(
                    f"{where}: {key!r} is not a column of {self.definition.table_name}"
                )
        folded = {key.casefold(): value for key, value in record.items()}
        for column in self.inputs:
            name = column.column.name
            raw = folded.get(name.casefold(), _MISSING)
            if raw is _MISSING:
                raise BinlogError(f"{where}, column {name}: missing")
            try:
                row[name] = column.value(raw)
            except EncodeError as err:
                raise BinlogError(f"{where}, column {name}: {_reason(err)}") from None
        return row


def _reason(err: EncodeError) -> str:
    """An encoder's message without its own ``column NAME: `` prefix."""
    text = str(err)
    return text.split(": ", 1)[1] if text.startswith("column ") and ": " in text else text


# -- reading the inputs ---------------------------------------------------------------------


def _jsonl(path: Path, settings: ImportSettings) -> Iterator[tuple[str, dict[Any, Any]]]:
    from binlogkit import jsonenc

    with open(path, "rb") as lines:
        for number, line in enumerate(lines, 1):
            if number == 1:
                line = line.removeprefix(codecs.BOM_UTF8)
            if not line.strip():
                continue
            try:
                record = jsonenc.loads(line)
            except ValueError as err:
                raise BinlogError(f"{path} line {number}: not JSON: {err}") from None
            if not isinstance(record, dict):
                raise BinlogError(f"{path} line {number}: not a JSON object of column values")
            yield f"line {number}", record


def _csv(path: Path, settings: ImportSettings) -> Iterator[tuple[str, dict[Any, Any]]]:
    with open(path, encoding="utf-8-sig", newline="") as text:
        reader = csv.reader(text, strict=True)
        try:
            header = next(reader, None)
            if header is None:
                raise BinlogError(f"{path}: empty, without the header line of column names")
            for fields in reader:
                where = f"line {reader.line_num}"
                if len(fields) > len(header):
                    raise BinlogError(f"{path} {where}: more fields than the header names")
                yield (
                    where,
                    {
                        name: None if value == settings.csv_null else value
                        for name, value in zip(header, fields, strict=False)  # fewer: missing
                    },
                )
        except csv.Error as err:
            raise BinlogError(f"{path} line {reader.line_num}: broken CSV: {err}") from None
        except UnicodeDecodeError as err:  # text is decoded ahead of the line being read
            raise BinlogError(
                f"{path} near line {reader.line_num + 1}: not UTF-8 text: {err}"
            ) from None


def _parquet(path: Path, settings: ImportSettings) -> Iterator[tuple[str, dict[Any, Any]]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise BinlogError(
            "reading Parquet needs pyarrow", hint="pip install 'binlogkit[spark]'"
        ) from None
    number = 0
    try:
        for batch in pq.ParquetFile(path).iter_batches():
            for record in batch.to_pylist():
                number += 1
                yield f"row {number}", record
    except (OSError, ValueError) as err:  # pyarrow's errors are both
        raise BinlogError(f"{path} row {number + 1}: broken Parquet: {err}") from None


_RECORDS: dict[str, Callable[[Path, ImportSettings], Iterator[tuple[str, dict[Any, Any]]]]] = {
    "jsonl": _jsonl,
    "csv": _csv,
    "parquet": _parquet,
}
