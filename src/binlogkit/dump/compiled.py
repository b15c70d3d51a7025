"""Straight-line row printers and row counters, generated once per table map and row shape.

:class:`~binlogkit.dump.rows.RowsPrinter` walks a row image column by
column through the printers of :mod:`binlogkit.dump.values`; that plain walk
is the reference. This module writes, for one table and one pair of
columns-present bitmaps, a Python function that does the same work for a
whole rows section without the per-column loop: the common types (integers,
strings, dates and times) are read inline, the others (JSON, VECTOR, BIT ...)
through their printer, and each row becomes one ``%`` formatting of a
template. PARTIAL_UPDATE_ROWS events, whose after-images carry value options
and JSON diffs, are left to the plain walk.

The generated code is exact on its success path and at least as strict as the
plain walk: when anything is off (a value running past the rows section, a
value the plain walk would reject) it raises :class:`Fallback`, and the caller
runs the plain walk, which gives the output or the error the tools would.
tests/corpus/test_dump_compiled.py and tests/integration/test_dump_compiled_live.py
check both against the plain walk on the corpus and on a live workload's files.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence

from binlogkit.binlog.constants import ColumnType as CT
from binlogkit.dump.values import MYSQL_QUOTES, QUOTES, ColumnPrinter, c_g, decimal_layout

__all__ = ["Fallback", "RowsFn", "compile_counter", "compile_rows"]

RowsFn = Callable[[bytes], tuple[list[str], int]]
"""A rows section → its ``###`` texts (one per row, lines joined) and its number of rows."""


class Fallback(Exception):  # a signal, not an error
    """The generated code cannot vouch for this rows section: use the plain printer."""


_FRAC_BYTES = (0, 1, 1, 2, 2, 3, 3)
_FRAC_SCALE = (0, 10000, 100, 1)
_INTEGERS = frozenset({CT.TINY, CT.SHORT, CT.INT24, CT.LONG, CT.LONGLONG})
_MEMO_SIZE = 1 << 16
"""The most texts one cache of a generated function keeps (then it starts over)."""
_NINE = 999_999_999
_PRINTABLE_ASCII = bytes(range(0x20, 0x7F))


