"""MySQL binary JSON: known answers from the format and real binlogs, round trips, fuzzing."""

from __future__ import annotations

import copy
import math
import pickle
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.framing import EventFramer, Frame
from binlogkit.binlog.jsonb import (
    EMPTY_JSON,
    MAX_DEPTH,
    JsonArray,
    JsonObject,
    JsonOpaque,
    JsonUInt,
    decode_jsonb,
    encode_jsonb,
)
from binlogkit.binlog.rows.columns import COLUMN_CODECS, ColumnInfo
from binlogkit.errors import DecodeError, EncodeError
from binlogkit.wire import ByteReader

# --- helpers ------------------------------------------------------------------


def same(a: Any, b: Any) -> bool:
    """Equal with the same types all the way down (1 != True != 1.0, int != JsonUInt)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b)
    return bool(a == b)


def mysql_key_order(obj: dict[str, Any]) -> list[str]:
    """MySQL's order of object keys: byte length first, then the bytes."""
    return sorted(obj, key=lambda k: (len(k.encode()), k.encode()))


def u16(n: int) -> bytes:
    return n.to_bytes(2, "little")


def u32(n: int) -> bytes:
    return n.to_bytes(4, "little")


# --- known answers from the format definition ---------------------------------

# MySQL's own example in json_binary.cc (Value::update_in_shadow): ["abc", "def"].
ABC_DEF = bytes.fromhex("02 0200 1200 0c0a00 0c0e00") + b"\x03abc\x03def"


def test_scalars() -> None:
    cases: list[tuple[bytes, Any]] = [
        (b"\x04\x00", None),
        (b"\x04\x01", True),
        (b"\x04\x02", False),
        (b"\x05\xff\xff", -1),
        (b"\x05\xff\x7f", 32767),
        (b"\x06\xff\xff", JsonUInt(65535)),
        (b"\x07\x00\x80\x00\x00", 32768),
        (b"\x07\xff\x7f\xff\xff", -32769),
        (b"\x08\x00\x00\x01\x00", JsonUInt(65536)),
        (b"\x09" + (2**31).to_bytes(8, "little"), 2**31),
        (b"\x0a" + (2**64 - 1).to_bytes(8, "little"), JsonUInt(2**64 - 1)),
        (b"\x0b" + struct.pack("<d", 1.5), 1.5),
        (b"\x0b" + struct.pack("<d", -0.0), -0.0),
        (b"\x0c\x00", ""),
        (b"\x0c\x02\xc3\xa9", "é"),
        (b"\x0c\x80\x01" + b"a" * 128, "a" * 128),
        (b"\x0f\xfc\x02\x00\x01", JsonOpaque(ColumnType.BLOB, b"\x00\x01")),
    ]
    for data, value in cases:
        assert same(decode_jsonb(data), value), data
        assert encode_jsonb(value) == data


def test_unsigned_beyond_int64_is_uint64() -> None:
    # MySQL's JSON parser gives numbers over INT64_MAX an unsigned type.
    assert encode_jsonb(2**63) == b"\x0a" + (2**63).to_bytes(8, "little")
    assert encode_jsonb(-(2**63)) == b"\x09" + (2**63).to_bytes(8, "little")


def test_mysql_array_example() -> None:
    assert same(decode_jsonb(ABC_DEF), ["abc", "def"])
    assert encode_jsonb(["abc", "def"]) == ABC_DEF


def test_mysql_object_example() -> None:
    # {"a": "x", "b": "y", "c": "z"}, from the Value::remove_in_shadow comment.
    data = bytes.fromhex(
        "00 0300 2200 1900 0100 1a00 0100 1b00 0100 0c1c00 0c1e00 0c2000 616263 0178 0179 017a"
    )
    assert same(decode_jsonb(data), {"a": "x", "b": "y", "c": "z"})
    assert encode_jsonb({"c": "z", "a": "x", "b": "y"}) == data


def test_keys_sorted_by_length_then_bytes() -> None:
    value = {"bb": 1, "c": 2, "a": 3, "ab": 4, "": 5}
    data = encode_jsonb(value)
    decoded = decode_jsonb(data)
    assert list(decoded) == ["", "a", "c", "ab", "bb"]
    assert decoded == value


