"""Real binlogs damaged on purpose: every command ends, with one error line or the output."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest
from cli_run import invoke
from corpus_walk import read, walk

ROWS_V1 = "blackbeam+rust_mysql_common/test-data/binlogs/mariadb-bin.000001"
WRITE_ROWS_V1 = 23


def _fix_crc32(data: bytearray, offset: int, size: int) -> None:
    struct.pack_into("<I", data, offset + size - 4, zlib.crc32(data[offset : offset + size - 4]))


def zeroed_bitmap_file(tmp_path: Path) -> Path:
    """The corpus file up to its first WRITE_ROWS_V1 event, whose columns-present bitmap is zero."""
    data = bytearray(read(ROWS_V1))
    event = next(e for e in walk(bytes(data)).events if e.type_code == WRITE_ROWS_V1)
    body = event.offset + 19 + 8  # after the common header, the table id and the flags
    width = data[body]
    assert width < 251  # a one-byte column count
    data[body + 1 : body + 1 + (width + 7) // 8] = bytes((width + 7) // 8)
    _fix_crc32(data, event.offset, event.size)
    path = tmp_path / "zeroed-bitmap.bin"
    path.write_bytes(data[: event.end])
    return path


@pytest.mark.parametrize(
    "args",
    [
        ["dump"],
        ["dump", "-v"],
        ["dump", "-vv"],
        ["dump", "-v", "--flavor", "mysql"],
        ["dump", "-B", "-v"],
        ["rows"],
    ],
)
def test_zeroed_columns_bitmap_ends(corpus_dir: Path, tmp_path: Path, args: list[str]) -> None:
    run = invoke(*args, str(zeroed_bitmap_file(tmp_path)), seconds=5)
    assert run.failed_cleanly() is None, run.failed_cleanly()
    assert "zeroed-bitmap.bin" in run.stderr
