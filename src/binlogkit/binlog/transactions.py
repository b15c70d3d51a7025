"""Where transactions begin and end in a stream of events: the one model every reader uses.

Event types say what they do with :class:`~binlogkit.binlog.events.base.TransactionRole`
(a class attribute of the codecs): a GTID event begins a transaction and
names it; XID and XA_PREPARE end one; INTVAR, RAND and USER_VAR belong to the
statement after them; a statement (QUERY, its compressed form, EXECUTE_LOAD_QUERY)
is read by its text (:func:`control`); row events (TABLE_MAP, rows) belong to
the open transaction. Other events belong to the transaction around them, if
one is open.

:class:`TransactionState` follows a stream and says, per event, whether it
begins a transaction, ends one, or cuts one short. A transaction is open from
a GTID event, ``BEGIN`` / ``XA START`` or a statement-context event (another
statement while none is open is a transaction by itself; so is a row
statement, as MySQL 5.1 logged changes of non-transactional tables), and ends

- at XID or XA_PREPARE;
- at ``COMMIT``, ``ROLLBACK`` (not to a savepoint), ``XA COMMIT`` or ``XA ROLLBACK``;
- at its one statement, when it was not begun by ``BEGIN`` / ``XA START`` (or
  a MariaDB GTID that stands for BEGIN): DDL and the other autocommitted
  statements, and MySQL's ``XA COMMIT`` / ``XA ROLLBACK`` groups; a row
  statement's at the rows event flagged as the statement's end;
- cut short (its end never came) when a GTID event, or a ``BEGIN`` while a
  begun transaction is open, starts the next one.

Events while none is open are between transactions: file-level events, and
those of a transaction the stream began inside of, up to its end.

The tools' own readings of statements, where they differ, are named here too:

- ``strncmp`` (:func:`control`): MySQL's ``Query_log_event`` compares BEGIN and
  COMMIT with C's ``strncmp`` over the statement's length, so any prefix of
  the word (the empty statement too) and the word followed by a NUL count;
  mysqlbinlog and mariadb-binlog read statements that way. Without it the
  statement must be the word itself, as servers write it and MariaDB's server
  compares it (``is_begin``/``is_commit``); the two differ on no statement a
  server writes.
- :func:`starts_group` / :func:`ends_group`: MySQL's group bounds, which
  mysqlbinlog tracks. They lack ``XA COMMIT`` (MySQL logs it alone in a GTID
  group, which its one statement ends), which :data:`ENDING` has.
- :func:`is_trans_keyword`: the statements the tools never filter by
  database; ``xa`` is MariaDB's choice by the GTID's XA flags.
"""

from __future__ import annotations

from enum import Enum, IntFlag

from binlogkit.binlog.events import EVENT_CODECS, Event
from binlogkit.binlog.events.base import TransactionRole
from binlogkit.binlog.events.mariadb_gtid import MariaGtidEvent
from binlogkit.binlog.events.rows import RowsEvent, RowsFlag

__all__ = [
    "BEGINNING",
    "ENDING",
    "GTID_CODES",
    "GTID_EVENTS",
    "ROLE_CODES",
    "ROW_CODES",
    "Control",
    "Step",
    "TransactionState",
    "control",
    "ends_group",
    "is_trans_keyword",
    "starts_group",
]


class Control(Enum):
    """A transaction-control statement, as the text of a QUERY event says it."""

    BEGIN = "BEGIN"
    COMMIT = "COMMIT"
    ROLLBACK = "ROLLBACK"
    SAVEPOINT = "SAVEPOINT"
    ROLLBACK_TO_SAVEPOINT = "ROLLBACK TO"
    XA_START = "XA START"
    XA_END = "XA END"
    XA_PREPARE = "XA PREPARE"
    XA_COMMIT = "XA COMMIT"
    XA_ROLLBACK = "XA ROLLBACK"


