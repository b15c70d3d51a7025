"""Generated straight-line decoders: row images, and DECIMAL values.

This is the one module that compiles code at run time (see DESIGN.md, "Speed
without ugliness"); :mod:`~binlogkit.binlog.rows.image_writer` has its row
encoders compiled by :func:`run_generated`. The source text is made only of
positions, sizes, :mod:`struct` codes and integer constants; every object the
code uses (column keys, structs, converters, decoders) is handed to a
generated factory as an argument and reaches the function as a closure
variable, never spliced into the text.

:func:`image_reader` builds, for one image plan, a function that reads a row
image whose present columns are all non-NULL in one pass: runs of fixed-width
values are one ``struct`` unpack, length-prefixed values are sliced inline,
and the row dict is built in one expression. Any other image (one with a
NULL, a value a converter declines, short data) is handed whole to the plain
plan, so the result is always the plain plan's: the same row, or the same error.
DECIMAL and DATETIME2 values (layouts with a ``form``) are converted in place
by the templates :func:`_decimal_lines` and :func:`_datetime2_lines` rather
than by a call per value.
With it comes a section reader: the same code in a loop over the images of a
rows section that has one image per row (inserts, deletes), which appends
each row change itself, so a row costs no call of its own.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from types import CodeType
from typing import Any, NoReturn

from binlogkit.binlog.rows.columns import DateTime2Form, DecimalForm, ValueDecoder, ValueLayout

__all__ = [
    "ImageReader",
    "SectionReader",
    "decimal_converter",
    "image_reader",
    "image_readers",
    "run_generated",
]

ImageReader = Callable[[bytes, int], tuple[dict[str, Any], int]]
"""``fn(buf, pos) -> (row, next_pos)`` for one row image; ``buf`` must be ``bytes``."""

SectionReader = Callable[[bytes, int, int, Callable[[Any, Any], Any], bool, list[Any]], int]
"""``fn(buf, pos, end, make, after, out) -> pos``: reads images from ``pos`` while ``pos < end``.

