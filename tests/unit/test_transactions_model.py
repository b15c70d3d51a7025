"""The one transaction model (binlogkit.binlog.transactions): known answers.

Statement texts are classified as the servers and tools read them (MySQL's
``Query_log_event::starts_group``/``ends_group``/``is_trans_keyword``, MariaDB's
``is_trans_keyword(is_xa)`` and exact ``is_begin``/``is_commit``); event
sequences as MySQL and MariaDB write them (GTID groups, BEGIN ... XID,
autocommitted DDL, XA in both flavours, compressed transactions).
"""

from __future__ import annotations

import pytest
from tx_events import (
    COMPLETED_XA,
    PREPARED_XA,
    STANDALONE,
    anonymous,
    gtid,
    intvar,
    maria,
    other,
    query,
    table_map,
    tagged,
    write_rows,
    xa_prepare,
    xid,
)

from binlogkit.binlog.constants import EventType
from binlogkit.binlog.events import EVENT_CODECS, Event
from binlogkit.binlog.events.base import TransactionRole
from binlogkit.binlog.events.gtid import AnonymousGtidEvent, GtidEvent, TaggedGtidEvent
from binlogkit.binlog.events.mariadb_gtid import MariaGtidEvent
from binlogkit.binlog.events.transaction import Xid
from binlogkit.binlog.transactions import (
    GTID_CODES,
    GTID_EVENTS,
    Control,
    Step,
    TransactionState,
    control,
    ends_group,
    is_trans_keyword,
    starts_group,
)

C = Control
B, E, CUT = Step.BEGINS, Step.ENDS, Step.CUT
XID = Xid(1, b"x")

# (statement, exact reading, strncmp reading)
READINGS = [
    (b"BEGIN", C.BEGIN, C.BEGIN),
    (b"COMMIT", C.COMMIT, C.COMMIT),
    (b"begin", None, None),  # BEGIN and COMMIT are compared case-sensitively
    (b"Commit", None, None),
    (b"BEGIN ", None, None),
    (b"COMMITTED", None, None),
    (b"BEG", None, C.BEGIN),  # a prefix: strncmp over the statement's length
    (b"C", None, C.COMMIT),
    (b"", None, C.COMMIT),  # a prefix of both: mysqlbinlog asks ends_group first
    (b"COMMIT\0", None, C.COMMIT),  # the word and a NUL
    (b"COMMIT\0junk", None, C.COMMIT),
    (b"BEGIN\0", None, C.BEGIN),
    (b"CO\0MMIT", None, None),
    (b"ROLLBACK", C.ROLLBACK, C.ROLLBACK),
    (b"ROLLBACK WORK", C.ROLLBACK, C.ROLLBACK),
    (b"rollback", C.ROLLBACK, C.ROLLBACK),
    (b"ROLLBACK TO `sp1`", C.ROLLBACK_TO_SAVEPOINT, C.ROLLBACK_TO_SAVEPOINT),
    (b"rollback to sp1", C.ROLLBACK_TO_SAVEPOINT, C.ROLLBACK_TO_SAVEPOINT),
    (b"ROLLBACK TO", C.ROLLBACK, C.ROLLBACK),  # MySQL compares "ROLLBACK TO " with its space
    (b"SAVEPOINT `sp1`", C.SAVEPOINT, C.SAVEPOINT),
    (b"SavePoint mixed_cases", C.SAVEPOINT, C.SAVEPOINT),  # as 5.0 logged what users typed
    (b"XA START X'78',X'',1", C.XA_START, C.XA_START),
    (b"XA END X'78',X'',1", C.XA_END, C.XA_END),
    (b"XA PREPARE X'78',X'',1", C.XA_PREPARE, C.XA_PREPARE),
    (b"XA COMMIT X'78',X'',1", C.XA_COMMIT, C.XA_COMMIT),
    (b"XA COMMIT X'78',X'',1 ONE PHASE", C.XA_COMMIT, C.XA_COMMIT),
    (b"XA ROLLBACK X'78',X'',1", C.XA_ROLLBACK, C.XA_ROLLBACK),
    (b"xa commit 'x'", C.XA_COMMIT, C.XA_COMMIT),
    (b"XA RECOVER", None, None),
    (b"CREATE TABLE t (a INT)", None, None),
    (b"INSERT INTO t VALUES (1)", None, None),
    (b"SET @a=1", None, None),
    (b"RENAME TABLE a TO b", None, None),
]


