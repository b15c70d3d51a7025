"""The asyncio driver against a real MariaDB: the same surface as the blocking one."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from tls_certs import TLS_USERS, TlsFiles

from binlogkit.errors import AuthError, ConnectionLost, ProtocolError, ServerError
from binlogkit.io.mysql_async import AsyncMySQLConnection
from binlogkit.protocol.auth import Secret
from binlogkit.protocol.client import ClientState
from binlogkit.protocol.constants import Command
from binlogkit.protocol.spec import ConnectionSpec, TlsMode, TlsOptions
from binlogkit.sandbox import MariaDBSandbox

USER, PASSWORD = "async_user", "async-Pw-7"
NO_TLS = TlsOptions(mode=TlsMode.DISABLED)


@pytest.fixture(scope="module")
def server(mariadb_factory) -> Iterator[MariaDBSandbox]:  # type: ignore[no-untyped-def]
    sandbox = mariadb_factory("mysql_async", max_allowed_packet="64M")
    sandbox.execute(
        f"CREATE USER '{USER}'@'%' IDENTIFIED BY '{PASSWORD}'; GRANT ALL ON *.* TO '{USER}'@'%'"
    )
    yield sandbox


def tcp(server: MariaDBSandbox, password: str = PASSWORD) -> ConnectionSpec:
    return ConnectionSpec(
        port=server.port, user=USER, password=Secret(password), tls=NO_TLS, database="mysql"
    )


def test_query_execute_ping_raw(server: MariaDBSandbox) -> None:
    async def main() -> None:
        async with await AsyncMySQLConnection.connect(tcp(server)) as conn:
            assert conn.is_mariadb and not conn.tls_active
            rs = await conn.query("SELECT CONNECTION_ID(), CURRENT_USER(), DATABASE(), NULL")
            assert rs.rows == [(str(conn.connection_id), f"{USER}@%", "mysql", None)]
            await conn.execute("CREATE DATABASE IF NOT EXISTS a")
            await conn.execute("CREATE TABLE a.t (id INT AUTO_INCREMENT PRIMARY KEY)")
            ok = await conn.execute("INSERT INTO a.t VALUES (), (), ()")
            assert ok.affected_rows == 3
            await conn.ping()
            with pytest.raises(ServerError) as info:
                await conn.query("SELECT * FROM a.missing")
            assert info.value.code == 1146 and info.value.sql_state == "42S02"
            await conn.send_command(bytes([Command.PING]))
            with pytest.raises(ProtocolError):
                await conn.query("SELECT 1")
            assert (await conn.read_packet())[0] == 0
            conn.end_command()
            assert (await conn.query("SELECT COUNT(*) FROM a.t")).rows == [("3",)]
        assert conn.closed

    asyncio.run(main())
    assert server.query("SELECT COUNT(*) FROM a.t") == [("3",)]


def test_unix_socket_big_packets_and_timeout(server: MariaDBSandbox) -> None:
    async def main() -> None:
        spec = ConnectionSpec(unix_socket=str(server.socket), user="root", tls=NO_TLS)
        async with await AsyncMySQLConnection.connect(spec) as conn:
            size = 17_000_000
            rs = await conn.query(f"SELECT REPEAT('q', {size}), LENGTH('{'w' * size}')")
            value, length = rs.rows[0]
            assert value == "q" * size and length == str(size)
            conn.settimeout(0.2)
            await conn.send_command(bytes([Command.QUERY]) + b"SELECT SLEEP(1)")
            with pytest.raises(TimeoutError):
                await conn.read_packet()
            conn.settimeout(10)
            assert await conn.read_packet() == b"\x01"

    asyncio.run(main())


def test_wrong_password_and_refused(server: MariaDBSandbox) -> None:
    async def main() -> None:
        with pytest.raises(AuthError) as info:
            await AsyncMySQLConnection.connect(tcp(server, "bad-Pw-9"))
        assert info.value.code == 1045 and "bad-Pw-9" not in str(info.value)
        missing = ConnectionSpec(unix_socket=str(server.socket) + ".x", tls=NO_TLS)
        with pytest.raises(ConnectionLost):
            await AsyncMySQLConnection.connect(missing)

    asyncio.run(main())


def test_concurrent_connections(server: MariaDBSandbox) -> None:
    async def one(n: int) -> str | None:
        async with await AsyncMySQLConnection.connect(tcp(server)) as conn:
            return (await conn.query(f"SELECT {n} * 2")).rows[0][0]

    async def main() -> list[str | None]:
        return list(await asyncio.gather(*(one(n) for n in range(5))))

    assert asyncio.run(main()) == ["0", "2", "4", "6", "8"]


def test_killed_connection(server: MariaDBSandbox) -> None:
    async def main() -> None:
        conn = await AsyncMySQLConnection.connect(tcp(server))
        server.execute(f"KILL {conn.connection_id}")
        with pytest.raises((ConnectionLost, ServerError)):
            await conn.query("SELECT 1")
            await conn.query("SELECT 1")
        await conn.close()
        await conn.close()
        assert conn.protocol.state is ClientState.CLOSED

    asyncio.run(main())


def test_tls_verify_identity_with_client_cert(
    tls_mariadb: MariaDBSandbox, tls_files: TlsFiles
) -> None:
    async def main() -> None:
        spec = ConnectionSpec(
            host="localhost",
            port=tls_mariadb.port,
            user="x509_user",
            password=Secret(TLS_USERS["x509_user"][0]),
            tls=TlsOptions(
                mode=TlsMode.VERIFY_IDENTITY,
                ca=str(tls_files.ca),
                cert=str(tls_files.client_cert),
                key=str(tls_files.client_key),
            ),
        )
        async with await AsyncMySQLConnection.connect(spec) as conn:
            assert conn.tls_active
            rows = (await conn.query("SHOW SESSION STATUS LIKE 'Ssl_cipher'")).rows
            assert rows and rows[0][1]

    asyncio.run(main())
