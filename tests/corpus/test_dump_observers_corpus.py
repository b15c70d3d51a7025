"""Dump observers change what each replica of binlogkit's server gets.

Three MySQL 8.0 files (GTIDs, ROWS_QUERY, three tables) are served to two
users at once. A :class:`ReplicaFilter` gives one user's stream exactly what
:meth:`ReplicationFilter.filter` keeps of the files (a table left out, or a
database renamed) while the other user gets everything; an observer that adds
and drops events is obeyed event for event.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Sequence
from pathlib import Path

import pytest
from fake_primary import file_keys, keyed
from time_limit import time_limit

import binlogkit
from binlogkit.binlog.constants import EventType
from binlogkit.binlog.events import Event
from binlogkit.io.binlog_index import write_index
from binlogkit.pipeline.filters import Flavor, ReplicationFilter
from binlogkit.protocol.auth.base import Secret
from binlogkit.services.binlog_server import BinlogServer, BinlogServerThread, ReplicaSession, User
from binlogkit.services.dump_observers import DumpEvent, DumpObserver, ReplicaFilter
from binlogkit.services.replica_stream import BinlogStream

pytestmark = pytest.mark.corpus

SAMPLES = "avaitla+mysqlbinlog2parquet/test/samples"
CHAIN = [f"{SAMPLES}/mysql-bin.00000{i}" for i in (4, 5, 6)]
USERS = [User("filtered", Secret("pw")), User("whole", Secret("pw"))]


@pytest.fixture
def folder(corpus_dir: Path, tmp_path: Path) -> Path:
    for name in CHAIN:
        shutil.copyfile(corpus_dir / name, tmp_path / Path(name).name)
    write_index(tmp_path / "mysql-bin.index", [Path(n).name for n in CHAIN])
    return tmp_path


def stream(server: BinlogServer, user: str) -> list[Event]:
    url = f"mysql://{user}:pw@127.0.0.1:{server.port}"
    with BinlogStream(url, start="oldest", server_id=41, blocking=False) as events:
        return list(events)


def described(events: Sequence[Event]) -> list[tuple[object, ...]]:
    """What a filter decides about each event: where it ends (a renamed event is shorter, the
    position after it is the same), its type and names."""
    return [
        (
            Path(e.header.file or "").name,
            e.header.log_pos,
            e.header.type_code,
            getattr(e, "schema", None),
            getattr(e, "table_name", None),
            getattr(e, "db", None),
        )
        for e in events
    ]


@pytest.mark.parametrize(
    "rules",
    [
        ReplicationFilter(ignore_table=["binlogtest.accounts"], flavor=Flavor.MYSQL),
        ReplicationFilter(rewrite_db={"binlogtest": "copy"}, flavor=Flavor.MYSQL),
    ],
    ids=["ignore-table", "rewrite-db"],
)
def test_each_replica_gets_what_its_filter_keeps(
    folder: Path, corpus_dir: Path, rules: ReplicationFilter
) -> None:
    files = [folder / Path(n).name for n in CHAIN]
    with binlogkit.open([str(f) for f in files]) as events:
        expected = described(list(rules.filter(events)))

    def choose(session: ReplicaSession) -> ReplicationFilter | None:
        return rules if session.user == "filtered" else None

    server = BinlogServer(folder, USERS, observers=[ReplicaFilter(choose)])
    with BinlogServerThread(server), time_limit(30):
        filtered = stream(server, "filtered")
        whole = stream(server, "whole")
    assert described(filtered) == expected
    assert keyed(whole) == file_keys(files)
    assert len(filtered) < len(whole) or rules.rewrite_db
    if rules.rewrite_db:
        maps = [e for e in filtered if e.header.type_code == EventType.TABLE_MAP]
        assert maps and {e.schema for e in maps} == {"copy"}  # type: ignore[attr-defined]


class MarkCommits(DumpObserver):
    """Drops ROWS_QUERY events and sends an IGNORABLE event after each XID."""

    def __init__(self) -> None:
        self.started: list[tuple[str, int]] = []
        self.stopped = 0

    def start(self, session: ReplicaSession, file: str, position: int) -> None:
        self.started.append((file, position))

    def send_event(self, session: ReplicaSession, event: DumpEvent) -> Sequence[bytes] | None:
        if event.type_code == EventType.ROWS_QUERY:
            return []
        if event.type_code == EventType.XID:
            end = event.offset + len(event.raw)
            header = struct.pack("<IBIIIH", 0, EventType.IGNORABLE, 1, 19 + 4, end, 0x80)
            return [event.raw, header + struct.pack("<I", zlib.crc32(header))]
        return None

    def stop(self, session: ReplicaSession) -> None:
        self.stopped += 1


def test_an_observer_drops_and_adds_events(folder: Path) -> None:
    files = [folder / Path(n).name for n in CHAIN]
    observer = MarkCommits()
    server = BinlogServer(folder, USERS, observers=[observer])
    with BinlogServerThread(server), time_limit(30):
        got = stream(server, "whole")
    codes = [e.header.type_code for e in got]
    with binlogkit.open([str(f) for f in files]) as events:
        original = [e.header.type_code for e in events]
    assert EventType.ROWS_QUERY in original and EventType.ROWS_QUERY not in codes
    xids = original.count(EventType.XID)
    assert codes.count(EventType.IGNORABLE) == xids > 0
    assert [c for c in codes if c != EventType.IGNORABLE] == [
        c for c in original if c != EventType.ROWS_QUERY
    ]
    assert observer.started == [(files[0].name, 4)] and observer.stopped == 1


def test_serve_command_filters_every_replica(folder: Path, tmp_path: Path) -> None:
    files = [folder / Path(n).name for n in CHAIN]
    rules = ReplicationFilter(ignore_table=["binlogtest.accounts"], flavor=Flavor.MYSQL)
    with binlogkit.open([str(f) for f in files]) as events:
        expected = described(list(rules.filter(events)))
    log = tmp_path / "serve.log"
    command = [sys.executable, "-m", "binlogkit", "serve", str(folder), "--port", "0"]
    command += ["--user", "whole:pw", "--replicate-ignore-table", "binlogtest.accounts"]
    with log.open("wb") as out:
        proc = subprocess.Popen([*command, "--filter-flavor", "mysql"], stderr=out)
    try:
        with time_limit(30):
            while not (found := re.search(r"on 127\.0\.0\.1:(\d+)", log.read_text())):
                assert proc.poll() is None, log.read_text()
                time.sleep(0.05)
            url = f"mysql://whole:pw@127.0.0.1:{found[1]}"
            with BinlogStream(url, start="oldest", server_id=41, blocking=False) as events:
                got = described(list(events))
    finally:
        proc.terminate()
        proc.wait(10)
    assert got == expected
