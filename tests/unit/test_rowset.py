"""Typed row access (binlogkit.pipeline.rowset): fields by name and position with their column
info, their stored bytes, and explicit conversions that fail clearly."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from binlogkit.binlog.constants import ColumnType as CT
from binlogkit.binlog.constants import EventType
from binlogkit.binlog.events.rows import RowChange, UpdateRowsEvent, WriteRowsEvent
from binlogkit.binlog.events.table_map import OptionalMetadataType as T
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.binlog.header import EventHeader
from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.binlog.rows.types.values import ZERO_DATE, Geometry
from binlogkit.errors import BinlogError
from binlogkit.pipeline.rowset import ConversionError, Converter, RowEventSet, Value

UTF8MB4, BINARY = 45, 63
# name, type, type as logged, metadata
COLUMNS = [
    ("id", CT.LONG, CT.LONG, 0),
    ("name", CT.VARCHAR, CT.VARCHAR, 80),
    ("data", CT.BLOB, CT.BLOB, 2),
    ("price", CT.NEWDECIMAL, CT.NEWDECIMAL, 0x0A02),  # DECIMAL(10,2)
    ("ratio", CT.DOUBLE, CT.DOUBLE, 8),
    ("at", CT.DATETIME2, CT.DATETIME2, 3),
    ("day", CT.DATE, CT.DATE, 0),
    ("span", CT.TIME2, CT.TIME2, 0),
    ("tags", CT.SET, CT.STRING, 0xF801),  # SET('a','b','c')
    ("zero", CT.DATE, CT.DATE, 0),
    ("count", CT.LONG, CT.LONG, 0),
]
ROW: dict[str, Any] = {
    "id": 4_000_000_000,
    "name": "héllo",
    "data": b"\x00\x01",
    "price": Decimal("12.50"),
    "ratio": 0.25,
    "at": datetime(2024, 1, 2, 3, 4, 5, 600000),
    "day": date(2024, 2, 29),
    "span": -timedelta(hours=1, minutes=2),
    "tags": frozenset({"c", "a"}),
    "zero": ZERO_DATE,
    "count": None,
}


def header(code: int) -> EventHeader:
    return EventHeader(1_700_000_000, code, 1, 0)


def table_map() -> TableMapEvent:
    infos = [ColumnInfo(i, t, b, m, True) for i, (_, t, b, m) in enumerate(COLUMNS)]
    return TableMapEvent.build(
        header(EventType.TABLE_MAP),
        5,
        "shop",
        "items",
        infos,
        optional_fields=[
            (T.SIGNEDNESS, (True, False, False, False)),  # id unsigned
            (T.COLUMN_NAME, tuple(name for name, *_ in COLUMNS)),
            (T.COLUMN_CHARSET, (UTF8MB4, BINARY)),  # name, data
            (T.SET_STR_VALUE, ((b"a", b"b", b"c"),)),
            (T.ENUM_AND_SET_COLUMN_CHARSET, (UTF8MB4,)),
        ],
    )


def write(rows: list[dict[str, Any]], **kwargs: Any) -> WriteRowsEvent:
    changes = [RowChange(None, row) for row in rows]
    return WriteRowsEvent.from_rows(
        header(EventType.WRITE_ROWS_V1), changes, table=table_map(), **kwargs
    )


def field(name: str) -> Value:
    (change,) = RowEventSet(write([ROW]))
    assert change.before is None and change.after is not None
    return change.after[name]


def test_fields_by_name_and_position_carry_their_column() -> None:
    (change,) = RowEventSet(write([ROW]))
    row = change.after
    assert row is not None
    assert [v.name for v in row] == [name for name, *_ in COLUMNS]
    assert len(row) == len(COLUMNS) and row.keys() == tuple(ROW)
    assert row[0] == row["id"]
    price = row[3]
    assert (price.name, price.type_code, price.type_name, price.metadata) == (
        "price",
        CT.NEWDECIMAL,
        "NEWDECIMAL",
        0x0A02,
    )
    assert row["id"].unsigned is True and row["ratio"].unsigned is False
    assert (row["name"].charset, row["data"].charset) == (UTF8MB4, BINARY)
    assert row["count"].is_null and row["count"].raw is None
    with pytest.raises(KeyError, match="not in the table"):
        row[99]
    with pytest.raises(KeyError, match="not in the table"):
        row["nope"]


def test_raw_is_the_value_as_the_row_image_stores_it() -> None:
    event = write([ROW, {**ROW, "id": 7, "name": "x" * 70, "count": 3}])
    data = event.rows_data
    pos = 0
    for change in RowEventSet(event):
        assert change.after is not None
        pos += (len(COLUMNS) + 7) // 8  # the NULL bitmap
        for value in change.after:
            if value.is_null:
                continue
            raw = value.raw
            assert raw is not None
            assert data[pos : pos + len(raw)] == raw
            pos += len(raw)
    assert pos == len(data)
    assert field("name").raw == b"\x06h\xc3\xa9llo"  # length byte, then utf8mb4
    assert field("id").raw == (4_000_000_000).to_bytes(4, "little")


def test_a_column_left_out_of_the_image_is_a_key_error() -> None:
    only_two = {"id": 1, "name": "a"}
    (change,) = RowEventSet(write([only_two], columns_after=b"\x03\x00"))
    row = change.after
    assert row is not None
    assert [v.name for v in row] == ["id", "name"]
    with pytest.raises(KeyError, match="not logged in this image"):
        row["price"]
    with pytest.raises(KeyError, match="not logged"):
        row[3]
    assert row.get(3) is None and "price" not in row and 1 in row


def test_updates_have_both_images() -> None:
    before = {**ROW, "count": 1}
    after = {**ROW, "count": 2}
    event = UpdateRowsEvent.from_rows(
        header(EventType.UPDATE_ROWS_V1), [RowChange(before, after)], table=table_map()
    )
    (change,) = RowEventSet(event)
    assert change.before is not None and change.after is not None
    assert (change.before["count"].as_int(), change.after["count"].as_int()) == (1, 2)
    assert len(RowEventSet(event)) == 1


@dataclass(frozen=True)
class Fails:
    """A conversion that raises ConversionError, its message ending with ``why``."""

    why: str


# column, conversion, expected value
CONVERSIONS = [
    ("id", "as_str", "4000000000"),
    ("id", "as_int", 4_000_000_000),
    ("id", "as_float", 4e9),
    ("id", "as_decimal", Decimal(4_000_000_000)),
    ("id", "as_datetime", Fails("values of type int cannot be")),
    ("name", "as_str", "héllo"),
    ("name", "as_bytes", "héllo".encode()),
    ("name", "as_int", Fails("invalid literal for int() with base 10: 'héllo'")),
    ("data", "as_bytes", b"\x00\x01"),
    ("data", "as_str", Fails("its column has no known text charset (use as_bytes)")),
    ("price", "as_str", "12.50"),
    ("price", "as_decimal", Decimal("12.50")),
    ("price", "as_float", 12.5),
    ("price", "as_int", Fails("it has a fraction")),
    ("ratio", "as_decimal", Decimal("0.25")),
    ("ratio", "as_int", Fails("it has a fraction")),
    ("at", "as_str", "2024-01-02 03:04:05.600000"),
    ("at", "as_datetime", datetime(2024, 1, 2, 3, 4, 5, 600000)),
    ("at", "as_date", date(2024, 1, 2)),
    ("day", "as_datetime", datetime(2024, 2, 29)),
    ("day", "as_date", date(2024, 2, 29)),
    ("day", "as_str", "2024-02-29"),
    ("span", "as_str", "-01:02:00"),
    ("span", "as_timedelta", -timedelta(hours=1, minutes=2)),
    ("span", "as_int", Fails("values of type timedelta cannot be")),
    ("tags", "as_str", "a,c"),
    ("zero", "as_str", "0000-00-00"),
    ("zero", "as_date", Fails("MySQL's zero or partial dates have no Python date (use as_str)")),
    ("count", "as_int", Fails("it is NULL")),
    ("count", "as_str", Fails("it is NULL")),
]


@pytest.mark.parametrize(("name", "method", "expected"), CONVERSIONS)
def test_conversions(name: str, method: str, expected: Any) -> None:
    value = field(name)
    if isinstance(expected, Fails):
        with pytest.raises(ConversionError) as caught:
            getattr(value, method)()
        message = str(caught.value)
        assert message.startswith(f"column {name} (") and message.endswith(expected.why)
        return
    got = getattr(value, method)()
    assert got == expected and type(got) is type(expected)


def test_conversion_errors_are_binlog_and_value_errors() -> None:
    with pytest.raises(BinlogError):
        field("count").as_int()
    with pytest.raises(ValueError):
        field("count").as_int()


def test_text_conversions_of_numbers_and_strings() -> None:
    value = Value(ColumnInfo(0, CT.VARCHAR, CT.VARCHAR, 20, True, charset=UTF8MB4), " 42 ")
    assert (value.as_int(), value.as_float(), value.as_decimal()) == (42, 42.0, Decimal(42))
    stamp = Value(ColumnInfo(0, CT.VARCHAR, CT.VARCHAR, 20, True), "2024-05-06 07:08:09")
    assert stamp.as_datetime() == datetime(2024, 5, 6, 7, 8, 9)
    shape = Value(ColumnInfo(0, CT.GEOMETRY, CT.GEOMETRY, 4, True), Geometry(4326, b"\x01"))
    assert shape.as_bytes() == (4326).to_bytes(4, "little") + b"\x01"
    raw_text = Value(ColumnInfo(0, CT.VARCHAR, CT.VARCHAR, 20, True, charset=UTF8MB4), b"\xc3\xa9")
    assert raw_text.as_str() == "é"  # raw mode keeps bytes; the column's charset reads them
    bad = Value(ColumnInfo(0, CT.VARCHAR, CT.VARCHAR, 20, True, charset=UTF8MB4), b"\xff")
    with pytest.raises(ConversionError, match="utf-8"):
        bad.as_str()


def test_a_converter_of_your_own() -> None:
    hashes = Converter({str: {int: lambda data, column: f"#{data}"}})
    (change,) = RowEventSet(write([ROW]), hashes)
    assert change.after is not None
    assert change.after["id"].as_str() == "#4000000000"
    with pytest.raises(ConversionError, match="no rules convert to that type"):
        change.after["id"].as_int()
    with pytest.raises(ConversionError, match="values of type Decimal cannot be"):
        change.after["price"].as_str()
