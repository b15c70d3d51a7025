"""The corpus files, an independent walk over their event headers, and their damage.

The walk reads only the common header's ``event_size`` field, straight from the
format's definition, so the tests can derive event offsets and the offsets of
deliberate damage from the files themselves instead of from binlogkit's output.
:func:`decode_up_to_damage` decodes a file up to that damage. The local MariaDB
files come with ``mariadb-binlog -vv`` dumps: :func:`reference_dump` reads one.
"""

from __future__ import annotations

import gzip
import re
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from corpus_files import CORPUS, corpus_manifest

from binlogkit import BinlogDecoder
from binlogkit.binlog.events import Event
from binlogkit.binlog.framing import Frame, Signal
from binlogkit.errors import (
    BinlogError,
    ChecksumError,
    DecodeError,
    EncryptedBinlogError,
    TruncatedError,
)

MAGIC = b"\xfebin"
MYSQL_ENCRYPTED_MAGIC = b"\xfdbin"
START_V3 = 1
QUERY = 2
INCIDENT = 26
FORMAT_DESCRIPTION = 15
START_ENCRYPTION = 164
_HEADER = struct.Struct("<IBII")
LOCAL_MARIADB = "local-mariadb-10.11"


@dataclass(frozen=True)
class Walked:
    """One event as the header walk sees it."""

    offset: int
    type_code: int
    size: int
    flags: int

    @property
    def end(self) -> int:
        return self.offset + self.size


@dataclass(frozen=True)
class Walk:
    """All whole events of a file, and where (and why) the walk stopped early, if it did."""

    events: tuple[Walked, ...]
    stop: int | None = None
    reason: str = ""


def corpus_files() -> list[str]:
    """Every binlog of the corpus (relative to it): the manifest's and the local MariaDB's."""
    files = [row["file"] for row in corpus_manifest()]
    local = CORPUS / LOCAL_MARIADB
    if local.is_dir():
        files += sorted(
            str(p.relative_to(CORPUS))
            for p in local.glob("*/mysql-bin.[0-9]*")
            if p.name.rsplit(".", 1)[-1].isdigit()
        )
    return files


def manifest_row(name: str) -> dict[str, str]:
    """The manifest row of a file; local MariaDB files get a v4 row of their own."""
    for row in corpus_manifest():
        if row["file"] == name:
            return row
    return {"file": name, "binlog_ver": "4", "anomalies": "", "note": ""}


def header_length(name: str) -> int:
    """13 for binlog format v1 (MySQL 3.23), else 19 (the manifest names the version)."""
    return 13 if manifest_row(name)["binlog_ver"] == "1" else 19


def read(name: str) -> bytes:
    return (CORPUS / name).read_bytes()


def path(name: str) -> Path:
    return CORPUS / name


def walk(data: bytes, header_len: int = 19) -> Walk:
    """Follow the ``event_size`` fields from offset 4 to the end of ``data``."""
    if data[:4] != MAGIC:
        return Walk((), 0, "no binlog magic")
    events: list[Walked] = []
    offset = 4
    while offset < len(data):
        if len(data) - offset < header_len:
            return Walk(tuple(events), offset, "partial header")
        _, code, _, size = _HEADER.unpack_from(data, offset)
        flags = struct.unpack_from("<H", data, offset + 17)[0] if header_len == 19 else 0
        if size < header_len:
            return Walk(tuple(events), offset, "size smaller than the header")
        if offset + size > len(data):
            return Walk(tuple(events), offset, "partial event")
        events.append(Walked(offset, code, size, flags))
        offset += size
    return Walk(tuple(events))


def walk_file(name: str) -> Walk:
    return walk(read(name), header_length(name))


@dataclass(frozen=True)
class Damage:
    """What a damaged file must raise, and where."""

    error: type[Exception]
    offset: int
    why: str


def _query_lengths_overflow(
    data: bytes, offset: int, size: int, header_len: int, post: int
) -> bool:
    """Whether a QUERY event's db and status-variable lengths point past its end.

    Post-header: thread id (4), exec time (4), db length (1), error code (2) and,
    from v4 on, the status-variable block length (2); then the status
    variables, the db name and its NUL, then the query.
    """
    body = data[offset + header_len : offset + size]
    if len(body) < post:
        return True
    db_len = body[8]
    status_len = struct.unpack_from("<H", body, 11)[0] if post >= 13 else 0
    return post + status_len + db_len + 1 > len(body)


def _query_layout(data: bytes, w: Walk, hlen: int) -> tuple[int, int]:
    """The common header and QUERY post-header lengths: from the FDE (v4), else (hlen, 11).

    FDE body: binlog version (2), server version (50), created (4), header
    length (1), then one post-header length per type code from 1 on.
    """
    first = w.events[0]
    if first.type_code != FORMAT_DESCRIPTION:
        return hlen, 11
    body = first.offset + 19
    return data[body + 56], data[body + 57 + QUERY - 1]


