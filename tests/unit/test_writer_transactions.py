"""Transactions written from row values, per flavour, read back by binlogkit.

MariaDB: GTID event (transactional), events, XID. MySQL: GTID event (logical
clock 1, 2 ... per file, transaction length = the bytes from the GTID event to
the end of the XID), BEGIN, events, XID. The rows read back equal the rows
given; a transaction dropped by an exception leaves nothing in the file. The
position stage is fed whole, byte by byte and in random pieces.
"""

from __future__ import annotations

import random
import uuid
from pathlib import Path

import pytest

import binlogkit
from binlogkit.binlog.constants import ColumnType, EventType, Flavor
from binlogkit.binlog.events.gtid import AnonymousGtidEvent, GtidEvent
from binlogkit.binlog.events.table_map import OptionalMetadataType, TableMapEvent
from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.binlog.rows.plan import RowChange
from binlogkit.errors import BinlogError
from binlogkit.gtid import Gtid, MariaGtid
from binlogkit.io.streams import MemoryOutputStream
from binlogkit.writer import BinlogWriter, format_description
from binlogkit.writer.binlog_file import encode_at
from binlogkit.writer.positions import ShiftPositions

CT = ColumnType
COLUMNS = [
    ColumnInfo(0, CT.LONG, CT.LONG, 0, False),
    ColumnInfo(1, CT.VARCHAR, CT.VARCHAR, 80, True),
]
ROWS = [{"id": i, "name": f"row {i}"} for i in range(7)]


def _table(writer: BinlogWriter) -> TableMapEvent:
    return TableMapEvent.build(
        writer.header(EventType.TABLE_MAP),
        5,
        "db",
        "t",
        COLUMNS,
        optional_fields=[
            (OptionalMetadataType.DEFAULT_CHARSET, (45, ())),
            (OptionalMetadataType.COLUMN_NAME, ("id", "name")),
        ],
        server_version=writer.current.fmt.server_version,
    )


def _read(path: Path) -> list[binlogkit.binlog.events.Event]:
    with binlogkit.open(path, schema=None) as reader:
        return list(reader)


def test_mysql_transactions(tmp_path: Path) -> None:
    fde = format_description(Flavor.MYSQL)
    source = uuid.UUID("8a18b986-434f-11f1-a27f-ce6a53da2f24")
    with BinlogWriter.create(tmp_path, "binlog", fde=fde, clock=lambda: 1_700_000_000.5) as w:
        table = _table(w)
        with w.transaction(xid=3, memory_size=64) as tx:
            tx.rows(table, "insert", [RowChange(None, r) for r in ROWS], rows_per_event=3)
        with w.transaction(Gtid(source, 42)) as tx:
            tx.rows(table, "delete", [RowChange(ROWS[0], None)])
    events = _read(tmp_path / "binlog.000001")
    types = [e.type_name for e in events]
    assert types == [
        "FORMAT_DESCRIPTION",
        *["ANONYMOUS_GTID", "QUERY", "TABLE_MAP", "WRITE_ROWS", "WRITE_ROWS", "WRITE_ROWS", "XID"],
        *["GTID", "QUERY", "TABLE_MAP", "DELETE_ROWS", "XID"],
        "STOP",
    ]
    starts = [i for i, e in enumerate(events) if isinstance(e, GtidEvent)]
    for n, start in enumerate(starts, 1):
        gtid = events[start]
        assert isinstance(gtid, GtidEvent)
        xid = next(e for e in events[start:] if e.type_name == "XID")
        assert gtid.transaction_length == xid.header.end - gtid.header.offset
        assert (gtid.last_committed, gtid.sequence_number) == (n - 1, n)
        assert gtid.immediate_commit_timestamp == 1_700_000_000_500_000
        assert gtid.immediate_server_version == 80046
    assert isinstance(events[starts[0]], AnonymousGtidEvent)
    assert (events[starts[1]].uuid, events[starts[1]].gno) == (source, 42)  # type: ignore[attr-defined]
    inserted = [c.after for e in events if e.type_name == "WRITE_ROWS" for c in e.rows]  # type: ignore[attr-defined]
    assert inserted == ROWS
    assert [e.header.flags for e in events if e.type_name == "WRITE_ROWS"] == [0, 0, 0]
    assert [e.flags for e in events if e.type_name == "WRITE_ROWS"] == [0, 0, 1]  # type: ignore[attr-defined]


def test_mariadb_transactions_and_a_dropped_one(tmp_path: Path) -> None:
    with BinlogWriter.create(tmp_path, "bin") as w:
        table = _table(w)
        with pytest.raises(BinlogError, match="needs a MariaGtid"):
            w.transaction()
        with w.transaction(MariaGtid(3, 9, 77), xid=5) as tx:
            tx.rows(table, "update", [RowChange(ROWS[1], ROWS[2])])
        assert (tmp_path / "bin.000001").stat().st_size == w.position  # committed: visible
        with (
            pytest.raises(RuntimeError, match="changed my mind"),
            w.transaction(MariaGtid(3, 9, 78)) as tx,
        ):
            tx.rows(table, "insert", [RowChange(None, ROWS[3])])
            raise RuntimeError("changed my mind")
        with pytest.raises(BinlogError, match="already committed or dropped"):
            tx.commit()
    events = _read(tmp_path / "bin.000001")
    assert [e.type_name for e in events] == [
        *["FORMAT_DESCRIPTION", "MARIADB_GTID", "TABLE_MAP", "UPDATE_ROWS_V1", "XID", "STOP"]
    ]
    gtid = events[1]
    assert (gtid.domain_id, gtid.header.server_id, gtid.seq_no, gtid.flags) == (3, 9, 77, 12)  # type: ignore[attr-defined]
    assert [(c.before, c.after) for c in events[3].rows] == [(ROWS[1], ROWS[2])]  # type: ignore[attr-defined]
    assert events[4].xid == 5  # type: ignore[attr-defined]


@pytest.mark.parametrize("cut", ["whole", "bytes", "random"])
def test_position_stage_in_any_pieces(tmp_path: Path, cut: str) -> None:
    with BinlogWriter.create(tmp_path, "bin") as w:
        fmt = w.current.fmt
        table = _table(w)
    size = len(encode_at(table, fmt, 0))
    cache = encode_at(table, fmt, 0) + encode_at(table, fmt, size)  # two events, as cached
    want = encode_at(table, fmt, 1000) + encode_at(table, fmt, 1000 + size)
    out = MemoryOutputStream()
    stage = ShiftPositions(out, 1000, fmt.checksum_length)
    rng = random.Random(cut)
    at = 0
    while at < len(cache):
        size = {"whole": len(cache), "bytes": 1}.get(cut) or rng.randint(1, 60)
        stage.write(cache[at : at + size])
        at += size
    stage.flush()
    assert out.getvalue() == bytes(want)
    stage.write(cache[:10])
    with pytest.raises(ValueError, match="ends inside an event"):
        stage.flush()
