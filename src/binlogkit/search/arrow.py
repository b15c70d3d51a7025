"""Arrow arrays of Python values built from their buffers, and numpy views of Arrow arrays.

``pa.array``, ``pa.scalar`` and ``to_numpy`` import pandas on their first call (to check
whether a value is a pandas object), which takes longer than a whole query; a
``binlogkit search`` process converts the few arrays it needs here instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

__all__ = ["flags", "integers", "numbers", "string", "strings", "truths"]

_DTYPES = {pa.int32(): np.int32, pa.int64(): np.int64, pa.float64(): np.float64}


def strings(values: Sequence[str]) -> Any:
    """A ``string`` array of ``values``."""
    data = [value.encode("utf-8") for value in values]
    offsets = np.zeros(len(data) + 1, dtype=np.int32)
    np.cumsum([len(d) for d in data], out=offsets[1:])
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))]
    return pa.Array.from_buffers(pa.string(), len(data), buffers)


def string(value: str) -> Any:
    """A ``string`` scalar."""
    return strings([value])[0]


def integers(values: Any) -> Any:
    """An ``int64`` array of a numpy array's values."""
    array = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(array), [None, pa.py_buffer(array)])


def flags(values: Any) -> Any:
    """A ``bool`` array of a numpy array of booleans."""
    bits = np.packbits(np.asarray(values, dtype=bool), bitorder="little")
    return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)])


def numbers(array: Any, *, nulls: bool = False) -> Any:
    """A numpy view of an ``int32``, ``int64`` or ``float64`` array without nulls (a chunked
    array combined first); ``nulls``: with nulls, whose values are then undefined."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    dtype = np.dtype(_DTYPES[array.type])
    if len(array) == 0:
        return np.empty(0, dtype)
    if array.null_count and not nulls:
        raise ValueError(f"{array.null_count} nulls in an array of numbers")
    values = np.frombuffer(array.buffers()[1], dtype=dtype)
    return values[array.offset : array.offset + len(array)]


def truths(array: Any) -> Any:
    """A numpy array of booleans of a ``bool`` array without nulls (a chunked array combined
    first)."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if len(array) == 0:
        return np.empty(0, dtype=bool)
    if array.null_count:
        raise ValueError(f"{array.null_count} nulls in an array of booleans")
    bits = np.frombuffer(array.buffers()[1], dtype=np.uint8)
    unpacked = np.unpackbits(bits, count=array.offset + len(array), bitorder="little")
    return unpacked[array.offset :].astype(bool)