def test_inlined_values_in_small_and_large_containers() -> None:
    # Small: literals and 16-bit ints sit in the value entry; int32 is stored apart.
    small = bytes.fromhex("02 0400 1400 040100 05ffff 060100 071000") + u32(100000)
    assert same(decode_jsonb(small), [True, -1, JsonUInt(1), 100000])
    assert encode_jsonb([True, -1, JsonUInt(1), 100000]) == small
    # Large (forced by a long string): int32 is inlined too; int16 is sign-extended.
    text = "x" * 70000
    string = b"\x0c" + bytes([0xF0, 0xA2, 0x04]) + text.encode()
    header = 8 + 4 * 5
    large = (
        b"\x03"
        + u32(4)
        + u32(header + len(string) - 1)
        + b"\x04"
        + u32(1)
        + b"\x05"
        + b"\xff\xff\xff\xff"
        + b"\x07"
        + u32(100000)
        + b"\x0c"
        + u32(header)
        + string[1:]
    )
    assert same(decode_jsonb(large), [True, -1, 100000, text])
    assert encode_jsonb([True, -1, 100000, text]) == large


def test_small_container_inside_large_one() -> None:
    value = ["x" * 70000, {"k": [1, 2]}]
    data = encode_jsonb(value)
    assert data[0] == 0x03
    # The object is written small (type 0x00), right after the string.
    entry = data[1 + 8 + 5 : 1 + 8 + 10]
    assert entry[0] == 0x00
    offset = int.from_bytes(entry[1:], "little")
    assert data[1 + offset : 1 + offset + 4] == u16(1) + u16(len(data) - 1 - offset)
    assert same(decode_jsonb(data), value)


def test_empty_value_reads_as_null() -> None:
    assert decode_jsonb(b"") is EMPTY_JSON
    assert not EMPTY_JSON
    assert encode_jsonb(EMPTY_JSON) == b""
    assert encode_jsonb(None) == b"\x04\x00"


# Partial updates in place, step by step as MySQL's json_binary.cc documents them.
AFTER_XY = bytes.fromhex("02 0200 1200 0c0a00 0c0e00 02 5859 63 03 646566")
AFTER_XYZW = bytes.fromhex("02 0200 1200 0c0a00 0c0d00 02 5859 04 58595a57")
AFTER_456 = bytes.fromhex("02 0200 1200 0c0a00 05c801 02 5859 04 58595a57")
AFTER_REMOVE_B = bytes.fromhex(
    "00 0200 2200 1900 0100 1b00 0100 0c1c00 0c2000 000c1e000c2000 616263 0178 0179 017a"
)


@pytest.mark.parametrize(
    ("data", "value"),
    [
        (AFTER_XY, ["XY", "def"]),
        (AFTER_456, ["XY", 456]),
        (AFTER_REMOVE_B, {"a": "x", "c": "z"}),
    ],
)
def test_documents_updated_in_place_reencode_exactly(data: bytes, value: Any) -> None:
    decoded = decode_jsonb(data)
    assert same(decoded, JsonArray(value) if isinstance(value, list) else JsonObject(value))
    assert decoded == value
    assert decoded.layout is not None
    assert encode_jsonb(decoded) == data
    # Changed, the document is written the canonical way.
    changed = type(decoded)(decoded)
    canonical = encode_jsonb(value)
    assert canonical != data
    assert encode_jsonb(changed) == canonical


def test_in_place_update_can_leave_a_canonical_document() -> None:
    # The second step of MySQL's example uses up the free byte: the array is packed again.
    assert same(decode_jsonb(AFTER_XYZW), ["XY", "XYZW"])
    assert encode_jsonb(["XY", "XYZW"]) == AFTER_XYZW


def test_changed_layout_document_falls_back_to_canonical() -> None:
    decoded = decode_jsonb(AFTER_456)
    decoded[1] = 457
    assert encode_jsonb(decoded) == encode_jsonb(["XY", 457])
    decoded = decode_jsonb(AFTER_REMOVE_B)
    decoded["b"] = "y"
    assert decode_jsonb(encode_jsonb(decoded)) == {"a": "x", "b": "y", "c": "z"}


