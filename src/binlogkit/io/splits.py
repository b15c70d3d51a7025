"""Transaction-aligned byte ranges of a binlog file, each decodable on its own.

:func:`plan_splits` cuts a file into :class:`Split` ranges of about a target
size by walking the common event headers (plus the text of small QUERY events,
to recognise ``BEGIN``); in a file as its server wrote it, the walk jumps to
the event start nearest past each cut (:mod:`binlogkit.io.resync`), so a big
file costs a read near each cut. A split starts where a transaction starts — a GTID
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
their problem with file and offset as a whole-file read would. An encrypted
file is read through the decrypting stage when :func:`read_split` is given
its keys (:mod:`binlogkit.io.streams.decryption`).
"""

from __future__ import annotations

import bisect
import mmap
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from binlogkit.binlog.constants import MAGIC, EventType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.decoder import BinlogDecoder
from binlogkit.binlog.events import Event
from binlogkit.binlog.events.query import raw_statement
from binlogkit.binlog.framing import END, MYSQL_ENCRYPTED_MAGIC, Signal
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.header import TYPE_CODE_OFFSET, HeaderWalk, format_description_size
from binlogkit.binlog.tables import SchemaSource
from binlogkit.binlog.transactions import GTID_CODES, Control, control
from binlogkit.errors import BinlogError
from binlogkit.io.resync import find_event_start, resync_checksum
from binlogkit.io.streams import FileInputStream, SeekableInputStream

if TYPE_CHECKING:
    from binlogkit.io.key_files import KeyFile

__all__ = [
    "DEFAULT_SPLIT_SIZE",
    "Split",
    "encrypted_format_event",
    "is_encrypted",
    "plan_partitions",
    "plan_splits",
    "read_split",
    "split_decoder",
]

DEFAULT_SPLIT_SIZE = 64 << 20
"""Target size of one split (64 MiB)."""

_CHUNK = 1 << 20
_FORMAT_DESCRIPTION = int(EventType.FORMAT_DESCRIPTION)
_QUERY = int(EventType.QUERY)
_RESYNC_GAP = 1 << 20
"""How far ahead a cut must be due before the walk jumps there (:mod:`binlogkit.io.resync`)."""
_RESYNC_WINDOW = 4 << 10
"""How many bytes from a due cut are searched for an event start, else the walk goes on (where
events are larger than that, walking over them is cheap)."""
_SAMPLE_STEP = 256 << 10
"""The least distance between two places where :func:`plan_partitions` samples the work."""
_SAMPLES_PER_PARTITION = 16
"""Samples of the work per partition (fewer where that would be closer than the step)."""
_SAMPLE_BYTES = 64 << 10
"""Bytes of events counted at each sample."""
_HEAD_BYTES = 1 << 12
"""Bytes that hold a binlog's magic, format description and START_ENCRYPTION."""
_BEGIN_QUERY_MAX = 512
"""QUERY events larger than this are not read to look for ``BEGIN`` (a BEGIN event is small)."""


@frozen_dataclass
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
    return _plan(path, start, end, lambda cut: cut + split_size)