def crc32_stream(data: bytes, w: Walk) -> bool:
    """Whether events carry a CRC32: the FDE ends with algorithm 1 and a CRC32 that matches."""
    if not w.events or w.events[0].type_code != FORMAT_DESCRIPTION:
        return False
    fde = w.events[0]
    return data[fde.end - 5] == 1 and crc32_ok(data, fde)


def crc32_ok(data: bytes, e: Walked) -> bool:
    """The event's CRC32 matches (an FDE is summed with its BINLOG_IN_USE flag clear)."""
    raw = bytearray(data[e.offset : e.end])
    if e.type_code == FORMAT_DESCRIPTION:
        raw[17] &= ~1
    return zlib.crc32(raw[:-4]) == struct.unpack_from("<I", raw, len(raw) - 4)[0]


def _bad_incident(data: bytes, e: Walked, header_len: int) -> bool:
    """An INCIDENT whose number is not 1 (LOST_EVENTS, the only kind defined)."""
    return struct.unpack_from("<H", data, e.offset + header_len)[0] != 1


def damage_of(name: str) -> Damage | None:
    """How a corpus file is damaged, derived from its bytes; None for an intact file.

    The first damage in file order counts: events after START_ENCRYPTION, a
    CRC32 mismatch, a QUERY whose lengths overflow it, an INCIDENT of an
    undefined kind, a file that ends inside an event.
    """
    data = read(name)
    if data[:4] == MYSQL_ENCRYPTED_MAGIC:
        return Damage(EncryptedBinlogError, 0, "MySQL 8.0 encrypted binlog (\\xfdbin magic)")
    hlen = header_length(name)
    w = walk(data, hlen)
    if w.events and w.events[0].type_code not in (START_V3, FORMAT_DESCRIPTION):
        return Damage(DecodeError, 4, "first event is not a format description")
    qhlen, post = _query_layout(data, w, hlen) if w.events else (hlen, 0)
    crc = crc32_stream(data, w)
    for e in w.events:
        if e.type_code == START_ENCRYPTION:
            return Damage(EncryptedBinlogError, e.end, "MariaDB events after START_ENCRYPTION")
        if crc and not crc32_ok(data, e):
            return Damage(ChecksumError, e.offset, "CRC32 mismatch")
        if e.type_code == QUERY and _query_lengths_overflow(data, e.offset, e.size, qhlen, post):
            return Damage(DecodeError, e.offset, "QUERY whose lengths point past its end")
        if e.type_code == INCIDENT and _bad_incident(data, e, qhlen):
            return Damage(DecodeError, e.offset, "INCIDENT with an undefined incident number")
    if w.stop is not None:
        return Damage(TruncatedError, w.stop, f"file ends inside an event ({w.reason})")
    return None


def decode_up_to_damage(name: str, dec: BinlogDecoder) -> Iterator[tuple[Event, Frame | None]]:
    """Feed the file to ``dec``; each event with its frame, up to the end or the file's damage.

    The frame is None for an event expanded from a TRANSACTION_PAYLOAD. An
    error anywhere but at the damage :func:`damage_of` derives is raised.
    """
    dec.receive_data(read(name))
    dec.receive_data(b"")
    while True:
        try:
            event = dec.next_event()
        except BinlogError as err:
            damage = damage_of(name)
            if damage is not None and damage.offset == err.offset:
                return
            raise
        if isinstance(event, Signal):
            return
        yield event, dec.last_frame


def reference_dump_path(name: str) -> Path | None:
    """The ``mariadb-binlog -vv`` dump of a local MariaDB file (plain or gzipped), if any."""
    if not name.startswith(LOCAL_MARIADB + "/"):
        return None
    for suffix in (".decoded.txt", ".decoded.txt.gz"):
        dump = CORPUS / (name + suffix)
        if dump.is_file():
            return dump
    return None


def reference_dump(name: str) -> bytes:
    """The text of a local MariaDB file's ``mariadb-binlog -vv`` dump."""
    dump = reference_dump_path(name)
    assert dump is not None, f"{name} has no mariadb-binlog dump"
    data = dump.read_bytes()
    return gzip.decompress(data) if dump.suffix == ".gz" else data


def reference_dump_rc(name: str) -> int | None:
    """The exit code of ``mariadb-binlog -vv`` on a local MariaDB file (its NOTE.txt says it)."""
    if not name.startswith(LOCAL_MARIADB + "/"):
        return None
    file = CORPUS / name
    note = (file.parent / "NOTE.txt").read_text(errors="replace")
    m = re.search(rf"^{re.escape(file.name)}:.* rc=(\d+)", note, re.M)
    return None if m is None else int(m[1])


def reference_dump_stop(name: str) -> int | None:
    """Where ``mariadb-binlog -vv`` gave up on a local MariaDB file, if it did.

    For rc=1 the event it could not decode is the last ``# at N`` its dump
    printed (the rows of MariaDB's pre-10.1 fractional TIME columns, logged
    without their width).
    """
    if reference_dump_rc(name) != 1:
        return None
    return int(re.findall(rb"^# at (\d+)$", reference_dump(name), re.M)[-1])
