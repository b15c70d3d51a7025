"""Frozen, slotted dataclasses: built quickly at import, constructed quickly on the hot paths.

:func:`frozen_dataclass` is ``@dataclass(frozen=True, slots=True)`` for the value
and event classes of the package. Python 3.11's dataclasses compiles each method
it writes on its own: ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` and the
two frozen guards, six ``exec`` calls per class, which for the ~80 classes a
command imports made most of the cost of importing the decoder.
:func:`frozen_dataclass` has dataclasses find the fields and make the slots,
compiles ``__init__`` alone (the same code dataclasses writes), and gives the
class the other methods as closures over its field names: a class is built
three times faster, and its objects behave the same.

The ``__init__`` of a frozen dataclass sets each field with ``object.__setattr__``,
several times the cost of a plain attribute store; for the headers, frames and
events built once per event that is a large part of the time to read a binlog.
:func:`fast_constructor` gives a constructor that fills an object of a twin
class (the same slots, no frozen guard) by plain stores and then gives it its
real class. The result is an ordinary instance of the frozen class: equal,
hashable and immutable like one built by its own ``__init__``.

Like ``dataclasses`` itself, the constructor is generated source: one
function per class, a store per field, no loop and no ``*args``.
"""

from __future__ import annotations

import dataclasses
import inspect
import operator
import reprlib
from collections.abc import Callable
from typing import Any, TypeVar, cast, dataclass_transform

__all__ = ["fast_constructor", "frozen_dataclass"]

T = TypeVar("T")


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def frozen_dataclass(cls: type[T]) -> type[T]:
    """``@dataclass(frozen=True, slots=True)``, built with one ``exec`` where dataclasses runs six
    (three below a frozen dataclass, where dataclasses makes the frozen guards).

    The class gets what dataclasses gives it: fields, slots, ``__match_args__``,
    the frozen parameters, the frozen guards, pickling of the slots, and an
    ``__init__``, ``__repr__``, ``__eq__`` and ``__hash__`` that behave the same
    (each unless the class defines its own; hashes are equal too).
    """
    own = dict(cls.__dict__)
    bases = [b.__dict__[_PARAMS].frozen for b in cls.__mro__[1:] if _PARAMS in b.__dict__]
    if not all(bases):
        raise TypeError(f"{cls.__name__}: cannot inherit frozen dataclass from a non-frozen one")
    # frozen=True has dataclasses compile the frozen guards: only a class below a frozen
    # dataclass (which dataclasses insists on) has it make them; the others get closures.
    made = dataclasses.dataclass(
        cls, frozen=bool(bases), slots=True, init=False, repr=False, eq=False
    )
    shaped = cast(Any, made)
    fields = dataclasses.fields(shaped)
    methods = _methods(made, fields)
    if not bases:
        for name in ("__setattr__", "__delattr__"):
            if name in own:
                raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
        setattr(made, _PARAMS, _FROZEN_PARAMS)  # what dataclasses reads of frozen classes
        methods |= _frozen_methods(made, fields)
    if "__init__" not in own:
        shaped.__init__ = _init(made, fields)
    # Like dataclasses, keep what the class defines (Python puts __hash__ = None beside __eq__).
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    for name, method in methods.items():
        if name not in own or (name == "__hash__" and not explicit_hash):
            method.__qualname__ = f"{made.__qualname__}.{name}"
            setattr(made, name, method)
    if not own.get("__doc__"):  # dataclasses' default, from the signature of the right __init__
        made.__doc__ = made.__name__ + _signature(made).replace(" -> None", "")
    return made


def _signature(cls: type[Any]) -> str:
    """``str(inspect.signature(cls))``; from ``__init__`` without ``self`` when the class makes
    its objects plainly (no ``__new__``, no metaclass): 25 times faster, at import."""
    if type(cls) is not type or any("__new__" in c.__dict__ for c in cls.__mro__[:-1]):
        return str(inspect.signature(cls))
    init = inspect.signature(cls.__init__)
    return str(init.replace(parameters=list(init.parameters.values())[1:]))


_PARAMS = "__dataclass_params__"
_FROZEN_PARAMS = getattr(
    dataclasses.dataclass(frozen=True, slots=True)(type("_T", (), {})), _PARAMS
)
"""The parameters dataclasses records for ``@dataclass(frozen=True, slots=True)``."""


def _methods(cls: type[Any], fields: tuple[dataclasses.Field[Any], ...]) -> dict[str, Any]:
    """``__repr__``, ``__eq__`` and ``__hash__`` as dataclasses writes them, as closures."""
    compared = _values([f.name for f in fields if f.compare])
    hashed = _values([f.name for f in fields if (f.compare if f.hash is None else f.hash)])
    shown = [f.name for f in fields if f.repr]

    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{self.__class__.__qualname__}({inner})"

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return compared(self) == compared(other)
        return NotImplemented

    def __hash__(self: Any) -> int:
        return hash(hashed(self))

    return {"__repr__": __repr__, "__eq__": __eq__, "__hash__": __hash__}


def _frozen_methods(cls: type[Any], fields: tuple[dataclasses.Field[Any], ...]) -> dict[str, Any]:
    """The frozen guards and the pickling of the slots, as dataclasses gives a frozen class."""
    names = frozenset(f.name for f in fields)

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    def __getstate__(self: Any) -> list[Any]:
        return [getattr(self, f.name) for f in dataclasses.fields(self)]

    def __setstate__(self: Any, state: list[Any]) -> None:
        for f, value in zip(dataclasses.fields(self), state, strict=False):
            object.__setattr__(self, f.name, value)

    return {
        "__setattr__": __setattr__,
        "__delattr__": __delattr__,
        "__getstate__": __getstate__,
        "__setstate__": __setstate__,
    }


