"""Writing and reading through MariaDB binlog encryption next to the plain file.

The binlog of ``benchmarks/write.py`` (``200000 x --scale`` row inserts) is
written back event by event plain and through the encrypting stage (AES-CBC
and AES-CTR, what the server's ``file_key_management`` plugin uses), then
each file is read: bytes only (the storage stream, and the decrypting stage
over it) and every event and row value decoded (``binlogkit.open``, with
``key_file`` for the encrypted ones). The same for a binlog of small events
(``--small``: by default the corpus' binlog of the sandbox workload, every
column type, one to a few rows per event). Each figure is the best of three
runs (ten for the small binlog); MB/s is of the binlog's size.

    .venv/bin/python benchmarks/encryption.py [--scale 1.0] [--small FILE]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

from write import best, make_rows, read_rows, write_rows

import binlogkit
from binlogkit.binlog.constants import Flavor
from binlogkit.binlog.events import FormatDescriptionEvent
from binlogkit.io.key_files import BinlogEncryption, KeyFile, read_key_file
from binlogkit.io.streams import FileInputStream, SeekableInputStream
from binlogkit.io.streams.decryption import decrypting
from binlogkit.writer import BinlogFileWriter

KEY = bytes(range(32))
SMALL = "local-mariadb-10.11/gtid/mysql-bin.000002"
"""The corpus binlog of the sandbox workload: 357 events of 274 bytes on average."""
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


def compare(source: Path, base: Path, keys: Path, title: str, runs: int) -> None:
    """Write ``source`` back plain and encrypted, read each, print the times side by side."""
    key_file = read_key_file(keys)
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
    count = 0
    print(f"{title}: {mb:.2f} MB; best of {runs} runs")
    print(f"{'':<12}{'':<7}{'s':>8}{'MB/s':>9}{'rows/s':>11}{'x plain':>9}")
    for what, make in work.items():
        plain_s = 0.0
        for name in ("plain", "cbc", "ctr"):
            seconds = best(runs, make(name))
            plain_s = plain_s or seconds
            count = count or read_rows(plain)
            label = "plain" if name == "plain" else f"AES-{name.upper()}"
            rate = f"{mb / seconds:>9.1f}{count / seconds:>11.0f}"
            print(f"{what:<12}{label:<7}{seconds:>8.3f}{rate}{seconds / plain_s:>9.2f}")
    assert read_rows_decrypted(encrypted["cbc"], keys) == count
    assert read_rows_decrypted(encrypted["ctr"], keys) == count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="workload size factor")
    parser.add_argument(
        "--small",
        type=Path,
        default=Path(os.environ.get("BINLOGKIT_CORPUS", "../shared/corpus")) / SMALL,
        help="a binlog of small events, compared the same way (if it exists)",
    )
    args = parser.parse_args()
    count = max(1000, int(200_000 * args.scale))
    base = Path(tempfile.mkdtemp(prefix="bk-crypt-"))
    try:
        keys = base / "keys.txt"
        keys.write_text(f"1;{KEY.hex()}\n")
        source = write_rows(base / "source", make_rows(count), Flavor.MARIADB, False)
        (base / "large").mkdir()
        compare(source, base / "large", keys, f"{count} row inserts, 100 rows per event", 3)
        if args.small.is_file():
            (base / "small").mkdir()
            compare(args.small, base / "small", keys, f"{args.small.name}, small events", 10)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