_C = Control
_WORDS = {b"BEGIN": _C.BEGIN, b"COMMIT": _C.COMMIT}
_LONGEST_WORD = max(map(len, _WORDS))
_PREFIXES = tuple(
    (word.encode(), found)
    for word, found in (
        ("SAVEPOINT", _C.SAVEPOINT),
        ("ROLLBACK TO ", _C.ROLLBACK_TO_SAVEPOINT),
        ("ROLLBACK", _C.ROLLBACK),
        ("XA START", _C.XA_START),
        ("XA END", _C.XA_END),
        ("XA PREPARE", _C.XA_PREPARE),
        ("XA COMMIT", _C.XA_COMMIT),
        ("XA ROLLBACK", _C.XA_ROLLBACK),
    )
)
"""Statements known by how they start, in any letter case (servers before MySQL 5.1's fix of
bug #50407 logged SAVEPOINT and ROLLBACK TO as the user typed them); ROLLBACK TO before
ROLLBACK."""
_HEAD = max(len(prefix) for prefix, _ in _PREFIXES)
_PREFIX_INITIALS = frozenset(b"SRXsrx")

BEGINNING = frozenset({_C.BEGIN, _C.XA_START})
"""Statements that open a transaction (its next statements do not end it)."""
ENDING = frozenset({_C.COMMIT, _C.ROLLBACK, _C.XA_COMMIT, _C.XA_ROLLBACK})
"""Statements that end the transaction they are in."""
_GROUP_ENDS = ENDING - {_C.XA_COMMIT}
_XA = frozenset({_C.XA_START, _C.XA_END, _C.XA_PREPARE, _C.XA_COMMIT, _C.XA_ROLLBACK})


def _strncmp_equal(text: bytes, word: bytes) -> bool:
    """C's ``strncmp(text, word, len(text)) == 0``, ``text`` ending with a NUL as C holds it."""
    if len(text) <= len(word):
        return word.startswith(text)
    return text.startswith(word + b"\0")


def control(query: bytes, *, strncmp: bool = False) -> Control | None:
    """The transaction control a statement is, or None for any other statement.

    ``strncmp``: BEGIN and COMMIT as MySQL's ``Query_log_event`` compares them
    (see the module doc); the empty statement, a prefix of both, is COMMIT
    (mysqlbinlog asks whether a statement ends a group before whether it
    starts one).
    """
    if len(query) <= _LONGEST_WORD:
        found = _WORDS.get(bytes(query))
        if found is not None:
            return found
    if strncmp:
        for word in (b"COMMIT", b"BEGIN"):
            if _strncmp_equal(bytes(query[: len(word) + 1]), word):
                return _WORDS[word]
    if not query or query[0] not in _PREFIX_INITIALS:
        return None
    head = bytes(query[:_HEAD]).upper()
    for prefix, found in _PREFIXES:
        if head.startswith(prefix):
            return found
    return None


def starts_group(query: bytes) -> bool:
    """MySQL's ``Query_log_event::starts_group`` (mysqlbinlog's): BEGIN or XA START, by strncmp."""
    return control(query, strncmp=True) in BEGINNING


def ends_group(query: bytes) -> bool:
    """MySQL's ``Query_log_event::ends_group`` (mysqlbinlog's), by strncmp: COMMIT, ROLLBACK
    (not to a savepoint) or XA ROLLBACK; not XA COMMIT (see the module doc)."""
    return control(query, strncmp=True) in _GROUP_ENDS


def is_trans_keyword(query: bytes, *, xa: bool | None = None) -> bool:
    """Whether a statement is transaction control, which the tools never filter by database.

    Both tools read it by strncmp. ``xa`` follows MariaDB's
    ``is_trans_keyword(is_xa)``: in a group whose GTID is flagged XA only the
    XA statements count (True), in others only BEGIN, COMMIT, SAVEPOINT and
    ROLLBACK (False). None counts them all, as MySQL does.
    """
    found = control(query, strncmp=True)
    if found is None:
        return False
    return xa is None or (found in _XA) is xa


def _codes(role: TransactionRole) -> frozenset[int]:
    return frozenset(
        int(code) for code, cls in EVENT_CODECS.items() if cls.transaction_role is role
    )


