"""Known-answer vectors for the protocol messages, decoded and re-encoded byte for byte.

Vectors: the examples of MySQL's protocol documentation (HandshakeV10 of
5.5.2-m2, OK, ERR "No tables used", EOF, the text result set of
``select @@version_comment limit 1``) and a greeting captured from MariaDB
10.11 (extended capabilities in the reserved bytes).
"""

from __future__ import annotations

import pytest

from binlogkit.binlog.constants import ColumnType
from binlogkit.errors import ProtocolError
from binlogkit.protocol.constants import Capability, ServerStatus
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
    decode_column_count,
    decode_text_row,
    encode_text_row,
    is_eof,
)


def payload(hexdump: str) -> bytes:
    """The payload of one framed packet written as hex (the 4-byte header checked and cut)."""
    data = bytes.fromhex(hexdump)
    assert int.from_bytes(data[:3], "little") == len(data) - 4
    return data[4:]


MYSQL_552_GREETING = payload(
    "36 00 00 00 0a 35 2e 35 2e 32 2d 6d 32 00 0b 00"
    "00 00 64 76 48 40 49 2d 43 4a 00 ff f7 08 02 00"
    "00 00 00 00 00 00 00 00 00 00 00 00 00 2a 34 64"
    "7c 63 5a 77 6b 34 5e 5d 3a 00"
)

MARIADB_1011_GREETING = (
    b"\n5.5.5-10.11.19-MariaDB-0+deb12u1-log\x00\x05\x00\x00\x00|*X`VpOx\x00\xfe\xf7-\x02\x00"
    b"\xff\x81\x15\x00\x00\x00\x00\x00\x00\x1d\x00\x00\x0031;u^Wy{{zrM\x00mysql_native_password\x00"
)


def test_mysql_552_handshake() -> None:
    hs = Handshake.decode(MYSQL_552_GREETING)
    assert hs.server_version == "5.5.2-m2"
    assert hs.connection_id == 11
    assert hs.capabilities == 0xF7FF
    assert hs.charset == 8 and hs.status == ServerStatus.AUTOCOMMIT
    assert hs.scramble == b"dvH@I-CJ*4d|cZwk4^]:"
    assert hs.auth_plugin_name == "" and not hs.is_mariadb
    assert hs.encode() == MYSQL_552_GREETING


def test_mariadb_handshake_extended_capabilities() -> None:
    hs = Handshake.decode(MARIADB_1011_GREETING)
    assert hs.is_mariadb and hs.connection_id == 5
    assert not hs.capabilities & Capability.LONG_PASSWORD  # MariaDB clears CLIENT_MYSQL
    assert hs.capabilities & Capability.PLUGIN_AUTH and hs.capabilities & Capability.DEPRECATE_EOF
    ext = Capability(hs.capabilities >> 32 << 32)
    assert ext == (
        Capability.MARIADB_PROGRESS
        | Capability.MARIADB_STMT_BULK_OPERATIONS
        | Capability.MARIADB_EXTENDED_METADATA
        | Capability.MARIADB_CACHE_METADATA
    )
    assert hs.scramble == b"|*X`VpOx31;u^Wy{{zrM" and len(hs.auth_data) == 21
    assert hs.auth_plugin_name == "mysql_native_password"
    assert hs.encode() == MARIADB_1011_GREETING


def test_ok_err_eof_known_answers() -> None:
    ok = Ok.decode(payload("07 00 00 02 00 00 00 02 00 00 00"))
    assert ok == Ok(status=ServerStatus.AUTOCOMMIT)
    assert ok.encode() == payload("07 00 00 02 00 00 00 02 00 00 00")
    err_bytes = payload(
        "17 00 00 01 ff 48 04 23 48 59 30 30 30 4e 6f 20 74 61 62 6c 65 73 20 75 73 65 64"
    )
    err = Err.decode(err_bytes)
    assert (err.code, err.sql_state, err.message) == (1096, "HY000", "No tables used")
    assert err.encode() == err_bytes
    eof_bytes = payload("05 00 00 05 fe 00 00 02 00")
    assert Eof.decode(eof_bytes) == Eof(warnings=0, status=2)
    assert Eof(0, 2).encode() == eof_bytes


def test_err_without_sql_state() -> None:
    # Sent before the client said it speaks 4.1 (e.g. "Too many connections").
    raw = b"\xff\x10\x04Too many connections"
    err = Err.decode(raw)
    assert (err.code, err.sql_state, err.message) == (1040, "", "Too many connections")
    assert err.encode() == raw


def test_ok_with_large_counts_and_info() -> None:
    # affected rows 0x10000 (0xfd + 3 bytes), insert id 251 (0xfc + 2 bytes)
    raw = b"\x00\xfd\x00\x00\x01\xfc\xfb\x00\x22\x00\x01\x00Rows matched: 1"
    ok = Ok.decode(raw)
    assert ok.affected_rows == 0x10000 and ok.last_insert_id == 251
    assert ok.status == 0x22 and ok.warnings == 1 and ok.info == "Rows matched: 1"
    assert ok.encode() == raw


