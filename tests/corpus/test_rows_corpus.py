"""TABLE_MAP and rows events of the real corpus, checked against what the servers' tools print.

- Every TABLE_MAP and rows event re-encodes byte-exact; every rows section is
  written back byte-exact from its decoded values (in natural and raw mode);
  MariaDB's compressed rows compress back to the very bytes the server wrote.
- The optional metadata of every table map follows the servers' per-column
  rules (one signedness bit per numeric column, one charset per character
  column, ...), and each of its fields re-encodes from its parsed value.
- ``mariadb-binlog -vv`` output (``local-mariadb-10.11/*/*.decoded.txt``):
  every rows event at the offset the dump names has the same table, the same
  row count, the same columns in each image, the same NULLs, the metadata
  and nullability the dump prints per column, and the same values as the
  dump prints them.
- ``mysqlbinlog -vv`` output in mysql-test's binlog_row_mysqlbinlog_verbose
  result: the same statements, in order, for its four NDB binlogs.
"""

from __future__ import annotations

import functools
import gzip
import math
import re
from collections import deque
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from corpus_files import CORPUS
from corpus_walk import corpus_files, damage_of, read

from binlogkit import BinlogDecoder, encode_event
from binlogkit.binlog.constants import ColumnType as CT
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.events import EVENT_CODECS, SkippedEvent
from binlogkit.binlog.events.rows import RowsEvent, compress_rows
from binlogkit.binlog.events.table_map import (
    CHARACTER_TYPES,
    NUMERIC_TYPES,
    TableMapEvent,
    decode_optional_field,
    encode_optional_field,
    split_optional_metadata,
)
from binlogkit.binlog.framing import Frame, Signal
from binlogkit.binlog.rows.charsets import text_codec
from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.binlog.rows.types import Compressed, Geometry, InvalidDate, InvalidDateTime
from binlogkit.errors import BinlogError, DecodeError

pytestmark = pytest.mark.corpus

FILES = corpus_files()
LOCAL = "local-mariadb-10.11"
VERBOSE_RESULT = (
    "expected/enhancedformysql+mysql-8.0.40/mysql-test/suite/binlog/r/"
    "binlog_row_mysqlbinlog_verbose.result"
)
NDB_DIR = "enhancedformysql+mysql-8.0.40/mysql-test/suite/binlog/std_data"


TABLE_EVENT_CODES = frozenset(
    code
    for cls in (TableMapEvent, RowsEvent)
    for code in EVENT_CODECS
    if issubclass(EVENT_CODECS[code], cls)
)


@functools.lru_cache(maxsize=4)
def table_events(name: str, raw_values: bool = False) -> tuple[tuple[Any, Frame], ...]:
    """The TABLE_MAP and rows events of a file (up to its deliberate damage), with frames.

    Checksums and undecodable events of other types are other tests' business.
    """
    options = DecodeOptions(
        raw_values=raw_values, verify_checksum=False, on_corrupt="skip", on_unknown="pass"
    )
    dec = BinlogDecoder(file=name, options=options)
    dec.receive_data(read(name))
    dec.receive_data(b"")
    out = []
    while True:
        try:
            event = dec.next_event()
        except BinlogError as err:  # only where the file is cut, encrypted or has no format
            damage = damage_of(name)
            assert damage is not None and damage.offset == err.offset, err
            break
        if isinstance(event, Signal):
            break
        if isinstance(event, SkippedEvent):
            assert event.header.type_code not in TABLE_EVENT_CODES, event.error
        if isinstance(event, TableMapEvent | RowsEvent) and dec.last_frame is not None:
            out.append((event, dec.last_frame))
    return tuple(out)


# --- what mariadb-binlog could not print -------------------------------------------------------


def _dump_path(name: str) -> Path | None:
    if not name.startswith(LOCAL):
        return None
    for suffix in (".decoded.txt", ".decoded.txt.gz"):
        path = CORPUS / (name + suffix)
        if path.is_file():
            return path
    return None


def _dump_failed(name: str) -> bool:
    """Whether mariadb-binlog -vv exited non-zero on this file (its NOTE.txt says so)."""
    note = (CORPUS / name).parent / "NOTE.txt"
    file_name = Path(name).name
    for line in note.read_text(errors="replace").splitlines():
        if line.startswith(file_name + ":"):
            return "rc=0" not in line
    return False


