"""Relay: a byte-exact copy of a server's binary log files, kept up to date.

:class:`RelayWriter` turns the events of a binlog dump (as the server sends
them) back into the server's files: the same names, each starting with the
magic and the format description as the server wrote it, one event after the
other, and an index file that lists them. Events the server makes up for the
stream (the artificial ROTATE that names the file, heartbeats, the format
description sent again when a dump starts in the middle of a file) are not
written. Checksums are verified and every event's end position is checked
against the file size, so a hole or an overlap stops the copy instead of
corrupting it.

The format description of the file being written carries the BINLOG_IN_USE
flag, as the server's own active file does; it is cleared in place when the
file ends with a ROTATE or STOP event (the server sends it cleared).

A MariaDB server with ``encrypt_binlog`` sends its binlogs decrypted, the
START_ENCRYPTION event after the format description flagged IGNORABLE. Given
the server's binlog key (``encryption``), the copy is encrypted as the
server's file is: START_ENCRYPTION written as the server wrote it (the flag
cleared), every event after it encrypted with the key, the nonce and key
version it carries, at its offset, in ``encryption.algorithm`` (the server's
``file_key_management_encryption_algorithm``). So the copy stays byte-exact,
and positions stay the server's. Without the key such a server's files are
refused: a copy with START_ENCRYPTION and plain events would be no binlog. A
copy of a server that does not encrypt is not encrypted (a START_ENCRYPTION
of our own would move every position).

:class:`BinlogRelay` connects with :class:`~binlogkit.services.replica_stream.ReplicaStream`,
asks for the events after the end of the copy (the last complete event of the
last file; a partial tail left by a crash is cut off first), writes them, and
reconnects with backoff when the connection breaks, until :meth:`BinlogRelay.stop`.
"""

from __future__ import annotations

import logging
import os
import struct
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from binlogkit.binlog.constants import MAGIC, V4_HEADER_LENGTH, EventFlag, EventType
from binlogkit.binlog.events.format_description import fde_checksum_alg
from binlogkit.binlog.events.informational import START_ENCRYPTION_BODY
from binlogkit.binlog.framing import crc32_ok, event_crc32
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.header import FLAGS_OFFSET, LOG_POS_OFFSET, V4_HEADER, EventHeader
from binlogkit.errors import BinlogError, ChecksumError, ConnectionLost, ServerError
from binlogkit.io.binlog_end import scan_to_continue
from binlogkit.io.binlog_index import add_to_index, find_index, read_index
from binlogkit.io.streams import FileInputStream, FileOutputStream
from binlogkit.protocol.replication import DumpFlag
from binlogkit.protocol.spec import ConnectionSpec
from binlogkit.services.replica_stream import Backoff, ReplicaStream, is_retryable, progress

if TYPE_CHECKING:
    from binlogkit.io.key_files import BinlogEncryption, EncryptionStart
    from binlogkit.io.streams.mariadb_encryption import MariaDBEncryptingStream

log = logging.getLogger(__name__)

__all__ = ["RECONNECT", "BinlogRelay", "RelayError", "RelayPosition", "RelayWriter"]

PROGRESS_EVERY = 60.0
"""Seconds between the relay's progress reports."""
RECONNECT = Backoff(initial=0.1, maximum=5.0)
"""The relay's default reconnect timing."""
_FDE_FLAGS_AT = len(MAGIC) + FLAGS_OFFSET
_ROTATE_POSITION = struct.Struct("<Q")
_SKIPPED_TYPES = frozenset({EventType.HEARTBEAT, EventType.HEARTBEAT_V2})
_FDE_SAME = V4_HEADER_LENGTH + 2 + 50
"""The common header, binlog version and server version of a format description."""


class RelayError(BinlogError):
    """The relay cannot continue without damaging its copy (gap, overlap, bad event)."""


@frozen_dataclass
class RelayPosition:
    """Where the copy ends: the server file and the offset of the next event to fetch."""

    file: str
    position: int


