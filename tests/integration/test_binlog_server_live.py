"""A real MariaDB replica replicates from ``binlogkit serve``.

A MariaDB primary runs the sandbox workload (binlog_format=ROW, binlogs cut
at 1 MiB so there are several files); its binlog files are copied to a folder
with their index, and ``binlogkit serve`` serves that folder. A second
MariaDB, pointed at it with CHANGE MASTER TO, replicates by position from
the first file up to a transaction in the middle of the third
(``START SLAVE UNTIL``), then reconnects by GTID (``MASTER_USE_GTID=slave_pos``):
the server must find the file from the GTID_LIST events and skip what the
replica has. At the end every workload table equals the primary's, and
every query the replica asked was answered without an error.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from workload_tables import snapshot

import binlogkit
from binlogkit.binlog.constants import EventType
from binlogkit.io.binlog_index import write_index
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.sandbox.workload import run_workload

PASSWORD = "r3pl-secret"
SERVE = [sys.executable, "-m", "binlogkit", "-v", "serve"]


def serve(folder: Path, log: Path, password_file: Path) -> Iterator[int]:
    """Run ``binlogkit serve`` on ``folder`` (a free port); yield the port."""
    options = ["--port", "0", "--user", "repl", "--password-file", str(password_file)]
    with log.open("wb") as out:
        proc = subprocess.Popen([*SERVE, str(folder), *options, "--server-id", "77"], stderr=out)
    try:
        deadline = time.monotonic() + 30
        while not (found := re.search(r"serving .* on 127\.0\.0\.1:(\d+)", log.read_text())):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        yield int(found[1])
    finally:
        proc.terminate()
        proc.wait(10)


def wait_until(replica: MariaDBSandbox, what: str, done: object, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while replica.query(what)[0][0] != done:
        status = replica.replica_status()
        errors = (status.get("Last_IO_Error"), status.get("Last_SQL_Error"))
        assert not any(errors) and time.monotonic() < deadline, (what, done, errors)
        time.sleep(0.1)


def test_mariadb_replica_replicates_by_position_then_by_gtid(
    mariadb_factory: object, tmp_path: Path
) -> None:
    primary = mariadb_factory("serve-primary", max_binlog_size=1 << 20)  # type: ignore[operator]
    replica = mariadb_factory("serve-replica", server_id=2)  # type: ignore[operator]
    workload = run_workload(primary)
    files = primary.flush_binlogs()
    assert len(files) >= 4
    folder = tmp_path / "served"
    folder.mkdir()
    for path in files:
        shutil.copyfile(path, folder / path.name)
    write_index(folder / "mysql-bin.index", [p.name for p in files])
    # the middle: a transaction of the third file, and the GTID before it
    with binlogkit.open(str(folder)) as events:
        gtids = [
            (Path(e.header.file or "").name, e.header.offset, e.gtid)  # type: ignore[attr-defined]
            for e in events
            if e.header.type_code == EventType.MARIADB_GTID
        ]
    third = [i for i, g in enumerate(gtids) if g[0] == files[2].name]
    middle = third[len(third) // 2]
    until_file, until_pos, _ = gtids[middle]
    before = str(gtids[middle - 1][2])

    password_file = tmp_path / "password"
    password_file.write_text(PASSWORD + "\n")
    log = tmp_path / "serve.log"
    for port in serve(folder, log, password_file):
        replica.execute(
            f"CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = {port}, "
            f"MASTER_USER = 'repl', MASTER_PASSWORD = '{PASSWORD}', MASTER_USE_GTID = no, "
            f"MASTER_LOG_FILE = '{files[0].name}', MASTER_LOG_POS = 4; "
            f"START SLAVE UNTIL MASTER_LOG_FILE = '{until_file}', MASTER_LOG_POS = {until_pos}"
        )
        wait_until(replica, "SELECT @@gtid_slave_pos", before)
        replica.execute(
            "STOP SLAVE; RESET SLAVE; CHANGE MASTER TO MASTER_USE_GTID = slave_pos; START SLAVE"
        )
        wait_until(replica, "SELECT @@gtid_slave_pos", primary.gtid_binlog_pos)
        status = replica.replica_status()
        replica.execute("STOP SLAVE")
    assert status["Master_Log_File"] == files[-1].name
    assert snapshot(replica, workload) == snapshot(primary, workload)
    text = log.read_text()
    assert f"dumps BinlogDump(file='{files[0].name}', position=4, server_id=2" in text
    assert f"server_id=2, flags=0) after MariaDB GTIDs '{before}'" in text
    assert f"starts at {files[0].name}:4" in text
    assert f"starts at {until_file}:4" in text  # the file chosen by its GTID_LIST
    assert "answered with error" not in text
    assert PASSWORD not in text
