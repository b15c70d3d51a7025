"""MariaDB's client_ed25519 against MariaDB's own test vectors and standard Ed25519."""

from __future__ import annotations

import os

import pytest
from auth_exchange import exchange
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from binlogkit.protocol.auth import (
    Accept,
    AuthPluginError,
    Reject,
    Secret,
    client_auth,
    make_credential,
    server_auth,
)
from binlogkit.protocol.auth.client_ed25519 import auth_string, key_from_auth_string

NAME = "client_ed25519"


@pytest.mark.parametrize(
    ("password", "stored"),
    [
        # mysql-test/suite/plugins/r/auth_ed25519.result (MariaDB server)
        ("foo", "vubFBzIrapbfHct1/J72dnUryz5VS7lA6XHH8sIx4TI"),
        ("foobar", "qv2mG6HWCuy32Slb5xhV4THStewNz2VINVPbgk+XAJ8"),
        ("foo bar", "Y5fV74JAVRMOK2cdnUsYS+WW9sXaaL/o+6WGKOgqnzc"),
        ("bar", "pfzkeWMzkTefY1oshXS+/kATeN51M+4jxi3/cbyTd10"),
        ("secret", "ZIgUREUg5PVgQ6LskhXmO+eZLS0nC8be6HPjYWR4YJY"),
        ("", "4LH+dBF+G5W2CKTyId8xR3SyDqZoQjUNUVNxx8aWbG4"),
    ],
)
def test_public_key_matches_mariadb(password: str, stored: str) -> None:
    key = make_credential(NAME, password)
    assert auth_string(key) == stored
    assert key_from_auth_string(stored) == key


def test_32_byte_password_is_standard_ed25519() -> None:
    """SHA-512 of a 32-byte password is what standard Ed25519 does to its seed."""
    seed = bytes(range(32))
    nonce = os.urandom(32)
    standard = Ed25519PrivateKey.from_private_bytes(seed)
    expected_key = standard.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    assert make_credential(NAME, seed) == expected_key
    assert client_auth(NAME)(Secret(seed)).start(nonce) == standard.sign(nonce)


@pytest.mark.parametrize("password", ["secret", "", "x" * 500, "pässwörd"])
def test_signature_verifies_with_any_ed25519(password: str) -> None:
    nonce = os.urandom(32)
    signature = client_auth(NAME)(Secret(password)).start(nonce)
    assert len(signature) == 64
    public = Ed25519PublicKey.from_public_bytes(make_credential(NAME, password))
    public.verify(signature, nonce)  # raises InvalidSignature if wrong


def test_server_side() -> None:
    credential = make_credential(NAME, "secret")
    server = server_auth(NAME)(credential)
    nonce = server.scramble()
    assert len(nonce) == 32
    signature = client_auth(NAME)(Secret("secret")).start(nonce)
    assert server.receive(signature) == Accept()
    tampered = signature[:-1] + bytes([signature[-1] ^ 1])
    assert isinstance(server_auth(NAME)(credential, scramble=nonce).receive(tampered), Reject)
    assert isinstance(server_auth(NAME)(credential).receive(signature[:63]), Reject)
    assert isinstance(server_auth(NAME)(credential).receive(signature), Reject)  # new nonce


def test_more_data_is_a_new_nonce() -> None:
    """A nonce that arrives as AuthMoreData (client started with ed25519) is signed too."""
    credential = make_credential(NAME, "pw")
    client = client_auth(NAME)(Secret("pw"))
    client.start(b"handshake scramble..")
    server = server_auth(NAME)(credential)
    reply = client.more(server.scramble())
    assert reply is not None and server.receive(reply) == Accept()


def test_round_trip() -> None:
    credential = make_credential(NAME, "pw")
    assert exchange(client_auth(NAME)(Secret("pw")), server_auth(NAME)(credential)) == Accept()


@pytest.mark.parametrize("text", ["foo", ">>>1234567890123456789012345678901234567890", ""])
def test_bad_auth_string(text: str) -> None:
    with pytest.raises(AuthPluginError, match="43 base64"):
        key_from_auth_string(text)
