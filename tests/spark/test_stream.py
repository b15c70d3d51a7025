"""``spark.readStream.format("binlog")`` over a folder of binlogs that grows.

- Runs with ``Trigger.AvailableNow`` from one checkpoint, the folder growing in
  between (its last file cut mid-transaction, then completed, then more files),
  give the plain reader's row changes of all the files, each once, in order.
- With ``maxBytesPerTrigger`` every checkpointed offset is a transaction
  boundary (a file's start or end, or a GTID event) and there are many batches.
- A checkpoint whose file is gone from the folder fails with a clear error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_source import CHANGE_COLUMNS, collected, plain_changes

import binlogkit
from binlogkit.binlog.transactions import GTID_CODES
from binlogkit.errors import BinlogError
from binlogkit.io.binlog_index import write_index

pytestmark = pytest.mark.corpus

FOLDER = "local-mariadb-10.11/gtid"
"""Binlogs of one server: DDL, every column type, several GTID domains, rotations (its
``mysql-bin.000003`` is left out: an old-format TIME(n) there cannot be decoded)."""
CUT = 55_400
"""Where the copy of the second file stops at first: inside a transaction's rows event."""


@pytest.fixture
def files(corpus_dir: Path) -> list[Path]:
    found = sorted((corpus_dir / FOLDER).glob("mysql-bin.[0-9]*[0-9]"))
    return [path for path in found if path.name != "mysql-bin.000003"]


def _grow(folder: Path, files: list[Path], cut: int | None = None) -> None:
    """Copy ``files`` into ``folder`` (the last one only up to ``cut``) and index them."""
    for path in files:
        data = path.read_bytes()
        (folder / path.name).write_bytes(data if path is not files[-1] else data[:cut])
    write_index(folder / "mysql-bin.index", [path.name for path in files])


def run_available_now(
    spark: Any, checkpoint: Path, folder: Path | None = None, **options: str
) -> list[tuple[Any, ...]]:
    """The rows of :func:`run_batches`, in order."""
    return [row for batch in run_batches(spark, checkpoint, folder, **options) for row in batch]


def run_batches(
    spark: Any,
    checkpoint: Path,
    folder: Path | None = None,
    each: Callable[[list[tuple[Any, ...]]], None] | None = None,
    **options: str,
) -> list[list[tuple[Any, ...]]]:
    """One ``availableNow`` run from ``checkpoint`` (of ``folder``, or of the server of option
    ``url``): the rows of each of its batches (each given to ``each`` in ``foreachBatch``)."""
    batches: dict[int, list[tuple[Any, ...]]] = {}

    def keep(df: Any, batch_id: int) -> None:
        batches[batch_id] = collected(df, CHANGE_COLUMNS)
        if each is not None:
            each(batches[batch_id])

    reader = spark.readStream.format("binlog").options(**options)
    stream = reader.load() if folder is None else reader.load(str(folder))
    query = (
        stream.writeStream.foreachBatch(keep)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    assert query.exception() is None
    return [batches[batch_id] for batch_id in sorted(batches)]


def checkpoint_offsets(checkpoint: Path) -> list[dict[str, Any]]:
    """The source offset of each batch in the checkpoint's offset log."""
    logs = sorted((checkpoint / "offsets").glob("[0-9]*"), key=lambda p: int(p.name))
    return [json.loads(path.read_text().splitlines()[2]) for path in logs]


def _check_boundaries(checkpoint: Path, files: list[Path]) -> int:
    """Check that each offset of the checkpoint is a file's start or end or a GTID event;
    how many there are."""
    boundaries = {(path.name, 0) for path in files}
    for path in files:
        boundaries.add((path.name, path.stat().st_size))
        with binlogkit.open(str(path)) as events:
            starts = (e.header.offset for e in events if e.header.type_code in GTID_CODES)
            boundaries.update((path.name, offset) for offset in starts)
    offsets = checkpoint_offsets(checkpoint)
    assert [
        (offset["file"], offset["pos"])
        for offset in offsets
        if (offset["file"], offset["pos"]) not in boundaries
    ] == []
    return len(offsets)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The growing folder of binlogs (the checkpoint goes to ``tmp_path / "checkpoint"``)."""
    folder = tmp_path / "relay"
    folder.mkdir()
    return folder


def test_runs_from_one_checkpoint_read_each_change_once_in_order(
    spark: Any, files: list[Path], folder: Path
) -> None:
    checkpoint = folder.parent / "checkpoint"
    _grow(folder, files[:2], cut=CUT)
    first = run_available_now(spark, checkpoint, folder)
    assert first and all(row[1] < CUT for row in first if row[0] == files[1].name)
    _grow(folder, files[:2])
    second = run_available_now(spark, checkpoint, folder)
    _grow(folder, files)
    third = run_available_now(spark, checkpoint, folder)
    assert second and third
    assert first + second + third == plain_changes(files)
    _check_boundaries(checkpoint, files)


def test_every_offset_is_a_transaction_boundary(
    spark: Any, files: list[Path], folder: Path
) -> None:
    checkpoint = folder.parent / "checkpoint"
    _grow(folder, files)
    rows = run_available_now(spark, checkpoint, folder, maxBytesPerTrigger="8k")
    assert rows == plain_changes(files)
    # 8 kB a batch (or one bigger transaction): the 98 kB file takes 8
    assert _check_boundaries(checkpoint, files) > 5


def test_a_purged_file_is_a_clear_error(spark: Any, files: list[Path], folder: Path) -> None:
    from binlogkit.spark.source import BinlogDataSource

    _grow(folder, files[:3])
    reader = BinlogDataSource({"path": str(folder)}).streamReader(None)  # type: ignore[arg-type]
    start = reader.initialOffset()
    (folder / files[0].name).unlink()
    _grow(folder, files[1:3])
    with pytest.raises(BinlogError, match=r"mysql-bin\.000001 .* is gone .* purged") as err:
        reader.latestOffset(start, reader.getDefaultReadLimit())
    assert "fresh snapshot" in str(err.value)


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"maxRowsPerTrigger": "5"}, "maxRowsPerTrigger needs a server"),
        ({"maxBytesPerTrigger": "0"}, "maxBytesPerTrigger must be a positive size"),
        ({"url": "mariadb://u@h/", "events": "all"}, "events=all needs files"),
        ({"url": "mariadb://u@h/", "serverId": "x"}, "serverId must be a number"),
        ({"schema": "none", "schemaHistory": "h.jsonl"}, "not with schema=none"),
        ({"keyFile": "keys.txt"}, "folder of encrypted binlogs is not supported"),
        (
            {"url": "mariadb://u@h/", "maxRowsPerTrigger": "5", "maxBytesPerTrigger": "1k"},
            "not both",
        ),
    ],
)
def test_stream_options_are_checked(
    spark: Any, files: list[Path], folder: Path, options: dict[str, str], error: str
) -> None:
    from binlogkit.spark.source import BinlogDataSource

    _grow(folder, files[:2])
    source = BinlogDataSource({} if "url" in options else {"path": str(folder)})
    source.options.update(options)
    with pytest.raises(BinlogError, match=error):
        source.streamReader(source.schema())
