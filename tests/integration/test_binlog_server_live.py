"""A real MariaDB replica replicates from ``binlogkit serve``.

A MariaDB primary runs the sandbox workload (binlog_format=ROW, binlogs cut
at 1 MiB so there are several files); ``binlogkit serve`` serves a folder
into which its binlog files are copied while the replica reads: the first two
at the start, the third in two halves (cut anywhere, as a copy in progress
is), the rest after it, each listed in the index once complete. A second
MariaDB (semi-sync on), pointed at it with CHANGE MASTER TO, replicates by
position from the first file up to a transaction in the middle of the third
(``START SLAVE UNTIL``) as a mysql_native_password user, then reconnects by
GTID (``MASTER_USE_GTID=slave_pos``) as a client_ed25519 user: the server must
find the file from the GTID_LIST events and skip what the replica has. At
the end every workload table equals the primary's, the replica acknowledged
events, and every query it asked was answered without an error.
"""

from __future__ import annotations

import glob
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from workload_tables import snapshot

import binlogkit
from binlogkit.binlog.constants import EventType
from binlogkit.io.binlog_index import find_index, write_index
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.sandbox.server import free_port
from binlogkit.sandbox.workload import build_workload, run_workload
from binlogkit.services.relay import BinlogRelay

PASSWORD = "r3pl-secret"
SERVE = [sys.executable, "-m", "binlogkit", "-v", "serve"]
CLIENT_ED25519 = "/usr/lib/*/libmariadb3/plugin/client_ed25519.so"
"""The replica's side of ed25519 (Debian's libmariadb3, which mariadb-client needs)."""


def start_serve(folder: Path, log: Path, *options: str) -> tuple[subprocess.Popen[bytes], int]:
    """Start ``binlogkit serve`` on ``folder``; the process and its port (from its log)."""
    with log.open("ab") as out:
        proc = subprocess.Popen([*SERVE, str(folder), *options, "--server-id", "77"], stderr=out)
    deadline = time.monotonic() + 30
    while not (found := re.findall(r"serving .* on 127\.0\.0\.1:(\d+)", log.read_text())):
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)
    return proc, int(found[-1])


def serve(folder: Path, log: Path, password_file: Path) -> Iterator[int]:
    """Run ``binlogkit serve`` on ``folder`` (a free port); yield the port."""
    options = ["--port", "0", "--user", "repl", "--user", "repl_ed", "--semi-sync"]
    options += ["--auth-plugin", "repl_ed=client_ed25519", "--password-file", str(password_file)]
    proc, port = start_serve(folder, log, *options)
    try:
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


def wait_until(
    replica: MariaDBSandbox, what: str, done: object, timeout: float = 60, reconnects: bool = False
) -> None:
    """Wait until ``what`` gives ``done``; any replication error fails at once, but for
    connection errors when the replica is to reconnect (then only the timeout fails)."""
    deadline = time.monotonic() + timeout
    while replica.query(what)[0][0] != done:
        status = replica.replica_status()
        errors = (None if reconnects else status.get("Last_IO_Error"), status.get("Last_SQL_Error"))
        assert not any(errors) and time.monotonic() < deadline, (what, done, status)
        time.sleep(0.1)


def plugin_dir(server: MariaDBSandbox, folder: Path) -> str:
    """A plugin folder with the server's plugins and the client_ed25519 plugin."""
    found = glob.glob(CLIENT_ED25519)
    assert found, f"no {CLIENT_ED25519}: apt-get install libmariadb3"
    folder.mkdir()
    own = Path(str(server.query("SELECT @@plugin_dir")[0][0]))
    for plugin in [*own.iterdir(), Path(found[0])]:
        (folder / plugin.name).symlink_to(plugin)
    return str(folder)