def test_ok_with_session_track() -> None:
    caps = Capability.PROTOCOL_41 | Capability.SESSION_TRACK
    raw = b"\x00\x00\x00\x02\x40\x00\x00\x00\x07\x01\x05\x04test"
    ok = Ok.decode(raw, caps)
    assert ok.status == 0x4002 and ok.info == "" and ok.session_state == b"\x01\x05\x04test"
    assert ok.encode(caps) == raw


def test_text_result_set_of_the_documentation() -> None:
    assert decode_column_count(payload("01 00 00 01 01")) == 1
    col_bytes = payload(
        "27 00 00 02 03 64 65 66 00 00 00 11 40 40 76 65 72 73 69 6f 6e 5f 63 6f"
        "6d 6d 65 6e 74 00 0c 08 00 1c 00 00 00 fd 00 00 1f 00 00"
    )
    col = ColumnDefinition.decode(col_bytes)
    assert col.name == "@@version_comment" and col.catalog == "def"
    assert col.type == ColumnType.VAR_STRING and col.charset == 8
    assert col.column_length == 28 and col.decimals == 31 and col.flags == 0
    assert col.encode() == col_bytes
    row_bytes = payload(
        "1d 00 00 04 1c 4d 79 53 51 4c 20 43 6f 6d 6d 75 6e 69 74 79 20 53 65 72 76 65 72"
        "20 28 47 50 4c 29"
    )
    assert decode_text_row(row_bytes, 1) == (b"MySQL Community Server (GPL)",)
    assert encode_text_row([b"MySQL Community Server (GPL)"]) == row_bytes
    assert is_eof(payload("05 00 00 05 fe 00 00 02 00"), Capability.PROTOCOL_41)


def test_text_row_null_and_bounds() -> None:
    assert decode_text_row(b"\xfb\x01a\x00", 3) == (None, b"a", b"")
    with pytest.raises(ProtocolError):
        decode_text_row(b"\x05ab", 1)
    with pytest.raises(ProtocolError):
        decode_text_row(b"\x01a\x01b", 1)


def test_row_starting_with_0xfe_is_not_eof() -> None:
    big = encode_text_row([b"x" * 0x1000000])  # 0xfe + 8-byte length
    assert big[0] == 0xFE
    assert not is_eof(big, Capability.PROTOCOL_41)
    assert not is_eof(big, Capability.PROTOCOL_41 | Capability.DEPRECATE_EOF)


def test_handshake_response_round_trip_and_repr_hides_auth() -> None:
    caps = (
        Capability.PROTOCOL_41
        | Capability.SECURE_CONNECTION
        | Capability.PLUGIN_AUTH
        | Capability.PLUGIN_AUTH_LENENC_CLIENT_DATA
        | Capability.CONNECT_WITH_DB
        | Capability.CONNECT_ATTRS
    )
    msg = HandshakeResponse(
        capabilities=int(caps),
        max_packet_size=1 << 24,
        charset=45,
        user="üser",
        auth_response=b"clear-text-password",
        database="db",
        auth_plugin_name="mysql_clear_password",
        attributes=(("_client_name", "binlogkit"),),
    )
    raw = msg.encode()
    assert raw[:4] == int(caps).to_bytes(4, "little")
    assert raw[9:32] == bytes(23)
    assert HandshakeResponse.decode(raw) == msg
    assert "clear-text-password" not in repr(msg)
    # The SSLRequest is the first 32 bytes.
    ssl = SslRequest(int(caps | Capability.SSL), 1 << 24, 45)
    assert len(ssl.encode()) == 32 and SslRequest.decode(ssl.encode()) == ssl


def test_mariadb_extended_caps_in_client_packets() -> None:
    caps = int(Capability.PROTOCOL_41 | Capability.MARIADB_PROGRESS)
    raw = SslRequest(caps, 0, 45).encode()
    assert raw[28:32] == b"\x01\x00\x00\x00"
    assert SslRequest.decode(raw).capabilities == caps


def test_auth_switch_and_more_data() -> None:
    raw = b"\xfemysql_native_password\x00" + b"a" * 20 + b"\x00"
    switch = AuthSwitchRequest.decode(raw)
    assert switch == AuthSwitchRequest("mysql_native_password", b"a" * 20 + b"\x00")
    assert switch.encode() == raw
    assert AuthSwitchRequest.decode(b"\xfe") == AuthSwitchRequest("mysql_old_password")
    assert AuthMoreData.decode(b"\x01\x03") == AuthMoreData(b"\x03")
    assert AuthMoreData(b"\x04").encode() == b"\x01\x04"


@pytest.mark.parametrize(
    "cls, data",
    [
        (Handshake, b"\x09abc"),
        (Handshake, b"\x0a5.5\x00\x01"),
        (Ok, b"\x00\xfd\x01"),
        (Err, b"\xff\x01"),
        (ColumnDefinition, b"\x03def\x00"),
        (HandshakeResponse, bytes(32) + b"user"),
    ],
)
def test_malformed_messages_raise_protocol_error(cls: type, data: bytes) -> None:
    with pytest.raises(ProtocolError):
        cls.decode(data)
