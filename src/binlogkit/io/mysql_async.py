"""The asyncio twin of :mod:`binlogkit.io.mysql`: same protocol machine, same surface.

::

    async with await AsyncMySQLConnection.connect(spec) as conn:
        rows = (await conn.query("SELECT 1")).rows

Failures map as in the blocking driver: socket errors and unreachable servers
raise :class:`~binlogkit.errors.ConnectionLost`; a read timeout
(:meth:`AsyncMySQLConnection.settimeout`) raises :class:`TimeoutError` and
leaves the connection usable.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from types import TracebackType
from typing import NoReturn

from binlogkit.errors import ConnectionLost, ProtocolError
from binlogkit.io.mysql import RECV_SIZE, client_for, no_handshake, ssl_context, tls_server_name
from binlogkit.protocol.client import (
    ClientConnection,
    ClientEvent,
    ClientState,
    Connected,
    ResultSet,
    StartTls,
)
from binlogkit.protocol.constants import ServerStatus
from binlogkit.protocol.messages import Ok
from binlogkit.protocol.packets import NEED_DATA
from binlogkit.protocol.spec import ConnectionSpec

log = logging.getLogger(__name__)

__all__ = ["AsyncMySQLConnection"]


class AsyncMySQLConnection:
    """One asyncio connection; make it with ``await AsyncMySQLConnection.connect(spec)``."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        protocol: ClientConnection,
        spec: ConnectionSpec,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self.protocol = protocol
        self.spec = spec
        self._timeout: float | None = None  # connect() bounds the handshake, then sets it
        self._loop = asyncio.get_running_loop()

    @classmethod
    async def connect(cls, spec: ConnectionSpec) -> AsyncMySQLConnection:
        """Connect, negotiate TLS as ``spec.tls`` says, and authenticate."""
        try:
            if spec.unix_socket:
                opening = asyncio.open_unix_connection(spec.unix_socket)
            else:
                opening = asyncio.open_connection(spec.host, spec.port)
            reader, writer = await asyncio.wait_for(opening, spec.connect_timeout)
        except (OSError, TimeoutError) as exc:
            raise ConnectionLost(
                f"cannot connect to {spec.address}: {exc or 'timed out'}",
                hint="check that the server runs and the host, port or socket are right",
            ) from exc
        conn = cls(reader, writer, client_for(spec), spec)
        try:
            await asyncio.wait_for(conn._handshake(), spec.connect_timeout)
        except TimeoutError as exc:
            conn._abort()
            raise no_handshake(spec) from exc
        except BaseException:
            conn._abort()
            raise
        conn.settimeout(spec.read_timeout)
        return conn

    async def _handshake(self) -> None:
        while True:
            event = await self._next_event()
            if isinstance(event, StartTls):
                await self._flush()
                await self._start_tls()
                self.protocol.tls_established()
            elif isinstance(event, Connected):
                log.debug(
                    "connected to %s (%s, connection %d, tls=%s)",
                    self.spec.address,
                    self.server_version,
                    self.connection_id,
                    self.protocol.tls_active,
                )
                return
            else:
                raise ProtocolError(f"unexpected {type(event).__name__} during the handshake")

    async def _start_tls(self) -> None:
        ctx = ssl_context(self.spec.tls)
        name = tls_server_name(self.spec) if ctx.check_hostname else None
        try:
            await self._writer.start_tls(ctx, server_hostname=name)
        except ssl.SSLError as exc:
            raise ProtocolError(
                f"TLS handshake with {self.spec.address} failed: {exc}",
                hint="check ssl-ca / ssl-mode, and the server certificate",
            ) from exc
        except OSError as exc:
            raise ConnectionLost(
                f"connection to {self.spec.address} lost during TLS: {exc}"
            ) from exc

    async def close(self) -> None:
        """Send COM_QUIT when possible, then close; never raises."""
        if self.protocol.state in (ClientState.READY, ClientState.RAW):
            with contextlib.suppress(OSError, RuntimeError):
                self._writer.write(self.protocol.quit())
                await asyncio.wait_for(self._writer.drain(), 1.0)
        self._abort()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._writer.wait_closed(), 1.0)

    def shutdown(self) -> None:
        """Drop the connection at once, from any thread or task; never raises.

        A :meth:`read_packet` waiting in another task wakes up and raises
        :class:`~binlogkit.errors.ConnectionLost`; so does any later call.
        Await :meth:`close` afterwards. Safe to call twice or on a dead connection.
        """
        transport = self._writer.transport
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        with contextlib.suppress(RuntimeError):  # the loop is closed: nothing left to wake
            if running is self._loop:
                transport.abort()
            else:
                self._loop.call_soon_threadsafe(transport.abort)

    def _abort(self) -> None:
        self.protocol.abort()
        with contextlib.suppress(Exception):
            self._writer.close()

    async def __aenter__(self) -> AsyncMySQLConnection:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        return (
            f"<AsyncMySQLConnection {self.spec.user}@{self.spec.address} "
            f"state={self.protocol.state.value}>"
        )

    @property
    def server_version(self) -> str:
        return self.protocol.server_version

    @property
    def connection_id(self) -> int:
        return self.protocol.connection_id

    @property
    def is_mariadb(self) -> bool:
        return self.protocol.is_mariadb

    @property
    def tls_active(self) -> bool:
        return self.protocol.tls_active

    @property
    def closed(self) -> bool:
        return self.protocol.state is ClientState.CLOSED

    def settimeout(self, seconds: float | None) -> None:
        """Read timeout for every later call (None: wait forever)."""
        self._timeout = seconds

    # -- commands -----------------------------------------------------------------

    async def _results(self) -> list[ResultSet | Ok]:
        results: list[ResultSet | Ok] = []
        while True:
            event = await self._next_event()
            if not isinstance(event, (ResultSet, Ok)):
                raise ProtocolError(f"unexpected {type(event).__name__} after a query")
            results.append(event)
            if not event.status & ServerStatus.MORE_RESULTS_EXISTS:
                return results

    async def query(self, sql: str | bytes) -> ResultSet:
        """Run a statement; its first result set (an empty one for a statement without rows)."""
        await self._send(self.protocol.query(sql))
        first = (await self._results())[0]
        if isinstance(first, Ok):
            return ResultSet(status=first.status, warnings=first.warnings)
        return first

    async def execute(self, sql: str | bytes) -> Ok:
        """Run a statement; its OK (affected rows, last insert id, status, warnings)."""
        await self._send(self.protocol.query(sql))
        first = (await self._results())[0]
        if isinstance(first, ResultSet):
            return Ok(status=first.status, warnings=first.warnings)
        return first

    async def ping(self) -> None:
        await self._send(self.protocol.ping())
        event = await self._next_event()
        if not isinstance(event, Ok):
            raise ProtocolError(f"unexpected {type(event).__name__} after COM_PING")

    async def send_command(self, payload: bytes) -> None:
        """Start a raw command (sequence 0); read its answer with :meth:`read_packet`."""
        await self._send(self.protocol.send_command(payload))

    async def read_packet(self) -> bytes:
        """The next raw payload of the current command; ERR raises ServerError."""
        protocol = self.protocol
        while True:
            if protocol.state is ClientState.CLOSED:  # closed meanwhile by another task
                raise ConnectionLost(f"connection to {self.spec.address} closed")
            payload = protocol.next_packet()
            if payload is not NEED_DATA:
                return payload
            await self._receive()

    async def write_packet(self, payload: bytes, *, seq: int | None = None) -> None:
        await self._send(self.protocol.write_packet(payload, seq=seq))

    def end_command(self) -> None:
        self.protocol.end_command()

    # -- bytes --------------------------------------------------------------------------

    async def _next_event(self) -> ClientEvent:
        while True:
            event = self.protocol.next_event()
            await self._flush()
            if event is not NEED_DATA:
                return event
            await self._receive()

    async def _flush(self) -> None:
        data = self.protocol.data_to_send()
        if data:
            await self._send(data)

    async def _send(self, data: bytes) -> None:
        try:
            self._writer.write(data)
            await self._writer.drain()
        except (OSError, RuntimeError) as exc:
            self._lost(exc)

    async def _receive(self) -> None:
        try:
            if self._timeout is None:
                data = await self._reader.read(RECV_SIZE)
            else:
                data = await asyncio.wait_for(self._reader.read(RECV_SIZE), self._timeout)
        except TimeoutError:
            raise
        except OSError as exc:
            self._lost(exc)
        self.protocol.receive_data(data)

    def _lost(self, exc: BaseException) -> NoReturn:
        self._abort()
        raise ConnectionLost(f"connection to {self.spec.address} lost: {exc}") from exc
