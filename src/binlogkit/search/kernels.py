"""Arrow compute functions called by name, without importing ``pyarrow.compute``.

``import pyarrow.compute`` wraps and documents each of Arrow's ~290 kernels
(signatures, docstrings scraped from the options classes): a fifth of a
``binlogkit search`` process's imports. The query path calls a dozen of them;
``kernels.is_in(values, value_set=...)`` here is ``pyarrow.compute.is_in`` made on
first use from the kernel of that name in ``pyarrow._compute`` (a trailing ``_``
dropped: ``and_`` is ``and``): the arguments up to the kernel's arity are its
data, further positional and keyword arguments build its options class (as
``pyarrow.compute``'s wrappers do), ``options=`` passes one built already.

A table or chunked array they give has at least one chunk: ``combine_chunks`` of
none (a ``filter`` that keeps no row gives none) builds its array with
``pa.array``, which imports pandas.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
from pyarrow import _compute

__all__: list[str] = []


def __getattr__(name: str) -> Callable[..., Any]:
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        kernel = _compute.get_function(name.removesuffix("_"))
    except Exception:
        raise AttributeError(f"Arrow has no compute function {name!r}") from None
    function = globals()[name] = _caller(kernel)
    return function


def _caller(kernel: Any) -> Callable[..., Any]:
    """``kernel`` as ``pyarrow.compute`` offers it: data arguments, then its options."""
    arity = kernel.arity
    options_class = getattr(_compute, kernel._doc.options_class or "", None)

    def call(*args: Any, options: Any = None, memory_pool: Any = None, **kwargs: Any) -> Any:
        data, extra = (args, ()) if arity is Ellipsis else (args[:arity], args[arity:])
        if (extra or kwargs) and options is None:
            if options_class is None:
                raise TypeError(f"{kernel.name} takes {arity} arguments and no options")
            options = options_class(*extra, **kwargs)
        return _chunked(kernel.call(data, options, memory_pool))

    call.__name__ = call.__qualname__ = kernel.name
    return call


def _chunked(result: Any) -> Any:
    """``result`` with one empty chunk if it is a table or chunked array of none."""
    if isinstance(result, pa.ChunkedArray) and result.num_chunks == 0:
        return pa.chunked_array([pa.nulls(0, result.type)], result.type)
    if isinstance(result, pa.Table) and result.num_columns and not result.column(0).num_chunks:
        arrays = [pa.nulls(0, field.type) for field in result.schema]
        return pa.Table.from_batches([pa.RecordBatch.from_arrays(arrays, schema=result.schema)])
    return result
