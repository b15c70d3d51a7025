"""Frozen dataclasses: the fast constructor builds the same objects as their own __init__, and
frozen_dataclass builds the same classes as @dataclass(frozen=True, slots=True)."""

from __future__ import annotations

import copy
import dataclasses
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest

from binlogkit.binlog.context import DecodeOptions, FormatContext
from binlogkit.binlog.events.rows import UpdateRowsEvent, WriteRowsEvent
from binlogkit.binlog.framing import Frame
from binlogkit.binlog.frozen import fast_constructor, frozen_dataclass
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


# -- frozen_dataclass: the same classes as @dataclass(frozen=True, slots=True) ------------------


def declare(make: Callable[[type[Any]], type[Any]]) -> dict[str, type[Any]]:
    """The same class bodies, built with ``make``: every feature the package's classes use."""

    @make
    class Root:
        """A root."""

        kind: ClassVar[int] = 7
        a: int
        b: str = "b"
        c: list[int] = field(default_factory=list, hash=False)
        d: int = field(default=0, compare=False)
        e: bytes = field(default=b"", repr=False)
        f: int = field(default=1, hash=False)
        g: int = field(default=2, init=False)
        h: int = field(init=False, repr=False, compare=False)

        def __post_init__(self) -> None:
            object.__setattr__(self, "h", self.a * 2)

    @make
    class Child(Root):
        z: tuple[int, ...] = ()

    @make
    class OwnEq:
        a: int
        b: int = 0

        def __eq__(self, other: object) -> bool:
            return isinstance(other, OwnEq) and self.a == other.a

    @make
    class OwnHashAndRepr:
        a: int

        def __hash__(self) -> int:
            return 5

        def __repr__(self) -> str:
            return "mine"

    @make
    class Empty:
        pass

    return {c.__name__: c for c in (Root, Child, OwnEq, OwnHashAndRepr, Empty)}


STDLIB = declare(dataclass(frozen=True, slots=True))
OURS = declare(frozen_dataclass)


def shape(cls: type[Any]) -> tuple[object, ...]:
    """What dataclasses records of a class, and the parameters of its __init__."""
    params = [(p.name, p.kind, repr(p.default)) for p in inspect.signature(cls).parameters.values()]
    fields = [(f.name, f.init, f.repr, f.compare, f.hash) for f in dataclasses.fields(cls)]
    frozen = cls.__dataclass_params__.frozen
    return (params, fields, cls.__match_args__, cls.__slots__, frozen, cls.__doc__)


@pytest.mark.parametrize("name", sorted(OURS))
def test_frozen_dataclass_gives_the_classes_dataclasses_gives(name: str) -> None:
    ours, std = OURS[name], STDLIB[name]
    assert shape(ours) == shape(std)
    assert not hasattr(ours(*([1] if shape(ours)[0] else [])), "__dict__")


def test_frozen_dataclass_objects_behave_alike() -> None:
    for cls in "Root", "Child":
        ours, std = OURS[cls](3, c=[1]), STDLIB[cls](3, c=[1])
        assert repr(ours) == repr(std) and hash(ours) == hash(std)
        assert (ours.g, ours.h) == (std.g, std.h) == (2, 6)
        assert ours == OURS[cls](3, c=[1], d=9) and ours != OURS[cls](3, c=[2])
        assert ours != std and OURS[cls](1).c is not OURS[cls](1).c
        assert dataclasses.asdict(ours) == dataclasses.asdict(std)
        assert dataclasses.replace(ours, a=4) == OURS[cls](4, c=[1])
        assert copy.deepcopy(ours) == ours and ours.__getstate__() == std.__getstate__()
        for change in (lambda o: setattr(o, "a", 1), lambda o: delattr(o, "b")):
            with pytest.raises(dataclasses.FrozenInstanceError) as mine:
                change(ours)
            with pytest.raises(dataclasses.FrozenInstanceError) as theirs:
                change(std)
            assert str(mine.value) == str(theirs.value)
    assert OURS["Root"](1) != OURS["Child"](1)
    assert hash(OURS["OwnEq"](1, 2)) == hash(STDLIB["OwnEq"](1, 2))
    assert OURS["OwnEq"](1, 2) == OURS["OwnEq"](1, 3)
    assert (hash(OURS["OwnHashAndRepr"](1)), repr(OURS["OwnHashAndRepr"](1))) == (5, "mine")
    assert OURS["Empty"]() == OURS["Empty"]() and repr(OURS["Empty"]()).endswith("Empty()")


def test_frozen_dataclass_mixes_with_dataclasses() -> None:
    @dataclass(frozen=True, slots=True)
    class Below(OURS["Root"]):  # type: ignore[misc, valid-type]
        y: int = 0

    @frozen_dataclass
    class OnStdlib(STDLIB["Root"]):  # type: ignore[misc, valid-type]
        y: int = 0

    assert Below(1, y=2).y == 2 and OnStdlib(1, y=2) == OnStdlib(1, y=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        OnStdlib(1).y = 3
    with pytest.raises(TypeError, match="non-frozen"):

        @dataclass
        class Mutable(OURS["Root"]):  # type: ignore[misc, valid-type]
            pass