def test_nested_container_updated_in_place() -> None:
    inner = AFTER_XY[1:]  # the array after its type byte
    outer = (
        b"\x00"
        + u16(1)
        + u16(4 + 4 + 3 + 1 + len(inner))
        + u16(11)
        + u16(1)
        + b"\x02"
        + u16(12)
        + b"k"
        + inner
    )
    decoded = decode_jsonb(outer)
    assert type(decoded) is dict  # the object itself is canonical
    assert isinstance(decoded["k"], JsonArray)
    assert encode_jsonb(decoded) == outer
    # Changed, the nested array is written the canonical way.
    decoded["k"] = ["XY", "dez"]
    assert decode_jsonb(encode_jsonb(decoded)) == {"k": ["XY", "dez"]}


@pytest.mark.parametrize("data", [AFTER_456, AFTER_REMOVE_B, b"", b"\x06\x05\x00"])
def test_values_survive_pickle_and_copy(data: bytes) -> None:
    """Values cross process boundaries (Spark executors) and stay byte-exact."""
    value = decode_jsonb(data)
    for other in (pickle.loads(pickle.dumps(value)), copy.deepcopy(value), copy.copy(value)):
        assert same(other, value) or other is EMPTY_JSON is value
        assert encode_jsonb(other) == data


def test_large_container_that_fits_small_keeps_its_layout() -> None:
    data = bytes.fromhex("02 0100 0700 050100")  # [1], small
    assert type(decode_jsonb(data)) is list
    large = b"\x03" + u32(1) + u32(13) + b"\x05" + u32(1)  # [1] in the large format
    decoded = decode_jsonb(large)
    assert isinstance(decoded, JsonArray)
    assert decoded == [1]
    assert encode_jsonb(decoded) == large
    assert encode_jsonb([1]) == data


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x0d", "unknown value type"),
        (b"\x04\x03", "unknown literal"),
        (b"\x05\x01", "int16 needs 2 bytes"),
        (b"\x0c\x05abc", "string needs 5 bytes"),
        (b"\x0c\x02\xff\xfe", "not UTF-8"),
        (b"\x0c\xff\xff\xff\xff\xff\x01", "past 5 bytes"),
        (b"\x04\x00\x00", "stray bytes"),
        (b"\x02\x01\x00", "array header needs 4 bytes"),
        (b"\x02\x01\x00\x09\x00\x0c\x07\x00\x00", "overruns"),
        (b"\x02\x02\x00\x07\x00\x04\x00\x00", "cannot fit"),
        (b"\x02\x01\x00\x08\x00\x0c\x02\x00\x00", "points outside"),
        (bytes.fromhex("00 0200 1400 1200 0100 1300 0100 040000 040000 6161"), "duplicate key"),
        (
            bytes.fromhex("00 0300 1c00 1900 0100 1a00 0100 1b00 0100 040000 040000 040000 616261"),
            "duplicate key",
        ),
        (bytes.fromhex("00 0100 0c00 0b00 0200 040000 61"), "points outside"),
    ],
)
def test_bad_bytes_raise_decode_error(data: bytes, message: str) -> None:
    with pytest.raises(DecodeError, match=message):
        decode_jsonb(data)


def test_depth_limit() -> None:
    deep: Any = []
    for _ in range(MAX_DEPTH - 1):
        deep = [deep]
    assert decode_jsonb(encode_jsonb(deep)) == deep
    with pytest.raises(EncodeError, match="deeper"):
        encode_jsonb([deep])
    data = b"\x02" + u16(1) + u16(7) + b"\x04\x00\x00"
    for _ in range(MAX_DEPTH):
        data = b"\x02" + u16(1) + u16(7 + len(data) - 1) + bytes([data[0]]) + u16(7) + data[1:]
    with pytest.raises(DecodeError, match="deeper"):
        decode_jsonb(data)


@pytest.mark.parametrize(
    "value", [Decimal(1), date(2020, 1, 1), (1, 2), {1: 2}, 2**64, -(2**63) - 1, "\ud800"]
)
def test_values_json_cannot_hold(value: Any) -> None:
    with pytest.raises(EncodeError):
        encode_jsonb(value)


