"""Transactions of rows into ``e.w (id INT PRIMARY KEY, name VARCHAR(20))``, written by
binlogkit's writer: for tests that write, continue and insert into encrypted binlogs.

A plain module, not a conftest, so tests in any folder can import it by name.
"""

from __future__ import annotations

from pathlib import Path

import binlogkit
from binlogkit.binlog.constants import ColumnType, EventType
from binlogkit.binlog.events import Event
from binlogkit.binlog.events.table_map import OptionalMetadataType, TableMapEvent
from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.binlog.rows.plan import RowChange
from binlogkit.gtid import MariaGtid
from binlogkit.writer import BinlogWriter

CT = ColumnType
W_COLUMNS = [
    ColumnInfo(0, CT.LONG, CT.LONG, 0, False),
    ColumnInfo(1, CT.VARCHAR, CT.VARCHAR, 80, True),  # VARCHAR(20), utf8mb4: 80 bytes
]


def w_row(i: int) -> dict[str, int | str | None]:
    """Row ``i`` of e.w: every third name is NULL."""
    return {"id": i, "name": f"n{i}" if i % 3 else None}


def write_rows(writer: BinlogWriter, seq: int, ids: range) -> None:
    """One transaction (GTID 0-7-``seq``) inserting rows ``ids`` into e.w."""
    table = TableMapEvent.build(
        writer.header(EventType.TABLE_MAP),
        90,
        "e",
        "w",
        W_COLUMNS,
        optional_fields=[
            (OptionalMetadataType.DEFAULT_CHARSET, (45, ())),
            (OptionalMetadataType.COLUMN_NAME, ("id", "name")),
        ],
        server_version=writer.current.fmt.server_version,
    )
    with writer.transaction(MariaGtid(0, 7, seq), xid=seq) as tx:
        tx.rows(table, "insert", [RowChange(None, w_row(i)) for i in ids])


def transaction_events(folder: Path, seq: int, ids: range) -> list[Event]:
    """The events of :func:`write_rows`' transaction, decoded from a plain binlog in ``folder``."""
    with BinlogWriter.create(folder, "tx-bin") as writer:
        start = writer.position
        write_rows(writer, seq, ids)
    with binlogkit.open(str(folder / "tx-bin.000001")) as events:
        return [
            e for e in events if e.header.offset >= start and e.header.type_code != EventType.STOP
        ]
