"""The blocking driver against a real MariaDB: connect, query, execute, ping, raw commands.

Known answers come from the server itself (CONNECTION_ID(), VERSION(),
CURRENT_USER(), error codes documented by MariaDB: 1146 ER_NO_SUCH_TABLE with
SQL state 42S02, 1045 ER_ACCESS_DENIED_ERROR with 28000).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Iterator

import pytest

from binlogkit.errors import AuthError, ConnectionLost, ProtocolError, ServerError
from binlogkit.io.mysql import MySQLConnection
from binlogkit.protocol.auth import Secret
from binlogkit.protocol.client import ClientState
from binlogkit.protocol.constants import Command
from binlogkit.protocol.spec import ConnectionSpec, TlsMode, TlsOptions
from binlogkit.sandbox import MariaDBSandbox

USER, PASSWORD = "bk_user", "s3cret-Pässword"
NO_TLS = TlsOptions(mode=TlsMode.DISABLED)


@pytest.fixture(scope="module")
def server(mariadb_factory) -> Iterator[MariaDBSandbox]:  # type: ignore[no-untyped-def]
    sandbox = mariadb_factory("mysql_connection", max_allowed_packet="64M")
    sandbox.execute(
        f"CREATE USER '{USER}'@'%' IDENTIFIED BY '{PASSWORD}';"
        f"GRANT ALL ON *.* TO '{USER}'@'%';"
        "CREATE USER 'nopw'@'%';"
        "CREATE DATABASE bk;"
    )
    yield sandbox


def tcp(server: MariaDBSandbox, **kw: object) -> ConnectionSpec:
    options: dict[str, object] = {
        "host": "127.0.0.1",
        "port": server.port,
        "user": USER,
        "password": Secret(PASSWORD),
        "tls": NO_TLS,
    }
    options.update(kw)
    return ConnectionSpec(**options)  # type: ignore[arg-type]


def test_tcp_connect_query_execute_ping(server: MariaDBSandbox) -> None:
    with MySQLConnection.connect(tcp(server, database="bk")) as conn:
        assert conn.is_mariadb and "MariaDB" in conn.server_version
        assert not conn.tls_active
        rs = conn.query("SELECT CONNECTION_ID(), VERSION(), CURRENT_USER(), DATABASE(), NULL, ''")
        assert rs.columns[:2] == ("CONNECTION_ID()", "VERSION()")
        conn_id, version, user, database, null, empty = rs.rows[0]
        assert int(conn_id or 0) == conn.connection_id
        assert conn.server_version.endswith(version or "?") or version in conn.server_version
        assert user == f"{USER}@%"
        assert database == "bk"
        assert null is None and empty == ""
        conn.execute("CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(20))")
        ok = conn.execute("INSERT INTO t (v) VALUES ('a'), (NULL), ('ü')")
        assert ok.affected_rows == 3
        assert ok.last_insert_id == 1  # the first id of a multi-row insert
        conn.ping()
        rs = conn.query("SELECT id, v FROM t ORDER BY id")
        assert rs.rows == [("1", "a"), ("2", None), ("3", "ü")]
        assert server.query("SELECT COUNT(*) FROM bk.t") == [("3",)]
        assert conn.query("DO 1").rows == []


def test_unix_socket_as_root(server: MariaDBSandbox) -> None:
    spec = ConnectionSpec(unix_socket=str(server.socket), user="root", tls=NO_TLS)
    with MySQLConnection.connect(spec) as conn:
        assert conn.query("SELECT CURRENT_USER()").rows == [("root@localhost",)]


def test_account_without_password(server: MariaDBSandbox) -> None:
    with MySQLConnection.connect(tcp(server, user="nopw", password=Secret())) as conn:
        assert conn.query("SELECT CURRENT_USER()").rows == [("nopw@%",)]


def test_url(server: MariaDBSandbox) -> None:
    url = f"mysql://{USER}:s3cret-P%C3%A4ssword@127.0.0.1:{server.port}/bk?ssl-mode=disabled"
    with MySQLConnection.connect(ConnectionSpec.from_url(url)) as conn:
        assert conn.query("SELECT DATABASE()").rows == [("bk",)]


def test_server_error_keeps_connection_usable(server: MariaDBSandbox) -> None:
    with MySQLConnection.connect(tcp(server)) as conn:
        with pytest.raises(ServerError) as info:
            conn.query("SELECT * FROM bk.no_such_table")
        assert info.value.code == 1146
        assert info.value.sql_state == "42S02"
        assert "no_such_table" in info.value.server_message
        assert conn.query("SELECT 1").rows == [("1",)]


def test_wrong_password_is_auth_error_without_the_password(
    server: MariaDBSandbox, caplog: pytest.LogCaptureFixture
) -> None:
    wrong = "wrong-Secret-42"
    caplog.set_level(logging.DEBUG)
    spec = tcp(server, password=Secret(wrong))
    with pytest.raises(AuthError) as info:
        MySQLConnection.connect(spec)
    err = info.value
    assert err.code == 1045 and err.sql_state == "28000"
    assert "Access denied" in err.server_message
    for text in (str(err), repr(err), repr(spec), str(spec), caplog.text):
        assert wrong not in text and PASSWORD not in text


def test_raw_command_mode_and_misuse(server: MariaDBSandbox) -> None:
    with MySQLConnection.connect(tcp(server)) as conn:
        conn.send_command(bytes([Command.PING]))
        with pytest.raises(ProtocolError):
            conn.query("SELECT 1")  # a query while in command mode
        payload = conn.read_packet()
        assert payload[0] == 0x00  # OK
        conn.end_command()
        with pytest.raises(ProtocolError):
            conn.end_command()
        with pytest.raises(ProtocolError):
            conn.read_packet()
        # A raw command answered by ERR raises and ends command mode.
        conn.send_command(bytes([Command.INIT_DB]) + b"no_such_db")
        with pytest.raises(ServerError) as info:
            conn.read_packet()
        assert info.value.code == 1049  # ER_BAD_DB_ERROR
        assert conn.protocol.state is ClientState.READY
        assert conn.query("SELECT 2").rows == [("2",)]


def test_killed_connection(server: MariaDBSandbox) -> None:
    conn = MySQLConnection.connect(tcp(server))
    server.execute(f"KILL {conn.connection_id}")
    with pytest.raises((ConnectionLost, ServerError)):
        conn.query("SELECT 1")
        conn.query("SELECT 1")
    conn.close()
    conn.close()
    assert conn.closed


def test_refused_connection_is_connection_lost(server: MariaDBSandbox) -> None:
    spec = ConnectionSpec(unix_socket=str(server.socket) + ".missing", tls=NO_TLS)
    with pytest.raises(ConnectionLost):
        MySQLConnection.connect(spec)


def test_read_timeout_leaves_connection_usable(server: MariaDBSandbox) -> None:
    with MySQLConnection.connect(tcp(server)) as conn:
        conn.settimeout(0.2)
        conn.send_command(bytes([Command.QUERY]) + b"SELECT SLEEP(1)")
        with pytest.raises(TimeoutError):
            conn.read_packet()
        conn.settimeout(10)
        assert conn.read_packet() == b"\x01"  # one column


def test_connections_in_threads(server: MariaDBSandbox) -> None:
    results: list[str | None] = []

    def work() -> None:
        with MySQLConnection.connect(tcp(server)) as conn:
            results.append(conn.query("SELECT 40 + 2").rows[0][0])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["42"] * 4


def test_packets_over_16_mib_both_directions(server: MariaDBSandbox) -> None:
    size = 17_000_000  # over 0xFFFFFF: the server splits the row, we split the query
    with MySQLConnection.connect(tcp(server)) as conn:
        rs = conn.query(f"SELECT REPEAT('x', {size}), 'after'")
        value, after = rs.rows[0]
        assert value is not None and len(value) == size and set(value) == {"x"}
        assert after == "after"
        big = "y" * size
        rs = conn.query(f"SELECT LENGTH('{big}'), MD5('{big}')")
        assert rs.rows == [(str(size), hashlib.md5(big.encode()).hexdigest())]
        conn.ping()
