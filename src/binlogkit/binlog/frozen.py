"""Fast construction of frozen, slotted dataclasses on the hot paths of decoding.

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
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["fast_constructor"]

T = TypeVar("T")


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
    namespace: dict[str, Any] = {"_fc_twin": twin, "_fc_cls": cls}
    source = _source(dataclasses.fields(cls), namespace)
    exec(compile(source, f"<fast constructor of {cls.__qualname__}>", "exec"), namespace)
    construct: Callable[..., Any] = namespace["construct"]
    construct.__doc__ = f"Build a {cls.__name__} (the arguments of its __init__)."
    return construct


def _source(fields: tuple[dataclasses.Field[Any], ...], namespace: dict[str, Any]) -> str:
    """The constructor's code: the parameters and defaults of the dataclass init, one store each."""
    missing = dataclasses.MISSING
    namespace["_fc_missing"] = missing
    params: list[str] = []
    stores: list[str] = []
    for f in fields:
        if f.name.startswith("_fc_") or f.kw_only is True:
            raise TypeError(f"field {f.name}: keyword-only or named like the constructor's locals")
        value = f.name
        if f.default_factory is not missing:
            namespace[f"_fc_factory_{f.name}"] = f.default_factory
            value = f"_fc_factory_{f.name}()"
            if f.init:
                params.append(f"{f.name}=_fc_missing")
                value = f"{value} if {f.name} is _fc_missing else {f.name}"
        elif f.default is not missing:
            namespace[f"_fc_default_{f.name}"] = f.default
            if f.init:
                params.append(f"{f.name}=_fc_default_{f.name}")
            else:
                value = f"_fc_default_{f.name}"
        elif f.init:
            params.append(f.name)
        else:
            continue  # no init, no default: left unset, as the dataclass init does
        stores.append(f"    _fc_obj.{f.name} = {value}")
    return "\n".join(
        [
            f"def construct({', '.join(params)}):",
            "    _fc_obj = _fc_twin()",
            *stores,
            "    _fc_obj.__class__ = _fc_cls",
            "    return _fc_obj",
        ]
    )
