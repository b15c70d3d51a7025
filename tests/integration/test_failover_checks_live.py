"""Live: the checks that keep a server stream on its server (binlogkit.spark.failover_checks).

A MariaDB whose binlog holds GTIDs of two domains and three server ids (a
session's ``server_id``): :func:`binlog_state_at` gives its
``@@gtid_binlog_state`` at the binlog's end, at a point inside a file (the
GTIDs up to there only) and at the start of the next file (its GTID_LIST).
:class:`SameServer` refuses a server with another id, and on a reconnection a
binlog whose GTID position at the stream's start is not the stream's.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from binlogkit.errors import ServerChanged
from binlogkit.gtid import MariaGtidList
from binlogkit.protocol.spec import ConnectionSpec
from binlogkit.sandbox import MariaDBSandbox

pytest.importorskip("pyspark")

from binlogkit.spark.failover_checks import SameServer, binlog_state_at

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

DUMP_ID = 4244
"""The server id of the test's dumps."""


def _state(text: str | None) -> set[str]:
    return {str(g) for g in MariaGtidList.parse(text or "")}


def _end(server: MariaDBSandbox) -> tuple[str, int]:
    row = server.query("SHOW MASTER STATUS")[0]
    return str(row[0]), int(str(row[1]))


def test_binlog_state_and_same_server_checks(
    mariadb_factory: Callable[..., MariaDBSandbox],
) -> None:
    server = mariadb_factory("failover-checks", server_id=1)
    url = f"mariadb://root@localhost/?socket={server.socket}"
    server.execute("CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY)")
    server.execute("SET SESSION server_id = 5; INSERT INTO d.t VALUES (1)")
    file, middle = _end(server)
    at_middle = server.variable("gtid_binlog_state")
    server.execute("SET SESSION gtid_domain_id = 3; INSERT INTO d.t VALUES (2)")
    server.execute("INSERT INTO d.t VALUES (3)")
    end = _end(server)
    assert end[0] == file and len(_state(server.variable("gtid_binlog_state"))) == 3
    state = binlog_state_at(url, *end, server_id=DUMP_ID)
    assert state is not None and _state(str(state)) == _state(server.variable("gtid_binlog_state"))
    inside = binlog_state_at(url, file, middle, server_id=DUMP_ID)
    assert _state(str(inside)) == _state(at_middle) != _state(str(state))
    newest = server.flush_binlogs()[-1].name
    start = binlog_state_at(url, newest, 4, server_id=DUMP_ID)
    assert _state(str(start)) == _state(str(state))

    spec = ConnectionSpec.from_url(url)
    here = server.gtid_binlog_pos
    same = SameServer("1", (newest, 4, here))
    for _ in range(2):  # the first connection and a reconnection
        same(spec).close()
    with pytest.raises(ServerChanged, match="is now server_id 1, not server_id 7"):
        SameServer("7")(spec)
    stale = SameServer("1", (newest, 4, "0-1-999"))
    stale(spec).close()  # the first connection checks the server's id only
    with pytest.raises(ServerChanged, match=rf"reconnected, and its binlog at {newest}:4 is at"):
        stale(spec)
