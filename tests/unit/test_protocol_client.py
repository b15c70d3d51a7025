"""The client state machine against scripted server bytes, fed whole, byte by byte and in chunks.

Server bytes are the documentation's vectors (see test_protocol_messages) and
the mysql_native_password answer is checked against the algorithm's
definition (SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw)))).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable

import pytest
from test_protocol_messages import MARIADB_1011_GREETING, MYSQL_552_GREETING

from binlogkit.errors import AuthError, ConnectionLost, ProtocolError, ServerError
from binlogkit.protocol.auth import Secret
from binlogkit.protocol.client import (
    ClientConnection,
    ClientEvent,
    ClientState,
    Connected,
    ConnectionClosed,
    ResultSet,
    StartTls,
)
from binlogkit.protocol.constants import Capability
from binlogkit.protocol.messages import HandshakeResponse, Ok
from binlogkit.protocol.packets import NEED_DATA, PacketReader, write_packets
from binlogkit.protocol.spec import TlsMode

Feeder = Callable[[bytes], list[bytes]]


def whole(data: bytes) -> list[bytes]:
    return [data]


def bytewise(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


def chunked(data: bytes) -> list[bytes]:
    rng = random.Random(len(data))
    out, pos = [], 0
    while pos < len(data):
        n = rng.randint(1, 7)
        out.append(data[pos : pos + n])
        pos += n
    return out


FEEDERS = [whole, bytewise, chunked]


def frame(payload: bytes, seq: int) -> bytes:
    return write_packets(payload, seq)[0]


def feed(client: ClientConnection, data: bytes, feeder: Feeder) -> list[ClientEvent]:
    events: list[ClientEvent] = []
    for piece in feeder(data):
        client.receive_data(piece)
        while (event := client.next_event()) is not NEED_DATA:
            assert not isinstance(event, type(NEED_DATA))
            events.append(event)
            if isinstance(event, StartTls):
                return events  # the driver must start TLS before anything else
    return events


def sent_payloads(data: bytes) -> list[tuple[int, bytes]]:
    reader = PacketReader()
    reader.receive_data(data)
    out = []
    while (packet := reader.next_packet()) is not NEED_DATA:
        assert not isinstance(packet, type(NEED_DATA))
        out.append((packet.seq, packet.payload))
    return out


def native(password: bytes, scramble: bytes) -> bytes:
    sha1 = hashlib.sha1
    stage1 = sha1(password).digest()
    mask = sha1(scramble + sha1(stage1).digest()).digest()
    return bytes(a ^ b for a, b in zip(stage1, mask, strict=True))


def connect_552(feeder: Feeder, password: str = "pw") -> ClientConnection:
    client = ClientConnection(user="u", password=Secret(password))
    assert feed(client, frame(MYSQL_552_GREETING, 0), feeder) == []
    [(seq, response)] = sent_payloads(client.data_to_send())
    assert seq == 1
    msg = HandshakeResponse.decode(response)
    assert msg.user == "u" and msg.auth_plugin_name is None
    assert msg.auth_response == native(password.encode(), b"dvH@I-CJ*4d|cZwk4^]:")
    assert not msg.capabilities & Capability.DEPRECATE_EOF  # the server lacks it
    [event] = feed(client, bytes.fromhex("0700000200000002000000"), feeder)
    assert isinstance(event, Connected) and event.ok == Ok(status=2)
    assert client.state is ClientState.READY
    return client


DOC_RESULT_SET = bytes.fromhex(
    "0100000101"
    "27000002036465660000001140407665727369"
    "6f6e5f636f6d6d656e74000c08001c000000fd00001f0000"
    "05000003fe00000200"
    "1d0000041c4d7953514c20436f6d6d756e69747920536572766572202847504c29"
    "05000005fe00000200"
)


@pytest.mark.parametrize("feeder", FEEDERS)
def test_handshake_and_documented_result_set(feeder: Feeder) -> None:
    client = connect_552(feeder)
    query = client.query("select @@version_comment limit 1")
    assert query == bytes.fromhex(
        "210000000373656c65637420404076657273696f6e5f636f6d6d656e74206c696d69742031"
    )
    assert client.state is ClientState.WAITING
    [event] = feed(client, DOC_RESULT_SET, feeder)
    assert isinstance(event, ResultSet)
    assert event.columns == ("@@version_comment",)
    assert event.rows == [("MySQL Community Server (GPL)",)]
    assert client.state is ClientState.READY
    assert client.ping() == bytes.fromhex("010000000e")
    assert feed(client, bytes.fromhex("0700000100000002000000"), feeder) == [Ok(status=2)]
    assert client.quit() == bytes.fromhex("0100000001")
    assert client.state is ClientState.CLOSED
    client.receive_data(b"")
    assert client.next_event() == ConnectionClosed()


@pytest.mark.parametrize("feeder", FEEDERS)
def test_mariadb_greeting_with_tls(feeder: Feeder) -> None:
    greeting = bytearray(MARIADB_1011_GREETING)
    at = greeting.index(0) + 1 + 4 + 8 + 1  # version, connection id, scramble 1, filler
    caps_low = int.from_bytes(greeting[at : at + 2], "little") | Capability.SSL
    greeting[at : at + 2] = caps_low.to_bytes(2, "little")
    client = ClientConnection(user="u", password=Secret("pw"), tls=TlsMode.REQUIRED)
    assert feed(client, frame(bytes(greeting), 0), feeder) == [StartTls()]
    [(seq, ssl_request)] = sent_payloads(client.data_to_send())
    assert seq == 1 and len(ssl_request) == 32
    assert int.from_bytes(ssl_request[:4], "little") & Capability.SSL
    with pytest.raises(ProtocolError):
        client.next_event()  # must start TLS first
    client.tls_established()
    [(seq, response)] = sent_payloads(client.data_to_send())
    assert seq == 2 and response[:32] == ssl_request
    assert client.secure and client.is_mariadb


def test_tls_required_but_not_offered() -> None:
    client = ClientConnection(user="u", tls=TlsMode.REQUIRED)
    client.receive_data(frame(MARIADB_1011_GREETING, 0))
    with pytest.raises(ProtocolError, match="does not offer TLS"):
        client.next_event()
    assert client.state is ClientState.CLOSED


def test_auth_error_and_error_before_handshake() -> None:
    client = ClientConnection(user="u", password=Secret("hidden-pw"))
    feed(client, frame(MYSQL_552_GREETING, 0), whole)
    err = b"\xff\x15\x04#28000Access denied for user 'u'@'localhost' (using password: YES)"
    client.receive_data(frame(err, 2))
    with pytest.raises(AuthError) as info:
        client.next_event()
    assert info.value.code == 1045 and info.value.sql_state == "28000"
    assert "hidden-pw" not in str(info.value) + repr(client)
    assert client.state is ClientState.CLOSED
    # An ERR instead of a greeting (too many connections) has no SQL state.
    client = ClientConnection(user="u")
    client.receive_data(frame(b"\xff\x10\x04Too many connections", 0))
    with pytest.raises(ServerError) as err_info:
        client.next_event()
    assert err_info.value.code == 1040 and client.state is ClientState.CLOSED


@pytest.mark.parametrize("feeder", FEEDERS)
def test_auth_switch_to_native(feeder: Feeder) -> None:
    client = ClientConnection(user="u", password=Secret("pw"))
    feed(client, frame(MARIADB_1011_GREETING, 0), feeder)
    client.data_to_send()
    scramble = b"0123456789abcdefghij"
    switch = b"\xfemysql_native_password\x00" + scramble + b"\x00"
    assert feed(client, frame(switch, 2), feeder) == []
    assert sent_payloads(client.data_to_send()) == [(3, native(b"pw", scramble))]
    [event] = feed(client, frame(b"\x00\x00\x00\x02\x00\x00\x00", 4), feeder)
    assert isinstance(event, Connected) and event.auth_plugin == "mysql_native_password"


def test_unknown_plugin_in_switch_closes() -> None:
    client = ClientConnection(user="u", password=Secret("pw"))
    feed(client, frame(MARIADB_1011_GREETING, 0), whole)
    client.receive_data(frame(b"\xfeno_such_plugin\x00xyz", 2))
    with pytest.raises(ProtocolError, match="no_such_plugin"):
        client.next_event()
    assert client.state is ClientState.CLOSED


def test_misuse_is_refused_and_changes_nothing() -> None:
    client = ClientConnection(user="u")
    for call in (lambda: client.query("SELECT 1"), client.ping, client.quit, client.end_command):
        with pytest.raises(ProtocolError):
            call()
        assert client.state is ClientState.HANDSHAKE
    with pytest.raises(ProtocolError):
        client.send_command(b"\x0e")  # a command before auth finished
    with pytest.raises(ProtocolError):
        client.next_packet()
    with pytest.raises(ProtocolError):
        client.tls_established()
    client = connect_552(whole)
    client.query("SELECT 1")
    with pytest.raises(ProtocolError):
        client.query("SELECT 2")  # the previous answer is still pending
    with pytest.raises(ProtocolError):
        client.send_command(b"\x0e")
    assert client.state is ClientState.WAITING


@pytest.mark.parametrize("feeder", FEEDERS)
def test_raw_command_mode(feeder: Feeder) -> None:
    client = connect_552(whole)
    assert client.send_command(b"\x12dump") == frame(b"\x12dump", 0)
    with pytest.raises(ProtocolError, match="end_command"):
        client.query("SELECT 1")
    with pytest.raises(ProtocolError):
        client.next_event()
    stream = frame(b"\x00event-1", 1) + frame(b"\x00event-2", 2) + frame(b"\xfe\x00\x00\x02\x00", 3)
    got = []
    for piece in feeder(stream):
        client.receive_data(piece)
        while (p := client.next_packet()) is not NEED_DATA:
            got.append(p)
    assert got == [b"\x00event-1", b"\x00event-2", b"\xfe\x00\x00\x02\x00"]
    # the client continues the sequence; a semi-sync ACK restarts at 0
    assert client.write_packet(b"more") == frame(b"more", 4)
    assert client.write_packet(b"\xefack", seq=0) == frame(b"\xefack", 0)
    client.receive_data(frame(b"\x00event-3", 9))  # accepted after the explicit sequence
    assert client.next_packet() == b"\x00event-3"
    client.receive_data(frame(b"\x00event-4", 11))
    with pytest.raises(ProtocolError, match="out of order"):
        client.next_packet()
    assert client.state is ClientState.CLOSED


def test_raw_err_ends_command_mode() -> None:
    client = connect_552(whole)
    client.send_command(b"\x12x")
    client.receive_data(frame(b"\xff\xd4\x04#HY000Could not find first log file name", 1))
    with pytest.raises(ServerError) as info:
        client.next_packet()
    assert info.value.code == 1236 and "first log file" in info.value.server_message
    assert client.state is ClientState.READY
    client.send_command(b"\x0e")
    client.end_command()
    client.query("SELECT 1")


def test_query_error_keeps_ready() -> None:
    client = connect_552(whole)
    client.query("SELECT * FROM nope")
    client.receive_data(frame(b"\xff\x7a\x04#42S02Table 'test.nope' doesn't exist", 1))
    with pytest.raises(ServerError) as info:
        client.next_event()
    assert (info.value.code, info.value.sql_state) == (1146, "42S02")
    assert client.state is ClientState.READY


def test_connection_lost_mid_result() -> None:
    client = connect_552(whole)
    client.query("select @@version_comment limit 1")
    client.receive_data(DOC_RESULT_SET[:20])
    assert client.next_event() is NEED_DATA
    client.receive_data(b"")
    with pytest.raises(ConnectionLost, match="waiting"):
        client.next_event()
    assert client.state is ClientState.CLOSED


def test_out_of_order_sequence() -> None:
    client = connect_552(whole)
    client.ping()
    client.receive_data(bytes.fromhex("0700000500000002000000"))
    with pytest.raises(ProtocolError, match="out of order"):
        client.next_event()
    assert client.state is ClientState.CLOSED


def test_result_row_over_16_mib() -> None:
    client = connect_552(whole)
    client.query("SELECT REPEAT('x', 17000000)")
    value = b"x" * 17_000_000
    stream = (
        frame(b"\x01", 1)
        + frame(bytes.fromhex("0364656600000000000c2100a0ba0200fd000000000000"), 2)
        + frame(b"\xfe\x00\x00\x02\x00", 3)
    )
    row, nxt = write_packets(b"\xfe" + len(value).to_bytes(8, "little") + value, 4)
    stream += row + frame(b"\xfe\x00\x00\x02\x00", nxt)
    events = feed(
        client, stream, lambda d: [d[i : i + (1 << 20)] for i in range(0, len(d), 1 << 20)]
    )
    [result] = events
    assert isinstance(result, ResultSet)
    assert result.rows == [("x" * 17_000_000,)]


def test_idle_err_closes() -> None:
    client = connect_552(whole)
    client.receive_data(frame(b"\xff\x1d\x04#08S01Server shutdown in progress", 0))
    with pytest.raises(ServerError):
        client.next_event()
    assert client.state is ClientState.CLOSED


def test_missing_replication_grant_gets_a_hint() -> None:
    client = connect_552(whole)
    client.send_command(b"\x12x")
    denied = b"Access denied; you need (at least one of) the REPLICATION SLAVE privilege(s)"
    client.receive_data(frame(b"\xff\xcb\x04#42000" + denied, 1))
    with pytest.raises(ServerError) as info:
        client.next_packet()
    assert info.value.code == 1227
    assert "GRANT REPLICATION SLAVE" in str(info.value)


@pytest.mark.parametrize(
    "first",
    [b"SSH-2.0-OpenSSH_9.6\r\n", b"HTTP/1.1 400 Bad Request\r\n\r\n", b"\x05\x00\x00\x00xyz"],
)
@pytest.mark.parametrize("feeder", FEEDERS)
def test_a_peer_that_does_not_greet_as_mysql(first: bytes, feeder: Feeder) -> None:
    client = ClientConnection(user="u")
    with pytest.raises(ProtocolError, match="not a MySQL server") as info:
        feed(client, first, feeder)
    assert repr(first[:5])[2:-1] in str(info.value)
    assert client.state is ClientState.CLOSED
