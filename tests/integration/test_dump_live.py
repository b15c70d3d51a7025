"""Live: ``binlogkit dump`` prints what ``mariadb-binlog`` prints, line for line.

A real MariaDB runs the (small) workload of :mod:`binlogkit.sandbox.workload`
(every column type, inserts, updates, deletes, XA) under several settings;
then ``mariadb-binlog`` and ``binlogkit dump`` print each binlog file in each
output mode and with selections, and the outputs must be equal as a whole.
Nothing is left out: ``mariadb-binlog`` prints no version line of its own in
a dump.

Remote reading (``-R``): both tools read the binlogs of a running server
over the replication protocol, and the outputs must again be equal. The
tool's remote dumps differ from its local ones, and ours follow: the
format description the server sends has its in-use flag cleared (no
"not closed properly" warning for the active file); a dump starting past
offset 4 gets the format description re-sent (printed at the start
position, ``end_log_pos 0``); ``--to-last-log`` prints the server's fake
ROTATE events and keeps counting ``# at`` offsets on from the end of the
previous file instead of restarting at 4.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from dump_compare import TOOL, assert_same_dump, our_dump, our_run, tool_dump, tool_run

from binlogkit.sandbox import MariaDBSandbox
from binlogkit.sandbox.server import OptionValue
from binlogkit.sandbox.workload import build_workload, run_workload

pytestmark = [
    pytest.mark.mariadb,
    pytest.mark.xdist_group("mariadb"),
    pytest.mark.skipif(TOOL is None, reason="mariadb-binlog not installed"),
]

VARIANTS: dict[str, dict[str, OptionValue]] = {
    "full": {},
    "minimal": {"binlog_row_image": "MINIMAL"},
    "noblob": {"binlog_row_image": "NOBLOB"},
    "compressed": {"log_bin_compress": True, "log_bin_compress_min_len": 10},
    "gtid-no-checksum": {
        "binlog_checksum": "NONE",
        "server_id": 42,
        "gtid_domain_id": 7,
        "gtid_strict_mode": True,
    },
}

MODES: dict[str, tuple[str, ...]] = {
    "default": (),
    "-v": ("-v",),
    "-vv": ("-vv",),
    "decode-rows": ("--base64-output=decode-rows",),
    "decode-rows -vv": ("--base64-output=decode-rows", "-vv"),
    "hexdump": ("--hexdump",),
    "short-form": ("--short-form",),
    "skip-annotate": ("--skip-annotate-row-events", "-v"),
}


@dataclass(frozen=True, slots=True)
class LiveBinlogs:
    name: str
    files: list[Path]


@pytest.fixture(scope="module", params=list(VARIANTS))
def live(
    request: pytest.FixtureRequest, mariadb_factory: Callable[..., MariaDBSandbox]
) -> LiveBinlogs:
    server = mariadb_factory(f"dump-{request.param}", **VARIANTS[request.param])
    try:
        run_workload(server, build_workload(small=True))
        files = server.flush_binlogs()[:-1]  # the last one is still open
    finally:
        server.stop()
    return LiveBinlogs(request.param, files)


@pytest.mark.parametrize("mode", list(MODES))
def test_dump_equals_mariadb_binlog(live: LiveBinlogs, mode: str) -> None:
    args = MODES[mode]
    assert live.files
    for path in live.files:
        assert_same_dump(tool_dump(path, *args), our_dump(path, *args), f"{path.name} {mode}")


def test_dump_selections_equal_mariadb_binlog(live: LiveBinlogs) -> None:
    path = max(live.files, key=lambda p: p.stat().st_size)  # the one with the workload
    positions = [
        int(line.split()[2])
        for line in tool_dump(path).decode().splitlines()
        if line.startswith("# at ")
    ]
    assert len(positions) > 10
    start, stop = positions[len(positions) // 3], positions[2 * len(positions) // 3]
    for args in (
        (f"--start-position={start}",),
        (f"--stop-position={stop}",),
        (f"--start-position={start}", f"--stop-position={stop}", "-v"),
        ("--database=bk", "-v"),
        ("--database=nosuchdb",),
        ("--table=t_int", "-vv"),
        ("--rewrite-db=bk->other", "-v"),
        ("--do-domain-ids=7",),
        ("--ignore-domain-ids=7",),
        ("--server-id=42",),
    ):
        assert_same_dump(tool_dump(path, *args), our_dump(path, *args), f"{path.name} {args}")


# -- remote reading (-R) -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RemoteServer:
    server: MariaDBSandbox
    files: list[Path]
    """The server's binlogs, oldest first; all but the last are complete."""

    @property
    def connect(self) -> tuple[str, ...]:
        return ("-R", f"--socket={self.server.socket}", "--user=root")


