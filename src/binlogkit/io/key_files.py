"""Key files that decrypt binlogs: MariaDB's ``file_key_management``, MySQL's ``keyring_file``.

MariaDB (``plugin/file_key_management/parser.cc``): text lines ``ID;HEXKEY``
(a 16, 24 or 32-byte AES key; ``#`` starts a comment), optionally encrypted
as a whole the way ``openssl enc -aes-256-cbc -md sha1 -k SECRET`` does it
(``Salted__``, an 8-byte salt, then AES-256-CBC with key and IV from
EVP_BytesToKey over SHA-1): the server's ``file_key_management_filekey``,
given as the secret itself or as ``FILE:path`` of a file holding it. Each key
has version 1.

MySQL (``plugin/keyring/common``): ``Keyring file version:2.0`` (or ``1.0``),
then one record per key -- five little-endian 8-byte lengths (the record, the
key id, the key type, the user id, the key), those fields, the key XORed with
a fixed mask, the record padded to 8 bytes in version 2.0 -- and ``EOF`` and
a 32-byte digest at the end.
"""

from __future__ import annotations

import hashlib
import os
import re
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import BinlogError

if TYPE_CHECKING:
    from binlogkit.io.streams.file import FileOutputStream
    from binlogkit.io.streams.mariadb_encryption import MariaDBEncryptingStream

__all__ = ["BinlogEncryption", "EncryptionStart", "KeyFile", "read_key_file"]

_OPENSSL_PREFIX = b"Salted__"
_KEYRING_PREFIX = b"Keyring file version:"
_KEYRING_END = b"EOF"
_KEYRING_DIGEST = 32
_KEYRING_LENGTHS = struct.Struct("<5Q")
_KEYRING_MASK = b"*305=Ljt0*!@$Hnm(*-9-w;:"
_KEY_LINE = re.compile(rb"[ \t\r\f\v]*(?:#.*)?")
_MAX_SECRET = 256


@frozen_dataclass
class KeyFile:
    """The keys of one key file: ``kind`` says whose format it is; ``keys`` maps each key's id
    (an int for MariaDB, a string for a MySQL keyring) to its bytes."""

    path: str
    kind: Literal["file_key_management", "keyring_file"]
    keys: dict[int | str, bytes]

    def key(
        self, key_id: int | str, *, file: str | None = None, offset: int | None = None
    ) -> bytes:
        """The key ``key_id``, or an error naming this key file and where the binlog needs it."""
        found = self.keys.get(key_id)
        if found is None:
            raise BinlogError(
                f"key id {key_id!r} is not in the key file {self.path}",
                file=file,
                offset=offset,
                hint="give the key file the server that wrote this binlog used",
            )
        return found


@frozen_dataclass
class EncryptionStart:
    """What an encrypted MariaDB binlog says of its encryption, read through the decrypting
    stage: START_ENCRYPTION's offset, key version and nonce, where the encrypted events
    begin, and the cipher that decrypts them (None while none was read)."""

    starts_at: int
    key_version: int
    nonce: bytes
    encrypted_from: int
    algorithm: Literal["cbc", "ctr"] | None


@frozen_dataclass
class BinlogEncryption:
    """How binlogs being written are encrypted, as MariaDB's ``encrypt_binlog`` does: with
    ``key`` (the binlog key, id 1, at ``key_version``) in the key plugin's cipher
    ``algorithm`` (``file_key_management_encryption_algorithm``: AES_CBC or AES_CTR).
    ``key_file`` names where the key came from, in errors."""

    key: bytes
    algorithm: Literal["cbc", "ctr"] = "cbc"
    key_version: int = 1
    key_file: str = "<binlog key>"

    @classmethod
    def from_key_file(
        cls,
        path: str | os.PathLike[str],
        *,
        filekey: str | None = None,
        algorithm: Literal["cbc", "ctr"] = "cbc",
    ) -> BinlogEncryption:
        """The binlog key of a ``file_key_management`` key file."""
        keys = read_key_file(path, filekey)
        if keys.kind != "file_key_management":
            raise BinlogError(
                "MariaDB binlogs are encrypted with a file_key_management key file", file=keys.path
            )
        return cls(keys.key(1), algorithm, key_file=keys.path)

    def keys(self) -> KeyFile:
        """The binlog key as a key file, to read what is encrypted with it."""
        return KeyFile(self.key_file, "file_key_management", {1: self.key})

    def stage(
        self, inner: FileOutputStream, continuing: EncryptionStart | None = None
    ) -> MariaDBEncryptingStream:
        """The encrypting stage over ``inner`` (cryptography is imported here): a new file's,
        or with ``continuing`` the one that goes on encrypting the file ``inner`` appends to
        (its nonce and key version; its cipher, or ``algorithm`` when it has no encrypted
        event yet)."""
        from binlogkit.io.streams.mariadb_encryption import MariaDBEncryptingStream

        if continuing is None:
            return MariaDBEncryptingStream(
                inner, self.key, key_version=self.key_version, algorithm=self.algorithm
            )
        return MariaDBEncryptingStream(
            inner,
            self.key,
            key_version=continuing.key_version,
            nonce=continuing.nonce,
            algorithm=continuing.algorithm or self.algorithm,
            encrypting_from=continuing.encrypted_from,
        )


