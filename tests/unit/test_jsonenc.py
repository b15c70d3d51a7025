"""The lossless JSON encoding: round trips of every value type, and the documented rules."""

from __future__ import annotations

import json
import math
from datetime import UTC, date, datetime, time, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import binlogkit
from binlogkit import jsonenc
from binlogkit.binlog.jsonb import EMPTY_JSON, JsonOpaque, JsonUInt
from binlogkit.binlog.rows.json_diff import JsonDiff, JsonDiffOperation
from binlogkit.binlog.rows.types.values import (
    JSON_NULL,
    Compressed,
    Geometry,
    InvalidDate,
    InvalidDateTime,
)
from binlogkit.pipeline.changes import row_changes


def _refused_by_date(y: int, m: int, d: int) -> bool:
    try:
        date(y, m, d)
    except ValueError:
        return True
    return False


invalid_dates = st.tuples(st.integers(0, 9999), st.integers(0, 12), st.integers(0, 31)).filter(
    lambda ymd: _refused_by_date(*ymd)
)

offsets = st.integers(min_value=-23 * 60 - 59, max_value=23 * 60 + 59).map(
    lambda minutes: timezone(timedelta(minutes=minutes))
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(st.characters(blacklist_categories=())),  # lone surrogates included
    st.binary(),
    st.decimals(allow_nan=False),
    st.dates(),
    st.datetimes(timezones=st.none() | offsets),
    st.times(timezones=st.none() | offsets),
    st.timedeltas(),
    st.frozensets(st.text(max_size=8)),
    st.frozensets(st.binary(max_size=4)),
    invalid_dates.map(lambda ymd: InvalidDate(*ymd)),
    st.builds(
        lambda ymd, h, mi, s, us: InvalidDateTime(*ymd, h, mi, s, us),
        invalid_dates,
        st.integers(0, 23),
        st.integers(0, 59),
        st.integers(0, 59),
        st.integers(0, 999999),
    ),
    st.integers(0, 2**64 - 1).map(JsonUInt),
    st.just(EMPTY_JSON),
    st.just(JSON_NULL),
    st.builds(JsonOpaque, st.integers(0, 255), st.binary()),
    st.builds(Geometry, st.integers(0, 2**32 - 1), st.binary()),
    st.builds(Compressed, st.text() | st.binary(), st.binary()),
    st.builds(JsonDiff, st.just(JsonDiffOperation.REMOVE), st.just("$.a")),
    st.builds(
        JsonDiff,
        st.sampled_from([JsonDiffOperation.REPLACE, JsonDiffOperation.INSERT]),
        st.sampled_from(["$", '$."a b"[last-1]', "$[2].x"]),
        st.none() | st.integers() | st.text(),
    ),
)

values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(
            st.text(max_size=6) | st.sampled_from(["$binary", "$object", "$x"]), inner, max_size=4
        )
    ),
    max_leaves=20,
)


