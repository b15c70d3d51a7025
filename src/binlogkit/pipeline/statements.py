"""What can be told about a QUERY event's statement from its text, without a SQL parser."""

from __future__ import annotations

import re

from binlogkit.binlog import utf8

__all__ = ["database_statement"]

_DATABASE_STATEMENT = re.compile(
    rb"\s*(?:/\*.*?\*/\s*)*"
    rb"(?:CREATE\s+(?:OR\s+REPLACE\s+)?|ALTER\s+|DROP\s+)(?:DATABASE|SCHEMA)\s+"
    rb"(?:IF\s+(?:NOT\s+)?EXISTS\s+)?(`(?:[^`]|``)+`|[^\s`;]+)?",
    re.IGNORECASE | re.DOTALL,
)
_NOT_A_NAME = frozenset({b"DEFAULT", b"CHARACTER", b"CHARSET", b"COLLATE", b"COMMENT"})
"""Words that follow ALTER DATABASE when it names no database (it then alters the default one)."""


def database_statement(query: bytes) -> str | None:
    """The database a CREATE/ALTER/DROP DATABASE (or SCHEMA) statement names, else None.

    ``""`` for an ALTER DATABASE that names none (it alters the default
    database). Only comments and spaces may come before the statement.
    """
    m = _DATABASE_STATEMENT.match(query)
    if m is None:
        return None
    name = m[1] or b""
    if name.startswith(b"`"):
        return utf8.decode(name[1:-1].replace(b"``", b"`"))
    return "" if name.upper() in _NOT_A_NAME else utf8.decode(name)
