"""One table's definition from its CREATE TABLE text."""

from __future__ import annotations

from dataclasses import replace

from binlogkit.errors import BinlogError
from binlogkit.schema.ddl import apply_ddl
from binlogkit.schema.model import Catalog, TableDef
from binlogkit.schema.session import Session

__all__ = ["table_from_create"]


def table_from_create(sql: str, db: str, session: Session | None = None) -> TableDef:
    """The table ``sql`` (one CREATE TABLE statement) creates, in database ``db`` when the
    statement names none; read in ``session`` (its flavour, version and collations)."""
    session = replace(session or Session(), default_db=db)
    result = apply_ddl(Catalog(), sql, session)
    if result.warning is not None:
        raise BinlogError(f"cannot read the table definition: {result.warning}")
    created = [change.table for change in result.changes if change.table is not None]
    if result.kind != "CREATE TABLE" or len(created) != 1:
        raise BinlogError(
            f"not one CREATE TABLE statement: {sql[:80]!r}",
            hint='give the table as "CREATE TABLE name (column type, ...)"',
        )
    return created[0]
