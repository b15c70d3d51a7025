"""Apply one SQL statement to a :class:`~binlogkit.schema.model.Catalog`.

:func:`apply_ddl` reads a statement with :class:`~binlogkit.schema.dialect.BinlogDialect`
and gives a :class:`~binlogkit.schema.result.DdlResult` with the new catalog.
Statements that are not DDL (DML, BEGIN/COMMIT/SAVEPOINT/XA, SET, GRANT ...)
are recognised by their first word and not parsed. DDL on objects that hold
no columns (views, routines, triggers, events, users, CREATE INDEX)
changes nothing. TRUNCATE TABLE changes nothing either, but is noted in the
result (:attr:`~binlogkit.schema.result.Action.TRUNCATED`): rows were removed
without row events. A statement that cannot be read (or that names columns the
catalog's table lacks, so the catalog no longer matches the server) gives a
warning, and the tables it names are marked unknown until a later CREATE
TABLE (or a new seed) defines them again. CREATE/DROP TEMPORARY TABLE change
nothing: temporary tables are per session and their rows are not logged in
row format.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Final

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokenizer_core import Token, TokenType

from binlogkit.schema import charsets, nodes
from binlogkit.schema.alter import alter_table
from binlogkit.schema.model import Catalog, DatabaseDef, TableName
from binlogkit.schema.result import Action, DdlResult, DdlWarning
from binlogkit.schema.session import Session
from binlogkit.schema.state import CannotApply, Context
from binlogkit.schema.tables import build_table, sequence_table
from binlogkit.schema.words import plainly_not_ddl

SHORTENED: Final = 200
"""Characters of a statement kept in a warning."""

_DDL_STARTS: Final = {
    TokenType.CREATE,
    TokenType.ALTER,
    TokenType.DROP,
    TokenType.RENAME,
    TokenType.TRUNCATE,
}


_DEFAULT_SESSION: Final = Session()


def shorten(sql: str) -> str:
    """A statement on one line, cut to :data:`SHORTENED` characters."""
    text = " ".join(sql.split())
    return text if len(text) <= SHORTENED else text[: SHORTENED - 3] + "..."


def _create_table(node: nodes.CreateTable, ctx: Context) -> None:
    if node.arg("temporary"):
        return
    name = ctx.name(node.this)
    if node.arg("exists") and ctx.exists(name):
        return
    like = node.arg("like")
    if like is not None:
        source = ctx.lookup(ctx.name(like))
        if source is None:
            ctx.mark_unknown(name)
        else:
            ctx.put(replace(source, db=name.db, name=name.name), Action.CREATED)
        return
    if node.arg("select"):
        raise CannotApply("CREATE TABLE ... SELECT: the columns come from a query", name)
    options = node.arg("options")
    default = charsets.resolve(
        _charset(options, "charset"),
        _charset(options, "collation"),
        ctx.database_default(name.db),
        ctx.session.default_collation,
    )
    table = build_table(
        name,
        node.arg("columns") or [],
        node.arg("primary_key"),
        default,
        ctx.session,
        versioning=bool(options is not None and options.args.get("versioning")),
    )
    ctx.put(table, Action.CREATED)


def _charset(options: exp.Expr | None, key: str) -> str | None:
    value = None if options is None else options.args.get(key)
    if value is None:
        return None
    return charsets.charset_name(value) if key == "charset" else charsets.collation_name(value)


def _create_sequence(node: nodes.CreateSequence, ctx: Context) -> None:
    name = ctx.name(node.this)
    if node.arg("temporary") or (node.arg("exists") and ctx.exists(name)):
        return
    ctx.put(sequence_table(name, ctx.database_default(name.db)), Action.CREATED)


def _drop_tables(node: nodes.DropTables, ctx: Context) -> None:
    if node.arg("temporary"):
        return
    for table in node.expressions:
        ctx.drop(ctx.name(table))


def _truncate_table(node: nodes.TruncateTable, ctx: Context) -> None:
    ctx.truncate(ctx.name(node.this))


def _rename_tables(node: nodes.RenameTables, ctx: Context) -> None:
    for pair in node.expressions:
        old, new = (ctx.name(t) for t in pair.expressions)
        table = ctx.lookup(old)
        if table is None:
            ctx.mark_unknown(new, old_name=old)
        else:
            ctx.put(replace(table, db=new.db, name=new.name), Action.RENAMED, old)


def _drop_index(node: nodes.DropIndex, ctx: Context) -> None:
    name = ctx.name(node.arg("table"))
    table = ctx.lookup(name)
    if table is not None and node.this.upper() == "PRIMARY" and table.primary_key:
        ctx.put(replace(table, primary_key=()), Action.ALTERED)


def _database(
    name: str, options: exp.Expr | None, base: charsets.Charset, ctx: Context
) -> DatabaseDef:
    pair = charsets.resolve(
        _charset(options, "charset"),
        _charset(options, "collation"),
        base,
        ctx.session.default_collation,
    )
    return DatabaseDef(ctx.catalog.stored(name), pair.charset, pair.collation)


def _create_database(node: nodes.CreateDatabase, ctx: Context) -> None:
    name = node.this
    if ctx.catalog.database(name) is not None:
        if node.arg("exists"):
            return
        if node.arg("replace"):
            _drop_database_tables(name, ctx)
    database = _database(name, node.arg("options"), ctx.session.server_default, ctx)
    ctx.catalog = ctx.catalog.with_database(database)
    ctx.databases.append(database.name)


def _alter_database(node: nodes.AlterDatabase, ctx: Context) -> None:
    name = node.this or ctx.session.default_db
    if not name:
        raise CannotApply("ALTER DATABASE without a name and no database selected")
    options = node.arg("options")
    if _charset(options, "charset") is None and _charset(options, "collation") is None:
        return
    database = _database(name, options, ctx.database_default(name), ctx)
    ctx.catalog = ctx.catalog.with_database(database)
    ctx.databases.append(database.name)


def _drop_database(node: nodes.DropDatabase, ctx: Context) -> None:
    if ctx.catalog.database(node.this) is None:
        return
    _drop_database_tables(node.this, ctx)
    ctx.catalog = ctx.catalog.without_database(node.this)
    ctx.databases.append(node.this)


def _drop_database_tables(name: str, ctx: Context) -> None:
    for table in list(ctx.catalog.tables(name)):
        ctx.drop(table.table_name)
    for unknown in list(ctx.catalog.unknown_tables()):
        if ctx.catalog.fold(unknown.db) == ctx.catalog.fold(name):
            ctx.drop(unknown)


_Handler = Callable[[Any, Context], None]

STATEMENTS: dict[type[exp.Expr], tuple[str, _Handler]] = {
    nodes.CreateTable: ("CREATE TABLE", _create_table),
    nodes.AlterTable: ("ALTER TABLE", alter_table),
    nodes.DropTables: ("DROP TABLE", _drop_tables),
    nodes.RenameTables: ("RENAME TABLE", _rename_tables),
    nodes.TruncateTable: ("TRUNCATE TABLE", _truncate_table),
    nodes.CreateSequence: ("CREATE SEQUENCE", _create_sequence),
    nodes.DropIndex: ("DROP INDEX", _drop_index),
    nodes.CreateDatabase: ("CREATE DATABASE", _create_database),
    nodes.AlterDatabase: ("ALTER DATABASE", _alter_database),
    nodes.DropDatabase: ("DROP DATABASE", _drop_database),
}
"""Statement node → its kind and how it changes the catalog (OtherDdl: nothing)."""


def _statement_tokens(sql: str, session: Session) -> list[Token]:
    tokens = session.dialect.tokenize(sql)
    while tokens and tokens[-1].token_type == TokenType.SEMICOLON:
        tokens.pop()
    return tokens


def parse_ddl(sql: str, session: Session = _DEFAULT_SESSION) -> exp.Expr | None:
    """The parsed DDL statement (CREATE, ALTER, DROP, RENAME, TRUNCATE); None for any other
    statement and for what cannot be read."""
    if plainly_not_ddl(sql):
        return None
    try:
        tokens = _statement_tokens(sql, session)
        if not tokens or tokens[0].token_type not in _DDL_STARTS:
            return None
        node: exp.Expr | None = session.dialect.parser().parse_statement(tokens, sql)
    except (TokenError, ParseError):
        return None
    return node


_DATABASE_NODES = (nodes.CreateDatabase, nodes.AlterDatabase, nodes.DropDatabase)


def named_database(sql: str, session: Session = _DEFAULT_SESSION) -> str | None:
    """The database a CREATE, ALTER or DROP DATABASE (or SCHEMA) statement names; ``""`` for
    an ALTER DATABASE that names none (it alters the default one); None for other statements
    and for what cannot be read."""
    node = parse_ddl(sql, session)
    return (node.this or "") if isinstance(node, _DATABASE_NODES) else None


def apply_ddl(catalog: Catalog, sql: str, session: Session = _DEFAULT_SESSION) -> DdlResult:
    """Apply one statement, read in ``session``, to ``catalog``.

    Never raises for the statement's content: what cannot be read or applied
    is the result's ``warning``, and the tables the statement names are then
    marked unknown in the result's catalog.
    """
    if plainly_not_ddl(sql):
        return DdlResult(catalog)
    try:
        tokens = _statement_tokens(sql, session)
    except TokenError as err:
        return _warned(catalog, session, sql, f"cannot tokenize: {_first_line(err)}", None, [])
    if not tokens:
        return DdlResult(catalog)
    if tokens[0].token_type == TokenType.USE:
        return _use(catalog, session, sql, tokens)
    if tokens[0].token_type not in _DDL_STARTS:
        return DdlResult(catalog)
    parser = session.dialect.parser()
    try:
        node = parser.parse_statement(tokens, sql)
    except ParseError as err:
        return _warned(catalog, session, sql, _first_line(err), None, parser.touched)
    if isinstance(node, nodes.OtherDdl):
        return DdlResult(catalog, node.this, is_ddl=True)
    entry = None if node is None else STATEMENTS.get(type(node))
    if entry is None:
        return _warned(catalog, session, sql, "not a statement this reads", None, [])
    kind, handler = entry
    ctx = Context(catalog, session)
    try:
        handler(node, ctx)
    except CannotApply as err:
        return _warned(catalog, session, sql, err.reason, kind, [*err.tables, *parser.touched])
    databases = tuple(dict.fromkeys(ctx.databases))
    return DdlResult(ctx.catalog, kind, True, tuple(ctx.changes), databases)


def _use(catalog: Catalog, session: Session, sql: str, tokens: list[Token]) -> DdlResult:
    if len(tokens) != 2:
        return _warned(catalog, session, sql, "USE takes one database name", "USE", [])
    token = tokens[1]
    quoted = token.token_type == TokenType.IDENTIFIER
    return DdlResult(
        catalog, "USE", default_db=token.text if quoted else sql[token.start : token.end + 1]
    )


def _first_line(err: Exception) -> str:
    return str(err).split("\n", 1)[0]


def _warned(
    catalog: Catalog,
    session: Session,
    sql: str,
    reason: str,
    kind: str | None,
    tables: Sequence[exp.Table | TableName],
) -> DdlResult:
    """A statement that could not be read or applied: the tables it names marked unknown."""
    ctx = Context(catalog, session)
    for table in tables:
        try:
            name = table if isinstance(table, TableName) else ctx.name(table)
        except CannotApply:
            continue
        if not any(change.name == name for change in ctx.changes):
            ctx.mark_unknown(name)
    return DdlResult(
        ctx.catalog, kind, True, tuple(ctx.changes), warning=DdlWarning(shorten(sql), reason)
    )
