"""Table maps written from table definitions, as a server would log them.

:func:`table_map_for` gives the TABLE_MAP event of a
:class:`~binlogkit.schema.model.TableDef` (parsed from CREATE TABLE text or
seeded from a server): each column's type code and binary metadata from
:func:`~binlogkit.schema.table_map.column_infos`, the NULL bitmap, and the
optional metadata a server of the chosen version writes with
``binlog_row_metadata`` FULL (or MINIMAL): signedness, charsets, names,
ENUM/SET members, geometry types, the primary key, and on MySQL column
visibility. Rows events written against it decode to the Python values they
were written from.
"""

from __future__ import annotations

from binlogkit.binlog.context import flavor_of
from binlogkit.binlog.events.table_map import TableMapEvent, column_metadata, metadata_rules
from binlogkit.binlog.header import EventHeader
from binlogkit.schema.model import TableDef
from binlogkit.schema.table_map import column_infos

__all__ = ["table_map_for"]


def table_map_for(
    definition: TableDef,
    header: EventHeader,
    server_version: str,
    *,
    table_id: int,
    full: bool = True,
) -> TableMapEvent:
    """The TABLE_MAP of ``definition`` under ``header``, as ``server_version`` logs it."""
    columns = column_infos(definition, metadata_rules(server_version), flavor_of(server_version))
    key = [definition.column_index(name) for name in definition.primary_key]
    return TableMapEvent.build(
        header,
        table_id,
        definition.db,
        definition.name,
        columns,
        optional_fields=column_metadata(
            columns,
            server_version,
            full=full,
            primary_key=[index for index in key if index is not None],
        ),
        server_version=server_version,
    )