# --- opaque values ------------------------------------------------------------


def test_opaque_decimal_known_answers() -> None:
    # DECIMAL(6,3) 123.456: groups 123 and 456 in two bytes each, sign bit set.
    opaque = JsonOpaque(ColumnType.NEWDECIMAL, bytes.fromhex("0603807b01c8"))
    assert opaque.value == Decimal("123.456")
    assert opaque.to_text() == "123.456"
    # Negative values invert every byte: -1.5 as DECIMAL(2,1).
    negative = JsonOpaque(ColumnType.NEWDECIMAL, bytes([2, 1, 0x01 ^ 0x7F, 0x05 ^ 0xFF]))
    assert negative.as_decimal() == Decimal("-1.5")
    # 1234567890.1 as DECIMAL(11,1): a 1-digit group and a full 9-digit group.
    big = bytes([11, 1, 0x81]) + (234567890).to_bytes(4, "big") + b"\x01"
    assert JsonOpaque(ColumnType.NEWDECIMAL, big).as_decimal() == Decimal("1234567890.1")
    assert JsonOpaque.from_decimal(Decimal("1234567890.1"), 11, 1).data == big


def test_opaque_temporal_known_answers() -> None:
    # MySQL packs ((year*13+month) << 5 | day) << 17 | hour << 12 | minute << 6 | second,
    # shifted left 24 bits, plus microseconds.
    ymd = ((2012 * 13 + 3) << 5) | 18
    hms = (11 << 12) | (30 << 6) | 45
    packed = (((ymd << 17) | hms) << 24) + 123456
    dt = JsonOpaque(ColumnType.DATETIME, packed.to_bytes(8, "little"))
    assert dt.value == datetime(2012, 3, 18, 11, 30, 45, 123456)
    assert dt.to_text() == "2012-03-18 11:30:45.123456"
    day = JsonOpaque(ColumnType.DATE, ((ymd << 17) << 24).to_bytes(8, "little"))
    assert day.value == date(2012, 3, 18)
    assert day.to_text() == "2012-03-18"
    negative_time = -((((838 << 12) | (59 << 6) | 59) << 24) + 1)
    time = JsonOpaque(ColumnType.TIME, negative_time.to_bytes(8, "little", signed=True))
    assert time.value == -timedelta(hours=838, minutes=59, seconds=59, microseconds=1)
    assert time.to_text() == "-838:59:59.000001"
    zero = JsonOpaque(ColumnType.DATE, bytes(8))
    assert zero.to_text() == "0000-00-00"
    with pytest.raises(ValueError):
        _ = zero.value


def test_opaque_other_types() -> None:
    blob = JsonOpaque(ColumnType.VARCHAR, b"U")
    assert blob.value == b"U"
    assert blob.to_text() == "base64:type15:VQ=="
    with pytest.raises(ValueError):
        blob.as_date()


@given(
    st.integers(0, 12).flatmap(
        lambda places: st.decimals(allow_nan=False, allow_infinity=False, places=places)
    )
)
def test_opaque_decimal_round_trip(value: Decimal) -> None:
    assume(len(value.as_tuple().digits) <= 60)
    decoded = JsonOpaque.from_decimal(value).as_decimal()
    assert decoded == value
    assert format(decoded, "f").lstrip("-") == format(value, "f").lstrip("-")


@given(st.datetimes(), st.dates())
def test_opaque_temporal_round_trip(moment: datetime, day: date) -> None:
    assert JsonOpaque.from_datetime(moment).as_datetime() == moment
    stamp = JsonOpaque.from_datetime(moment, ColumnType.TIMESTAMP)
    assert stamp.as_datetime() == moment
    assert JsonOpaque.from_date(day).as_date() == day


@given(st.timedeltas(min_value=-timedelta(hours=838), max_value=timedelta(hours=838)))
def test_opaque_time_round_trip(span: timedelta) -> None:
    assert JsonOpaque.from_time(span).as_time() == span


def _column_bytes(type_: int, meta: int, value: Any) -> bytes:
    column = ColumnInfo(index=0, type=type_, binlog_type=type_, meta=meta, nullable=False)
    out = bytearray()
    COLUMN_CODECS[type_].encoder(column, DecodeOptions())(value, out)
    return bytes(out)


