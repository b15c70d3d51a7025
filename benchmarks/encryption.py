"""Writing and reading through MariaDB binlog encryption next to the plain file.

The binlog of ``benchmarks/write.py`` (``200000 x --scale`` row inserts) is
written back event by event plain and through the encrypting stage (AES-CBC
and AES-CTR, what the server's ``file_key_management`` plugin uses), then
each file is read: bytes only (the storage stream, and the decrypting stage
over it) and every event and row value decoded (``binlogkit.open``, with
``key_file`` for the encrypted ones). Each figure is the best of three runs;
MB/s is of the binlog's size.

    .venv/bin/python benchmarks/encryption.py [--scale 1.0]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

from write import best, make_rows, read_rows, write_rows

import binlogkit
from binlogkit.binlog.events import FormatDescriptionEvent
from binlogkit.io.key_files import BinlogEncryption, KeyFile, read_key_file
from binlogkit.io.streams import FileInputStream, SeekableInputStream
from binlogkit.io.streams.decryption import decrypting
from binlogkit.writer import BinlogFileWriter

KEY = bytes(range(32))
CHUNK = 1 << 20


def write_back(source: Path, target: Path, encryption: BinlogEncryption | None) -> None:
    """Write ``source`` again, event by event from the decoder, encrypted or not."""
    with binlogkit.open(source, schema=None) as reader:
        events = iter(reader)
        fde = next(events)
        assert isinstance(fde, FormatDescriptionEvent)
        writer = BinlogFileWriter.create(target, fde, encryption=encryption)
        for event in events:
            writer.write(event)
        writer.close()


def read_bytes(stream: SeekableInputStream) -> int:
    size = 0
    with stream:
        while chunk := stream.read(CHUNK):
            size += len(chunk)
    return size


def read_bytes_of(path: Path) -> int:
    return read_bytes(FileInputStream(path))


def read_decrypted_bytes(path: Path, keys: KeyFile) -> int:
    return read_bytes(decrypting(FileInputStream(path), keys))


def read_rows_decrypted(source: Path, keys: Path) -> int:
    rows = 0
    with binlogkit.open(source, schema=None, key_file=keys) as reader:
        for event in reader:
            for change in getattr(event, "rows", ()):
                rows += 1
                _ = change.after
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="workload size factor")
    args = parser.parse_args()
    count = max(1000, int(200_000 * args.scale))
    base = Path(tempfile.mkdtemp(prefix="bk-crypt-"))
    try:
        keys = base / "keys.txt"
        keys.write_text(f"1;{KEY.hex()}\n")
        key_file = read_key_file(keys)
        source = write_rows(base / "source", make_rows(count))
        mb = source.stat().st_size / 1e6
        plain = base / "plain-bin.000001"
        encrypted = {name: base / f"{name}-bin.000001" for name in ("cbc", "ctr")}
        encryption = {"cbc": BinlogEncryption(KEY, "cbc"), "ctr": BinlogEncryption(KEY, "ctr")}
        work: dict[str, Callable[[str], Callable[[], object]]] = {
            "write back": lambda name: (
                partial(write_back, source, plain, None)
                if name == "plain"
                else partial(write_back, source, encrypted[name], encryption[name])
            ),
            "read bytes": lambda name: (
                partial(read_bytes_of, plain)
                if name == "plain"
                else partial(read_decrypted_bytes, encrypted[name], key_file)
            ),
            "read rows": lambda name: (
                partial(read_rows, plain)
                if name == "plain"
                else partial(read_rows_decrypted, encrypted[name], keys)
            ),
        }
        print(f"binlog of {count} row inserts: {mb:.1f} MB; best of 3 runs")
        print(f"{'':<12}{'':<7}{'s':>8}{'MB/s':>9}{'rows/s':>11}{'x plain':>9}")
        for what, make in work.items():
            plain_s = 0.0
            for name in ("plain", "cbc", "ctr"):
                seconds = best(3, make(name))
                plain_s = plain_s or seconds
                label = "plain" if name == "plain" else f"AES-{name.upper()}"
                rate = f"{mb / seconds:>9.1f}{count / seconds:>11.0f}"
                print(f"{what:<12}{label:<7}{seconds:>8.3f}{rate}{seconds / plain_s:>9.2f}")
        assert read_rows_decrypted(encrypted["ctr"], keys) == count
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
