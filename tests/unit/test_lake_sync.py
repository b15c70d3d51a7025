"""The pure parts of ``binlogkit spark sync``: the lake's state, progress, the checkpoint's
position."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from binlogkit.errors import BinlogError, ConnectionLost, ServerChanged, ServerError
from binlogkit.schema.store import Position
from binlogkit.spark.lake.storage import UriPath, lake_path
from binlogkit.spark.lake_status import (
    LakeStatus,
    TableStatus,
    committed_offset,
    resnapshot_status,
)
from binlogkit.spark.query_errors import query_error, restartable, server_changed
from binlogkit.spark.sync_progress import AppliedBatch, BatchLog, bytes_behind, describe
from binlogkit.spark.sync_state import (
    LakeLayout,
    SyncState,
    batch_offset,
    redact_url,
    source_address,
)


def test_redact_url_drops_the_password_only() -> None:
    assert redact_url("mariadb://bob:s%40cret@db.example:3307/x?ssl-mode=required") == (
        "mariadb://bob@db.example:3307/x?ssl-mode=required"
    )
    assert redact_url("mariadb://bob@db") == "mariadb://bob@db"
    assert source_address("mariadb://a:pw@db:3307") == source_address("mysql://b@db:3307/?")
    assert source_address("mariadb://root@localhost/?socket=/s") == "/s"


def test_state_round_trips_and_refuses_another_source_or_selection(tmp_path: Path) -> None:
    layout = LakeLayout(tmp_path)
    state = SyncState.new("mariadb://u@h", "server", ("a.t", "b.u"), False)
    state.save(layout.state)
    assert SyncState.load(layout.state) == state
    assert SyncState.load(tmp_path / "none.json") is None
    state.check(SyncState.new("mariadb://v@h", "server", ("a.t", "b.u"), False), tmp_path, True)
    with pytest.raises(BinlogError, match=r"mirrors mariadb://u@h, not /binlogs .*new --to"):
        state.check(SyncState.new("/binlogs", "files", ("a.t", "b.u"), False), tmp_path, True)
    with pytest.raises(BinlogError, match=r"mirrors tables a\.t, b\.u, not \(all\)"):
        state.check(SyncState.new("mariadb://u@h", "server", None, False), tmp_path, True)
    with pytest.raises(BinlogError, match=r"made without SCD type 2 .*without --scd2"):
        state.check(SyncState.new("mariadb://u@h", "server", ("a.t", "b.u"), True), tmp_path, True)
    layout.state.write_text("{")
    with pytest.raises(BinlogError, match=r"sync\.json: not a binlogkit sync state"):
        SyncState.load(layout.state)


def test_layout_lists_the_table_folders(tmp_path: Path) -> None:
    layout = LakeLayout(tmp_path)
    for folder in ("shop/a/mirror", "shop/b/changes", "_binlogkit/checkpoint/x", "shop/c"):
        (tmp_path / folder).mkdir(parents=True)
    assert layout.tables() == ["shop.a", "shop.b"]
    assert layout.table("shop.a") == tmp_path / "shop" / "a"


def test_the_snapshot_mirrors_are_those_a_snapshot_or_resnapshot_keyed(tmp_path: Path) -> None:
    layout = LakeLayout(tmp_path)
    assert layout.snapshot_mirrors() == set()
    layout.meta.mkdir()
    first = {"a.k": {"key": ["id"]}, "a.nokey": {"key": []}}
    layout.snapshot.write_text(json.dumps({"tables": first}))
    assert layout.snapshot_mirrors() == {"a.k"}
    layout.resnapshot.write_text(json.dumps({"tables": {"b.later": {"key": ["code"]}}}))
    assert layout.snapshot_mirrors() == {"a.k", "b.later"}


def test_lake_paths_are_local_unless_a_uri_of_another_scheme() -> None:
    assert lake_path("data/lake") == Path("data/lake")
    assert lake_path("file:///data/my%20lake") == Path("/data/my lake")
    assert lake_path("C:/lake") == Path("C:/lake")  # a drive, not a scheme
    assert lake_path("notes:2026") == Path("notes:2026")
    root = lake_path("s3a://bucket/lake/")
    assert isinstance(root, UriPath) and root.scheme == "s3a"
    history = LakeLayout(root).history
    assert history == UriPath("s3a://bucket/lake/_binlogkit/schema.jsonl")
    assert history.name == "schema.jsonl" and lake_path(str(history)) == history


def test_a_uri_without_a_spark_context_is_a_clear_error() -> None:
    code = (
        "from binlogkit.spark.lake import storage\n"
        "storage.read_text(storage.lake_path('s3a://bucket/lake/x'))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "BinlogError: s3a://bucket/lake/x: a s3a:// path is reached through Spark" in run.stderr


def test_bytes_behind_counts_the_rest_of_the_file_and_the_later_files() -> None:
    sizes = [("bin.000009", 500), ("bin.000010", 300), ("bin.000011", 120)]
    assert bytes_behind(sizes, "bin.000010", 100) == 200 + 120
    assert bytes_behind(sizes, "bin.000011", 120) == 0
    assert bytes_behind(sizes, "bin.000012", 4) == 0


def _report(batch: int, file: str, pos: int, ran: bool = True) -> dict[str, object]:
    durations = {"addBatch": 5, "triggerExecution": 9} if ran else {"triggerExecution": 1}
    end = json.dumps({"file": file, "pos": pos})
    return {"batchId": batch, "durationMs": durations, "sources": [{"endOffset": end}]}


def test_each_batch_is_reported_once_with_the_end_of_its_own_progress_report() -> None:
    log = BatchLog()
    now = datetime(2026, 1, 1, tzinfo=UTC)
    asked = []

    def sizes() -> list[tuple[str, int]]:
        asked.append(1)
        return [("bin.000001", 1000)]

    log.add(AppliedBatch(0, 10, 2.0, now - timedelta(seconds=3), now))
    log.add(AppliedBatch(1, 0, 0.5, None, now))
    # Batch 1 applied, its report not out yet; an idle report names it already.
    reports = [_report(0, "bin.000001", 400), _report(1, "bin.000001", 400, ran=False)]
    (first,) = log.report(reports, sizes)
    assert (first.batch, first.position, first.lag_seconds, first.lag_bytes) == (
        0,
        "bin.000001:400",
        3.0,
        600,
    )
    assert first.rows_per_second == 5.0
    assert str(first) == (
        "batch 0: 10 row changes in 2.0 s (5 rows/s), at bin.000001:400, lag 3.0 s, 600 bytes"
    )
    assert log.report(reports, sizes) == []
    (second,) = log.report([*reports, _report(1, "bin.000001", 1000)], sizes)
    assert (second.batch, second.lag_seconds, second.lag_bytes) == (1, None, 0)
    assert len(asked) == 2


def test_committed_offset_is_the_last_committed_batchs_end(tmp_path: Path) -> None:
    assert committed_offset(tmp_path) == (0, None)
    (tmp_path / "offsets").mkdir()
    (tmp_path / "commits").mkdir()
    for batch in range(3):
        offset = json.dumps({"file": "bin.000001", "pos": 100 * batch})
        (tmp_path / "offsets" / str(batch)).write_text(f'v1\n{{"batchWatermarkMs":0}}\n{offset}')
    for batch in range(2):
        (tmp_path / "commits" / str(batch)).write_text("v1\n{}")
    assert committed_offset(tmp_path) == (2, {"file": "bin.000001", "pos": 100})


SOURCE_FAILED = """[PYTHON_STREAMING_DATA_SOURCE_RUNTIME_ERROR] Failed when Python streaming \
data source perform latestOffset: Traceback (most recent call last):
  File "binlogkit/io/mysql.py", line 329, in _open_socket
    sock.connect(spec.unix_socket)