class RelayWriter:
    """Writes the events of a binlog dump into copies of the server's files in ``directory``.

    Feed it every event packet body (the event bytes, without the leading OK
    byte) with :meth:`write_event`; it decides what belongs in the files.
    :meth:`recover` reads what an earlier run left and says where to resume.
    ``sync``: fsync each file when it is complete and the index when it changes.
    ``encryption``: the server's binlog key, to copy an encrypting server's files
    encrypted as they are (see the module's notes).
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        verify_checksum: bool = True,
        sync: bool = False,
        encryption: BinlogEncryption | None = None,
    ) -> None:
        self.encryption = encryption
        self.directory = Path(directory)
        self.verify_checksum = verify_checksum
        self.sync = sync
        self.file: str | None = None
        """The file being written (or the last one, once complete)."""
        self.size = 0
        """The size of :attr:`file`: the offset of its next event."""
        self.complete = False
        """:attr:`file` ends with a ROTATE or STOP event: no more events belong in it."""
        self.next_file: RelayPosition | None = None
        """Where the server said the next file starts (from the ROTATE that ended :attr:`file`)."""
        self.events_written = 0
        self._stream: FileOutputStream | MariaDBEncryptingStream | None = None
        self._checksum = False
        self._skip_format = False
        self._encrypted = False
        """The file being written holds START_ENCRYPTION: what follows is encrypted."""

    # -- life cycle ---------------------------------------------------------------

    def __enter__(self) -> RelayWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the file being written (the copy stays resumable)."""
        if self._stream is not None:
            self._stream.close()
            self._stream = None

    @property
    def position(self) -> RelayPosition | None:
        """Where to ask the server to continue, or None before any file was started."""
        if self.file is None:
            return None
        if self.complete and self.next_file is not None:
            return self.next_file
        return RelayPosition(self.file, self.size)

    def files(self) -> list[str]:
        """The names of the copied files, oldest first (from the index file)."""
        index = find_index(self.directory)
        return [] if index is None else read_index(index)

    # -- resuming -------------------------------------------------------------------

    def recover(self) -> RelayPosition | None:
        """Find the end of the copy left in the directory; cut off a partial last event.

        Returns where to resume (None when the directory holds no copy yet).
        Raises :class:`RelayError` when the last file is damaged before its tail.
        """
        self.directory.mkdir(parents=True, exist_ok=True)
        files = self.files()
        if not files:
            return None
        name = files[-1]
        path = self.directory / name
        self.close()
        self.file, self.size, self.complete, self.next_file = name, 0, False, None
        self._checksum = False
        if not path.exists() or path.stat().st_size <= len(MAGIC):
            if path.exists() and path.read_bytes() != MAGIC[: path.stat().st_size]:
                raise RelayError("not a binlog copy", file=str(path), offset=0)
            self._open(path, truncate=True)
            return RelayPosition(name, len(MAGIC))
        scanned = scan_to_continue(
            path,
            self.encryption,
            verify_checksum=self.verify_checksum,
            hint="give --encrypt-key-file (the server's key file)",
        )
        end, last = scanned.end, scanned.last
        self._checksum = scanned.fmt.checksum_length > 0
        if end < path.stat().st_size:
            log.warning(
                "%s: cutting off a partial event at offset %d (%d bytes)",
                path,
                end,
                path.stat().st_size - end,
            )
            with FileOutputStream(path, append=True) as cut:
                cut.truncate(end)
        self.size = end
        if last is not None and last.header.type_code == EventType.ROTATE:
            self.complete = True
            self.next_file = _rotate_target(last.raw, last.checksum_length)
        elif last is not None and last.header.type_code == EventType.STOP:
            self.complete = True
        if not self.complete:
            self._open(path, truncate=False, encrypted=scanned.encryption)
        return self.position

    # -- writing ----------------------------------------------------------------------

    def write_event(self, raw: bytes) -> None:
        """Take one event of the dump stream: write it, or note what it announces."""
        if len(raw) < V4_HEADER_LENGTH:
            raise RelayError(f"event of {len(raw)} bytes is shorter than its header")
        _ts, code, _server_id, size, log_pos, flags = V4_HEADER.unpack_from(raw)
        if size != len(raw):
            raise RelayError(
                f"event header says {size} bytes, the packet holds {len(raw)}",
                file=self.file,
                offset=self.size,
            )
        if code == EventType.ROTATE and (flags & EventFlag.ARTIFICIAL or log_pos == 0):
            self._start_file(raw)
        elif code in _SKIPPED_TYPES or flags & EventFlag.ARTIFICIAL:
            return
        elif code == EventType.FORMAT_DESCRIPTION:
            self._format_description(raw)
        elif code == EventType.MARIADB_START_ENCRYPTION:
            self._start_encryption(raw, flags)
        else:
            self._append(raw, code, log_pos)

    def _start_file(self, raw: bytes) -> None:
        """An artificial ROTATE: the server says which file (and offset) comes next."""
        checksum_length = 4 if len(raw) >= V4_HEADER_LENGTH + 12 and crc32_ok(raw) else 0
        target = _rotate_target(raw, checksum_length)
        name, position = target.file, target.position
        if not name or "/" in name or name in (".", ".."):
            raise RelayError(f"the server names an unusable binlog file {name!r}")
        if name == self.file:
            if position != self.size:
                raise RelayError(
                    f"the server continues at offset {position}, the copy ends at {self.size}",
                    file=self.file,
                    offset=self.size,
                    hint="the copy and the server's file differ; start a new copy",
                )
            self._skip_format = position > len(MAGIC)
            return
        if self.file is not None and name != self.file and not self.complete:
            log.warning("%s ends without a ROTATE or STOP event (server crash?)", self.file)
        self.close()
        path = self.directory / name
        if path.exists() and path.stat().st_size > len(MAGIC):  # (MAGIC alone: a crash left it)
            raise RelayError(
                f"the folder already holds a {name} that the copy does not continue",
                file=str(path),
                hint="relay each server into a folder of its own, or move the old files away",
            )
        if position != len(MAGIC):
            raise RelayError(
                f"the server starts file {name} at offset {position}; a copy starts at offset 4",
                file=name,
                hint="start the relay at the beginning of a file (--start-file)",
            )
        self.file, self.size, self.complete, self.next_file = name, 0, False, None
        self._checksum = False
        self._skip_format = False
        self._open(path, truncate=True)
        add_to_index(self.directory, name, sync=self.sync)

    def _format_description(self, raw: bytes) -> None:
        if self._skip_format:
            self._skip_format = False
            self._check_same_file(raw)
            return
        if self.size > len(MAGIC):
            return
        if self._stream is None:
            raise RelayError("format description before the server named its file")
        alg = fde_checksum_alg(raw, V4_HEADER_LENGTH)
        if alg and self.verify_checksum and not crc32_ok(raw):
            raise ChecksumError("CRC32 mismatch", file=self.file, offset=self.size)
        self._checksum = bool(alg)
        event = bytearray(raw)
        event[FLAGS_OFFSET] |= EventFlag.BINLOG_IN_USE
        self._write(bytes(event))

    def _start_encryption(self, raw: bytes, flags: int) -> None:
        """The server's START_ENCRYPTION: the copy goes on encrypted after it (once per file:
        a dump resumed mid-file sends it again after the format description)."""
        if self._encrypted:
            return
        encryption = self.encryption
        if encryption is None:
            raise RelayError(
                "the server encrypts its binlogs (encrypt_binlog): the copy needs its binlog key",
                file=self.file,
                offset=self.size,
                event_type="START_ENCRYPTION",
                hint="give --encrypt-key-file (the server's file_key_management key file)",
            )
        body = raw[V4_HEADER_LENGTH : V4_HEADER_LENGTH + START_ENCRYPTION_BODY.size]
        _scheme, key_version, nonce = START_ENCRYPTION_BODY.unpack(body)
        if key_version != encryption.key_version:
            raise RelayError(
                f"the server encrypts with version {key_version} of key 1; "
                f"{encryption.key_file} holds version {encryption.key_version}",
                file=self.file,
                offset=self.size,
                event_type="START_ENCRYPTION",
            )
        event = bytearray(raw)  # as the server wrote it: not IGNORABLE, its end position
        event[FLAGS_OFFSET] = flags & ~EventFlag.IGNORABLE & 0xFF
        struct.pack_into("<I", event, LOG_POS_OFFSET, self.size + len(raw))
        if self._checksum:
            event[-4:] = event_crc32(event).to_bytes(4, "little")
        log_pos = struct.unpack_from("<I", raw, LOG_POS_OFFSET)[0]
        self._append(bytes(event), EventType.MARIADB_START_ENCRYPTION, log_pos)
        from binlogkit.io.key_files import EncryptionStart

        start = EncryptionStart(self.size - len(raw), key_version, nonce, self.size, None)
        assert isinstance(self._stream, FileOutputStream)
        self._stream = encryption.stage(self._stream, start)
        self._encrypted = True

    def _check_same_file(self, raw: bytes) -> None:
        """Refuse to continue a copy whose file the server did not write (another server's).

        The server's format description of the file must match the copy's in
        what a resend keeps: its time, server id, binlog and server version.
        """
        assert self._stream is not None
        ours = _read_at(self._stream.path, len(MAGIC), _FDE_SAME)
        if _fde_identity(ours) != _fde_identity(raw):
            raise RelayError(
                "the copy's file was not written by this server (its format description differs)",
                file=self.file,
                offset=len(MAGIC),
                hint="relay each server into a folder of its own, or move the old copy away",
            )

    def _append(self, raw: bytes, code: int, log_pos: int) -> None:
        if self._stream is None or self.size <= len(MAGIC):
            raise RelayError(
                f"event type {code} before the file's format description",
                file=self.file,
                offset=self.size,
            )
        if self._checksum and self.verify_checksum and not crc32_ok(raw):
            raise ChecksumError("CRC32 mismatch", file=self.file, offset=self.size)
        if log_pos and log_pos != self.size + len(raw):
            raise RelayError(
                f"event ends at {log_pos} by its header, at {self.size + len(raw)} in the copy",
                file=self.file,
                offset=self.size,
                hint="events are missing from the stream (or repeated)",
            )
        self._write(raw)
        if code == EventType.ROTATE:
            self.next_file = _rotate_target(raw, 4 if self._checksum else 0)
            self._finish()
        elif code == EventType.STOP:
            self._finish()

    def _write(self, raw: bytes) -> None:
        assert self._stream is not None
        self._stream.write(raw)
        self._stream.flush()  # a reader of the copy sees each event as soon as it is written
        self.size += len(raw)
        self.events_written += 1

    def _finish(self) -> None:
        """The file is complete: clear BINLOG_IN_USE in its format description, close it."""
        assert self._stream is not None
        flags = _read_at(self._stream.path, _FDE_FLAGS_AT, 1)[0]
        self._stream.update(_FDE_FLAGS_AT, bytes([flags & ~EventFlag.BINLOG_IN_USE & 0xFF]))
        if self.sync:
            self._stream.sync()
        self.complete = True
        self.close()

    def _open(
        self, path: Path, *, truncate: bool, encrypted: EncryptionStart | None = None
    ) -> None:
        """Write ``path`` from its start, or go on at its end (encrypted after ``encrypted``'s
        START_ENCRYPTION, with the server's binlog key)."""
        stream = FileOutputStream(path, append=not truncate)
        if truncate:
            stream.write(MAGIC)
            stream.flush()
            self.size = len(MAGIC)
        self._stream = stream
        self._encrypted = encrypted is not None
        if encrypted is not None and self.encryption is not None:
            self._stream = self.encryption.stage(stream, encrypted)


