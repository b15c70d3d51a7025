"""A schema history over byte ranges of binlog files, reading only what DDL needs.

Readers that cut their input into parts decoded apart (the Spark source's
partitions) need, for each part, the table definitions in force where it
starts. :func:`catalogs_at` follows a
:class:`~binlogkit.schema.history.SchemaHistory` through the ranges first: it
walks the event headers (:class:`~binlogkit.binlog.header.HeaderWalk`) and
decodes only what the history needs: format descriptions, and the QUERY
events whose first word may start DDL, each with the GTID event before it.
Rows, the bulk of a binlog, are never read, nor BEGIN or DML statements. What
the walk cannot cut by event sizes (an old format, encryption, damage) the
decoder reads, and reports as a whole read would.
"""

from __future__ import annotations

import mmap
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING

from binlogkit.binlog.constants import MAGIC, EventType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.decoder import BinlogDecoder
from binlogkit.binlog.events.query import raw_statement
from binlogkit.binlog.framing import Signal
from binlogkit.binlog.header import SIZES_STOP_AFTER, HeaderWalk, format_description_size
from binlogkit.binlog.transactions import GTID_CODES
from binlogkit.io.splits import (
    Split,
    encrypted_format_event,
    is_encrypted,
    read_split,
    split_decoder,
)
from binlogkit.schema.history import SchemaHistory
from binlogkit.schema.model import Catalog
from binlogkit.schema.words import plainly_not_ddl

if TYPE_CHECKING:
    from binlogkit.io.key_files import KeyFile

__all__ = ["catalogs_at"]

_QUERY = int(EventType.QUERY)
_DECODED = frozenset(
    {int(EventType.FORMAT_DESCRIPTION), int(EventType.MARIADB_QUERY_COMPRESSED), *SIZES_STOP_AFTER}
)
"""Decoded besides QUERY events: the events that change the format or the framing, and
compressed statements (their first word is not to be seen in the raw bytes)."""
_WORD = 64
"""Bytes of a statement that show its first word (for :func:`plainly_not_ddl`)."""


def catalogs_at(
    ranges: Sequence[tuple[str, int, int]],
    points: Sequence[tuple[str, int]],
    history: SchemaHistory,
    *,
    options: DecodeOptions | None = None,
    whole: bool = False,
    keys: KeyFile | None = None,
) -> list[Catalog]:
    """The catalog of ``history`` in force at each of ``points``, applying the DDL of
    ``ranges`` on the way.

    ``ranges`` are (path, start, end) in reading order, ``start`` 0 or a
    transaction start and ``end`` an event boundary; ``points`` are (path,
    offset) in the same order, each inside a range: the catalog of a point is
    the one before the event there. The walk ends at the last point, or with
    ``whole`` at the end of the ranges (so that a history with a file records
    all their DDL). ``keys``: encrypted files are decrypted with them, and decoded
    whole (their events cannot be walked by size).
    """
    scan = _Scan(history, points, whole)
    for path, start, end in ranges:
        if not scan.goes_on():
            break
        if keys is not None and is_encrypted(path):
            scan.decrypted_range(path, start, end, options, keys)
        else:
            scan.range(path, start, end, options)
    if scan.due:
        raise ValueError(f"points outside the ranges: {list(scan.due)[:3]}")
    return scan.found


class _Scan:
    """The walk of :func:`catalogs_at`: the points still due and the catalogs found."""

    def __init__(
        self, history: SchemaHistory, points: Sequence[tuple[str, int]], whole: bool
    ) -> None:
        self.history = history
        self.due = deque(points)
        self.found: list[Catalog] = []
        self.whole = whole

    def goes_on(self) -> bool:
        return self.whole or bool(self.due)

    def take(self, path: str, offset: int) -> int | None:
        """Take the catalog of the points of ``path`` up to ``offset``; the offset of the next
        one there (None when the walk may stop, a large number when no point is in ``path``)."""
        due = self.due
        while due and due[0][0] == path and due[0][1] <= offset:
            self.found.append(self.history.catalog)
            due.popleft()
        if due and due[0][0] == path:
            return due[0][1]
        return 1 << 62 if self.goes_on() else None

    def range(self, path: str, start: int, end: int, options: DecodeOptions | None) -> None:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            fde = format_description_size(data, len(data))
            format_event = bytes(data[len(MAGIC) : len(MAGIC) + fde]) if start else b""
            split = Split(path, start, end, format_event, len(data))
            decoder, _ = split_decoder(split, options, self.history)
            offset = self.walk(decoder, data, path, start, end) if fde else start
            if offset is None or self.take(path, offset) is None:
                return
            if offset < end:  # what event sizes cannot lay out: the decoder reads it
                if fde:
                    decoder.seek(offset)
                decoder.receive_data(data[offset:end])
                decoder.receive_data(b"")
                while not isinstance(decoder.next_event(), Signal):
                    pass
            self.take(path, end)

    def decrypted_range(
        self, path: str, start: int, end: int, options: DecodeOptions | None, keys: KeyFile
    ) -> None:
        """An encrypted file's range, every event decoded: points only at its ends (an
        encrypted file is one split)."""
        if self.take(path, start) is None:
            return
        split = Split(path, start, end, encrypted_format_event(path, keys) if start else b"", end)
        for _ in read_split(split, options, schema=self.history, keys=keys):
            pass
        self.take(path, end)

    def walk(
        self, decoder: BinlogDecoder, data: mmap.mmap, path: str, start: int, end: int
    ) -> int | None:
        """Walk a v4 file's events from ``start``, decoding what the history needs; where the
        walk stopped (None: no point is due any more)."""
        point = self.take(path, start)
        gtid: tuple[int, int] | None = None  # the last GTID event, until it is decoded
        walk = HeaderWalk(data, max(start, len(MAGIC)), end)
        if point is None:
            return None
        for at, code, size in walk:
            if at >= point:
                point = self.take(path, at)
                if point is None:
                    return None
            if code in GTID_CODES:
                gtid = (at, size)
                continue
            raw = data[at : at + size]
            if code == _QUERY:
                fmt = decoder.fmt
                statement = raw_statement(
                    raw, fmt.post_header_length(_QUERY, 0), fmt.checksum_length
                )
                if statement is not None and plainly_not_ddl(statement[:_WORD].decode("latin-1")):
                    continue
            elif code not in _DECODED:
                continue
            if gtid is not None:  # the history records the GTID with the DDL
                decoder.decode_event(data[gtid[0] : gtid[0] + gtid[1]], gtid[0], path)
                gtid = None
            decoder.decode_event(raw, at, path)
        return walk.stop