def read_key_file(path: str | os.PathLike[str], filekey: str | None = None) -> KeyFile:
    """Read a ``file_key_management`` key file (decrypted with ``filekey`` when it is
    encrypted) or a ``keyring_file`` keyring, whichever ``path`` holds."""
    name = os.fspath(path)
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise BinlogError(f"cannot read the key file: {err.strerror}", file=name) from err
    if data.startswith(_KEYRING_PREFIX):
        return KeyFile(name, "keyring_file", _keyring_keys(data, name))
    if data.startswith(_OPENSSL_PREFIX):
        if not filekey:
            raise BinlogError(
                "the key file is encrypted",
                file=name,
                hint="give its secret (the server's file_key_management_filekey)",
            )
        data = _decrypt_key_file(data, _secret(filekey), name)
    elif filekey:
        raise BinlogError("a file key was given but the key file is not encrypted", file=name)
    return KeyFile(name, "file_key_management", _key_lines(data, name))


def _key_lines(text: bytes, name: str) -> dict[int | str, bytes]:
    keys: dict[int | str, bytes] = {}
    for number, line in enumerate(text.split(b"\n"), 1):
        if _KEY_LINE.fullmatch(line):
            continue
        found = re.match(rb"\s*(\d+);([0-9A-Fa-f]*)", line)
        key = (
            bytes.fromhex(found.group(2).decode())
            if found and len(found.group(2)) % 2 == 0
            else b""
        )
        if found is None or int(found.group(1)) < 1 or len(key) not in (16, 24, 32):
            raise BinlogError(
                f"line {number} is not ID;HEXKEY with a 16, 24 or 32-byte key",
                file=name,
                hint="a file_key_management key file has lines like 1;a7addd9a...",
            )
        keys[int(found.group(1))] = key
    return keys


def _secret(filekey: str) -> bytes:
    """The secret ``filekey`` names: itself, or the first line of the file ``FILE:path``."""
    if not filekey.startswith("FILE:"):
        return filekey.encode()
    path = filekey[len("FILE:") :]
    try:
        secret = Path(path).read_bytes().rstrip(b"\r\n")
    except OSError as err:
        raise BinlogError(f"cannot read the file key: {err.strerror}", file=path) from err
    if len(secret) > _MAX_SECRET:
        raise BinlogError(f"the file key is longer than {_MAX_SECRET} bytes", file=path)
    return secret


def _decrypt_key_file(data: bytes, secret: bytes, name: str) -> bytes:
    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    salt = data[8:16]
    derived = b""
    block = b""
    while len(derived) < 48:  # EVP_BytesToKey(SHA-1, one round): 32 key + 16 IV bytes
        block = hashlib.sha1(block + secret + salt).digest()
        derived += block
    decryptor = Cipher(algorithms.AES(derived[:32]), modes.CBC(derived[32:48])).decryptor()
    unpadder = padding.PKCS7(128).unpadder()
    try:
        padded = decryptor.update(data[16:]) + decryptor.finalize()
        return unpadder.update(padded) + unpadder.finalize()
    except ValueError as err:
        raise BinlogError(
            "cannot decrypt the key file: wrong file key?", file=name, hint=str(err)
        ) from err


def _keyring_keys(data: bytes, name: str) -> dict[int | str, bytes]:
    version = data[len(_KEYRING_PREFIX) : len(_KEYRING_PREFIX) + 3]
    if version not in (b"1.0", b"2.0"):
        raise BinlogError(f"keyring file version {version!r}: only 1.0 and 2.0 are read", file=name)
    at = len(_KEYRING_PREFIX) + 3
    end = len(data) - len(_KEYRING_END) - _KEYRING_DIGEST
    if end < at or data[end : end + len(_KEYRING_END)] != _KEYRING_END:
        raise BinlogError("the keyring file does not end with EOF and its digest", file=name)
    keys: dict[int | str, bytes] = {}
    while at < end:
        if at + _KEYRING_LENGTHS.size > end:
            raise BinlogError("a key record is cut short", file=name, offset=at)
        size, id_len, type_len, user_len, key_len = _KEYRING_LENGTHS.unpack_from(data, at)
        fields = at + _KEYRING_LENGTHS.size
        if size < _KEYRING_LENGTHS.size + id_len + type_len + user_len + key_len or at + size > end:
            raise BinlogError(f"a key record of {size} bytes does not fit", file=name, offset=at)
        key_id = data[fields : fields + id_len].decode("utf-8", "replace")
        start = fields + id_len + type_len + user_len
        mask = _KEYRING_MASK * (key_len // len(_KEYRING_MASK) + 1)
        keys[key_id] = bytes(
            a ^ b for a, b in zip(data[start : start + key_len], mask, strict=False)
        )
        at += size
    return keys
