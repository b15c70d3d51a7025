"""What sha256_password and caching_sha2_password share: the password sent
RSA-encrypted (OAEP with SHA-1) after an XOR with the scramble, and the stored
double SHA-256."""

from __future__ import annotations

import hashlib

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from binlogkit.protocol.auth.base import AuthPluginError, Secret, xor_bytes

OAEP = padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA1()), algorithm=hashes.SHA1(), label=None)
"""MySQL's RSA_PKCS1_OAEP_PADDING: OAEP with SHA-1 and MGF1(SHA-1), no label."""


def double_sha256(password: bytes) -> bytes:
    """``SHA256(SHA256(password))``, empty for an empty password."""
    if not password:
        return b""
    return hashlib.sha256(hashlib.sha256(password).digest()).digest()


def make_credential(password: Secret) -> bytes:
    """The stored credential of both SHA-256 plugins: ``SHA256(SHA256(pw))``."""
    return double_sha256(password.reveal())


def encrypt_password(password: bytes, scramble: bytes, public_key_pem: bytes) -> bytes:
    """RSA-OAEP of ``(password + NUL) XOR scramble`` with the server's public key."""
    try:
        key = serialization.load_pem_public_key(public_key_pem)
    except ValueError:
        raise AuthPluginError("the server's RSA public key is not a valid PEM key") from None
    if not isinstance(key, rsa.RSAPublicKey):
        raise AuthPluginError("the server's public key is not an RSA key")
    try:
        return key.encrypt(xor_bytes(password + b"\x00", scramble), OAEP)
    except ValueError:
        raise AuthPluginError(
            "the password is too long to encrypt with the server's RSA key",
            hint="connect with TLS, which sends the password without RSA",
        ) from None


def decrypt_password(ciphertext: bytes, scramble: bytes, private_key_pem: bytes) -> bytes | None:
    """The password inside ``ciphertext`` (NUL and scramble removed); ``None`` if it
    does not decrypt."""
    key = _private_key(private_key_pem)
    if len(ciphertext) != key.key_size // 8:
        return None
    try:
        plain = xor_bytes(key.decrypt(ciphertext, OAEP), scramble)
    except ValueError:
        return None
    return plain.split(b"\x00", 1)[0]


def public_key_pem(private_key_pem: bytes) -> bytes:
    """The PEM public key (SubjectPublicKeyInfo) that goes with ``private_key_pem``."""
    return (
        _private_key(private_key_pem)
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )


def _private_key(private_key_pem: bytes) -> rsa.RSAPrivateKey:
    try:
        key = serialization.load_pem_private_key(private_key_pem, password=None)
    except (ValueError, TypeError):
        raise AuthPluginError(
            "the server's RSA private key is not an unencrypted PEM key"
        ) from None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise AuthPluginError("the server's private key is not an RSA key")
    return key
