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

MariaDB's COMPRESSED columns (VARCHAR, VARBINARY, TEXT and BLOB types), which
the workload lacks: the server inserts rows of values around its compression
rules (empty, under the 100-byte threshold, at it, compressible, random, a
value whose deflate stream just fills its length, NULL); binlogkit writes the
same rows from Python values (``str`` and ``bytes``) against the table map it
builds from ``SHOW CREATE TABLE``. Table map and row images are byte-identical
to the server's (compression at MariaDB's defaults is deterministic), and the
binlog, applied into another database, gives the same table by SELECT.
"""

from __future__ import annotations

import random
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from dump_compare import assert_same_dump, our_dump, tool_dump
from live_replay import compare, replay, snapshot

import binlogkit
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.binlog.events.table_map import TableMapEvent
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


COMPRESSED_TABLE = """CREATE TABLE z (
  id INT NOT NULL PRIMARY KEY,
  v VARCHAR(300) COMPRESSED CHARACTER SET latin1,
  vu VARCHAR(60) /*M!100301 COMPRESSED*/ CHARACTER SET utf8mb4,
  vb VARBINARY(400) COMPRESSED,
  b BLOB COMPRESSED=zlib,
  t TEXT COMPRESSED CHARACTER SET utf8mb4,
  tt TINYTEXT COMPRESSED CHARACTER SET latin1,
  mb MEDIUMBLOB COMPRESSED,
  plain VARCHAR(10) CHARACTER SET utf8mb3
) DEFAULT CHARSET=utf8mb4"""
# 121 bytes whose deflate stream just fills the value's length: stored plain
EXACT_FIT = (
    """)'3`1`X^F"A0,O%>4#Q&1KR*ZHJ;W^)QA!.G=Q"S*,@)VZH%3`_P4/;C"`Z33ITYC[PS+#<=@MX-+$>K?"""
    """:5+5(GAKMWP;!`17Q!8#BO<U9@V:VQ&6!;-(F3SO"""
)


def _compressed_rows() -> list[dict[str, Any]]:
    noise = random.Random(14)
    letters = "".join(chr(noise.randrange(33, 127)) for _ in range(300))
    blob = noise.randbytes(400)
    samples: list[tuple[str, bytes]] = [
        ("", b""),
        ("hello", b"\x00\x01"),
        ("a" * 99, b"b" * 99),
        ("a" * 100, b"b" * 100),
        ("abc" * 100, b"xyz" * 133),
        (letters, blob),
        (EXACT_FIT, EXACT_FIT.encode()),
        ("é" * 60, "ü".encode() * 100),
    ]
    rows: list[dict[str, Any]] = []
    for n, (text, data) in enumerate(samples, 1):
        rows.append(
            {
                "id": n,
                "v": text[:300],
                "vu": text[:60],
                "vb": data,
                "b": data * 3,
                "t": text * 2,
                "tt": text.encode("utf-8")[:254].decode("utf-8", "ignore"),
                "mb": blob + data,
                "plain": text[:10],
            }
        )
    rows.append(dict.fromkeys(rows[0], None) | {"id": len(rows) + 1})
    return rows


def _literal(value: Any, charset: str | None) -> str:
    if value is None or isinstance(value, int):
        return str(value).replace("None", "NULL")
    if isinstance(value, str):
        codec = {"latin1": "cp1252"}.get(charset or "", "utf-8")
        return f"_{charset} X'{value.encode(codec).hex()}'"
    return f"X'{value.hex()}'"


def _logged(paths: list[Path], table: str) -> tuple[TableMapEvent, bytes]:
    """The last table map of ``table`` in these binlogs and its rows events' images, joined."""
    found: TableMapEvent | None = None
    images = b""
    with binlogkit.open(paths, schema=None) as events:
        for event in events:
            if isinstance(event, TableMapEvent) and event.table_name == table:
                found = event
            elif isinstance(event, RowsEvent) and found and event.table_id == found.table_id:
                images += event.rows_data
    assert found is not None, f"no table map of {table}"
    return found, images


def test_compressed_columns_written_as_the_server_logs_them(
    mariadb_factory: Callable[..., MariaDBSandbox], tmp_path: Path
) -> None:
    server = mariadb_factory("writer-compressed-columns")
    server.execute(f"CREATE DATABASE src; CREATE DATABASE bk; USE src; {COMPRESSED_TABLE}")
    shown = server.query("SHOW CREATE TABLE src.z")[0][1]
    assert shown is not None and "/*M!100301 COMPRESSED*/" in shown
    definition = table_from_create(shown, "src", Session(server_collation="utf8mb4_general_ci"))
    assert [c.name for c in definition.columns if c.compressed] == [
        "v",
        "vu",
        "vb",
        "b",
        "t",
        "tt",
        "mb",
    ]
    rows = _compressed_rows()
    charsets = {c.name: c.charset for c in definition.columns}
    values = ", ".join(
        "(" + ", ".join(_literal(row[name], charsets[name]) for name in row) + ")" for row in rows
    )
    server.execute(f"INSERT INTO src.z VALUES {values}")
    server_map, server_images = _logged(server.flush_binlogs(), "z")

    with BinlogWriter.create(tmp_path, "z-bin", server_id=5) as writer:
        ours = writer.table_map(definition, server_map.table_id)
        with writer.transaction(MariaGtid(0, 5, 1), xid=1) as tx:
            tx.rows(ours, "insert", [RowChange(None, row) for row in rows])
        written = writer.file
    for field in ("column_types", "metadata", "null_bitmap", "optional_metadata"):
        assert getattr(ours, field) == getattr(server_map, field), field
    _, our_images = _logged([written], "z")
    assert our_images == server_images
    with binlogkit.open(written, schema=None) as events:
        stored = {c.after["id"]: c.after["v"] for e in events for c in getattr(e, "rows", ())}
    # both of MariaDB's rules were met: the 100-byte threshold, and a stream that just fits
    assert (stored[3].stored[0], stored[4].stored[0]) == (0x00, 0x89)
    assert stored[7].stored == b"\x00" + EXACT_FIT.encode() and stored[7].value == EXACT_FIT

    moved = replace(definition, db="bk")
    server.execute(f"USE bk; {COMPRESSED_TABLE}")
    with BinlogWriter.create(tmp_path / "bk", "bk-bin", server_id=5) as writer:
        table = writer.table_map(moved, 70)
        with writer.transaction(MariaGtid(0, 5, 1), xid=1) as tx:
            tx.rows(table, "insert", [RowChange(None, row) for row in rows])
        applied = writer.file
    _apply(server, applied)
    columns = ", ".join(f"HEX({name})" for name in rows[0])
    copy = server.query(f"SELECT {columns} FROM bk.z ORDER BY id")
    assert copy == server.query(f"SELECT {columns} FROM src.z ORDER BY id")
    assert len(copy) == len(rows)