Each row goes to ``out`` as ``make(None, row)`` if ``after``, else ``make(row, None)``;
returns the offset after the last image (as a loop over the image reader would).
"""

_PREFIX_BYTES = (
    None,
    "buf[s - 1]",
    "buf[s - 2] | buf[s - 1] << 8",
    "buf[s - 3] | buf[s - 2] << 8 | buf[s - 1] << 16",
    "buf[s - 4] | buf[s - 3] << 8 | buf[s - 2] << 16 | buf[s - 1] << 24",
)


@lru_cache(maxsize=512)
def _compile(source: str, name: str) -> CodeType:
    """Compiled once per distinct source: tables of the same shape share it."""
    return compile(source, f"<binlogkit generated {name}>", "exec")


def run_generated(source: str, name: str, *args: Any) -> Any:
    """Run ``source`` (which defines ``_make``) and call ``_make(*args)``; the generated row
    encoders of :mod:`~binlogkit.binlog.rows.image_writer` are compiled here too."""
    namespace: dict[str, Any] = {}
    exec(_compile(source, name), namespace)
    return namespace["_make"](*args)


def _unpack_line(names: Sequence[str], source: str) -> str:
    return f"{', '.join(names)}, = {source}" if names else ""


def _null_free_test(null_bytes: int, mask: int) -> str | None:
    """The condition that none of the ``mask`` bits of the NULL bitmap at ``pos`` is set."""
    if not mask:
        return None
    if null_bytes <= 2:
        parts = [
            f"buf[{f'pos + {i}' if i else 'pos'}] & {mask >> 8 * i & 0xFF}"
            for i in range(null_bytes)
            if mask >> 8 * i & 0xFF
        ]
        return f"not ({' or '.join(parts)})"
    return f'not int.from_bytes(buf[pos : pos + {null_bytes}], "little") & {mask}'


def image_reader(
    keys: Sequence[str],
    layouts: Sequence[ValueLayout | None],
    decoders: Sequence[ValueDecoder],
    null_bytes: int,
    null_mask: int,
    plain: ImageReader,
) -> ImageReader:
    """A reader of the images of one image plan, equal to ``plain`` on every input.

    ``keys``, ``layouts`` and ``decoders`` are those of the image's columns in
    order (a None layout: the value is read by calling its decoder);
    ``null_bytes`` is the size of the image's NULL bitmap and ``null_mask``
    its bits that mark one of these columns NULL.
    """
    return image_readers(keys, layouts, decoders, null_bytes, null_mask, plain)[0]


def image_readers(
    keys: Sequence[str],
    layouts: Sequence[ValueLayout | None],
    decoders: Sequence[ValueDecoder],
    null_bytes: int,
    null_mask: int,
    plain: ImageReader,
) -> tuple[ImageReader, SectionReader]:
    """The :func:`image_reader` of these arguments and its :data:`SectionReader`.

    The section reader reads the images of a rows section that has only this
    image, one after another, with the same code inline: no call per row.
    """
    structs: list[Callable[[bytes, int], tuple[Any, ...]]] = []
    converts: list[Callable[[Any], Any]] = []
    calls: list[ValueDecoder] = []
    body: list[str] = []
    run: list[int] = []  # columns of the fixed-width run being gathered
    # The next value is ``off`` bytes after ``base``: ``pos`` (the image's start,
    # kept for the fallback), then ``p`` once a value of variable size was read.
    base, off = "pos", null_bytes
    unchecked = False  # a slice may have run past the end since the last struct read

    def at() -> str:
        return f"{base} + {off}" if off else base

    def flush_run() -> None:
        nonlocal off, unchecked
        if not run:
            return
        layout_of = [layouts[n] for n in run]
        fmt = struct.Struct("<" + "".join(lay.fmt for lay in layout_of if lay is not None))
        structs.append(fmt.unpack_from)
        if len(fmt.unpack(bytes(fmt.size))) != len(run):
            raise ValueError(f"layouts {layout_of} are not one field each")
        body.append(_unpack_line([f"v{n}" for n in run], f"U{len(structs) - 1}(buf, {at()})"))
        for n, lay in zip(run, layout_of, strict=True):
            if lay is not None and lay.convert is not None:
                converts.append(lay.convert)
                body.append(f"v{n} = C{len(converts) - 1}(v{n})")
        off += fmt.size
        unchecked = False
        run.clear()

    def inline(n: int, form: DecimalForm | DateTime2Form) -> None:
        nonlocal off, unchecked
        flush_run()
        if isinstance(form, DecimalForm):
            fmt, names, lines = _decimal_lines(form, f"x{n}_", f"v{n}", "raise ValueError")
        else:
            fmt, names, lines = _datetime2_lines(form, f"x{n}_", f"v{n}")
        unpack = struct.Struct(fmt)
        structs.append(unpack.unpack_from)
        body.append(_unpack_line(names, f"U{len(structs) - 1}(buf, {at()})"))
        body.extend(lines)
        off += unpack.size
        unchecked = False

    for n, layout in enumerate(layouts):
        if layout is not None and layout.form is not None:
            inline(n, layout.form)
            continue
        if layout is not None and layout.fmt:
            run.append(n)
            continue
        flush_run()
        if layout is not None and 1 <= layout.prefix <= 4:
            body.append(f"s = {base} + {off + layout.prefix}")
            body.append(f"p = s + ({_PREFIX_BYTES[layout.prefix]})")
            if layout.convert is None:
                body.append(f"v{n} = buf[s:p]")
            else:
                converts.append(layout.convert)
                body.append(f"v{n} = C{len(converts) - 1}(buf[s:p])")
            unchecked = True
        else:
            calls.append(decoders[n])
            body.append(f"v{n}, p = D{len(calls) - 1}(buf, {at()})")
        base, off = "p", 0
    flush_run()
    row = ", ".join(f"K{n}: v{n}" for n in range(len(keys)))
    # The end of the image: ``read`` returns the row, ``read_all`` keeps it and goes on.
    if unchecked:
        body.append(f"if {at()} <= len(buf):")
    done = "    " if unchecked else ""
    one = [f"{done}return {{{row}}}, {at()}"]
    many = [
        f"{done}row = {{{row}}}",
        f"{done}append(make(None, row) if after else make(row, None))",
        f"{done}pos = {at()}",
        f"{done}continue",
    ]

    test = _null_free_test(null_bytes, null_mask)
    inner = [f"if {test}:", *("    " + line for line in body)] if test else body
    lines = [
        "def _make(plain, keys, structs, converts, calls, Decimal, datetime):",
        "    " + _unpack_line([f"K{n}" for n in range(len(keys))], "keys"),
        "    " + _unpack_line([f"U{n}" for n in range(len(structs))], "structs"),
        "    " + _unpack_line([f"C{n}" for n in range(len(converts))], "converts"),
        "    " + _unpack_line([f"D{n}" for n in range(len(calls))], "calls"),
        "    def read(buf, pos):",
        "        try:",
        *(" " * 12 + line for line in inner),
        *(" " * (16 if test else 12) + line for line in one),
        "        except Exception:",
        "            pass",
        "        return plain(buf, pos)",
        "    def read_all(buf, pos, end, make, after, out):",
        "        append = out.append",
        "        while pos < end:",
        "            try:",
        *(" " * 16 + line for line in inner),
        *(" " * (20 if test else 16) + line for line in many),
        "            except Exception:",
        "                pass",
        "            row, pos = plain(buf, pos)",
        "            append(make(None, row) if after else make(row, None))",
        "        return pos",
        "    return read, read_all",
    ]
    source = "\n".join(lines) + "\n"
    readers: tuple[ImageReader, SectionReader] = run_generated(
        source,
        "row image reader",
        plain,
        tuple(keys),
        tuple(structs),
        tuple(converts),
        tuple(calls),
        Decimal,
        datetime,
    )
    return readers


def _decimal_lines(
    form: DecimalForm, prefix: str, target: str, fail: str
) -> tuple[str, list[str], list[str]]:
    """The code that reads a NEWDECIMAL of ``form`` into ``target`` as ``Decimal``.

    Gives the big-endian struct format of the value's fields (a 3-byte group
    is a byte and a u16), the fields' names (``prefix`` and a number) and the
    lines that turn the unpacked fields into the value, running the statement
    ``fail`` for a group holding more digits than it may. The value has
    exactly ``scale`` fraction digits, as ``Decimal`` of its text would.
    """
    fields: list[str] = []  # struct codes
    groups: list[str] = []  # each group's value, from the fields
    masks: list[int] = []  # each field's all-ones
    for size in form.byte_sizes:
        if size == 3:
            fields += ["B", "H"]
            masks += [0xFF, 0xFFFF]
            groups.append(f"({prefix}{len(masks) - 2} << 16 | {prefix}{len(masks) - 1})")
        else:
            fields.append({1: "B", 2: "H", 4: "I"}[size])
            masks.append((1 << 8 * size) - 1)
            groups.append(f"{prefix}{len(masks) - 1}")
    sign = 1 << (8 * {"B": 1, "H": 2, "I": 4}[fields[0]] - 1)
    names = [f"{prefix}{i}" for i in range(len(masks))]
    invert = "; ".join(
        f"{name} ^= {mask ^ sign if i == 0 else mask}"
        for i, (name, mask) in enumerate(zip(names, masks, strict=True))
    )
    too_big = " or ".join(
        f"{group} > {10**d - 1}" for group, d in zip(groups, form.digits, strict=True)
    )
    number = groups[0]
    for group, d in zip(groups[1:], form.digits[1:], strict=True):
        number = f"({number}) * {10**d} + {group}"
    # Decimal of "<digits>E-<scale>" has exactly those digits and that exponent.
    exponent = f"E-{form.scale}" if form.scale else ""
    first = names[0]
    lines = [
        f"if {first} & {sign}:",
        f"    {first} ^= {sign}",
        f"    if {too_big}:",
        f"        {fail}",
        f'    {target} = Decimal(f"{{{number}}}{exponent}")',
        "else:",
        f"    {invert}",
        f"    if {too_big}:",
        f"        {fail}",
        f'    {target} = Decimal(f"-{{{number}}}{exponent}")',
    ]
    return ">" + "".join(fields), names, lines


def _datetime2_lines(
    form: DateTime2Form, prefix: str, target: str
) -> tuple[str, list[str], list[str]]:
    """The code that reads a DATETIME2 into ``target`` as ``datetime``, as :func:`_decimal_lines`.

    The value is 5 big-endian bytes, ``0x8000000000 + (((year * 13 + month) << 5
    | day) << 17 | hour << 12 | minute << 6 | second)``, then the fraction. A
    value out of range, or not a valid date and time, raises ValueError: the
    row's plain decoders then give the error or an ``InvalidDateTime``.
    """
    fbytes = form.fraction_bytes
    p = prefix
    fraction = {0: "", 1: "B", 2: "H", 3: "BH"}[fbytes]
    names = [f"{p}0", f"{p}1", *(f"{p}{2 + i}" for i in range(len(fraction)))]
    frac = {0: "0", 1: f"{p}2", 2: f"{p}2", 3: f"({p}2 << 16 | {p}3)"}[fbytes]
    limit = 10 ** (2 * fbytes) - 1
    unit = 10 ** (6 - 2 * fbytes)
    # The first byte less 0x80 and the next four make the packed value, in two
    # numbers small enough for fast arithmetic: the first byte's bits come first.
    lines = [
        f"{p}0 -= 128",
        f"if {p}0 < 0{f' or {frac} > {limit}' if fbytes else ''}:",
        "    raise ValueError",
        f"{p}day = {p}0 << 15 | {p}1 >> 17",  # (year * 13 + month) << 5 | day
        f"{p}month = {p}day >> 5",  # year * 13 + month
        f"{p}1 &= {0x1FFFF}",  # hour << 12 | minute << 6 | second
        f"{target} = datetime({p}month // 13, {p}month % 13, {p}day & 31,"
        f" {p}1 >> 12, {p}1 >> 6 & 63, {p}1 & 63, {frac} * {unit})",
    ]
    return ">BI" + fraction, names, lines


def decimal_converter(
    form: DecimalForm, fail: Callable[[bytes], NoReturn]
) -> Callable[[bytes], Decimal]:
    """Stored NEWDECIMAL bytes of ``form`` → ``Decimal``; ``fail(data)`` is called for a
    group holding more digits than it may."""
    fmt, names, lines = _decimal_lines(form, "f", "value", "fail(data)")
    source = (
        "\n".join(
            [
                "def _make(unpack, fail, Decimal):",
                "    def convert(data):",
                f"        {', '.join(names)}, = unpack(data)",
                *("        " + line for line in lines),
                "        return value",
                "    return convert",
            ]
        )
        + "\n"
    )
    converter: Callable[[bytes], Decimal] = run_generated(
        source, "DECIMAL converter", struct.Struct(fmt).unpack, fail, Decimal
    )
    return converter
