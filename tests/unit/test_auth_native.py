"""mysql_native_password against its definition and MySQL's PASSWORD() strings."""

from __future__ import annotations

import hashlib

import pytest
from auth_exchange import exchange

from binlogkit.protocol.auth import (
    Accept,
    Reject,
    Secret,
    client_auth,
    make_credential,
    server_auth,
)

NAME = "mysql_native_password"
SCRAMBLE = bytes(range(1, 21))


def sha1(data: bytes) -> bytes:
    return hashlib.sha1(data).digest()


@pytest.mark.parametrize(
    ("password", "stored"),
    [
        # MySQL/MariaDB: SELECT PASSWORD('password'), PASSWORD('secret')
        ("password", "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19"),
        ("secret", "*14E65567ABDB5135D0CFD9A70B3032C179A49EE7"),
    ],
)
def test_credential_is_the_password_column(password: str, stored: str) -> None:
    assert "*" + make_credential(NAME, password).hex().upper() == stored


def test_response_follows_the_definition() -> None:
    password = b"pa55 word"
    stage1 = sha1(password)
    stage2 = sha1(stage1)
    expected = bytes(a ^ b for a, b in zip(stage1, sha1(SCRAMBLE + stage2), strict=True))
    client = client_auth(NAME)(Secret(password))
    assert client.start(SCRAMBLE) == expected
    # the scramble arrives with its terminating NUL in an auth switch request
    assert client_auth(NAME)(Secret(password)).start(SCRAMBLE + b"\x00") == expected
    assert client_auth(NAME)(Secret()).start(SCRAMBLE) == b""


def test_server_scramble_on_the_wire() -> None:
    server = server_auth(NAME)(make_credential(NAME, "x"))
    data = server.scramble()
    assert len(data) == 21 and data[-1] == 0 and 0 not in data[:-1]
    given = server_auth(NAME)(make_credential(NAME, "x"), scramble=SCRAMBLE)
    assert given.scramble() == SCRAMBLE + b"\x00"


def test_server_verifies_the_handshake_scramble() -> None:
    credential = make_credential(NAME, "pw")
    response = client_auth(NAME)(Secret("pw")).start(SCRAMBLE)
    assert server_auth(NAME)(credential, scramble=SCRAMBLE).receive(response) == Accept()
    other = bytes(range(2, 22))
    assert isinstance(server_auth(NAME)(credential, scramble=other).receive(response), Reject)


@pytest.mark.parametrize("response", [b"", b"\x01" * 19, b"\x01" * 21])
def test_server_rejects_malformed(response: bytes) -> None:
    server = server_auth(NAME)(make_credential(NAME, "pw"))
    assert isinstance(server.receive(response), Reject)


def test_round_trip() -> None:
    credential = make_credential(NAME, "pw")
    assert exchange(client_auth(NAME)(Secret("pw")), server_auth(NAME)(credential)) == Accept()