class _Writer:
    """Source lines of one generated function, and the constants it refers to."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[str, object] = {
            "Fallback": Fallback,
            "Q": QUOTES,
            "MQ": MYSQL_QUOTES,
            "U32": struct.Struct("<I").unpack_from,
            "U64": struct.Struct("<Q").unpack_from,
            "F32": struct.Struct("<f").unpack_from,
            "F64": struct.Struct("<d").unpack_from,
            "c_g": c_g,
            "from_bytes": int.from_bytes,
            "PA": _PRINTABLE_ASCII,
            "HH": _HOURS,
            "MS": _MINUTES_SECONDS,
        }

    def line(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def const(self, value: object) -> str:
        name = f"k{len(self.names)}"
        self.names[name] = value
        return name

    def build(self, name: str) -> Callable[..., object]:
        namespace = dict(self.names)
        code = compile("\n".join(self.lines) + "\n", f"<binlogkit dump {name}>", "exec")
        exec(code, namespace)  # our own generated source
        fn: Callable[..., object] = namespace[name]  # type: ignore[assignment]
        return fn


def _null_bytes(w: _Writer, depth: int, count: int, prefix: str) -> None:
    for k in range((count + 7) // 8):
        w.line(depth, f"{prefix}{k} = buf[pos + {k}]")
    if count:
        w.line(depth, f"pos += {(count + 7) // 8}")


def _int_text(w: _Writer, depth: int, var: str, size: int) -> None:
    """``var``: the int itself (the template's ``%s`` prints it), or its two readings."""
    half = 1 << (size * 8 - 1)
    full = 1 << (size * 8)
    w.line(depth, f"{var} = v if v < {half} else '%d (%d)' % (v - {full}, v)")


def _memo(make: Callable[[int], str]) -> tuple[dict[int, str], Callable[[int], str]]:
    """A cache of ``make``'s texts and the function that fills it on a miss (bounded)."""
    cache: dict[int, str] = {}

    def fill(key: int) -> str:
        text = make(key)
        if len(cache) >= _MEMO_SIZE:
            cache.clear()
        cache[key] = text
        return text

    return cache, fill


def _memo_read(w: _Writer, depth: int, var: str, key: str, make: Callable[[int], str]) -> None:
    """Code setting ``var`` to ``make(key)``, through a cache (dates and times repeat)."""
    cache, fill = _memo(make)
    name = w.const(cache)
    w.line(depth, f"{var} = {name}.get({key})")
    w.line(depth, f"if {var} is None:")
    w.line(depth + 1, f"{var} = {w.const(fill)}({key})")


def _date_text(d: int) -> str:
    """The quote and date of a DATETIME2 value, from its date bits (the day count ``d``)."""
    m = d >> 5
    return f"'{m // 13:04d}-{m % 13:02d}-{d & 31:02d} "


_HOURS = tuple(f"{hour:02d}:" for hour in range(32))
"""A DATETIME2 time of day's hour, by its top five bits."""
_MINUTES_SECONDS = tuple(f"{bits >> 6:02d}:{bits & 63:02d}" for bits in range(4096))
"""A DATETIME2 time of day's minutes and seconds, by its low twelve bits."""


def _fraction_text(dec: int, scale: int) -> Callable[[int], str]:
    """The fraction (``dec`` digits of six) and closing quote of a DATETIME2 value."""

    def make(f: int) -> str:
        return f".{f * scale:06d}"[: dec + 1] + "'"

    return make


def _fraction(w: _Writer, depth: int, at: str, dec: int) -> str:
    """Code reading a TIME2/DATETIME2/TIMESTAMP2 fraction at ``at``; returns its text expression."""
    if not dec:
        return "''"
    n = _FRAC_BYTES[dec]
    w.line(depth, f"f = from_bytes(buf[{at} : {at} + {n}], 'big') * {_FRAC_SCALE[n]}")
    return f"'.' + ('%06d' % f)[:{dec}]"


def _value(w: _Writer, depth: int, col: ColumnPrinter, var: str) -> None:
    """Code that reads the (not NULL) value of ``col`` at ``pos`` into ``var`` and moves on."""
    code, meta = col.code, col.meta
    if code in _INTEGERS:
        size = col.width
        if size == 1:
            w.line(depth, "v = buf[pos]")
        elif size == 2:
            w.line(depth, "v = buf[pos] | buf[pos + 1] << 8")
        elif size == 3:
            w.line(depth, "v = buf[pos] | buf[pos + 1] << 8 | buf[pos + 2] << 16")
        else:
            w.line(depth, f"v = U{size * 8}(buf, pos)[0]")
        w.line(depth, f"pos += {size}")
        _int_text(w, depth, var, size)
    elif code in (CT.FLOAT, CT.DOUBLE):
        size, spec = (4, "<20g") if code == CT.FLOAT else (8, ".20g")
        w.line(depth, f"v = F{size * 8}(buf, pos)[0]")
        w.line(depth, f"{var} = format(v, {spec!r}) if v == v else c_g(v, {spec!r})")
        w.line(depth, f"pos += {size}")
    elif code == CT.NEWDECIMAL and decimal_layout(meta >> 8, meta & 0xFF).size:
        layout = decimal_layout(meta >> 8, meta & 0xFF)
        size = layout.size
        w.line(depth, f"e = pos + {size}")
        w.line(depth, "if e > end:")
        w.line(depth + 1, "raise Fallback")
        # The whole digits as one number: the groups after the first must each hold
        # at most nine digits for its text to be theirs, zero-padded, joined.
        shifts = layout.whole_shifts
        text = ("%d" if shifts else "0") + layout.frac_format
        w.line(depth, f"v = from_bytes(buf[pos:e], 'big') ^ {layout.sign}")
        w.line(depth, f"if v & {layout.sign}:")  # the sign bit was clear: negative, inverted
        w.line(depth + 1, f"v ^= {(1 << size * 8) - 1}")
        w.line(depth + 1, f"t = {'-' + text!r}")
        w.line(depth, "else:")
        w.line(depth + 1, f"t = {text!r}")
        args = []
        if shifts:
            whole = f"(v >> {shifts[0][0]} & {shifts[0][1]})"
            for k, (shift, mask) in enumerate(shifts[1:]):
                w.line(depth, f"g{k} = v >> {shift} & {mask}")
                w.line(depth, f"if g{k} > {_NINE}:")
                w.line(depth + 1, "raise Fallback")
                whole = f"({whole}) * {_NINE + 1} + g{k}"
            args.append(whole)
        args += [f"v >> {shift} & {mask}" for shift, mask in layout.frac_shifts]
        if args:
            w.line(depth, f"{var} = t % ({', '.join(args)},)")
        else:
            w.line(depth, f"{var} = t")
        w.line(depth, "pos = e")
    elif col.prefix:
        start = f"pos + {col.prefix}"
        if col.prefix == 1:
            length = "buf[pos]"
        elif col.prefix == 2:
            length = "(buf[pos] | buf[pos + 1] << 8)"
        else:
            length = f"from_bytes(buf[pos : {start}], 'little')"
        w.line(depth, f"e = {start} + {length}")
        w.line(depth, "if e > end:")
        w.line(depth + 1, "raise Fallback")
        if col.mysql:  # (the quote and the backslash are printable, yet escaped)
            w.line(depth, f"x = buf[{start} : e].decode('utf-8', 'surrogateescape')")
            w.line(depth, "x = x.translate(MQ)")
        else:
            # Printable ASCII (what deleting it leaves empty) prints as it is.
            w.line(depth, f"x = buf[{start} : e]")
            w.line(depth, "if x.translate(None, PA):")
            w.line(depth + 1, "x = x.decode('utf-8', 'surrogateescape')")
            w.line(depth + 1, "if not x.isprintable():")
            w.line(depth + 2, "x = x.translate(Q)")
            w.line(depth, "else:")
            w.line(depth + 1, "x = x.decode('ascii')")
        w.line(depth, f'{var} = "\'" + x + "\'"')
        w.line(depth, "pos = e")
    elif code == CT.DATETIME2 and 0 <= meta <= 6:
        # One struct read: the 5 bytes of the date and time (4 + 1), then the fraction.
        n = _FRAC_BYTES[meta]
        read = w.const(struct.Struct(">IB" + ("", "B", "H", "BH")[n]).unpack_from)
        if n == 0:
            w.line(depth, f"hi, lo = {read}(buf, pos)")
        elif n < 3:
            w.line(depth, f"hi, lo, f = {read}(buf, pos)")
        else:
            w.line(depth, f"hi, lo, f, f2 = {read}(buf, pos)")
            w.line(depth, "f = f << 16 | f2")
        w.line(depth, "v = (hi << 8 | lo) - 0x8000000000")
        # The date from a cache (rows share dates), the time of day from two tables.
        _memo_read(w, depth, "x", "v >> 17", _date_text)
        w.line(depth, "h = v & 0x1FFFF")
        time = "x + HH[h >> 12] + MS[h & 4095]"
        if meta:
            # the fraction's first ``meta`` digits of six: those of ``f`` when it is in range
            exact = w.const(_fraction_text(meta, _FRAC_SCALE[n]))
            w.line(depth, "if not f:")
            w.line(depth + 1, f"z = {'.' + '0' * meta + chr(39)!r}")
            w.line(depth, f"elif f < {10 ** (2 * n)}:")
            w.line(depth + 1, f'z = ".%0{meta}d\'" % {"f" if meta == 2 * n else "(f // 10)"}')
            w.line(depth, "else:")
            w.line(depth + 1, f"z = {exact}(f)")
            w.line(depth, f"{var} = {time} + z")
        else:
            w.line(depth, f'{var} = {time} + "\'"')
        w.line(depth, f"pos += {5 + n}")
    elif code == CT.TIMESTAMP2 and 0 <= meta <= 6:
        frac = _fraction(w, depth, "pos + 4", meta)
        w.line(depth, f"{var} = str(from_bytes(buf[pos : pos + 4], 'big')) + {frac}")
        w.line(depth, f"pos += {4 + _FRAC_BYTES[meta]}")
    elif code in (CT.DATE, CT.NEWDATE):
        w.line(depth, "v = buf[pos] | buf[pos + 1] << 8 | buf[pos + 2] << 16")
        w.line(depth, f"{var} = \"'%04d:%02d:%02d'\" % (v // 512, v // 32 % 16, v % 32)")
        w.line(depth, "pos += 3")
    elif code == CT.YEAR:
        w.line(depth, f"{var} = '%04d' % (buf[pos] + 1900)")
        w.line(depth, "pos += 1")
    else:
        # The plain walk checks this before every value; a printer may read nothing.
        w.line(depth, "if pos >= end:")
        w.line(depth + 1, "raise Fallback")
        w.line(depth, f"{var}, pos = {w.const(col.print)}(buf, pos)")


def _rows_loop(w: _Writer, images: Sequence[Sequence[int] | None]) -> None:
    """The loop over the rows; rows of no column take no bytes and would loop forever."""
    if not any(images):
        w.line(1, "if end:")
        w.line(2, "raise Fallback")
    w.line(1, "while pos < end:")


def _image(
    w: _Writer,
    depth: int,
    present: Sequence[int],
    columns: Sequence[ColumnPrinter],
    tag: str,
    verbose: int,
) -> tuple[list[str], list[str]]:
    """Code for one row image; returns its template lines and the variables they format."""
    _null_bytes(w, depth, len(present), f"n{tag}")
    lines: list[str] = []
    args: list[str] = []
    for n, i in enumerate(present):
        col = columns[i]
        var = f"{tag}{n}"
        w.line(depth, f"if n{tag}{n >> 3} & {1 << (n & 7)}:")
        w.line(depth + 1, f"{var} = 'NULL'")
        if verbose > 1:
            w.line(depth + 1, f"z{var} = 1")
        w.line(depth, "else:")
        if verbose > 1:
            w.line(depth + 1, f"z{var} = 0")
        _value(w, depth + 1, col, var)
        if verbose > 1:
            typestr = col.typestr.replace("%", "%%")
            lines.append(
                f"###   @{i + 1}=%s /* {typestr} meta={col.meta} "
                f"nullable={int(col.nullable)} is_null=%d */"
            )
            args += [var, f"z{var}"]
        else:
            lines.append(f"###   @{i + 1}=%s")
            args.append(var)
    return lines, args


def compile_rows(
    columns: Sequence[ColumnPrinter],
    head: str,
    images: Sequence[tuple[str, Sequence[int] | None]],
    verbose: int,
) -> RowsFn:
    """The ``-v`` (``verbose`` 1) or ``-vv`` (2) printer of a rows section.

    ``head`` is the ``### VERB table`` line; ``images`` the clause (``### SET``
    ...) and present columns of each row image, None for an update's second
    image with no columns (``### SET /* no columns */``).
    """
    w = _Writer()
    w.line(0, "def rows(buf):")
    w.line(1, "out = []")
    w.line(1, "append = out.append")
    w.line(1, "end = len(buf)")
    w.line(1, "pos = 0")
    _rows_loop(w, [present for _, present in images])
    template = [head.replace("%", "%%")]
    args: list[str] = []
    for k, (clause, present) in enumerate(images):
        if present is None:
            template.append("### SET /* no columns */")
            continue
        lines, names = _image(w, 2, present, columns, "ab"[k], verbose)
        template.append(clause)
        template += lines
        args += names
    text = w.const("\n".join(template))
    w.line(2, f"append({text} % ({', '.join(args)}{',' if len(args) == 1 else ''}))")
    w.line(1, "if pos > end:")
    w.line(2, "raise Fallback")
    w.line(1, "return out, len(out)")  # one text a row
    return w.build("rows")  # type: ignore[return-value]


def compile_counter(
    columns: Sequence[ColumnPrinter], images: Sequence[Sequence[int]]
) -> Callable[[bytes], int]:
    """The tools' row counter of a rows section: rows up to the first with an unsized value.

    Runs of fixed-width columns move ``pos`` by one lookup per NULL-bitmap byte:
    a table of their summed widths by that byte's value (the NULL ones add nothing).
    """
    w = _Writer()
    w.line(0, "def count(buf):")
    w.line(1, "end = len(buf)")
    w.line(1, "pos = 0")
    w.line(1, "count = 0")
    _rows_loop(w, images)
    w.line(2, "count += 1")
    for k, present in enumerate(images):
        tag = "ab"[k]
        _null_bytes(w, 2, len(present), f"n{tag}")
        run: list[tuple[int, int]] = []  # (n, width) of the fixed-width columns not yet added
        for n, i in enumerate(present):
            col = columns[i]
            if col.sized and not col.prefix and col.width:
                run.append((n, col.width))
                continue
            _fixed_run(w, run, tag)
            w.line(2, f"if not n{tag}{n >> 3} & {1 << (n & 7)}:")
            if not col.sized:
                w.line(3, "return count")
            elif col.prefix:
                if col.prefix == 1:
                    w.line(3, "pos += 1 + buf[pos]")
                elif col.prefix == 2:
                    w.line(3, "pos += 2 + (buf[pos] | buf[pos + 1] << 8)")
                else:
                    length = f"from_bytes(buf[pos : pos + {col.prefix}], 'little')"
                    w.line(3, f"pos += {col.prefix} + {length}")
            else:
                w.line(3, f"pos = {w.const(col.print)}(buf, pos)[1]")
        _fixed_run(w, run, tag)
    w.line(1, "if pos > end:")
    w.line(2, "raise Fallback")
    w.line(1, "return count")
    return w.build("count")  # type: ignore[return-value]


def _fixed_run(w: _Writer, run: list[tuple[int, int]], tag: str) -> None:
    """Code adding the widths of a run of fixed-width columns (``run``, then emptied)."""
    for byte in sorted({n >> 3 for n, _ in run}):
        group = [(n & 7, width) for n, width in run if n >> 3 == byte]
        if len(group) == 1:
            bit, width = group[0]
            w.line(2, f"if not n{tag}{byte} & {1 << bit}:")
            w.line(3, f"pos += {width}")
        else:
            sizes = tuple(
                sum(width for bit, width in group if not value >> bit & 1) for value in range(256)
            )
            w.line(2, f"pos += {w.const(sizes)}[n{tag}{byte}]")
    run.clear()
