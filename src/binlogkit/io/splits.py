"""Transaction-aligned byte ranges of a binlog file, each decodable on its own.

:func:`plan_splits` cuts a file into :class:`Split` ranges of about a target
size by walking the common event headers (plus the text of small QUERY events,
to recognise ``BEGIN``). A split starts where a transaction starts — a GTID
event (MySQL, anonymous, tagged or MariaDB), or a ``BEGIN`` query in a binlog
without GTID events — so the table maps a rows event needs precede it inside
the same split, and the transaction's GTID is the split's first event. Each
split carries the raw format description in force at its start, so
:func:`read_split` decodes it with no other part of the file.

A byte range of a file is planned the same way (``plan_splits(path, size,
start=..., end=...)``): a read that goes on from where an earlier one stopped,
or one that stops before the partial last transaction of a binlog the server
is still writing. Its first split carries the format description at offset 4.

Files the walk cannot cut safely (no binlog magic, formats v1/v3, encryption,
a damaged header) are one split from 0 to the end; the decoder then reports
their problem with file and offset as a whole-file read would.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from binlogkit.binlog.constants import MAGIC, V4_HEADER_LENGTH, EventType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.decoder import BinlogDecoder
from binlogkit.binlog.events import Event
from binlogkit.binlog.framing import END, Signal
from binlogkit.errors import BinlogError

__all__ = ["DEFAULT_SPLIT_SIZE", "Split", "plan_splits", "read_split", "split_decoder"]

DEFAULT_SPLIT_SIZE = 64 << 20
"""Target size of one split (64 MiB)."""

_CHUNK = 1 << 20
_HEADER = struct.Struct("<IBIIIH")
_QUERY_FIXED = struct.Struct("<IIBHH")  # thread_id, exec_time, db_len, error_code, status_len
_TRANSACTION_STARTS = frozenset(
    {EventType.GTID, EventType.ANONYMOUS_GTID, EventType.GTID_TAGGED, EventType.MARIADB_GTID}
)
_BEGIN_QUERY_MAX = 512
"""QUERY events larger than this are not read to look for ``BEGIN`` (a BEGIN event is small)."""


@dataclass(frozen=True, slots=True)
class Split:
    """Bytes ``start``..``end`` of ``path``: whole events, starting at a transaction start.

    ``start`` 0 means the file's beginning (the magic and the format
    description are read as usual). Otherwise ``format_event`` holds the raw
    format description in force at ``start``. ``file_size`` is the size the
    plan saw; ``index`` and ``count`` number the splits of the file.
    """

    path: str
    start: int
    end: int
    format_event: bytes
    file_size: int
    index: int = 0
    count: int = 1

    @property
    def length(self) -> int:
        return self.end - self.start


class _Window:
    """Random reads of a file through one buffer of at least ``_CHUNK`` bytes."""

    def __init__(self, f: BinaryIO) -> None:
        self._f = f
        self._buf = b""
        self._at = 0

    def read(self, offset: int, size: int) -> bytes:
        rel = offset - self._at
        if rel < 0 or rel + size > len(self._buf):
            self._f.seek(offset)
            self._buf = self._f.read(max(size, _CHUNK))
            self._at = offset
            rel = 0
        return self._buf[rel : rel + size]


def plan_splits(
    path: str | os.PathLike[str],
    split_size: int = DEFAULT_SPLIT_SIZE,
    *,
    start: int = 0,
    end: int | None = None,
) -> list[Split]:
    """The splits of bytes ``start``..``end`` of one file (default: all of it).

    One split when the range is no larger than ``split_size``, else more:
    boundaries are the first transaction start at or past each multiple of
    ``split_size`` from the previous boundary; only event headers are read
    (and small QUERY events, in binlogs without GTIDs). ``start`` must be 0 or
    a transaction start, and ``end`` an event boundary, as a ledger of what
    was read records them: so a binlog a server is still writing can be read
    up to its last complete transaction, and on from there later. An empty
    range has no splits.
    """
    if split_size < 1:
        raise ValueError(f"split size must be positive, not {split_size}")
    name = os.fspath(path)
    size = os.path.getsize(name)
    end = size if end is None else end
    if not 0 <= start <= end <= size or 0 < start < len(MAGIC):
        raise BinlogError(
            f"byte range {start}..{end} is not inside the file's {size} bytes", file=name
        )
    if start == end:
        return []
    if not start and end - start <= split_size:
        return [Split(name, 0, end, b"", size)]
    with open(name, "rb") as f:
        window = _Window(f)
        fde = _format_event(window, name) if start else b""
        cuts = _cut_points(window, start, end, split_size, fde) if end - start > split_size else []
    bounds = [(start, fde), *cuts]
    return [
        Split(name, first, last, raw, size, i, len(bounds))
        for i, ((first, raw), last) in enumerate(
            zip(bounds, [c[0] for c in cuts] + [end], strict=True)
        )
    ]


def _format_event(window: _Window, path: str) -> bytes:
    """The raw format description at offset 4 of a v4 binlog (what a read from the middle needs)."""
    head = window.read(0, len(MAGIC) + V4_HEADER_LENGTH)
    if (
        len(head) < len(MAGIC) + V4_HEADER_LENGTH
        or head[: len(MAGIC)] != MAGIC
        or head[len(MAGIC) + 4] != EventType.FORMAT_DESCRIPTION
    ):
        raise BinlogError(
            "cannot read from the middle of this file: no v4 format description at offset 4",
            file=path,
        )
    _, _, _, ev_size, _, _ = _HEADER.unpack_from(head, len(MAGIC))
    return window.read(len(MAGIC), ev_size)


def _cut_points(
    window: _Window, start: int, end: int, split_size: int, fde: bytes
) -> list[tuple[int, bytes]]:
    """(offset, format description raw) of each split start after ``start``, before ``end``.

    ``fde`` is the format description in force at ``start`` (empty at 0).
    """
    if window.read(0, 4) != MAGIC:
        return []
    cuts: list[tuple[int, bytes]] = []
    query_post_header, checksum = _format_facts(fde) if fde else (13, 0)
    previous_starts = False  # the event before was a GTID (its BEGIN is not a cut of its own)
    last_cut = start
    offset = start or len(MAGIC)
    while offset + V4_HEADER_LENGTH <= end:
        _, code, _, ev_size, _, _ = _HEADER.unpack_from(window.read(offset, V4_HEADER_LENGTH))
        if ev_size < V4_HEADER_LENGTH or offset + ev_size > end:
            break  # damage or a partial last event: the decoder reports it
        if code == EventType.FORMAT_DESCRIPTION:
            fde = window.read(offset, ev_size)
            query_post_header, checksum = _format_facts(fde)
        elif not fde or code in (EventType.START_V3, EventType.MARIADB_START_ENCRYPTION):
            break  # an old format, or encrypted events from here on: no more cuts
        starts = code in _TRANSACTION_STARTS
        begins = (
            code == EventType.QUERY
            and not previous_starts
            and ev_size <= _BEGIN_QUERY_MAX
            and _is_begin(window.read(offset, ev_size), query_post_header, checksum)
        )
        if (starts or begins) and offset - last_cut >= split_size:
            cuts.append((offset, fde))
            last_cut = offset
        previous_starts = starts
        offset += ev_size
    return cuts


def _format_facts(raw: bytes) -> tuple[int, int]:
    """(QUERY post-header length, checksum length) from a raw format description."""
    decoder = BinlogDecoder()
    decoder.receive_data(MAGIC + raw)
    decoder.next_event()
    fmt = decoder.fmt
    return fmt.post_header_length(EventType.QUERY, 13), fmt.checksum_length


def _is_begin(raw: bytes, post_header: int, checksum: int) -> bool:
    """Whether a raw QUERY event's statement is ``BEGIN``."""
    fixed = V4_HEADER_LENGTH
    if len(raw) < fixed + max(post_header, _QUERY_FIXED.size) + checksum:
        return False
    _, _, db_len, _, status_len = _QUERY_FIXED.unpack_from(raw, fixed)
    text = fixed + post_header + status_len + db_len + 1
    return raw[text : len(raw) - checksum] == b"BEGIN"