def _fde_identity(raw: bytes) -> tuple[bytes, bytes, bytes]:
    """What a server keeps of a format description when it sends it again mid-file."""
    return raw[0:4], raw[5:9], raw[V4_HEADER_LENGTH:_FDE_SAME]


def _read_at(path: Path, offset: int, size: int) -> bytes:
    """``size`` bytes of the file at ``path`` from ``offset`` (what the copy holds there)."""
    with FileInputStream(path) as stream:
        stream.seek(offset)
        return stream.read(size)


def _rotate_target(raw: bytes, checksum_length: int) -> RelayPosition:
    """The (file, position) a ROTATE event names."""
    header = EventHeader.decode(raw, 0, V4_HEADER_LENGTH)
    body = raw[V4_HEADER_LENGTH : len(raw) - checksum_length]
    if len(body) < _ROTATE_POSITION.size or header.type_code != EventType.ROTATE:
        raise RelayError("malformed ROTATE event")
    position = _ROTATE_POSITION.unpack_from(body)[0]
    return RelayPosition(body[_ROTATE_POSITION.size :].decode("utf-8", "replace"), position)


class BinlogRelay:
    """Keeps ``directory`` a byte-exact copy of the binlogs of the server ``spec`` points to.

    Starts where an earlier run stopped (see :meth:`RelayWriter.recover`), or at
    ``start_file`` (default: the server's oldest binlog) in an empty directory.
    ``blocking=False`` stops at the end of the server's last binlog; otherwise
    the relay follows the server, reconnecting with ``reconnect``'s backoff when
    the connection breaks (a server error that retrying cannot cure is raised), until
    :meth:`stop` is called (from any thread or a signal handler). ``encryption``: the
    server's binlog key, when it encrypts its binlogs (see :class:`RelayWriter`).
    """

    def __init__(
        self,
        spec: ConnectionSpec | str,
        directory: str | os.PathLike[str],
        *,
        server_id: int = 0x6B62_7201,
        start_file: str | None = None,
        blocking: bool = True,
        verify_checksum: bool = True,
        sync: bool = False,
        heartbeat: float = 5.0,
        reconnect: Backoff = RECONNECT,
        encryption: BinlogEncryption | None = None,
    ) -> None:
        self.spec = ConnectionSpec.from_url(spec) if isinstance(spec, str) else spec
        self.writer = RelayWriter(
            directory, verify_checksum=verify_checksum, sync=sync, encryption=encryption
        )
        self.server_id = server_id
        self.start_file = start_file
        self.blocking = blocking
        self.heartbeat = heartbeat
        self.reconnect = reconnect
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._opened = False  # the last _follow got its dump started
        self._stream: ReplicaStream | None = None

    def stop(self) -> None:
        """Ask :meth:`run` to return; wakes it by closing the connection."""
        self._stop.set()
        with self._lock:
            stream = self._stream
        if stream is not None:
            stream.abort()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def run(self) -> RelayPosition | None:
        """Copy until stopped (or, non-blocking, until the server's end); returns the end."""
        try:
            position = self.writer.recover()
            if position is not None:
                log.info("resuming the copy at %s:%d", position.file, position.position)
            failures = 0
            connected = False
            while not self._stop.is_set():
                self._opened = False
                try:
                    if self._follow(position):
                        break
                except (ConnectionLost, OSError, ServerError) as err:
                    if self._stop.is_set():
                        break
                    if self._opened:  # this connection worked: the next failure is the first
                        connected, failures = True, 0
                    failures += 1
                    if not is_retryable(err) or self.reconnect.gives_up(failures, connected):
                        raise
                    delay = self.reconnect.delay(failures)
                    log.warning("relay: %s; reconnecting in %.1f s", err, delay)
                    self._stop.wait(delay)
                else:
                    failures = 0
                position = self.writer.position
            return self.writer.position
        finally:
            self.writer.close()

    def _report(self, raw: bytes) -> None:
        """Say how far the copy is, and how far behind the server (by the event's time)."""
        at = self.writer.position
        where = "" if at is None else f" at {at.file}:{at.position}"
        stamp = int.from_bytes(raw[:4], "little")
        lag = f", {max(0.0, time.time() - stamp):.0f} s behind" if stamp else ""
        progress.info("relay: copied%s%s", where, lag)

    def _follow(self, position: RelayPosition | None) -> bool:
        """Stream from ``position`` into the writer; True when done (end or stop)."""
        stream = ReplicaStream(self.spec, server_id=self.server_id, heartbeat=self.heartbeat)
        with self._lock:
            if self._stop.is_set():
                return True
            self._stream = stream
        flags = 0 if self.blocking else DumpFlag.NON_BLOCK
        try:
            if position is not None:
                stream.open(file=position.file, position=position.position, flags=flags)
            elif self.start_file is not None:
                stream.open(file=self.start_file, flags=flags)
            else:
                stream.open("oldest", flags=flags)
            self._opened = True
            report = time.monotonic() + PROGRESS_EVERY
            while (raw := stream.fetch()) is not None:
                self.writer.write_event(raw)
                if self._stop.is_set():
                    return True
                if time.monotonic() >= report:
                    report = time.monotonic() + PROGRESS_EVERY
                    self._report(raw)
            if self.blocking:  # MariaDB ends a dump with EOF when it shuts down
                raise ConnectionLost("the server ended the binlog dump")
            return True
        except (ConnectionLost, OSError, ServerError):
            if self._stop.is_set():
                return True
            raise
        finally:
            with self._lock:
                self._stream = None
            stream.close()