@given(
    st.decimals(
        allow_nan=False, allow_infinity=False, places=4, min_value=-(10**9), max_value=10**9
    ),
    st.datetimes(),
    st.timedeltas(min_value=-timedelta(hours=838), max_value=timedelta(hours=838)),
)
def test_opaque_values_are_the_column_formats(
    number: Decimal, moment: datetime, span: timedelta
) -> None:
    """MySQL's JSON keeps a DECIMAL as the NEWDECIMAL column bytes after precision and scale,
    DATETIME as the packed DATETIME whose integer part DATETIME2 stores (plus 0x8000000000),
    and TIME as the packed TIME that TIME2(6) stores (plus 0x800000000000)."""
    decimal = JsonOpaque.from_decimal(number, 14, 4).data
    assert decimal[2:] == _column_bytes(ColumnType.NEWDECIMAL, 14 << 8 | 4, number)
    packed = int.from_bytes(JsonOpaque.from_datetime(moment).data, "little", signed=True)
    column = _column_bytes(ColumnType.DATETIME2, 6, moment)
    assert int.from_bytes(column[:5], "big") - 0x8000000000 == packed >> 24
    assert int.from_bytes(column[5:], "big") == packed & 0xFFFFFF == moment.microsecond
    packed = int.from_bytes(JsonOpaque.from_time(span).data, "little", signed=True)
    column = _column_bytes(ColumnType.TIME2, 6, span)
    assert int.from_bytes(column, "big") - 0x800000000000 == packed


# --- property tests -----------------------------------------------------------

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**64 - 1),
    st.integers(0, 2**64 - 1).map(JsonUInt),
    st.floats(allow_nan=False),
    st.text(),
    st.builds(JsonOpaque, st.integers(0, 255), st.binary(max_size=300)),
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=8), inner, max_size=6)
    ),
    max_leaves=30,
)


def as_mysql_returns(value: Any) -> Any:
    """The value MySQL gives back: objects in its key order, ints over INT64_MAX unsigned."""
    if isinstance(value, dict):
        return {k: as_mysql_returns(value[k]) for k in mysql_key_order(value)}
    if isinstance(value, list):
        return [as_mysql_returns(v) for v in value]
    if type(value) is int and value > 2**63 - 1:
        return JsonUInt(value)
    return value


@given(json_values)
def test_round_trip(value: Any) -> None:
    data = encode_jsonb(value)
    decoded = decode_jsonb(data)
    assert same(decoded, as_mysql_returns(value))
    assert not _has_layout(decoded)
    assert encode_jsonb(decoded) == data


def test_nan_payload_survives() -> None:
    data = b"\x0b" + bytes.fromhex("010000000000f87f")
    value = decode_jsonb(data)
    assert math.isnan(value)
    assert encode_jsonb(value) == data


@settings(max_examples=5, deadline=None)
@given(st.text(max_size=3), st.integers(0x10000 // 12, 0x12000 // 12))
def test_large_format_round_trip(key: str, repeat: int) -> None:
    value = {"k" + key: ["12345678"] * repeat, "n": [2**20, -1]}
    data = encode_jsonb(value)
    assert data[0] == 0x01  # large object: the array's strings pass 64 KiB
    assert decode_jsonb(data) == value
    assert encode_jsonb(decode_jsonb(data)) == data


@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=200)
@given(json_values, st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=4))
def test_mutated_documents(value: Any, flips: list[tuple[int, int]]) -> None:
    """Damaged bytes raise DecodeError only; any container that decodes re-encodes exactly."""
    data = bytearray(encode_jsonb(value))
    for where, byte in flips:
        data[where % len(data)] = byte
    try:
        decoded = decode_jsonb(bytes(data))
    except DecodeError:
        return
    if data[0] <= 0x03:
        assert encode_jsonb(decoded) == bytes(data)
    assert decode_jsonb(encode_jsonb(decoded)) == decoded or _has_nan(decoded)


def _fits(value: int, signed: bool, width: int) -> bool:
    bits = 8 * width
    return -(1 << (bits - 1)) <= value < (1 << (bits - 1)) if signed else 0 <= value < (1 << bits)


