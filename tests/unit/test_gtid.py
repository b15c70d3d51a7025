"""GTID values and sets: known answers from the MySQL and MariaDB manuals and sources.

The examples come from the MySQL reference manual (GTID_SUBTRACT, GTID_SUBSET),
MySQL's serialization-library readme (variable-length integers), MySQL's GTID
unit tests (tagged text form) and the byte layout of Gtid_set::encode.
"""

from __future__ import annotations

import copy
import pickle
import struct
from uuid import UUID

import pytest
from hypothesis import given
from hypothesis import strategies as st

from binlogkit.gtid import (
    GNO_MAX,
    Gtid,
    GtidSet,
    MariaGtid,
    MariaGtidList,
    decode_varlen,
    decode_varlen_signed,
    encode_varlen,
    encode_varlen_signed,
    normalize_tag,
)

U1 = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
A = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
B = "bbbbbbbb-aaaa-aaaa-aaaa-aaaaaaaaaaaa"


# -- variable-length integers (libs/mysql/serialization/readme.md) -------------


def test_varlen_readme_examples() -> None:
    # The readme shows bytes big-endian; the stream is little-endian.
    assert encode_varlen(65535) == bytes([0b11111011, 0b11111111, 0b00000111])
    assert encode_varlen_signed(65535) == bytes([0b11110011, 0b11111111, 0b00001111])
    assert encode_varlen_signed(-65535) == bytes([0b11101011, 0b11111111, 0b00001111])
    assert encode_varlen_signed(-65536) == bytes([0b11111011, 0b11111111, 0b00001111])


@pytest.mark.parametrize(
    ("value", "size"),
    [(0, 1), (127, 1), (128, 2), (2**14 - 1, 2), (2**14, 3), (2**56 - 1, 8), (2**56, 9)],
)
def test_varlen_sizes(value: int, size: int) -> None:
    """1 + ceil((bits - 1) / 7) bytes up to 63 bits; 9 bytes with a 0xff marker beyond 56."""
    encoded = encode_varlen(value)
    assert len(encoded) == size
    assert decode_varlen(encoded) == (value, size)


def test_varlen_nine_bytes_is_marker_then_plain_integer() -> None:
    assert encode_varlen(2**64 - 1) == b"\xff" * 9
    assert encode_varlen(2**63) == b"\xff" + struct.pack("<Q", 2**63)


@given(st.integers(0, 2**64 - 1))
def test_varlen_round_trip(value: int) -> None:
    encoded = encode_varlen(value)
    assert decode_varlen(b"\x00" + encoded + b"\x01", 1) == (value, 1 + len(encoded))


@given(st.integers(-(2**63), 2**63 - 1))
def test_varlen_signed_round_trip(value: int) -> None:
    encoded = encode_varlen_signed(value)
    assert decode_varlen_signed(encoded) == (value, len(encoded))


def test_varlen_errors() -> None:
    with pytest.raises(ValueError):
        encode_varlen(-1)
    with pytest.raises(ValueError):
        encode_varlen(2**64)
    with pytest.raises(ValueError):
        decode_varlen(b"\x03\x00")  # announces 3 bytes, has 2
    with pytest.raises(ValueError):
        decode_varlen(b"")


# -- MySQL GTIDs ---------------------------------------------------------------


def test_gtid_text() -> None:
    gtid = Gtid.parse("3E11FA47-71CA-11E1-9E33-C80AA9429562:23")
    assert gtid == Gtid(UUID(U1), 23)
    assert str(gtid) == f"{U1}:23"
    tagged = Gtid.parse(f"{U1}:Tag_1:5")
    assert tagged.tag == "tag_1"
    assert str(tagged) == f"{U1}:tag_1:5"


@pytest.mark.parametrize(
    "text", [f"{U1}", f"{U1}:0", f"{U1}:x", "nope:1", f"{U1}:1tag:3", f"{U1}:{GNO_MAX + 1}"]
)
def test_gtid_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        Gtid.parse(text)


def test_tags() -> None:
    assert normalize_tag("  _Abc9 ") == "_abc9"
    assert normalize_tag("a" * 32) == "a" * 32
    for bad in ("", "9a", "a-b", "a" * 33, "é"):
        with pytest.raises(ValueError):
            normalize_tag(bad)


