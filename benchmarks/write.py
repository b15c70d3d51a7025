"""Write throughput of the binlog writer, next to reading the same file and copying it.

Builds a MariaDB binlog of ``200000 x --scale`` row inserts into one table
(INT, VARCHAR(20), DECIMAL(10,2), DATETIME(6), BIGINT UNSIGNED) with
:meth:`BinlogWriter.transaction`: 1000 rows per transaction, 100 per rows
event, row values encoded from Python objects. Then, on the same file: writing
it back event by event as the decoder gives the events (no row values
touched), decoding every event and row value with ``binlogkit.open``, and a
plain file copy. Building the Python row values is not timed. Each figure is
the best of three runs; MB/s is of the binlog's size.

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
from binlogkit.binlog.constants import ColumnType, EventType
from binlogkit.binlog.events import FormatDescriptionEvent
from binlogkit.binlog.events.table_map import OptionalMetadataType, TableMapEvent
from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.binlog.rows.plan import RowChange
from binlogkit.gtid import MariaGtid
from binlogkit.writer import BinlogFileWriter, BinlogWriter

CT = ColumnType
COLUMNS = [
    ColumnInfo(0, CT.LONG, CT.LONG, 0, False),
    ColumnInfo(1, CT.VARCHAR, CT.VARCHAR, 80, True),
    ColumnInfo(2, CT.NEWDECIMAL, CT.NEWDECIMAL, (10 << 8) | 2, True),
    ColumnInfo(3, CT.DATETIME2, CT.DATETIME2, 6, True),
    ColumnInfo(4, CT.LONGLONG, CT.LONGLONG, 0, True),
]
ROWS_PER_TRANSACTION = 1000


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


def write_rows(folder: Path, rows: list[RowChange]) -> Path:
    """A binlog of ``rows``, in transactions of ROWS_PER_TRANSACTION rows."""
    with BinlogWriter.create(folder, "bench-bin") as writer:
        table = TableMapEvent.build(
            writer.header(EventType.TABLE_MAP),
            70,
            "bench",
            "t",
            COLUMNS,
            optional_fields=[
                (OptionalMetadataType.SIGNEDNESS, (False, False, True)),
                (OptionalMetadataType.DEFAULT_CHARSET, (45, ())),
                (OptionalMetadataType.COLUMN_NAME, ("id", "name", "amount", "at", "big")),
            ],
            server_version=writer.current.fmt.server_version,
        )
        for n, start in enumerate(range(0, len(rows), ROWS_PER_TRANSACTION), 1):
            with writer.transaction(MariaGtid(0, 1, n), xid=n) as tx:
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
        made: list[Path] = []
        changes = make_rows(count)

        def build() -> None:
            folder = base / f"w{len(made)}"
            made.append(write_rows(folder, changes))

        write_s = best(3, build)
        source = made[-1]
        mb = source.stat().st_size / 1e6
        rows = read_rows(source)
        assert rows == count, (rows, count)
        results = [
            ("write from row values", write_s),
            ("write back, event by event", best(3, lambda: write_back(source, base / "back"))),
            ("read every row value", best(3, lambda: read_rows(source))),
            ("plain file copy", best(3, lambda: shutil.copyfile(source, base / "copy"))),
        ]
        print(f"binlog of {count} row inserts: {mb:.1f} MB")
        print(f"{'':<28}{'s':>8}{'MB/s':>9}{'rows/s':>11}")
        for label, seconds in results:
            print(f"{label:<28}{seconds:>8.3f}{mb / seconds:>9.1f}{count / seconds:>11.0f}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
