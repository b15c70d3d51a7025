"""An in-memory client/server pair: both state machines, fed whole, byte by byte and in chunks.

Every auth plugin registered on both sides logs in (over in-memory "TLS", i.e.
both machines told the channel is secure, and without TLS where the plugin
allows it); auth switches, wrong passwords, result sets with and without
DEPRECATE_EOF, ping, errors, raw command mode and quit go through the real
bytes each side produces.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from binlogkit.errors import AuthError, ProtocolError, ServerError
from binlogkit.protocol.auth import Secret, client_plugins, make_credential, server_plugins
from binlogkit.protocol.client import (
    ClientConnection,
    ClientState,
    Connected,
    ResultSet,
    StartTls,
)
from binlogkit.protocol.constants import Capability, Command
from binlogkit.protocol.messages import ColumnDefinition, Ok
from binlogkit.protocol.packets import NEED_DATA
from binlogkit.protocol.server import (
    SERVER_CAPABILITIES,
    Account,
    Authenticated,
    AuthFailed,
    ClientPacket,
    ClientQuit,
    CommandReceived,
    ServerConnection,
    ServerState,
)
from binlogkit.protocol.server import StartTls as ServerStartTls
from binlogkit.protocol.spec import TlsMode

Feeder = Callable[[bytes], list[bytes]]
PASSWORD = "pässword-1"


def whole(data: bytes) -> list[bytes]:
    return [data]


def bytewise(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


def chunked(data: bytes) -> list[bytes]:
    rng = random.Random(len(data))
    out, pos = [], 0
    while pos < len(data):
        n = rng.randint(1, 9)
        out.append(data[pos : pos + n])
        pos += n
    return out


FEEDERS = [whole, bytewise, chunked]
PLUGINS = sorted(set(client_plugins()) & set(server_plugins()))


@pytest.fixture(scope="module")
def rsa_key() -> bytes:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


class Pair:
    """Moves bytes between the two machines through a feeder and records their events."""

    def __init__(self, client: ClientConnection, server: ServerConnection, feeder: Feeder) -> None:
        self.client = client
        self.server = server
        self.feeder = feeder
        self.client_events: list[object] = []
        self.server_events: list[object] = []
        self.to_client = bytearray(server.greeting())
        self.to_server = bytearray()

    def pump(self) -> None:
        """Deliver bytes both ways until neither side has anything more to say."""
        while True:
            self.to_server += self.client.data_to_send()
            self.to_client += self.server.data_to_send()
            if not self.to_server and not self.to_client:
                return
            if self.to_server:
                data, self.to_server = bytes(self.to_server), bytearray()
                for piece in self.feeder(data):
                    self.server.receive_data(piece)
                    self._poll_server()
            if self.to_client:
                data, self.to_client = bytes(self.to_client), bytearray()
                for piece in self.feeder(data):
                    self.client.receive_data(piece)
                    self._poll_client()

    def _poll_server(self) -> None:
        server = self.server
        while server.state not in (ServerState.TLS_UPGRADE, ServerState.CLOSED):
            event = server.next_event()
            if event is NEED_DATA:
                return
            self.server_events.append(event)
            if isinstance(event, ServerStartTls):
                server.tls_established()
                assert self.client.state is ClientState.TLS_UPGRADE
                self.client.tls_established()

    def _poll_client(self) -> None:
        client = self.client
        while client.state not in (ClientState.TLS_UPGRADE, ClientState.CLOSED):
            event = client.next_packet() if client.state is ClientState.RAW else client.next_event()
            if event is NEED_DATA:
                return
            self.client_events.append(event)

    def take(self) -> tuple[list[object], list[object]]:
        client, server = self.client_events, self.server_events
        self.client_events, self.server_events = [], []
        return client, server


def make_pair(
    feeder: Feeder,
    *,
    plugin: str = "mysql_native_password",
    tls: bool = False,
    password: str = PASSWORD,
    server_caps: int = SERVER_CAPABILITIES,
    default_plugin: str = "mysql_native_password",
    private_key: bytes | None = None,
    server_public_key: bytes | None = None,
) -> Pair:
    account = Account("alice", plugin, make_credential(plugin, PASSWORD))
    server = ServerConnection(
        {"alice": account},
        tls_available=tls,
        capabilities=server_caps,
        default_plugin=default_plugin,
        private_key=private_key,
    )
    client = ClientConnection(
        user="alice",
        password=Secret(password),
        database="db1",
        tls=TlsMode.REQUIRED if tls else TlsMode.DISABLED,
        server_public_key=server_public_key,
    )
    return Pair(client, server, feeder)


def connect(pair: Pair) -> None:
    pair.pump()
    client_events, server_events = pair.take()
    assert isinstance(client_events[-1], Connected)
    assert isinstance(server_events[-1], Authenticated)
    assert server_events[-1].user == "alice" and server_events[-1].database == "db1"
    assert server_events[-1].attributes == pair.client.attributes
    assert pair.client.state is ClientState.READY
    assert pair.server.state is ServerState.COMMAND


@pytest.mark.parametrize("feeder", FEEDERS)
@pytest.mark.parametrize("plugin", PLUGINS)
@pytest.mark.parametrize("switch", [True, False], ids=["switch", "direct"])
def test_every_plugin_over_tls(plugin: str, feeder: Feeder, switch: bool) -> None:
    """``switch``: the greeting names mysql_native_password and the server switches the
    client to the account's plugin; ``direct``: the greeting names the account's plugin."""
    default = "mysql_native_password" if switch else plugin
    pair = make_pair(feeder, plugin=plugin, tls=True, default_plugin=default)
    pair.pump()
    client_events, server_events = pair.take()
    assert client_events[0] == StartTls() and isinstance(server_events[0], ServerStartTls)
    assert isinstance(client_events[-1], Connected) and client_events[-1].auth_plugin == plugin
    assert isinstance(server_events[-1], Authenticated) and server_events[-1].plugin == plugin
    assert pair.client.tls_active and pair.server.tls_active


@pytest.mark.parametrize("plugin", PLUGINS)
def test_every_plugin_without_tls(plugin: str, rsa_key: bytes) -> None:
    """Plugins that need a secure channel or the RSA key get the key; clear text is refused."""
    pair = make_pair(whole, plugin=plugin, private_key=rsa_key)
    if plugin == "mysql_clear_password":
        with pytest.raises(ProtocolError, match="insecure"):
            pair.pump()
        assert pair.client.state is ClientState.CLOSED
        return
    connect(pair)


@pytest.mark.parametrize("plugin", PLUGINS)
def test_every_plugin_refuses_a_wrong_password(plugin: str) -> None:
    pair = make_pair(whole, plugin=plugin, tls=True, password="not-it")
    with pytest.raises(AuthError) as info:
        pair.pump()
    assert info.value.code == 1045 and info.value.sql_state == "28000"
    assert "Access denied for user 'alice'" in info.value.server_message
    assert "not-it" not in str(info.value) and PASSWORD not in str(info.value)
    [failed] = [e for e in pair.server_events if isinstance(e, AuthFailed)]
    assert failed.user == "alice"
    assert pair.client.state is ClientState.CLOSED and pair.server.state is ServerState.CLOSED


@pytest.mark.parametrize("feeder", FEEDERS)
def test_auth_switch_from_native_to_ed25519(feeder: Feeder) -> None:
    if "client_ed25519" not in PLUGINS:
        pytest.skip("client_ed25519 not registered")
    pair = make_pair(feeder, plugin="client_ed25519")
    connect(pair)
    assert pair.client.auth_plugin == "client_ed25519"


def test_unknown_user() -> None:
    pair = make_pair(whole)
    pair.server = ServerConnection({})
    pair.to_client = bytearray(pair.server.greeting())
    with pytest.raises(AuthError, match="Access denied"):
        pair.pump()


@pytest.mark.parametrize("feeder", FEEDERS)
@pytest.mark.parametrize("deprecate_eof", [True, False])
def test_commands(feeder: Feeder, deprecate_eof: bool) -> None:
    caps = SERVER_CAPABILITIES if deprecate_eof else SERVER_CAPABILITIES & ~Capability.DEPRECATE_EOF
    pair = make_pair(feeder, server_caps=caps)
    connect(pair)
    client, server = pair.client, pair.server
    assert bool(client.capabilities & Capability.DEPRECATE_EOF) == deprecate_eof

    pair.to_server += client.query("SELECT a, b FROM t")
    pair.pump()
    _, [command] = pair.take()
    assert command == CommandReceived(Command.QUERY, b"SELECT a, b FROM t")
    columns = [ColumnDefinition("a", 3), "b"]
    pair.to_client += server.send_result_set(columns, [(b"1", "x"), (None, ""), ("ü", None)])
    pair.pump()
    [result], _ = pair.take()
    assert isinstance(result, ResultSet)
    assert result.columns == ("a", "b")
    assert result.rows == [("1", "x"), (None, ""), ("ü", None)]

    pair.to_server += client.ping()
    pair.pump()
    _, [command] = pair.take()
    assert command == CommandReceived(Command.PING, b"")
    pair.to_client += server.send_ok()
    pair.pump()
    assert pair.take() == ([Ok(status=2)], [])

    pair.to_server += client.query("INSERT")
    pair.pump()
    pair.take()
    pair.to_client += server.send_ok(affected_rows=3, last_insert_id=7, info="Records: 3")
    pair.pump()
    [ok], _ = pair.take()
    assert isinstance(ok, Ok) and (ok.affected_rows, ok.last_insert_id) == (3, 7)
    assert ok.info == "Records: 3"

    pair.to_server += client.query("SELECT nope")
    pair.pump()
    pair.take()
    pair.to_client += server.send_error(1054, "Unknown column 'nope'", "42S22")
    with pytest.raises(ServerError) as info:
        pair.pump()
    assert (info.value.code, info.value.sql_state) == (1054, "42S22")
    assert client.state is ClientState.READY and server.state is ServerState.COMMAND

    pair.to_server += client.quit()
    pair.pump()
    assert pair.take() == ([], [ClientQuit()])
    assert server.state is ServerState.CLOSED and client.state is ClientState.CLOSED


@pytest.mark.parametrize("feeder", FEEDERS)
def test_raw_command_stream(feeder: Feeder) -> None:
    pair = make_pair(feeder)
    connect(pair)
    client, server = pair.client, pair.server
    pair.to_server += client.send_command(bytes([Command.BINLOG_DUMP]) + b"\x04\x00\x00\x00")
    pair.pump()
    _, [command] = pair.take()
    assert isinstance(command, CommandReceived) and command.name == "BINLOG_DUMP"
    events = [b"\x00" + bytes([i]) * (i * 50) for i in range(1, 6)]
    for event in events:
        pair.to_client += server.send_packet(event)
    pair.pump()
    got, _ = pair.take()
    assert got == events
    pair.to_server += client.write_packet(b"\xefack", seq=0)
    pair.pump()
    assert pair.take() == ([], [ClientPacket(0, b"\xefack")])
    pair.to_client += server.send_packet(b"\x00last") + server.send_eof()
    pair.pump()
    got, _ = pair.take()
    assert got[0] == b"\x00last" and got[1][0] == 0xFE and len(got[1]) < 9 + 4
    client.end_command()
    pair.to_server += client.ping()
    pair.pump()
    pair.take()
    pair.to_client += server.send_ok()
    pair.pump()
    assert pair.take() == ([Ok(status=2)], [])


def test_payload_over_16_mib_through_the_pair() -> None:
    pair = make_pair(whole)
    connect(pair)
    sql = "SELECT '" + "z" * 0x1000005 + "'"
    pair.to_server += pair.client.query(sql)
    pair.pump()
    _, [command] = pair.take()
    assert isinstance(command, CommandReceived) and command.body == sql.encode()
    pair.to_client += pair.server.send_result_set(["v"], [(sql[8:-1],)])
    pair.pump()
    [result], _ = pair.take()
    assert isinstance(result, ResultSet) and result.rows == [(sql[8:-1],)]


def test_server_misuse() -> None:
    server = ServerConnection({})
    with pytest.raises(ProtocolError):
        server.next_event()
    with pytest.raises(ProtocolError):
        server.send_ok()
    server.greeting()
    with pytest.raises(ProtocolError):
        server.greeting()
    with pytest.raises(ProtocolError):
        server.send_result_set(["a"], [])
    assert server.state is ServerState.AWAIT_RESPONSE


def test_reprs_hide_secrets() -> None:
    pair = make_pair(whole)
    connect(pair)
    account = Account(
        "alice", "mysql_native_password", make_credential("mysql_native_password", PASSWORD)
    )
    for obj in (pair.client, pair.server, account):
        assert PASSWORD not in repr(obj)
        assert account.credential.hex() not in repr(obj)