def test_gtid_subtract_manual_examples() -> None:
    """GTID_SUBTRACT examples of the MySQL manual."""
    base = GtidSet.parse(f"{U1.upper()}:21-57")
    assert str(base - GtidSet.parse(f"{U1}:21")) == f"{U1}:22-57"
    assert str(base - GtidSet.parse(f"{U1}:20-25")) == f"{U1}:26-57"
    assert str(base - GtidSet.parse(f"{U1}:23")) == f"{U1}:21-22:24-57"


def test_gtid_subset_manual_examples() -> None:
    """GTID_SUBSET examples of the MySQL manual."""
    superset = GtidSet.parse(f"{U1}:21-57")
    assert GtidSet.parse(f"{U1}:23") <= superset
    assert GtidSet.parse(f"{U1}:23-25") <= superset
    assert not GtidSet.parse(f"{U1}:20-25") <= superset


def test_tagged_text_like_mysql_unit_test() -> None:
    """MySQL's GtidsTest.AddInterval: a tsid with spaces around the tag, interval 3-6."""
    gtids = GtidSet.parse(f"{A}  :   tag:3-6")
    assert str(gtids) == f"{A}:tag:3-6"
    assert Gtid.parse(f"{A}:tag:2") not in gtids
    assert all(Gtid.parse(f"{A}:tag:{n}") in gtids for n in range(3, 7))
    assert Gtid.parse(f"{A}:tag:7") not in gtids
    assert Gtid.parse(f"{A}:4") not in gtids


def test_server_text_form() -> None:
    """UUIDs sorted, untagged intervals before tags, ",\\n" between UUIDs, ":" between intervals."""
    gtids = GtidSet.parse(f"{B}:1, {A}:TAG:1-3:5, {A}:7-9 ,{A}:10")
    assert str(gtids) == f"{A}:7-10:tag:1-3:5,\n{B}:1"
    assert gtids.to_string(",") == f"{A}:7-10:tag:1-3:5,{B}:1"
    assert GtidSet.parse(str(gtids)) == gtids
    assert str(GtidSet.parse("")) == ""
    assert gtids.count() == 4 + 3 + 1 + 1
    assert gtids.tsids() == ((UUID(A), ""), (UUID(A), "tag"), (UUID(B), ""))


@pytest.mark.parametrize("text", [f"{A}:5-3", f"{A}:1,,{B}:2", f"{A}:1-x", f"{A}:0", "zz:1"])
def test_set_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        GtidSet.parse(text)


def test_set_operations() -> None:
    left = GtidSet.parse(f"{A}:1-10:20,{B}:5")
    right = GtidSet.parse(f"{A}:5-25:t:1")
    assert str(left | right) == f"{A}:1-25:t:1,\n{B}:5"
    assert str(left & right) == f"{A}:5-10:20"
    assert str(left - right) == f"{A}:1-4,\n{B}:5"
    assert str(right - left) == f"{A}:11-19:21-25:t:1"
    assert left.add(Gtid.parse(f"{A}:11")) == GtidSet.parse(f"{A}:1-11:20,{B}:5")
    assert left.add(Gtid.parse(f"{A}:11")) != left
    assert not (left - left)
    assert GtidSet.of(Gtid.parse(f"{A}:3"), Gtid.parse(f"{A}:2")) == GtidSet.parse(f"{A}:2-3")


@given(
    st.lists(st.tuples(st.integers(1, 60), st.integers(0, 5)), max_size=8),
    st.lists(st.tuples(st.integers(1, 60), st.integers(0, 5)), max_size=8),
)
def test_set_operations_agree_with_python_sets(
    left: list[tuple[int, int]], right: list[tuple[int, int]]
) -> None:
    def build(spans: list[tuple[int, int]]) -> tuple[GtidSet, set[int]]:
        gnos = {n for first, width in spans for n in range(first, first + width + 1)}
        return GtidSet({(UUID(A), ""): [(f, f + w) for f, w in spans]}), gnos

    (ls, lg), (rs, rg) = build(left), build(right)

    def gnos(gtids: GtidSet) -> set[int]:
        return {n for _, _, first, last in gtids.intervals() for n in range(first, last + 1)}

    assert gnos(ls | rs) == lg | rg
    assert gnos(ls & rs) == lg & rg
    assert gnos(ls - rs) == lg - rg
    assert (ls <= rs) == (lg <= rg)
    assert (ls | rs).count() == len(lg | rg)


