"""A blocking MySQL/MariaDB connection: the socket driver of the sans-I/O client.

:class:`MySQLConnection` moves bytes between a socket (TCP or unix, TLS when
asked) and :class:`~binlogkit.protocol.client.ClientConnection`, which does all
of the protocol. ::

    with MySQLConnection.connect(ConnectionSpec.from_url("mysql://repl:pw@db:3306")) as conn:
        rows = conn.query("SELECT @@server_id").rows

Socket failures become :class:`~binlogkit.errors.ConnectionLost` (also when
the server cannot be reached, so a reconnect loop catches one error); a read
timeout (:meth:`MySQLConnection.settimeout`) raises :class:`TimeoutError` and
leaves the connection usable.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import ssl
from types import TracebackType
from typing import NoReturn

from binlogkit.errors import ConnectionLost, ProtocolError
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
from binlogkit.protocol.spec import ConnectionSpec, TlsMode, TlsOptions

log = logging.getLogger(__name__)

OkInfo = Ok
"""What :meth:`MySQLConnection.execute` returns: affected rows, last insert id, status, warnings."""

RECV_SIZE = 1 << 18

__all__ = ["ConnectionSpec", "MySQLConnection", "OkInfo", "ResultSet", "ssl_context"]


def ssl_context(options: TlsOptions) -> ssl.SSLContext:
    """The client ``SSLContext`` for ``options`` (verification follows the mode)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if options.mode in (TlsMode.VERIFY_CA, TlsMode.VERIFY_IDENTITY):
        ctx.check_hostname = options.mode is TlsMode.VERIFY_IDENTITY
        ctx.verify_mode = ssl.CERT_REQUIRED
        if options.ca:
            ctx.load_verify_locations(cafile=options.ca)
        else:
            ctx.load_default_certs()
    else:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if options.cert:
        ctx.load_cert_chain(options.cert, options.key)
    return ctx


def client_for(spec: ConnectionSpec) -> ClientConnection:
    """The protocol state machine for ``spec``."""
    return ClientConnection(
        user=spec.user,
        password=spec.password,
        database=spec.database,
        tls=spec.tls.mode,
        secure_transport=spec.secure_transport,
        server_public_key=spec.server_public_key,
        attributes=spec.attributes,
    )


def no_handshake(spec: ConnectionSpec) -> ConnectionLost:
    """The error for a peer that took the connection but sent no handshake in time."""
    return ConnectionLost(
        f"{spec.address} sent no handshake in {spec.connect_timeout} s",
        hint="is it a MySQL or MariaDB server? check the host and port",
    )


def tls_server_name(spec: ConnectionSpec) -> str:
    """The name the server certificate must carry in verify-identity mode."""
    return spec.tls.server_hostname or ("localhost" if spec.unix_socket else spec.host)


