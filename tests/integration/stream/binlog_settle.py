"""Waiting for MariaDB's last binlog checkpoint (a plain module: tests import it by name)."""

from __future__ import annotations

import time

from binlogkit.sandbox import MariaDBSandbox


def wait_for_checkpoint(server: MariaDBSandbox, timeout: float = 60) -> str:
    """Wait until the active binlog's last BINLOG_CHECKPOINT names that file; return its name.

    After a rotation MariaDB writes, asynchronously (once the engines have made
    the older files' transactions durable), a BINLOG_CHECKPOINT naming the oldest
    file still needed for crash recovery. Once it names the active file no older
    file is pending and the server writes no further checkpoint until the next
    rotation: the active file then holds exactly what was committed, so a stream
    and a read of the files end at the same event.
    """
    deadline = time.monotonic() + timeout
    while True:
        active = str(server.query("SHOW MASTER STATUS")[0][0])
        checkpoints = [
            row[5]
            for row in server.query(f"SHOW BINLOG EVENTS IN '{active}'")
            if row[2] == "Binlog_checkpoint"
        ]
        if checkpoints and checkpoints[-1] == active:
            return active
        if time.monotonic() > deadline:
            raise AssertionError(
                f"no BINLOG_CHECKPOINT naming {active} after {timeout} s: {checkpoints}"
            )
        time.sleep(0.1)
