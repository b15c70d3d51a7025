"""caching_sha2_password (MySQL 8 default).

1. The client answers the scramble with
   ``SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + scramble)`` (32 bytes; empty
   for no password).
2. A server that has ``SHA256(SHA256(pw))`` in its cache checks it and answers
   AuthMoreData ``0x03`` (fast auth success), then OK. Otherwise it answers
   ``0x04`` (perform full authentication).
3. Full authentication: on a secure channel (TLS, unix socket) the client sends
   the password and a NUL in clear; otherwise it sends the RSA-OAEP(SHA-1)
   encryption of ``(pw + NUL) XOR scramble`` with the server's public key,
   asking for the key first (a single ``0x02``) when none was configured.
"""

from __future__ import annotations

import enum
import hashlib
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
    xor_bytes,
)

NAME = "caching_sha2_password"
REQUEST_PUBLIC_KEY = b"\x02"
FAST_AUTH_SUCCESS = b"\x03"
PERFORM_FULL_AUTHENTICATION = b"\x04"


def _sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def scramble_response(password: bytes, scramble: bytes) -> bytes:
    """The fast-auth response for ``password`` and the 20-byte ``scramble``."""
    if not password:
        return b""
    stage1 = _sha256(password)
    return xor_bytes(stage1, _sha256(_sha256(stage1) + scramble))


class _ClientState(enum.Enum):
    SENT_SCRAMBLE = enum.auto()
    AWAIT_PUBLIC_KEY = enum.auto()
    SENT_PASSWORD = enum.auto()


@register_client
class CachingSha2Client(ClientAuth):
    """Client side of caching_sha2_password."""

    name = NAME

    _scramble = b""
    _state = _ClientState.SENT_SCRAMBLE

    def start(self, scramble: bytes) -> bytes:
        self._scramble = strip_scramble(scramble)
        self._state = _ClientState.SENT_SCRAMBLE
        return scramble_response(self.password.reveal(), self._scramble)

    def more(self, data: bytes) -> bytes | None:
        if self._state is _ClientState.AWAIT_PUBLIC_KEY:
            self._state = _ClientState.SENT_PASSWORD
            return _rsa.encrypt_password(self.password.reveal(), self._scramble, data)
        if self._state is _ClientState.SENT_SCRAMBLE and data == FAST_AUTH_SUCCESS:
            self._state = _ClientState.SENT_PASSWORD
            return None
        if self._state is _ClientState.SENT_SCRAMBLE and data == PERFORM_FULL_AUTHENTICATION:
            return self._full_authentication()
        raise AuthPluginError(f"{self.name}: unexpected data from the server ({len(data)} bytes)")

    def _full_authentication(self) -> bytes:
        password = self.password.reveal()
        if self.secure:
            self._state = _ClientState.SENT_PASSWORD
            return password + b"\x00"
        if self.server_public_key is not None:
            self._state = _ClientState.SENT_PASSWORD
            return _rsa.encrypt_password(password, self._scramble, self.server_public_key)
        if self.allow_public_key_request:
            self._state = _ClientState.AWAIT_PUBLIC_KEY
            return REQUEST_PUBLIC_KEY
        raise AuthPluginError(
            f"{self.name}: the server needs the password, and the channel is not secure",
            hint="use TLS, give the server's RSA public key, or allow requesting it",
        )


class _ServerState(enum.Enum):
    FIRST = enum.auto()
    FULL = enum.auto()
    AFTER_PUBLIC_KEY = enum.auto()
    DONE = enum.auto()


@register_server
class CachingSha2Server(ServerAuth):
    """Server side of caching_sha2_password.

    The credential is ``SHA256(SHA256(pw))``, what MySQL keeps in its cache.
    ``cached=False`` makes the verifier behave as MySQL does for an account not
    yet in its cache: always full authentication.
    """

    name = NAME

    def __init__(
        self,
        credential: bytes,
        *,
        scramble: bytes | None = None,
        secure: bool = False,
        private_key: bytes | None = None,
        cached: bool = True,
    ) -> None:
        super().__init__(credential, scramble=scramble, secure=secure, private_key=private_key)
        self.cached = cached
        self._state = _ServerState.FIRST

    @classmethod
    def make_credential(cls, password: Secret) -> bytes:
        return _rsa.make_credential(password)

    def scramble(self) -> bytes:
        return self._scramble + b"\x00"

    def receive(self, response: bytes) -> AuthStep:
        state, self._state = self._state, _ServerState.DONE
        if state is _ServerState.FIRST:
            return self._first(response)
        if state is _ServerState.FULL:
            return self._full(response)
        if state is _ServerState.AFTER_PUBLIC_KEY:
            return self._check_encrypted(response)
        return Reject("authentication already finished")

    def _first(self, response: bytes) -> AuthStep:
        if response in (b"", b"\x00"):
            return Accept() if not self.credential else Reject("no password given")
        if len(response) != 32:
            return Reject("malformed scramble response")
        if self.cached and self.credential:
            stage1 = xor_bytes(response, _sha256(self.credential + self._scramble))
            if hmac.compare_digest(_sha256(stage1), self.credential):
                return Accept(FAST_AUTH_SUCCESS)
        self._state = _ServerState.FULL
        return SendMore(PERFORM_FULL_AUTHENTICATION)

    def _full(self, response: bytes) -> AuthStep:
        if self.secure:
            return self._check(response.split(b"\x00", 1)[0])
        if self.private_key is None:
            return Reject("full authentication needs TLS or an RSA key, the server has neither")
        if response == REQUEST_PUBLIC_KEY:
            self._state = _ServerState.AFTER_PUBLIC_KEY
            return SendMore(_rsa.public_key_pem(self.private_key))
        return self._check_encrypted(response)

    def _check_encrypted(self, response: bytes) -> AuthStep:
        if self.private_key is None:
            return Reject("no RSA key to decrypt the password")
        password = _rsa.decrypt_password(response, self._scramble, self.private_key)
        if password is None:
            return Reject("the encrypted password does not decrypt")
        return self._check(password)

    def _check(self, password: bytes) -> AuthStep:
        if password and hmac.compare_digest(_rsa.double_sha256(password), self.credential):
            return Accept()
        return Reject("wrong password")
