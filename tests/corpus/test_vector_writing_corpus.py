"""MySQL 9.0's VECTOR columns written from table definitions and Python values, against the
bytes MySQL 9.0.1 logged (rust_mysql_common's ``vector.binlog``).

The file's own CREATE TABLE statements, read by binlogkit's DDL engine, give
table definitions; each TABLE_MAP that :func:`table_map_for` writes from them
(VECTOR type, 4-byte lengths, charset and VECTOR_DIMENSIONALITY in the optional
metadata) is the server's, byte for byte, and each rows event written from its
decoded values (lists of floats) against that map has the server's rows.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from corpus_walk import path

import binlogkit
from binlogkit.binlog.constants import Flavor
from binlogkit.binlog.events.query import QueryEvent
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.schema.ddl import apply_ddl
from binlogkit.schema.model import Catalog
from binlogkit.schema.session import Session
from binlogkit.writer.table_maps import table_map_for

pytestmark = pytest.mark.corpus

VECTOR_FILE = "blackbeam+rust_mysql_common/test-data/binlogs/vector.binlog"


def test_vector_tables_written_from_definitions_and_values() -> None:
    catalog = Catalog()
    maps: dict[int, TableMapEvent] = {}
    checked = vectors = 0
    with binlogkit.open(str(path(VECTOR_FILE)), schema=None) as events:
        for event in events:
            if isinstance(event, QueryEvent) and event.query != b"BEGIN":
                session = Session(default_db=event.db or None, flavor=Flavor.MYSQL)
                catalog = apply_ddl(catalog, event.query.decode(), session).catalog
            elif isinstance(event, TableMapEvent):
                definition = catalog.table(event.schema, event.table_name)
                assert definition is not None, event.table_name
                # SERIAL is a UNIQUE NOT NULL key, which MySQL logs as the primary key
                definition = replace(definition, primary_key=("id",))
                built = table_map_for(
                    definition, event.header, event.server_version, table_id=event.table_id
                )
                assert built == event, event.table_name
                maps[event.table_id] = built
                vectors += sum(c.vector_dimensions is not None for c in built.columns)
            elif isinstance(event, RowsEvent):
                again = event.from_rows(event.header, event.rows, table=maps[event.table_id])
                assert again.rows_data == event.rows_data, event.header.offset
                checked += len(event.rows)
    assert vectors >= 6 and checked >= 8
