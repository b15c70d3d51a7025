"""Which columns the table map's SIGNEDNESS bits and charsets belong to, per server.

The optional metadata lists one signedness bit per numeric column and one
charset per character column, so a reader must count the same columns as the
writer. The writers (Table_map_log_event::init_signedness_field and
init_charset_field): MySQL 8.0.21+ counts YEAR and old DECIMAL among the
numeric types (``has_signedess_information_type``), 8.0.1-8.0.20 leaves YEAR
out; MySQL gives STRING, VAR_STRING, VARCHAR, BLOB (and 9.0's VECTOR) a
charset but not GEOMETRY; MariaDB counts YEAR too and gives GEOMETRY a charset.
The bytes below are written by those rules for one table::

    t(id INT UNSIGNED, y YEAR, n INT UNSIGNED, s SMALLINT, g GEOMETRY,
      v VARCHAR(10) CHARACTER SET latin1, d DECIMAL (the pre-5.0 type 0), f FLOAT UNSIGNED)
"""

from __future__ import annotations

import pytest

from binlogkit.binlog.constants import ColumnType as CT
from binlogkit.binlog.constants import EventType
from binlogkit.binlog.context import DecodeContext, FormatContext
from binlogkit.binlog.events.table_map import (
    MARIADB_RULES,
    MYSQL_8_0_20_RULES,
    MYSQL_RULES,
    OptionalMetadataType,
    TableMapEvent,
    metadata_rules,
)
from binlogkit.binlog.header import EventHeader
from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.binlog.tables import TableCache

T = OptionalMetadataType
MYSQL_8_0_40 = "8.0.40"
MYSQL_8_0_20 = "8.0.20-log"
MARIADB = "10.11.19-MariaDB-log"

TYPES = bytes([CT.LONG, CT.YEAR, CT.LONG, CT.SHORT, CT.GEOMETRY, CT.VARCHAR, CT.DECIMAL, CT.FLOAT])
META = b"\x04" + b"\x0a\x00" + b"\x04"  # GEOMETRY length bytes, VARCHAR(10) latin1, FLOAT size
NULLS = b"\xff"
LATIN1 = 8
BINARY = 63


def tlv(field_type: int, value: bytes) -> bytes:
    return bytes([field_type, len(value)]) + value


def body(optional: bytes) -> bytes:
    return (
        (7).to_bytes(6, "little")
        + b"\x01\x00"
        + b"\x02db\x00\x01t\x00"
        + bytes([len(TYPES)])
        + TYPES
        + bytes([len(META)])
        + META
        + NULLS
        + optional
    )


# Numeric columns id, y, n, s, d, f: unsigned 1 1 1 0 0 1, high bit first.
MYSQL_BYTES = tlv(T.SIGNEDNESS, b"\xe4") + tlv(T.DEFAULT_CHARSET, bytes([LATIN1]))
# 8.0.20 has no bit for y: id, n, s, d, f = 1 1 0 0 1.
MYSQL_8_0_20_BYTES = tlv(T.SIGNEDNESS, b"\xc8") + tlv(T.DEFAULT_CHARSET, bytes([LATIN1]))
# MariaDB: g and v have a charset; with two different ones COLUMN_CHARSET is the shorter field.
MARIADB_BYTES = tlv(T.SIGNEDNESS, b"\xe4") + tlv(T.COLUMN_CHARSET, bytes([BINARY, LATIN1]))

UNSIGNED = [True, True, True, False, None, None, False, True]


def decode(raw: bytes, server: str, ctx: DecodeContext | None = None) -> TableMapEvent:
    ctx = ctx or DecodeContext(FormatContext(server_version=server))
    header = EventHeader(timestamp=0, type_code=EventType.TABLE_MAP, server_id=1, event_size=0)
    event = TableMapEvent.decode(header, raw, ctx)
    assert event.encode_body(ctx.fmt) == raw
    return event


