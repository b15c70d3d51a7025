"""A folder of binlog files as a primary serves them: its index, its files, their GTID states.

:class:`BinlogDirectory` lists the binlogs of a folder the way a server's
index lists them (the folder's ``*.index`` file, as ``binlogkit relay`` and
the servers write it; without one, every ``name.NNNNNN`` file in number
order) and reads them for the dump sender. It is read again whenever it
changes, so files appended to, and new files, are served as they appear.
Only files directly in the folder are served: a name with a path, or a
symlink pointing out of the folder, is refused.

What the set-up queries need is read from the files themselves: the server
flavour and version (the first file's format description), the checksum (the
last file's), and the GTID state (the last file's PREVIOUS_GTIDS or GTID_LIST
plus the GTIDs after it, scanned once and then only as the file grows).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from binlogkit.binlog.constants import MAGIC, EventType
from binlogkit.binlog.context import DecodeContext
from binlogkit.binlog.decoder import decode_frame
from binlogkit.binlog.framing import EventFramer, Frame, Signal
from binlogkit.binlog.header import EVENT_SIZE_OFFSET, V4_HEADER_LENGTH
from binlogkit.errors import BinlogError, EncryptedBinlogError
from binlogkit.gtid import GtidSet, MariaGtidList
from binlogkit.io.binlog_index import binlog_order, find_index, read_index, split_binlog_name
from binlogkit.io.streams import FileInputStream
from binlogkit.protocol.binlog_sender import BinlogStart, Flavor, start_state

if TYPE_CHECKING:
    from binlogkit.io.key_files import KeyFile

__all__ = ["BinlogDirectory", "GtidState"]

log = logging.getLogger(__name__)

_HEAD_BYTES = 1 << 16
_SCAN_CHUNK = 1 << 20
_GTID_CODES = frozenset(
    int(t) for t in (EventType.GTID, EventType.GTID_TAGGED, EventType.MARIADB_GTID)
)

GtidState = GtidSet | MariaGtidList
"""MySQL: a GTID set. MariaDB: a binlog state (one GTID per domain and server)."""


@dataclass(slots=True)
class _Head:
    size: int
    frames: tuple[Frame, ...]


@dataclass(slots=True)
class _Scan:
    """The GTID state through ``framer.offset`` of one file."""

    name: str
    framer: EventFramer
    offset: int
    state: GtidState | None


class BinlogDirectory:
    """The binlogs of ``path``, in index order; with ``keys`` (a MariaDB
    ``file_key_management`` key file) encrypted binlogs are read decrypted."""

    def __init__(self, path: str | os.PathLike[str], keys: KeyFile | None = None) -> None:
        self.keys = keys
        self.path = Path(path).resolve()
        if not self.path.is_dir():
            raise BinlogError(f"{self.path} is not a folder of binlogs")
        self._index_key: tuple[float, int] | None = None
        self._names: list[str] = []
        self._heads: dict[str, _Head] = {}
        self._scan: _Scan | None = None

    # -- the list -------------------------------------------------------------------

    def names(self) -> list[str]:
        """The binlog file names, oldest first (read again when the index changed)."""
        index = find_index(self.path)
        if index is None:
            numbered = [p.name for p in self.path.iterdir() if split_binlog_name(p.name)]
            return sorted(numbered, key=binlog_order)
        stat = index.stat()
        key = (stat.st_mtime, stat.st_size)
        if key != self._index_key:
            self._names = [n for n in read_index(index) if self._inside(n)]
            self._index_key = key
        return list(self._names)

    def _inside(self, name: str) -> bool:
        path = self.path / name
        if path.resolve().parent != self.path:
            log.warning("not serving %s: it points outside %s", name, self.path)
            return False
        return True

    def file(self, name: str) -> Path:
        """The path of a served binlog; BinlogError for a name that is not one."""
        if name not in self.names():
            raise BinlogError(f"{name!r} is not a binlog of {self.path}")
        return self.path / name

    def size(self, name: str) -> int:
        """The size of a served binlog now (0 while the index lists it before it exists)."""
        try:
            return self.file(name).stat().st_size
        except FileNotFoundError:
            return 0

    def next_name(self, name: str) -> str | None:
        """The binlog after ``name`` in the index, or None while there is none."""
        names = self.names()
        at = names.index(name) if name in names else -1
        return names[at + 1] if 0 <= at < len(names) - 1 else None

    def read(self, name: str, offset: int, size: int = _SCAN_CHUNK) -> bytes:
        """Up to ``size`` bytes of ``name`` from ``offset`` (b"" at its current end, and while
        the index lists it before it exists). With keys, an encrypted binlog's bytes come
        decrypted, whole events only (a partial last one waits until it is whole)."""
        try:
            if self.keys is not None:
                return self._decrypted(name, offset, size)
            with self.file(name).open("rb") as f:
                f.seek(offset)
                return f.read(size)
        except FileNotFoundError:
            return b""

    def _decrypted(self, name: str, offset: int, size: int) -> bytes:
        """Whole decrypted events from ``offset`` (an event start, as every read ends at one),
        up to ``size`` bytes unless the first event alone is larger."""
        from binlogkit.io.streams.mariadb_encryption import MariaDBDecryptingStream

        assert self.keys is not None
        inner = FileInputStream(self.file(name))
        first = len(MAGIC) if offset == 0 else 0
        with MariaDBDecryptingStream(inner, self.keys, name=name, follow=True) as stream:
            stream.seek(offset)
            data = bytearray()
            while chunk := stream.read(max(size - len(data), _HEAD_BYTES)):
                data += chunk
                if len(data) >= size and _whole_events(data, first, size) > first:
                    break
            return bytes(data[: _whole_events(data, first, size)])

    def framer(self, name: str) -> EventFramer:
        """A framer for the bytes :meth:`read` gives of ``name``."""
        return EventFramer(file=name, decrypted=self.keys is not None)

    # -- what the files say ------------------------------------------------------------

    def _head(self, name: str) -> _Head:
        """The first events of a file (cached once they hold the GTID state or a GTID)."""
        head = self._heads.get(name)
        if head is not None:
            return head
        data = self.read(name, 0, _HEAD_BYTES)
        framer = self.framer(name)
        framer.receive_data(data)
        frames: list[Frame] = []
        encrypted = False
        try:
            while len(frames) < 4 and not isinstance(frame := framer.next_frame(), Signal):
                frames.append(frame)
        except EncryptedBinlogError:  # no key: the dump sender refuses the file
            encrypted = True
        head = _Head(len(data), tuple(frames))
        if len(frames) == 4 or len(data) == _HEAD_BYTES or encrypted:
            self._heads[name] = head
        return head

    def starts(self) -> list[BinlogStart]:
        """Each binlog's name, size and GTID state at its start, for the dump sender."""
        return [
            BinlogStart(name, self.size(name), start_state(self._head(name).frames))
            for name in self.names()
        ]

    def server_version(self) -> str:
        """The server version the first binlog's format description names."""
        names = self.names()
        if not names:
            raise BinlogError(f"no binlogs in {self.path}")
        frames = self._head(names[0]).frames
        if not frames or frames[0].header.type_code != EventType.FORMAT_DESCRIPTION:
            raise BinlogError(f"{names[0]} does not start with a format description")
        fde = decode_frame(frames[0], DecodeContext(frames[0].fmt))
        return str(fde.server_version)  # type: ignore[attr-defined]

    def flavor(self) -> Flavor:
        return "mariadb" if "mariadb" in self.server_version().lower() else "mysql"

    def checksum(self) -> str:
        """The last binlog's checksum algorithm, as ``@@binlog_checksum`` names it."""
        names = self.names()
        frames = self._head(names[-1]).frames if names else ()
        return "CRC32" if frames and frames[0].checksum_length else "NONE"

    def first_state(self) -> GtidState | None:
        """The GTID state the first binlog starts with (what was purged before it)."""
        names = self.names()
        return start_state(self._head(names[0]).frames) if names else None

    def gtid_state(self, name: str | None = None, position: int | None = None) -> GtidState | None:
        """The GTID state before ``position`` of binlog ``name`` (by default: at the end of the
        last binlog; None: no GTIDs there). The last binlog's scan is kept and goes on as
        the file grows."""
        names = self.names()
        if not names:
            return None
        last = names[-1]
        if name is not None and (name != last or position is not None):
            return self._advance(_Scan(name, self.framer(name), 0, None), position).state
        if self._scan is None or self._scan.name != last:
            self._scan = _Scan(last, self.framer(last), 0, None)
        return self._advance(self._scan, None).state

    def _advance(self, scan: _Scan, end: int | None) -> _Scan:
        """Read ``scan``'s file on up to ``end`` (None: its current end)."""
        while end is None or scan.offset < end:
            size = _SCAN_CHUNK if end is None else min(_SCAN_CHUNK, end - scan.offset)
            data = self.read(scan.name, scan.offset, size)
            if not data:
                break
            scan.offset += len(data)
            scan.framer.receive_data(data)
            while not isinstance(frame := scan.framer.next_frame(), Signal):
                scan.state = _after(scan.state, frame)
        return scan


def _whole_events(data: bytearray, start: int, limit: int) -> int:
    """Where the whole events of ``data`` from ``start`` end, within ``limit`` bytes (the
    first one whatever its size)."""
    at = start
    while at + EVENT_SIZE_OFFSET + 4 <= len(data):
        size = int.from_bytes(data[at + EVENT_SIZE_OFFSET : at + EVENT_SIZE_OFFSET + 4], "little")
        if size < V4_HEADER_LENGTH or at + size > len(data) or (at + size > limit and at > start):
            break
        at += size
    return at


def _after(state: GtidState | None, frame: Frame) -> GtidState | None:
    code = frame.header.type_code
    if code in (EventType.PREVIOUS_GTIDS, EventType.MARIADB_GTID_LIST):
        if state is None:
            return start_state((frame,))
        return state
    if code not in _GTID_CODES:
        return state
    event = decode_frame(frame, DecodeContext(frame.fmt))
    gtid = event.gtid  # type: ignore[attr-defined]
    if code == EventType.MARIADB_GTID:
        base = state if isinstance(state, MariaGtidList) else MariaGtidList()
        return base.add(gtid)
    if gtid is None:
        return state
    base_set = state if isinstance(state, GtidSet) else GtidSet()
    return base_set.add(gtid)
