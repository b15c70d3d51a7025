"""Waiting for a MariaDB binlog to stop growing (a plain module: tests import it by name)."""

from __future__ import annotations

import time

from binlogkit.sandbox import MariaDBSandbox


def settle(server: MariaDBSandbox, quiet: float = 0.5) -> None:
    """Wait until the binlog stops growing: MariaDB writes its BINLOG_CHECKPOINT events
    shortly after the commits, which would race a comparison of stream and files."""
    last = None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        status = server.query("SHOW MASTER STATUS")[0][:2]
        if status == last:
            return
        last = status
        time.sleep(quiet)
