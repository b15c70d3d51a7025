"""The decrypting stage a binlog needs, chosen by its first bytes."""

from __future__ import annotations

from binlogkit.io.key_files import KeyFile
from binlogkit.io.streams.base import SeekableInputStream
from binlogkit.io.streams.mariadb_encryption import MariaDBDecryptingStream
from binlogkit.io.streams.mysql_encryption import MYSQL_ENCRYPTED_MAGIC, MySQLDecryptingStream

__all__ = ["decrypting"]


def decrypting(
    stream: SeekableInputStream, keys: KeyFile, *, name: str | None = None, follow: bool = False
) -> SeekableInputStream:
    """``stream`` (read from its start) decrypted with ``keys``: a MySQL encrypted binlog
    (``\\xfdbin``) through :class:`MySQLDecryptingStream`, any other through
    :class:`MariaDBDecryptingStream` (which passes a binlog without START_ENCRYPTION unchanged)."""
    head = b""
    while len(head) < len(MYSQL_ENCRYPTED_MAGIC) and (chunk := stream.read(4 - len(head))):
        head += chunk
    if head == MYSQL_ENCRYPTED_MAGIC:
        return MySQLDecryptingStream(stream, keys, name=name, head=head)
    return MariaDBDecryptingStream(stream, keys, name=name, head=head, follow=follow)
