"""Table maps written from their columns equal the servers' own, byte for byte.

For every corpus table map that carries optional metadata, the map built by
:meth:`TableMapEvent.build` from its decoded columns, with the optional fields
:func:`column_metadata` chooses for its server (MINIMAL or FULL as the map
was written; the primary key in the map's key order), is the map the server
wrote: type codes, metadata block, NULL bitmap and optional metadata. This
pins the fields' order, the charset field's form (default with exceptions or
one per column) and which columns each field covers, for MySQL 8.0-9.x and
MariaDB 10.5-10.11, MySQL 9.0's VECTOR dimensions included. Maps with a
prefixed primary key (which columns alone do not hold) are left out.
"""

from __future__ import annotations

import pytest
from corpus_walk import corpus_files, path

import binlogkit
from binlogkit.binlog.events.table_map import (
    OptionalMetadataType,
    TableMapEvent,
    column_metadata,
    split_optional_metadata,
)
from binlogkit.errors import BinlogError

pytestmark = pytest.mark.corpus


def _table_maps() -> list[tuple[str, TableMapEvent]]:
    found = []
    for name in corpus_files():
        try:
            with binlogkit.open(str(path(name)), schema=None, on_corrupt="skip") as events:
                for event in events:
                    if isinstance(event, TableMapEvent) and event.optional_metadata:
                        found.append((name, event))
        except BinlogError:
            continue  # damaged, encrypted or cut-short files: their table maps so far count
    return found


def test_table_maps_built_from_their_columns_are_the_servers() -> None:
    maps = _table_maps()
    versions = {event.server_version.split("-")[0] for _, event in maps}
    assert len(maps) > 8000 and {"10.11.19", "8.0.35", "9.0.1"} <= versions
    built = vectors = 0
    for name, event in maps:
        fields = event.metadata_fields
        if fields.primary_key_with_prefix is not None:
            continue
        vectors += fields.vector_dimensions is not None
        types = {t for t, _ in split_optional_metadata(event.optional_metadata)}
        optional = column_metadata(
            event.columns,
            event.server_version,
            full=OptionalMetadataType.COLUMN_NAME in types,
            primary_key=fields.simple_primary_key,
        )
        again = TableMapEvent.build(
            event.header,
            event.table_id,
            event.schema,
            event.table_name,
            event.columns,
            flags=event.flags,
            optional_fields=optional,
            server_version=event.server_version,
        )
        assert again == event, f"{name} at {event.header.offset}"
        built += 1
    assert built > 8000 and vectors >= 6
