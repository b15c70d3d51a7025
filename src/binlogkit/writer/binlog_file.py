"""One binlog file being written: magic, format description, events at their positions.

While the file is open its format description carries BINLOG_IN_USE, as a
server's active binlog does; the flag is cleared in place when a STOP or a
ROTATE ends the file. A file left without either (a crash, or :meth:`close`)
keeps the flag, and :meth:`BinlogFileWriter.append` continues it: a partial
event at its end is cut off first.
"""

from __future__ import annotations

import logging
import os
import struct
from dataclasses import replace
from typing import TYPE_CHECKING

from binlogkit.binlog.constants import MAGIC, EventFlag, EventType
from binlogkit.binlog.context import DecodeContext, FormatContext
from binlogkit.binlog.decoder import decode_frame, encode_event
from binlogkit.binlog.events import Event, FormatDescriptionEvent
from binlogkit.binlog.events.informational import StartEncryptionEvent
from binlogkit.binlog.framing import event_crc32
from binlogkit.binlog.header import FLAGS_OFFSET, LOG_POS_OFFSET, EventHeader
from binlogkit.errors import BinlogError
from binlogkit.io.binlog_end import scan_to_continue
from binlogkit.io.streams import BinlogCache, FileOutputStream
from binlogkit.writer.positions import ShiftPositions

if TYPE_CHECKING:
    from binlogkit.io.key_files import BinlogEncryption
    from binlogkit.io.streams.mariadb_encryption import MariaDBEncryptingStream

log = logging.getLogger(__name__)

__all__ = ["ENDING_TYPES", "BinlogFileWriter", "encode_at"]

_U32 = struct.Struct("<I")
_FDE_FLAGS_AT = len(MAGIC) + FLAGS_OFFSET
ENDING_TYPES = frozenset({int(EventType.STOP), int(EventType.ROTATE)})
"""The types of the events that end a binlog file."""


