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
from pathlib import Path
from typing import Any

import pytest
from corpus_files import CORPUS
from corpus_walk import (
    corpus_files,
    decode_up_to_damage,
    reference_dump,
    reference_dump_path,
    reference_dump_rc,
)
from mysqlbinlog_dump import (
    DumpRow,
    DumpValue,
    dump_rows,
    parse_dump,
    printed_value,
    row_statements,
)

from binlogkit import BinlogDecoder, encode_event
from binlogkit.binlog.constants import ColumnType as CT
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.events import EVENT_CODECS, SkippedEvent
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.binlog.events.table_map import (
    TableMapEvent,
    decode_optional_field,
    encode_optional_field,
    metadata_rules,
    split_optional_metadata,
)
from binlogkit.binlog.framing import Frame
from binlogkit.binlog.mariadb_compression import compress
from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.errors import DecodeError

pytestmark = pytest.mark.corpus

FILES = corpus_files()
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
    out = []
    for event, frame in decode_up_to_damage(name, BinlogDecoder(file=name, options=options)):
        if isinstance(event, SkippedEvent):
            assert event.header.type_code not in TABLE_EVENT_CODES, event.error
        if isinstance(event, TableMapEvent | RowsEvent) and frame is not None:
            out.append((event, frame))
    return tuple(out)


# --- what mariadb-binlog could not print -------------------------------------------------------


def _dump_failed(name: str) -> bool:
    """Whether mariadb-binlog -vv exited non-zero on this file (its NOTE.txt says so)."""
    return reference_dump_rc(name) not in (None, 0)


def undecodable_allowed(name: str, offset: int) -> bool:
    """A rows event may fail to decode only where mariadb-binlog failed too, before printing it.

    (MariaDB before mysql56_temporal_format logged TIME(n), DATETIME(n) and
    TIMESTAMP(n) under the old types without their width: nobody can read them.)
    """
    return (
        reference_dump_path(name) is not None
        and _dump_failed(name)
        and offset not in dumped_offsets(name)
    )


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
                assert compress(event.rows_data) == event.data, f"{where}: recompressed"


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
        rules = metadata_rules(frame.fmt.server_version)
        numeric = sum(1 for c in cols if c.binlog_type in rules.numeric)
        character = sum(1 for c in cols if c.type in rules.character)
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


@functools.cache
def dumped_statements(name: str) -> dict[tuple[int, ...], list[DumpRow]]:
    """Offsets of a statement's rows events → its row statements (mariadb-binlog -vv dump)."""
    groups: dict[tuple[int, ...], list[DumpRow]] = {}
    for row in dump_rows(parse_dump(reference_dump(name))):
        groups.setdefault(row.group, []).append(row)
    return groups


def dumped_offsets(name: str) -> set[int]:
    return {offset for group in dumped_statements(name) for offset in group}


def _compare_image(
    where: str,
    image: dict[str, Any] | None,
    dumped: dict[int, DumpValue] | None,
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
        printed, comment = dumped[col.index + 1]
        if comment:  # "TYPE meta=M nullable=N is_null=B"
            words = comment.decode("latin-1").split()
            facts = dict(part.split("=", 1) for part in words if "=" in part)
            assert int(facts["meta"]) == col.meta, f"{where} @{col.index + 1}: meta"
            assert facts["nullable"] == str(int(col.nullable)), f"{where} @{col.index + 1}"
            assert facts["is_null"] == str(int(value is None)), f"{where} @{col.index + 1}"
        if printed_value(col, value) != printed:
            mismatches.append(f"{where} @{col.index + 1} ({key}): {value!r} vs {printed[:80]!r}")


def compare_rows(where: str, event: RowsEvent, stmts: list[DumpRow], mismatches: list[str]) -> None:
    assert event.table is not None
    name = f"`{event.table.schema}`.`{event.table.table_name}`"
    table = name.encode("utf-8", "surrogateescape")  # as the dump's bytes
    assert len(event.rows) == len(stmts), f"{where}: row count"
    verb = {(False, True): "INSERT", (True, True): "UPDATE", (True, False): "DELETE"}[
        (event.has_before, event.has_after)
    ]
    for n, (row, stmt) in enumerate(zip(event.rows, stmts, strict=True)):
        here = f"{where} row {n + 1}"
        assert (stmt.verb, stmt.table) == (verb, table), here
        _compare_image(here, row.before, stmt.before, event.table.columns, mismatches)
        _compare_image(here, row.after, stmt.after, event.table.columns, mismatches)


DUMPED = [name for name in FILES if reference_dump_path(name) is not None]


@pytest.mark.parametrize("name", DUMPED)
def test_rows_match_mariadb_binlog_dump(corpus_dir: Path, name: str) -> None:
    expected = dumped_statements(name)
    last_of_group = {group[-1]: group for group in expected}
    dumped = dumped_offsets(name)
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
    text = (CORPUS / VERBOSE_RESULT).read_bytes()
    sections: dict[str, list[DumpRow]] = {}
    name = None
    block: list[bytes] = []
    for line in text.splitlines():
        if line.startswith(b"Verbose statements from : "):
            name = line.split(b": ", 1)[1].decode()
        elif line.startswith(b"### ") and name is not None:
            block.append(line)
        elif line.startswith(b"drop table raw_binlog_rows") and name is not None:
            sections.setdefault(name, []).extend(row_statements(block))
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
