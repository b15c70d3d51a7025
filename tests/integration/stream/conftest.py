"""A MariaDB 10.11 server for the stream tests, with a workload in three binlog files."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from binlogkit.sandbox import MariaDBSandbox
from binlogkit.sandbox.workload import build_workload, run_workload


@pytest.fixture(scope="module")
def stream_server(mariadb_factory: Callable[..., MariaDBSandbox]) -> MariaDBSandbox:
    """Every column type in row events, DDL, updates and deletes; the last binlog is active.

    Returned once the active file's last BINLOG_CHECKPOINT names it: the server
    writes nothing more on its own, so streams and file reads end alike.
    """
    server = mariadb_factory("stream", gtid_domain_id=3, server_id=11)
    run_workload(server, build_workload(small=True))
    server.flush_binlogs()
    server.execute(
        "CREATE DATABASE s; CREATE TABLE s.k (id INT PRIMARY KEY, v VARCHAR(20));"
        "INSERT INTO s.k VALUES (1, 'a'), (2, 'b'); UPDATE s.k SET v = 'c' WHERE id = 1"
    )
    server.flush_binlogs()
    server.execute("BEGIN; INSERT INTO s.k VALUES (3, 'x'); DELETE FROM s.k WHERE id = 2; COMMIT")
    server.wait_for_checkpoint()
    return server
