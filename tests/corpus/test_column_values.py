"""Column values of real binlogs: against mariadb-binlog's output, and re-encoded byte for byte.

- Every ``###   @N=value`` line that ``mariadb-binlog -vv`` printed for the
  MariaDB 10.11 corpus files is matched by the value we decode (formatted the
  way mariadb-binlog prints that type).
- Every value of every row in the corpus encodes back to the bytes it was
  decoded from.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from corpus_files import CORPUS, corpus_manifest

import binlogkit
from binlogkit.binlog.constants import ColumnType as T
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.rows.charsets import BINARY_COLLATION, text_codec
from binlogkit.binlog.rows.columns import COLUMN_CODECS, ColumnCodec, ColumnInfo, ValueDecoder
from binlogkit.binlog.rows.types import Compressed, Geometry, InvalidDateTime
from binlogkit.binlog.rows.types.bit import bit_width
from binlogkit.binlog.rows.types.strings import string_max_length

pytestmark = pytest.mark.corpus

LOCAL = CORPUS / "local-mariadb-10.11"
_LINE = re.compile(rb"^###   @(\d+)=(.*?) /\* .*? meta=\d+ nullable=\d is_null=\d \*/$")
_NOTE = re.compile(r"^(mysql-bin\.\d+): .* rc=(\d+)", re.M)
_INT_BITS: dict[int, int] = {T.TINY: 8, T.SHORT: 16, T.INT24: 24, T.LONG: 32, T.LONGLONG: 64}


def _dumped_files() -> list[tuple[Path, int]]:
    """(binlog, mariadb-binlog exit code) for each local file with a decoded dump."""
    found = []
    for note in sorted(LOCAL.glob("*/NOTE.txt")):
        for name, rc in _NOTE.findall(note.read_text()):
            binlog = note.parent / name
            if any(binlog.parent.glob(name + ".decoded.txt*")):
                found.append((binlog, int(rc)))
    return found


def _quoted(raw: bytes) -> bytes:
    """my_b_write_quoted: bytes above 0x1f as they are, the rest as \\xNN."""
    return b"'" + b"".join(bytes([c]) if c > 0x1F else b"\\x%02x" % c for c in raw) + b"'"


def _fraction(microsecond: int, fsp: int) -> str:
    return "." + f"{microsecond:06d}"[:fsp] if fsp else ""


def _as_printed(col: ColumnInfo, value: Any) -> bytes:
    """How mariadb-binlog -vv (log_event_print_value) prints a value of this column."""
    t = col.type
    if value is None:
        return b"NULL"
    if t in _INT_BITS:
        bits = _INT_BITS[t]
        signed = value - (1 << bits) if value >= 1 << (bits - 1) else value
        return (str(signed) + (f" ({signed + (1 << bits)})" if signed < 0 else "")).encode()
    if t == T.NEWDECIMAL:
        return format(value, "f").encode()
    if t == T.FLOAT:
        return b"%g" % value
    if t == T.DOUBLE:
        return b"%.20g" % value
    if t == T.BIT:
        return f"b'{value:0{bit_width(col.meta)}b}'".encode()
    if t == T.YEAR:
        return b"%04d" % (value or 1900)
    if t == T.DATE:
        return b"'%04d:%02d:%02d'" % (value.year, value.month, value.day)
    if t in (T.DATETIME, T.DATETIME2):
        fsp = col.meta if t == T.DATETIME2 else 0
        text = (
            f"{value.year:04d}-{value.month:02d}-{value.day:02d} "
            f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
        )
        return _quoted((text + _fraction(value.microsecond, fsp)).encode())
    if t in (T.TIMESTAMP, T.TIMESTAMP2):
        fsp = col.meta if t == T.TIMESTAMP2 else 0
        if isinstance(value, InvalidDateTime):
            seconds, micro = 0, 0
        else:
            seconds, micro = divmod(
                (value - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1), 10**6
            )
        return (str(seconds) + _fraction(micro, fsp)).encode()
    if t in (T.TIME, T.TIME2):
        fsp = col.meta if t == T.TIME2 else 0
        micros = value // timedelta(microseconds=1)
        seconds, micro = divmod(abs(micros), 10**6)
        hours, rest = divmod(seconds, 3600)
        text = f"{'-' if micros < 0 else ''}{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"
        return _quoted((text + _fraction(micro, fsp)).encode())
    if t == T.ENUM:
        if isinstance(value, int):
            return str(value).encode()
        members = [_as_text(col, m) for m in col.enum_values or ()]
        return str(members.index(value) + 1 if value != "" else 0).encode()
    if t == T.SET:
        if not isinstance(value, int):
            members = [_as_text(col, m) for m in col.set_values or ()]
            value = sum(1 << members.index(m) for m in value)
        stored = value.to_bytes(col.meta & 0xFF, "little")
        return ("b'" + "".join(f"{b:08b}" for b in stored) + "'").encode()
    if t == T.STRING and col.charset == BINARY_COLLATION:
        # The server logs BINARY values without their trailing NULs; we give them back.
        assert isinstance(value, bytes) and len(value) == string_max_length(col.meta)
        return _quoted(value.rstrip(b"\0"))
    if t in (T.STRING, T.VARCHAR, T.VAR_STRING, T.BLOB):
        return _quoted(value if isinstance(value, bytes) else _codec(col).encode(value))
    if t == T.GEOMETRY:
        assert isinstance(value, Geometry)
        return _quoted(value.to_bytes())
    if t in (T.BLOB_COMPRESSED, T.VARCHAR_COMPRESSED):
        assert isinstance(value, Compressed)
        return _quoted(value.stored)
    raise AssertionError(f"no printed form for type {t}")


def _codec(col: ColumnInfo) -> Any:
    codec = text_codec(col.charset)
    assert codec is not None, f"{col.key}: str value without a charset"
    return codec


def _as_text(col: ColumnInfo, member: bytes) -> Any:
    codec = text_codec(col.charset)
    if codec is None:
        return member
    try:
        return codec.decode(member)
    except UnicodeDecodeError:
        return member


def _printed_lines(binlog: Path) -> list[tuple[int, bytes]]:
    dump = next(binlog.parent.glob(binlog.name + ".decoded.txt*"))
    text = gzip.decompress(dump.read_bytes()) if dump.suffix == ".gz" else dump.read_bytes()
    return [(int(m[1]), m[2].rstrip()) for m in map(_LINE.match, text.split(b"\n")) if m]


def _our_lines(binlog: Path) -> Iterator[tuple[int, bytes]]:
    with binlogkit.open(str(binlog)) as reader:
        for event in reader:
            table = getattr(event, "table", None)
            if table is None or not hasattr(event, "rows"):
                continue
            columns = {c.key: c for c in table.columns}
            for change in event.rows:
                for image in (change.before, change.after):
                    for key, value in (image or {}).items():
                        col = columns[key]
                        yield col.index + 1, _as_printed(col, value)


_DUMPED = _dumped_files() if LOCAL.is_dir() else []


@pytest.mark.parametrize(
    "binlog",
    [f for f, rc in _DUMPED if rc == 0],
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_values_match_mariadb_binlog(corpus_dir: Path, binlog: Path) -> None:
    expected = _printed_lines(binlog)
    ours = list(_our_lines(binlog))
    assert len(ours) == len(expected)
    for n, (want, got) in enumerate(zip(expected, ours, strict=True)):
        assert got == want, f"value {n} of {binlog}"


@pytest.mark.parametrize(
    "binlog",
    [f for f, rc in _DUMPED if rc != 0 and "encrypted" not in f.parts],
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_mariadb_hires_temporal_columns_are_refused(corpus_dir: Path, binlog: Path) -> None:
    # TIME(3) created with mysql56_temporal_format=OFF: logged as the old TIME
    # without its width; mariadb-binlog fails on it too.
    with pytest.raises(binlogkit.DecodeError, match="old-format TIME"):
        list(_our_lines(binlog))


def _row_binlogs() -> list[str]:
    """The corpus files with rows events, and the local MariaDB ones."""
    found = [
        row["file"]
        for row in corpus_manifest()
        if re.search(r"(?:WRITE|UPDATE|DELETE)_ROWS", row.get("events", ""))
    ]
    local = sorted(LOCAL.glob("*/mysql-bin.[0-9]*[0-9]")) if LOCAL.is_dir() else []
    return found + [str(p.relative_to(CORPUS)) for p in local if "encrypted" not in p.parts]


def _mirroring(codec: type[ColumnCodec], failures: list[str]) -> type[ColumnCodec]:
    class Mirroring(codec):  # type: ignore[valid-type, misc]
        @classmethod
        def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
            decode, encode = codec.decoder(col, options), codec.encoder(col, options)

            def check(buf: bytes, pos: int) -> tuple[Any, int]:
                value, end = decode(buf, pos)
                out = bytearray()
                encode(value, out)
                if out != buf[pos:end]:
                    failures.append(f"{col.key} type {col.type}: {value!r}")
                return value, end

            return check

    return Mirroring


_ROW_LIMIT = 3000
"""Rows checked per file and mode, to keep the test quick on the few big files."""


@pytest.mark.parametrize("raw", [False, True], ids=["values", "raw"])
@pytest.mark.parametrize("name", _row_binlogs())
def test_every_value_encodes_back(
    corpus_dir: Path, name: str, raw: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    failures: list[str] = []
    for code, codec in list(COLUMN_CODECS.items()):
        monkeypatch.setitem(COLUMN_CODECS, code, _mirroring(codec, failures))
    decoded = 0
    try:
        with binlogkit.open(str(corpus_dir / name), raw_values=raw) as reader:
            for event in reader:
                if getattr(event, "table", None) is not None and hasattr(event, "rows"):
                    decoded += len(event.rows)
                    if decoded >= _ROW_LIMIT:
                        break
    except binlogkit.BinlogError:
        pass  # a deliberately broken file stops here; the values before were checked
    assert not failures, failures[:5]
