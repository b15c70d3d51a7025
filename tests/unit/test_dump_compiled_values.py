"""Generated row printers on values the corpus rarely holds: they must print as the plain walk.

The plain column-by-column walk of :class:`~binlogkit.dump.rows.RowsPrinter`
is the reference (tests/corpus/test_dump_compiled.py checks both on real
files). Here the generated code's shortcuts meet their edges: DATETIME2
fractions out of range, DECIMAL digit groups above nine digits, strings that
are not printable ASCII, negative and unsigned-looking integers.
"""

from __future__ import annotations

import struct

import pytest
from time_limit import time_limit

from binlogkit.binlog.constants import ColumnType as CT
from binlogkit.dump.compiled import Fallback, compile_counter, compile_rows
from binlogkit.dump.rows import RowsPrinter
from binlogkit.dump.values import ColumnPrinter, decimal_layout, value_printer


def _plain(columns: tuple[ColumnPrinter, ...], buf: bytes, verbose: int) -> list[str]:
    """The plain walk's ``###`` lines of single-image rows, joined per row as the dump does."""
    printer = RowsPrinter(verbose, compiled=False)
    present = tuple(range(len(columns)))
    rows: list[str] = []
    pos = 0
    while pos < len(buf):
        out = ["### INSERT INTO `d`.`t`"]
        pos = printer._image(buf, pos, present, columns, "### SET", out)
        rows.append("\n".join(out))
    return rows


def _both(columns: tuple[ColumnPrinter, ...], rows: list[bytes], verbose: int) -> int:
    """Check each row alone and all together; returns how many the generated code printed."""
    fn = compile_rows(
        columns, "### INSERT INTO `d`.`t`", [("### SET", tuple(range(len(columns))))], verbose
    )
    printed = 0
    for buf in [*rows, b"".join(rows)]:
        want = _plain(columns, buf, verbose)
        try:
            got = fn(buf)
        except Exception:  # handed over to the plain walk: the dump then prints ``want``
            continue
        assert got == (want, len(want)), buf.hex()
        printed += 1
    return printed


def _datetime2(year: int, month: int, day: int, hms: tuple[int, int, int], frac: bytes) -> bytes:
    ym = year * 13 + month
    packed = (ym << 22 | day << 17 | hms[0] << 12 | hms[1] << 6 | hms[2]) + 0x8000000000
    return packed.to_bytes(5, "big") + frac


@pytest.mark.parametrize("verbose", [1, 2])
@pytest.mark.parametrize("dec", range(7))
def test_datetime2_fractions(dec: int, verbose: int) -> None:
    column = value_printer(CT.DATETIME2, dec, True)
    n = (0, 1, 1, 2, 2, 3, 3)[dec]
    rows = []
    valid = 0
    for value in (0, 1, 9, 10, 99, 100, 9999, 10000, 65535, 999999, 1000000, 0xFFFFFF):
        if value < 1 << (8 * n) or (n == 0 and value == 0):
            frac = value.to_bytes(n, "big") if n else b""
            rows.append(b"\x00" + _datetime2(2024, 2, 29, (23, 59, 58), frac))
            valid += value < 10 ** (2 * n)
    rows.append(b"\x00" + _datetime2(0, 0, 0, (31, 63, 63), b"\xff" * n))  # bits no time has
    rows.append(b"\x01")  # NULL
    assert _both((column,), rows, verbose) >= valid + 1  # every in-range value, and NULL


@pytest.mark.parametrize("meta", [(12, 2), (20, 4), (30, 10), (9, 9), (5, 0), (40, 0)])
def test_decimal_groups(meta: tuple[int, int]) -> None:
    precision, scale = meta
    column = value_printer(CT.NEWDECIMAL, precision << 8 | scale, True)
    size = decimal_layout(precision, scale).size
    rows = [b"\x00" + bytes([0x80]) + b"\x00" * (size - 2) + b"\x01"]  # 0...01
    rows.append(b"\x00" + bytes([0x7F]) + b"\xff" * (size - 2) + b"\xfe")  # its negative
    for fill in (b"\x00", b"\x80", b"\x7f", b"\xff"):
        rows.append(b"\x00" + (fill * size)[:size])
    layout = decimal_layout(precision, scale)
    for shift, mask in layout.whole_shifts + layout.frac_shifts:
        for group in (999_999_999, 1_000_000_000, mask):  # nine digits, and more
            value = layout.sign | (group & mask) << shift
            if layout.whole_shifts and shift != layout.whole_shifts[0][0]:
                value |= 5 << layout.whole_shifts[0][0]  # digits before the group
            rows.append(b"\x00" + value.to_bytes(size, "big"))
    assert _both((column,), rows, 1) >= 2


def test_strings_and_integers() -> None:
    columns = (
        value_printer(CT.VARCHAR, 200, True),
        value_printer(CT.LONG, 0, True),
        value_printer(CT.TINY, 0, True),
        value_printer(CT.LONGLONG, 0, True),
    )
    rows = [b"\x0f"]  # all NULL
    for text in (b"plain ascii", b"tab\there", b"caf\xc3\xa9", b"\xff\xfe", b"del\x7f", b""):
        for number in (0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF):
            row = b"\x00" + bytes([len(text)]) + text + struct.pack("<I", number)
            rows.append(row + bytes([number & 0xFF]) + struct.pack("<Q", number << 32 | number))
    for verbose in (1, 2):
        assert _both(columns, rows, verbose) == len(rows) + 1


@pytest.mark.parametrize("verbose", [0, 1, 2])
def test_rows_of_no_column_do_not_loop(verbose: int) -> None:
    # Such rows take no bytes: a loop over the rows section would never move on.
    columns = (value_printer(CT.LONG, 0, False),)
    if verbose:
        fn = compile_rows(columns, "### INSERT INTO `d`.`t`", [("### SET", ())], verbose)
    else:
        fn = compile_counter(columns, [()])
    with time_limit(5), pytest.raises(Fallback):
        fn(b"\x01\x02")