def test_immutable_and_picklable() -> None:
    gtids = GtidSet.parse(f"{A}:1:t:2")
    with pytest.raises(AttributeError):
        gtids._items = ()  # type: ignore[misc]
    assert hash(gtids) == hash(GtidSet.parse(f"{A}:t:2,{A}:1"))
    assert pickle.loads(pickle.dumps(gtids)) == gtids
    assert copy.deepcopy(gtids) == gtids
    lists = MariaGtidList.parse("0-1-2")
    assert pickle.loads(pickle.dumps(lists)) == lists


# -- binary form (Gtid_set::encode) ------------------------------------------


def _interval(first: int, end: int) -> bytes:
    return struct.pack("<qq", first, end)


def test_encode_untagged() -> None:
    """n_sids (8), then per UUID: 16 bytes, n_intervals (8), [start, end) pairs (8 + 8)."""
    gtids = GtidSet.parse(f"{B}:1-5:7,{A}:3")
    expected = (
        struct.pack("<Q", 2)
        + UUID(A).bytes
        + struct.pack("<Q", 1)
        + _interval(3, 4)
        + UUID(B).bytes
        + struct.pack("<Q", 2)
        + _interval(1, 6)
        + _interval(7, 8)
    )
    assert gtids.encode() == expected
    assert GtidSet.decode(expected) == gtids
    assert GtidSet().encode() == bytes(8)


def test_encode_tagged() -> None:
    """Tagged format: count word (1 << 56) | (n << 8) | 1; each UUID followed by its tag."""
    gtids = GtidSet.parse(f"{A}:1-13:mytag:1-2")
    expected = (
        bytes([0x01, 0x02, 0, 0, 0, 0, 0, 0x01])
        + UUID(A).bytes
        + b"\x00"
        + struct.pack("<Q", 1)
        + _interval(1, 14)
        + UUID(A).bytes
        + b"\x0a"
        + b"mytag"
        + struct.pack("<Q", 1)
        + _interval(1, 3)
    )
    assert gtids.encode() == expected
    assert GtidSet.decode_prefix(expected + b"rest") == (gtids, True, len(expected))
    untagged_in_tagged_format = GtidSet.parse(f"{A}:1").encode(tagged=True)
    assert GtidSet.decode_prefix(untagged_in_tagged_format)[1] is True
    with pytest.raises(ValueError):
        gtids.encode(tagged=False)


@pytest.mark.parametrize(
    "data",
    [
        b"\x01\x00",  # shorter than the count
        struct.pack("<Q", 1) + UUID(A).bytes,  # no interval count
        struct.pack("<Q", 1) + UUID(A).bytes + struct.pack("<Q", 1) + _interval(5, 5),
        struct.pack("<Q", 1)
        + UUID(A).bytes
        + struct.pack("<Q", 2)
        + _interval(1, 5)
        + _interval(5, 7),  # starts where the previous ended: not increasing
        bytes([0, 0, 0, 0, 0, 0, 0, 2]),  # unknown format
        struct.pack("<Q", 0) + b"x",  # trailing byte
    ],
)
def test_decode_rejects(data: bytes) -> None:
    with pytest.raises(ValueError):
        GtidSet.decode(data)


# -- MariaDB -------------------------------------------------------------------


def test_maria_gtid() -> None:
    gtid = MariaGtid.parse(" 0-1-100 ")
    assert gtid == MariaGtid(0, 1, 100)
    assert str(gtid) == "0-1-100"
    for bad in ("0-1", "a-1-2", "-1-2-3", "0-1-2-3", f"{2**32}-1-1"):
        with pytest.raises(ValueError):
            MariaGtid.parse(bad)


def test_maria_gtid_list() -> None:
    gtids = MariaGtidList.parse("0-1-100,\n1-2-5, 0-3-101")
    assert str(gtids) == "0-1-100,1-2-5,0-3-101"
    assert len(gtids) == 3
    assert MariaGtid(1, 2, 5) in gtids
    assert gtids.domains == (0, 1)
    assert gtids.get(0) == MariaGtid(0, 3, 101)
    assert gtids.get(7) is None
    assert str(gtids.position()) == "0-3-101,1-2-5"
    assert gtids.includes(MariaGtid(0, 9, 101))
    assert not gtids.includes(MariaGtid(0, 3, 102))
    assert not gtids.includes(MariaGtid(2, 1, 1))
    assert str(gtids.add(MariaGtid(0, 1, 102))) == "1-2-5,0-3-101,0-1-102"
    assert str(gtids.advance(MariaGtid(0, 4, 200))) == "0-4-200,1-2-5"
    assert str(MariaGtidList.parse("")) == ""
    with pytest.raises(ValueError):
        MariaGtidList.parse("0-1-1,0-1-2")
