"""client_ed25519: MariaDB's ed25519 plugin (server plugin ``ed25519``).

It is Ed25519 with one twist: the 64 bytes that standard Ed25519 derives from a
32-byte seed are here the SHA-512 of the password itself. So

- ``az = SHA512(password)``, clamped; ``a = az[:32]`` is the secret scalar and
  ``A = a·B`` the public key the server stores (base64 without the trailing
  ``=`` in ``mysql.global_priv``);
- to sign the server's 32-byte nonce ``m``: ``r = SHA512(az[32:] + m) mod L``,
  ``R = r·B``, ``k = SHA512(R + A + m) mod L``, ``S = k·a + r mod L``; the
  signature is ``R + S``.

The signature is an ordinary Ed25519 signature, so the server verifies it with
any Ed25519 implementation.
"""

from __future__ import annotations

import base64
import hashlib
import secrets

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from nacl import bindings

from binlogkit.protocol.auth.base import (
    Accept,
    AuthPluginError,
    AuthStep,
    ClientAuth,
    Reject,
    Secret,
    ServerAuth,
    register_client,
    register_server,
)

NAME = "client_ed25519"
NONCE_LENGTH = 32
SIGNATURE_LENGTH = 64


def _secret_scalar(password: bytes) -> tuple[bytes, bytes]:
    """``(a, prefix)``: the clamped secret scalar and the nonce-hash prefix."""
    az = bytearray(hashlib.sha512(password).digest())
    az[0] &= 248
    az[31] &= 63
    az[31] |= 64
    return bytes(az[:32]), bytes(az[32:])


def _reduce(digest: bytes) -> bytes:
    return bindings.crypto_core_ed25519_scalar_reduce(digest)


def public_key(password: bytes) -> bytes:
    """The 32-byte public key MariaDB stores for ``password``."""
    a, _ = _secret_scalar(password)
    return bindings.crypto_scalarmult_ed25519_base_noclamp(a)


def sign(password: bytes, message: bytes) -> bytes:
    """The 64-byte signature of ``message`` with the key made from ``password``."""
    a, prefix = _secret_scalar(password)
    big_a = bindings.crypto_scalarmult_ed25519_base_noclamp(a)
    r = _reduce(hashlib.sha512(prefix + message).digest())
    big_r = bindings.crypto_scalarmult_ed25519_base_noclamp(r)
    k = _reduce(hashlib.sha512(big_r + big_a + message).digest())
    a_mod_l = _reduce(a + bytes(32))
    s = bindings.crypto_core_ed25519_scalar_add(
        bindings.crypto_core_ed25519_scalar_mul(k, a_mod_l), r
    )
    return big_r + s


def auth_string(key: bytes) -> str:
    """The public key as MariaDB shows it: base64 without the padding ``=`` (43 chars)."""
    return base64.b64encode(key).decode().rstrip("=")


def key_from_auth_string(text: str) -> bytes:
    """The 32-byte public key behind MariaDB's 43-character ``authentication_string``."""
    try:
        key = base64.b64decode(text.strip() + "=", validate=True)
    except ValueError:
        key = b""
    if len(key) != 32:
        raise AuthPluginError("an ed25519 authentication string is 43 base64 characters")
    return key


@register_client
class Ed25519Client(ClientAuth):
    """Client side of MariaDB's ed25519: signs each nonce the server sends."""

    name = NAME

    def start(self, scramble: bytes) -> bytes:
        return sign(self.password.reveal(), scramble)

    def more(self, data: bytes) -> bytes | None:
        return sign(self.password.reveal(), data)


@register_server
class Ed25519Server(ServerAuth):
    """Server side of MariaDB's ed25519; the credential is the 32-byte public key."""

    name = NAME

    @classmethod
    def new_scramble(cls) -> bytes:
        return secrets.token_bytes(NONCE_LENGTH)

    @classmethod
    def make_credential(cls, password: Secret) -> bytes:
        return public_key(password.reveal())

    def receive(self, response: bytes) -> AuthStep:
        if len(response) != SIGNATURE_LENGTH:
            return Reject("malformed ed25519 signature")
        try:
            key = Ed25519PublicKey.from_public_bytes(self.credential)
            key.verify(response, self._scramble)
        except (ValueError, InvalidSignature):
            return Reject("wrong password")
        return Accept()