class MySQLConnection:
    """One blocking connection; make it with :meth:`connect`. A context manager."""

    def __init__(
        self, sock: socket.socket, protocol: ClientConnection, spec: ConnectionSpec
    ) -> None:
        self._sock = sock
        self.protocol = protocol
        self.spec = spec

    # -- opening and closing -------------------------------------------------------

    @classmethod
    def connect(cls, spec: ConnectionSpec) -> MySQLConnection:
        """Connect, negotiate TLS as ``spec.tls`` says, and authenticate."""
        sock = _open_socket(spec)
        conn = cls(sock, client_for(spec), spec)
        try:
            conn._handshake()
        except TimeoutError as exc:
            conn._abort()
            raise no_handshake(spec) from exc
        except BaseException:
            conn._abort()
            raise
        conn._sock.settimeout(spec.read_timeout)
        return conn

    def _handshake(self) -> None:
        while True:
            event = self._next_event()
            if isinstance(event, StartTls):
                self._flush()
                self._start_tls()
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

    def _start_tls(self) -> None:
        ctx = ssl_context(self.spec.tls)
        name = tls_server_name(self.spec) if ctx.check_hostname else None
        try:
            self._sock = ctx.wrap_socket(self._sock, server_hostname=name)
        except ssl.SSLError as exc:
            raise ProtocolError(
                f"TLS handshake with {self.spec.address} failed: {exc}",
                hint="check ssl-ca / ssl-mode, and the server certificate",
            ) from exc
        except OSError as exc:
            raise ConnectionLost(
                f"connection to {self.spec.address} lost during TLS: {exc}"
            ) from exc

    def close(self) -> None:
        """Send COM_QUIT when possible, then close the socket; never raises."""
        if self.protocol.state in (ClientState.READY, ClientState.RAW):
            with contextlib.suppress(OSError):
                self._sock.sendall(self.protocol.quit())
        self._abort()

    def shutdown(self) -> None:
        """Shut the socket down in both directions, from any thread; never raises.

        A :meth:`read_packet` blocked in another thread wakes up and raises
        :class:`~binlogkit.errors.ConnectionLost`; so does any later call.
        Call :meth:`close` afterwards to release the socket. Safe to call
        twice, after :meth:`close`, or on a connection already broken.
        """
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)

    def _abort(self) -> None:
        self.protocol.abort()
        with contextlib.suppress(OSError):
            self._sock.close()

    def __enter__(self) -> MySQLConnection:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"<MySQLConnection {self.spec.user}@{self.spec.address} "
            f"state={self.protocol.state.value}>"
        )

    # -- facts about the connection -------------------------------------------------------

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
        self._sock.settimeout(seconds)

    # -- commands ---------------------------------------------------------------------------

    def query(self, sql: str | bytes) -> ResultSet:
        """Run a statement; its first result set (an empty one for a statement without rows)."""
        first: ResultSet | Ok | None = None
        self._send(self.protocol.query(sql))
        while True:
            event = self._next_event()
            if not isinstance(event, (ResultSet, Ok)):
                raise ProtocolError(f"unexpected {type(event).__name__} after a query")
            if first is None:
                first = event
            if not event.status & ServerStatus.MORE_RESULTS_EXISTS:
                break
        if isinstance(first, Ok):
            return ResultSet(status=first.status, warnings=first.warnings)
        return first

    def execute(self, sql: str | bytes) -> Ok:
        """Run a statement; its OK (affected rows, last insert id, status, warnings)."""
        first: Ok | None = None
        self._send(self.protocol.query(sql))
        while True:
            event = self._next_event()
            if isinstance(event, ResultSet):
                event = Ok(status=event.status, warnings=event.warnings)
            if not isinstance(event, Ok):
                raise ProtocolError(f"unexpected {type(event).__name__} after a statement")
            if first is None:
                first = event
            if not event.status & ServerStatus.MORE_RESULTS_EXISTS:
                return first

    def ping(self) -> None:
        """COM_PING: raises when the server does not answer OK."""
        self._send(self.protocol.ping())
        event = self._next_event()
        if not isinstance(event, Ok):
            raise ProtocolError(f"unexpected {type(event).__name__} after COM_PING")

    def send_command(self, payload: bytes) -> None:
        """Start a raw command (sequence 0); read its answer with :meth:`read_packet`."""
        self._send(self.protocol.send_command(payload))

    def read_packet(self) -> bytes:
        """The next raw payload of the current command; ERR raises ServerError."""
        protocol = self.protocol
        while True:
            if protocol.state is ClientState.CLOSED:  # closed meanwhile by another thread
                raise ConnectionLost(f"connection to {self.spec.address} closed")
            payload = protocol.next_packet()
            if payload is not NEED_DATA:
                return payload
            self._receive()

    def read_payloads(self, first: int, skip: int = 0) -> list[bytes]:
        """The payloads of the current command's packets that start with the byte ``first``,
        without their first ``skip`` bytes: all those received, after waiting for one.

        ``[]`` when the next packet is of another kind: read it with :meth:`read_packet`.
        """
        protocol = self.protocol
        while True:
            if protocol.state is ClientState.CLOSED:  # closed meanwhile by another thread
                raise ConnectionLost(f"connection to {self.spec.address} closed")
            payloads = protocol.next_payloads(first, skip)
            if payloads is not NEED_DATA:
                return payloads
            self._receive()

    def write_packet(self, payload: bytes, *, seq: int | None = None) -> None:
        """One more packet of the current raw command (continuing its sequence)."""
        self._send(self.protocol.write_packet(payload, seq=seq))

    def end_command(self) -> None:
        """Leave raw command mode after reading the whole answer."""
        self.protocol.end_command()

    # -- bytes --------------------------------------------------------------------------------

    def _next_event(self) -> ClientEvent:
        while True:
            event = self.protocol.next_event()
            self._flush()
            if event is not NEED_DATA:
                return event
            self._receive()

    def _flush(self) -> None:
        data = self.protocol.data_to_send()
        if data:
            self._send(data)

    def _send(self, data: bytes) -> None:
        try:
            self._sock.sendall(data)
        except OSError as exc:
            self._lost(exc)

    def _receive(self) -> None:
        try:
            data = self._sock.recv(RECV_SIZE)
        except TimeoutError:
            raise
        except OSError as exc:
            self._lost(exc)
        self.protocol.receive_data(data)

    def _lost(self, exc: OSError) -> NoReturn:
        self._abort()
        raise ConnectionLost(f"connection to {self.spec.address} lost: {exc}") from exc


def _open_socket(spec: ConnectionSpec) -> socket.socket:
    try:
        if spec.unix_socket:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.settimeout(spec.connect_timeout)
                sock.connect(spec.unix_socket)
            except BaseException:
                sock.close()
                raise
        else:
            sock = socket.create_connection((spec.host, spec.port), timeout=spec.connect_timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError as exc:
        raise ConnectionLost(
            f"cannot connect to {spec.address}: {exc}",
            hint="check that the server runs and the host, port or socket are right",
        ) from exc
    return sock