def _scrambled_varlen(size: int, draw: Any) -> bytes:
    """A variable-length size, sometimes padded with needless zero groups."""
    out = bytearray()
    while True:
        out.append(size & 0x7F)
        size >>= 7
        if not size:
            break
        out[-1] |= 0x80
    for _ in range(draw(st.integers(0, 5 - len(out)))):
        out[-1] |= 0x80
        out.append(0)
    return bytes(out)


def _scrambled(value: Any, draw: Any) -> tuple[int, bytes]:
    """(type, data) of ``value`` in a legal but non-canonical layout, as in-place updates leave.

    Containers get random formats, gaps of stale bytes, keys and values in any
    order; scalars get wider types and padded sizes.
    """
    if value is None or isinstance(value, bool):
        return 0x04, bytes([0 if value is None else 1 if value else 2])
    if isinstance(value, int):
        signed = type(value) is int and value < 2**63
        widths = [w for w in (2, 4, 8) if _fits(value, signed, w)]
        width = draw(st.sampled_from(widths))
        t = {2: 0x05, 4: 0x07, 8: 0x09}[width] + (0 if signed else 1)
        return t, value.to_bytes(width, "little", signed=signed)
    if isinstance(value, float):
        return 0x0B, struct.pack("<d", value)
    if isinstance(value, str):
        data = value.encode()
        return 0x0C, _scrambled_varlen(len(data), draw) + data
    if isinstance(value, JsonOpaque):
        size = _scrambled_varlen(len(value.data), draw)
        return 0x0F, bytes([value.mysql_type]) + size + value.data
    is_object = isinstance(value, dict)
    keys = [k.encode() for k in value] if is_object else []
    children = [_scrambled(v, draw) for v in (value.values() if is_object else value)]
    if is_object and draw(st.booleans()):
        order = draw(st.permutations(range(len(children))))
        keys = [keys[i] for i in order]
        children = [children[i] for i in order]
    for large in (draw(st.booleans()), True):
        osz = 4 if large else 2
        inline = {0x04, 0x05, 0x06} | ({0x07, 0x08} if large else set())
        header = 2 * osz + len(children) * ((osz + 2 if is_object else 0) + osz + 1)
        chunks = [(("key", i), k) for i, k in enumerate(keys)]
        chunks += [(("value", i), d) for i, (t, d) in enumerate(children) if t not in inline]
        chunks = [chunks[i] for i in draw(st.permutations(range(len(chunks))))]
        offsets: dict[tuple[str, int], int] = {}
        region = bytearray()
        for name, data in chunks:
            region += draw(st.binary(max_size=3))
            offsets[name] = header + len(region)
            region += data
        region += draw(st.binary(max_size=3))
        size = header + len(region)
        if size <= (0xFFFFFFFF if large else 0xFFFF):
            break

    def pack(n: int) -> bytes:
        return n.to_bytes(osz, "little")

    out = bytearray(pack(len(children)) + pack(size))
    for i, k in enumerate(keys):
        out += pack(offsets["key", i]) + len(k).to_bytes(2, "little")
    for i, (t, data) in enumerate(children):
        if t in inline:
            field = data[:osz] + draw(st.binary(min_size=osz, max_size=osz))[len(data) :]
            out += bytes([t]) + field
        else:
            out += bytes([t]) + pack(offsets["value", i])
    t = (0x00 if is_object else 0x02) + (1 if large else 0)
    return t, bytes(out + region)


def _sorted_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted_keys(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted_keys(v) for v in value]
    return value


@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=100)
@given(json_values.filter(lambda v: isinstance(v, dict | list)), st.data())
def test_scrambled_layouts_reencode_exactly(value: Any, data: st.DataObject) -> None:
    t, body = _scrambled(value, data.draw)
    stored = bytes([t]) + body
    decoded = decode_jsonb(stored)
    assert same(_sorted_keys(decoded), _sorted_keys(as_mysql_returns(value)))
    assert encode_jsonb(decoded) == stored
    assert encode_jsonb(_sorted_keys(decoded)) == encode_jsonb(value)


