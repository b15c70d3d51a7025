"""Pure checks of the selection helpers and the SQL literals (known answers from the SQL syntax)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest

from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.jsonb import EMPTY_JSON, JsonOpaque
from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.binlog.rows.types.values import JSON_NULL, Geometry, InvalidDate, InvalidDateTime
from binlogkit.dump.selection import (
    Selection,
    parse_id_list,
    parse_position,
    parse_rewrite_db,
)
from binlogkit.errors import BinlogError
from binlogkit.gtid import MariaGtidList
from binlogkit.pipeline.sql import quote_name, sql_literal


def col(type_: int, charset: int | None = None, binlog_type: int | None = None) -> ColumnInfo:
    return ColumnInfo(0, type_, binlog_type or type_, 0, True, "c", charset=charset)


def test_option_parsers() -> None:
    assert parse_id_list("1, 2,3") == {1, 2, 3}
    assert parse_rewrite_db(" a -> b ") == ("a", "b")
    with pytest.raises(BinlogError):
        parse_rewrite_db("a=b")
    with pytest.raises(BinlogError):
        parse_id_list("1,x")
    with pytest.raises(BinlogError):
        Selection(do_domain_ids=frozenset({1}), ignore_domain_ids=frozenset({2}))
    assert Selection().is_empty and not Selection(database="x").is_empty


@pytest.mark.parametrize(
    ("column", "value", "literal"),
    [
        (col(ColumnType.LONG), None, "NULL"),
        (col(ColumnType.LONGLONG), 18446744073709551615, "18446744073709551615"),
        (col(ColumnType.NEWDECIMAL), Decimal("-0.000000001"), "-0.000000001"),
        (col(ColumnType.DOUBLE), 0.1, "0.1e0"),
        (col(ColumnType.DOUBLE), 1e300, "1e+300"),
        (col(ColumnType.VARCHAR, 8), "é", "_latin1 X'E9'"),  # 8 = latin1_swedish_ci
        (col(ColumnType.VARCHAR, 45), "😀", "_utf8mb4 X'F09F9880'"),  # 45 = utf8mb4_general_ci
        (col(ColumnType.VARCHAR, 63), b"\x00\xff", "X'00FF'"),
        (col(ColumnType.BLOB, 63), b"", "''"),
        (col(ColumnType.DATE), date(2024, 2, 29), "'2024-02-29'"),
        (col(ColumnType.DATE), InvalidDate(0, 0, 0), "'0000-00-00'"),
        (col(ColumnType.DATETIME2), InvalidDateTime(2024, 0, 0), "'2024-00-00 00:00:00'"),
        (
            col(ColumnType.TIMESTAMP2),
            datetime(2038, 1, 19, 3, 14, 7, 999999, tzinfo=UTC),
            "'2038-01-19 03:14:07.999999'",
        ),
        (col(ColumnType.TIME2), -timedelta(hours=838, minutes=59, seconds=59), "'-838:59:59'"),
        (col(ColumnType.TIME2), -timedelta(microseconds=1), "'-00:00:00.000001'"),
        (col(ColumnType.GEOMETRY), Geometry(4326, b"\x01"), "X'E610000001'"),
        (col(ColumnType.JSON), JSON_NULL, "CAST(_utf8mb4'null' AS JSON)"),
        (col(ColumnType.JSON), {"a": "it's"}, 'CAST(_utf8mb4\'{"a": "it\\\'s"}\' AS JSON)'),
        (col(ColumnType.JSON), 5, "CAST(_utf8mb4'5' AS JSON)"),
        (col(ColumnType.JSON), EMPTY_JSON, "CAST(_utf8mb4'null' AS JSON)"),
        (col(ColumnType.JSON), JsonOpaque(ColumnType.NEWDECIMAL, b"\x03\x02\x81\x0d"), "1.13"),
        (
            col(ColumnType.JSON),
            {"k": [JsonOpaque(ColumnType.BLOB, b"\xca\xfe"), "x", None]},
            "JSON_OBJECT(_utf8mb4'k', JSON_ARRAY(CAST(X'CAFE' AS BINARY), "
            "CAST(_utf8mb4'\"x\"' AS JSON), CAST(_utf8mb4'null' AS JSON)))",
        ),
    ],
)
def test_sql_literals(column: ColumnInfo, value: object, literal: str) -> None:
    assert sql_literal(column, value) == literal


def test_quote_name() -> None:
    assert quote_name("a`b") == "`a``b`"


def test_gtid_position_options() -> None:
    """mariadb-binlog's rules: an offset or a GTID list; one GTID per domain; start <= stop."""
    assert parse_position("1998") == 1998
    assert parse_position("0-1-5,5-2-9") == MariaGtidList.parse("0-1-5,5-2-9")
    with pytest.raises(BinlogError):
        parse_position("0-1")
    with pytest.raises(BinlogError, match="repeated domain"):
        Selection(start_gtids=MariaGtidList.parse("0-1-3,0-7-4"))
    start, stop = MariaGtidList.parse("0-1-9"), MariaGtidList.parse("0-1-7")
    with pytest.raises(BinlogError, match="invalid in strict mode"):
        Selection(start_gtids=start, stop_gtids=stop)
    assert not Selection(start_gtids=start, stop_gtids=stop, gtid_strict_mode=False).is_empty
    assert Selection(gtid_strict_mode=False).is_empty
