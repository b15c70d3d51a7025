"""Both connection drivers, blocking and asyncio, against local peers that are not MySQL servers."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from binlogkit.errors import ConnectionLost, ProtocolError
from binlogkit.io.mysql import MySQLConnection
from binlogkit.io.mysql_async import AsyncMySQLConnection
from binlogkit.protocol.spec import ConnectionSpec


def connect_blocking(spec: ConnectionSpec) -> None:
    MySQLConnection.connect(spec).close()


def connect_async(spec: ConnectionSpec) -> None:
    async def run() -> None:
        await (await AsyncMySQLConnection.connect(spec)).close()

    asyncio.run(run())


DRIVERS = [pytest.param(connect_blocking, id="blocking"), pytest.param(connect_async, id="async")]


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A socket listening on a free local port; the kernel takes connections that nobody reads."""
    with socket.create_server(("127.0.0.1", 0)) as sock:
        yield sock


def spec_for(sock: socket.socket, timeout: float) -> ConnectionSpec:
    return ConnectionSpec(port=sock.getsockname()[1], connect_timeout=timeout)


@pytest.mark.parametrize("connect", DRIVERS)
def test_a_silent_peer_sent_no_handshake(
    listener: socket.socket, connect: Callable[[ConnectionSpec], None]
) -> None:
    spec = spec_for(listener, 0.3)
    started = time.monotonic()
    with pytest.raises(ConnectionLost) as info:
        connect(spec)
    assert time.monotonic() - started < 5
    assert str(info.value) == (
        f"{spec.address} sent no handshake in 0.3 s"
        " (is it a MySQL or MariaDB server? check the host and port)"
    )


@pytest.mark.parametrize("connect", DRIVERS)
def test_a_peer_speaking_http_is_not_a_mysql_server(
    listener: socket.socket, connect: Callable[[ConnectionSpec], None]
) -> None:
    def answer() -> None:
        peer, _ = listener.accept()
        with peer:
            peer.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
            peer.recv(1)  # until the client hangs up

    server = threading.Thread(target=answer, daemon=True)
    server.start()
    with pytest.raises(ProtocolError, match="not a MySQL server: its first bytes are b'HTTP/"):
        connect(spec_for(listener, 5))
    server.join(5)
    assert not server.is_alive()
