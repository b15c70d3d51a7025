"""The client side of the MySQL protocol as a sans-I/O state machine.

:class:`ClientConnection` never touches a socket. A driver feeds it the bytes
it reads (:meth:`~ClientConnection.receive_data`, ``b""`` for end of stream),
sends what :meth:`~ClientConnection.data_to_send` and the command methods
return, and pulls events with :meth:`~ClientConnection.next_event` (or raw
packets with :meth:`~ClientConnection.next_packet` in command mode)::

    HANDSHAKE --greeting--> AUTH ------------------------OK--> READY
        \\--greeting, TLS wanted--> TLS_UPGRADE --tls_established()--/^
    READY --query()/ping()/simple_command()--> WAITING --OK/ERR/result set--> READY
    READY --send_command()--> RAW --end_command() or ERR--> READY
    READY/RAW --quit()--> CLOSED

The handshake and auth answers (SSLRequest, handshake response, auth-switch
and more-data answers) are made by the machine itself and wait in
:meth:`~ClientConnection.data_to_send`. A call out of turn raises
:class:`~binlogkit.errors.ProtocolError` and changes nothing; bytes that break
the protocol close the machine (state CLOSED) and raise; an ERR answer to a
command raises :class:`~binlogkit.errors.ServerError` and leaves it READY.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import field
from enum import Enum
from typing import TypeVar

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import AuthError, ConnectionLost, ProtocolError, ServerError
from binlogkit.protocol.auth.base import ClientAuth, Secret, as_secret, client_auth
from binlogkit.protocol.constants import (
    AUTH_MORE_DATA_HEADER,
    AUTH_SWITCH_HEADER,
    ERR_HEADER,
    LOCAL_INFILE_HEADER,
    OK_HEADER,
    UTF8MB4_GENERAL_CI,
    Capability,
    Command,
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
    command_packet,
    decode_column_count,
    decode_text_row,
    is_eof,
    text,
)
from binlogkit.protocol.packets import NEED_DATA, NeedData, Packet, PacketReader, write_packets
from binlogkit.protocol.spec import TlsMode

log = logging.getLogger(__name__)
T = TypeVar("T")

CLIENT_CAPABILITIES = (
    Capability.LONG_PASSWORD
    | Capability.LONG_FLAG
    | Capability.PROTOCOL_41
    | Capability.TRANSACTIONS
    | Capability.SECURE_CONNECTION
    | Capability.MULTI_RESULTS
    | Capability.PLUGIN_AUTH
    | Capability.PLUGIN_AUTH_LENENC_CLIENT_DATA
    | Capability.CONNECT_ATTRS
    | Capability.DEPRECATE_EOF
)
"""What the client offers; the connection uses the part the server offers too."""

REQUIRED_CAPABILITIES = Capability.PROTOCOL_41 | Capability.SECURE_CONNECTION
DEFAULT_AUTH_PLUGIN = "mysql_native_password"
MAX_AUTH_SWITCHES = 8  # MariaDB's "IDENTIFIED VIA a OR b" switches once per plugin
MAX_PACKET_SIZE = 1 << 30


class ClientState(Enum):
    HANDSHAKE = "handshake"
    TLS_UPGRADE = "tls-upgrade"
    AUTH = "auth"
    READY = "ready"
    WAITING = "waiting"
    RAW = "raw"
    CLOSED = "closed"


@frozen_dataclass
class StartTls:
    """Send :meth:`ClientConnection.data_to_send` (the SSLRequest), then start TLS on
    the socket and call :meth:`ClientConnection.tls_established`."""


@frozen_dataclass
class Connected:
    """Authentication succeeded; the connection is READY."""

    handshake: Handshake
    ok: Ok
    auth_plugin: str


@frozen_dataclass
class ConnectionClosed:
    """The server closed the connection after COM_QUIT, as it should."""


@frozen_dataclass
class ResultSet:
    """A text result set: column names and definitions, rows of text (None for NULL).

    Values are UTF-8 text with ``surrogateescape``: ``v.encode("utf-8",
    "surrogateescape")`` gives back the exact bytes the server sent.
    """

    fields: tuple[ColumnDefinition, ...] = ()
    rows: list[tuple[str | None, ...]] = field(default_factory=list)
    status: int = 0
    warnings: int = 0

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    @property
    def more_results(self) -> bool:
        return bool(self.status & ServerStatus.MORE_RESULTS_EXISTS)


ClientEvent = StartTls | Connected | ConnectionClosed | Ok | ResultSet


class ClientConnection:
    """The client protocol state machine (see the module doc for the states).

    ``secure_transport`` says the byte stream is already private (a unix
    socket), which lets plugins that send the password in clear do so.
    """

    def __init__(
        self,
        *,
        user: str,
        password: Secret | str | bytes | None = None,
        database: str | None = None,
        tls: TlsMode = TlsMode.DISABLED,
        secure_transport: bool = False,
        server_public_key: bytes | None = None,
        attributes: tuple[tuple[str, str], ...] | None = None,
        charset: int = UTF8MB4_GENERAL_CI,
        capabilities: int = CLIENT_CAPABILITIES,
    ) -> None:
        self.user = user
        self._password = as_secret(password)
        self.database = database
        self.tls_mode = tls
        self.secure_transport = secure_transport
        self._server_public_key = server_public_key
        self.attributes = attributes
        self.charset = charset
        self._offered = int(capabilities)
        self.state = ClientState.HANDSHAKE
        self.handshake: Handshake | None = None
        self.capabilities = 0
        self.tls_active = False
        self.status = 0
        self.auth_plugin: str | None = None
        self._reader = PacketReader()
        self._out = bytearray()
        self._seq = 0
        self._resync = False
        self._auth: ClientAuth | None = None
        self._switches = 0
        self._reply: _Reply | None = None

    def __repr__(self) -> str:
        return f"<ClientConnection user={self.user!r} state={self.state.value}>"

    @property
    def secure(self) -> bool:
        """TLS is active or the transport is a unix socket."""
        return self.tls_active or self.secure_transport

    @property
    def server_version(self) -> str:
        return self.handshake.server_version if self.handshake else ""

    @property
    def connection_id(self) -> int:
        return self.handshake.connection_id if self.handshake else 0

    @property
    def is_mariadb(self) -> bool:
        return self.handshake.is_mariadb if self.handshake else False

    # -- bytes in and out ------------------------------------------------------

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        """Bytes read from the server; ``b""`` when the stream ended."""
        self._reader.receive_data(data)

    def data_to_send(self) -> bytes:
        """The bytes the machine made on its own (handshake and auth answers)."""
        out = bytes(self._out)
        self._out.clear()
        return out

    # -- events ------------------------------------------------------------------

    def next_event(self) -> ClientEvent | NeedData:
        """The next event, or NEED_DATA (see the module doc)."""
        if self.state is ClientState.RAW:
            raise ProtocolError("in command mode: read the answer with next_packet()")
        if self.state is ClientState.TLS_UPGRADE:
            raise ProtocolError("start TLS and call tls_established() first")
        if self.state is ClientState.CLOSED:
            if self._reader.eof and not self._reader.pending:
                return ConnectionClosed()
            return NEED_DATA
        while True:
            if self.state is ClientState.HANDSHAKE:
                self._check_greeting()
            packet = self._packet()
            if packet is NEED_DATA:
                return NEED_DATA
            event = self._handle(packet)
            if event is not None:
                return event

    def next_packet(self) -> bytes | NeedData:
        """In command mode (after :meth:`send_command`): the next raw payload, or NEED_DATA.

        An ERR packet ends the command: the machine goes back to READY and
        raises :class:`ServerError`.
        """
        if self.state is not ClientState.RAW:
            raise ProtocolError(
                f"next_packet() needs command mode; the connection is {self.state.value}"
            )
        packet = self._packet()
        if packet is NEED_DATA:
            return NEED_DATA
        payload = packet.payload
        if payload[0] == ERR_HEADER:  # never empty: _packet refuses empty packets
            err = self._decode(Err.decode, payload)
            self.state = ClientState.READY
            raise _server_error(err)
        return payload

    def next_payloads(self, first: int, skip: int = 0) -> list[bytes] | NeedData:
        """In command mode: the payloads of the whole packets received that start with
        the byte ``first``, without their first ``skip`` bytes, cut in one go (a run of
        binlog event packets).

        ``[]`` when the next packet is of another kind (an ERR, an EOF, one over
        16 MiB...) or out of order: read it with :meth:`next_packet`. NEED_DATA when
        no whole packet has arrived.
        """
        if self.state is not ClientState.RAW:
            raise ProtocolError(
                f"next_payloads() needs command mode; the connection is {self.state.value}"
            )
        reader = self._reader
        if self._resync:  # the next packet may carry any number: next_packet takes it
            return []
        payloads, self._seq = reader.payloads(self._seq, first, skip)
        if payloads or reader.ready:
            return payloads
        return NEED_DATA

    def _packet(self) -> Packet | NeedData:
        try:
            packet = self._reader.next_packet()
        except ProtocolError:
            self._close()
            raise
        if packet is NEED_DATA:
            if self._reader.eof:
                state = self.state
                self._close()
                raise ConnectionLost(_lost_message(state, self._reader.pending))
            return NEED_DATA
        if self._resync or self.state is ClientState.READY:
            self._resync = False  # unasked packets (a closing ERR) carry any number
        elif packet.seq != self._seq:
            self._close()
            raise ProtocolError(
                f"packet out of order: sequence number {packet.seq}, expected {self._seq}"
            )
        self._seq = (packet.seq + packet.parts) & 0xFF  # after the last part
        if not packet.payload:
            self._close()
            raise ProtocolError("empty packet from the server")
        return packet

    def _check_greeting(self) -> None:
        """Refuse a peer whose first bytes are not a handshake (or an ERR) packet.

        Before waiting for a whole packet: an HTTP or SSH server's first bytes
        would read as the header of a packet of megabytes.
        """
        head = self._reader.head(_GREETING_SHOWN)
        if len(head) < 5:
            return
        length = head[0] | head[1] << 8 | head[2] << 16
        if head[3] == 0 and 0 < length <= _MAX_GREETING and head[4] in (10, ERR_HEADER):
            return
        self._close()
        raise ProtocolError(
            f"not a MySQL server: its first bytes are {head!r}, not a handshake",
            hint="check the host and port; MySQL and MariaDB listen on 3306 by default",
        )

    def _handle(self, packet: Packet) -> ClientEvent | None:
        state = self.state
        if state is ClientState.HANDSHAKE:
            return self._on_handshake(packet.payload)
        if state is ClientState.AUTH:
            return self._on_auth(packet.payload)
        if state is ClientState.WAITING:
            assert self._reply is not None
            return self._reply.feed(self, packet.payload)
        # READY: the server speaks unasked only to say it is closing the connection.
        payload = packet.payload
        self._close()
        if payload[0] == ERR_HEADER:
            raise _server_error(Err.decode(payload))
        raise ProtocolError(f"unexpected packet (0x{payload[0]:02x}) while idle")

    # -- connection phase ----------------------------------------------------------

    def _on_handshake(self, payload: bytes) -> ClientEvent | None:
        if payload[0] == ERR_HEADER:
            err = self._decode(Err.decode, payload)
            self._close()
            raise _server_error(err)
        hs = self._decode(Handshake.decode, payload)
        self.handshake = hs
        missing = REQUIRED_CAPABILITIES & ~hs.capabilities
        if missing:
            self._close()
            raise ProtocolError(
                f"server {hs.server_version} lacks {missing!r}; MySQL 4.1 or newer is needed"
            )
        caps = self._offered & hs.capabilities
        if self.database:
            caps |= Capability.CONNECT_WITH_DB & hs.capabilities
        if self.tls_mode.wanted and hs.capabilities & Capability.SSL:
            caps |= Capability.SSL
        elif self.tls_mode.required:
            self._close()
            raise ProtocolError(
                f"ssl-mode={self.tls_mode.value} but the server does not offer TLS",
                hint="enable TLS on the server, or connect with ssl-mode=preferred",
            )
        if not hs.is_mariadb or caps & Capability.LONG_PASSWORD:
            caps &= 0xFFFFFFFF
        self.capabilities = caps
        log.debug(
            "server %s (connection %d), plugin %s",
            hs.server_version,
            hs.connection_id,
            hs.auth_plugin_name,
        )
        if caps & Capability.SSL:
            request = SslRequest(caps, MAX_PACKET_SIZE, self.charset)
            self._queue(request.encode())
            self.state = ClientState.TLS_UPGRADE
            return StartTls()
        self._send_response()
        return None

    def tls_established(self) -> None:
        """The driver finished the TLS handshake; the auth exchange continues over TLS."""
        if self.state is not ClientState.TLS_UPGRADE:
            raise ProtocolError(
                f"tls_established() while {self.state.value}: no TLS upgrade pending"
            )
        self.tls_active = True
        self._send_response()

    def _send_response(self) -> None:
        hs = self.handshake
        assert hs is not None
        name = hs.auth_plugin_name or DEFAULT_AUTH_PLUGIN
        try:
            plugin_cls = client_auth(name)
        except ProtocolError:
            name = DEFAULT_AUTH_PLUGIN
            plugin_cls = client_auth(name)
        try:
            self._auth = plugin_cls(
                self._password, secure=self.secure, server_public_key=self._server_public_key
            )
            response = self._auth.start(hs.scramble)
        except ProtocolError:
            self._close()
            raise
        self.auth_plugin = name
        caps = self.capabilities
        if len(response) > 250 and not caps & Capability.PLUGIN_AUTH_LENENC_CLIENT_DATA:
            self._close()
            raise ProtocolError("auth response too long for a server without lenenc auth data")
        message = HandshakeResponse(
            capabilities=caps,
            max_packet_size=MAX_PACKET_SIZE,
            charset=self.charset,
            user=self.user,
            auth_response=response,
            database=self.database if caps & Capability.CONNECT_WITH_DB else None,
            auth_plugin_name=name if caps & Capability.PLUGIN_AUTH else None,
            attributes=self.attributes if caps & Capability.CONNECT_ATTRS else None,
        )
        self._queue(message.encode())
        self.state = ClientState.AUTH

    def _on_auth(self, payload: bytes) -> ClientEvent | None:
        header = payload[0]
        if header == OK_HEADER:
            ok = self._decode(lambda p: Ok.decode(p, self.capabilities), payload)
            self.status = ok.status
            self.state = ClientState.READY
            self._auth = None
            assert self.handshake is not None and self.auth_plugin is not None
            log.debug("authenticated as %r with %s", self.user, self.auth_plugin)
            return Connected(self.handshake, ok, self.auth_plugin)
        if header == ERR_HEADER:
            err = self._decode(Err.decode, payload)
            self._close()
            raise AuthError(err.code, err.sql_state, err.message, hint=_HINTS.get(err.code))
        try:
            if header == AUTH_SWITCH_HEADER:
                switch = AuthSwitchRequest.decode(payload)
                self._switches += 1
                if self._switches > MAX_AUTH_SWITCHES:
                    raise ProtocolError("too many auth switch requests")
                log.debug("server switches auth to %s", switch.plugin_name)
                self._auth = client_auth(switch.plugin_name)(
                    self._password, secure=self.secure, server_public_key=self._server_public_key
                )
                self.auth_plugin = switch.plugin_name
                self._queue(self._auth.start(switch.data))
                return None
            if header == AUTH_MORE_DATA_HEADER:
                assert self._auth is not None
                answer = self._auth.more(AuthMoreData.decode(payload).data)
                if answer is not None:
                    self._queue(answer)
                return None
            raise ProtocolError(f"unexpected packet 0x{header:02x} during authentication")
        except ProtocolError:
            self._close()
            raise

    # -- commands ----------------------------------------------------------------------

    def _command(self, payload: bytes, reply: _Reply | None, state: ClientState) -> bytes:
        self._ready_for("a command")
        data, self._seq = write_packets(payload, 0)
        self._reply = reply
        self.state = state
        return data

    def _ready_for(self, what: str) -> None:
        if self.state is not ClientState.READY:
            hint = None
            if self.state is ClientState.RAW:
                hint = "end the raw command with end_command() first"
            raise ProtocolError(
                f"cannot send {what}: the connection is {self.state.value}", hint=hint
            )

    def query(self, sql: str | bytes) -> bytes:
        """COM_QUERY: the bytes to send. The answer is an :class:`Ok` or a :class:`ResultSet`
        (more follow while their status has MORE_RESULTS_EXISTS)."""
        body = sql.encode("utf-8") if isinstance(sql, str) else sql
        return self._command(
            command_packet(Command.QUERY, body), _QueryReply(), ClientState.WAITING
        )

    def ping(self) -> bytes:
        """COM_PING; the answer is an :class:`Ok`."""
        return self.simple_command(Command.PING)

    def simple_command(self, command: Command | int, body: bytes = b"") -> bytes:
        """A command answered by OK or ERR (COM_PING, COM_INIT_DB, COM_RESET_CONNECTION ...)."""
        return self._command(command_packet(command, body), _OkReply(), ClientState.WAITING)

    def quit(self) -> bytes:
        """COM_QUIT (from READY or command mode); the machine is CLOSED afterwards."""
        if self.state not in (ClientState.READY, ClientState.RAW):
            raise ProtocolError(f"cannot quit while {self.state.value}")
        data, _ = write_packets(command_packet(Command.QUIT), 0)
        self._close()
        return data

    def send_command(self, payload: bytes) -> bytes:
        """Start a raw command (sequence 0) and enter command mode: the caller reads the
        answer with :meth:`next_packet`. Allowed from READY and from command mode."""
        if self.state is ClientState.RAW:
            self.state = ClientState.READY
        if not payload:
            raise ProtocolError("a command payload starts with its command byte")
        return self._command(bytes(payload), None, ClientState.RAW)

    def write_packet(self, payload: bytes, *, seq: int | None = None) -> bytes:
        """In command mode: one more packet from the client, continuing the sequence.

        With ``seq`` the packet gets that sequence number instead (a semi-sync
        ACK restarts at 0) and the next packet from the server is accepted
        with whatever number it carries.
        """
        if self.state is not ClientState.RAW:
            raise ProtocolError(
                f"write_packet() needs command mode; the connection is {self.state.value}"
            )
        if seq is None:
            data, self._seq = write_packets(payload, self._seq)
        else:
            data, _ = write_packets(payload, seq)
            self._resync = True
        return data

    def end_command(self) -> None:
        """Leave command mode once the raw command's answer is read (back to READY)."""
        if self.state is not ClientState.RAW:
            raise ProtocolError(
                f"end_command() outside command mode (the connection is {self.state.value})"
            )
        self.state = ClientState.READY

    def abort(self) -> None:
        """The driver dropped the connection: the machine is CLOSED."""
        self._close()

    # -- helpers ---------------------------------------------------------------------------

    def _queue(self, payload: bytes) -> None:
        data, self._seq = write_packets(payload, self._seq)
        self._out += data

    def _out_of_turn(self, what: str) -> ProtocolError:
        hint = None
        if self.state is ClientState.RAW:
            hint = "end the raw command with end_command() first"
        elif self.state is ClientState.CLOSED:
            hint = "the connection is closed; open a new one"
        return ProtocolError(f"{what}: the connection is {self.state.value}", hint=hint)

    def _close(self) -> None:
        self.state = ClientState.CLOSED
        self._auth = None
        self._reply = None

    def _decode(self, decoder: Callable[[bytes], T], payload: bytes) -> T:
        try:
            return decoder(payload)
        except ProtocolError:
            self._close()
            raise

    def _finish(self, status: int) -> None:
        self.status = status
        if not status & ServerStatus.MORE_RESULTS_EXISTS:
            self.state = ClientState.READY
            self._reply = None
        else:
            self._reply = _QueryReply()