def undecodable_allowed(name: str, offset: int) -> bool:
    """A rows event may fail to decode only where mariadb-binlog failed too, before printing it.

    (MariaDB before mysql56_temporal_format logged TIME(n), DATETIME(n) and
    TIMESTAMP(n) under the old types without their width: nobody can read them.)
    """
    dump = _dump_path(name)
    return dump is not None and _dump_failed(name) and offset not in dumped_offsets(dump)


# --- byte-exact everything ---------------------------------------------------------------------


@pytest.mark.parametrize("name", FILES)
def test_table_and_rows_events_reencode(corpus_dir: Path, name: str) -> None:
    for raw_values in (False, True):
        for event, frame in table_events(name, raw_values):
            where = f"{name} at {frame.header.offset} ({event.type_name})"
            assert encode_event(event, frame.fmt) == frame.raw, where
            if not isinstance(event, RowsEvent):
                continue
            try:
                rows = event.rows
            except DecodeError:
                assert undecodable_allowed(name, frame.header.offset), where
                continue
            rebuilt = event.with_rows(rows)
            assert rebuilt.rows_data == event.rows_data, f"{where}: rows from values"
            assert encode_event(rebuilt, frame.fmt) == frame.raw, where
            if event.compressed:
                assert compress_rows(event.rows_data) == event.data, f"{where}: recompressed"


