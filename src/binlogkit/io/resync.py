"""Finding event starts in the middle of a binlog file without walking to them.

A server writes into each event's header where the event ends in the file
(the next position) and, with checksums on, a CRC32 of the event. So an offset
is an event start when the event there ends where its header says, its
checksum holds, and the same is true of the events after it:
:func:`find_event_start` scans forward from any offset to the first such
place. Cutting a big file into splits, or finding where the complete
transactions of an active file end, then reads near each cut instead of
every event header before it.

Only a file as its server wrote it qualifies (:func:`resync_checksum`): a
relay log carries its primary's positions, a file may change format or be
encrypted after its start, and a binlog whose transactions begin with
``BEGIN`` rather than a GTID event cannot be cut where one starts without
knowing the event before. Such files are walked from their start as before.
"""

from __future__ import annotations

from itertools import islice
from typing import Protocol

from binlogkit.binlog.constants import MAGIC, V4_HEADER_LENGTH, EventType
from binlogkit.binlog.decoder import BinlogDecoder
from binlogkit.binlog.framing import crc32_ok
from binlogkit.binlog.header import (
    SIZE_AND_LOG_POS,
    SIZES_STOP_AFTER,
    HeaderWalk,
    format_description_size,
)
from binlogkit.binlog.transactions import GTID_CODES
from binlogkit.errors import BinlogError

__all__ = ["find_event_start", "resync_checksum"]

_CHAIN = 4
"""Events checked from a candidate start (fewer only where the bytes end)."""
_PREFIX_EVENTS = 64
"""Events read from the file's start looking for its first GTID event."""
_NOT_BEFORE_FIRST_GTID = SIZES_STOP_AFTER | frozenset(
    int(code)
    for code in (
        EventType.ROTATE,  # a relay log: the primary's events follow
        EventType.FORMAT_DESCRIPTION,  # a second one: the format may change in the file
        EventType.QUERY,  # a transaction (or DDL) without a GTID event
    )
)


class Buffer(Protocol):
    """What the functions read: ``bytes``, ``mmap`` or ``memoryview`` of a file."""

    def __getitem__(self, index: slice) -> bytes: ...
    def __len__(self) -> int: ...


def resync_checksum(data: Buffer, end: int) -> int | None:
    """The checksum length (0 or 4) of a file whose events :func:`find_event_start` can find.

    ``data`` is the file, ``end`` where its readable bytes end. The file
    qualifies when it is a v4 binlog whose first events (format description,
    GTID lists, checkpoints) end where their headers say, with valid
    checksums, up to a GTID event that begins its first transaction. None
    otherwise: the caller walks the file from its start.
    """
    fde_size = format_description_size(data, end)
    if not fde_size:
        return None
    decoder = BinlogDecoder()
    decoder.receive_data(data[: len(MAGIC) + fde_size])
    try:
        decoder.next_event()
    except BinlogError:
        return None  # the walk, then the decoder, report the damage
    checksum = decoder.fmt.checksum_length
    walk = HeaderWalk(data, len(MAGIC) + fde_size, end)
    for offset, code, _ in islice(walk, _PREFIX_EVENTS):
        if not _whole_event(data, offset, end, checksum):
            return None
        if code in GTID_CODES:
            return checksum
        if code in _NOT_BEFORE_FIRST_GTID:
            return None
    return None


def find_event_start(data: Buffer, low: int, high: int, end: int, checksum: int) -> int | None:
    """The first event start at or past ``low`` and before ``high``; None if there is none.

    ``end`` is where the file's bytes end (no event may pass it), ``checksum``
    the length :func:`resync_checksum` gave. An offset counts when
    :data:`_CHAIN` events from it (fewer where the bytes end first) each end
    at the next position their header gives and, with checksums, carry a
    matching CRC32. In a file as its server wrote it every event start
    passes, so the result is the first event start at or past ``low`` that
    a walk from the file's start reaches; where a damaged or altered event
    does not check out, the starts just before it are passed over too.
    """
    unpack = SIZE_AND_LOG_POS.unpack_from
    window = data[low : min(high, end - V4_HEADER_LENGTH + 1) + V4_HEADER_LENGTH - 1]
    for at in range(len(window) - V4_HEADER_LENGTH + 1):
        size, next_position = unpack(window, at)
        if (low + at + size) & 0xFFFFFFFF == next_position and _chain_holds(
            data, low + at, end, checksum
        ):
            return low + at
    return None


def _chain_holds(data: Buffer, offset: int, end: int, checksum: int) -> bool:
    """Whether the event at ``offset`` and up to :data:`_CHAIN` - 1 after it are whole and
    check out; the chain may stop early only where the bytes end (a partial last event)."""
    size = _whole_event(data, offset, end, checksum)
    for _ in range(_CHAIN - 1):
        if not size:
            return False
        offset += size
        if offset + V4_HEADER_LENGTH > end:
            return True  # the bytes end inside a header
        length, next_position = SIZE_AND_LOG_POS.unpack_from(data, offset)
        if offset + length > end:  # a partial last event, if its header is one
            return bool((offset + length) & 0xFFFFFFFF == next_position)
        size = _whole_event(data, offset, end, checksum)
    return bool(size)


def _whole_event(data: Buffer, offset: int, end: int, checksum: int) -> int:
    """The size of the event at ``offset`` when it is whole and checks out, else 0.

    It checks out when it fits before ``end``, its header's next position is
    its end (modulo 2**32, as servers write it) and, with checksums, its CRC32
    matches.
    """
    if offset + V4_HEADER_LENGTH > end:
        return 0
    size, next_position = SIZE_AND_LOG_POS.unpack_from(data, offset)
    if size < V4_HEADER_LENGTH + checksum or offset + size > end:
        return 0
    if (offset + size) & 0xFFFFFFFF != next_position:
        return 0
    if checksum and not crc32_ok(data[offset : offset + size]):
        return 0
    return int(size)