def _has_nan(value: Any) -> bool:
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, dict):
        return any(_has_nan(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_nan(v) for v in value)
    return False


# --- real documents from the corpus -------------------------------------------

_DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)
_FIXED = {1: 1, 2: 2, 3: 4, 4: 4, 5: 8, 7: 4, 8: 8, 9: 3, 10: 3, 11: 3, 12: 8, 13: 1}
_BLOBS = {245, 249, 250, 251, 252, 255}


def _frames(path: Path) -> Iterator[Frame]:
    framer = EventFramer(file=str(path))
    framer.receive_data(path.read_bytes())
    framer.receive_data(b"")
    while isinstance(frame := framer.next_frame(), Frame):
        yield frame


def _table_map(frame: Frame) -> tuple[int, list[tuple[int, Any]]]:
    r = ByteReader(bytes(frame.body))
    table_id = r.uint(6)
    r.skip(2)
    r.skip(r.u8() + 1)
    r.skip(r.u8() + 1)
    types = r.take(r.packed_length())
    meta = r.sub(r.packed_length())
    columns: list[tuple[int, Any]] = []
    for t in types:
        if t in (4, 5, 17, 18, 19, 242) or t in _BLOBS:
            columns.append((t, meta.u8()))
        elif t in (15, 16, 246, 247, 248, 253, 254):
            columns.append((t, meta.take(2)))
        else:
            columns.append((t, None))
    return table_id, columns


def _value_size(buf: bytes, pos: int, t: int, meta: Any) -> tuple[int, int]:
    """(bytes of a column value, bytes of its length prefix) for the types the corpus uses."""
    if t in _FIXED:
        return _FIXED[t], 0
    if t in (17, 18, 19):
        return {17: 4, 18: 5, 19: 3}[t] + (meta + 1) // 2, 0
    if t == 246:
        intg, scale = meta[0] - meta[1], meta[1]
        size = intg // 9 * 4 + _DIG2BYTES[intg % 9] + scale // 9 * 4 + _DIG2BYTES[scale % 9]
        return size, 0
    if t == 16:
        return (meta[1] * 8 + meta[0] + 7) // 8, 0
    if t == 254 and meta[0] in (247, 248):
        return meta[1], 0
    if t in (15, 254):
        limit = (
            int.from_bytes(meta, "little")
            if t == 15
            else ((((meta[0] & 0x30) ^ 0x30) << 4) | meta[1])
        )
        prefix = 1 if limit < 256 else 2
        return prefix + int.from_bytes(buf[pos : pos + prefix], "little"), prefix
    if t in _BLOBS:
        return meta + int.from_bytes(buf[pos : pos + meta], "little"), meta
    raise AssertionError(f"column type {t} not handled by the test walker")


@dataclass(frozen=True)
class RowValue:
    """One non-NULL column value of a rows event, as the test walker finds it."""

    offset: int  # of the event
    type_code: int  # of the event
    row: int
    image: int  # 0 before (or only) image, 1 after image
    column: int
    column_type: int
    partial: bool  # a JSON column holding diffs
    data: bytes  # without the length prefix


