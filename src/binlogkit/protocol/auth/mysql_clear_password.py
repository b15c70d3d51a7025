"""mysql_clear_password: the password in clear with a NUL, for servers that
check it against an outside source (PAM, LDAP). Only on a secure channel."""

from __future__ import annotations

import hmac

from binlogkit.protocol.auth import _rsa
from binlogkit.protocol.auth.base import (
    Accept,
    AuthStep,
    ClientAuth,
    Reject,
    Secret,
    ServerAuth,
    register_client,
    register_server,
)

NAME = "mysql_clear_password"


@register_client
class ClearPasswordClient(ClientAuth):
    """Client side of mysql_clear_password; refuses to be made on an insecure channel."""

    name = NAME
    secure_only = True

    def start(self, scramble: bytes) -> bytes:
        return self.password.reveal() + b"\x00"


@register_server
class ClearPasswordServer(ServerAuth):
    """Server side of mysql_clear_password; the credential is ``SHA256(SHA256(pw))``
    so the server never keeps the password. Refuses on an insecure channel."""

    name = NAME

    @classmethod
    def make_credential(cls, password: Secret) -> bytes:
        return _rsa.make_credential(password)

    def receive(self, response: bytes) -> AuthStep:
        if not self.secure:
            return Reject("mysql_clear_password refused on an insecure channel")
        password = response.split(b"\x00", 1)[0]
        if hmac.compare_digest(_rsa.double_sha256(password), self.credential):
            return Accept()
        return Reject("wrong password")