FileNotFoundError: [Errno 2] No such file or directory

Traceback (most recent call last):
  File "binlogkit/spark/server_stream.py", line 159, in latestOffset
binlogkit.errors.ConnectionLost: cannot connect to /s/mysqld.sock: [Errno 2] No such file
 SQLSTATE: 38000"""


@pytest.mark.parametrize(
    ("text", "message", "again"),
    [
        (SOURCE_FAILED, "cannot connect to /s/mysqld.sock: [Errno 2] No such file", True),
        (
            "Traceback:\nbinlogkit.errors.ServerError: server error 1927 (70100): killed\n",
            "server error 1927 (70100): killed",
            True,
        ),
        (
            "Traceback:\nbinlogkit.errors.ServerError: server error 1045 (28000): denied\n",
            "server error 1045 (28000): denied",
            False,
        ),
        (
            "Traceback:\nbinlogkit.errors.BinlogError: binlog b.000001 is gone (resnapshot)\n",
            "binlog b.000001 is gone (resnapshot)",
            False,
        ),
        (
            "[X] failed: Traceback:\nConnectionResetError: [Errno 104] reset by peer\n",
            "the streaming query failed: ConnectionResetError: [Errno 104] reset by peer",
            True,
        ),
        (
            "[DELTA_X] something\nmore lines",
            "the streaming query failed: RuntimeError: [DELTA_X] something",
            False,
        ),
    ],
)
def test_a_failed_query_is_one_line_and_a_lost_connection_is_worth_a_restart(
    text: str, message: str, again: bool
) -> None:
    failure = RuntimeError(text)
    assert str(query_error(failure)) == message
    assert restartable(failure) is again


def test_errors_raised_in_the_driver_keep_their_type() -> None:
    gone = BinlogError("gone", hint="resnapshot")
    assert query_error(gone) is gone and not restartable(gone)
    assert restartable(ConnectionLost("closed")) and restartable(ServerError(2013, "", "lost"))
    assert not restartable(ServerError(1064, "42000", "syntax"))


def test_another_server_behind_the_url_is_told_apart() -> None:
    task = RuntimeError("Traceback:\nbinlogkit.errors.ServerChanged: h:3306 is now server_id 2\n")
    assert server_changed(task) and not restartable(task)
    assert server_changed(ServerChanged("moved")) and not server_changed(BinlogError("gone"))
    assert not server_changed(RuntimeError("binlogkit.errors.BinlogError: gone"))


def test_describe_a_snapshot_tables_progress_or_anything_else() -> None:
    from dataclasses import dataclass

    @dataclass
    class Snap:
        table: str
        rows: int
        total: int
        rows_per_second: float

    assert describe(Snap("shop.t", 1200, 5000, 812.4)) == (
        "snapshot shop.t: 1,200 rows (24% of ~5,000), 812 rows/s"
    )
    assert describe(Snap("shop.t", 9, 0, 1.0)) == "snapshot shop.t: 9 rows, 1 rows/s"
    assert describe("restarting") == "restarting"


def test_a_python_error_of_the_batch_function_keeps_its_type_name() -> None:
    failure = query_error(RuntimeError("BINLOGKIT_DELTA_CRASH=0: stopping"))
    assert (
        str(failure)
        == "the streaming query failed: RuntimeError: BINLOGKIT_DELTA_CRASH=0: stopping"
    )


def test_status_text_says_how_far_the_snapshot_and_the_stream_got() -> None:
    found = LakeStatus(
        "/lake",
        "mariadb://u@h",
        "server",
        None,
        False,
        {"file": "bin.000002", "pos": 90, "gtid": "0-1-7"},
        3,
        (
            TableStatus("shop.a", 12, 30, datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)),
            TableStatus("shop.n", None, 2, None),
        ),
        (4, 4),
    )
    assert found.text().splitlines() == [
        "lake /lake: server mariadb://u@h",
        "snapshot: 4 of 4 chunk groups written",
        "position: bin.000002:90 (GTID 0-1-7), after 3 micro-batches",
        "  shop.a: 12 rows, 30 changes, last commit 2026-01-02 03:04:05+00:00",
        "  shop.n: no mirror, 2 changes, last commit -",
    ]
    assert found.to_json()["tables"][0]["last_commit"] == "2026-01-02T03:04:05+00:00"


def test_status_shows_a_resnapshot_reading_then_done_from_its_state_file(tmp_path: Path) -> None:
    layout = LakeLayout(tmp_path)
    assert resnapshot_status(layout.resnapshot) == {}
    layout.meta.mkdir()
    chunk = [None, ["20"]]
    state = {
        "tables": {"shop.t": {"key": ["id"]}, "shop.g": {"key": ["code"]}},
        "groups": [
            {"table": "shop.t", "chunks": [chunk, chunk]},
            {"table": "shop.g", "chunks": [chunk]},
            {"table": "shop.t", "chunks": [chunk]},
        ],
        "done": 2,
    }
    layout.resnapshot.write_text(json.dumps(state))

    def lines() -> list[str]:
        again = resnapshot_status(layout.resnapshot)
        tables = tuple(
            TableStatus(n, 1, 0, None, again.get(n)) for n in ("shop.g", "shop.t", "shop.x")
        )
        found = LakeStatus("/lake", "mariadb://h", "server", None, False, None, 0, tables)
        assert found.to_json()["tables"][1]["resnapshot"] == asdict(again["shop.t"])
        return found.text().splitlines()[2:]

    assert lines() == [
        "  shop.g: 1 rows, 0 changes, last commit -",
        "    resnapshot: reading (1 of 1 chunks)",
        "  shop.t: 1 rows, 0 changes, last commit -",
        "    resnapshot: reading (2 of 3 chunks)",
        "  shop.x: 1 rows, 0 changes, last commit -",
    ]
    end = {"file": "bin.000003", "pos": 812, "gtid": "0-1-40"}
    layout.resnapshot.write_text(json.dumps({**state, "done": 3, "end": end}))
    assert lines()[3] == "    resnapshot: reading (3 of 3 chunks)"  # E' not on the mirrors yet
    layout.resnapshot.write_text(json.dumps({**state, "done": 3, "end": end, "marked": True}))
    assert lines()[1] == "    resnapshot: done, E' bin.000003:812 (GTID 0-1-40)"
    layout.resnapshot.write_text('{"groups": []}')
    with pytest.raises(BinlogError, match=r"resnapshot.json: not a resnapshot's state"):
        resnapshot_status(layout.resnapshot)


def test_batch_offset_reads_a_batchs_end_and_names_a_damaged_file(tmp_path: Path) -> None:
    assert batch_offset(tmp_path, 0) is None
    (tmp_path / "offsets").mkdir()
    offset = json.dumps({"file": "bin.000001", "pos": 4})
    (tmp_path / "offsets" / "0").write_text(f'v1\n{{"batchWatermarkMs":0}}\n{offset}')
    assert batch_offset(tmp_path, 0) == {"file": "bin.000001", "pos": 4}
    for damaged in ("v1\n{}", 'v1\n{}\n{"file": "bin.0', "v1\n{}\n[4]"):
        (tmp_path / "offsets" / "1").write_text(damaged)
        with pytest.raises(BinlogError, match=r"offsets/1: not a binlog source's offset"):
            batch_offset(tmp_path, 1)


def test_a_mirrors_snapshot_end_round_trips_with_its_gtid() -> None:
    from binlogkit.spark.lake.tables import (
        SNAPSHOT_END,
        SNAPSHOT_READING,
        end_property,
        snapshot_end,
    )

    end = Position("mysql-bin.000002", 4711, "0-1-9")
    assert snapshot_end({SNAPSHOT_END: end_property(end)}) == end
    assert snapshot_end({SNAPSHOT_END: SNAPSHOT_READING}) == SNAPSHOT_READING
    assert snapshot_end({"binlogkit.definition": "{}"}) is None