_GREETING_SHOWN = 16
"""How many of a non-MySQL peer's first bytes an error shows."""
_MAX_GREETING = 0xFFFF
"""More than any server's handshake packet (its payload is about 100 bytes)."""
_SPECIFIC_ACCESS_DENIED = 1227
_HINTS = {
    1045: "check the user name and the password",
    _SPECIFIC_ACCESS_DENIED: (
        "a replication user needs GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* "
        "(MariaDB 10.5+: REPLICATION SLAVE, BINLOG MONITOR)"
    ),
}
"""What to do about server errors a new user meets first."""


def _server_error(err: Err) -> ServerError:
    return ServerError(err.code, err.sql_state, err.message, hint=_HINTS.get(err.code))


def _lost_message(state: ClientState, pending: int) -> str:
    cut = f" ({pending} bytes of a packet received)" if pending else ""
    return f"the server closed the connection while the client was in state {state.value}{cut}"


class _Reply:
    """Collects the answer to one command from its packets."""

    def feed(self, conn: ClientConnection, payload: bytes) -> ClientEvent | None:
        raise NotImplementedError


class _OkReply(_Reply):
    def feed(self, conn: ClientConnection, payload: bytes) -> ClientEvent | None:
        if payload[0] == ERR_HEADER:
            err = conn._decode(Err.decode, payload)
            conn._finish(0)
            raise _server_error(err)
        if payload[0] != OK_HEADER:
            conn._close()
            raise ProtocolError(f"expected OK or ERR, got a packet starting 0x{payload[0]:02x}")
        ok: Ok = conn._decode(lambda p: Ok.decode(p, conn.capabilities), payload)
        conn._finish(ok.status & ~ServerStatus.MORE_RESULTS_EXISTS)
        return ok