@pytest.mark.parametrize("name", FILES)
def test_optional_metadata_follows_the_column_rules(corpus_dir: Path, name: str) -> None:
    for event, frame in table_events(name):
        if not isinstance(event, TableMapEvent):
            continue
        where = f"{name} at {frame.header.offset} ({event.qualified_name})"
        for field_type, data in split_optional_metadata(event.optional_metadata):
            value = decode_optional_field(field_type, data)
            assert encode_optional_field(field_type, value) == data, f"{where}: field {field_type}"
        if not event.optional_metadata:
            continue
        cols = event.columns
        meta = event.metadata_fields
        n = len(cols)
        numeric = sum(1 for c in cols if c.binlog_type in NUMERIC_TYPES)
        character = sum(1 for c in cols if c.type in CHARACTER_TYPES)
        enum_set = sum(1 for c in cols if c.type in (CT.ENUM, CT.SET))

        def count(real_type: int, cols: tuple[ColumnInfo, ...] = cols) -> int:
            return sum(1 for c in cols if c.type == real_type)

        # A charset field exactly when there are character columns (GEOMETRY counts:
        # MariaDB logs one for a table of only geometry columns).
        has_charsets = meta.default_charset is not None or meta.column_charsets is not None
        assert has_charsets == (character > 0), where
        if meta.signedness is not None:
            assert len(meta.signedness) == 8 * ((numeric + 7) // 8), where
        if meta.column_charsets is not None:
            assert len(meta.column_charsets) == character, where
        if meta.default_charset is not None:
            assert all(k < character for k, _ in meta.default_charset[1]), where
        if meta.enum_set_column_charsets is not None:
            assert len(meta.enum_set_column_charsets) == enum_set, where
        if meta.enum_set_default_charset is not None:
            assert all(k < enum_set for k, _ in meta.enum_set_default_charset[1]), where
        if meta.column_names is not None:
            assert len(meta.column_names) == n, where
        if meta.enum_values is not None:
            assert len(meta.enum_values) == count(CT.ENUM), where
        if meta.set_values is not None:
            assert len(meta.set_values) == count(CT.SET), where
        if meta.geometry_types is not None:
            assert len(meta.geometry_types) == count(CT.GEOMETRY), where
        if meta.vector_dimensions is not None:
            assert len(meta.vector_dimensions) == count(CT.VECTOR), where
        if meta.column_visibility is not None:
            assert len(meta.column_visibility) == 8 * ((n + 7) // 8), where
        assert all(index < n for index, _ in meta.primary_key), where
        assert meta.unknown == (), where


# --- mariadb-binlog -vv ------------------------------------------------------------------------


@dataclass
class DumpRow:
    """One ``### INSERT/UPDATE/DELETE`` statement: the table and its images."""

    verb: str
    table: str
    before: dict[int, tuple[str, str]] | None = None
    after: dict[int, tuple[str, str]] | None = None
    images: list[dict[int, tuple[str, str]]] = field(default_factory=list)


_EVENT_HEADER = re.compile(r"^#\d{6} +\d")
_ROWS_HEADER = re.compile(r"^#\d{6} .*\t(Write|Update|Delete)(_compressed)?_rows(_v1)?: table id")
_VERBS = {"INSERT INTO ": "INSERT", "UPDATE ": "UPDATE", "DELETE FROM ": "DELETE"}


def _parse_statements(lines: list[str], sink: dict[Any, list[DumpRow]], key: Any) -> None:
    """Add the ### statements of ``lines`` (one value per line: @N=value /* comment */)."""
    stmts = sink.setdefault(key, [])
    target: dict[int, tuple[str, str]] | None = None
    for line in lines:
        body = line[4:]
        for prefix, verb in _VERBS.items():
            if body.startswith(prefix):
                stmt = DumpRow(verb, body[len(prefix) :])
                stmts.append(stmt)
                target = None
                break
        else:
            if body == "WHERE":
                stmt.before = target = {}
            elif body == "SET":
                stmt.after = target = {}
            elif body.startswith("  @"):
                assert target is not None, line
                text = body[3:]
                number, _, rest = text.partition("=")
                cut = rest.rfind(" /* ")
                value, comment = (rest[:cut], rest[cut + 4 :]) if cut >= 0 else (rest, "")
                target[int(number)] = (value.rstrip(), comment)


@functools.cache
def parse_mariadb_dump(path: Path) -> dict[tuple[int, ...], list[DumpRow]]:
    """Offsets of a statement's rows events → their statements, from a mariadb-binlog -vv dump.

    The tool prints the rows of a statement's rows events together, after the
    last of them (the one with STMT_END_F); ``# at`` lines precede the event
    header lines in the same order.
    """
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    text = data.decode("latin-1")  # values are raw bytes: keep each one as one char
    groups: dict[tuple[int, ...], list[DumpRow]] = {}
    pending: deque[int] = deque()
    group: list[int] = []
    block: list[str] = []
    for line in text.split("\n"):
        if line.startswith("### "):
            block.append(line)
            continue
        if block:
            _parse_statements(block, groups, tuple(group))
            block, group = [], []
        if line.startswith("# at "):
            pending.append(int(line[5:]))
        elif _EVENT_HEADER.match(line):
            offset = pending.popleft()
            if _ROWS_HEADER.match(line):
                group.append(offset)
    if block:
        _parse_statements(block, groups, tuple(group))
    return groups


def dumped_offsets(path: Path) -> set[int]:
    return {offset for group in parse_mariadb_dump(path) for offset in group}


def _quoted(data: bytes) -> str:
    """A string as mysqlbinlog prints it: bytes below 0x20 as \\xNN, the rest as they are."""
    out = "".join(chr(b) if b > 0x1F else f"\\x{b:02x}" for b in data)
    return f"'{out}'"


def _fraction(micro: int, digits: int) -> str:
    return f".{micro:06d}"[: digits + 1] if digits else ""


def _ints(text: str) -> tuple[int, int | None]:
    """'-1 (255)' → (-1, 255); '7' → (7, None)."""
    signed, _, unsigned = text.partition(" (")
    return int(signed), int(unsigned[:-1]) if unsigned else None


def _text_bytes(value: Any, col: ColumnInfo) -> bytes:
    if isinstance(value, str):
        codec = text_codec(col.charset)
        assert codec is not None, f"column {col.key}: str value without a text charset"
        return codec.encode(value)
    assert isinstance(value, bytes), f"column {col.key}: {value!r}"
    return value


def value_matches(value: Any, text: str, col: ColumnInfo) -> bool:
    """Whether mariadb-binlog/mysqlbinlog -vv print ``value`` of ``col`` as ``text``."""
    if value is None:
        return text == "NULL"
    t = col.type
    if t == CT.BIT:
        nbits = (col.meta >> 8) * 8 + (col.meta & 0xFF)
        return text == f"b'{value:0{nbits}b}'"
    if t == CT.SET:
        mask = value
        if not isinstance(value, int):
            members = [_text_bytes(m, col) for m in value]
            values = col.set_values or ()
            mask = sum(1 << values.index(m) for m in members)
        stored = mask.to_bytes(col.meta & 0xFF, "little")  # printed in stored byte order
        return text == "b'" + "".join(f"{byte:08b}" for byte in stored) + "'"
    if t == CT.ENUM:
        if isinstance(value, int):
            return text == str(value)
        member = _text_bytes(value, col)
        values = col.enum_values or ()
        index = values.index(member) + 1 if member in values else 0
        return text == str(index)
    if t in (CT.TINY, CT.SHORT, CT.INT24, CT.LONG, CT.LONGLONG):
        signed, unsigned = _ints(text)
        if col.unsigned:
            return value == (signed if unsigned is None else unsigned)
        return value == signed
    if t == CT.YEAR:  # the tools print 1900 + the stored byte, so 1900 for the zero year
        return isinstance(value, int) and text == str(value or 1900)
    if t == CT.NEWDECIMAL:
        return Decimal(text).as_tuple() == Decimal(value).as_tuple()
    if t == CT.FLOAT:
        return text.strip() == f"{value:g}" or (math.isnan(value) and "nan" in text)
    if t == CT.DOUBLE:
        return text == f"{value:.20g}"
    if t in (CT.DATE, CT.NEWDATE):
        if isinstance(value, date | InvalidDate):
            return text == f"'{value.year:04d}:{value.month:02d}:{value.day:02d}'"
        return False
    if t in (CT.DATETIME, CT.DATETIME2):
        if not isinstance(value, datetime | InvalidDateTime):
            return False
        digits = col.meta if t == CT.DATETIME2 else 0
        stamp = (
            f"{value.year:04d}-{value.month:02d}-{value.day:02d} "
            f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
        )
        return text == f"'{stamp}{_fraction(value.microsecond, digits)}'"
    if t in (CT.TIMESTAMP, CT.TIMESTAMP2):
        digits = col.meta if t == CT.TIMESTAMP2 else 0
        if isinstance(value, InvalidDateTime):
            seconds, micro = 0, value.microsecond
        elif isinstance(value, datetime):
            seconds, micro = int(value.timestamp()), value.microsecond
        else:
            return False
        return text == f"{seconds}{_fraction(micro, digits)}"
    if t in (CT.TIME, CT.TIME2):
        if not isinstance(value, timedelta):
            return False
        digits = col.meta if t == CT.TIME2 else 0
        total = abs(value)
        micro = total.microseconds
        seconds = total.days * 86400 + total.seconds
        sign = "-" if value < timedelta(0) else ""
        clock = f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        return text == f"'{sign}{clock}{_fraction(micro, digits)}'"
    if isinstance(value, Geometry):
        return text == _quoted(value.to_bytes())
    if isinstance(value, Compressed):
        return text == _quoted(value.stored)
    if isinstance(value, str | bytes):
        stored = _text_bytes(value, col)
        if t == CT.STRING and isinstance(value, bytes):
            # BINARY(n) is logged without its trailing zero bytes; a value may have them back.
            stored = stored.rstrip(b"\0")
        return text == _quoted(stored)
    return False


def _compare_image(
    where: str,
    image: dict[str, Any] | None,
    dumped: dict[int, tuple[str, str]] | None,
    columns: tuple[ColumnInfo, ...],
    mismatches: list[str],
) -> None:
    assert (image is None) == (dumped is None), where
    if image is None or dumped is None:
        return
    by_key = {c.key: c for c in columns}
    present = {by_key[key].index + 1 for key in image}
    assert present == set(dumped), f"{where}: columns {sorted(present)} vs {sorted(dumped)}"
    for key, value in image.items():
        col = by_key[key]
        text, comment = dumped[col.index + 1]
        if comment:  # "TYPE meta=M nullable=N is_null=B"
            facts = dict(part.split("=", 1) for part in comment.split() if "=" in part)
            assert int(facts["meta"]) == col.meta, f"{where} @{col.index + 1}: meta"
            assert facts["nullable"] == str(int(col.nullable)), f"{where} @{col.index + 1}"
            assert facts["is_null"] == str(int(value is None)), f"{where} @{col.index + 1}"
        if not value_matches(value, text, col):
            mismatches.append(f"{where} @{col.index + 1} ({key}): {value!r} vs {text[:80]!r}")


def compare_rows(where: str, event: RowsEvent, stmts: list[DumpRow], mismatches: list[str]) -> None:
    assert event.table is not None
    name = f"`{event.table.schema}`.`{event.table.table_name}`"
    table = name.encode("utf-8", "surrogateescape").decode("latin-1")  # as the dump's bytes
    assert len(event.rows) == len(stmts), f"{where}: row count"
    verb = {(False, True): "INSERT", (True, True): "UPDATE", (True, False): "DELETE"}[
        (event.has_before, event.has_after)
    ]
    for n, (row, stmt) in enumerate(zip(event.rows, stmts, strict=True)):
        here = f"{where} row {n + 1}"
        assert (stmt.verb, stmt.table) == (verb, table), here
        _compare_image(here, row.before, stmt.before, event.table.columns, mismatches)
        _compare_image(here, row.after, stmt.after, event.table.columns, mismatches)


DUMPED = [name for name in FILES if _dump_path(name) is not None]


@pytest.mark.parametrize("name", DUMPED)
def test_rows_match_mariadb_binlog_dump(corpus_dir: Path, name: str) -> None:
    dump = _dump_path(name)
    assert dump is not None
    expected = parse_mariadb_dump(dump)
    last_of_group = {group[-1]: group for group in expected}
    dumped = dumped_offsets(dump)
    compared: list[tuple[int, ...]] = []
    mismatches: list[str] = []
    statement: list[RowsEvent] = []
    for event, frame in table_events(name):
        offset = frame.header.offset
        if not isinstance(event, RowsEvent):
            continue
        if offset not in dumped:
            assert _dump_failed(name), f"{name}: rows event at {offset} missing from the dump"
            continue
        statement.append(event)
        group = last_of_group.get(offset)
        if group is None:
            continue
        assert tuple(e.header.offset for e in statement) == group
        stmts = expected[group]
        for ev in statement:
            compare_rows(f"{name} at {ev.header.offset}", ev, stmts[: len(ev.rows)], mismatches)
            stmts = stmts[len(ev.rows) :]
        assert stmts == [], f"{name} at {offset}: the dump has more rows"
        compared.append(group)
        statement = []
    assert sorted(compared) == sorted(expected)
    assert mismatches == []


# --- mysqlbinlog -vv of mysql-test ----------------------------------------------------------


@functools.cache
def parse_verbose_result() -> dict[str, list[DumpRow]]:
    """binlog file name → its statements, from binlog_row_mysqlbinlog_verbose.result."""
    text = (CORPUS / VERBOSE_RESULT).read_text()
    sections: dict[str, list[DumpRow]] = {}
    name = None
    block: list[str] = []
    for line in text.splitlines():
        if line.startswith("Verbose statements from : "):
            name = line.split(": ", 1)[1]
        elif line.startswith("### ") and name is not None:
            block.append(line)
        elif line.startswith("drop table raw_binlog_rows") and name is not None:
            _parse_statements(block, sections, name)
            block, name = [], None
    return sections


NDB_FILES = [
    "write-partial-row.binlog",
    "write-full-row.binlog",
    "update-partial-row.binlog",
    "update-full-row.binlog",
]


@pytest.mark.parametrize("file_name", NDB_FILES)
def test_rows_match_mysqlbinlog_verbose_result(corpus_dir: Path, file_name: str) -> None:
    expected = parse_verbose_result()[file_name]
    name = f"{NDB_DIR}/{file_name}"
    rows_events = [e for e, _ in table_events(name) if isinstance(e, RowsEvent)]
    mismatches: list[str] = []
    position = 0
    for event in rows_events:
        stmts = expected[position : position + len(event.rows)]
        compare_rows(f"{name} at {event.header.offset}", event, stmts, mismatches)
        position += len(event.rows)
    assert position == len(expected)
    assert mismatches == []
