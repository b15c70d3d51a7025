"""caching_sha2_password and sha256_password (MySQL only): known answers from the
algorithm's definition, RSA with a key the test makes, and whole exchanges."""

from __future__ import annotations

import hashlib

import pytest
from auth_exchange import exchange
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from binlogkit.protocol.auth import (
    Accept,
    AuthPluginError,
    Reject,
    Secret,
    SendMore,
    client_auth,
    make_credential,
    server_auth,
)
from binlogkit.protocol.auth.caching_sha2_password import CachingSha2Server

CACHING = "caching_sha2_password"
SHA256 = "sha256_password"
SCRAMBLE = bytes(range(0x41, 0x55))  # 20 bytes, as in the handshake
PASSWORD = b"my secret pass"


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def xor(data: bytes, pad: bytes) -> bytes:
    return bytes(b ^ pad[i % len(pad)] for i, b in enumerate(data))


def oaep() -> padding.OAEP:
    return padding.OAEP(mgf=padding.MGF1(hashes.SHA1()), algorithm=hashes.SHA1(), label=None)


@pytest.fixture(scope="module")
def key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def private_pem(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )


@pytest.fixture(scope="module")
def public_pem(key: rsa.RSAPrivateKey) -> bytes:
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


# -- caching_sha2_password ---------------------------------------------------------


def test_scramble_response_definition() -> None:
    """XOR(SHA256(pw), SHA256(SHA256(SHA256(pw)) + scramble))."""
    digest1 = sha256(PASSWORD)
    digest2 = sha256(digest1)
    expected = xor(digest1, sha256(digest2 + SCRAMBLE))
    assert client_auth(CACHING)(Secret(PASSWORD)).start(SCRAMBLE) == expected
    assert client_auth(CACHING)(Secret(PASSWORD)).start(SCRAMBLE + b"\x00") == expected
    assert client_auth(CACHING)(Secret()).start(SCRAMBLE) == b""
    assert make_credential(CACHING, PASSWORD) == digest2


def test_fast_auth() -> None:
    credential = make_credential(CACHING, PASSWORD)
    server = CachingSha2Server(credential, scramble=SCRAMBLE)
    assert server.scramble() == SCRAMBLE + b"\x00"
    client = client_auth(CACHING)(Secret(PASSWORD))
    step = server.receive(client.start(server.scramble()))
    assert step == Accept(b"\x03")  # fast_auth_success before the OK
    assert client.more(b"\x03") is None


def test_fast_auth_miss_goes_to_full_auth() -> None:
    """A wrong password in fast auth is not final: MySQL asks for full authentication."""
    credential = make_credential(CACHING, PASSWORD)
    server = CachingSha2Server(credential, scramble=SCRAMBLE, secure=True)
    wrong = client_auth(CACHING)(Secret(b"nope"), secure=True)
    assert server.receive(wrong.start(SCRAMBLE)) == SendMore(b"\x04")
    assert wrong.more(b"\x04") == b"nope\x00"
    assert isinstance(server.receive(b"nope\x00"), Reject)


def test_full_auth_secure_sends_cleartext() -> None:
    credential = make_credential(CACHING, PASSWORD)
    server = CachingSha2Server(credential, scramble=SCRAMBLE, secure=True, cached=False)
    client = client_auth(CACHING)(Secret(PASSWORD), secure=True)
    assert server.receive(client.start(SCRAMBLE)) == SendMore(b"\x04")
    reply = client.more(b"\x04")
    assert reply == PASSWORD + b"\x00"
    assert server.receive(reply) == Accept()


def test_full_auth_requests_public_key(
    key: rsa.RSAPrivateKey, private_pem: bytes, public_pem: bytes
) -> None:
    credential = make_credential(CACHING, PASSWORD)
    server = CachingSha2Server(credential, scramble=SCRAMBLE, private_key=private_pem, cached=False)
    client = client_auth(CACHING)(Secret(PASSWORD))
    assert server.receive(client.start(SCRAMBLE)) == SendMore(b"\x04")
    assert client.more(b"\x04") == b"\x02"  # request_public_key
    step = server.receive(b"\x02")
    assert isinstance(step, SendMore)
    served = serialization.load_pem_public_key(step.data)
    assert isinstance(served, rsa.RSAPublicKey)
    assert served.public_numbers() == key.public_key().public_numbers()
    ciphertext = client.more(step.data)
    assert ciphertext is not None and len(ciphertext) == 256
    # the test's own decryption: OAEP(SHA-1) of (password + NUL) XOR scramble
    assert xor(key.decrypt(ciphertext, oaep()), SCRAMBLE) == PASSWORD + b"\x00"
    assert server.receive(ciphertext) == Accept()


