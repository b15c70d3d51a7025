"""Typed rows of the real corpus: every field's ``raw`` is the very bytes its row image holds.

Each row image of every rows event (but the pre-GA ones, whose images start
with record NULL bytes, and JSON diffs, which hold no plain value) is walked
in the event's rows section, in natural and raw mode: its NULL bitmap must
mark the fields that are NULL (the unused bits are the server's padding),
then the ``raw`` bytes of the others must follow one another to its end.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus_walk import LOCAL_MARIADB, corpus_files, decode_up_to_damage, manifest_row

from binlogkit import BinlogDecoder
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.errors import DecodeError
from binlogkit.pipeline.rowset import RowEventSet, RowOfFields

pytestmark = pytest.mark.corpus


def walk(data: bytes, pos: int, row: RowOfFields, where: str) -> int:
    """Check the image of ``row`` at ``data[pos:]``; the offset after it."""
    size = (len(row) + 7) // 8
    bitmap = int.from_bytes(data[pos : pos + size], "little")
    nulls = sum(1 << n for n, value in enumerate(row) if value.is_null)
    assert bitmap & ((1 << len(row)) - 1) == nulls, where
    pos += size
    for value in row:
        raw = value.raw
        if raw is not None:
            assert data[pos : pos + len(raw)] == raw, f"{where}, column {value.name}"
            pos += len(raw)
    return pos


ROW_FILES = [
    name
    for name in corpus_files()
    if name.startswith(LOCAL_MARIADB)
    or any(kind in manifest_row(name).get("events", "") for kind in ("_ROWS", "PAYLOAD"))
]
"""The files with rows events, compressed ones too (the manifest counts each file's events by
type)."""


@pytest.mark.parametrize("name", ROW_FILES)
def test_raw_bytes_rebuild_the_rows_section(corpus_dir: Path, name: str) -> None:
    checked = 0
    for raw_values in (False, True):
        options = DecodeOptions(
            raw_values=raw_values, verify_checksum=False, on_corrupt="skip", on_unknown="pass"
        )
        for event, _ in decode_up_to_damage(name, BinlogDecoder(file=name, options=options)):
            if not isinstance(event, RowsEvent) or event.legacy or event.partial:
                continue
            try:
                changes = list(RowEventSet(event))
            except DecodeError:
                continue  # rows nobody can read (rows_corpus checks which)
            where = f"{name} at {event.header.offset}"
            data, pos = event.rows_data, 0
            for change in changes:
                for row in (change.before, change.after):
                    if row is not None:
                        pos = walk(data, pos, row, where)
            assert pos == len(data), where
            checked += len(changes)
    if checked == 0:
        pytest.skip("no row-format rows in this file")
