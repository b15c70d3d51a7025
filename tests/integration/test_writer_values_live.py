"""Live: binlogs written by binlogkit from Python values rebuild every workload table.

The sandbox workload (every column type MariaDB 10.11 has) runs on one server;
its binlog, decoded and replayed by binlogkit, gives each table's final rows as
Python values; the workload's CREATE TABLE texts, read by binlogkit's parser,
give the table definitions. binlogkit then writes a binlog of those rows (table
maps from the definitions, rows events from the values) twice: plain into
database ``bk``, and compressed (``log_bin_compress`` events) into ``bk_z``. A
fresh server that holds the empty tables applies both through ``mariadb-binlog
FILE | mariadb``; SELECT must then show each table holding exactly the values
written, column by column (:mod:`live_replay`'s lossless comparison).
``mariadb-binlog -vv`` reads the compressed file exactly as ``binlogkit dump
-vv`` does.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from dump_compare import assert_same_dump, our_dump, tool_dump
from live_replay import compare, replay, snapshot

import binlogkit
from binlogkit.binlog.rows.plan import RowChange
from binlogkit.gtid import MariaGtid
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.sandbox.workload import DATABASE, build_workload
from binlogkit.schema.create import table_from_create
from binlogkit.schema.model import TableDef
from binlogkit.schema.session import Session
from binlogkit.writer import BinlogWriter

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]
COMPRESSED_DB = f"{DATABASE}_z"


def _write(
    folder: Path,
    definitions: dict[str, TableDef],
    images: dict[str, list[dict[str, Any]]],
    database: str,
    compress: bool,
) -> Path:
    with BinlogWriter.create(folder, "w-bin", server_id=5) as writer:
        for number, (name, rows) in enumerate(sorted(images.items()), 1):
            table = writer.table_map(replace(definitions[name], db=database), 100 + number)
            with writer.transaction(MariaGtid(0, 5, number), xid=number, compress=compress) as tx:
                tx.rows(table, "insert", [RowChange(None, row) for row in rows])
        return writer.file


def _apply(server: MariaDBSandbox, path: Path) -> None:
    tool = subprocess.run(["mariadb-binlog", str(path)], capture_output=True, check=False)
    assert (tool.returncode, tool.stderr) == (0, b"")
    applied = subprocess.run(
        server.client_command(), input=tool.stdout, capture_output=True, check=False
    )
    assert applied.returncode == 0, applied.stderr.decode(errors="replace")


def test_written_values_rebuild_every_table(
    mariadb_factory: Callable[..., MariaDBSandbox], tmp_path: Path
) -> None:
    source = mariadb_factory("writer-values-source")
    workload = build_workload()
    source.execute(workload.script)
    with binlogkit.open(source.flush_binlogs(), schema=None) as events:
        replayed = replay(events)
    assert not replayed.problems, replayed.problems[:5]
    images = {name: rows for (db, name), rows in replayed.images.items() if db == DATABASE}
    assert len(images) >= len(workload.tables) - 1
    assert sum(len(rows) for rows in images.values()) > 200
    session = Session(server_collation=source.variable("collation_server"))
    definitions = {
        t.name: table_from_create(t.create_sql(), DATABASE, session) for t in workload.tables
    }
    plain = _write(tmp_path / "plain", definitions, images, DATABASE, False)
    packed = _write(tmp_path / "packed", definitions, images, COMPRESSED_DB, True)
    kinds = {event.type_name for event in binlogkit.open(packed, schema=None)}
    assert "MARIADB_WRITE_ROWS_COMPRESSED_V1" in kinds

    target = mariadb_factory("writer-values-target")
    creates = [table.create_sql() for table in workload.tables]
    target.execute(workload.script_of(creates))
    target.execute(replace(workload, database=COMPRESSED_DB).script_of(creates))
    _apply(target, plain)
    _apply(target, packed)
    problems = []
    for database in (DATABASE, COMPRESSED_DB):
        for name, rows in sorted(images.items()):
            problems += compare(snapshot(target, database, name), rows, lenient=False)
    assert not problems, "\n".join(problems[:10])
    assert_same_dump(tool_dump(packed, "-vv"), our_dump(packed, "-vv"), packed.name)