def test_full_auth_with_configured_key(
    key: rsa.RSAPrivateKey, private_pem: bytes, public_pem: bytes
) -> None:
    credential = make_credential(CACHING, PASSWORD)
    server = CachingSha2Server(credential, scramble=SCRAMBLE, private_key=private_pem, cached=False)
    client = client_auth(CACHING)(Secret(PASSWORD), server_public_key=public_pem)
    assert server.receive(client.start(SCRAMBLE)) == SendMore(b"\x04")
    ciphertext = client.more(b"\x04")
    assert ciphertext is not None
    assert xor(key.decrypt(ciphertext, oaep()), SCRAMBLE) == PASSWORD + b"\x00"
    assert server.receive(ciphertext) == Accept()


def test_full_auth_wrong_password_rsa(private_pem: bytes, public_pem: bytes) -> None:
    credential = make_credential(CACHING, PASSWORD)
    server = CachingSha2Server(credential, private_key=private_pem, cached=False)
    client = client_auth(CACHING)(Secret(b"wrong"), server_public_key=public_pem)
    assert isinstance(exchange(client, server), Reject)


def test_full_auth_without_key_or_tls() -> None:
    client = client_auth(CACHING)(Secret(PASSWORD), allow_public_key_request=False)
    client.start(SCRAMBLE)
    with pytest.raises(AuthPluginError, match="not secure") as info:
        client.more(b"\x04")
    assert PASSWORD.decode() not in str(info.value)
    server = CachingSha2Server(make_credential(CACHING, PASSWORD), cached=False)
    assert isinstance(exchange(client_auth(CACHING)(Secret(PASSWORD)), server), Reject)


def test_password_too_long_for_key() -> None:
    small = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    pem = small.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    long_password = b"L0ngPassw0rd" * 8  # 96 bytes + NUL > 128 - 42
    client = client_auth(CACHING)(Secret(long_password), server_public_key=pem)
    client.start(SCRAMBLE)
    with pytest.raises(AuthPluginError, match="too long") as info:
        client.more(b"\x04")
    assert "L0ngPassw0rd" not in str(info.value)


def test_bad_public_key_pem() -> None:
    client = client_auth(CACHING)(Secret(PASSWORD))
    client.start(SCRAMBLE)
    assert client.more(b"\x04") == b"\x02"
    with pytest.raises(AuthPluginError, match="PEM"):
        client.more(b"-----BEGIN NOTHING-----")


# -- sha256_password ---------------------------------------------------------------


def test_sha256_secure_sends_cleartext() -> None:
    client = client_auth(SHA256)(Secret(PASSWORD), secure=True)
    assert client.start(SCRAMBLE + b"\x00") == PASSWORD + b"\x00"
    assert client_auth(SHA256)(Secret(), secure=True).start(SCRAMBLE) == b"\x00"
    server = server_auth(SHA256)(make_credential(SHA256, PASSWORD), secure=True)
    assert server.receive(PASSWORD + b"\x00") == Accept()


def test_sha256_requests_key(key: rsa.RSAPrivateKey, private_pem: bytes) -> None:
    credential = make_credential(SHA256, PASSWORD)
    server = server_auth(SHA256)(credential, scramble=SCRAMBLE, private_key=private_pem)
    client = client_auth(SHA256)(Secret(PASSWORD))
    assert client.start(server.scramble()) == b"\x01"
    step = server.receive(b"\x01")
    assert isinstance(step, SendMore)
    ciphertext = client.more(step.data)
    assert ciphertext is not None
    assert xor(key.decrypt(ciphertext, oaep()), SCRAMBLE) == PASSWORD + b"\x00"
    assert server.receive(ciphertext) == Accept()


def test_sha256_configured_key(
    key: rsa.RSAPrivateKey, private_pem: bytes, public_pem: bytes
) -> None:
    client = client_auth(SHA256)(Secret(PASSWORD), server_public_key=public_pem)
    ciphertext = client.start(SCRAMBLE)
    assert xor(key.decrypt(ciphertext, oaep()), SCRAMBLE) == PASSWORD + b"\x00"
    server = server_auth(SHA256)(
        make_credential(SHA256, PASSWORD), scramble=SCRAMBLE, private_key=private_pem
    )
    assert server.receive(ciphertext) == Accept()
    server = server_auth(SHA256)(
        make_credential(SHA256, b"other"), scramble=SCRAMBLE, private_key=private_pem
    )
    assert isinstance(server.receive(ciphertext), Reject)


def test_sha256_server_without_key_or_tls() -> None:
    server = server_auth(SHA256)(make_credential(SHA256, PASSWORD))
    assert isinstance(server.receive(b"\x01"), Reject)


def test_sha256_no_key_no_request() -> None:
    client = client_auth(SHA256)(Secret(PASSWORD), allow_public_key_request=False)
    with pytest.raises(AuthPluginError, match="not secure"):
        client.start(SCRAMBLE)