@pytest.fixture(scope="module")
def remote(mariadb_factory: Callable[..., MariaDBSandbox]) -> RemoteServer:
    server = mariadb_factory("dump-remote")
    run_workload(server, build_workload(small=True))
    files = server.flush_binlogs()
    server.wait_for_checkpoint()  # nothing more gets written: both tools see the same
    return RemoteServer(server, files)


def _positions(path: Path) -> list[int]:
    text = tool_dump(path).decode()
    return sorted({int(line.split()[2]) for line in text.splitlines() if line.startswith("# at ")})


def test_remote_dump_equals_mariadb_binlog(remote: RemoteServer) -> None:
    first, second = remote.files[0].name, remote.files[1].name
    positions = _positions(remote.files[0])
    assert len(positions) > 10
    start, stop = positions[len(positions) // 3], positions[2 * len(positions) // 3]
    for args in (
        (first,),
        ("-vv", first),
        ("--hexdump", first),
        ("--base64-output=decode-rows", "-v", first),
        ("--short-form", first),
        ("--skip-annotate-row-events", "-v", first),
        (f"--start-position={start}", "-v", first),
        (f"--start-position={start}", f"--stop-position={stop}", first),
        (first, second),
        ("--to-last-log", first),
        ("--to-last-log", "--hexdump", f"--start-position={start}", first),
        ("nosuch-bin.000001",),
        (first, "nosuch-bin.000001"),
    ):
        want = tool_run(*remote.connect, *args)
        assert b"DELIMITER" in want
        assert_same_dump(want, our_run(*remote.connect, *args), f"-R {args}")


def test_remote_dump_by_url(remote: RemoteServer) -> None:
    first = remote.files[0].name
    url = f"mariadb://root@localhost/?socket={remote.server.socket}"
    want = tool_run(*remote.connect, first)
    assert_same_dump(want, our_run(url, first), f"{url} {first}")


def test_remote_raw_copies_the_servers_files(remote: RemoteServer, tmp_path: Path) -> None:
    names = [p.name for p in remote.files]
    result = our_run(
        *remote.connect, "--raw", "--to-last-log", f"--result-file={tmp_path}", names[0]
    )
    assert result == b""
    for path in remote.files:
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name
    # One file alone: the dump stops at its end.
    alone = tmp_path / "alone"
    our_run(*remote.connect, "--raw", f"--result-file={alone}", names[0])
    assert sorted(p.name for p in alone.glob("mysql-bin.0*")) == [names[0]]
    assert (alone / names[0]).read_bytes() == remote.files[0].read_bytes()


def test_remote_stop_never_follows_the_server(remote: RemoteServer) -> None:
    """--stop-never prints new events as they come, as a --to-last-log dump shows them after."""
    last = remote.server.flush_binlogs()[-1].name
    command = [sys.executable, "-c", "from binlogkit.cli.main import main; main()", "dump"]
    follower = subprocess.Popen(
        [*command, *remote.connect, "--stop-never", "--connection-server-id=4242", last],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        remote.server.execute(
            "CREATE TABLE bk.follow (a INT PRIMARY KEY, b TEXT);"
            "INSERT INTO bk.follow VALUES (1, 'one'), (2, 'two');"
            "UPDATE bk.follow SET b = 'uno' WHERE a = 1;"
        )
        want = tool_run(*remote.connect, "--to-last-log", last)
        body = want[: want.rindex(b"DELIMITER ;\n")]  # what a dump still running has printed
        assert body.count(b"COMMIT/*!*/;") == 2
        seen = b""
        deadline = time.monotonic() + 30
        assert follower.stdout is not None
        os.set_blocking(follower.stdout.fileno(), False)
        while len(seen) < len(body) and time.monotonic() < deadline:
            seen += follower.stdout.read() or b""
            time.sleep(0.05)
        assert_same_dump(body, seen, f"--stop-never {last}")
    finally:
        follower.send_signal(signal.SIGTERM)
        follower.wait(10)
