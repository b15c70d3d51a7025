"""Rows written from Python values for every column type read back as the same values.

A table of every column type (integers of each width signed and unsigned,
DECIMAL up to (65,30), FLOAT/DOUBLE, DATE, TIME/DATETIME/TIMESTAMP with 0-6
fractional digits, YEAR, BIT, CHAR/VARCHAR/TEXT in several charsets, binary
strings and BLOBs, ENUM, SET, JSON, GEOMETRY, MariaDB's INET6/INET4/UUID) is
parsed from CREATE TABLE text; its table map is written by
:func:`~binlogkit.writer.table_maps.table_map_for` as a MariaDB and as a
MySQL server logs it; Hypothesis draws rows of values (edges included: zero
dates, TIME beyond 24 hours and negative, NULL); the rows event written from
them, framed into a binlog stream, is decoded by :class:`BinlogDecoder` and
must give back equal values of the same types. The text a server prints for
each value, read by :class:`~binlogkit.writer.import_values.ColumnInput` (as
``binlogkit write`` reads CSV), is the value again.
"""

from __future__ import annotations

import ipaddress
import struct
import uuid
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from binlogkit import BinlogDecoder
from binlogkit.binlog.constants import MAGIC, EventType, Flavor
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.decoder import NEED_DATA
from binlogkit.binlog.events.rows import WriteRowsEvent
from binlogkit.binlog.events.table_map import MARIADB_RULES, TableMapEvent, metadata_rules
from binlogkit.binlog.header import EventHeader
from binlogkit.binlog.rows.charsets import text_codec
from binlogkit.binlog.rows.image_writer import image_writer
from binlogkit.binlog.rows.plan import RowChange
from binlogkit.binlog.rows.types import JSON_NULL, ZERO_DATE, ZERO_DATETIME, Compressed, Geometry
from binlogkit.binlog.rows.types.compressed import compress
from binlogkit.binlog.tables import Table
from binlogkit.errors import EncodeError
from binlogkit.schema.completion import collation_of
from binlogkit.schema.ddl import apply_ddl
from binlogkit.schema.model import Catalog, ColumnDef, TableDef
from binlogkit.schema.session import Session
from binlogkit.schema.table_map import column_infos
from binlogkit.writer import format_description
from binlogkit.writer.binlog_file import encode_at
from binlogkit.writer.import_values import ColumnInput
from binlogkit.writer.table_maps import table_map_for

COMMON = """
  id INT NOT NULL PRIMARY KEY,
  i8 TINYINT, u8 TINYINT UNSIGNED, i16 SMALLINT, u16 SMALLINT UNSIGNED,
  i24 MEDIUMINT, u24 MEDIUMINT UNSIGNED, i32 INT, u32 INT UNSIGNED,
  i64 BIGINT, u64 BIGINT UNSIGNED,
  d1 DECIMAL(5,2), d2 DECIMAL(65,30), d3 DECIMAL(18,0) UNSIGNED, d4 DECIMAL(10,10),
  f FLOAT, g DOUBLE,
  dt DATE, t0 TIME, t3 TIME(3), t6 TIME(6), dt0 DATETIME, dt4 DATETIME(4), dt6 DATETIME(6),
  ts0 TIMESTAMP NULL, ts2 TIMESTAMP(2) NULL, ts6 TIMESTAMP(6) NULL, y YEAR,
  b1 BIT(1), b9 BIT(9), b64 BIT(64),
  c CHAR(10) CHARACTER SET latin1, vc VARCHAR(300) CHARACTER SET utf8mb4,
  vc3 VARCHAR(20) CHARACTER SET utf8mb3, tt TINYTEXT CHARACTER SET utf8mb4,
  tx TEXT CHARACTER SET latin1, lt LONGTEXT CHARACTER SET utf8mb4,
  bn BINARY(4), vb VARBINARY(40), bl BLOB, mb MEDIUMBLOB,
  e ENUM('a','bé','c d') CHARACTER SET utf8mb4, s SET('x','y','zé') CHARACTER SET utf8mb4,
  j JSON, geo GEOMETRY, pt POINT
"""
MARIADB_ONLY = """, ip6 INET6, ip4 INET4, u UUID,
  vz VARCHAR(200) COMPRESSED CHARACTER SET utf8mb4, vbz VARBINARY(300) COMPRESSED,
  bz BLOB COMPRESSED, tz TINYTEXT /*M!100301 COMPRESSED*/ CHARACTER SET latin1, vec VECTOR(3)
"""
MYSQL_ONLY = ", vec VECTOR(4)"