def split_decoder(
    split: Split, options: DecodeOptions | None = None
) -> tuple[BinlogDecoder, Event | None]:
    """A decoder ready for the split's first byte, and the format description it was given.

    The format description (None for a split at the file's start) is decoded
    from the split itself; the decoder then expects the bytes from ``start``.
    """
    decoder = BinlogDecoder(file=split.path, options=options)
    if not split.start:
        return decoder, None
    decoder.receive_data(MAGIC + split.format_event)
    first = decoder.next_event()
    if isinstance(first, Signal) or first.header.type_code != EventType.FORMAT_DESCRIPTION:
        raise BinlogError(
            "split carries no format description", file=split.path, offset=split.start
        )
    decoder.seek(split.start)
    return decoder, first


def read_split(
    split: Split, options: DecodeOptions | None = None, *, chunk_size: int = _CHUNK
) -> Iterator[Event]:
    """The decoded events of one split, in order; errors name the file and offset.

    The split's format description is decoded first (not given); then the
    bytes ``start``..``end`` are fed to the decoder, which rebuilds the table
    maps of each transaction from the events inside it.
    """
    decoder, _ = split_decoder(split, options)
    next_event = decoder.next_event
    with open(split.path, "rb") as f:
        f.seek(split.start)
        left = split.end - split.start
        while True:
            chunk = f.read(min(chunk_size, left)) if left > 0 else b""
            left -= len(chunk)
            decoder.receive_data(chunk)
            while not isinstance(event := next_event(), Signal):
                yield event
            if not chunk:
                break
    if event is not END:
        raise BinlogError("split ended before its last event", file=split.path, offset=split.end)
