"""Partial JSON updates: the diff format, MySQL paths, and applying diffs to documents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_jsonb import json_values, mysql_key_order, row_values, same

from binlogkit.binlog.jsonb import JsonUInt, decode_jsonb, encode_jsonb
from binlogkit.binlog.rows.json_diff import (
    ArrayIndex,
    JsonDiff,
    JsonDiffOperation,
    Member,
    apply_json_diffs,
    decode_json_diffs,
    encode_json_diffs,
    format_json_path,
    parse_json_path,
    read_json_diff_vector,
    write_json_diff_vector,
)
from binlogkit.errors import DecodeError

REPLACE, INSERT, REMOVE = JsonDiffOperation

# --- the binary form ----------------------------------------------------------


def test_known_bytes() -> None:
    # operation, length-encoded path, length-encoded binary JSON value (none for REMOVE)
    data = (
        b"\x00\x05$.age\x03\x05\x1a\x00"
        + b"\x01\x03$.b\x03\x0c\x01x"
        + b"\x02\x04$[0]"
        + b"\x01\x0b$.a[last-1]\x02\x04\x00"
    )
    diffs = (
        JsonDiff(REPLACE, "$.age", 26),
        JsonDiff(INSERT, "$.b", "x"),
        JsonDiff(REMOVE, "$[0]"),
        JsonDiff(INSERT, "$.a[last-1]", None),
    )
    decoded = decode_json_diffs(data)
    assert decoded == diffs
    assert [d.legs for d in decoded] == [
        (Member("age"),),
        (Member("b"),),
        (ArrayIndex(0),),
        (Member("a"), ArrayIndex(1, from_end=True)),
    ]
    assert encode_json_diffs(diffs) == data


def test_long_path_and_value_lengths() -> None:
    path = "$." + "k" * 300
    value = "v" * 70000
    data = encode_json_diffs([JsonDiff(REPLACE, path, value)])
    assert data[:4] == b"\x00\xfc" + (302).to_bytes(2, "little")
    value_bytes = encode_jsonb(value)
    assert data[4 + 302 :] == b"\xfd" + len(value_bytes).to_bytes(3, "little") + value_bytes
    assert decode_json_diffs(data)[0].value == value


def test_vector_with_length() -> None:
    diffs = (JsonDiff(REMOVE, "$.x"),)
    out = bytearray(b"pre")
    write_json_diff_vector(diffs, out)
    assert bytes(out) == b"pre" + b"\x05\x00\x00\x00" + b"\x02\x03$.x"
    assert read_json_diff_vector(bytes(out) + b"next", 3) == (diffs, 12)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x03\x01$", "unknown JSON diff operation 3"),
        (b"\x00\x05$.a", "JSON diff path needs 5 bytes"),
        (b"\x00\x03$.a", "JSON diff value"),
        (b"\x00\x03$.a\x00", "empty JSON diff value"),
        (b"\x00\x03$.a\x02\x04", "JSON diff value needs 2 bytes"),
        (b"\x02\xfc\x03\x00$.a", "written in 3 bytes"),
        (b"\x02\x02$*", "unexpected"),
        (b"\x02\x02\xff\xfe", "not UTF-8"),
        (b"\x00\x03$.a\x02\x04\x07", "unknown literal"),
    ],
)
def test_bad_bytes(data: bytes, message: str) -> None:
    with pytest.raises(DecodeError, match=message):
        decode_json_diffs(data)


def test_remove_has_no_value() -> None:
    with pytest.raises(ValueError):
        JsonDiff(REMOVE, "$.a", 1)


# --- paths --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "legs"),
    [
        ("$", ()),
        ("$.a.b", (Member("a"), Member("b"))),
        ('$."a b"[2]', (Member("a b"), ArrayIndex(2))),
        ('$.""', (Member(""),)),
        ("$[last]", (ArrayIndex(0, from_end=True),)),
        ("$[last-3]", (ArrayIndex(3, from_end=True),)),
        (" $ [ last - 3 ] . x ", (ArrayIndex(3, from_end=True), Member("x"))),
        ('$."quo\\"te"', (Member('quo"te'),)),
        ('$."\\u00e9"', (Member("é"),)),
        ("$.caf\\u00e9", (Member("café"),)),
        ("$.é", (Member("é"),)),
        ("$[4294967295]", (ArrayIndex(2**32 - 1),)),
    ],
)
def test_parse_path(text: str, legs: tuple[Any, ...]) -> None:
    assert parse_json_path(text) == legs


@pytest.mark.parametrize(
    "text", ["", "a", "$.", "$.*", "$[*]", "$**.a", "$[1 to 2]", "$[", "$[x]", "$[1", '$."a', "$a"]
)
def test_bad_paths(text: str) -> None:
    with pytest.raises(DecodeError):
        parse_json_path(text)


def test_format_path() -> None:
    legs = (Member("a"), Member("b c"), Member('q"\n'), ArrayIndex(0), ArrayIndex(2, True))
    assert format_json_path(legs) == '$.a."b c"."q\\"\\n"[0][last-2]'
    assert format_json_path([ArrayIndex(0, from_end=True)]) == "$[last]"


path_legs = st.lists(
    st.builds(Member, st.text()) | st.builds(ArrayIndex, st.integers(0, 2**32 - 1), st.booleans()),
    max_size=5,
)


@given(path_legs)
def test_path_round_trip(legs: list[Any]) -> None:
    assert parse_json_path(format_json_path(legs)) == tuple(legs)


diff_values = st.builds(
    JsonDiff,
    st.sampled_from([REPLACE, INSERT]),
    path_legs.map(format_json_path),
    json_values,
) | st.builds(JsonDiff, st.just(REMOVE), path_legs.map(format_json_path))


@settings(max_examples=50)
@given(st.lists(diff_values, max_size=4))
def test_diffs_round_trip(diffs: list[JsonDiff]) -> None:
    data = encode_json_diffs(diffs)
    decoded = decode_json_diffs(data)
    assert [(d.operation, d.path) for d in decoded] == [(d.operation, d.path) for d in diffs]
    assert [d.value for d in decoded] == [d.value for d in diffs]
    assert encode_json_diffs(decoded) == data


@given(st.binary(max_size=64))
def test_random_bytes_raise_decode_error_only(data: bytes) -> None:
    try:
        diffs = decode_json_diffs(data)
    except DecodeError:
        return
    again = decode_json_diffs(encode_json_diffs(diffs))
    assert [(d.operation, d.path) for d in again] == [(d.operation, d.path) for d in diffs]


# --- applying: MySQL's rules (sql/json_diff.cc apply_json_diffs) ---------------

DOC = {"a": 1, "b": {"c": [10, 20, 30]}, "d": "x"}


def apply(doc: Any, operation: JsonDiffOperation, path: str, value: Any = None) -> Any:
    return apply_json_diffs(doc, [JsonDiff(operation, path, value)])


@pytest.mark.parametrize(
    ("operation", "path", "value", "expected"),
    [
        (REPLACE, "$.a", 2, {"a": 2, "b": {"c": [10, 20, 30]}, "d": "x"}),
        (REPLACE, "$.b.c[1]", "y", {"a": 1, "b": {"c": [10, "y", 30]}, "d": "x"}),
        (REPLACE, "$.b.c[last]", 0, {"a": 1, "b": {"c": [10, 20, 0]}, "d": "x"}),
        (REPLACE, "$.b", [], {"a": 1, "b": [], "d": "x"}),
        (INSERT, "$.e", True, {"a": 1, "b": {"c": [10, 20, 30]}, "d": "x", "e": True}),
        (INSERT, "$.b.c[0]", 5, {"a": 1, "b": {"c": [5, 10, 20, 30]}, "d": "x"}),
        (INSERT, "$.b.c[99]", 5, {"a": 1, "b": {"c": [10, 20, 30, 5]}, "d": "x"}),
        (INSERT, "$.b.c[last]", 5, {"a": 1, "b": {"c": [10, 20, 5, 30]}, "d": "x"}),
        (INSERT, "$.b.c[last-9]", 5, {"a": 1, "b": {"c": [5, 10, 20, 30]}, "d": "x"}),
        (REMOVE, "$.d", None, {"a": 1, "b": {"c": [10, 20, 30]}}),
        (REMOVE, "$.b.c[0]", None, {"a": 1, "b": {"c": [20, 30]}, "d": "x"}),
        (REMOVE, "$.b.c[last-1]", None, {"a": 1, "b": {"c": [10, 30]}, "d": "x"}),
    ],
)
def test_apply(operation: JsonDiffOperation, path: str, value: Any, expected: Any) -> None:
    before = decode_jsonb(encode_jsonb(DOC))
    after = apply(before, operation, path, value)
    assert same(after, {k: expected[k] for k in mysql_key_order(expected)})
    assert before == DOC  # the input is left alone


@pytest.mark.parametrize(
    ("operation", "path"),
    [
        (REPLACE, "$"),  # the root cannot be a diff target
        (REPLACE, "$.zz"),  # REPLACE needs the path to exist
        (REPLACE, "$.b.c[3]"),
        (REPLACE, "$.a.x"),  # no path through a scalar
        (REPLACE, "$[0]"),  # no auto-wrapping of the object into an array
        (REPLACE, "$.b[0]"),
        (INSERT, "$.a"),  # INSERT of an existing member
        (INSERT, "$.zz.y"),  # the parent must exist
        (INSERT, "$.b.c.x"),  # a member leg on an array
        (REMOVE, "$.zz"),
        (REMOVE, "$.b.c[3]"),
        (REMOVE, "$.b.c.x"),
        (REMOVE, "$.a[0]"),
    ],
)
def test_apply_rejected(operation: JsonDiffOperation, path: str) -> None:
    with pytest.raises(DecodeError):
        apply(DOC, operation, path, None if operation == REMOVE else 0)


def test_apply_in_order_and_shares_untouched_parts() -> None:
    doc = decode_jsonb(encode_jsonb({"big": {"x": list(range(5))}, "n": [1]}))
    diffs = [
        JsonDiff(INSERT, "$.n[1]", 2),
        JsonDiff(REPLACE, "$.n[1]", JsonUInt(3)),
        JsonDiff(INSERT, "$.a", {"z": 1}),
        JsonDiff(REMOVE, "$.a.z"),
    ]
    after = apply_json_diffs(doc, diffs)
    assert same(after, {"a": {}, "n": [1, JsonUInt(3)], "big": {"x": [0, 1, 2, 3, 4]}})
    assert after["big"] is doc["big"]
    assert doc["n"] == [1]


def test_apply_to_scalar_or_empty_document() -> None:
    with pytest.raises(DecodeError):
        apply(decode_jsonb(b""), REPLACE, "$.a", 1)
    with pytest.raises(DecodeError):
        apply(5, REMOVE, "$[0]")


@given(
    st.dictionaries(st.text(max_size=4), st.integers() | st.text(max_size=3), min_size=1),
    st.data(),
)
def test_apply_member_properties(doc: dict[str, Any], data: st.DataObject) -> None:
    key = data.draw(st.sampled_from(sorted(doc)))
    path = format_json_path([Member(key)])
    replaced = apply(doc, REPLACE, path, "new")
    assert replaced == {**doc, key: "new"}
    removed = apply(doc, REMOVE, path)
    assert removed == {k: v for k, v in doc.items() if k != key}
    inserted = apply(removed, INSERT, path, "back")
    assert inserted == {**doc, key: "back"}
    assert list(inserted) == mysql_key_order(inserted)


# --- a real partial update ------------------------------------------------------


@pytest.mark.corpus
def test_partial_update_event(corpus_dir: Path) -> None:
    """json.binlog.000001: ``UPDATE ... SET j = JSON_SET(j, '$.age', age)`` for 6 rows."""
    path = corpus_dir / "blackbeam+rust_mysql_common/test-data/binlogs/json.binlog.000001"
    values = list(row_values(path))
    partial = [v for v in values if v.type_code == 39]
    assert partial
    # Column 0 is the id, 1 the JSON document, 3 an INT age that the update also set.
    ids = {v.row: int.from_bytes(v.data, "little") for v in partial if v.column == 0}
    ages = {v.row: int.from_bytes(v.data, "little") for v in partial if v.column == 3}
    diff_bytes = {v.row: v.data for v in partial if v.partial}
    assert set(diff_bytes) == set(ids) == set(ages)
    assert len(ids) == 6
    # The before-images: the JSON documents of the full-image UPDATE just before.
    update = [v for v in values if v.type_code == 31 and v.image == 1]
    before_id = {v.row: int.from_bytes(v.data, "little") for v in update if v.column == 0}
    before_doc = {before_id[v.row]: decode_jsonb(v.data) for v in update if v.column == 1}
    for row, data in diff_bytes.items():
        diffs = decode_json_diffs(data)
        assert [(d.operation, d.path) for d in diffs] == [(REPLACE, "$.age")]
        assert diffs[0].value == ages[row]
        assert encode_json_diffs(diffs) == data
        before = before_doc[ids[row]]
        after = apply_json_diffs(before, diffs)
        assert after == {**before, "age": ages[row]}
        assert after["age"] == before["age"] + 1
