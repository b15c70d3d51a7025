"""Generated straight-line row image encoders, the mirror of the generated readers.

:func:`image_writer` builds, for one image plan, a function that writes the
image of a row whose columns are all non-NULL in one pass: every value is
first turned into its field or bytes (the columns' :class:`ValuePacking`),
then the NULL bitmap (a constant: no bit set, or only the unused ones), each
run of fixed-width fields and the length prefix of the value after it go out
as one ``struct`` pack, and each length-prefixed value's bytes after it.
Columns without a packing are written by calling their encoder. Any other row
(one with a NULL, a missing or extra column, a value a conversion refuses or
that does not fit) is handed whole to the plain encoder after what was
written is taken back, so the bytes, or the error, are always the plain
encoder's. As in :mod:`~binlogkit.binlog.rows.codegen`, the source text holds
only names, sizes and struct codes; keys, structs and converters reach the
function as arguments of its factory.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from binlogkit.binlog.rows.codegen import run_generated
from binlogkit.binlog.rows.columns import ValueEncoder, ValuePacking

__all__ = ["ImageWriter", "image_writer"]

ImageWriter = Callable[[Mapping[str, Any], bytearray, bool], None]
"""``fn(row, out, pad)``: append the image of ``row``; ``pad`` sets the bitmap's unused bits."""

_PREFIX_FIELDS = {
    1: ("B", "{n}"),
    2: ("H", "{n}"),
    3: ("HB", "{n} & 65535, {n} >> 16"),
    4: ("I", "{n}"),
}
"""A length prefix of 1-4 bytes as struct codes, and the fields' expressions of the length."""


def image_writer(
    keys: Sequence[str],
    packings: Sequence[ValuePacking | None],
    encoders: Sequence[ValueEncoder],
    null_bytes: int,
    pad_mask: int,
    plain: ImageWriter,
) -> ImageWriter:
    """A writer of the images of one image plan, equal to ``plain`` on every input.

    ``keys``, ``packings`` and ``encoders`` are those of the image's columns in
    order (a None packing: the value is written by calling its encoder);
    ``null_bytes`` is the size of the NULL bitmap and ``pad_mask`` its unused bits.
    """
    structs: list[Callable[..., bytes]] = []
    converts: list[Callable[[Any], Any]] = []
    calls: list[ValueEncoder] = []
    prepare: list[str] = []  # the values' fields and bytes, before anything is written
    limits: list[str] = []  # each length-prefixed value's length fits its prefix
    emit: list[str] = []  # the writing
    codes: list[str] = []  # the struct codes of the run being gathered
    fields: list[str] = []  # and the fields' expressions

    def flush_run() -> None:
        if codes:
            structs.append(struct.Struct("<" + "".join(codes)).pack)
            emit.append(f"out += S{len(structs) - 1}({', '.join(fields)})")
            codes.clear()
            fields.clear()

    for n, packing in enumerate(packings):
        value = f"v{n}"
        if packing is not None and packing.to_field is not None:
            converts.append(packing.to_field)
            prepare.append(f"f{n} = C{len(converts) - 1}({value})")
            value = f"f{n}"
        if packing is not None and packing.fmt:
            codes.append(packing.fmt)
            fields.append(value)
        elif packing is not None and packing.prefix in _PREFIX_FIELDS:
            code, length = _PREFIX_FIELDS[packing.prefix]
            prepare.append(f"n{n} = len({value})")
            limits.append(f"n{n} < {1 << 8 * packing.prefix}")
            codes.append(code)
            fields.append(length.format(n=f"n{n}"))
            flush_run()
            emit.append(f"out += {value}")
        else:
            flush_run()
            calls.append(encoders[n])
            emit.append(f"E{len(calls) - 1}(v{n}, out)")
    flush_run()

    count = len(keys)
    fetch = [f"v{n} = row[K{n}]" for n in range(count)]
    present = " and ".join(f"v{n} is not None" for n in range(count)) or "True"
    write = [f"if {' and '.join(limits)}:"] if limits else []
    indent = "    " if limits else ""
    write += [
        f"{indent}out += PADDED if pad else CLEAR",
        *(indent + line for line in emit),
        f"{indent}return",
    ]
    body = [
        f"if len(row) == {count}:",
        *("    " + line for line in fetch),
        f"    if {present}:",
        *("        " + line for line in prepare + write),
    ]
    lines = [
        "def _make(plain, keys, structs, converts, calls, CLEAR, PADDED):",
        "    " + _names("K", count, "keys"),
        "    " + _names("S", len(structs), "structs"),
        "    " + _names("C", len(converts), "converts"),
        "    " + _names("E", len(calls), "calls"),
        "    def write(row, out, pad):",
        "        start = len(out)",
        "        try:",
        *(" " * 12 + line for line in body),
        "        except Exception:",
        "            del out[start:]",
        "        plain(row, out, pad)",
        "    return write",
    ]
    writer: ImageWriter = run_generated(
        "\n".join(lines) + "\n",
        "row image writer",
        plain,
        tuple(keys),
        tuple(structs),
        tuple(converts),
        tuple(calls),
        bytes(null_bytes),
        pad_mask.to_bytes(null_bytes, "little"),
    )
    return writer


def _names(prefix: str, count: int, source: str) -> str:
    """``P0, P1, = source``: unpack a tuple of ``count`` into numbered names (or nothing)."""
    if not count:
        return "pass"
    return f"{', '.join(f'{prefix}{n}' for n in range(count))}, = {source}"
