"""The schema of a live server's stream: seeded from the server where that is exact.

A stream that starts now is given the server's table definitions as of the
very position it starts at (:func:`~binlogkit.schema.seed.seed_from_server`
reads them without locks and says where they hold), so every table is known
from the first event. A stream that starts earlier cannot use today's
definitions for older rows: its history learns the tables from the DDL in the
binlogs it reads, and warns of the tables it never sees defined. A seeded
history reads a table again from the server when a statement on it cannot be
read (the definition as it is then: exact while the stream keeps up).
"""

from __future__ import annotations

import logging

from binlogkit.errors import ServerError
from binlogkit.io.mysql import MySQLConnection
from binlogkit.protocol.spec import ConnectionSpec
from binlogkit.schema.history import SchemaHistory
from binlogkit.schema.model import Catalog, TableName
from binlogkit.schema.seed import reread_tables, seed_from_server
from binlogkit.services.replica_stream import Start

log = logging.getLogger(__name__)

__all__ = ["stream_schema"]


def stream_schema(spec: ConnectionSpec | str, start: Start) -> tuple[SchemaHistory, Start]:
    """The schema history for a stream from ``start``, and where the stream must start."""
    if start != "now":
        return SchemaHistory(), start
    spec = ConnectionSpec.from_url(spec) if isinstance(spec, str) else spec
    try:
        with MySQLConnection.connect(spec) as conn:
            catalog, at = seed_from_server(conn)
    except ServerError as err:
        log.warning(
            "cannot read the server's table definitions (%s): tables not created in the "
            "binlog read give positional names; grant the user SELECT and SHOW VIEW on them, "
            "or give a schema (--schema FILE)",
            err,
        )
        return SchemaHistory(), start
    log.info("schema seeded from the server at %s (%d tables)", at, len(list(catalog.tables())))
    assert at.file is not None

    def reread(catalog: Catalog, names: tuple[TableName, ...]) -> Catalog:
        with MySQLConnection.connect(spec) as conn:
            return reread_tables(conn, catalog, names)

    return SchemaHistory(catalog, reread=reread), (at.file, at.pos)
