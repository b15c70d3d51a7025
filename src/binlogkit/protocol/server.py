"""The server side of the MySQL protocol as a sans-I/O state machine.

:class:`ServerConnection` greets the client, upgrades to TLS when asked (the
driver wraps the socket on :class:`StartTls` and calls
:meth:`~ServerConnection.tls_established`), authenticates the client with the
server-side verifiers of :mod:`binlogkit.protocol.auth` (switching the client
to the account's plugin when it answered with another one), and then hands
every command to the caller as :class:`CommandReceived`. The caller answers
with :meth:`~ServerConnection.send_ok`, :meth:`~ServerConnection.send_error`,
:meth:`~ServerConnection.send_result_set` or a stream of
:meth:`~ServerConnection.send_packet` ended by :meth:`~ServerConnection.send_eof`.
Answers made by the machine itself (auth exchange) wait in
:meth:`~ServerConnection.data_to_send`.
"""

from __future__ import annotations

import functools
import logging
import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import field
from enum import Enum

from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import ConnectionLost, ProtocolError
from binlogkit.protocol.auth.base import (
    Accept,
    AuthStep,
    Reject,
    SendMore,
    ServerAuth,
    new_scramble,
    server_auth,
)
from binlogkit.protocol.constants import (
    MAX_PACKET_PAYLOAD,
    SCRAMBLE_LENGTH,
    UTF8MB4_GENERAL_CI,
    Capability,
    Command,
    ErrorCode,
    ServerStatus,
)
from binlogkit.protocol.messages import (
    AuthMoreData,
    AuthSwitchRequest,
    ColumnDefinition,
    Eof,
    Err,
    Handshake,
    HandshakeResponse,
    Ok,
    SslRequest,
    encode_column_count,
    encode_text_row,
    raw,
)
from binlogkit.protocol.packets import NEED_DATA, NeedData, Packet, PacketReader, write_packets


@functools.cache
def _packet_header(head_length: int) -> struct.Struct:
    """A packet header (the 3-byte length and the sequence, as one number) and the payload's
    first ``head_length`` bytes."""
    return struct.Struct(f"<I{head_length}s")


log = logging.getLogger(__name__)

SERVER_CAPABILITIES = (
    Capability.LONG_PASSWORD
    | Capability.FOUND_ROWS
    | Capability.LONG_FLAG
    | Capability.CONNECT_WITH_DB
    | Capability.PROTOCOL_41
    | Capability.TRANSACTIONS
    | Capability.SECURE_CONNECTION
    | Capability.MULTI_RESULTS
    | Capability.PLUGIN_AUTH
    | Capability.PLUGIN_AUTH_LENENC_CLIENT_DATA
    | Capability.CONNECT_ATTRS
    | Capability.DEPRECATE_EOF
)
"""What the server offers unless told otherwise (SSL is added when TLS is available)."""


@frozen_dataclass
class Account:
    """A user the server knows: its auth plugin and the stored credential
    (:func:`binlogkit.protocol.auth.make_credential`). Never the password."""

    user: str
    plugin: str
    credential: bytes = field(repr=False)
    require_tls: bool = False
    """Refuse this user on a connection without TLS (a MariaDB account's REQUIRE SSL)."""


class ServerState(Enum):
    GREETING = "greeting"
    AWAIT_RESPONSE = "await-response"
    TLS_UPGRADE = "tls-upgrade"
    AUTH = "auth"
    COMMAND = "command"
    REPLYING = "replying"
    CLOSED = "closed"


@frozen_dataclass
class StartTls:
    """The client sent an SSLRequest: start TLS (server side) and call
    :meth:`ServerConnection.tls_established`."""


@frozen_dataclass
class Authenticated:
    """The client is in; OK sent. Commands follow."""

    user: str
    database: str | None
    plugin: str
    attributes: tuple[tuple[str, str], ...] | None


@frozen_dataclass
class AuthFailed:
    """The client was refused (ERR sent, state CLOSED); ``reason`` is for the server's log."""

    user: str
    reason: str


@frozen_dataclass
class CommandReceived:
    """A command for the caller to answer: its code and the bytes after it."""

    command: int
    body: bytes

    @property
    def name(self) -> str:
        try:
            return Command(self.command).name
        except ValueError:
            return f"0x{self.command:02x}"