def _values(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of an object's values of ``names`` (what dataclasses compares and hashes)."""
    if len(names) > 1:
        return operator.attrgetter(*names)  # gives a tuple of them
    if names:
        get = operator.attrgetter(names[0])
        return lambda obj: (get(obj),)
    return lambda obj: ()


def _init(cls: type[Any], fields: tuple[dataclasses.Field[Any], ...]) -> Callable[..., None]:
    """The ``__init__`` dataclasses writes for a frozen class (one store per field), compiled."""
    namespace: dict[str, Any] = {"__name__": cls.__module__, "_fd_setattr": object.__setattr__}
    params, values = _arguments(fields, namespace)
    lines = [f"    _fd_setattr(self, {name!r}, {value})" for name, value in values]
    if hasattr(cls, "__post_init__"):
        lines.append("    self.__post_init__()")
    source = "\n".join(
        [f"def __init__({', '.join(['self', *params])}):", *lines, "    pass"]
    )  # pass: no fields
    exec(compile(source, f"<frozen_dataclass {cls.__qualname__}>", "exec"), namespace)
    init: Callable[..., None] = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__annotations__ = {f.name: f.type for f in fields if f.init} | {"return": None}
    return init


def _arguments(
    fields: tuple[dataclasses.Field[Any], ...], namespace: dict[str, Any]
) -> tuple[list[str], list[tuple[str, str]]]:
    """The parameters of the dataclass ``__init__`` (with its defaults, put in ``namespace``),
    and the fields it sets, each with the expression of its value."""
    namespace["_fd_missing"] = _FACTORY
    params: list[str] = []
    values: list[tuple[str, str]] = []
    for f in fields:
        if f.name.startswith("_fd_") or f.name == "self" or f.kw_only is True:
            raise TypeError(f"field {f.name}: keyword-only, or named like the generated locals")
        value = f.name
        if f.default_factory is not dataclasses.MISSING:
            namespace[f"_fd_factory_{f.name}"] = f.default_factory
            value = f"_fd_factory_{f.name}()"
            if f.init:
                params.append(f"{f.name}=_fd_missing")
                value = f"{value} if {f.name} is _fd_missing else {f.name}"
        elif f.default is not dataclasses.MISSING:
            namespace[f"_fd_default_{f.name}"] = f.default
            if f.init:
                params.append(f"{f.name}=_fd_default_{f.name}")
            else:
                value = f"_fd_default_{f.name}"
        elif f.init:
            params.append(f.name)
        else:
            continue  # no init, no default: left unset, as the dataclass init does
        values.append((f.name, value))
    return params, values


class _Factory:
    """The default of an ``__init__`` argument whose field has a default factory."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY: Any = _Factory()


def fast_constructor(cls: type[T]) -> Callable[..., T]:
    """A fast ``cls(...)`` for a slotted frozen dataclass, made once per class and kept.

    It takes the arguments of the dataclass ``__init__``, with the same defaults.
    ``cls`` must have no ``__post_init__`` (the constructor does not call it)
    and no keyword-only fields.
    """
    construct = _CONSTRUCTORS.get(cls)
    if construct is None:
        construct = _CONSTRUCTORS[cls] = _make_constructor(cls)
    return construct


_CONSTRUCTORS: dict[type[Any], Callable[..., Any]] = {}
"""Class → its fast constructor: a cache filled on first use (decoders look it up per event)."""


def _make_constructor(cls: type[Any]) -> Callable[..., Any]:
    if not dataclasses.is_dataclass(cls) or cls.__dictoffset__:
        raise TypeError(f"{cls.__name__} is not a slotted dataclass")
    if cls.__new__ is not object.__new__:
        raise TypeError(f"{cls.__name__} has its own __new__, which a fast constructor skips")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has a __post_init__, which a fast constructor skips")
    # The class that last added slots fixes the layout; the twin adds the same slots to its base.
    owner = next(c for c in cls.__mro__ if c.__dict__.get("__slots__"))
    twin: type[Any] = type(
        f"_Mutable{cls.__name__}",
        owner.__bases__,
        {
            "__slots__": owner.__dict__["__slots__"],
            # Both, or the base's frozen guard keeps attribute stores on the slow path.
            "__setattr__": object.__setattr__,
            "__delattr__": object.__delattr__,
            # So that calling the twin makes a bare object (faster than object.__new__(twin)).
            "__init__": object.__init__,
        },
    )
    object.__new__(twin).__class__ = cls  # fails here, not per call, if the layouts differ
    namespace: dict[str, Any] = {"_fd_twin": twin, "_fd_cls": cls}
    source = _source(dataclasses.fields(cls), namespace)
    exec(compile(source, f"<fast constructor of {cls.__qualname__}>", "exec"), namespace)
    construct: Callable[..., Any] = namespace["construct"]
    construct.__doc__ = f"Build a {cls.__name__} (the arguments of its __init__)."
    return construct


def _source(fields: tuple[dataclasses.Field[Any], ...], namespace: dict[str, Any]) -> str:
    """The constructor's code: the parameters and defaults of the dataclass init, one store each."""
    params, values = _arguments(fields, namespace)
    return "\n".join(
        [
            f"def construct({', '.join(params)}):",
            "    _fd_obj = _fd_twin()",
            *(f"    _fd_obj.{name} = {value}" for name, value in values),
            "    _fd_obj.__class__ = _fd_cls",
            "    return _fd_obj",
        ]
    )
