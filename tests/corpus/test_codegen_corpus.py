"""Generated row readers and writers against the plain row plans, on every row image of the
corpus.

For each rows event of each file, in natural and raw mode, every image is
read twice from the same offset: by the image plan's plain loop and by its
generated reader (see :mod:`binlogkit.binlog.rows.codegen`). Both must give
the same row (same values, same types) and the same next offset, or the
same error. The rows cover the servers' real images: FULL and MINIMAL,
NULLs, pre-GA record NULL bytes, every column type the corpus holds.

And every decoded row written back by the image plans' generated writers
(:mod:`binlogkit.binlog.rows.image_writer`), NULL bitmaps padded as the
server padded them, gives the server's rows section byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from corpus_walk import LOCAL_MARIADB, corpus_files, decode_up_to_damage, manifest_row

from binlogkit import BinlogDecoder
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.binlog.rows.codegen import ImageReader
from binlogkit.binlog.rows.image_writer import ImageWriter
from binlogkit.binlog.rows.plan import ImagePlan, RowPlan

pytestmark = pytest.mark.corpus

_IMAGE_LIMIT = 4000
"""Images compared per file and mode, to keep the test quick on the few big files."""


def _row_binlogs() -> list[str]:
    return [
        name
        for name in corpus_files()
        if re.search(r"ROWS", manifest_row(name).get("events", ""))
        or (name.startswith(f"{LOCAL_MARIADB}/") and "/encrypted/" not in name)
    ]


def _outcome(read: ImageReader, data: bytes, pos: int) -> tuple[Any, ...]:
    try:
        row, end = read(data, pos)
    except Exception as exc:  # any error must be the very same error
        return ("error", type(exc).__name__, str(exc))
    return ("row", repr(row), [type(v) for v in row.values()], end)


def _rows_events(name: str, options: DecodeOptions) -> Iterator[tuple[RowsEvent, RowPlan]]:
    """The file's rows events of known tables (but PARTIAL_UPDATE_ROWS), with their plans."""
    for event, _frame in decode_up_to_damage(name, BinlogDecoder(file=name, options=options)):
        if isinstance(event, RowsEvent) and event.table is not None and not event.partial:
            yield event, event.table.plan(options)


@pytest.mark.parametrize("raw", [False, True], ids=["values", "raw"])
@pytest.mark.parametrize("name", _row_binlogs())
def test_generated_readers_equal_the_plain_plans(corpus_dir: Path, name: str, raw: bool) -> None:
    options = DecodeOptions(raw_values=raw)
    readers: dict[ImagePlan, ImageReader] = {}
    images = 0
    for event, plan in _rows_events(name, options):
        try:
            data = event.rows_data
        except Exception:  # a damaged compressed section: the rows tests cover it
            continue
        before, after = event._bitmaps()
        order: list[ImagePlan] = [
            plan.image(bitmap, event.width, event.legacy)
            for bitmap in (before, after)
            if bitmap is not None
        ]
        pos = 0
        while pos < len(data) and images < _IMAGE_LIMIT:
            for image in order:
                reader = readers.get(image)
                if reader is None:
                    reader = readers[image] = image.generated_reader()
                plain = _outcome(image.decode, data, pos)
                assert _outcome(reader, data, pos) == plain, (event.header.offset, pos)
                images += 1
                pos = len(data) if plain[0] == "error" else plain[3]
                if pos >= len(data):
                    break
        if images >= _IMAGE_LIMIT:
            break


@pytest.mark.parametrize("raw", [False, True], ids=["values", "raw"])
@pytest.mark.parametrize("name", _row_binlogs())
def test_generated_writers_write_the_servers_rows(corpus_dir: Path, name: str, raw: bool) -> None:
    options = DecodeOptions(raw_values=raw)
    writers: dict[ImagePlan, ImageWriter] = {}
    images = 0
    for event, plan in _rows_events(name, options):
        if event.legacy:  # pre-GA record NULL bytes: the plain encoder's alone
            continue
        try:
            data, changes = event.rows_data, event.rows
        except Exception:  # damaged or undecodable: the rows tests cover it
            continue
        before, after = event._bitmaps()
        pad = plan.null_padding(data, event.width, before, after)
        out = bytearray()
        for change in changes:
            for bitmap, row in ((before, change.before), (after, change.after)):
                if bitmap is None:
                    continue
                assert row is not None
                image = plan.image(bitmap, event.width)
                writer = writers.get(image)
                if writer is None:
                    writer = writers[image] = image.generated_writer()
                writer(row, out, pad)
                images += 1
        assert bytes(out) == data, event.header.offset
        if images >= _IMAGE_LIMIT:
            break