@frozen_dataclass
class ClientPacket:
    """A packet the client sent while its command is being answered (a semi-sync ACK)."""

    seq: int
    payload: bytes


@frozen_dataclass
class ClientQuit:
    """COM_QUIT or the end of the stream: the connection is over (state CLOSED)."""


ServerEvent = StartTls | Authenticated | AuthFailed | CommandReceived | ClientPacket | ClientQuit
Accounts = Mapping[str, Account] | Callable[[str], Account | None]


class ServerConnection:
    """The server protocol state machine; call :meth:`greeting` first."""

    def __init__(
        self,
        accounts: Accounts,
        *,
        server_version: str = "8.0.40-binlogkit",
        connection_id: int = 1,
        capabilities: int = SERVER_CAPABILITIES,
        default_plugin: str = "mysql_native_password",
        tls_available: bool = False,
        secure_transport: bool = False,
        scramble: bytes | None = None,
        private_key: bytes | None = None,
        client_host: str = "localhost",
        max_packet: int = 1 << 24,
    ) -> None:
        self._accounts = accounts
        self.server_version = server_version
        self.connection_id = connection_id
        caps = int(capabilities)
        self.offered = caps | Capability.SSL if tls_available else caps & ~Capability.SSL
        self.default_plugin = default_plugin
        self.secure_transport = secure_transport
        self._scramble = scramble if scramble is not None else new_scramble(SCRAMBLE_LENGTH)
        self._private_key = private_key
        self.client_host = client_host
        self.max_packet = max_packet
        """The largest payload taken from the client: a longer one is a ProtocolError."""
        self.state = ServerState.GREETING
        self.capabilities = 0
        self.tls_active = False
        self.status = int(ServerStatus.AUTOCOMMIT)
        self.response: HandshakeResponse | None = None
        self.user: str | None = None
        self._reader = PacketReader()
        self._out = bytearray()
        self._seq = 0
        self._verifier: ServerAuth | None = None
        self._plugin = ""

    def __repr__(self) -> str:
        return f"<ServerConnection user={self.user!r} state={self.state.value}>"

    @property
    def secure(self) -> bool:
        return self.tls_active or self.secure_transport

    # -- bytes ---------------------------------------------------------------------

    def greeting(self) -> bytes:
        """The handshake packet that opens the connection."""
        if self.state is not ServerState.GREETING:
            raise self._out_of_turn("greeting() twice")
        hs = Handshake(
            server_version=self.server_version,
            connection_id=self.connection_id,
            auth_data=self._scramble + b"\0",
            capabilities=self.offered,
            charset=UTF8MB4_GENERAL_CI,
            status=self.status,
            auth_plugin_name=self.default_plugin,
        )
        self.state = ServerState.AWAIT_RESPONSE
        data, self._seq = write_packets(hs.encode(), 0)
        return data

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        self._reader.receive_data(data)

    def data_to_send(self) -> bytes:
        out = bytes(self._out)
        self._out.clear()
        return out

    def next_event(self) -> ServerEvent | NeedData:
        if self.state is ServerState.GREETING:
            raise self._out_of_turn("send greeting() first")
        if self.state is ServerState.TLS_UPGRADE:
            raise self._out_of_turn("start TLS and call tls_established() first")
        if self.state is ServerState.CLOSED:
            return NEED_DATA
        while True:
            packet = self._packet()
            if packet is None:
                return ClientQuit()
            if packet is NEED_DATA:
                return NEED_DATA
            event = self._handle(packet)
            if event is not None:
                return event

    def _packet(self) -> Packet | NeedData | None:
        try:
            packet = self._reader.next_packet()
        except ProtocolError:
            self._close()
            raise
        if packet is NEED_DATA:
            if self._reader.pending > self.max_packet + 4:
                self._close()
                raise ProtocolError(f"the client sends a packet of over {self.max_packet} bytes")
            if not self._reader.eof:
                return NEED_DATA
            state = self.state
            self._close()
            if state in (ServerState.COMMAND, ServerState.REPLYING) and not self._reader.pending:
                return None  # the client went away between commands
            raise ConnectionLost(f"the client closed the connection while {state.value}")
        if self.state is ServerState.REPLYING:
            return packet  # e.g. a semi-sync ACK: its own numbering, ours goes on
        if self.state is ServerState.COMMAND:
            self._seq = 0
        if packet.seq != self._seq:
            self._close()
            raise ProtocolError(
                f"packet out of order: sequence number {packet.seq}, expected {self._seq}"
            )
        self._seq = (packet.last_seq + 1) & 0xFF
        return packet

    def _handle(self, packet: Packet) -> ServerEvent | None:
        payload = packet.payload
        if self.state is ServerState.AWAIT_RESPONSE:
            return self._on_response(payload)
        if self.state is ServerState.AUTH:
            return self._on_auth_data(payload)
        if self.state is ServerState.REPLYING:
            return ClientPacket(packet.seq, payload)
        # COMMAND
        if not payload:
            self._close()
            raise ProtocolError("empty command packet")
        if payload[0] == Command.QUIT:
            self._close()
            return ClientQuit()
        self.state = ServerState.REPLYING
        return CommandReceived(payload[0], payload[1:])

    # -- connection phase --------------------------------------------------------------

    def _on_response(self, payload: bytes) -> ServerEvent | None:
        try:
            if len(payload) == 32:
                request = SslRequest.decode(payload)
                if not request.capabilities & Capability.SSL:
                    raise ProtocolError("a 32-byte handshake response without CLIENT_SSL")
                if not self.offered & Capability.SSL:
                    raise ProtocolError("the client asks for TLS, which this server does not offer")
                self.state = ServerState.TLS_UPGRADE
                return StartTls()
            response = HandshakeResponse.decode(payload)
        except ProtocolError:
            self._close()
            raise
        if response.capabilities & Capability.SSL and not self.tls_active:
            self._close()
            raise ProtocolError("the client set CLIENT_SSL without starting TLS")
        self.response = response
        self.user = response.user
        self.capabilities = response.capabilities & (self.offered | 0xFFFFFFFF << 32)
        account = self._account(response.user)
        if account is None:
            return self._refuse(response.user, "unknown user", bool(response.auth_response))
        if account.require_tls and not self.secure:
            return self._refuse(response.user, "TLS required", bool(response.auth_response))
        self._plugin = account.plugin
        client_plugin = response.auth_plugin_name or "mysql_native_password"
        try:
            verifier_cls = server_auth(account.plugin)
        except ProtocolError:
            return self._refuse(response.user, f"no verifier for plugin {account.plugin}", True)
        if client_plugin == account.plugin:
            self._verifier = verifier_cls(
                account.credential,
                scramble=self._scramble,
                secure=self.secure,
                private_key=self._private_key,
            )
            return self._step(self._verifier.receive(response.auth_response))
        self._verifier = verifier_cls(
            account.credential, secure=self.secure, private_key=self._private_key
        )
        switch = AuthSwitchRequest(account.plugin, self._verifier.scramble())
        self._queue(switch.encode())
        self.state = ServerState.AUTH
        return None

    def tls_established(self) -> None:
        if self.state is not ServerState.TLS_UPGRADE:
            raise self._out_of_turn("tls_established() without a pending TLS upgrade")
        self.tls_active = True
        self.state = ServerState.AWAIT_RESPONSE

    def _on_auth_data(self, payload: bytes) -> ServerEvent | None:
        assert self._verifier is not None
        return self._step(self._verifier.receive(payload))

    def _step(self, step: AuthStep) -> ServerEvent | None:
        assert self.response is not None
        if isinstance(step, SendMore):
            self._queue(AuthMoreData(step.data).encode())
            self.state = ServerState.AUTH
            return None
        if isinstance(step, Reject):
            return self._refuse(self.response.user, step.reason, bool(self.response.auth_response))
        assert isinstance(step, Accept)
        if step.more_data is not None:
            self._queue(AuthMoreData(step.more_data).encode())
        self._queue(Ok(status=self.status).encode(self.capabilities))
        self.state = ServerState.COMMAND
        self._verifier = None
        response = self.response
        log.debug("client %r authenticated with %s", response.user, self._plugin)
        return Authenticated(response.user, response.database, self._plugin, response.attributes)

    def _refuse(self, user: str, reason: str, with_password: bool) -> AuthFailed:
        using = "YES" if with_password else "NO"
        message = f"Access denied for user '{user}'@'{self.client_host}' (using password: {using})"
        self._queue(Err(ErrorCode.ACCESS_DENIED, message, "28000").encode())
        log.debug("client %r refused: %s", user, reason)
        self._close()
        return AuthFailed(user, reason)

    def _account(self, user: str) -> Account | None:
        if callable(self._accounts):
            return self._accounts(user)
        return self._accounts.get(user)

    # -- answers to commands ------------------------------------------------------------

    def _replying(self, what: str) -> None:
        if self.state is not ServerState.REPLYING:
            raise self._out_of_turn(f"{what} needs a command to answer")

    def send_ok(
        self, affected_rows: int = 0, last_insert_id: int = 0, *, warnings: int = 0, info: str = ""
    ) -> bytes:
        """End the current command with OK."""
        self._replying("send_ok()")
        ok = Ok(affected_rows, last_insert_id, self.status, warnings, info)
        return self._end(ok.encode(self.capabilities))

    def send_error(self, code: int, message: str, sql_state: str = "HY000") -> bytes:
        """End the current command with ERR."""
        self._replying("send_error()")
        return self._end(Err(code, message, sql_state).encode())

    def send_result_set(
        self,
        columns: Sequence[ColumnDefinition | str],
        rows: Iterable[Sequence[bytes | str | None]],
    ) -> bytes:
        """End the current command with a text result set (values as text, None for NULL)."""
        self._replying("send_result_set()")
        defs = [
            c if isinstance(c, ColumnDefinition) else ColumnDefinition(c, ColumnType.VAR_STRING)
            for c in columns
        ]
        out = bytearray(self._frame(encode_column_count(len(defs))))
        for col in defs:
            out += self._frame(col.encode())
        deprecate_eof = self.capabilities & Capability.DEPRECATE_EOF
        if not deprecate_eof:
            out += self._frame(Eof(0, self.status).encode())
        for row in rows:
            values = [raw(v) if isinstance(v, str) else v for v in row]
            if len(values) != len(defs):
                raise ProtocolError(f"a row of {len(values)} values for {len(defs)} columns")
            out += self._frame(encode_text_row(values))
        if deprecate_eof:
            end = Ok(status=self.status, header=0xFE).encode(self.capabilities)
        else:
            end = Eof(0, self.status).encode()
        return bytes(out) + self._end(end)

    def send_packet(self, payload: bytes) -> bytes:
        """One raw packet of the current answer (e.g. a binlog event); the command goes on."""
        self._replying("send_packet()")
        return self._frame(payload)

    def send_packets(
        self, data: bytes, spans: Sequence[int], heads: bytes | Sequence[bytes]
    ) -> bytearray:
        """Raw packets of the current answer, one per span of ``data`` (start and end, one
        after the other), each after its head (``heads``: one for all, or one per span)."""
        self._replying("send_packets()")
        view = memoryview(data)
        out = bytearray()
        seq = self._seq
        each: Sequence[bytes] = () if isinstance(heads, bytes) else heads
        head = heads if isinstance(heads, bytes) else b""
        pack = _packet_header(len(head)).pack
        spans_at = iter(spans)
        for i, (start, end) in enumerate(zip(spans_at, spans_at, strict=True)):
            if each:
                head = each[i]
                pack = _packet_header(len(head)).pack
            size = end - start + len(head)
            if size >= MAX_PACKET_PAYLOAD:
                framed, seq = write_packets(head + data[start:end], seq)
                out += framed
                continue
            out += pack(size | seq << 24, head)
            out += view[start:end]
            seq = (seq + 1) & 0xFF
        self._seq = seq
        return out

    def send_eof(self) -> bytes:
        """End a stream of raw packets with EOF (an 0xFE OK under DEPRECATE_EOF)."""
        self._replying("send_eof()")
        if self.capabilities & Capability.DEPRECATE_EOF:
            return self._end(Ok(status=self.status, header=0xFE).encode(self.capabilities))
        return self._end(Eof(0, self.status).encode())

    def _end(self, payload: bytes) -> bytes:
        data = self._frame(payload)
        self.state = ServerState.COMMAND
        return data

    def _frame(self, payload: bytes) -> bytes:
        data, self._seq = write_packets(payload, self._seq)
        return data

    # -- helpers ---------------------------------------------------------------------------

    def _queue(self, payload: bytes) -> None:
        self._out += self._frame(payload)

    def _close(self) -> None:
        self.state = ServerState.CLOSED
        self._verifier = None

    def abort(self) -> None:
        """The driver dropped the connection."""
        self._close()

    def _out_of_turn(self, what: str) -> ProtocolError:
        return ProtocolError(f"{what}: the server connection is {self.state.value}")