def same(a: Any, b: Any) -> bool:
    """Equal values of the same type, telling apart what == does not (NaN, -0.0, scale)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        if math.isnan(a):
            return math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, Decimal):
        return a.as_tuple() == b.as_tuple()
    if isinstance(a, datetime | time):
        return a == b and a.utcoffset() == b.utcoffset()
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


@given(values)
def test_round_trip_through_text(value: Any) -> None:
    text = jsonenc.dumps(value)
    assert same(jsonenc.loads(text), value)


@given(values)
def test_output_is_strict_json_and_valid_utf8(value: Any) -> None:
    text = jsonenc.dumps(value)
    text.encode("utf-8")  # no lone surrogates left in the text
    json.loads(text, parse_constant=lambda name: pytest.fail(f"non-standard {name}"))


@given(st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1))
def test_safe_integers_are_plain_numbers(n: int) -> None:
    assert jsonenc.dumps(n) == str(n)


@pytest.mark.parametrize("n", [2**53, -(2**53), 2**64 - 1, -(2**63)])
def test_unsafe_integers_are_strings(n: int) -> None:
    # Beyond 2**53 - 1 an IEEE double cannot hold every integer (RFC 7493 §2.2).
    assert json.loads(jsonenc.dumps(n)) == {"$int": str(n)}


def test_base64_follows_rfc4648() -> None:
    # RFC 4648 §10 test vectors.
    vectors = {b"": "", b"f": "Zg==", b"fo": "Zm8=", b"foo": "Zm9v", b"foobar": "Zm9vYmFy"}
    for raw, b64 in vectors.items():
        assert json.loads(jsonenc.dumps(raw)) == {"$binary": b64}


def test_decimal_keeps_scale_and_sign() -> None:
    assert json.loads(jsonenc.dumps(Decimal("-0.00"))) == {"$decimal": "-0.00"}
    assert jsonenc.loads(jsonenc.dumps(Decimal("9.90"))).as_tuple() == Decimal("9.90").as_tuple()


def test_decimal_digits_are_fixed_point_as_the_server_shows_them() -> None:
    """DECIMAL(65,30) values as ``CAST(d AS CHAR)`` shows them (MariaDB 10.11), not as
    ``str(Decimal)`` does; exact: they decode to the same digits and exponent."""
    shown = {
        "0E-30": "0." + "0" * 30,
        "1E-30": "0." + "0" * 29 + "1",
        "-1.00000000000000000000000E-7": "-0.0000001" + "0" * 23,
        "-0E-2": "-0.00",
        "12345": "12345",
        "1E+3": "1E+3",  # no DECIMAL holds it so (a scale below 0): as str writes it
        "1E-70": "1E-70",
    }
    for digits, text in shown.items():
        value = Decimal(digits)
        assert json.loads(jsonenc.dumps(value)) == {"$decimal": text}, digits
        assert jsonenc.loads(jsonenc.dumps(value)).as_tuple() == value.as_tuple(), digits


def test_mysql_time_range_as_duration() -> None:
    longest = -timedelta(hours=838, minutes=59, seconds=59)
    assert json.loads(jsonenc.dumps(longest)) == {"$duration": "-838:59:59"}
    half = timedelta(hours=-12, minutes=-30, microseconds=-500000)
    assert json.loads(jsonenc.dumps(half)) == {"$duration": "-12:30:00.500000"}


def test_dates_and_datetimes_are_iso8601() -> None:
    assert json.loads(jsonenc.dumps(date(1000, 1, 1))) == {"$date": "1000-01-01"}
    stamp = datetime(2038, 1, 19, 3, 14, 7, 999999, tzinfo=UTC)
    assert json.loads(jsonenc.dumps(stamp)) == {"$datetime": "2038-01-19T03:14:07.999999+00:00"}


def test_zero_dates_keep_their_fields() -> None:
    assert json.loads(jsonenc.dumps(InvalidDate(0, 0, 0))) == {"$date": "0000-00-00"}
    value = InvalidDateTime(2020, 2, 30, 1, 2, 3, 400000)
    assert json.loads(jsonenc.dumps(value)) == {"$datetime": "2020-02-30T01:02:03.400000"}
    assert jsonenc.loads(jsonenc.dumps(value)) == value


def test_set_members_are_sorted() -> None:
    assert json.loads(jsonenc.dumps(frozenset({"red", "blue", "Green"}))) == {
        "$set": ["Green", "blue", "red"]
    }


def test_non_finite_floats_are_tagged() -> None:
    assert json.loads(jsonenc.dumps([math.inf, -math.inf])) == [
        {"$float": "Infinity"},
        {"$float": "-Infinity"},
    ]
    assert math.isnan(jsonenc.loads('{"$float":"NaN"}'))


def test_tag_lookalike_objects_are_wrapped() -> None:
    doc = {"$binary": "not base64 at all"}
    assert json.loads(jsonenc.dumps(doc)) == {"$object": doc}
    assert jsonenc.loads(jsonenc.dumps(doc)) == doc
    schema = {"$schema": "x", "type": "object"}  # two keys: never a tag, left alone
    assert json.loads(jsonenc.dumps(schema)) == schema


@pytest.mark.parametrize(
    "text",
    ['{"$nope": 1}', '{"$int": 5}', '{"$float": "nan"}', '{"$duration": "1:2:3"}', '{"$set": 1}'],
)
def test_malformed_tags_are_errors(text: str) -> None:
    with pytest.raises(ValueError):
        jsonenc.loads(text)


def test_values_without_an_encoding_are_refused() -> None:
    with pytest.raises(TypeError):
        jsonenc.dumps(object())
    with pytest.raises(TypeError):
        jsonenc.dumps({1: "non-str key"})


REAL_ROWS = [
    "local-mariadb-10.11/compressed/mysql-bin.000002",  # every MariaDB column type
    "local-mariadb-10.11/mariadb-defaults/mysql-bin.000002",
    "blackbeam+rust_mysql_common/test-data/binlogs/json.binlog.000001",  # JSON, partial updates
    "avaitla+mysqlbinlog2parquet/test/samples/03-mixed-types.binlog",
]


@pytest.mark.parametrize("name", REAL_ROWS)
def test_real_row_changes_round_trip(corpus_dir: Path, name: str) -> None:
    with binlogkit.open(corpus_dir / name) as reader:
        changes = [change.to_dict() for change in row_changes(reader)]
    assert changes
    for change in changes:
        assert same(jsonenc.loads(jsonenc.dumps(change)), change)