@pytest.mark.parametrize(
    ("server", "rules"),
    [
        (MYSQL_8_0_40, MYSQL_RULES),
        ("9.0.1", MYSQL_RULES),
        ("8.0.21", MYSQL_RULES),
        (MYSQL_8_0_20, MYSQL_8_0_20_RULES),
        ("8.0.1-dmr-log", MYSQL_8_0_20_RULES),
        ("", MYSQL_RULES),
        (MARIADB, MARIADB_RULES),
        ("5.5.5-10.5.1-MariaDB", MARIADB_RULES),
    ],
)
def test_rules_by_server(server: str, rules: object) -> None:
    assert metadata_rules(server) is rules


def test_the_rule_sets() -> None:
    assert CT.YEAR in MYSQL_RULES.numeric and CT.YEAR in MARIADB_RULES.numeric
    assert CT.YEAR not in MYSQL_8_0_20_RULES.numeric
    assert {CT.DECIMAL, CT.NEWDECIMAL} <= MYSQL_8_0_20_RULES.numeric & MARIADB_RULES.numeric
    assert CT.GEOMETRY in MARIADB_RULES.character and CT.GEOMETRY not in MYSQL_RULES.character
    assert CT.VECTOR in MYSQL_RULES.character
    for rules in (MYSQL_RULES, MYSQL_8_0_20_RULES, MARIADB_RULES):
        assert not {CT.ENUM, CT.SET, CT.JSON, CT.BIT} & (rules.numeric | rules.character)


@pytest.mark.parametrize(
    ("server", "optional", "unsigned", "geometry_charset"),
    [
        (MYSQL_8_0_40, MYSQL_BYTES, UNSIGNED, None),
        (MYSQL_8_0_20, MYSQL_8_0_20_BYTES, [True, None, *UNSIGNED[2:]], None),
        (MARIADB, MARIADB_BYTES, UNSIGNED, BINARY),
    ],
)
def test_each_server_reads_its_own_bytes(
    server: str, optional: bytes, unsigned: list[bool | None], geometry_charset: int | None
) -> None:
    cols = decode(body(optional), server).columns
    assert [c.unsigned for c in cols] == unsigned
    assert [c.charset for c in cols] == [None] * 4 + [geometry_charset, LATIN1, None, None]


def test_mysql_bytes_read_by_the_old_rule_shift_the_bits() -> None:
    """What the report saw: without YEAR, n takes y's bit and s takes n's."""
    cols = decode(body(MYSQL_BYTES), MYSQL_8_0_20).columns
    assert [c.unsigned for c in cols] != UNSIGNED


def test_a_cached_layout_is_not_reused_across_servers() -> None:
    raw = body(MARIADB_BYTES)
    tables = TableCache()
    mysql_ctx = DecodeContext(FormatContext(server_version=MYSQL_8_0_40), tables=tables)
    mariadb_ctx = DecodeContext(FormatContext(server_version=MARIADB), tables=tables)
    first = tables.add(decode(raw, MYSQL_8_0_40, mysql_ctx), raw)
    assert first.columns[4].charset is None
    second = tables.add(decode(raw, MARIADB, mariadb_ctx), raw)
    assert second is not first
    assert [c.charset for c in second.columns][4:6] == [BINARY, LATIN1]
    again = decode(raw, MARIADB, mariadb_ctx)
    assert again.metadata is second.map.metadata  # the same server: not parsed again
    assert tables.add(again, raw) is second  # ... and the same table, columns and plans


def test_build_reads_back_by_the_given_server() -> None:
    columns = [
        ColumnInfo(0, CT.LONG, CT.LONG, 0, False),
        ColumnInfo(1, CT.GEOMETRY, CT.GEOMETRY, 4, True),
    ]
    header = EventHeader(timestamp=0, type_code=EventType.TABLE_MAP, server_id=1, event_size=0)
    optional = [(T.SIGNEDNESS, (True,) + (False,) * 7), (T.DEFAULT_CHARSET, (BINARY, ()))]
    maria = TableMapEvent.build(
        header, 1, "db", "t", columns, optional_fields=optional, server_version=MARIADB
    )
    mysql = TableMapEvent.build(header, 1, "db", "t", columns, optional_fields=optional)
    assert [c.charset for c in maria.columns] == [None, BINARY]
    assert [c.charset for c in mysql.columns] == [None, None]
    assert maria.columns[0].unsigned is mysql.columns[0].unsigned is True
