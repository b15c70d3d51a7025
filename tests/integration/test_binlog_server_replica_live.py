"""Real MariaDB replicas against binlogkit's binlog server (in a thread of the test).

The binlogs of a MariaDB primary (the sandbox workload) are served from a
folder. A replica asking to start after a GTID the binlogs do not hold gets
MariaDB's error 1236 ("not in the master's binlog") and stops its I/O
thread; ``START SLAVE UNTIL master_gtid_pos`` stops both threads right after
that transaction, because the server ends the dump with a GTID_LIST flagged
UNTIL_REACHED, as a MariaDB primary does. A replica of a folder with no
binlog yet waits, and replicates everything once the binlogs arrive. A
semi-sync replica (``rpl_semi_sync_slave_enabled``) acknowledges the tail of
what is served: a wait for that place ends with True, and observers see the
ACKs; a wait for a place not served yet times out.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from workload_tables import snapshot

import binlogkit
from binlogkit.binlog.constants import EventType
from binlogkit.io.binlog_index import write_index
from binlogkit.protocol.auth.base import Secret
from binlogkit.protocol.replication import SemiSyncAck
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.sandbox.workload import run_workload
from binlogkit.services.binlog_server import (
    BinlogServer,
    BinlogServerThread,
    ReplicaSession,
    User,
)
from binlogkit.services.dump_observers import DumpObserver

PASSWORD = "gtid-secret"


def wait_for(replica: MariaDBSandbox, done: object, timeout: float = 60) -> dict[str, str]:
    """SHOW SLAVE STATUS once ``done(status)`` holds."""
    deadline = time.monotonic() + timeout
    while not done(status := replica.replica_status()):  # type: ignore[operator]
        assert time.monotonic() < deadline, status
        time.sleep(0.1)
    return status


def wait_applied(replica: MariaDBSandbox, position: str, timeout: float = 60) -> None:
    """Wait until the replica has applied up to the GTID position ``position``."""
    deadline = time.monotonic() + timeout
    while replica.query("SELECT @@gtid_slave_pos")[0][0] != position:
        assert time.monotonic() < deadline, replica.replica_status()
        time.sleep(0.1)


def served_copy(files: list[Path], folder: Path) -> Path:
    """``folder`` with a copy of ``files`` and their index."""
    folder.mkdir()
    for path in files:
        shutil.copyfile(path, folder / path.name)
    write_index(folder / "mysql-bin.index", [p.name for p in files])
    return folder


def change_master(port: int) -> str:
    """CHANGE MASTER TO binlogkit's server on ``port``, by GTID, retrying every second."""
    return (
        f"CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = {port}, "
        f"MASTER_USER = 'repl', MASTER_PASSWORD = '{PASSWORD}', "
        "MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 1"
    )


def test_gtid_start_refused_and_until_gtid(mariadb_factory: object, tmp_path: Path) -> None:
    primary = mariadb_factory("gtid-primary")  # type: ignore[operator]
    replica = mariadb_factory("gtid-replica", server_id=4)  # type: ignore[operator]
    run_workload(primary)
    files = primary.flush_binlogs()
    folder = served_copy(files, tmp_path / "served")
    with binlogkit.open([str(f) for f in files]) as events:
        gtids = [e.gtid for e in events if e.header.type_code == EventType.MARIADB_GTID]  # type: ignore[attr-defined]
    last, middle = gtids[-1], gtids[len(gtids) // 2]
    server = BinlogServer(folder, [User("repl", Secret(PASSWORD))], server_id=77)
    with BinlogServerThread(server):
        replica.execute(
            f"{change_master(server.port)}; "
            f"SET GLOBAL gtid_slave_pos = '{last.domain_id}-{last.server_id}-{last.seq_no + 5}'; "
            "START SLAVE"
        )
        status = wait_for(replica, lambda s: s.get("Last_IO_Errno") == "1236")
        assert (
            f"Error: connecting slave requested to start from GTID {last.domain_id}-"
            f"{last.server_id}-{last.seq_no + 5}, which is not in the master's binlog"
        ) in status["Last_IO_Error"]
        replica.execute(
            "STOP SLAVE; SET GLOBAL gtid_slave_pos = ''; "
            f"START SLAVE UNTIL master_gtid_pos = '{middle}'"
        )
        wait_for(
            replica,
            lambda s: s.get("Slave_IO_Running") == "No" and s.get("Slave_SQL_Running") == "No",
        )
        assert replica.query("SELECT @@gtid_slave_pos") == [(str(middle),)]
        replica.execute("STOP SLAVE")


def test_a_replica_of_an_empty_folder_waits_for_the_first_binlog(
    mariadb_factory: object, tmp_path: Path
) -> None:
    primary = mariadb_factory("empty-primary")  # type: ignore[operator]
    replica = mariadb_factory("empty-replica", server_id=5)  # type: ignore[operator]
    workload = run_workload(primary)
    files = primary.flush_binlogs()
    folder = tmp_path / "served"
    folder.mkdir()
    server = BinlogServer(folder, [User("repl", Secret(PASSWORD))], server_id=77)
    with BinlogServerThread(server):
        replica.execute(f"{change_master(server.port)}; START SLAVE")
        time.sleep(2)
        assert replica.replica_status()["Last_IO_Error"] == ""
        staged = tmp_path / "staged"
        staged.mkdir()
        for path in files:  # each file whole when it appears, as the relay's are
            shutil.copyfile(path, staged / path.name)
            (staged / path.name).rename(folder / path.name)
        write_index(folder / "mysql-bin.index", [p.name for p in files])
        at_end = primary.gtid_binlog_pos
        wait_for(replica, lambda s: s.get("Gtid_IO_Pos") == at_end)
        wait_applied(replica, at_end)
        replica.execute("STOP SLAVE")
    assert snapshot(replica, workload) == snapshot(primary, workload)


class AckLog(DumpObserver):
    def __init__(self) -> None:
        self.acks: list[tuple[str, int]] = []

    def acknowledged(self, session: ReplicaSession, ack: SemiSyncAck) -> None:
        self.acks.append((ack.file, ack.position))


def test_semi_sync_replica_acknowledges_what_is_served(
    mariadb_factory: object, tmp_path: Path
) -> None:
    primary = mariadb_factory("semi-primary")  # type: ignore[operator]
    replica = mariadb_factory(  # type: ignore[operator]
        "semi-replica", server_id=6, rpl_semi_sync_slave_enabled="ON"
    )
    run_workload(primary)
    files = primary.flush_binlogs()
    folder = served_copy(files, tmp_path / "served")
    acks = AckLog()
    users = [User("repl", Secret(PASSWORD))]
    server = BinlogServer(folder, users, server_id=77, semi_sync=True, observers=[acks])
    last, size = files[-1].name, files[-1].stat().st_size
    with BinlogServerThread(server) as running:
        replica.execute(f"{change_master(server.port)}; START SLAVE")
        assert running.wait_for_ack(last, size, timeout=60)
        # an ACK says the replica has the events (in its relay log), not that it applied them
        assert replica.replica_status()["Gtid_IO_Pos"] == primary.gtid_binlog_pos
        assert not running.wait_for_ack(last, size + 1, timeout=0.5)  # not served yet
        replica.execute("STOP SLAVE")
    assert (last, size) in acks.acks
    assert acks.acks == sorted(acks.acks)
