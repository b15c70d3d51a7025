"""Decoded events built field by field, for tests of transaction boundaries.

A plain module, not a conftest, so tests in any folder can import it by name.
Each builder takes the event's offset; the events are laid out one after
another by :func:`placed`.
"""

from __future__ import annotations

from dataclasses import replace
from uuid import UUID

from binlogkit.binlog.constants import ColumnType, EventType
from binlogkit.binlog.context import DecodeContext, FormatContext
from binlogkit.binlog.events import Event, OpaqueEvent, XidEvent
from binlogkit.binlog.events.gtid import AnonymousGtidEvent, GtidEvent, TaggedGtidEvent
from binlogkit.binlog.events.mariadb_gtid import MariaGtidEvent, MariaGtidFlag
from binlogkit.binlog.events.query import QueryCompressedEvent, QueryEvent, QueryStatus
from binlogkit.binlog.events.rows import RowsFlag, WriteRowsEvent
from binlogkit.binlog.events.statement_context import IntvarEvent
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.binlog.events.transaction import XaPrepareEvent, Xid
from binlogkit.binlog.header import EventHeader
from binlogkit.binlog.tables import TableCache

UUID1 = UUID("3e11fa47-71ca-11e1-9e33-c80aa9429562")
TIME = 1_700_000_000
SIZE = 40
"""The size every built event claims (positions only need to be consistent)."""


def head(code: int, *, timestamp: int = TIME, server_id: int = 1) -> EventHeader:
    return EventHeader(timestamp, code, server_id, SIZE)


def gtid(gno: int, *, commit_us: int | None = None) -> GtidEvent:
    return GtidEvent(head(EventType.GTID), 0, UUID1, gno, immediate_commit_timestamp=commit_us)


def anonymous() -> GtidEvent:
    return AnonymousGtidEvent(head(EventType.ANONYMOUS_GTID), 0, UUID1, 0)


def tagged(gno: int, tag: str) -> TaggedGtidEvent:
    return TaggedGtidEvent(head(EventType.GTID_TAGGED), 0, UUID1, gno, tag)


def maria(
    seq_no: int, *, flags: int = 0, xid: Xid | None = None, domain: int = 0
) -> MariaGtidEvent:
    return MariaGtidEvent(head(EventType.MARIADB_GTID), seq_no, domain, flags, xid=xid)


STANDALONE = int(MariaGtidFlag.STANDALONE)
PREPARED_XA = int(MariaGtidFlag.PREPARED_XA)
COMPLETED_XA = int(MariaGtidFlag.COMPLETED_XA)


def query(text: bytes, *, compressed: bool = False, timestamp: int = TIME) -> QueryEvent:
    if compressed:
        header = head(EventType.MARIADB_QUERY_COMPRESSED, timestamp=timestamp)
        return QueryCompressedEvent(header, 1, 0, 0, QueryStatus(), "db", text)
    return QueryEvent(
        head(EventType.QUERY, timestamp=timestamp), 1, 0, 0, QueryStatus(), "db", text
    )


def xid(number: int = 7, *, timestamp: int = TIME) -> XidEvent:
    return XidEvent(head(EventType.XID, timestamp=timestamp), number)


def xa_prepare(x: Xid, *, one_phase: bool = False) -> XaPrepareEvent:
    return XaPrepareEvent(head(EventType.XA_PREPARE), one_phase, x)


def intvar(value: int = 1) -> IntvarEvent:
    return IntvarEvent(head(EventType.INTVAR), 2, value)


TABLE_ID = 70


def table_map() -> TableMapEvent:
    """The map of ``db.t`` (one INT column, nullable) as table id ``TABLE_ID``."""
    body = TABLE_ID.to_bytes(6, "little") + b"\1\0" + b"\2db\0" + b"\1t\0"
    body += b"\1" + bytes([ColumnType.LONG]) + b"\0" + b"\1"
    return TableMapEvent.decode(head(EventType.TABLE_MAP), body, DecodeContext(FormatContext()))


_TABLES = TableCache()
_TABLES.add(table_map(), b"")


def write_rows(*values: int, end: bool = True) -> WriteRowsEvent:
    """A WRITE_ROWS_V1 of one row per value into ``db.t``; ``end``: the statement's last."""
    flags = RowsFlag.STMT_END if end else 0
    body = TABLE_ID.to_bytes(6, "little") + flags.to_bytes(2, "little") + b"\1\1"
    body += b"".join(b"\0" + v.to_bytes(4, "little", signed=True) for v in values)
    ctx = DecodeContext(FormatContext(), tables=_TABLES)
    event = WriteRowsEvent.decode(head(EventType.WRITE_ROWS_V1), body, ctx)
    assert isinstance(event, WriteRowsEvent)
    return event


def other(code: int) -> OpaqueEvent:
    """An event of a type that takes no part in transaction boundaries (TABLE_MAP, ROTATE ...)."""
    return OpaqueEvent(head(code), b"")


def placed(events: list[Event], *, file: str = "binlog.000001", start: int = 4) -> list[Event]:
    """The events at consecutive offsets of ``file`` (each ``SIZE`` bytes, log_pos its end)."""
    out = []
    offset = start
    for event in events:
        header = replace(event.header, offset=offset, file=file, log_pos=offset + SIZE)
        out.append(replace(event, header=header))
        offset += SIZE
    return out