def test_mariadb_replica_replicates_by_position_then_by_gtid(
    mariadb_factory: object, tmp_path: Path
) -> None:
    primary = mariadb_factory("serve-primary", max_binlog_size=1 << 20)  # type: ignore[operator]
    replica = mariadb_factory(  # type: ignore[operator]
        "serve-replica",
        server_id=2,
        plugin_dir=plugin_dir(primary, tmp_path / "plugins"),
        rpl_semi_sync_slave_enabled="ON",
    )
    workload = run_workload(primary)
    files = primary.flush_binlogs()
    assert len(files) >= 4
    with binlogkit.open([str(f) for f in files]) as events:
        gtids = [
            (Path(e.header.file or "").name, e.header.offset, e.gtid)  # type: ignore[attr-defined]
            for e in events
            if e.header.type_code == EventType.MARIADB_GTID
        ]
    # the middle: a transaction of the third file, and the GTID before it
    third = [i for i, g in enumerate(gtids) if g[0] == files[2].name]
    until_file, until_pos, _ = gtids[third[len(third) // 2]]
    before = str(gtids[third[len(third) // 2] - 1][2])

    folder = tmp_path / "served"
    folder.mkdir()
    index = folder / "mysql-bin.index"

    def copy(count: int) -> None:
        for path in files[:count]:
            (folder / path.name).write_bytes(path.read_bytes())
        write_index(index, [p.name for p in files[:count]])

    copy(2)
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
        # the replica waits at the end of the second file (its ROTATE names the third)
        deadline = time.monotonic() + 60
        while replica.replica_status().get("Master_Log_File") != files[2].name:
            assert time.monotonic() < deadline, replica.replica_status()
            time.sleep(0.1)
        third_bytes = files[2].read_bytes()
        (folder / files[2].name).write_bytes(third_bytes[: len(third_bytes) // 2 + 7])
        write_index(index, [p.name for p in files[:3]])
        time.sleep(0.3)  # the server sends what is whole and waits inside an event
        with (folder / files[2].name).open("ab") as f:
            f.write(third_bytes[len(third_bytes) // 2 + 7 :])
        copy(len(files))
        wait_until(replica, "SELECT @@gtid_slave_pos", before)
        replica.execute(
            "STOP SLAVE; RESET SLAVE; CHANGE MASTER TO MASTER_USE_GTID = slave_pos, "
            f"MASTER_USER = 'repl_ed', MASTER_PASSWORD = '{PASSWORD}'; START SLAVE"
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
    assert "connected as repl\n" in text and "connected as repl_ed\n" in text
    assert "acknowledges semi-sync" in text
    assert "answered with error" not in text
    assert PASSWORD not in text


def test_chain_primary_relay_serve_replica_under_load(
    mariadb_factory: object, tmp_path: Path
) -> None:
    """MariaDB primary -> ``binlogkit relay`` -> ``binlogkit serve`` -> MariaDB replica while the
    workload runs; the server is killed (SIGKILL) in the middle and started again on its port:
    the replica reconnects and ends with the primary's tables."""
    primary = mariadb_factory("chain-primary", max_binlog_size=1 << 20)  # type: ignore[operator]
    replica = mariadb_factory("chain-replica", server_id=3)  # type: ignore[operator]
    primary.execute(
        "SET sql_log_bin = 0; CREATE USER 'relay'@'127.0.0.1'; "
        "GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'relay'@'127.0.0.1'"
    )
    workload = build_workload()
    half = len(workload.statements) // 2
    folder = tmp_path / "relayed"
    relay = BinlogRelay(f"mariadb://relay@127.0.0.1:{primary.port}", folder, server_id=9)
    relaying = threading.Thread(target=relay.run)
    relaying.start()
    log = tmp_path / "serve.log"
    try:
        deadline = time.monotonic() + 30
        while find_index(folder) is None or relay.writer.events_written < 2:
            assert relaying.is_alive() and time.monotonic() < deadline
            time.sleep(0.05)
        port = str(free_port())
        options = ("--port", port, "--user", f"repl:{PASSWORD}")
        proc, _ = start_serve(folder, log, *options)
        replica.execute(
            f"CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = {port}, "
            f"MASTER_USER = 'repl', MASTER_PASSWORD = '{PASSWORD}', "
            "MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 1; START SLAVE"
        )
        primary.execute(workload.script_of(workload.statements[:half]))
        primary.execute("FLUSH BINARY LOGS")
        proc.kill()  # in the middle: no goodbye to the replica
        proc.wait()
        primary.execute(workload.script_of(workload.statements[half:]))
        proc, _ = start_serve(folder, log, *options)
        try:
            at_end = primary.gtid_binlog_pos
            wait_until(replica, "SELECT @@gtid_slave_pos", at_end, timeout=120, reconnects=True)
        finally:
            replica.execute("STOP SLAVE")
            proc.terminate()
            proc.wait(10)
    finally:
        relay.stop()
        relaying.join(30)
    assert snapshot(replica, workload) == snapshot(primary, workload)
    assert log.read_text().count("dumps BinlogDump") >= 2  # it came back after the kill
