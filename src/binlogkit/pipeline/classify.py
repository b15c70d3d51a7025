"""What an event is about (ReplicationInterface's Event_handler): its database and table, and
whether it is DDL, DML, a row event or a statement.

DDL is told by the DDL engine (:func:`binlogkit.schema.ddl.apply_ddl`), the
one reader of statements that has a SQL grammar; DML statements by their
first keyword as its tokenizer reads it (versioned comments included).
"""

from __future__ import annotations

from sqlglot.errors import TokenError
from sqlglot.tokenizer_core import TokenType

from binlogkit.binlog.events import Event
from binlogkit.binlog.events.base import TransactionRole
from binlogkit.binlog.events.load import LoadStatementEvent
from binlogkit.binlog.events.query import QueryEvent
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.binlog.transactions import control
from binlogkit.schema.ddl import apply_ddl
from binlogkit.schema.model import Catalog
from binlogkit.schema.session import Session
from binlogkit.schema.words import plainly_not_ddl

__all__ = ["database_of", "is_ddl", "is_dml", "is_row", "is_statement", "table_of"]

_DML_STARTS = frozenset(
    {
        TokenType.INSERT,
        TokenType.UPDATE,
        TokenType.DELETE,
        TokenType.REPLACE,
        TokenType.LOAD,
        TokenType.WITH,  # WITH ... UPDATE / DELETE: a binlog logs no plain query
    }
)


def database_of(event: Event) -> str | None:
    """The database of a table map or rows event's table, a LOAD's target, or the default
    database a statement ran in (None when it had none); None for other events."""
    if isinstance(event, TableMapEvent | RowsEvent):
        return event.schema
    if isinstance(event, LoadStatementEvent):
        return event.db
    if isinstance(event, QueryEvent):
        return event.db or None
    return None


def table_of(event: Event) -> str | None:
    """The table of a table map or rows event, or a LOAD's target; None for other events
    (the tables a statement names need its parse, which only DDL gets)."""
    if isinstance(event, TableMapEvent | RowsEvent):
        return event.table_name
    if isinstance(event, LoadStatementEvent):
        return event.table
    return None


def is_row(event: Event) -> bool:
    """A row-format event: a table map or a rows event."""
    return event.transaction_role is TransactionRole.ROWS


def is_statement(event: Event) -> bool:
    """A statement-format event: a logged statement (DDL, or DML in statement format), not
    transaction control such as BEGIN or COMMIT."""
    if isinstance(event, LoadStatementEvent):
        return True
    return isinstance(event, QueryEvent) and control(event.query) is None


def is_ddl(event: Event, server_version: str | None = None) -> bool:
    """A statement that defines or changes objects (CREATE, ALTER, DROP, RENAME, TRUNCATE ...).

    ``server_version`` (the format description's) is the version whose
    versioned comments (``/*!40000 ... */``) the statement is read with;
    None reads it as the newest MariaDB does.
    """
    if not is_statement(event) or not isinstance(event, QueryEvent):
        return False
    text = event.text
    if plainly_not_ddl(text):
        return False
    return apply_ddl(Catalog(), text, _session(event, server_version)).is_ddl


def is_dml(event: Event, server_version: str | None = None) -> bool:
    """A change of rows: a rows event, or an INSERT, UPDATE, DELETE, REPLACE or LOAD DATA
    statement (``server_version`` as for :func:`is_ddl`)."""
    if isinstance(event, RowsEvent | LoadStatementEvent):
        return True
    if not is_statement(event) or not isinstance(event, QueryEvent):
        return False
    dialect = _session(event, server_version).dialect
    try:
        tokens = dialect.tokenize(event.text)
    except TokenError:
        return False
    return bool(tokens) and tokens[0].token_type in _DML_STARTS


def _session(event: QueryEvent, server_version: str | None) -> Session:
    if server_version is None:
        return Session(default_db=event.db or None)
    return Session.for_query(event, server_version)