def plan_partitions(
    ranges: Sequence[tuple[str | os.PathLike[str], int, int | None]],
    count: int,
    *,
    event_cost: int = 0,
) -> list[list[Split]]:
    """The bytes of ``ranges`` (path, start, end) cut into ``count`` partitions of about equal work.

    The ranges are taken as one stream of bytes, in order; partition ``k``
    starts at the first transaction start at or past ``k/count`` of its work,
    so a partition may hold the end of one file and the start of the next
    (each part a :class:`Split` of its own, in order), and a file is cut only
    where a partition boundary falls inside it. Its header walk stops at the
    file's last boundary. The work of a byte is 1, plus ``event_cost`` times
    the events per byte around it (:func:`_work_pieces` samples them; with 0,
    equal work is equal bytes). Fewer partitions come back when the
    boundaries fall into files that cannot be cut, or into one large
    transaction; none for no bytes.
    """
    if count < 1:
        raise ValueError(f"partition count must be positive, not {count}")
    spans = [
        (os.fspath(path), start, os.path.getsize(path) if end is None else end)
        for path, start, end in ranges
    ]
    total = sum(end - start for _, start, end in spans)
    # Partition k (1 <= k < count) is due at byte bound(k) of the stream.
    if event_cost:
        step = max(_SAMPLE_STEP, total // (count * _SAMPLES_PER_PARTITION))
        pieces = [p for span in spans for p in _work_pieces(*span, step, event_cost)]
        bounds = _equal_work_bounds(pieces, count)
    else:
        bounds = [total * k // count for k in range(1, count)]
    partitions: list[list[Split]] = []
    number = -1  # the partition of the last split placed
    at = 0  # where the current range starts in the stream
    for name, start, end in spans:

        def next_due(cut: int, start: int = start, at: int = at) -> int:
            k = bisect.bisect_right(bounds, at + cut - start)
            return start + bounds[k] - at if k < len(bounds) else sys.maxsize

        for split in _plan(name, start, end, next_due):
            k = bisect.bisect_right(bounds, at + split.start - start)
            if k > number:
                partitions.append([])
                number = k
            partitions[-1].append(split)
        at += end - start
    return partitions


def _work_pieces(
    path: str, start: int, end: int, step: int, event_cost: int
) -> list[tuple[int, float]]:
    """Bytes ``start``..``end`` of ``path`` as (length, work per byte) pieces of ``step`` bytes.

    A piece's work per byte is 1 + ``event_cost`` times the events per byte of
    up to :data:`_SAMPLE_BYTES` from its first event start. A file that does
    not qualify for :mod:`~binlogkit.io.resync` (or a piece inside one event)
    counts its bytes alone.
    """
    if end <= start:
        return []
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        checksum = resync_checksum(data, end) if len(data) >= end else None
        if checksum is None:
            return [(end - start, 1.0)]
        pieces = []
        for at in range(start, end, step):
            length = min(step, end - at)
            first = find_event_start(data, max(at, len(MAGIC)), at + _RESYNC_WINDOW, end, checksum)
            density = 0.0
            if first is not None:
                walk = HeaderWalk(data, first, end, until=first + _SAMPLE_BYTES)
                events = sum(1 for _ in walk)
                density = events / (walk.stop - first) if events else 0.0
            pieces.append((length, 1.0 + event_cost * density))
    return pieces


def _equal_work_bounds(pieces: Sequence[tuple[int, float]], count: int) -> list[int]:
    """The stream offsets where ``k/count`` of the work of ``pieces`` is done, k = 1..count-1."""
    total = sum(length * work for length, work in pieces)
    bounds: list[int] = []
    done = 0.0
    at = 0
    for length, work in pieces:
        while len(bounds) < count - 1 and done + length * work >= total * (len(bounds) + 1) / count:
            bounds.append(at + int((total * (len(bounds) + 1) / count - done) / work))
        done += length * work
        at += length
    return bounds + [at] * (count - 1 - len(bounds))


def _plan(
    path: str | os.PathLike[str], start: int, end: int | None, next_due: Callable[[int], int]
) -> list[Split]:
    """The splits of bytes ``start``..``end`` of ``path``, cut at the first transaction start at
    or past each due offset; ``next_due(offset)`` is the next one after a cut (or ``start``)."""
    name = os.fspath(path)
    size = os.path.getsize(name)
    end = size if end is None else end
    if not 0 <= start <= end <= size or 0 < start < len(MAGIC):
        raise BinlogError(
            f"byte range {start}..{end} is not inside the file's {size} bytes", file=name
        )
    if start == end:
        return []
    due = next_due(start)
    if not start and due >= end:
        return [Split(name, 0, end, b"", size)]
    with open(name, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        fde = _format_event(data, name) if start else b""
        cuts = _cut_points(data, start, end, fde, due, next_due) if due < end else []
    bounds = [(start, fde), *cuts]
    return [
        Split(name, first, last, raw, size, i, len(bounds))
        for i, ((first, raw), last) in enumerate(
            zip(bounds, [c[0] for c in cuts] + [end], strict=True)
        )
    ]


def _format_event(data: mmap.mmap, path: str) -> bytes:
    """The raw format description at offset 4 of a v4 binlog (what a read from the middle needs)."""
    size = format_description_size(data, len(data))
    if not size:
        raise BinlogError(
            "cannot read from the middle of this file: no v4 format description at offset 4",
            file=path,
        )
    return data[len(MAGIC) : len(MAGIC) + size]


def _cut_points(
    data: mmap.mmap, start: int, end: int, fde: bytes, due: int, next_due: Callable[[int], int]
) -> list[tuple[int, bytes]]:
    """(offset, format description raw) of each split start after ``start``, before ``end``.

    ``fde`` is the format description in force at ``start`` (empty at 0);
    ``due`` the first offset where a cut may be, ``next_due`` the next after
    each cut. One pass over the event headers up to the last cut, except that
    in a file :func:`~binlogkit.io.resync.resync_checksum` accepts, the walk
    jumps to the first event start at or past a cut due more than
    :data:`_RESYNC_GAP` ahead. A QUERY event is read (to look for ``BEGIN``)
    only where a cut is due.
    """
    if data[:4] != MAGIC:
        return []
    cuts: list[tuple[int, bytes]] = []
    query_post_header, checksum = _format_facts(fde) if fde else (13, 0)
    gtids = False  # a GTID event was met: only GTID events begin transactions in this file
    resync: int | None = None  # the checksum length, once known that the file qualifies
    searched = -1  # the due cut last searched for (not again: the walk goes on instead)
    offset = start or len(MAGIC)
    while True:  # each pass: a jump if one is due, then a walk to the next cut or format change
        if due - offset > _RESYNC_GAP and due != searched and fde:
            if searched < 0:
                resync = resync_checksum(data, end)
            searched = due
            if resync is not None:  # a file whose transactions begin with GTID events
                gtids = True
                found = find_event_start(data, due, due + _RESYNC_WINDOW, end, resync)
                offset = offset if found is None else found
        # The walk ends at damage or a partial last event (the decoder reports them), or where
        # encrypted events begin: no cuts after that.
        for at, code, ev_size in HeaderWalk(data, offset, end):
            offset = at + ev_size
            if code == _FORMAT_DESCRIPTION:
                fde = data[at:offset]
                query_post_header, checksum = _format_facts(fde)
                break
            if not fde:
                return cuts  # an old format: no cuts
            starts = code in GTID_CODES
            gtids = gtids or starts
            if at >= due and (
                starts
                or (
                    code == _QUERY
                    and not gtids
                    and ev_size <= _BEGIN_QUERY_MAX
                    and _is_begin(data[at:offset], query_post_header, checksum)
                )
            ):
                cuts.append((at, fde))
                due = next_due(at)
                if due >= end:
                    return cuts
                break
        else:
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
    statement = raw_statement(raw, post_header, checksum)
    return statement is not None and control(statement) is Control.BEGIN


def split_decoder(
    split: Split,
    options: DecodeOptions | None = None,
    schema: SchemaSource | None = None,
    *,
    decrypted: bool = False,
) -> tuple[BinlogDecoder, Event | None]:
    """A decoder ready for the split's first byte, and the format description it was given.

    The format description (None for a split at the file's start) is decoded
    from the split itself (and shown to ``schema``, the decoder's schema
    source); the decoder then expects the bytes from ``start``, decrypted when
    ``decrypted`` says so.
    """
    decoder = BinlogDecoder(file=split.path, options=options, schema=schema, decrypted=decrypted)
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
    split: Split,
    options: DecodeOptions | None = None,
    *,
    schema: SchemaSource | None = None,
    chunk_size: int = _CHUNK,
    keys: KeyFile | None = None,
) -> Iterator[Event]:
    """The decoded events of one split, in order; errors name the file and offset.

    The split's format description is decoded first (not given); then the
    bytes ``start``..``end`` are fed to the decoder, which rebuilds the table
    maps of each transaction from the events inside it (completed by
    ``schema``, which must hold the definitions in force at ``start``).
    ``keys``: the file is read through the decrypting stage with these keys.
    """
    decoder, _ = split_decoder(split, options, schema, decrypted=keys is not None)
    next_event = decoder.next_event
    with _split_input(split, keys) as f:
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


def _split_input(split: Split, keys: KeyFile | None) -> SeekableInputStream:
    """The file of ``split`` at its start, decrypted with ``keys`` when given (cryptography is
    imported then)."""
    stream: SeekableInputStream = FileInputStream(split.path)
    if keys is not None:
        from binlogkit.io.streams.decryption import decrypting

        stream = decrypting(stream, keys, name=split.path)
    if split.start:
        stream.seek(split.start)
    return stream


def is_encrypted(path: str) -> bool:
    """Whether the binlog ``path`` is encrypted: MySQL's (``\\xfdbin``), or MariaDB's (a
    START_ENCRYPTION event after its format description)."""
    with open(path, "rb") as f:
        head = f.read(_HEAD_BYTES)
    if head.startswith(MYSQL_ENCRYPTED_MAGIC):
        return True
    after = len(MAGIC) + format_description_size(head, len(head)) + TYPE_CODE_OFFSET
    return after < len(head) and head[after] == EventType.MARIADB_START_ENCRYPTION


def encrypted_format_event(path: str, keys: KeyFile) -> bytes:
    """The raw format description of an encrypted binlog, decrypted with ``keys``."""
    with _split_input(Split(path, 0, 0, b"", 0), keys) as stream:
        head = stream.read(_HEAD_BYTES)
    size = format_description_size(head, len(head))
    if not size:
        raise BinlogError("no format description after the magic", file=path, offset=len(MAGIC))
    return head[len(MAGIC) : len(MAGIC) + size]
