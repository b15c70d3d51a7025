"""Where the complete events of a binlog file end: what a writer continues after a crash."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from binlogkit.binlog.context import FormatContext
from binlogkit.binlog.framing import EventFramer, Frame
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import EncryptedBinlogError
from binlogkit.io.streams import FileInputStream

if TYPE_CHECKING:
    from binlogkit.io.key_files import BinlogEncryption, EncryptionStart, KeyFile
    from binlogkit.io.streams.mariadb_encryption import MariaDBDecryptingStream

__all__ = ["FileEnd", "plain_input", "scan_to_continue", "scan_to_end"]

_SCAN_CHUNK = 1 << 20


@frozen_dataclass
class FileEnd:
    """The end of the complete events of a file, its first and last event, the format in
    force, and for an encrypted MariaDB binlog what its START_ENCRYPTION says."""

    end: int
    first: Frame | None
    last: Frame | None
    fmt: FormatContext
    encryption: EncryptionStart | None = None


def scan_to_end(
    path: str | os.PathLike[str], *, verify_checksum: bool = True, keys: KeyFile | None = None
) -> FileEnd:
    """Frame every event of the binlog at ``path`` (an encrypted MariaDB binlog decrypted
    with ``keys``); bytes after :attr:`FileEnd.end` are a partial event (a write cut
    short). A damaged event before that raises."""
    framer = EventFramer(
        file=str(path), verify_checksum=verify_checksum, decrypted=keys is not None
    )
    first: Frame | None = None
    last: Frame | None = None
    with plain_input(path, keys) as stream:
        while chunk := stream.read(_SCAN_CHUNK):
            framer.receive_data(chunk)
            while isinstance(frame := framer.next_frame(), Frame):
                first = first or frame
                last = frame
        encryption = None if isinstance(stream, FileInputStream) else stream.encryption_start()
    return FileEnd(framer.offset, first, last, framer.fmt, encryption)


def scan_to_continue(
    path: str | os.PathLike[str],
    encryption: BinlogEncryption | None,
    *,
    verify_checksum: bool = True,
    hint: str,
) -> FileEnd:
    """:func:`scan_to_end` of a binlog about to be continued, decrypted with ``encryption``'s
    binlog key; an encrypted one without it is an error saying so, with ``hint``."""
    keys = None if encryption is None else encryption.keys()
    try:
        return scan_to_end(path, verify_checksum=verify_checksum, keys=keys)
    except EncryptedBinlogError as err:
        if keys is not None:
            raise
        raise EncryptedBinlogError(
            "the binlog is encrypted: continuing it needs its binlog key",
            file=os.fspath(path),
            offset=err.offset,
            hint=hint,
        ) from err


def plain_input(
    path: str | os.PathLike[str], keys: KeyFile | None
) -> FileInputStream | MariaDBDecryptingStream:
    """The binlog ``path`` to read from its start: as it is, or with ``keys`` through the
    MariaDB decrypting stage (cryptography is imported then)."""
    stream = FileInputStream(path)
    if keys is None:
        return stream
    from binlogkit.io.streams.mariadb_encryption import MariaDBDecryptingStream

    return MariaDBDecryptingStream(stream, keys, name=os.fspath(path))
