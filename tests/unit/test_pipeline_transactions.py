"""Transactions of event streams (binlogkit.pipeline.transactions): known answers and streaming.

Event sequences as MySQL and MariaDB write them, built field by field
(:mod:`tx_events`); a synthetic transaction of many rows events, made lazily
by a generator that counts how far it was read, shows that transactions are
streamed, not held.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from tx_events import (
    COMPLETED_XA,
    PREPARED_XA,
    SIZE,
    STANDALONE,
    TIME,
    UUID1,
    anonymous,
    gtid,
    maria,
    other,
    placed,
    query,
    table_map,
    tagged,
    write_rows,
    xa_prepare,
    xid,
)

from binlogkit.binlog.constants import EventType
from binlogkit.binlog.events import Event
from binlogkit.binlog.events.transaction import Xid
from binlogkit.errors import BinlogError
from binlogkit.gtid import Gtid, MariaGtid
from binlogkit.pipeline.transactions import (
    Outcome,
    Position,
    Transaction,
    XaPhase,
    grouped,
    transactions,
)

FILE = "binlog.000001"
XID = Xid(1, b"x")
COMMIT_US = 1_700_000_123_456_789
FDE, ROTATE = other(EventType.FORMAT_DESCRIPTION), other(EventType.ROTATE)


def read(events: list[Event]) -> list[tuple[Transaction, list[Event]]]:
    """Each transaction with its events, read in stream order."""
    return [(tx, list(tx.events())) for tx in transactions(events)]


def test_a_mysql_transaction() -> None:
    events = placed(
        [
            FDE,
            gtid(7, commit_us=COMMIT_US),
            query(b"BEGIN"),
            table_map(),
            write_rows(1, 2),
            xid(),
            ROTATE,
        ]
    )
    items = grouped(events)
    assert next(items) is events[0]
    tx = next(items)
    assert isinstance(tx, Transaction)
    assert tx.gtid == Gtid(UUID1, 7)
    assert tx.start == Position(FILE, 4 + SIZE)
    with pytest.raises(BinlogError, match="once its last event is read"):
        _ = tx.end
    changes = list(tx.changes())
    assert [(c.op, c.after, c.source.gtid) for c in changes] == [
        ("c", {"@1": 1}, f"{UUID1}:7"),
        ("c", {"@1": 2}, f"{UUID1}:7"),
    ]
    assert tx.end == Position(FILE, events[5].header.end)
    assert tx.last is events[5] and tx.first is events[1]
    assert tx.outcome is Outcome.COMMITTED
    assert tx.commit_timestamp == COMMIT_US  # MySQL 8's immediate commit timestamp
    assert tx.commit_time == datetime(2023, 11, 14, 22, 15, 23, 456789, tzinfo=UTC)
    assert (tx.xa, tx.xid, tx.ddl) == (None, None, None)
    assert list(items) == [events[6]]


def test_gtids_of_each_kind_and_ddl() -> None:
    events = placed(
        [
            tagged(3, "blue"),
            query(b"CREATE TABLE t (a INT)"),
            anonymous(),
            query(b"BEGIN"),
            query(b"COMMIT", timestamp=TIME + 5),
            maria(11, flags=STANDALONE),
            query(b"DROP TABLE t", compressed=True),
        ]
    )
    (ddl, _), (anon, _), (maria_ddl, _) = read(events)
    assert str(ddl.gtid) == f"{UUID1}:blue:3"
    assert ddl.ddl == "CREATE TABLE t (a INT)"
    assert anon.gtid is None and anon.ddl is None
    assert anon.commit_timestamp == (TIME + 5) * 1_000_000  # the header time of its COMMIT
    assert maria_ddl.gtid == MariaGtid(0, 1, 11) and str(maria_ddl.gtid) == "0-1-11"
    assert maria_ddl.ddl == "DROP TABLE t"
    assert all(tx.outcome is Outcome.COMMITTED for tx, _ in read(events))


def test_rollback_and_statements_without_gtids() -> None:
    events = placed(
        [
            query(b"BEGIN"),
            query(b"INSERT INTO t VALUES (1)"),
            query(b"ROLLBACK"),
            query(b"CREATE DATABASE d"),
            table_map(),  # MySQL 5.1: a row statement of its own, no BEGIN
            write_rows(5),
        ]
    )
    (rolled, rolled_events), (create, _), (rows, rows_events) = read(events)
    assert rolled.outcome is Outcome.ROLLED_BACK and len(rolled_events) == 3
    assert create.ddl == "CREATE DATABASE d" and create.start == Position(FILE, 4 + 3 * SIZE)
    assert rows.outcome is Outcome.COMMITTED and rows.gtid is None
    assert rows_events == events[4:]


XA_TEXT = b"X'78',X'',1"


def test_mysql_xa() -> None:
    events = placed(
        [
            gtid(1),
            query(b"XA START " + XA_TEXT),
            table_map(),
            write_rows(1),
            query(b"XA END " + XA_TEXT),
            xa_prepare(XID),
            gtid(2),
            query(b"XA COMMIT " + XA_TEXT),
            gtid(3),
            query(b"XA ROLLBACK X'79',X'',1"),
            gtid(4),
            query(b"XA START " + XA_TEXT),
            xa_prepare(XID, one_phase=True),
        ]
    )
    states = [(tx.xa, tx.outcome, tx.xid, len(evs)) for tx, evs in read(events)]
    assert states == [
        (XaPhase.PREPARE, Outcome.PREPARED, XID, 6),
        (XaPhase.COMMIT, Outcome.COMMITTED, XID, 2),
        (XaPhase.ROLLBACK, Outcome.ROLLED_BACK, Xid(1, b"y"), 2),
        (XaPhase.ONE_PHASE, Outcome.COMMITTED, XID, 3),
    ]


def test_mariadb_xa() -> None:
    events = placed(
        [
            maria(1, flags=PREPARED_XA, xid=XID),
            table_map(),
            write_rows(1),
            query(b"XA END " + XA_TEXT),
            xa_prepare(XID),
            maria(2, flags=STANDALONE | COMPLETED_XA, xid=XID),
            query(b"XA ROLLBACK 'x'"),  # the XID comes from the GTID event
        ]
    )
    (prepared, _), (rolled, _) = read(events)
    assert (prepared.xa, prepared.outcome, prepared.xid) == (
        XaPhase.PREPARE,
        Outcome.PREPARED,
        XID,
    )
    assert (rolled.xa, rolled.outcome, rolled.xid) == (
        XaPhase.ROLLBACK,
        Outcome.ROLLED_BACK,
        XID,
    )


def test_incomplete_transactions() -> None:
    events = placed(
        [gtid(1), query(b"BEGIN"), write_rows(1), gtid(2), query(b"BEGIN"), write_rows(2)]
    )
    (cut, cut_events), (unfinished, _) = read(events)
    assert cut_events == events[:3]
    assert (cut.outcome, cut.last, cut.commit_timestamp) == (Outcome.INCOMPLETE, None, None)
    assert cut.end == Position(FILE, events[2].header.end) == unfinished.start
    assert unfinished.outcome is Outcome.INCOMPLETE
    assert unfinished.end == Position(FILE, events[-1].header.end)


def test_events_inside_a_payload_take_no_room() -> None:
    payload = placed([gtid(1), other(EventType.TRANSACTION_PAYLOAD), gtid(2)], start=4)
    end = payload[1].header.end
    inner = [
        replace(e, header=replace(e.header, offset=end, log_pos=0, file=FILE))
        for e in (query(b"BEGIN"), table_map(), write_rows(1), xid())
    ]
    (first, first_events), (second, _) = read([*payload[:2], *inner, payload[2]])
    assert first_events[2:] == inner
    assert first.end == Position(FILE, end) == second.start
    assert first.outcome is Outcome.COMMITTED


def test_reading_out_of_order_is_an_error() -> None:
    events = placed([gtid(1), query(b"DROP TABLE a"), gtid(2), query(b"DROP TABLE b")])
    stream = transactions(events)
    first = next(stream)
    assert [e for e in first.events()] == events[:2]
    with pytest.raises(BinlogError, match="only once"):
        first.events()
    second = next(stream)  # read past, unread
    assert second.gtid == Gtid(UUID1, 2)
    third_try = transactions(events)
    skipped = next(third_try)
    next(third_try)
    with pytest.raises(BinlogError, match="before the next transaction"):
        skipped.events()
    assert skipped.ddl == "DROP TABLE a"  # what it ended with is known once read past


def test_transactions_left_unread_are_read_past() -> None:
    events = placed([gtid(n) if n % 2 else query(b"DROP TABLE t") for n in range(1, 9)])
    assert [tx.gtid for tx in transactions(events)] == [Gtid(UUID1, n) for n in (1, 3, 5, 7)]


class Counting:
    """Events made one at a time: an open transaction of ``rows`` rows events, then another."""

    def __init__(self, rows: int) -> None:
        self.rows = rows
        self.made = 0

    def __iter__(self) -> Iterator[Event]:
        template = write_rows(1, end=False)
        events = [gtid(1), query(b"BEGIN"), table_map()]
        offset = 4
        for n in range(self.rows + 5):
            if n < 3:
                event = events[n]
            elif n < self.rows + 3:
                event = replace(template, data=template.data)  # a new event object each time
            elif n == self.rows + 3:
                event = xid()
            else:
                event = gtid(2)
            self.made += 1
            yield replace(event, header=replace(event.header, offset=offset, file=FILE))
            offset += SIZE


def test_a_transaction_is_read_lazily() -> None:
    source = Counting(1000)
    stream = transactions(source)
    tx = next(stream)
    assert source.made == 1  # its first event only
    events = tx.events()
    for read_so_far in range(1, 501):
        next(events)
        assert source.made == read_so_far
    second = next(stream)  # reads past the 500 rows events left, and the XID
    assert source.made == 1000 + 5
    assert tx.outcome is Outcome.COMMITTED and tx.end == Position(FILE, 4 + 1004 * SIZE)
    assert second.start == tx.end


@pytest.mark.parametrize("how", ["events", "changes", "unread"])
def test_a_huge_transaction_is_never_held(how: str) -> None:
    rows = 50_000
    source = Counting(rows)
    tracemalloc.start()
    try:
        counted = 0
        for tx in transactions(source):
            if how == "events":
                counted += sum(1 for _ in tx.events())
            elif how == "changes":
                counted += sum(1 for _ in tx.changes())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert source.made == rows + 5
    assert counted == {"events": rows + 5, "changes": rows, "unread": 0}[how]
    assert peak < 1 << 20  # 50,000 rows events held would take over 20 MiB
