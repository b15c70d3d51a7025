"""Write throughput of the binlog writer, next to reading the same file and copying it.

Builds a binlog of ``200000 x --scale`` row inserts into one table (INT,
VARCHAR(20), DECIMAL(10,2), DATETIME(6), BIGINT UNSIGNED; its table map from
the CREATE TABLE text) with :meth:`BinlogWriter.transaction`: 1000 rows per
transaction, 100 per rows event, row values encoded from Python objects. Three
ways: MariaDB plain, MariaDB compressed (``log_bin_compress``: zlib rows
events) and MySQL compressed (zstd TRANSACTION_PAYLOAD per transaction). Then,
on the plain file: writing it back event by event as the decoder gives the
events (no row values touched) and a plain file copy; and reading every row
value of each file with ``binlogkit.open``. Building the Python row values is
not timed. Each figure is the best of three runs; MB/s is of the plain binlog's
size (the same rows in every line), the size column is each file's own.

    .venv/bin/python benchmarks/write.py [--scale 1.0]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import binlogkit
from binlogkit.binlog.constants import Flavor
from binlogkit.binlog.events import FormatDescriptionEvent
from binlogkit.binlog.rows.plan import RowChange
from binlogkit.gtid import MariaGtid
from binlogkit.schema.create import table_from_create
from binlogkit.writer import BinlogFileWriter, BinlogWriter, format_description

TABLE = table_from_create(
    "CREATE TABLE t (id INT NOT NULL PRIMARY KEY, name VARCHAR(20) CHARACTER SET utf8mb4,"
    " amount DECIMAL(10,2), at DATETIME(6), big BIGINT UNSIGNED)",
    "bench",
)
ROWS_PER_TRANSACTION = 1000
WAYS = {
    "MariaDB": (Flavor.MARIADB, False),
    "MariaDB zlib rows": (Flavor.MARIADB, True),
    "MySQL zstd payload": (Flavor.MYSQL, True),
}


def make_rows(count: int) -> list[RowChange]:
    """``count`` inserts of Python values."""
    return [
        RowChange(
            None,
            {
                "id": i,
                "name": f"name {i}",
                "amount": Decimal(i % 100000) / 100,
                "at": datetime(2024, 1, 2, 3, 4, 5, i % 1000000),
                "big": 2**63 + i,
            },
        )
        for i in range(count)
    ]


def write_rows(folder: Path, rows: list[RowChange], flavor: Flavor, compress: bool) -> Path:
    """A binlog of ``rows``, in transactions of ROWS_PER_TRANSACTION rows."""
    with BinlogWriter.create(folder, "bench-bin", fde=format_description(flavor)) as writer:
        table = writer.table_map(TABLE, 70)
        for n, start in enumerate(range(0, len(rows), ROWS_PER_TRANSACTION), 1):
            gtid = MariaGtid(0, 1, n) if flavor is Flavor.MARIADB else None
            with writer.transaction(gtid, xid=n, compress=compress) as tx:
                tx.rows(table, "insert", rows[start : start + ROWS_PER_TRANSACTION])
        return writer.file


def write_back(source: Path, target: Path) -> None:
    """Write ``source`` again, event by event from the decoder."""
    with binlogkit.open(source, schema=None) as reader:
        events = iter(reader)
        fde = next(events)
        assert isinstance(fde, FormatDescriptionEvent)
        writer = BinlogFileWriter.create(target, fde)
        for event in events:
            writer.write(event)
        writer.close()


def read_rows(source: Path) -> int:
    rows = 0
    with binlogkit.open(source, schema=None) as reader:
        for event in reader:
            for change in getattr(event, "rows", ()):
                rows += 1
                _ = change.after
    return rows


def best(runs: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="workload size factor")
    args = parser.parse_args()
    count = max(ROWS_PER_TRANSACTION, int(200_000 * args.scale))
    base = Path(tempfile.mkdtemp(prefix="bk-write-"))
    try:
        changes = make_rows(count)
        results: list[tuple[str, float, Path]] = []
        files: dict[str, Path] = {}
        for n, (label, (flavor, compress)) in enumerate(WAYS.items()):
            folder = base / f"w{n}"
            folder.mkdir()

            def build(f: Flavor = flavor, c: bool = compress, d: Path = folder) -> Path:
                return write_rows(Path(tempfile.mkdtemp(dir=d)), changes, f, c)

            seconds = best(3, build)
            files[label] = write_rows(folder / "kept", changes, flavor, compress)
            assert read_rows(files[label]) == count
            results.append((f"write, {label}", seconds, files[label]))
        source = files["MariaDB"]
        back = base / "back"
        results.append(
            ("write back, event by event", best(3, lambda: write_back(source, back)), back)
        )
        for label, path in files.items():
            results.append((f"read every row, {label}", best(3, lambda p=path: read_rows(p)), path))
        copy = base / "copy"
        results.append(("plain file copy", best(3, lambda: shutil.copyfile(source, copy)), copy))
        mb = source.stat().st_size / 1e6
        print(f"binlog of {count} row inserts: {mb:.1f} MB plain")
        print(f"{'':<36}{'s':>8}{'MB/s':>9}{'rows/s':>11}{'file MB':>9}")
        for label, seconds, path in results:
            size = path.stat().st_size / 1e6
            rate = f"{mb / seconds:>9.1f}{count / seconds:>11.0f}"
            print(f"{label:<36}{seconds:>8.3f}{rate}{size:>9.1f}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
