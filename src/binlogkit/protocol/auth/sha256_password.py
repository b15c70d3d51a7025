"""sha256_password (MySQL; deprecated there, still spoken).

The client's first and only answer is the password: in clear with a NUL on a
secure channel, otherwise RSA-OAEP(SHA-1) of ``(pw + NUL) XOR scramble`` with
the server's public key, which it first asks for with a single ``0x01`` when
none was configured. No password is a single NUL byte.
"""

from __future__ import annotations

import hmac

from binlogkit.protocol.auth import _rsa
from binlogkit.protocol.auth.base import (
    Accept,
    AuthPluginError,
    AuthStep,
    ClientAuth,
    Reject,
    Secret,
    SendMore,
    ServerAuth,
    register_client,
    register_server,
    strip_scramble,
)

NAME = "sha256_password"
REQUEST_PUBLIC_KEY = b"\x01"


@register_client
class Sha256PasswordClient(ClientAuth):
    """Client side of sha256_password."""

    name = NAME

    _scramble = b""
    _awaiting_key = False

    def start(self, scramble: bytes) -> bytes:
        self._scramble = strip_scramble(scramble)
        password = self.password.reveal()
        if not password:
            return b"\x00"
        if self.secure:
            return password + b"\x00"
        if self.server_public_key is not None:
            return _rsa.encrypt_password(password, self._scramble, self.server_public_key)
        if self.allow_public_key_request:
            self._awaiting_key = True
            return REQUEST_PUBLIC_KEY
        raise AuthPluginError(
            f"{self.name}: the channel is not secure and no RSA public key of the server is known",
            hint="use TLS, give the server's RSA public key, or allow requesting it",
        )

    def more(self, data: bytes) -> bytes | None:
        if not self._awaiting_key:
            return super().more(data)
        self._awaiting_key = False
        return _rsa.encrypt_password(self.password.reveal(), self._scramble, data)


@register_server
class Sha256PasswordServer(ServerAuth):
    """Server side of sha256_password; the credential is ``SHA256(SHA256(pw))``."""

    name = NAME

    _sent_key = False

    @classmethod
    def make_credential(cls, password: Secret) -> bytes:
        return _rsa.make_credential(password)

    def scramble(self) -> bytes:
        return self._scramble + b"\x00"

    def receive(self, response: bytes) -> AuthStep:
        if response in (b"", b"\x00"):
            return Accept() if not self.credential else Reject("no password given")
        if self.secure and not self._sent_key:
            return self._check(response.split(b"\x00", 1)[0])
        if self.private_key is None:
            return Reject("sha256_password needs TLS or an RSA key, the server has neither")
        if response == REQUEST_PUBLIC_KEY and not self._sent_key:
            self._sent_key = True
            return SendMore(_rsa.public_key_pem(self.private_key))
        password = _rsa.decrypt_password(response, self._scramble, self.private_key)
        if password is None:
            return Reject("the encrypted password does not decrypt")
        return self._check(password)

    def _check(self, password: bytes) -> AuthStep:
        if password and hmac.compare_digest(_rsa.double_sha256(password), self.credential):
            return Accept()
        return Reject("wrong password")
