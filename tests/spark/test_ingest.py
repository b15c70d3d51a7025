"""``binlogkit spark ingest``: the change log holds each row change of the archive exactly once.

The expected changes are those of the plain Python reader on the same files;
the ``date`` partition is the UTC day of each event's header timestamp.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import binlogkit
from binlogkit import jsonenc
from binlogkit.errors import BinlogError
from binlogkit.pipeline.changes import row_changes

pytest.importorskip("pyspark")

from binlogkit.spark.ingest import (
    CRASH_ENV,
    IngestProgress,
    Lake,
    ingest,
    read_change_log,
)

GTID_FILES = ("000001", "000002", "000004", "000005", "000006")
"""The ``gtid`` variant's files the plain reader decodes (000003 holds an old-format TIME)."""

Change = tuple[Any, ...]


def _image(values: dict[str, Any] | None) -> str | None:
    return None if values is None else jsonenc.dumps(values)


def plain_changes(paths: list[Path]) -> Counter[Change]:
    """(file, pos, row, op, before, after, UTC day) of each change, from the Python reader."""
    with binlogkit.open([str(p) for p in paths]) as reader:
        return Counter(
            (
                c.source.file,
                c.source.pos,
                c.source.row,
                c.op,
                _image(c.before),
                _image(c.after),
                c.source.ts_ms // 86_400_000,
            )
            for c in row_changes(reader)
        )


def lake_changes(spark: Any, lake: Path) -> Counter[Change]:
    if not (lake / "changes").is_dir():
        return Counter()
    rows = (
        read_change_log(spark, lake)
        .selectExpr("file", "pos", "row", "op", "before", "after", "unix_date(date)")
        .collect()
    )
    return Counter(tuple(row) for row in rows)