@pytest.mark.parametrize(("text", "exact", "by_strncmp"), READINGS)
def test_control_reads_statements(text: bytes, exact: Control, by_strncmp: Control) -> None:
    assert control(text) is exact
    assert control(text, strncmp=True) is by_strncmp
    assert control(memoryview(text)) is exact


@pytest.mark.parametrize(
    ("text", "starts", "ends"),
    [
        (b"BEGIN", True, False),
        (b"XA START X'78',X'',1", True, False),
        (b"COMMIT", False, True),
        (b"COMMIT\0", False, True),
        (b"ROLLBACK", False, True),
        (b"ROLLBACK TO `a`", False, False),
        (b"XA ROLLBACK X'78',X'',1", False, True),
        (b"XA COMMIT X'78',X'',1", False, False),  # MySQL logs it alone in its GTID group
        (b"XA END X'78',X'',1", False, False),
        (b"SAVEPOINT `a`", False, False),
        (b"DROP TABLE t", False, False),
    ],
)
def test_mysql_group_bounds(text: bytes, starts: bool, ends: bool) -> None:
    assert starts_group(text) is starts
    assert ends_group(text) is ends


@pytest.mark.parametrize(
    ("text", "any_group", "xa_group", "other_group"),
    [
        (b"BEGIN", True, False, True),
        (b"COMMIT", True, False, True),
        (b"BEG", True, False, True),
        (b"COMMIT\0", True, False, True),
        (b"BEGINNING", False, False, False),
        (b"savepoint sp1", True, False, True),
        (b"ROLLBACK TO sp1", True, False, True),
        (b"XA START X'01',X'',1", True, True, False),
        (b"xa end 'x'", True, True, False),
        (b"XA COMMIT 'x'", True, True, False),
        (b"INSERT INTO t VALUES (1)", False, False, False),
    ],
)
def test_transaction_keywords(
    text: bytes, any_group: bool, xa_group: bool, other_group: bool
) -> None:
    assert is_trans_keyword(text) is any_group
    assert is_trans_keyword(text, xa=True) is xa_group
    assert is_trans_keyword(text, xa=False) is other_group


def test_roles_come_from_the_codecs() -> None:
    assert {33, 34, 42, 162} == GTID_CODES
    assert set(GTID_EVENTS) == {GtidEvent, AnonymousGtidEvent, TaggedGtidEvent, MariaGtidEvent}
    roles = {code: cls.transaction_role for code, cls in EVENT_CODECS.items()}
    T = TransactionRole
    assert {c for c, r in roles.items() if r is T.END} == {EventType.XID, EventType.XA_PREPARE}
    assert {c for c, r in roles.items() if r is T.CONTEXT} == {
        EventType.INTVAR,
        EventType.RAND,
        EventType.USER_VAR,
    }
    rows = {20, 21, 22, 23, 24, 25, 30, 31, 32, 39, 166, 167, 168, 169, 170, 171}
    assert {c for c, r in roles.items() if r is T.ROWS} == rows | {EventType.TABLE_MAP}
    assert {c for c, r in roles.items() if r is T.STATEMENT} == {
        EventType.QUERY,
        EventType.MARIADB_QUERY_COMPRESSED,
        EventType.EXECUTE_LOAD_QUERY,
    }


TABLE_MAP, ROWS = table_map(), write_rows(1)
ROTATE, FDE = other(EventType.ROTATE), other(EventType.FORMAT_DESCRIPTION)
PAYLOAD = other(EventType.TRANSACTION_PAYLOAD)

