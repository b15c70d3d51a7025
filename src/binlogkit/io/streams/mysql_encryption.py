"""MySQL 8.0 binlog encryption (``binlog_encryption``, 8.0.14+) as a decrypting stage.

The format (MySQL ``sql/rpl_log_encryption.cc``, ``mysys/stream_cipher.cc``):
a 512-byte header -- the magic ``\\xfdbin``, version 1, then fields as type
bytes: 1 the keyring key id (a length byte and the id), 2 the 32-byte file
password encrypted with that key (AES-256-CBC, no padding), 3 the 16-byte IV
of that encryption, 0 the end -- then the binlog itself encrypted with
AES-256-CTR. The file key and IV come from the password by EVP_BytesToKey
over SHA-512 without salt (the first 32 bytes of SHA-512(password) and the
next 16); the counter block is the IV's first 8 bytes followed by the block
number (big-endian) of the offset in the plain binlog, which starts after the
header. Positions in the binlog are offsets in that plain stream.
"""

from __future__ import annotations

import hashlib

from cryptography.hazmat.primitives.ciphers import Cipher, CipherContext, algorithms, modes

from binlogkit.binlog.constants import MAGIC
from binlogkit.errors import EncryptedBinlogError
from binlogkit.io.key_files import KeyFile
from binlogkit.io.streams.decrypting_stage import DecryptingStage

__all__ = ["HEADER_SIZE", "MYSQL_ENCRYPTED_MAGIC", "MySQLDecryptingStream"]

MYSQL_ENCRYPTED_MAGIC = b"\xfdbin"
HEADER_SIZE = 512
_KEY_ID, _PASSWORD, _IV = 1, 2, 3
_PASSWORD_SIZE = 32
_IV_SIZE = 16
_BLOCK = 16


class MySQLDecryptingStream(DecryptingStage):
    """Reads a MySQL encrypted binlog and gives the plain binlog; ``keys`` is the server's
    ``keyring_file``. An input that grows (``follow``) needs nothing more: the cipher
    is a stream, a partial event decrypts as far as it goes."""

    def _begin(self, head: bytes) -> None:
        header = bytearray(head)
        while len(header) < HEADER_SIZE and (chunk := self._inner.read(HEADER_SIZE - len(header))):
            header += chunk
        self.key_id, password = self._file_password(bytes(header), self.keys)
        derived = hashlib.sha512(password).digest()
        self._aes = algorithms.AES(derived[:32])
        self._iv_head = derived[32:40]
        self._position = 0
        self._decryptor = self._decryptor_at(0)
        self._unread = b""
        self._check_magic()

    def _error(self, what: str, offset: int = 0) -> EncryptedBinlogError:
        return EncryptedBinlogError(
            f"MySQL encrypted binlog: {what}", file=self.name, offset=offset
        )

    def _file_password(self, header: bytes, keys: KeyFile) -> tuple[str, bytes]:
        if len(header) < HEADER_SIZE:
            raise self._error(f"the {HEADER_SIZE}-byte encryption header is incomplete")
        if header[:4] != MYSQL_ENCRYPTED_MAGIC:
            raise self._error(f"starts with {header[:4].hex()}, not fd62696e")
        if header[4] != 1:
            raise self._error(f"encryption header version {header[4]}: only version 1 is known")
        fields: dict[int, bytes] = {}
        at = 5
        while at < HEADER_SIZE and (kind := header[at]) != 0:
            if kind == _KEY_ID:
                length = header[at + 1]
                fields[kind] = header[at + 2 : at + 2 + length]
                at += 2 + length
            elif kind in (_PASSWORD, _IV):
                length = _PASSWORD_SIZE if kind == _PASSWORD else _IV_SIZE
                fields[kind] = header[at + 1 : at + 1 + length]
                at += 1 + length
            else:
                raise self._error(f"unknown encryption header field type {kind}", at)
            if at > HEADER_SIZE:
                raise self._error("the encryption header is corrupted", at)
        for kind, what in ((_KEY_ID, "key id"), (_PASSWORD, "encrypted password"), (_IV, "IV")):
            if kind not in fields:
                raise self._error(f"the encryption header has no {what}")
        key_id = fields[_KEY_ID].decode("utf-8", "replace")
        if keys.kind != "keyring_file":
            raise self._error(
                f"needs the server's keyring_file keyring, {keys.path} is a MariaDB key file"
            )
        key = keys.key(key_id, file=self.name, offset=0)
        if len(key) != 32:
            raise self._error(f"key {key_id!r} in {keys.path} has {len(key)} bytes, not 32")
        decryptor = Cipher(algorithms.AES(key), modes.CBC(fields[_IV])).decryptor()
        return key_id, decryptor.update(fields[_PASSWORD]) + decryptor.finalize()

    def _decryptor_at(self, offset: int) -> CipherContext:
        counter = self._iv_head + (offset // _BLOCK).to_bytes(8, "big")
        decryptor = Cipher(self._aes, modes.CTR(counter)).decryptor()
        decryptor.update(bytes(offset % _BLOCK))
        return decryptor

    def _check_magic(self) -> None:
        """The plain binlog must start with the binlog magic; else the key is wrong."""
        head = b""
        while len(head) < len(MAGIC) and (chunk := self.read(len(MAGIC) - len(head))):
            head += chunk
        self._unread = head
        if head != MAGIC:
            raise self._error(
                f"does not decrypt to a binlog with key {self.key_id!r}: the keyring's key "
                "is not the one that encrypted this file"
            )

    def read(self, size: int) -> bytes:
        if self._unread:
            given, self._unread = self._unread[:size], self._unread[size:]
            return given
        data = self._decryptor.update(self._inner.read(size))
        self._position += len(data)
        return data

    def seek(self, offset: int) -> int:
        reached = max(self._inner.seek(HEADER_SIZE + offset) - HEADER_SIZE, 0)
        self._unread = b""
        self._position = reached
        self._decryptor = self._decryptor_at(reached)
        return reached

    def tell(self) -> int:
        return self._position - len(self._unread)