def copy_files(corpus_dir: Path, folder: Path, numbers: tuple[str, ...]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    source = corpus_dir / "local-mariadb-10.11" / "gtid"
    return [Path(shutil.copy(source / f"mysql-bin.{n}", folder)) for n in numbers]


def test_grown_archive_adds_only_the_new_files(spark: Any, corpus_dir: Path, tmp_path: Path):
    """Runs on an archive that grows, then on the same archive: each change once, with progress."""
    archive = tmp_path / "archive"
    old = copy_files(corpus_dir, archive, GTID_FILES[:2])
    lake = tmp_path / "lake"
    first = ingest(spark, f"{archive}/mysql-bin.*", lake)
    assert first.rows == sum(plain_changes(old).values())

    new = copy_files(corpus_dir, archive, GTID_FILES[2:])
    seen: list[IngestProgress] = []
    report = ingest(
        spark, f"{archive}/mysql-bin.*", lake, progress=seen.append, progress_interval=0.05
    )
    assert report.skipped == 2
    assert report.rows == sum(plain_changes(new).values())
    expected = plain_changes(old + new)
    assert sum(expected.values()) > 1000
    assert lake_changes(spark, lake) == expected
    ledger = [json.loads(p.read_text()) for p in sorted((lake / "_binlogkit/ledger").glob("*"))]
    assert [sorted(Path(f["path"]).name for f in record["files"]) for record in ledger] == [
        [f"mysql-bin.{n}" for n in GTID_FILES[:2]],
        [f"mysql-bin.{n}" for n in GTID_FILES[2:]],
    ]
    # While Spark wrote the batch: its tasks, at last all done; after it: the files.
    during = [p for p in seen if p.tasks_total is not None]
    assert during and during[-1].tasks_done == during[-1].tasks_total
    assert all(p.files_done == 0 and "Spark tasks" in str(p) for p in during)
    assert str(seen[-1]).startswith(f"files 3/3, {report.rows} rows")

    again = ingest(spark, str(archive), lake, batch_bytes=64 << 10)
    assert (again.batches, again.rows, again.skipped) == ([], 0, len(GTID_FILES))
    assert len(list((lake / "_binlogkit/ledger").glob("*"))) == 2  # nothing written


def test_a_growing_binlog_is_read_on_from_where_it_stopped(
    spark: Any, corpus_dir: Path, tmp_path: Path
):
    whole = corpus_dir / "local-mariadb-10.11" / "gtid" / "mysql-bin.000002"
    data = whole.read_bytes()
    active = tmp_path / "archive" / "mysql-bin.000002"
    active.parent.mkdir()
    lake = tmp_path / "lake"
    expected = plain_changes([whole])
    ends = [0]
    for cut in (20_001, 50_003, 50_003, 77_777, len(data)):  # mid-event cuts, then the rest
        active.write_bytes(data[:cut])
        report = ingest(spark, str(active), lake)
        records = [json.loads(p.read_text()) for p in (lake / "_binlogkit/ledger").glob("*")]
        end = max(f["end"] for record in records for f in record["files"])
        assert end <= cut  # never past the last complete transaction
        # exactly the changes of the bytes read on from the last end
        assert report.rows == sum(n for c, n in expected.items() if ends[-1] <= c[1] < end)
        ends += [end] if end > ends[-1] else []
    assert lake_changes(spark, lake) == expected
    assert len(ends) == 5 and ends[-1] == len(data)  # four runs read something, one nothing


def test_a_replaced_file_stops_the_ingest(spark: Any, corpus_dir: Path, tmp_path: Path):
    files = copy_files(corpus_dir, tmp_path / "archive", ("000005", "000006"))
    lake = tmp_path / "lake"
    ingest(spark, [str(f) for f in files], lake)
    files[0].write_bytes(
        (corpus_dir / "local-mariadb-10.11" / "gtid" / "mysql-bin.000002").read_bytes()
    )
    with pytest.raises(BinlogError, match="another file under the same name"):
        ingest(spark, [str(f) for f in files], lake)


def test_a_file_changed_behind_its_first_bytes_stops_the_ingest(
    spark: Any, corpus_dir: Path, tmp_path: Path
):
    """Same first 4 KiB, a changed byte further in, and grown: the checksum of the bytes
    already read (taken while Spark reads the new ones) stops the run; the lake is unchanged."""
    whole = corpus_dir / "local-mariadb-10.11" / "gtid" / "mysql-bin.000002"
    data = bytearray(whole.read_bytes())
    active = tmp_path / "archive" / "mysql-bin.000002"
    active.parent.mkdir()
    active.write_bytes(data[:50_003])
    lake = tmp_path / "lake"
    first = ingest(spark, str(active), lake)
    assert first.rows > 0
    before = sorted(p.relative_to(lake) for p in lake.rglob("*") if p.is_file())
    data[10_000] ^= 0xFF  # inside the bytes already read
    active.write_bytes(data)
    with pytest.raises(BinlogError, match=r"its first \d+ bytes differ from the ingested ones"):
        ingest(spark, str(active), lake)
    assert sorted(p.relative_to(lake) for p in lake.rglob("*") if p.is_file()) == before
    assert lake_changes(spark, lake) == plain_changes([whole]) - Counter(
        {c: n for c, n in plain_changes([whole]).items() if c[1] >= 50_003}
    )


def test_table_filter_is_kept_by_the_lake(spark: Any, corpus_dir: Path, tmp_path: Path):
    files = copy_files(corpus_dir, tmp_path / "archive", GTID_FILES)
    lake = tmp_path / "lake"
    with binlogkit.open([str(f) for f in files]) as reader:
        wanted = [c for c in row_changes(reader) if c.source.table == "t_gtid"]
    ingest(spark, [str(f) for f in files], lake, tables=["typesdb.t_gtid"])
    table = read_change_log(spark, lake)
    assert [tuple(r) for r in table.select("db", "table").distinct().collect()] == [
        ("typesdb", "t_gtid")
    ]
    assert sorted(tuple(r) for r in table.select("file", "pos", "row").collect()) == sorted(
        (c.source.file, c.source.pos, c.source.row) for c in wanted
    )
    with pytest.raises(BinlogError, match="holds tables"):
        ingest(spark, [str(f) for f in files], lake)


# -- crashes ------------------------------------------------------------------------------


CRASH_FILES = ("000002", "000005", "000006")
"""Three files, each with row changes: one batch each with ``batch_bytes=1``."""


def test_publish_moves_only_the_files_finished_tasks_reported(tmp_path: Path):
    """A failed task attempt leaves its files in staging; they never reach the table."""
    lake = Lake(tmp_path / "lake")
    folder = "db=shop/table=orders/date=2026-11-22"
    staged = lake.staging / "00000001-ab" / folder
    staged.mkdir(parents=True)
    for name in ("part-00000-good.parquet", "part-00000-failed.parquet"):
        (staged / name).write_bytes(b"PAR1")
    moved = lake.publish("00000001-ab", [f"{folder}/part-00000-good.parquet"])
    assert moved == [f"{folder}/batch-00000001-ab-part-00000-good.parquet"]
    assert sorted(p.name for p in (lake.table / folder).iterdir()) == [Path(moved[0]).name]
    assert [p.name for p in staged.iterdir()] == ["part-00000-failed.parquet"]


class Killed(BaseException):
    """Stands for SIGKILL in-process: nothing after the crash point runs."""


def test_interrupted_ingests_rerun_store_each_change_once(
    spark: Any, corpus_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Runs killed at each step of the commit protocol, each rerun cleaning up the last."""
    files = copy_files(corpus_dir, tmp_path / "archive", CRASH_FILES)
    lake = tmp_path / "lake"
    ledger, staging = lake / "_binlogkit" / "ledger", lake / "_binlogkit" / "staging"

    def kill(pid: int, sig: int) -> None:
        assert (pid, sig) == (os.getpid(), signal.SIGKILL)
        raise Killed

    # Each run first rolls back what the last left: a staged batch, a batch moved in part,
    # and (nothing to roll back) a committed batch whose staging folder is still there.
    for crash, committed in [("staged:1", 0), ("moved:2", 1), ("committed:1", 2)]:
        with monkeypatch.context() as patch:
            patch.setenv(CRASH_ENV, crash)
            patch.setattr(os, "kill", kill)
            with pytest.raises(Killed):
                ingest(spark, str(tmp_path / "archive"), lake, batch_bytes=1)
        assert len(list(ledger.glob("*.json"))) == committed, crash
        assert any(staging.iterdir()), crash
        assert lake_changes(spark, lake) - plain_changes(files) == Counter()  # nothing twice

    report = ingest(spark, str(tmp_path / "archive"), lake, batch_bytes=1)
    assert (len(report.batches), report.skipped, report.rolled_back) == (1, 2, [])
    assert lake_changes(spark, lake) == plain_changes(files)
    assert not any(staging.iterdir())


def test_ingest_killed_by_sigkill_then_rerun(spark: Any, corpus_dir: Path, tmp_path: Path):
    """The CLI in a child process dies by SIGKILL halfway through moving its second batch."""
    files = copy_files(corpus_dir, tmp_path / "archive", CRASH_FILES)
    lake = tmp_path / "lake"
    cli = [
        sys.executable,
        "-c",
        "from binlogkit.cli.main import main; main()",
        *("spark", "ingest", str(tmp_path / "archive"), "--to", str(lake)),
        *("--master", "local[1]", "--batch-size", "1"),
    ]
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", **{CRASH_ENV: "moved:2"})
    env["JAVA_TOOL_OPTIONS"] = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"
    child = subprocess.Popen(
        cli, env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        _, err = child.communicate(timeout=300)
    finally:
        with contextlib.suppress(ProcessLookupError):  # its Spark JVM goes with it
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    assert child.returncode == -signal.SIGKILL, err.decode()
    assert b"files 0/3, next batch: Spark tasks " in err  # progress while Spark writes
    assert b"files 1/3" in err  # progress of the committed first batch
    assert len(list((lake / "_binlogkit" / "ledger").glob("*.json"))) == 1
    assert list((lake / "changes").rglob("batch-00000002-*.parquet"))  # batch 2 in part

    report = ingest(spark, str(tmp_path / "archive"), lake, batch_bytes=1)
    assert [b[:8] for b in report.rolled_back] == ["00000002"]
    assert lake_changes(spark, lake) == plain_changes(files)
