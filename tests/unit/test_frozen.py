"""The fast constructor of frozen dataclasses builds the same objects as their own __init__."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pytest

from binlogkit.binlog.context import DecodeOptions, FormatContext
from binlogkit.binlog.events.rows import UpdateRowsEvent, WriteRowsEvent
from binlogkit.binlog.framing import Frame
from binlogkit.binlog.frozen import fast_constructor
from binlogkit.binlog.header import EventHeader

HEADER = (1700000000, 30, 1, 50, 1234, 0, b"", 4, "f")


def test_header_equals_one_built_by_init() -> None:
    fast = fast_constructor(EventHeader)(*HEADER)
    slow = EventHeader(*HEADER)
    assert type(fast) is EventHeader
    assert fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.timestamp = 0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del fast.flags


def test_same_arguments_and_defaults_as_init() -> None:
    build = fast_constructor(EventHeader)
    assert build(1, 2, 3, 4) == EventHeader(1, 2, 3, 4)
    assert build(1, 2, 3, 4).offset == -1 and build(1, 2, 3, 4).file is None
    assert build(1, 2, 3, 4, flags=8, file="x") == EventHeader(1, 2, 3, 4, flags=8, file="x")
    with pytest.raises(TypeError):
        build(1, 2, 3)
    header = EventHeader(*HEADER)
    args = (header, 7, 1, None, 3, None, b"\x07", b"")
    event = fast_constructor(WriteRowsEvent)(*args)  # table and options take their defaults
    assert event == WriteRowsEvent(*args) and event.options == DecodeOptions()


def test_fields_outside_init_get_their_defaults() -> None:
    header = EventHeader(*HEADER)
    args = (header, 7, 1, None, 3, None, b"\x07", b"\x00\x01", None, DecodeOptions())
    fast = fast_constructor(WriteRowsEvent)(*args)
    assert fast == WriteRowsEvent(*args)
    assert fast._rows is None and fast._rows_data is None


def test_init_false_factories_give_a_fresh_default_per_object() -> None:
    @dataclass(frozen=True, slots=True)
    class Counted:
        name: str
        seen: list[int] = field(default_factory=list, init=False, compare=False)

    one, two = fast_constructor(Counted)("a"), fast_constructor(Counted)("a")
    assert one == two and one.seen == [] and one.seen is not two.seen


def test_a_constructor_per_class_even_without_own_slots() -> None:
    header = EventHeader(*HEADER)
    args = (header, 7, 1, None, 3, b"\x07", b"\x07", b"", None, DecodeOptions())
    assert type(fast_constructor(UpdateRowsEvent)(*args)) is UpdateRowsEvent
    assert type(fast_constructor(WriteRowsEvent)(*args)) is WriteRowsEvent
    frame = fast_constructor(Frame)(header, b"\0" * 50, FormatContext(), 4, None)
    assert frame == Frame(header, b"\0" * 50, FormatContext(), 4)


def test_refuses_what_it_cannot_build() -> None:
    @dataclass(frozen=True)
    class WithDict:
        a: int

    @dataclass(frozen=True, slots=True)
    class WithPostInit:
        a: int
        b: int = field(init=False, default=0)

        def __post_init__(self) -> None:
            object.__setattr__(self, "b", self.a)

    with pytest.raises(TypeError, match="slotted"):
        fast_constructor(WithDict)
    with pytest.raises(TypeError, match="__post_init__"):
        fast_constructor(WithPostInit)