class BinlogFileWriter:
    """Writes events into one binlog file; make one with :meth:`create` or :meth:`append`.

    :meth:`write` encodes an event with its position: ``log_pos`` in its header
    is where the event ends in this file, and its CRC32 is summed again when the
    format checksums events. ``sync``: fsync the file at each commit point
    (:meth:`persist`) and when it ends.
    """

    def __init__(
        self,
        stream: FileOutputStream | MariaDBEncryptingStream,
        fde: FormatDescriptionEvent,
        fde_flags: int,
        *,
        sync: bool,
    ) -> None:
        self.stream = stream
        self.path = stream.path
        self.format_description = fde
        self.fmt: FormatContext = fde.context()
        self.sync = sync
        self.ended = False
        """A STOP or ROTATE ended the file: it takes no more events."""
        self._fde_flags = fde_flags & 0xFF

    @classmethod
    def create(
        cls,
        path: str | os.PathLike[str],
        fde: FormatDescriptionEvent,
        *,
        sync: bool = False,
        encryption: BinlogEncryption | None = None,
    ) -> BinlogFileWriter:
        """Start the binlog ``path`` (an existing file is replaced) with ``fde``.

        With ``encryption`` a START_ENCRYPTION event follows ``fde`` and every
        event after it is encrypted, as a MariaDB with ``encrypt_binlog`` writes.
        """
        file = FileOutputStream(path)
        stage = None if encryption is None else encryption.stage(file)
        stream = file if stage is None else stage
        stream.write(MAGIC)
        writer = cls(stream, fde, fde.header.flags, sync=sync)
        writer.write(fde)
        if stage is not None:
            code = EventType.MARIADB_START_ENCRYPTION
            header = EventHeader(fde.header.timestamp, code, fde.header.server_id, 0, 0, 0)
            writer.write(StartEncryptionEvent(header, 1, stage.key_version, stage.nonce))
        writer._mark_in_use(True)
        return writer

    @classmethod
    def append(
        cls,
        path: str | os.PathLike[str],
        *,
        verify_checksum: bool = True,
        sync: bool = False,
        encryption: BinlogEncryption | None = None,
    ) -> BinlogFileWriter:
        """Continue the binlog ``path`` after its last complete event (a partial one is cut off).

        An encrypted MariaDB binlog needs ``encryption`` (its binlog key): the
        events appended are encrypted as its own are, with its START_ENCRYPTION's
        nonce and key version at their offsets, in the cipher its first encrypted
        event was found in (``encryption.algorithm`` when it has none yet). A
        plain file stays plain. Refused for a file a STOP or ROTATE ended: its
        successor is where events go.
        """
        scanned = scan_to_continue(
            path,
            encryption,
            verify_checksum=verify_checksum,
            hint="give encryption=BinlogEncryption.from_key_file(KEY_FILE)",
        )
        first, last = scanned.first, scanned.last
        if first is None or first.header.type_code != EventType.FORMAT_DESCRIPTION:
            raise BinlogError("not a v4 binlog: no format description to continue", file=str(path))
        if last is not None and last.header.type_code in ENDING_TYPES:
            raise BinlogError(
                f"the file ends with a {last.header.type_name} event at {last.header.offset}",
                file=str(path),
                hint="write into the next binlog file",
            )
        fde = decode_frame(first, DecodeContext())
        assert isinstance(fde, FormatDescriptionEvent)
        file = FileOutputStream(path, append=True)
        if file.position > scanned.end:
            log.warning(
                "%s: cutting off a partial event at offset %d (%d bytes)",
                path,
                scanned.end,
                file.position - scanned.end,
            )
            file.truncate(scanned.end)
        stream: FileOutputStream | MariaDBEncryptingStream = file
        if scanned.encryption is not None and encryption is not None:
            stream = encryption.stage(file, scanned.encryption)
        writer = cls(stream, fde, first.raw[FLAGS_OFFSET], sync=sync)
        writer._mark_in_use(True)
        return writer

    @property
    def position(self) -> int:
        """Where the next event starts."""
        return self.stream.position

    def write(self, event: Event) -> EventHeader:
        """Append ``event``; returns its header as written (with its offset and end).

        A STOP or ROTATE event ends the file.
        """
        self._check_open()
        offset = self.stream.position
        raw = encode_at(event, self.fmt, offset)
        self.stream.write(raw)
        header = replace(
            event.header,
            event_size=len(raw),
            log_pos=offset + len(raw),
            offset=offset,
            file=str(self.path),
        )
        if header.type_code in ENDING_TYPES and not header.flags & EventFlag.ARTIFICIAL:
            self._end()
        return header

    def write_cache(self, cache: BinlogCache) -> None:
        """Append the events gathered in ``cache`` (each encoded by :func:`encode_at` for its
        offset in the cache): their positions are moved to where they land."""
        self._check_open()
        shift = ShiftPositions(self.stream, self.stream.position, self.fmt.checksum_length)
        cache.copy_to(shift)
        shift.flush()

    def _check_open(self) -> None:
        if self.ended:
            raise BinlogError("the file already ended with a STOP or ROTATE", file=str(self.path))

    def flush(self) -> None:
        """Hand what was written to the operating system (readers of the file see it)."""
        self.stream.flush()

    def persist(self) -> None:
        """A commit point: :meth:`flush`, and with ``sync`` an fsync (``sync_binlog=1``)."""
        if self.sync:
            self.stream.sync()
        else:
            self.stream.flush()

    def close(self) -> None:
        """Stop writing without ending the file: it stays in use, to be continued by
        :meth:`append` (what a crash leaves, less a partial event)."""
        if self.stream.is_open():
            self.stream.close()

    def _end(self) -> None:
        self._mark_in_use(False)
        if self.sync:
            self.stream.sync()
        self.ended = True
        self.stream.close()

    def _mark_in_use(self, in_use: bool) -> None:
        """Set or clear BINLOG_IN_USE in the file's format description (its CRC32 ignores it)."""
        flag = EventFlag.BINLOG_IN_USE
        flags = self._fde_flags | flag if in_use else self._fde_flags & ~flag
        self.stream.update(_FDE_FLAGS_AT, bytes([flags & 0xFF]))
        self.stream.flush()


def encode_at(event: Event, fmt: FormatContext, offset: int) -> bytearray:
    """``event``'s bytes in format ``fmt`` as they are at ``offset`` of a binlog: ``log_pos``
    is where the event ends there, and the CRC32 (when the format has one) sums that."""
    raw = bytearray(encode_event(event, fmt))
    _U32.pack_into(raw, LOG_POS_OFFSET, offset + len(raw))
    if isinstance(event, FormatDescriptionEvent):
        checksummed = event.checksum_alg is not None  # its own trailer, whatever it announces
    else:
        checksummed = fmt.checksum_length > 0
    if checksummed:
        _U32.pack_into(raw, len(raw) - 4, event_crc32(raw))
    return raw
