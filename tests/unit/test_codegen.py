"""The generated row readers and DECIMAL converters of binlogkit.binlog.rows.codegen.

A generated image reader must be indistinguishable from the plain plan it
stands in for: on every image (full or MINIMAL, with or without NULLs, pre-GA
record NULL bytes, natural or raw values, another time zone) and on damaged
data it gives the same row and next offset, or raises the same error. The
DECIMAL converter is checked against the format's definition directly.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from binlogkit.binlog.constants import ColumnType as CT
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.events.table_map import (
    MYSQL_RULES,
    OptionalMetadataType,
    TableMapEvent,
)
from binlogkit.binlog.header import EventHeader
from binlogkit.binlog.rows.codegen import image_reader
from binlogkit.binlog.rows.columns import COLUMN_CODECS, ColumnInfo
from binlogkit.binlog.rows.plan import GENERATE_AFTER, ImagePlan, RowChange, RowPlan
from binlogkit.binlog.rows.types import JSON_NULL, ZERO_DATETIME, InvalidDate, InvalidDateTime
from binlogkit.errors import DecodeError

T = OptionalMetadataType
UTF8MB4 = 45
LATIN1 = 8
BINARY = 63

# (name, binlog type, metadata, unsigned, charset, members, sample values)
COLUMNS: list[tuple[str, int, int, bool, int | None, tuple[bytes, ...], list[Any]]] = [
    ("tiny", CT.TINY, 0, False, None, (), [-128, 0, 127]),
    ("short_u", CT.SHORT, 0, True, None, (), [0, 65535]),
    ("medium", CT.INT24, 0, False, None, (), [-8388608, 5, 8388607]),
    ("medium_u", CT.INT24, 0, True, None, (), [0, 16777215]),
    ("int", CT.LONG, 0, False, None, (), [-(2**31), 7]),
    ("big_u", CT.LONGLONG, 0, True, None, (), [0, 2**64 - 1]),
    ("float", CT.FLOAT, 4, False, None, (), [1.5, -0.0, math.inf]),
    ("double", CT.DOUBLE, 8, False, None, (), [1 / 3, -0.0, 1e308]),
    (
        "price",
        CT.NEWDECIMAL,
        12 << 8 | 2,
        False,
        None,
        (),
        [Decimal("1234567890.12"), Decimal("-0.01"), Decimal("-0.00"), Decimal("0.00")],
    ),
    (
        "triples",
        CT.NEWDECIMAL,
        11 << 8 | 5,
        False,
        None,
        (),
        [Decimal("-123456.12345"), Decimal("999999.99999"), Decimal("0.00001")],
    ),
    (
        "wide",
        CT.NEWDECIMAL,
        65 << 8 | 30,
        False,
        None,
        (),
        [Decimal("-" + "9" * 35 + "." + "9" * 30), Decimal("1E-30")],
    ),
    ("whole", CT.NEWDECIMAL, 5 << 8, False, None, (), [Decimal("-12345"), Decimal("-0")]),
    ("year", CT.YEAR, 0, False, None, (), [0, 1901, 2155]),
    ("date", CT.DATE, 0, False, None, (), [date(2024, 2, 29), InvalidDate(0, 0, 0), date(1, 1, 1)]),
    (
        "old_time",
        CT.TIME,
        0,
        False,
        None,
        (),
        [-timedelta(hours=838, minutes=59, seconds=59), timedelta(0)],
    ),
    (
        "time",
        CT.TIME2,
        3,
        False,
        None,
        (),
        [-timedelta(seconds=1, milliseconds=500), timedelta(hours=838, minutes=59, seconds=59)],
    ),
    (
        "old_datetime",
        CT.DATETIME,
        0,
        False,
        None,
        (),
        [datetime(1999, 12, 31, 23, 59, 59), InvalidDateTime(0, 0, 0)],
    ),
    (
        "datetime",
        CT.DATETIME2,
        6,
        False,
        None,
        (),
        [
            datetime(2024, 1, 1, 0, 0, 0, 123456),
            InvalidDateTime(2020, 2, 30),
            InvalidDateTime(0, 0, 0),
        ],
    ),
    (
        "datetime0",
        CT.DATETIME2,
        0,
        False,
        None,
        (),
        [datetime(2024, 12, 31, 23, 59, 59), InvalidDateTime(2023, 2, 29, 1, 2, 3)],
    ),
    (
        "datetime3",
        CT.DATETIME2,
        3,
        False,
        None,
        (),
        [datetime(1000, 1, 1, 0, 0, 0, 999000), InvalidDateTime(0, 1, 0, 0, 0, 0, 1000)],
    ),
    (
        "old_stamp",
        CT.TIMESTAMP,
        0,
        False,
        None,
        (),
        [datetime(2024, 1, 1, tzinfo=UTC), ZERO_DATETIME],
    ),
    (
        "stamp",
        CT.TIMESTAMP2,
        2,
        False,
        None,
        (),
        [datetime(2038, 1, 19, 3, 14, 7, 990000, tzinfo=UTC), ZERO_DATETIME],
    ),
    ("name", CT.VARCHAR, 200, False, UTF8MB4, (), ["", "héllo", b"\xff\xfe"]),
    ("latin", CT.VARCHAR, 300, False, LATIN1, (), ["ÿ" * 10, "x" * 300]),
    ("bin", CT.STRING, CT.STRING << 8 | 16, False, BINARY, (), [b"ab", b""]),
    ("char", CT.STRING, CT.STRING << 8 | 40, False, UTF8MB4, (), ["abc", b"\xc3"]),
    ("blob", CT.BLOB, 2, False, BINARY, (), [b"", b"\x00" * 1000]),
    ("text", CT.BLOB, 4, False, UTF8MB4, (), ["x" * 5]),
    ("bits", CT.BIT, 1 << 8 | 2, False, None, (), [0, 1023]),
    ("enum", CT.STRING, CT.ENUM << 8 | 1, False, UTF8MB4, (b"a", b"b"), ["a", "b", ""]),
    (
        "set",
        CT.STRING,
        CT.SET << 8 | 3,
        False,
        UTF8MB4,
        (b"x", b"y", b"z"),
        [frozenset(), frozenset({"x", "z"})],
    ),
    ("doc", CT.JSON, 4, False, None, (), [{"a": [1, 2.5, None]}, JSON_NULL]),
    ("nothing", CT.NULL, 0, False, None, (), [None]),
]
# Names that would break generated code if they were ever spliced into its text.
HOSTILE_NAMES = ['x"); import os #', "}\n", "{K0}", "v0"]


Spec = tuple[str, int, int, bool, int | None, tuple[bytes, ...], list[Any]]


def table_map(specs: list[Spec] = COLUMNS, names: list[str] | None = None) -> TableMapEvent:
    columns = []
    for i, (_name, code, meta, _unsigned, _charset, _members, _values) in enumerate(specs):
        # ENUM and SET are logged as STRING; the codec of the metadata writes them alike.
        columns.append(ColumnInfo(i, code, CT.STRING if code == CT.STRING else code, meta, True))
    real = [
        c.meta >> 8 if c.type == CT.STRING and c.meta >> 8 in (CT.ENUM, CT.SET) else c.type
        for c in columns
    ]
    optional: list[tuple[int, Any]] = [
        (T.COLUMN_NAME, tuple(names or [c[0] for c in specs])),
        (T.SIGNEDNESS, tuple(c[3] for c in specs if c[1] in MYSQL_RULES.numeric)),
        (
            T.COLUMN_CHARSET,
            tuple(
                c[4] or BINARY
                for c, t in zip(specs, real, strict=True)
                if t in MYSQL_RULES.character
            ),
        ),
        (T.ENUM_STR_VALUE, tuple(c[5] for c, t in zip(specs, real, strict=True) if t == CT.ENUM)),
        (T.SET_STR_VALUE, tuple(c[5] for c, t in zip(specs, real, strict=True) if t == CT.SET)),
        (
            T.ENUM_AND_SET_COLUMN_CHARSET,
            tuple(UTF8MB4 for t in real if t in (CT.ENUM, CT.SET)),
        ),
    ]
    header = EventHeader(timestamp=0, type_code=19, server_id=1, event_size=0)
    return TableMapEvent.build(header, 7, "db", "t", columns, optional_fields=optional)


TABLE = table_map()
OPTIONS = {
    "natural": DecodeOptions(),
    "raw": DecodeOptions(raw_values=True),
    "zone": DecodeOptions(timezone=ZoneInfo("America/New_York")),
}


def test_the_table_map_describes_the_columns() -> None:
    """The fixture itself: names, signedness, charsets and members reached the columns."""
    for col, (name, _code, _meta, unsigned, charset, members, _values) in zip(
        TABLE.columns, COLUMNS, strict=True
    ):
        assert col.name == name
        if col.binlog_type in MYSQL_RULES.numeric:
            assert col.unsigned is unsigned
        if charset is not None:
            assert col.charset == charset
        if members:
            assert (col.enum_values or col.set_values) == members


def outcome(read: Callable[[bytes, int], Any], buf: bytes, pos: int) -> tuple[str, ...]:
    """What a reader makes of ``buf`` at ``pos``: the row (repr and types) or the error."""
    try:
        row, end = read(buf, pos)
    except Exception as exc:  # any error must be the very same error
        return ("error", type(exc).__name__, str(exc))
    return ("row", repr(row), repr([type(v) for v in row.values()]), str(end))


def random_table(rnd: random.Random) -> list[Spec]:
    """Some of the columns, in some order (the NULL-type column, always NULL, seldom)."""
    specs = [c for c in COLUMNS if c[1] != CT.NULL or rnd.random() < 0.2]
    return rnd.sample(specs, rnd.randint(1, len(specs)))


def random_image(
    rnd: random.Random, specs: list[Spec], encoder: RowPlan, legacy: bool
) -> tuple[bytes, int, bytes]:
    """A random image: (columns-present bitmap, width, image bytes) with random NULLs and values."""
    width = len(specs)
    keep = 0.8 if rnd.random() < 0.3 else 1.0  # MINIMAL-like images now and then
    present = [i for i in range(width) if rnd.random() < keep]
    bitmap = sum(1 << i for i in present).to_bytes((width + 7) // 8, "little")
    nulls = rnd.random() < 0.3
    row = {
        specs[i][0]: None if nulls and rnd.random() < 0.2 else rnd.choice(specs[i][6])
        for i in present
    }
    out = bytearray()
    encoder.image(bitmap, width, legacy).encode(row, out, pad=rnd.random() < 0.5)
    return bitmap, width, bytes(out)


def damaged(rnd: random.Random, data: bytes) -> bytes:
    """``data`` cut short, or with a few bytes changed."""
    if data and rnd.random() < 0.5:
        return data[: rnd.randrange(len(data))]
    buf = bytearray(data)
    for _ in range(rnd.randint(1, 3)):
        if buf:
            buf[rnd.randrange(len(buf))] = rnd.randrange(256)
    return bytes(buf)


def check_same(image: ImagePlan, buf: bytes, pos: int) -> tuple[str, ...]:
    plain = outcome(image.decode, buf, pos)
    assert outcome(image.generated_reader(), buf, pos) == plain
    return plain


@pytest.mark.parametrize("legacy", [False, True], ids=["v1v2", "pre-ga"])
@pytest.mark.parametrize("mode", list(OPTIONS))
def test_generated_reader_equals_the_plain_plan(mode: str, legacy: bool) -> None:
    rnd = random.Random(f"{mode}{legacy}")
    rows = errors = 0
    for _ in range(40):
        specs = random_table(rnd)
        table = table_map(specs)
        encoder, plan = RowPlan(table, DecodeOptions()), RowPlan(table, OPTIONS[mode])
        for _ in range(8):
            bitmap, width, data = random_image(rnd, specs, encoder, legacy)
            image = plan.image(bitmap, width, legacy)
            lead = bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 3)))
            # whole images (after some other bytes), followed by more data, damaged
            for buf in (lead + data, lead + data + data, lead + damaged(rnd, data)):
                result = check_same(image, buf, len(lead))
                rows += result[0] == "row"
                errors += result[0] == "error"
    assert rows > 500 and errors > 20  # both kinds of outcome were exercised


def test_rows_without_nulls_take_the_generated_path() -> None:
    """A NULL-free image never reaches the plain decoder; an image with a NULL does."""
    plan = RowPlan(TABLE, DecodeOptions())
    width = len(COLUMNS)
    present = ((1 << (width - 1)) - 1).to_bytes((width + 7) // 8, "little")  # all but NULL type
    image = plan.image(present, width)
    calls: list[int] = []

    def plain(buf: bytes, pos: int) -> Any:
        calls.append(pos)
        return image.decode(buf, pos)

    indexes = image.indexes
    reader = image_reader(
        image.keys,
        [plan.layouts[i] for i in indexes],
        [plan.decoders[i] for i in indexes],
        image.null_bytes,
        (1 << len(indexes)) - 1,
        plain,
    )
    full = {c[0]: c[6][0] for c in COLUMNS[:-1]}  # the first samples are all valid text
    for row, expected_calls in ((full, []), ({**full, "int": None}, [0])):
        out = bytearray()
        image.encode(row, out, pad=True)
        assert reader(bytes(out), 0) == image.decode(bytes(out), 0)
        assert calls == expected_calls
        calls.clear()


def test_hostile_column_names_are_data_not_code() -> None:
    names = [c[0] for c in COLUMNS]
    names[: len(HOSTILE_NAMES)] = HOSTILE_NAMES
    plan = RowPlan(table_map(COLUMNS, names), DecodeOptions())
    width = len(COLUMNS) - 1  # leave out the NULL-type column: the fast path runs
    present = ((1 << width) - 1).to_bytes((len(COLUMNS) + 7) // 8, "little")
    image = plan.image(present, len(COLUMNS))
    values = {name: c[6][0] for name, c in zip(names, COLUMNS[:width], strict=False)}
    out = bytearray()
    image.encode(values, out)
    row, end = image.generated_reader()(bytes(out), 0)
    assert list(row) == names[:width]
    assert end == len(out)
    assert outcome(image.generated_reader(), bytes(out), 0) == outcome(image.decode, bytes(out), 0)


def test_an_image_gets_its_generated_reader_after_a_few_rows() -> None:
    plan = RowPlan(TABLE, DecodeOptions())
    image = plan.image(b"\x01" + bytes((len(COLUMNS) + 7) // 8 - 1), len(COLUMNS))
    assert image.reader(1) == image.decode
    assert image.reader(GENERATE_AFTER) != image.decode
    assert image.reader(1) is image.reader(1)


# --- DECIMAL against its definition ------------------------------------------------------------

DIGIT_BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


def stored_decimal(negative: bool, int_digits: str, frac_digits: str) -> bytes:
    """MySQL's decimal2bin, from the format's definition: 9-digit groups, leftovers outside."""
    lead = len(int_digits) % 9
    int_groups = ([int_digits[:lead]] if lead else []) + [
        int_digits[i : i + 9] for i in range(lead, len(int_digits), 9)
    ]
    full = len(frac_digits) // 9 * 9
    frac_groups = [frac_digits[i : i + 9] for i in range(0, full, 9)]
    if len(frac_digits) > full:
        frac_groups.append(frac_digits[full:])
    data = b"".join(
        int(g).to_bytes(DIGIT_BYTES[len(g)] if len(g) < 9 else 4, "big")
        for g in int_groups + frac_groups
    )
    data = bytes([data[0] ^ 0x80]) + data[1:]
    return bytes(b ^ 0xFF for b in data) if negative else data


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 65).flatmap(
        lambda p: st.tuples(st.just(p), st.integers(0, min(p, 30)), st.booleans(), st.randoms())
    )
)
def test_decimal_values_have_the_stored_digits_and_scale(case: tuple[int, int, bool, Any]) -> None:
    precision, scale, negative, rnd = case
    digits = "".join(rnd.choice("0123456789") for _ in range(precision))
    int_digits, frac_digits = digits[: precision - scale], digits[precision - scale :]
    col = ColumnInfo(0, CT.NEWDECIMAL, CT.NEWDECIMAL, precision << 8 | scale, False, name="d")
    data = stored_decimal(negative, int_digits, frac_digits)
    value, end = COLUMN_CODECS[CT.NEWDECIMAL].decoder(col, DecodeOptions())(data, 0)
    text = ("-" if negative else "") + (int_digits or "0") + ("." + frac_digits if scale else "")
    assert repr(value) == repr(Decimal(text))  # same sign, digits and exponent
    assert end == len(data)


def test_decimal_group_over_its_digits_is_an_error() -> None:
    col = ColumnInfo(0, CT.NEWDECIMAL, CT.NEWDECIMAL, 12 << 8 | 2, False, name="d")
    decode = COLUMN_CODECS[CT.NEWDECIMAL].decoder(col, DecodeOptions())
    # DECIMAL(12,2): 1 digit in a byte, 9 in four bytes, 2 in a byte; the last says 100
    for data in (b"\x80\x00\x00\x00\x00\x64", bytes(b ^ 0xFF for b in b"\x80\x00\x00\x00\x00\x64")):
        with pytest.raises(DecodeError, match=f"bytes {data.hex()} are not a DECIMAL"):
            decode(data, 0)


def section_outcome(image: ImagePlan, buf: bytes, after: bool, generated: bool) -> tuple[str, ...]:
    """What reading a whole rows section of ``image`` gives: every row change, or the error."""
    out: list[Any] = []
    try:
        if generated:
            end = image.generated_readers()[1](buf, 0, len(buf), RowChange, after, out)
        else:
            end = 0
            while end < len(buf):
                row, end = image.decode(buf, end)
                out.append(RowChange(None, row) if after else RowChange(row, None))
    except Exception as exc:
        return ("error", type(exc).__name__, str(exc))
    return (
        "rows",
        repr(out),
        repr([type(v) for c in out for v in (c.after if after else c.before).values()]),
        str(end),
    )


@pytest.mark.parametrize("legacy", [False, True], ids=["v1v2", "pre-ga"])
@pytest.mark.parametrize("mode", list(OPTIONS))
def test_section_reader_equals_a_loop_over_the_plain_plan(mode: str, legacy: bool) -> None:
    """Many images in a row (some with NULLs, some damaged) read by the section reader."""
    rnd = random.Random(f"section{mode}{legacy}")
    sections = errors = 0
    for _ in range(30):
        specs = random_table(rnd)
        table = table_map(specs)
        encoder, plan = RowPlan(table, DecodeOptions()), RowPlan(table, OPTIONS[mode])
        bitmap, width, _ = random_image(rnd, specs, encoder, legacy)
        keys = [specs[i][0] for i in range(width) if bitmap[i >> 3] >> (i & 7) & 1]
        out = bytearray()
        for _ in range(rnd.randint(1, 6)):
            row = {
                key: None
                if rnd.random() < 0.1
                else rnd.choice(next(s[6] for s in specs if s[0] == key))
                for key in keys
            }
            encoder.image(bitmap, width, legacy).encode(row, out)
        image = plan.image(bitmap, width, legacy)
        for buf in (bytes(out), damaged(rnd, bytes(out))):
            for after in (False, True):
                result = section_outcome(image, buf, after, generated=True)
                assert result == section_outcome(image, buf, after, generated=False)
                sections += result[0] == "rows"
                errors += result[0] == "error"
    assert sections > 50 and errors > 10  # both kinds of outcome were exercised