def _definition(flavor: Flavor) -> TableDef:
    extra = MARIADB_ONLY if flavor is Flavor.MARIADB else MYSQL_ONLY
    session = Session(default_db="db", flavor=flavor, server_collation="utf8mb4_general_ci")
    result = apply_ddl(Catalog(), f"CREATE TABLE t ({COMMON}{extra})", session)
    assert result.warning is None, result.warning
    table = result.catalog.table("db", "t")
    assert table is not None
    return table


_INT_BITS = {"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "bigint": 64}
_TIME_LIMIT = (838 * 3600 + 59 * 60 + 59) * 10**6
_CHARSET_TEXT = {
    "latin1": st.characters(codec="cp1252"),
    "utf8mb3": st.characters(max_codepoint=0xFFFF, exclude_categories=("Cs",)),
    "utf8mb4": st.characters(exclude_categories=("Cs",)),
}
_TEXT_CHARS = {"char": None, "varchar": None, "tinytext": 255 // 4, "text": 300, "longtext": 300}
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)


def _point(x: float, y: float) -> bytes:
    return b"\x01\x01\x00\x00\x00" + struct.pack("<dd", x, y)


def _fraction(fsp: int) -> st.SearchStrategy[int]:
    step = 10 ** (6 - fsp)
    return st.integers(0, 999_999 // step).map(lambda n: n * step)


_FLOAT32 = st.floats(width=32, allow_nan=False, allow_infinity=False)
_REPEATING = st.lists(st.sampled_from(["ab", "é", "z" * 20, " "]), max_size=40).map("".join)
"""Text that compresses well or not at all, around MariaDB's threshold of 100 bytes."""


def _values(col: ColumnDef, flavor: Flavor) -> st.SearchStrategy[Any]:
    """Values of one column, as the decoder gives them (COMPRESSED: what it compresses)."""
    kind = col.type
    if col.compressed:
        limit = col.length or 254  # TINYTEXT: the header byte takes one of its 255
        text = _REPEATING | st.text(_CHARSET_TEXT[col.charset or "utf8mb4"])
        if col.charset is None:
            return text.map(lambda t: t.encode()[:limit])
        return text.map(lambda t: t[:limit])
    if kind == "vector":
        if flavor is Flavor.MYSQL:
            return st.lists(_FLOAT32, max_size=col.length)
        floats = st.lists(_FLOAT32, min_size=col.length, max_size=col.length)
        return floats.map(lambda xs: struct.pack(f"<{len(xs)}f", *xs))
    if kind in _INT_BITS:
        bits = _INT_BITS[kind]
        low, high = (0, 2**bits - 1) if col.unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        return st.sampled_from([low, high, 0]) | st.integers(low, high)
    if kind == "decimal":
        p, s = col.precision or 10, col.scale or 0
        low = 0 if col.unsigned else -(10**p - 1)
        return st.integers(low, 10**p - 1).map(lambda n: Decimal(f"{n}E-{s}"))
    if kind == "float":
        return st.floats(width=32, allow_nan=False)
    if kind == "double":
        return st.floats(allow_nan=False)
    if kind == "date":
        return st.just(ZERO_DATE) | st.dates(min_value=date(1000, 1, 1))
    if kind == "time":
        step = 10 ** (6 - (col.fsp or 0))
        micros = st.integers(-_TIME_LIMIT // step, _TIME_LIMIT // step).map(lambda n: n * step)
        return micros.map(lambda n: timedelta(microseconds=n))
    if kind == "datetime":
        moments = st.datetimes(min_value=datetime(1000, 1, 1))
        fsp = col.fsp or 0
        return st.just(ZERO_DATETIME) | st.builds(
            lambda d, f: d.replace(microsecond=f), moments, _fraction(fsp)
        )
    if kind == "timestamp":
        seconds = st.integers(1, 2**31 - 1)
        fsp = col.fsp or 0
        return st.just(ZERO_DATETIME) | st.builds(
            lambda s, f: datetime.fromtimestamp(s, UTC).replace(microsecond=f),
            seconds,
            _fraction(fsp),
        )
    if kind == "year":
        return st.sampled_from([0, 1901, 2155]) | st.integers(1901, 2155)
    if kind == "bit":
        return st.integers(0, 2 ** (col.length or 1) - 1)
    if kind in _TEXT_CHARS:
        chars = col.length if _TEXT_CHARS[kind] is None else _TEXT_CHARS[kind]
        text = st.text(_CHARSET_TEXT[col.charset or "utf8mb4"], max_size=chars)
        return text.map(lambda t: t.rstrip(" ")) if kind == "char" else text
    if kind == "binary":
        return st.binary(min_size=col.length, max_size=col.length)
    if kind in ("varbinary", "blob", "mediumblob"):
        return st.binary(max_size=col.length or 300)
    if kind == "enum":
        return st.sampled_from(col.values or ())
    if kind == "set":
        return st.frozensets(st.sampled_from(col.values or ()))
    if kind == "json":  # MySQL's binary JSON
        return st.just(JSON_NULL) | _JSON.filter(lambda doc: doc is not None)
    if kind in ("geometry", "point"):
        return st.builds(
            Geometry,
            st.integers(0, 2**32 - 1),
            st.tuples(st.floats(allow_nan=False), st.floats(allow_nan=False)).map(
                lambda xy: _point(*xy)
            ),
        )
    if kind in ("inet6", "uuid"):
        return st.binary(min_size=16, max_size=16)
    if kind == "inet4":
        return st.binary(min_size=4, max_size=4)
    raise AssertionError(f"no values drawn for {kind}")


def _rows(
    definition: TableDef, flavor: Flavor, nulls: bool = True
) -> st.SearchStrategy[list[dict[str, Any]]]:
    columns = {
        col.name: (
            st.none() | _values(col, flavor) if col.nullable and nulls else _values(col, flavor)
        )
        for col in definition.columns
    }
    return st.lists(st.fixed_dictionaries(columns), min_size=1, max_size=4)


def _read_back(flavor: Flavor, table: TableMapEvent, rows: list[dict[str, Any]]) -> list[Any]:
    fde = format_description(flavor)
    fmt = fde.context()
    code = EventType.WRITE_ROWS_V1 if flavor is Flavor.MARIADB else EventType.WRITE_ROWS
    event = WriteRowsEvent.from_rows(
        EventHeader(0, code, 1, 0), [RowChange(None, row) for row in rows], table=table
    )
    data = bytearray(MAGIC)
    for each in (fde, table, event):
        data += encode_at(each, fmt, len(data))
    decoder = BinlogDecoder()
    decoder.receive_data(bytes(data))
    decoded = []
    while (got := decoder.next_event()) is not NEED_DATA:
        decoded.append(got)
    assert [e.header.type_code for e in decoded] == [
        EventType.FORMAT_DESCRIPTION,
        EventType.TABLE_MAP,
        code,
    ]
    return [change.after for change in decoded[-1].rows]


@pytest.mark.parametrize("flavor", [Flavor.MARIADB, Flavor.MYSQL])
@settings(max_examples=40)
@given(data=st.data())
def test_rows_from_values_read_back_equal(flavor: Flavor, data: st.DataObject) -> None:
    definition = _definition(flavor)
    version = format_description(flavor).server_version
    table = table_map_for(
        definition, EventHeader(0, EventType.TABLE_MAP, 1, 0), version, table_id=7
    )
    rows = data.draw(_rows(definition, flavor))
    back = _read_back(flavor, table, rows)
    expected = [{key: _decoded(value, definition, key) for key, value in r.items()} for r in rows]
    assert back == expected
    for mine, theirs in zip(expected, back, strict=True):
        for key, value in mine.items():
            assert type(theirs[key]) is type(value), key
            if isinstance(value, Decimal):
                assert theirs[key].as_tuple() == value.as_tuple(), key
    assert _read_back(flavor, table, back) == back  # COMPRESSED: written as stored


def _decoded(value: Any, definition: TableDef, key: str) -> Any:
    """What the decoder gives for a value written: COMPRESSED values with their stored form."""
    col = definition.column(key)
    assert col is not None
    if value is None or not col.compressed:
        return value
    if isinstance(value, bytes):
        return Compressed(value, compress(value))
    codec = text_codec(collation_of(col))
    assert codec is not None
    return Compressed(value, compress(codec.encode(value)))


def _text(value: Any, col: ColumnDef) -> Any:
    """``value`` as the text a server prints for it (bytes, geometries and members as they are)."""
    if isinstance(value, bool) or value is None or isinstance(value, bytes | Geometry):
        if isinstance(value, bytes) and col.type in ("inet6", "inet4"):
            return str(ipaddress.ip_address(value))
        if isinstance(value, bytes) and col.type == "uuid":
            return str(uuid.UUID(bytes=value))
        return value
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, timedelta):
        sign = "-" if value < timedelta(0) else ""
        span = abs(value)
        seconds = span.days * 86400 + span.seconds
        text = f"{sign}{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        return f"{text}.{span.microseconds:06d}" if span.microseconds else text
    if isinstance(value, datetime):
        return value.isoformat(" ")
    if isinstance(value, frozenset):
        return ",".join(sorted(value))
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


@settings(max_examples=40)
@given(data=st.data())
def test_text_forms_read_as_the_values(data: st.DataObject) -> None:
    """What :class:`ColumnInput` makes of each value's text (as `binlogkit write` reads CSV)
    is the value itself."""
    definition = _definition(Flavor.MARIADB)
    infos = column_infos(definition, MARIADB_RULES)
    inputs = {
        c.name: ColumnInput(c, info) for c, info in zip(definition.columns, infos, strict=True)
    }
    for row in data.draw(_rows(definition, Flavor.MARIADB)):
        for name, value in row.items():
            column = inputs[name].column
            got = inputs[name].value(_text(value, column))
            assert got == value and type(got) is type(value), (name, value, got)


_JUNK = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(),
    st.text(max_size=3),
    st.binary(max_size=20),
    st.decimals(allow_nan=True),
    st.booleans(),
    st.datetimes(timezones=st.just(UTC)),
    st.lists(st.floats(width=32), max_size=3),
)
"""Values of the wrong type, range or size for most columns."""


def _outcome(write: Any, row: dict[str, Any], pad: bool) -> tuple[str, Any]:
    out = bytearray(b"ab")  # what came before stays as it was
    try:
        write(row, out, pad)
    except EncodeError as err:
        return "error", (str(err), bytes(out))
    return "bytes", bytes(out)


@pytest.mark.parametrize("flavor", [Flavor.MARIADB, Flavor.MYSQL])
@pytest.mark.parametrize("raw", [False, True], ids=["values", "raw"])
@settings(max_examples=30)
@given(data=st.data())
def test_generated_writer_equals_the_plain_encoder(
    flavor: Flavor, raw: bool, data: st.DataObject
) -> None:
    """Every column type, NULLs and values a column refuses, natural and raw values: the
    generated writer gives the plain encoder's bytes or its error; a row without NULLs
    is written without the plain encoder."""
    definition = _definition(flavor)
    version = format_description(flavor).server_version
    table = table_map_for(
        definition, EventHeader(0, EventType.TABLE_MAP, 1, 0), version, table_id=7
    )
    options = DecodeOptions(raw_values=raw)
    plan = Table(table).plan(options)
    width = len(definition.columns)
    present = b"\xff" * 16
    image = plan.image(present, width)
    rows = data.draw(_rows(definition, flavor, nulls=data.draw(st.booleans())))
    if raw:  # the raw values of the same rows
        changes = [RowChange(None, row) for row in rows]
        section = Table(table).plan(DecodeOptions()).encode_rows(changes, width, None, present)
        rows = [c.after for c in plan.decode_rows(section, width, None, present)]
    plain_calls: list[int] = []

    def plain(row: Any, out: bytearray, pad: bool) -> None:
        plain_calls.append(1)
        image.write(row, out, pad)

    generated = image_writer(
        image.keys,
        tuple(plan.packings[i] for i in image.indexes),
        tuple(plan.encoders[i] for i in image.indexes),
        image.null_bytes,
        image.pad_mask,
        plain,
    )
    for row in rows:
        spoiled = dict(row)
        for key in data.draw(st.sets(st.sampled_from(sorted(row)), max_size=2)):
            spoiled[key] = data.draw(_JUNK)
        for candidate in (row, spoiled):
            for pad in (False, True):
                plain_calls.clear()
                expected = _outcome(image.write, candidate, pad)
                assert _outcome(generated, candidate, pad) == expected, candidate
                if candidate is row and None not in row.values():
                    assert not plain_calls and expected[0] == "bytes"


def test_vectors_from_outside_values() -> None:
    """VECTOR(3) from a list, its JSON text or its bytes: MySQL's up to 3 floats, MariaDB's
    exactly 3 as float32 bytes; more dimensions, or not finite numbers, are refused."""
    for flavor in (Flavor.MYSQL, Flavor.MARIADB):
        session = Session(default_db="db", flavor=flavor)
        definition = apply_ddl(Catalog(), "CREATE TABLE v (x VECTOR(3))", session).catalog
        table = definition.table("db", "v")
        assert table is not None
        rules = metadata_rules(format_description(flavor).server_version)
        (info,) = column_infos(table, rules, flavor)
        vector = ColumnInput(table.columns[0], info)
        three = struct.pack("<3f", 1.0, 2.5, -3.0)
        expected = [1.0, 2.5, -3.0] if flavor is Flavor.MYSQL else three
        for outside in ([1, 2.5, -3], "[1, 2.5, -3]", three):
            assert vector.value(outside) == expected, (flavor, outside)
        if flavor is Flavor.MYSQL:
            assert vector.value("[0.5]") == [0.5]
        else:
            with pytest.raises(EncodeError, match="1 dimensions, the column has 3"):
                vector.value("[0.5]")
        for refused in ("[1, 2, 3, 4]", [1.0, float("nan"), 2.0], "[1, true]", b"\x00" * 5):
            with pytest.raises(EncodeError):
                vector.value(refused)
