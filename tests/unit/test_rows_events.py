"""TABLE_MAP and rows events built byte by byte from the format's definition.

Each test writes an event body the way the servers lay it out (MySQL's
rows_event.h and log_event.cc, MariaDB's log_event.cc), decodes it, checks
the decoded fields against what the bytes mean, and encodes it back.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import pytest

from binlogkit.binlog.constants import ColumnType, EventType
from binlogkit.binlog.context import DecodeContext, DecodeOptions, FormatContext
from binlogkit.binlog.decoder import BinlogDecoder, encode_event
from binlogkit.binlog.events.rows import (
    DeleteRowsEvent,
    ExtraRowInfo,
    PartialRowChange,
    PartialUpdateRowsEvent,
    RowChange,
    RowsEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)
from binlogkit.binlog.events.table_map import (
    OptionalMetadata,
    OptionalMetadataType,
    TableMapEvent,
    encode_optional_metadata,
)
from binlogkit.binlog.framing import Signal
from binlogkit.binlog.header import EventHeader
from binlogkit.binlog.mariadb_compression import compress, uncompress
from binlogkit.binlog.tables import TableCache
from binlogkit.errors import DecodeError, EncodeError

T = OptionalMetadataType
CT = ColumnType


def header(code: int) -> EventHeader:
    return EventHeader(timestamp=1700000000, type_code=code, server_id=1, event_size=0)


def packed(n: int) -> bytes:
    """A packed (length-encoded) integer below 251: one byte."""
    assert n < 251
    return bytes([n])


def tlv(field_type: int, value: bytes) -> bytes:
    return bytes([field_type]) + packed(len(value)) + value


def names(*items: bytes) -> bytes:
    return b"".join(packed(len(n)) + n for n in items)


def table_map_body(
    table_id: int,
    schema: bytes,
    table: bytes,
    types: bytes,
    metadata: bytes | None,
    nulls: bytes = b"",
    optional: bytes = b"",
    *,
    id_length: int = 6,
    flags: int = 1,
) -> bytes:
    body = table_id.to_bytes(id_length, "little") + flags.to_bytes(2, "little")
    body += packed(len(schema)) + schema + b"\0" + packed(len(table)) + table + b"\0"
    body += packed(len(types)) + types
    if metadata is not None:
        body += packed(len(metadata)) + metadata + nulls + optional
    return body


def decode_table_map(body: bytes, fmt: FormatContext | None = None) -> TableMapEvent:
    ctx = DecodeContext(fmt or FormatContext())
    event = TableMapEvent.decode(header(EventType.TABLE_MAP), body, ctx)
    assert event.encode_body(ctx.fmt) == body
    return event


# A table with one column of each kind the optional metadata treats differently:
#   id INT UNSIGNED NOT NULL PRIMARY KEY, name VARCHAR(20) (utf8mb4, 80 bytes),
#   price DECIMAL(5,2), e ENUM('a','b') (latin1), d DOUBLE, g POINT, t TINYINT INVISIBLE
KITCHEN_TYPES = bytes(
    [CT.LONG, CT.VARCHAR, CT.NEWDECIMAL, CT.STRING, CT.DOUBLE, CT.GEOMETRY, CT.TINY]
)
KITCHEN_META = (
    b"\x50\x00"  # VARCHAR: max length 80, 2 bytes little-endian
    + b"\x05\x02"  # NEWDECIMAL: precision 5, scale 2
    + b"\xf7\x01"  # STRING: real type ENUM, pack length 1
    + b"\x08"  # DOUBLE: 8 bytes
    + b"\x04"  # GEOMETRY: 4-byte length
)
KITCHEN_NULLS = b"\x7e"  # all but id nullable: bits 1-6, low bit first
MARIADB_FMT = FormatContext(server_version="10.11.19-MariaDB")  # GEOMETRY has a charset
KITCHEN_OPTIONAL = (
    tlv(T.SIGNEDNESS, b"\x80")  # numeric columns id, price, d, t: only id unsigned
    + tlv(T.DEFAULT_CHARSET, b"\x2d\x01\x3f")  # 45 (utf8mb4) but character column #1 is 63
    + tlv(T.COLUMN_NAME, names(b"id", b"name", b"price", b"e", b"d", b"g", b"t"))
    + tlv(T.ENUM_STR_VALUE, b"\x02" + names(b"a", b"b"))
    + tlv(T.GEOMETRY_TYPE, b"\x01")
    + tlv(T.SIMPLE_PRIMARY_KEY, b"\x00")
    + tlv(T.ENUM_AND_SET_DEFAULT_CHARSET, b"\x08")
    + tlv(T.COLUMN_VISIBILITY, b"\xfc")  # the seventh column is invisible
    + tlv(200, b"xyz")  # a type this library does not know: kept as it is
)


def kitchen_table_map() -> TableMapEvent:
    body = table_map_body(
        0x123456789A,
        b"shop",
        b"items",
        KITCHEN_TYPES,
        KITCHEN_META,
        KITCHEN_NULLS,
        KITCHEN_OPTIONAL,
    )
    return decode_table_map(body, MARIADB_FMT)


def test_table_map_fields() -> None:
    tm = kitchen_table_map()
    assert tm.table_id == 0x123456789A
    assert tm.flags == 1
    assert (tm.schema, tm.table_name) == ("shop", "items")
    assert tm.column_types == KITCHEN_TYPES
    assert tm.metadata == KITCHEN_META
    assert tm.column_metas == (0, 80, 0x0502, 0xF701, 8, 4, 0)


def test_optional_metadata_applies_to_the_right_columns() -> None:
    cols = kitchen_table_map().columns
    assert [c.name for c in cols] == ["id", "name", "price", "e", "d", "g", "t"]
    assert [c.key for c in cols] == ["id", "name", "price", "e", "d", "g", "t"]
    # Signedness: numeric columns only, in column order.
    assert [c.unsigned for c in cols] == [True, None, False, None, False, None, False]
    # Character columns (VARCHAR, GEOMETRY) get the default with one exception; ENUM its own.
    assert [c.charset for c in cols] == [None, 45, None, 8, None, 63, None]
    assert [c.nullable for c in cols] == [False, True, True, True, True, True, True]
    assert cols[3].type == CT.ENUM and cols[3].binlog_type == CT.STRING
    assert cols[3].enum_values == (b"a", b"b")
    assert cols[5].geometry_type == 1
    assert [c.primary_key for c in cols] == [True] + [False] * 6
    assert [c.visible for c in cols] == [True] * 6 + [False]
    fields = kitchen_table_map().metadata_fields
    assert fields.unknown == ((200, b"xyz"),)
    assert fields.primary_key == ((0, 0),)


def test_per_column_charsets_and_prefix_key() -> None:
    optional = (
        tlv(T.COLUMN_CHARSET, b"\x21\x3f")  # name: 33, g: 63
        + tlv(T.ENUM_AND_SET_COLUMN_CHARSET, b"\x08")
        + tlv(T.PRIMARY_KEY_WITH_PREFIX, b"\x01\x0a\x00\x00")  # name(10), id
    )
    body = table_map_body(7, b"s", b"t", KITCHEN_TYPES, KITCHEN_META, KITCHEN_NULLS, optional)
    tm = decode_table_map(body, MARIADB_FMT)
    assert [c.charset for c in tm.columns] == [None, 33, None, 8, None, 63, None]
    assert tm.metadata_fields.primary_key == ((1, 10), (0, 0))
    assert [c.primary_key for c in tm.columns] == [True, True] + [False] * 5
    assert [c.name for c in tm.columns] == [None] * 7
    assert [c.key for c in tm.columns] == [f"@{i}" for i in range(1, 8)]


def test_every_optional_field_reencodes_from_its_value() -> None:
    fields = [
        (T.SIGNEDNESS, (True, False, True) + (False,) * 5),
        (T.DEFAULT_CHARSET, (255, ((0, 63), (3, 8)))),
        (T.COLUMN_CHARSET, (45, 300, 2048)),
        (T.COLUMN_NAME, ("a", "ü")),
        (T.SET_STR_VALUE, ((b"x", b"y"), ())),
        (T.ENUM_STR_VALUE, ((b"",),)),
        (T.GEOMETRY_TYPE, (0, 7)),
        (T.SIMPLE_PRIMARY_KEY, (2, 0)),
        (T.PRIMARY_KEY_WITH_PREFIX, ((1, 0), (4, 255))),
        (T.ENUM_AND_SET_DEFAULT_CHARSET, (8, ())),
        (T.ENUM_AND_SET_COLUMN_CHARSET, (8, 33)),
        (T.COLUMN_VISIBILITY, (False,) * 8),
        (T.VECTOR_DIMENSIONALITY, (3, 16384)),
        (201, b"\x00\x01"),
    ]
    raw = encode_optional_metadata(fields)
    # Packed integers of 251 and more take a 0xfc prefix and two bytes.
    assert tlv(T.COLUMN_CHARSET, b"\x2d\xfc\x2c\x01\xfc\x00\x08") in raw
    parsed = OptionalMetadata.parse(raw)
    assert parsed.column_names == ("a", "ü")
    assert parsed.vector_dimensions == (3, 16384)
    assert parsed.unknown == ((201, b"\x00\x01"),)
    assert (
        encode_optional_metadata(
            (t, getattr(parsed, name))
            for t, name in zip(
                [f[0] for f in fields[:-1]],
                [
                    "signedness",
                    "default_charset",
                    "column_charsets",
                    "column_names",
                    "set_values",
                    "enum_values",
                    "geometry_types",
                    "simple_primary_key",
                    "primary_key_with_prefix",
                    "enum_set_default_charset",
                    "enum_set_column_charsets",
                    "column_visibility",
                    "vector_dimensions",
                ],
                strict=True,
            )
        )
        + tlv(201, b"\x00\x01")
        == raw
    )


def test_four_byte_table_id_when_the_post_header_is_six_bytes() -> None:
    lengths = bytearray(40)
    lengths[EventType.TABLE_MAP - 1] = 6
    fmt = FormatContext(post_header_lengths=bytes(lengths))
    body = table_map_body(0x01020304, b"d", b"t", bytes([CT.LONG]), b"", b"\x01", id_length=4)
    tm = decode_table_map(body, fmt)
    assert tm.table_id == 0x01020304


def test_table_map_without_metadata_block() -> None:
    # MySQL 5.1 before the metadata block: the body ends after the column types.
    body = table_map_body(16, b"test", b"t1", bytes([CT.LONG, CT.STRING]), None, flags=0)
    tm = decode_table_map(body)
    assert tm.metadata is None and tm.null_bitmap == b""
    assert tm.column_metas == (0, 0)
    assert [c.nullable for c in tm.columns] == [True, True]


def test_build_gives_the_bytes_decode_reads() -> None:
    tm = kitchen_table_map()
    optional = [(T.COLUMN_NAME, tuple(c.name for c in tm.columns))]
    built = TableMapEvent.build(
        tm.header, tm.table_id, "shop", "items", tm.columns, optional_fields=optional
    )
    assert built.metadata == KITCHEN_META
    assert built.null_bitmap == KITCHEN_NULLS
    assert built.optional_metadata == tlv(
        T.COLUMN_NAME, names(b"id", b"name", b"price", b"e", b"d", b"g", b"t")
    )


# --- rows events ------------------------------------------------------------------------------

# t(id INT NOT NULL, n VARCHAR(10) latin1, s SMALLINT UNSIGNED)
SMALL_TYPES = bytes([CT.LONG, CT.VARCHAR, CT.SHORT])
SMALL_META = b"\x0a\x00"
SMALL_OPTIONAL = (
    tlv(T.SIGNEDNESS, b"\x40")  # id signed, s unsigned
    + tlv(T.DEFAULT_CHARSET, b"\x08")
    + tlv(T.COLUMN_NAME, names(b"id", b"n", b"s"))
)
TABLE_ID = 42


def small_table_map(optional: bytes = SMALL_OPTIONAL) -> TableMapEvent:
    return decode_table_map(
        table_map_body(TABLE_ID, b"db", b"t", SMALL_TYPES, SMALL_META, b"\x06", optional)
    )


def rows_body(
    *images: bytes,
    width: int = 3,
    before: bytes | None = None,
    after: bytes | None = None,
    extra: bytes | None = None,
    flags: int = 1,
    table_id: int = TABLE_ID,
) -> bytes:
    body = table_id.to_bytes(6, "little") + flags.to_bytes(2, "little")
    if extra is not None:
        body += (len(extra) + 2).to_bytes(2, "little") + extra
    body += packed(width)
    for bitmap in (before, after):
        if bitmap is not None:
            body += bitmap
    return body + b"".join(images)


def image(nulls: int, *values: bytes, null_bytes: int = 1) -> bytes:
    return nulls.to_bytes(null_bytes, "little") + b"".join(values)


def i32(v: int) -> bytes:
    return struct.pack("<i", v)


def u16(v: int) -> bytes:
    return struct.pack("<H", v)


def vchar(s: bytes) -> bytes:
    return bytes([len(s)]) + s


def decode_rows(
    cls: type[RowsEvent],
    code: int,
    body: bytes,
    tm: TableMapEvent | None = None,
    options: DecodeOptions | None = None,
) -> RowsEvent:
    tables = TableCache()
    tables.add(tm or small_table_map(), b"")
    ctx = DecodeContext(FormatContext(), options or DecodeOptions(), tables)
    event = cls.decode(header(code), body, ctx)
    assert event.encode_body(ctx.fmt) == body
    return event


def test_write_rows_v1() -> None:
    rows = [
        image(0b000, i32(1), vchar(b"caf\xe9"), u16(65535)),
        image(0b110, i32(-2)),  # n and s NULL
    ]
    event = decode_rows(WriteRowsEvent, EventType.WRITE_ROWS_V1, rows_body(*rows, after=b"\x07"))
    assert (event.table_id, event.flags, event.width) == (TABLE_ID, 1, 3)
    assert event.extra_info is None and event.columns_before is None
    assert (event.schema, event.table_name) == ("db", "t")
    assert event.rows == (
        RowChange(None, {"id": 1, "n": "café", "s": 65535}),
        RowChange(None, {"id": -2, "n": None, "s": None}),
    )
    assert event.encode_rows(event.rows) == b"".join(rows)


def test_delete_rows_v2_with_extra_row_info() -> None:
    ndb = bytes([5, 0]) + b"abc"  # length (whole chunk), format, data
    extra = bytes([ExtraRowInfo.NDB_TAG]) + ndb + bytes([ExtraRowInfo.PARTITION_TAG]) + u16(3)
    body = rows_body(image(0, i32(9), vchar(b""), u16(1)), before=b"\x07", extra=extra)
    event = decode_rows(DeleteRowsEvent, EventType.DELETE_ROWS, body)
    assert event.extra_info == extra
    assert event.extra_row_info == ExtraRowInfo(ndb_info=ndb, partition_id=3)
    assert event.rows == (RowChange({"id": 9, "n": "", "s": 1}, None),)


def test_update_rows_v2_minimal_images_and_source_partition() -> None:
    # MINIMAL: the before image has the key only, the after image the changed column only.
    extra = bytes([ExtraRowInfo.PARTITION_TAG]) + u16(1) + u16(2)
    rows = [image(0, i32(5)), image(0b1, null_bytes=1), image(0, i32(6)), image(0, u16(7))]
    body = rows_body(*rows, before=b"\x01", after=b"\x04", extra=extra)
    event = decode_rows(UpdateRowsEvent, EventType.UPDATE_ROWS, body)
    assert event.extra_row_info == ExtraRowInfo(partition_id=1, source_partition_id=2)
    assert event.rows == (
        RowChange({"id": 5}, {"s": None}),  # s logged as NULL: present, and None
        RowChange({"id": 6}, {"s": 7}),
    )
    assert "n" not in event.rows[0].after  # not logged: absent, which is not NULL
    assert event.encode_rows(event.rows) == b"".join(rows)
    with pytest.raises(EncodeError, match="missing"):
        event.encode_rows([RowChange({"id": 5}, {"n": "x"})])


def test_columns_are_positional_without_names() -> None:
    tm = small_table_map(tlv(T.SIGNEDNESS, b"\x40"))
    body = rows_body(image(0, i32(3), vchar(b"x"), u16(4)), after=b"\x07")
    event = decode_rows(WriteRowsEvent, EventType.WRITE_ROWS_V1, body, tm)
    assert event.rows[0].after == {"@1": 3, "@2": b"x", "@3": 4}


def test_rows_decode_lazily_and_errors_name_the_place() -> None:
    body = rows_body(image(0, i32(1), b"\x09ab"), after=b"\x07")  # VARCHAR says 9, has 2
    event = decode_rows(WriteRowsEvent, EventType.WRITE_ROWS_V1, body)  # no error yet
    with pytest.raises(DecodeError) as info:
        _ = event.rows
    assert info.value.event_type == "WRITE_ROWS_V1"


def test_missing_table_map_is_a_clear_error() -> None:
    # Read from inside a transaction: the event is there (the dump prints it as the
    # tools do, an unknown table's), its rows cannot be.
    body = rows_body(image(0, i32(1), vchar(b""), u16(0)), after=b"\x07", table_id=77)
    ctx = DecodeContext(FormatContext(), DecodeOptions())
    event = WriteRowsEvent.decode(header(EventType.WRITE_ROWS_V1), body, ctx)
    assert event.table is None and event.encode_body(ctx.fmt) == body
    with pytest.raises(DecodeError, match="table id 77 before this rows event") as info:
        _ = event.rows
    assert info.value.hint is not None and "TABLE_MAP" in info.value.hint


def test_dummy_rows_event_without_table() -> None:
    # An empty statement-end rows event may name a table id no TABLE_MAP announced.
    body = rows_body(width=1, after=b"\x00", table_id=0xFFFFFF)
    ctx = DecodeContext(FormatContext(), DecodeOptions())
    event = WriteRowsEvent.decode(header(EventType.WRITE_ROWS_V1), body, ctx)
    assert event.table is None and event.rows == ()
    assert event.encode_body(ctx.fmt) == body


def test_mariadb_compressed_rows() -> None:
    rows = image(0, i32(1), vchar(b"zz"), u16(2)) * 40
    compressed = zlib.compress(rows)
    blob = bytes([0x80 | 2]) + len(rows).to_bytes(2, "big") + compressed
    body = rows_body(blob, after=b"\x07")
    event = decode_rows(WriteRowsEvent, EventType.MARIADB_WRITE_ROWS_COMPRESSED_V1, body)
    assert event.compressed and event.data == blob
    assert event.rows_data == rows
    assert len(event.rows) == 40 and event.rows[0].after == {"id": 1, "n": "zz", "s": 2}
    assert uncompress(compress(rows)) == rows
    assert event.with_rows(event.rows).data == blob  # unchanged rows keep the stored bytes
    with pytest.raises(DecodeError, match="header says"):
        uncompress(bytes([0x81, 5]) + zlib.compress(b"abc"))


def test_pre_ga_rows_carry_record_null_bytes() -> None:
    # MySQL 5.1.17 (code 20): the table map has no metadata; each row starts with the
    # record's NULL byte: bit 0 the "deleted" bit, bits 1-2 columns a and b, rest set.
    tm = decode_table_map(table_map_body(16, b"test", b"t1", bytes([CT.LONG, CT.STRING]), None))
    rows = [b"\xf9" + i32(0) + vchar(b"one"), b"\xfd" + i32(1)]  # b NULL in the second row
    body = rows_body(*rows, width=2, after=b"\xff", table_id=16)
    tables = TableCache()
    tables.add(tm, b"")
    ctx = DecodeContext(FormatContext(), DecodeOptions(), tables)
    event = WriteRowsEvent.decode(header(EventType.PRE_GA_WRITE_ROWS), body, ctx)
    assert event.legacy
    assert event.rows == (
        RowChange(None, {"@1": 0, "@2": b"one"}),
        RowChange(None, {"@1": 1, "@2": None}),
    )
    assert event.encode_rows(event.rows) == b"".join(rows)


def test_partial_update_rows_shared_image() -> None:
    # t(id INT NOT NULL, j JSON): a shared image sits between before and after image,
    # with one partial bit per JSON column when value_options has PARTIAL_JSON_UPDATES.
    tm = decode_table_map(
        table_map_body(TABLE_ID, b"db", b"t", bytes([CT.LONG, CT.JSON]), b"\x04", b"\x02")
    )
    doc = b"\x00\x00\x00\x04\x00"  # binary JSON: small object, 0 members, 4 bytes
    json_value = len(doc).to_bytes(4, "little") + doc
    rows = [
        image(0b10, i32(1)),  # before: j NULL
        b"\x00",  # value_options 0: nothing else in the shared image
        image(0, i32(1), json_value),
        image(0, i32(2), json_value),
        b"\x01\x00",  # PARTIAL_JSON_UPDATES, partial bit of j clear: j logged whole
        image(0b10, i32(2)),  # after: j NULL
    ]
    body = rows_body(*rows, width=2, before=b"\x03", after=b"\x03", extra=b"")
    event = decode_rows(PartialUpdateRowsEvent, EventType.PARTIAL_UPDATE_ROWS, body, tm)
    first, second = event.rows
    assert isinstance(first, PartialRowChange) and isinstance(second, PartialRowChange)
    assert (first.value_options, first.diffs) == (0, {})
    assert (second.value_options, second.diffs) == (1, {})
    assert first.before == {"@1": 1, "@2": None}
    assert first.after is not None and first.after["@1"] == 1 and first.after["@2"] is not None
    assert second.after == {"@1": 2, "@2": None}
    assert event.encode_rows(event.rows) == b"".join(rows)


def test_partial_update_applies_json_diffs_to_the_before_image() -> None:
    tm = decode_table_map(
        table_map_body(TABLE_ID, b"db", b"t", bytes([CT.LONG, CT.JSON]), b"\x04", b"\x02")
    )
    # {"a": 1} in binary JSON: small object, 1 member, 12 bytes; key entry (offset 11,
    # length 1); value entry int16 inlined (type 5, value 1); then the key "a".
    doc = b"\x00" + b"\x01\x00\x0c\x00" + b"\x0b\x00\x01\x00" + b"\x05\x01\x00" + b"a"
    json_value = len(doc).to_bytes(4, "little") + doc
    # One diff: REPLACE (0), path "$.a", value int16 2 (type 5 and two bytes).
    diff = b"\x00" + b"\x03$.a" + b"\x03\x05\x02\x00"
    rows = [
        image(0, i32(1), json_value),
        b"\x01\x01",  # PARTIAL_JSON_UPDATES, and j (the first JSON column) is partial
        image(0, i32(1), len(diff).to_bytes(4, "little") + diff),
    ]
    body = rows_body(*rows, width=2, before=b"\x03", after=b"\x03", extra=b"")
    event = decode_rows(PartialUpdateRowsEvent, EventType.PARTIAL_UPDATE_ROWS, body, tm)
    (change,) = event.rows
    assert isinstance(change, PartialRowChange)
    assert change.before == {"@1": 1, "@2": {"a": 1}}
    assert change.after == {"@1": 1, "@2": {"a": 2}}  # the full new document
    ((path_op,),) = change.diffs.values()
    assert (path_op.operation, path_op.path, path_op.value) == (0, "$.a", 2)
    assert event.encode_rows(event.rows) == b"".join(rows)


def test_changed_values_are_written_and_read_back() -> None:
    body = rows_body(image(0, i32(1), vchar(b"a"), u16(2)), after=b"\x07")
    event = decode_rows(WriteRowsEvent, EventType.WRITE_ROWS_V1, body)
    changed = event.with_rows([RowChange(None, {"id": 7, "n": None, "s": 9})])
    assert changed.data == image(0b010, i32(7), u16(9))
    assert changed.rows == (RowChange(None, {"id": 7, "n": None, "s": 9}),)


def test_rows_event_wider_than_its_table_map() -> None:
    body = rows_body(image(0, i32(1), vchar(b""), u16(0), i32(5)), width=4, after=b"\x0f")
    event = decode_rows(WriteRowsEvent, EventType.WRITE_ROWS_V1, body)
    with pytest.raises(DecodeError, match="4 columns"):
        _ = event.rows


def test_null_bitmap_padding_is_kept() -> None:
    # MySQL 5.x and MariaDB set the NULL bitmap's unused bits, MySQL 8 clears them.
    for null_byte in (0b11111000, 0b00000000):
        body = rows_body(image(null_byte, i32(1), vchar(b"a"), u16(2)), after=b"\x07")
        event = decode_rows(WriteRowsEvent, EventType.WRITE_ROWS_V1, body)
        assert event.with_rows(event.rows).data == event.data


def test_from_rows_builds_a_full_image_event() -> None:
    tm = small_table_map()
    rows = [RowChange(None, {"id": 1, "n": "a", "s": 2})]
    event = WriteRowsEvent.from_rows(header(EventType.WRITE_ROWS), rows, table=tm)
    fmt = FormatContext()
    body = event.encode_body(fmt)
    assert body == rows_body(image(0, i32(1), vchar(b"a"), u16(2)), after=b"\x07", extra=b"")
    again = decode_rows(WriteRowsEvent, EventType.WRITE_ROWS, body)
    assert again.rows == tuple(rows)


# --- through the decoder: the table cache and the table filter ---------------------------------


def _frame(code: int, body: bytes, pos: int) -> bytes:
    size = 19 + len(body)
    return struct.pack("<IBIIIH", 1700000000, code, 1, size, pos + size, 0) + body


def _stream(events: list[tuple[int, bytes]]) -> bytes:
    out = bytearray()
    for code, body in events:
        out += _frame(code, body, len(out))
    return bytes(out)


def _decode_all(data: bytes, options: DecodeOptions | None = None) -> list[Any]:
    dec = BinlogDecoder(options=options, fmt=FormatContext(), expect_magic=False)
    dec.receive_data(data)
    dec.receive_data(b"")
    out = []
    while not isinstance(event := dec.next_event(), Signal):
        out.append(event)
    return out


def _two_tables() -> bytes:
    tm_a = table_map_body(1, b"db", b"a", bytes([CT.LONG]), b"", b"\x00")
    tm_b = table_map_body(2, b"db", b"b", bytes([CT.LONG]), b"", b"\x00")
    row = image(0, i32(5))
    broken = image(0, b"\x05")  # an INT of one byte: fails when (and only if) it is read
    return _stream(
        [
            (EventType.TABLE_MAP, tm_a),
            (EventType.WRITE_ROWS_V1, rows_body(broken, width=1, after=b"\x01", table_id=1)),
            (EventType.TABLE_MAP, tm_b),
            (EventType.WRITE_ROWS_V1, rows_body(row, width=1, after=b"\x01", table_id=2)),
        ]
    )


def test_decoder_links_rows_events_to_their_table_map() -> None:
    events = _decode_all(_two_tables())
    assert [type(e).__name__ for e in events] == [
        "TableMapEvent",
        "WriteRowsEvent",
        "TableMapEvent",
        "WriteRowsEvent",
    ]
    assert events[1].table.map is events[0] and events[3].table.map is events[2]
    assert events[3].rows == (RowChange(None, {"@1": 5}),)
    with pytest.raises(DecodeError):
        _ = events[1].rows
    for event in events:
        assert encode_event(event, FormatContext())[19:] == (event.encode_body(FormatContext()))


def test_table_filter_drops_other_tables_before_their_rows_are_read() -> None:
    options = DecodeOptions(tables=lambda schema, table: table == "b")
    events = _decode_all(_two_tables(), options)
    assert [(type(e).__name__, e.table_name) for e in events] == [
        ("TableMapEvent", "b"),
        ("WriteRowsEvent", "b"),
    ]
    assert events[1].rows == (RowChange(None, {"@1": 5}),)


def test_images_without_columns_cannot_hold_rows() -> None:
    # A columns-present bitmap with no bit set gives empty images: rows data after it
    # could never be consumed.
    body = rows_body(b"\x00\x00", after=b"\x00")
    event = decode_rows(WriteRowsEvent, EventType.WRITE_ROWS_V1, body)
    with pytest.raises(DecodeError, match="no column"):
        _ = event.rows


def test_table_map_names_keep_every_byte() -> None:
    # The names are length-prefixed (and NUL-terminated), so a NUL or a non-UTF-8 byte
    # inside one is data: it decodes and encodes back to the same bytes.
    body = table_map_body(7, b"d\0b", b"t\xff", bytes([CT.LONG]), b"", b"\0")
    event = decode_table_map(body)  # asserts the byte-exact re-encode
    assert (event.schema.encode("utf-8", "surrogateescape"), event.table_name) == (
        b"d\0b",
        "t\udcff",
    )
