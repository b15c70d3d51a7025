"""Compressed transactions as the servers write them.

- MySQL (``binlog_transaction_compression=ON``, 8.0.20+): the events of a
  transaction after its GTID event (BEGIN, table maps, rows events, XID) go
  into one TRANSACTION_PAYLOAD event, each encoded without its checksum and
  with ``log_pos`` 0, compressed as one zstd frame (level 3, flushed and then
  ended as MySQL does, so the payload is byte for byte MySQL's). The GTID
  event's ``transaction_length`` counts the GTID event and the payload event.
  :class:`ZstdPayload` compresses the events as they are handed to it, from a
  binlog cache too, so the uncompressed transaction is never held whole.
- MariaDB (``log_bin_compress=ON``): each rows event whose rows section takes
  at least ``log_bin_compress_min_len`` bytes (256 by default) is logged as its
  compressed type (WRITE_ROWS_COMPRESSED_V1 ...): the rows section behind
  MariaDB's header byte and length, as zlib data (``binlog_buf_compress`` in
  sql/log_event_server.cc); :func:`mariadb_compressed` makes that event. A
  statement that long is logged as QUERY_COMPRESSED
  (:func:`mariadb_compressed_query`).
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import TYPE_CHECKING, TypeVar

from binlogkit.binlog import mariadb_compression
from binlogkit.binlog.constants import EventType
from binlogkit.binlog.events.payload import CompressionType, TransactionPayloadEvent
from binlogkit.binlog.events.query import QueryCompressedEvent, QueryEvent
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.binlog.header import EventHeader
from binlogkit.io.streams import OutputStream

if TYPE_CHECKING:
    import zstandard

__all__ = [
    "MARIADB_COMPRESS_MIN_LEN",
    "ZSTD_LEVEL",
    "ZstdPayload",
    "mariadb_compressed",
    "mariadb_compressed_query",
]

MARIADB_COMPRESS_MIN_LEN = 256
"""MariaDB's default ``log_bin_compress_min_len``."""
ZSTD_LEVEL = 3
"""MySQL's default ``binlog_transaction_compression_level_zstd``."""

_E = EventType
_MARIADB_COMPRESSED = {
    _E.WRITE_ROWS_V1: _E.MARIADB_WRITE_ROWS_COMPRESSED_V1,
    _E.UPDATE_ROWS_V1: _E.MARIADB_UPDATE_ROWS_COMPRESSED_V1,
    _E.DELETE_ROWS_V1: _E.MARIADB_DELETE_ROWS_COMPRESSED_V1,
    _E.WRITE_ROWS: _E.MARIADB_WRITE_ROWS_COMPRESSED,
    _E.UPDATE_ROWS: _E.MARIADB_UPDATE_ROWS_COMPRESSED,
    _E.DELETE_ROWS: _E.MARIADB_DELETE_ROWS_COMPRESSED,
}

R = TypeVar("R", bound=RowsEvent)


def mariadb_compressed(event: R, min_len: int = MARIADB_COMPRESS_MIN_LEN) -> R:
    """``event`` as MariaDB logs it with ``log_bin_compress``: of its compressed type, when its
    rows section takes ``min_len`` bytes or more (else unchanged)."""
    code = _MARIADB_COMPRESSED.get(EventType(event.header.type_code))
    if code is None or len(event.data) < min_len:
        return event
    header = replace(event.header, type_code=code)
    return replace(event, header=header, data=mariadb_compression.compress(event.data))


def mariadb_compressed_query(
    event: QueryEvent, min_len: int = MARIADB_COMPRESS_MIN_LEN
) -> QueryEvent:
    """A QUERY as MariaDB logs it with ``log_bin_compress``: a QUERY_COMPRESSED when its
    statement takes ``min_len`` bytes or more (else unchanged)."""
    if type(event) is not QueryEvent or len(event.query) < min_len:
        return event
    header = replace(event.header, type_code=EventType.MARIADB_QUERY_COMPRESSED)
    values = {f.name: getattr(event, f.name) for f in fields(QueryEvent)}
    compressed = mariadb_compression.compress(event.query)
    return QueryCompressedEvent(**values | {"header": header}, compressed=compressed)


class ZstdPayload(OutputStream):
    """Gathers a transaction's inner events (already encoded) into one zstd frame;
    :meth:`event` gives the TRANSACTION_PAYLOAD that carries them."""

    def __init__(self, level: int = ZSTD_LEVEL) -> None:
        import zstandard  # only compressed MySQL transactions need it (start-up time)

        self._compressor: zstandard.ZstdCompressionObj = zstandard.ZstdCompressor(
            level=level
        ).compressobj()
        self._out: list[bytes] = []
        self._size = 0

    @property
    def position(self) -> int:
        return self._size

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self._size += len(data)
        self._out.append(self._compressor.compress(bytes(data)))

    def truncate(self, offset: int) -> None:
        raise ValueError("compressed events cannot be taken back")

    def event(self, header: EventHeader) -> TransactionPayloadEvent:
        """The payload event (under ``header``) of everything written; no more writes after."""
        import zstandard

        # As MySQL ends it (ZSTD_e_flush, then ZSTD_e_end: an empty last block): the same bytes.
        self._out.append(self._compressor.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK))
        self._out.append(self._compressor.flush())
        header = replace(header, type_code=EventType.TRANSACTION_PAYLOAD)
        payload = b"".join(self._out)
        return TransactionPayloadEvent(header, CompressionType.ZSTD, self._size, payload)
