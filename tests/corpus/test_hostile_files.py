"""Real binlogs damaged on purpose: every command ends, with one error line or the output."""

from __future__ import annotations

import struct
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from cli_run import invoke
from corpus_walk import read, walk

from binlogkit import BinlogDecoder, encode_event
from binlogkit.binlog.events.payload import TransactionPayloadEvent
from binlogkit.binlog.framing import Signal
from binlogkit.errors import DecodeError

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


COMPRESSED = "blackbeam+rust_mysql_common/test-data/binlogs/transaction_compression.000001"
BOMB_SIZE = 256 << 20


def _zstd_bomb(size: int) -> bytes:
    """A zstd frame of ``size`` zero bytes (a few kilobytes), made without holding them."""
    import zstandard

    stream = zstandard.ZstdCompressor().compressobj()
    zeros = bytes(1 << 20)
    return b"".join(stream.compress(zeros) for _ in range(size >> 20)) + stream.flush()


def bomb_file(tmp_path: Path) -> tuple[Path, TransactionPayloadEvent]:
    """The corpus file up to its TRANSACTION_PAYLOAD, whose payload inflates to 256 MiB.

    The event still declares the size of the original transaction.
    """
    data = read(COMPRESSED)
    dec = BinlogDecoder(file=COMPRESSED)
    dec.receive_data(data)
    while not isinstance(event := dec.next_event(), TransactionPayloadEvent):
        assert not isinstance(event, Signal)
    assert dec.last_frame is not None and event.uncompressed_size
    bomb = replace(event, payload=_zstd_bomb(BOMB_SIZE), header_fields=None)
    path = tmp_path / "bomb.bin"
    path.write_bytes(data[: event.header.offset] + encode_event(bomb, dec.last_frame.fmt))
    return path, bomb


def test_zstd_bomb_stops_at_the_declared_size(corpus_dir: Path, tmp_path: Path) -> None:
    path, bomb = bomb_file(tmp_path)
    with pytest.raises(DecodeError, match=f"past its declared {bomb.uncompressed_size} bytes"):
        bomb.uncompressed()
    for command in ("events", "rows", "dump"):
        run = invoke(command, str(path), seconds=20)
        assert run.failed_cleanly() is None, run.failed_cleanly()
        assert f"offset {bomb.header.offset}" in run.stderr, run.stderr


@pytest.mark.parametrize(
    "name",
    [
        "blackbeam+rust_mysql_common/test-data/binlogs/json-opaque.binlog",  # opaque values
        "avaitla+mysqlbinlog2parquet/test/samples/mysql-bin-changelog.547927",  # an empty value
    ],
)
def test_flashback_sql_of_every_json_value(corpus_dir: Path, name: str) -> None:
    run = invoke("flashback", "--sql", str(corpus_dir / name), seconds=60)
    assert run.exit_code == 0 and run.exception is None, run.stderr or run.exception
    assert b"AS JSON)" in run.stdout


def test_dump_from_inside_a_transaction(corpus_dir: Path) -> None:
    # 1635: the WRITE_ROWS after its transaction's TABLE_MAP; the tools print what follows.
    path = corpus_dir / "local-mariadb-10.11/compressed/mysql-bin.000002"
    run = invoke("dump", "-v", "--start-position", "1635", str(path))
    assert run.exit_code == 0, run.stderr
    assert b"\n### Row event for unknown table #18# Number of rows: 0\n# at 1741\n" in run.stdout
    run = invoke("rows", "--start-position", "1635", str(path))
    assert run.failed_cleanly() is None and "no TABLE_MAP event for table id 18" in run.stderr


SIZES = "local-mariadb-10.11/compressed/mysql-bin.000002"


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda size: size | 1 << 31, "above the 1073741824 bytes a server writes"),
        (lambda size: size + 65536, "runs past the end of the input"),
        (lambda size: size + 40, "CRC32 mismatch"),  # inside the file: the checksum tells
    ],
)
def test_a_corrupt_event_size(corpus_dir: Path, tmp_path: Path, damage: Any, message: str) -> None:
    data = bytearray(read(SIZES))
    events = walk(bytes(data)).events
    event = events[13]
    struct.pack_into("<I", data, event.offset + 9, damage(event.size))
    path = tmp_path / "sized.bin"
    path.write_bytes(data)
    stopped = invoke("events", str(path))
    assert stopped.failed_cleanly() is None and message in stopped.stderr, stopped.stderr
    assert f"offset {event.offset}" in stopped.stderr
    skipped = invoke("events", "--skip-corrupt", str(path))
    assert skipped.exit_code == 0, skipped.stderr
    assert skipped.stdout.count(b"\n") == 1 + len(events)  # the header line, every event