def row_values(path: Path) -> Iterator[RowValue]:
    """Every non-NULL column value in the rows events of a binlog file.

    A small walker for the column types the corpus JSON files use, so these
    tests read real values without depending on the rows codecs.
    """
    tables: dict[int, list[tuple[int, Any]]] = {}
    for frame in _frames(path):
        code = frame.header.type_code
        body = bytes(frame.body)
        if code == 19:
            table_id, columns = _table_map(frame)
            tables[table_id] = columns
            continue
        if code not in (30, 31, 32, 39):
            continue
        r = ByteReader(body)
        columns = tables[r.uint(6)]
        r.skip(2)
        r.skip(r.u16() - 2)
        width = r.packed_length()
        json_columns = [i for i, (t, _) in enumerate(columns) if t == 245]
        bitmaps = [int.from_bytes(r.take((width + 7) // 8), "little")]
        if code in (31, 39):
            bitmaps.append(int.from_bytes(r.take((width + 7) // 8), "little"))
        row = 0
        while not r.at_end():
            for image, bitmap in enumerate(bitmaps):
                partial = 0
                if image == 1 and code == 39 and r.packed_length() & 1:
                    partial = int.from_bytes(r.take((len(json_columns) + 7) // 8), "little")
                present = [i for i in range(width) if bitmap >> i & 1]
                nulls = int.from_bytes(r.take((len(present) + 7) // 8), "little")
                for n, i in enumerate(present):
                    if nulls >> n & 1:
                        continue
                    t, meta = columns[i]
                    size, prefix = _value_size(body, r.pos, t, meta)
                    raw = r.take(size)
                    is_diff = t == 245 and bool(partial >> json_columns.index(i) & 1)
                    offset = frame.header.offset
                    yield RowValue(offset, code, row, image, i, t, is_diff, raw[prefix:])
            row += 1


def json_column_values(path: Path) -> Iterator[tuple[int, str, int, bytes]]:
    """(event offset, 'doc' or 'diff', image, bytes) of every non-NULL JSON column value."""
    for v in row_values(path):
        if v.column_type == 245:
            yield v.offset, "diff" if v.partial else "doc", v.image, v.data


def _json_files(corpus_dir: Path) -> list[Path]:
    from corpus_files import corpus_manifest

    return [corpus_dir / row["file"] for row in corpus_manifest() if "JSON" in row["column_types"]]


@pytest.mark.corpus
def test_every_corpus_document_reencodes_exactly(corpus_dir: Path) -> None:
    files = _json_files(corpus_dir)
    assert files
    total = 0
    for path in files:
        for offset, kind, _, raw in json_column_values(path):
            if kind != "doc":
                continue
            value = decode_jsonb(raw)
            assert encode_jsonb(value) == raw, f"{path.name} event at {offset}"
            assert not _has_layout(value), "MySQL-written documents are canonical"
            total += 1
    assert total > 400


def _has_layout(value: Any) -> bool:
    if isinstance(value, JsonObject | JsonArray):
        return True
    if isinstance(value, dict):
        return any(_has_layout(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_layout(v) for v in value)
    return False


@pytest.mark.corpus
def test_json_opaque_binlog(corpus_dir: Path) -> None:
    """MySQL 9.0 documents holding opaque values, decoded by hand from the packed formats."""
    path = corpus_dir / "blackbeam+rust_mysql_common/test-data/binlogs/json-opaque.binlog"
    docs = [decode_jsonb(raw) for _, _, _, raw in json_column_values(path)]
    natural = [
        {k: v.value if isinstance(v, JsonOpaque) else v for k, v in doc.items()} for doc in docs
    ]
    assert natural == [
        {"a": b"U"},
        {"b": date(2012, 3, 18)},
        {"c": datetime(2012, 3, 18, 11, 30, 45)},
        {"c": timedelta(hours=87, minutes=31, seconds=46, microseconds=654321)},
        {"d": Decimal("123.456")},
        {"e": Decimal("9.00")},
        {"e": [0, 1, True, False]},
        {"e": None},
    ]
    assert [doc[k].mysql_type for doc in docs[:6] for k in doc] == [
        ColumnType.VARCHAR,
        ColumnType.DATE,
        ColumnType.DATETIME,
        ColumnType.TIME,
        ColumnType.NEWDECIMAL,
        ColumnType.NEWDECIMAL,
    ]


@pytest.mark.corpus
def test_json_binlog_documents(corpus_dir: Path) -> None:
    path = corpus_dir / "blackbeam+rust_mysql_common/test-data/binlogs/json.binlog.000001"
    docs = [decode_jsonb(raw) for _, kind, _, raw in json_column_values(path) if kind == "doc"]
    assert docs[:3] == [
        {"age": 24, "data": "x" * 10, "name": "Joe"},
        {"age": 32, "data": "y" * 10, "name": "Sue"},
        {"age": 40, "data": "z" * 10, "name": "Pete"},
    ]


@pytest.mark.corpus
def test_empty_json_value_in_real_binlog(corpus_dir: Path) -> None:
    path = corpus_dir / "avaitla+mysqlbinlog2parquet/test/samples/mysql-bin-changelog.547927"
    empty = [raw for _, _, _, raw in json_column_values(path) if not raw]
    assert empty
    assert all(decode_jsonb(raw) is EMPTY_JSON for raw in empty)
