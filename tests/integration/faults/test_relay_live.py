"""``binlogkit relay`` against a live MariaDB: the copy equals the server's own files.

Byte for byte, every file the server lists (the active one up to its current
size), the same after a FLUSH BINARY LOGS, after the relay was killed with
SIGKILL and restarted, and after a SIGTERM (which must end it cleanly).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from fault_proxy import FaultProxy

from binlogkit.sandbox import MariaDBSandbox
from binlogkit.services.relay import BinlogRelay, RelayWriter
from binlogkit.services.replica_stream import Backoff

USER, PASSWORD = "relay", "relay-pass"
_MAIN = "import sys; from binlogkit.cli.main import main; main(sys.argv[1:])"


@pytest.fixture(scope="module")
def server(mariadb_factory: Callable[..., MariaDBSandbox]) -> MariaDBSandbox:
    sandbox = mariadb_factory("relay")
    sandbox.execute(
        f"CREATE USER '{USER}'@'%' IDENTIFIED BY '{PASSWORD}';"
        f"GRANT REPLICATION SLAVE, REPLICATION CLIENT, BINLOG MONITOR ON *.* TO '{USER}'@'%';"
        "CREATE DATABASE relay_test;"
        "CREATE TABLE relay_test.t (id INT PRIMARY KEY, v VARCHAR(200), b BLOB)"
    )
    return sandbox


def _url(server: MariaDBSandbox) -> str:
    return f"mariadb://{USER}:{PASSWORD}@127.0.0.1:{server.port}"


def _workload(server: MariaDBSandbox, start: int, flushes: int) -> None:
    """Inserts, updates and deletes, with ``flushes`` FLUSH BINARY LOGS in between."""
    for round_ in range(flushes + 1):
        base = start + 1000 * round_
        server.execute(
            f"INSERT INTO relay_test.t SELECT {base} + seq, REPEAT('x', seq % 150),"
            f" REPEAT(CHAR(seq % 256), seq * 7) FROM seq_1_to_200;"
            f"UPDATE relay_test.t SET v = CONCAT(v, 'u') WHERE id % 3 = 0 AND id > {base};"
            f"DELETE FROM relay_test.t WHERE id % 7 = 0 AND id > {base};",
            database="relay_test",
        )
        if round_ < flushes:
            server.execute("FLUSH BINARY LOGS")


def _wait_identical(server: MariaDBSandbox, copy: Path, timeout: float = 20.0) -> list[str]:
    """Wait until the copy has every server file with the same bytes; returns the names."""
    deadline = time.monotonic() + timeout
    while True:
        files = server.binlog_files()
        differ = [
            path.name
            for path in files
            if not (copy / path.name).exists()
            or (copy / path.name).read_bytes() != path.read_bytes()
        ]
        if not differ:
            return [path.name for path in files]
        if time.monotonic() > deadline:
            sizes = {
                name: (
                    (server.binlog_dir / name).stat().st_size,
                    (copy / name).stat().st_size if (copy / name).exists() else None,
                )
                for name in differ
            }
            pytest.fail(f"copy differs from the server's files (server, copy sizes): {sizes}")
        time.sleep(0.1)


def _relay_process(server: MariaDBSandbox, copy: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", _MAIN, "relay", _url(server), "--to", str(copy)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def test_relay_thread_copies_and_follows(server: MariaDBSandbox, tmp_path: Path) -> None:
    _workload(server, 0, flushes=2)
    relay = BinlogRelay(_url(server), tmp_path, server_id=4242, heartbeat=1.0)
    thread = threading.Thread(target=relay.run, daemon=True)
    thread.start()
    try:
        names = _wait_identical(server, tmp_path)
        assert len(names) >= 3
        _workload(server, 10_000, flushes=2)
        names = _wait_identical(server, tmp_path)
        assert RelayWriter(tmp_path).files() == names
        index = (tmp_path / "mysql-bin.index").read_text().split()
        assert [Path(line).name for line in index] == names
    finally:
        relay.stop()
        thread.join(10)
    assert not thread.is_alive()


def test_relay_command_survives_kill_and_stops_on_sigterm(
    server: MariaDBSandbox, tmp_path: Path
) -> None:
    _workload(server, 20_000, flushes=1)
    process = _relay_process(server, tmp_path)
    try:
        _wait_identical(server, tmp_path)
        workload = threading.Thread(target=_workload, args=(server, 30_000, 3))
        workload.start()
        time.sleep(0.3)
        process.send_signal(signal.SIGKILL)  # mid-way through the workload
        process.wait(10)
        workload.join()
        process = _relay_process(server, tmp_path)
        names = _wait_identical(server, tmp_path)
        assert RelayWriter(tmp_path).files() == names
        _workload(server, 40_000, flushes=1)
        _wait_identical(server, tmp_path)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=15)
        assert process.returncode == 0, stderr.decode(errors="replace")
        end_file, _, end_position = stderr.decode().strip().splitlines()[-1].rpartition(":")
        assert end_file == names[-1] or end_file in [p.name for p in server.binlog_files()]
        assert int(end_position) == (tmp_path / end_file).stat().st_size
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()


def test_relay_through_cuts_and_a_server_restart(server: MariaDBSandbox, tmp_path: Path) -> None:
    """Connections cut mid-packet and a server restart leave the copy byte-identical."""
    rng = random.Random(20240601)
    with FaultProxy(("127.0.0.1", server.port)) as proxy:
        url = f"mariadb://{USER}:{PASSWORD}@127.0.0.1:{proxy.port}"
        relay = BinlogRelay(
            url, tmp_path, server_id=4343, heartbeat=1.0, reconnect=Backoff(initial=0.02)
        )
        thread = threading.Thread(target=relay.run, daemon=True)
        thread.start()
        try:
            for round_ in range(4):
                proxy.cut_after(rng.randrange(1, 200_000))
                _workload(server, 50_000 + 10_000 * round_, flushes=1)
                if round_ == 1:
                    server.stop()
                    server.start()
                    proxy.upstream = ("127.0.0.1", server.port)
            names = _wait_identical(server, tmp_path)
            assert RelayWriter(tmp_path).files() == names
            assert proxy.cuts >= 2
            assert proxy.connections > proxy.cuts
        finally:
            relay.stop()
            thread.join(10)
        assert not thread.is_alive()
