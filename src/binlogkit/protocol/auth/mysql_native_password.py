"""mysql_native_password: SHA-1 challenge and response.

The client sends ``SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw)))``; the server,
which stores ``SHA1(SHA1(pw))``, takes the XOR back off and checks that the
SHA-1 of what remains is the stored value. An empty password is an empty
response.
"""

from __future__ import annotations

import hashlib
import hmac

from binlogkit.protocol.auth.base import (
    Accept,
    AuthStep,
    ClientAuth,
    Reject,
    Secret,
    ServerAuth,
    register_client,
    register_server,
    strip_scramble,
    xor_bytes,
)

NAME = "mysql_native_password"


def _sha1(data: bytes) -> bytes:
    return hashlib.sha1(data).digest()


def scramble_response(password: bytes, scramble: bytes) -> bytes:
    """The auth response for ``password`` and the 20-byte ``scramble``."""
    if not password:
        return b""
    stage1 = _sha1(password)
    return xor_bytes(stage1, _sha1(scramble + _sha1(stage1)))


@register_client
class NativePasswordClient(ClientAuth):
    """Client side of mysql_native_password."""

    name = NAME

    def start(self, scramble: bytes) -> bytes:
        return scramble_response(self.password.reveal(), strip_scramble(scramble))


@register_server
class NativePasswordServer(ServerAuth):
    """Server side of mysql_native_password; the credential is ``SHA1(SHA1(pw))``
    (the 20 bytes behind the ``*HEX`` string of ``mysql.user``)."""

    name = NAME

    @classmethod
    def make_credential(cls, password: Secret) -> bytes:
        raw = password.reveal()
        return _sha1(_sha1(raw)) if raw else b""

    def scramble(self) -> bytes:
        return self._scramble + b"\x00"

    def receive(self, response: bytes) -> AuthStep:
        if not self.credential:
            return Accept() if not response else Reject("password given, account has none")
        if len(response) != len(self.credential):
            return Reject("no password given" if not response else "malformed response")
        stage1 = xor_bytes(response, _sha1(self._scramble + self.credential))
        if hmac.compare_digest(_sha1(stage1), self.credential):
            return Accept()
        return Reject("wrong password")