GTID_CODES = _codes(TransactionRole.GTID)
"""Type codes of the events that begin a transaction and name it (MySQL, anonymous, tagged and
MariaDB GTID events)."""
GTID_EVENTS: tuple[type[Event], ...] = tuple(
    dict.fromkeys(
        cls for cls in EVENT_CODECS.values() if cls.transaction_role is TransactionRole.GTID
    )
)
"""The classes of those events (for ``isinstance``)."""
END_CODES = _codes(TransactionRole.END)
"""Type codes of the events that end a transaction (XID, XA_PREPARE)."""
ROW_CODES = _codes(TransactionRole.ROWS)
"""Type codes of the row events: they change the state only while no transaction that
``BEGIN`` began is open (:attr:`TransactionState.begun`)."""
ROLE_CODES = frozenset(
    int(code)
    for code, cls in EVENT_CODECS.items()
    if cls.transaction_role not in (None, TransactionRole.ROWS)
)
"""Type codes of the other events :meth:`TransactionState.step` reads (the rest change
nothing)."""


class Step(IntFlag):
    """What an event does to the transactions around it (:meth:`TransactionState.step`)."""

    BEGINS = 1
    """The event is the first of a transaction."""
    ENDS = 2
    """The event is the last of its transaction."""
    CUT = 4
    """The transaction open before the event ended without its end (the event BEGINS the next)."""


_BEGINS = Step.BEGINS
_ENDS = Step.ENDS
_CUT_BEGINS = Step.CUT | Step.BEGINS
_WHOLE = Step.BEGINS | Step.ENDS
_INSIDE = Step(0)
_GTID = TransactionRole.GTID
_END = TransactionRole.END
_CONTEXT = TransactionRole.CONTEXT
_ROWS = TransactionRole.ROWS
_STMT_END = RowsFlag.STMT_END


class TransactionState:
    """Follows a stream of events and says where transactions begin and end (sans-I/O).

    Give every event to :meth:`step` in stream order (the events a
    TRANSACTION_PAYLOAD holds included, after it). ``open`` tells whether a
    transaction is open after the last event; ``begun`` whether it was opened by
    ``BEGIN`` / ``XA START`` (or a MariaDB GTID that stands for them), so that
    only a COMMIT-like statement or an end event ends it.
    """

    __slots__ = ("_by_rows", "begun", "open")

    def __init__(self) -> None:
        self.open = False
        self.begun = False
        self._by_rows = False  # opened by a row event: the end of its statement ends it

    def step(self, event: Event) -> Step:
        """Take in the next event; 0 when it is inside the open transaction or between two."""
        role = event.transaction_role
        if role is None:
            return _INSIDE
        was_open = self.open
        if role is _ROWS:
            return self._row_event(event, was_open)
        self._by_rows = False
        if role is _GTID:
            self.open = True
            self.begun = isinstance(event, MariaGtidEvent) and not event.standalone
            return _CUT_BEGINS if was_open else _BEGINS
        if role is _END:
            if not was_open:
                return _INSIDE  # the end of a transaction the stream began inside of
            self.open = self.begun = False
            return _ENDS
        if role is _CONTEXT:
            if was_open:
                return _INSIDE
            self.open = True
            return _BEGINS
        found = control(event.query)  # type: ignore[attr-defined]
        if found in BEGINNING:
            if was_open and not self.begun:
                self.begun = True  # the BEGIN after a GTID event
                return _INSIDE
            self.open = self.begun = True
            return _CUT_BEGINS if was_open else _BEGINS
        if was_open and self.begun and found not in ENDING:
            return _INSIDE
        self.open = self.begun = False
        return _ENDS if was_open else _WHOLE

    def _row_event(self, event: Event, was_open: bool) -> Step:
        if was_open and not self._by_rows:
            return _INSIDE
        ends = isinstance(event, RowsEvent) and bool(event.flags & _STMT_END)
        self.open = self._by_rows = not ends
        if was_open:
            return _ENDS if ends else _INSIDE
        return _WHOLE if ends else _BEGINS
