"""The tables a statement changes, read with the SQL parser (for replication filters).

Replicas apply their table rules to statement-based events by the tables a
statement updates. DML (INSERT, UPDATE, DELETE) is parsed with sqlglot's MySQL
dialect, DDL with binlogkit's extended one (:mod:`binlogkit.schema.ddl`).
Statements neither reads (REPLACE, LOAD DATA, CALL, ...) give None: unknown.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, SqlglotError

from binlogkit.schema import nodes
from binlogkit.schema.ddl import parse_ddl
from binlogkit.schema.session import Session
from binlogkit.schema.words import first_word

__all__ = ["TableRef", "changed_tables"]

TableRef = tuple[str | None, str]
"""A table as a statement names it: its database (None: the default one) and name."""

_DML = frozenset({"INSERT", "UPDATE", "DELETE"})


def changed_tables(sql: str, session: Session | None = None) -> tuple[TableRef, ...] | None:
    """The tables ``sql`` inserts into, updates, deletes from or defines; None when unknown."""
    word = first_word(sql)
    if word in _DML:
        try:
            node = sqlglot.parse_one(sql, read="mysql", error_level=ErrorLevel.RAISE)
        except SqlglotError:
            return None
        return _refs(_dml_targets(node))
    ddl = parse_ddl(sql, session or Session())
    if ddl is None:
        return None
    if isinstance(ddl, nodes.CreateTable):  # not the LIKE source nor REFERENCES tables
        return _refs([ddl.this])
    return _refs(ddl.find_all(exp.Table))


def _dml_targets(node: exp.Expr) -> list[exp.Expr]:
    if isinstance(node, exp.Insert):
        target = node.this
        return [target.this if isinstance(target, exp.Schema) else target]
    if isinstance(node, exp.Delete) and node.args.get("tables"):
        return list(node.args["tables"])  # DELETE t1, t2 FROM ...: only those lose rows
    if isinstance(node, exp.Update | exp.Delete):
        target = node.this
        return [target, *(join.this for join in target.args.get("joins") or ())]
    return []


def _refs(tables: object) -> tuple[TableRef, ...] | None:
    refs = []
    for table in tables:  # type: ignore[attr-defined]
        if not isinstance(table, exp.Table) or not table.name:
            return None
        refs.append((table.db or None, table.name))
    return tuple(dict.fromkeys(refs)) or None
