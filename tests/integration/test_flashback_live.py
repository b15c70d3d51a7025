"""Flashback and replay against a live MariaDB.

A workload's tables are created and filled, snapshotted (CHECKSUM TABLE and
every row), then changed by the workload's UPDATEs, DELETEs, REPLACEs and
transactions (XA included). Applying the flashback of the binlog file that
holds only those changes, through the ``mariadb`` client, must give the
snapshot back: as BINLOG statements, as plain SQL, and as a binlog file
(``flashback --to``) replayed by ``mariadb-binlog FILE | mariadb``. The reversed
rows events must equal, byte for byte but the checksum (which
``mariadb-binlog`` leaves stale), those of ``mariadb-binlog --flashback``.
Replay: ``binlogkit dump`` of the whole workload piped into a fresh server
reproduces every table.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from flashback_tool import tool_flashback_rows
from workload_tables import Snapshot, snapshot

import binlogkit
from binlogkit.binlog.decoder import encode_event
from binlogkit.pipeline.flashback import flashback
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.sandbox.workload import Workload, build_workload

# the restore tests run in order on one server (each starts from the one before's restore):
# on one xdist worker, in file order
pytestmark = pytest.mark.xdist_group("flashback")


def _phases(workload: Workload) -> tuple[str, str]:
    """The script that creates and fills the tables, and the one that changes them."""
    fill = 2 * len(workload.tables)
    return (
        workload.script_of(workload.statements[:fill]),
        workload.script_of(workload.statements[fill:]),
    )


def _binlogkit(*args: str) -> bytes:
    done = subprocess.run(
        [sys.executable, "-c", "from binlogkit.cli.main import main; main()", *args],
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout


def _apply(server: MariaDBSandbox, script: bytes) -> None:
    done = subprocess.run(server.client_command(), input=script, capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[:2000]


def _changes_file(server: MariaDBSandbox, script: str) -> Path:
    """Run ``script`` and give the binlog file that holds exactly its events."""
    server.flush_binlogs()
    server.execute(script)
    return server.flush_binlogs()[-2]


@pytest.fixture(scope="module")
def workload() -> Workload:
    return build_workload()


@pytest.fixture(scope="module")
def changed(mariadb_factory, workload) -> tuple[MariaDBSandbox, Snapshot, Path]:  # type: ignore[no-untyped-def]
    """A server after the workload, the snapshot before its changes, and the changes' binlog."""
    server = mariadb_factory("flashback")
    fill, change = _phases(workload)
    server.execute(fill)
    before = snapshot(server, workload)
    return server, before, _changes_file(server, change)


def test_flashback_binlog_restores_the_tables(changed, workload) -> None:  # type: ignore[no-untyped-def]
    server, before, changes = changed
    assert snapshot(server, workload) != before
    _apply(server, _binlogkit("flashback", str(changes)))
    assert snapshot(server, workload) == before


def test_flashback_sql_restores_the_tables(changed, workload) -> None:  # type: ignore[no-untyped-def]
    server, before, _ = changed
    _, change = _phases(workload)
    assert snapshot(server, workload) == before  # restored by the test above
    changes = _changes_file(server, change)  # the same changes again
    assert snapshot(server, workload) != before
    _apply(server, _binlogkit("flashback", "--sql", str(changes)))
    assert snapshot(server, workload) == before


def test_flashback_to_a_binlog_file_restores_the_tables(changed, workload, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``flashback --to FILE`` writes the undo as a binlog that mariadb-binlog reads without
    error and whose replay through the client restores the tables."""
    server, before, _ = changed
    _, change = _phases(workload)
    assert snapshot(server, workload) == before  # restored by the tests above
    changes = _changes_file(server, change)  # the same changes again
    assert snapshot(server, workload) != before
    undo = tmp_path / "undo-bin.000001"
    assert _binlogkit("flashback", "--to", str(undo), str(changes)) == b""
    tool = subprocess.run(["mariadb-binlog", str(undo)], capture_output=True, check=False)
    assert (tool.returncode, tool.stderr) == (0, b"")
    _apply(server, tool.stdout)
    assert snapshot(server, workload) == before


def test_flashback_events_equal_mariadb_binlog(changed) -> None:  # type: ignore[no-untyped-def]
    _, _, changes = changed
    theirs = tool_flashback_rows([changes])
    with binlogkit.open(str(changes)) as reader:
        undo = flashback(reader)
    ours = {e.header.log_pos: encode_event(e, u.fmt) for u in undo for e in u.rows}
    assert theirs
    for raw in theirs:
        log_pos = int.from_bytes(raw[13:17], "little")
        assert ours[log_pos][:-4] == raw[:-4], f"reversed event ending at {log_pos}"


def test_replay_dump_into_a_fresh_server(mariadb_factory, workload) -> None:  # type: ignore[no-untyped-def]
    source = mariadb_factory("replay-source")
    fill, change = _phases(workload)
    source.execute(fill + change)
    files = source.flush_binlogs()[:-1]
    target = mariadb_factory("replay-target")
    _apply(target, _binlogkit("dump", *map(str, files)))
    want = snapshot(source, workload)
    got = snapshot(target, workload)
    for table in workload.tables:
        assert got[table.name][0] == want[table.name][0], f"CHECKSUM TABLE {table.name}"