# Event sequences as the servers write them, with what each event does.
SEQUENCES: dict[str, list[tuple[Event, Step]]] = {
    "mysql row transaction": [
        (FDE, 0),
        (gtid(1), B),
        (query(b"BEGIN"), 0),
        (TABLE_MAP, 0),
        (ROWS, 0),
        (xid(), E),
        (ROTATE, 0),
    ],
    "mysql ddl": [(gtid(1), B), (query(b"CREATE TABLE t (a INT)"), E), (gtid(2), B)],
    "anonymous and tagged": [
        (anonymous(), B),
        (query(b"BEGIN"), 0),
        (query(b"COMMIT"), E),
        (tagged(3, "blue"), B),
        (query(b"DROP TABLE t"), E),
    ],
    "mysql xa": [
        (gtid(1), B),
        (query(b"XA START X'78',X'',1"), 0),
        (ROWS, 0),
        (query(b"XA END X'78',X'',1"), 0),
        (xa_prepare(XID), E),
        (gtid(2), B),
        (query(b"XA COMMIT X'78',X'',1"), E),
        (gtid(3), B),
        (query(b"XA ROLLBACK X'78',X'',1"), E),
    ],
    "mysql compressed transaction": [
        (gtid(1), B),
        (PAYLOAD, 0),
        (query(b"BEGIN"), 0),
        (TABLE_MAP, 0),
        (ROWS, 0),
        (xid(), E),
    ],
    "mariadb": [
        (maria(1), B),
        (TABLE_MAP, 0),
        (ROWS, 0),
        (xid(), E),
        (maria(2, flags=STANDALONE), B),
        (query(b"CREATE TABLE t (a INT)", compressed=True), E),
        (maria(3), B),  # MyISAM: statements, then COMMIT
        (intvar(), 0),
        (query(b"INSERT INTO t VALUES (NULL)"), 0),
        (query(b"COMMIT"), E),
        (maria(4, flags=STANDALONE), B),
        (intvar(), 0),
        (query(b"CREATE TABLE u SELECT 1"), E),
    ],
    "mariadb xa": [
        (maria(1, flags=PREPARED_XA, xid=XID), B),
        (ROWS, 0),
        (query(b"XA END X'78',X'',1"), 0),
        (xa_prepare(XID), E),
        (maria(2, flags=STANDALONE | COMPLETED_XA, xid=XID), B),
        (query(b"XA COMMIT X'78',X'',1"), E),
    ],
    "without gtids": [
        (query(b"BEGIN"), B),
        (query(b"INSERT INTO t VALUES (1)"), 0),
        (query(b"SAVEPOINT `a`"), 0),
        (query(b"ROLLBACK TO `a`"), 0),
        (query(b"COMMIT"), E),
        (query(b"CREATE DATABASE d"), B | E),
        (intvar(), B),
        (query(b"INSERT INTO t VALUES (NULL)"), E),
        (query(b"BEGIN"), B),
        (ROWS, 0),
        (query(b"ROLLBACK"), E),
        (query(b"begin"), B | E),  # not BEGIN: a statement of its own
    ],
    "cut short": [
        (gtid(1), B),
        (query(b"BEGIN"), 0),
        (ROWS, 0),
        (gtid(2), CUT | B),
        (query(b"BEGIN"), 0),
        (xid(), E),
        (query(b"BEGIN"), B),
        (ROWS, 0),
        (query(b"BEGIN"), CUT | B),
        (query(b"COMMIT"), E),
    ],
    "started inside a transaction": [
        (write_rows(1, end=False), B),  # taken for a row statement of its own
        (write_rows(2), E),
        (xid(), 0),
        (ROTATE, 0),
        (gtid(5), B),
    ],
    "mysql 5.1 row statements without BEGIN": [
        (query(b"CREATE TABLE t1 (a INT) ENGINE=MyISAM"), B | E),
        (TABLE_MAP, B),
        (write_rows(1, end=False), 0),
        (write_rows(2), E),
        (write_rows(3), B | E),
        (TABLE_MAP, B),
        (xid(), E),
        (query(b"BEGIN"), B),
        (TABLE_MAP, 0),
        (write_rows(4), 0),  # a statement's end inside BEGIN ... COMMIT ends nothing
        (query(b"COMMIT"), E),
        (gtid(1), B),
        (write_rows(5), 0),  # nor inside a group a GTID opened
        (query(b"COMMIT"), E),
    ],
}


@pytest.mark.parametrize("name", SEQUENCES)
def test_state_follows_sequences(name: str) -> None:
    state = TransactionState()
    steps = [state.step(event) for event, _ in SEQUENCES[name]]
    assert steps == [expected for _, expected in SEQUENCES[name]]


def test_open_and_begun() -> None:
    state = TransactionState()
    state.step(gtid(1))
    assert (state.open, state.begun) == (True, False)
    state.step(query(b"BEGIN"))
    assert (state.open, state.begun) == (True, True)
    state.step(query(b"INSERT INTO t VALUES (1)"))  # inside a begun transaction: no end
    assert state.open
    state.step(xid())
    assert (state.open, state.begun) == (False, False)
    state.step(maria(1))  # a MariaDB GTID without the standalone flag stands for BEGIN
    assert (state.open, state.begun) == (True, True)
    state.step(maria(2, flags=STANDALONE))
    assert (state.open, state.begun) == (True, False)