class _QueryReply(_Reply):
    """OK, ERR, or column count → column definitions → [EOF] → rows → EOF/OK."""

    def __init__(self) -> None:
        self.count = 0
        self.fields: list[ColumnDefinition] = []
        self.rows: list[tuple[str | None, ...]] = []
        self.phase = "first"

    def feed(self, conn: ClientConnection, payload: bytes) -> ClientEvent | None:
        caps = conn.capabilities
        head = payload[0]
        if head == ERR_HEADER:
            err = conn._decode(Err.decode, payload)
            conn._finish(0)
            raise _server_error(err)
        if self.phase == "first":
            if head == OK_HEADER:
                ok: Ok = conn._decode(lambda p: Ok.decode(p, caps), payload)
                conn._finish(ok.status)
                return ok
            if head == LOCAL_INFILE_HEADER:
                conn._close()
                raise ProtocolError(
                    "the server asked for LOAD DATA LOCAL INFILE, which is not supported"
                )
            self.count = conn._decode(decode_column_count, payload)
            self.phase = "columns"
            return None
        if self.phase == "columns":
            self.fields.append(conn._decode(ColumnDefinition.decode, payload))
            if len(self.fields) == self.count:
                self.phase = "rows" if caps & Capability.DEPRECATE_EOF else "columns-eof"
            return None
        if self.phase == "columns-eof":
            conn._decode(Eof.decode, payload)
            self.phase = "rows"
            return None
        if is_eof(payload, caps):
            if caps & Capability.DEPRECATE_EOF:
                end: Ok = conn._decode(lambda p: Ok.decode(p, caps), payload)
                status, warnings = end.status, end.warnings
            else:
                eof: Eof = conn._decode(Eof.decode, payload)
                status, warnings = eof.status, eof.warnings
            conn._finish(status)
            return ResultSet(tuple(self.fields), self.rows, status, warnings)
        values = conn._decode(lambda p: decode_text_row(p, self.count), payload)
        self.rows.append(tuple(None if v is None else text(v) for v in values))
        return None
