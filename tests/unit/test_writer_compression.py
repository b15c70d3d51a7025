"""Compressed transactions written by the writer, read back by binlogkit.

MySQL: GTID event, then one TRANSACTION_PAYLOAD holding BEGIN, the table map,
the rows events and the XID (as the corpus' MySQL 8.0.28/8.0.32 files have
them); the GTID event's transaction length counts itself and the payload; a
transaction spilled to disk by its binlog cache compresses the same. MariaDB:
rows events of at least ``compress_min_len`` bytes of rows become their
compressed types (166-168), smaller ones stay plain. Either way the rows read
back equal the rows written, and the events inside equal those of the same
transaction written uncompressed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import binlogkit
from binlogkit.binlog.constants import EventType, Flavor
from binlogkit.binlog.events import Event
from binlogkit.binlog.events.gtid import GtidEvent
from binlogkit.binlog.events.payload import TransactionPayloadEvent
from binlogkit.binlog.rows.plan import RowChange
from binlogkit.gtid import MariaGtid
from binlogkit.schema.model import ColumnDef, TableDef
from binlogkit.writer import BinlogWriter, format_description

TABLE = TableDef(
    "db",
    "t",
    (
        ColumnDef("id", "int", nullable=False),
        ColumnDef("name", "varchar", length=40, charset="utf8mb4", collation="utf8mb4_general_ci"),
    ),
    primary_key=("id",),
)
ROWS = [{"id": i, "name": f"row {i} " + "x" * (i % 30)} for i in range(500)]


def _write(folder: Path, flavor: Flavor, compress: bool, memory_size: int = 1 << 20) -> Path:
    fde = format_description(flavor)
    with BinlogWriter.create(folder, "bin", fde=fde, clock=lambda: 1_700_000_000.0) as writer:
        table = writer.table_map(TABLE, 70)
        gtid = MariaGtid(0, 1, 1) if flavor is Flavor.MARIADB else None
        with writer.transaction(gtid, xid=9, memory_size=memory_size, compress=compress) as tx:
            tx.rows(table, "insert", [RowChange(None, row) for row in ROWS])
            tx.rows(table, "update", [RowChange(ROWS[0], {**ROWS[0], "name": "a"})])
            tx.rows(table, "delete", [RowChange(row, None) for row in ROWS[1:4]])
        return writer.file


def _events(path: Path) -> list[Event]:
    with binlogkit.open(path, schema=None) as reader:
        return list(reader)


def _changes(events: list[Event]) -> list[tuple[Any, Any]]:
    return [(c.before, c.after) for e in events for c in getattr(e, "rows", ())]


def _inner(event: Event) -> tuple[str, Any, Any]:
    """What an event says, apart from where it is."""
    return (event.type_name, getattr(event, "rows", None), getattr(event, "query", None))


def test_mysql_transaction_in_one_payload(tmp_path: Path) -> None:
    plain = _events(_write(tmp_path / "plain", Flavor.MYSQL, False))
    for memory_size in (1 << 20, 256):  # in memory, and spilled to disk
        path = _write(tmp_path / f"zstd{memory_size}", Flavor.MYSQL, True, memory_size)
        events = _events(path)
        kinds = [e.type_name for e in events]
        assert kinds[:3] == ["FORMAT_DESCRIPTION", "ANONYMOUS_GTID", "TRANSACTION_PAYLOAD"]
        assert kinds[-1] == "STOP"
        gtid, payload = events[1], events[2]
        assert isinstance(gtid, GtidEvent) and isinstance(payload, TransactionPayloadEvent)
        assert gtid.transaction_length == payload.header.end - gtid.header.offset
        assert payload.header.event_size < plain[-1].header.offset // 3  # it does compress
        inside = events[3:-1]
        assert [_inner(e) for e in inside] == [_inner(e) for e in plain[2:-1]]
        assert {e.header.offset for e in inside} == {payload.header.end}
        assert payload.uncompressed_size == len(payload.uncompressed())
        assert _changes(events) == _changes(plain)


def test_mariadb_rows_events_compressed(tmp_path: Path) -> None:
    plain = _events(_write(tmp_path / "plain", Flavor.MARIADB, False))
    events = _events(_write(tmp_path / "zlib", Flavor.MARIADB, True))
    kinds = [e.type_name for e in events]
    plain_kinds = [e.type_name for e in plain]
    assert kinds == [
        k.replace("WRITE_ROWS_V1", "MARIADB_WRITE_ROWS_COMPRESSED_V1") for k in plain_kinds
    ]
    compressed = [e.header.type_code for e in events if getattr(e, "compressed", False)]
    assert compressed == [EventType.MARIADB_WRITE_ROWS_COMPRESSED_V1] * 5
    small = [e for e in events if e.type_name in ("UPDATE_ROWS_V1", "DELETE_ROWS_V1")]
    assert len(small) == 2  # under 256 bytes of rows: left plain, as MariaDB does
    assert _changes(events) == _changes(plain)
    assert events[-1].header.offset < plain[-1].header.offset // 3
