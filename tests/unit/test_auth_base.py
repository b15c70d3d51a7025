"""The auth plugin contract: Secret, registries, credentials, no password leaks."""

from __future__ import annotations

import pickle

import pytest
from auth_exchange import exchange
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from binlogkit.errors import ProtocolError
from binlogkit.protocol.auth import (
    Accept,
    AuthPluginError,
    ClientAuth,
    Reject,
    Secret,
    ServerAuth,
    client_auth,
    client_plugins,
    make_credential,
    server_auth,
    server_plugins,
)

PLUGINS = (
    "caching_sha2_password",
    "client_ed25519",
    "mysql_clear_password",
    "mysql_native_password",
    "sha256_password",
)
PASSWORD = "hunter2-Sécret"


def test_every_plugin_registered_both_sides() -> None:
    assert set(PLUGINS) <= set(client_plugins())
    assert set(PLUGINS) <= set(server_plugins())
    for name in PLUGINS:
        assert issubclass(client_auth(name), ClientAuth)
        assert client_auth(name).name == name
        assert issubclass(server_auth(name), ServerAuth)
        assert server_auth(name).name == name


def test_unknown_plugin_is_a_clear_error() -> None:
    with pytest.raises(AuthPluginError, match=r"'dialog'.*not support") as info:
        client_auth("dialog")
    assert isinstance(info.value, ProtocolError)
    assert "mysql_native_password" in str(info.value)
    with pytest.raises(AuthPluginError, match="'dialog'"):
        server_auth("dialog")


def test_secret_hides_itself() -> None:
    secret = Secret(PASSWORD)
    assert secret.reveal() == PASSWORD.encode()
    assert PASSWORD not in repr(secret)
    assert PASSWORD not in str(secret)
    assert PASSWORD not in f"{secret}"
    assert PASSWORD not in repr([secret])
    assert Secret(PASSWORD) == Secret(PASSWORD.encode())
    assert Secret(PASSWORD) != Secret("other")
    assert hash(Secret(PASSWORD)) == hash(Secret(PASSWORD))
    assert not Secret() and Secret("x")
    assert pickle.loads(pickle.dumps(secret)) == secret


def _private_key() -> bytes:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


@pytest.mark.parametrize(
    ("name", "secure"),
    # mysql_clear_password refuses an insecure channel: see test_auth_clear.py
    [(n, s) for n in PLUGINS for s in (True, False) if s or n != "mysql_clear_password"],
)
def test_exchange_and_no_leak(name: str, secure: bool) -> None:
    """Right password accepted, wrong one rejected; the password is in no repr or message."""
    key = _private_key() if name in ("sha256_password", "caching_sha2_password") else None
    credential = make_credential(name, PASSWORD)
    assert PASSWORD.encode() not in credential

    client = client_auth(name)(Secret(PASSWORD), secure=secure)
    server = server_auth(name)(credential, secure=secure, private_key=key)
    assert isinstance(exchange(client, server), Accept)

    wrong = client_auth(name)(Secret(PASSWORD + "x"), secure=secure)
    server = server_auth(name)(credential, secure=secure, private_key=key)
    step = exchange(wrong, server)
    assert isinstance(step, Reject)

    for text in (repr(client), str(client), repr(server), str(server), repr(step), str(step)):
        assert PASSWORD not in text
        assert "hunter2" not in text
    if name != "client_ed25519":  # signs whatever nonce comes
        with pytest.raises(AuthPluginError) as info:
            client.more(b"\xee" * 7)
        assert "hunter2" not in str(info.value)


@pytest.mark.parametrize("name", PLUGINS)
def test_empty_password(name: str) -> None:
    secure = name == "mysql_clear_password"
    credential = make_credential(name, "")
    server = server_auth(name)(credential, secure=secure)
    assert isinstance(exchange(client_auth(name)(Secret(), secure=secure), server), Accept)
    server = server_auth(name)(credential, secure=secure)
    assert isinstance(exchange(client_auth(name)(Secret("x"), secure=secure), server), Reject)
