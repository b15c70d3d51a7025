"""mysql_clear_password: the password and a NUL, on a secure channel only."""

from __future__ import annotations

import pytest

from binlogkit.protocol.auth import (
    Accept,
    AuthPluginError,
    Reject,
    Secret,
    client_auth,
    make_credential,
    server_auth,
)

NAME = "mysql_clear_password"


def test_refused_on_insecure_channel() -> None:
    assert client_auth(NAME).secure_only
    with pytest.raises(AuthPluginError, match="insecure channel") as info:
        client_auth(NAME)(Secret("topsecret"), secure=False)
    assert "TLS" in str(info.value)
    assert "topsecret" not in str(info.value)


def test_secure_sends_password_and_nul() -> None:
    client = client_auth(NAME)(Secret("topsecret"), secure=True)
    assert client.start(b"whatever scramble\x00") == b"topsecret\x00"


def test_server_side() -> None:
    credential = make_credential(NAME, "topsecret")
    assert b"topsecret" not in credential
    assert server_auth(NAME)(credential, secure=True).receive(b"topsecret\x00") == Accept()
    assert isinstance(server_auth(NAME)(credential, secure=True).receive(b"nope\x00"), Reject)
    insecure = server_auth(NAME)(credential, secure=False)
    assert isinstance(insecure.receive(b"topsecret\x00"), Reject)
