"""Whole transactions written from row changes, through a binlog cache.

A :class:`Transaction` gathers its table maps and rows events in a
:class:`~binlogkit.io.streams.BinlogCache` (in memory, on disk past its size,
so a transaction may be larger than memory) and writes them at commit, framed
as the flavour of the binlog frames a transaction:

- MariaDB: a GTID event (transactional, parallel-safe), the events, an XID.
- MySQL: a GTID event (anonymous without a GTID; logical clock, commit time,
  transaction length, server version), a ``BEGIN`` query, the events, an XID.

Each :meth:`Transaction.rows` call is one statement: its table map, then its
rows events (``rows_per_event`` rows each), the last flagged STMT_END.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Literal

from binlogkit.binlog.constants import ChecksumAlg, EventFlag, EventType, Flavor
from binlogkit.binlog.context import FormatContext, parse_version
from binlogkit.binlog.decoder import encode_event
from binlogkit.binlog.events import EVENT_CODECS, Event
from binlogkit.binlog.events.control import XidEvent
from binlogkit.binlog.events.gtid import AnonymousGtidEvent, GtidEvent
from binlogkit.binlog.events.mariadb_gtid import MariaGtidEvent, MariaGtidFlag
from binlogkit.binlog.events.payload import TransactionPayloadEvent
from binlogkit.binlog.events.query import QueryEvent, QueryStatus
from binlogkit.binlog.events.rows import RowsEvent, RowsFlag
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.binlog.rows.plan import RowChange
from binlogkit.errors import BinlogError
from binlogkit.gtid import Gtid, MariaGtid
from binlogkit.io.streams import BinlogCache
from binlogkit.io.streams.cache import MEMORY_SIZE
from binlogkit.writer.binlog_file import encode_at
from binlogkit.writer.compression import MARIADB_COMPRESS_MIN_LEN, ZstdPayload, mariadb_compressed

if TYPE_CHECKING:
    from binlogkit.writer.binlog import BinlogWriter

__all__ = ["ROWS_PER_EVENT", "Change", "Transaction"]

Change = Literal["insert", "update", "delete"]
ROWS_PER_EVENT = 100
_ROWS_TYPES: dict[Flavor, dict[Change, int]] = {
    Flavor.MARIADB: {
        "insert": EventType.WRITE_ROWS_V1,
        "update": EventType.UPDATE_ROWS_V1,
        "delete": EventType.DELETE_ROWS_V1,
    },
    Flavor.MYSQL: {
        "insert": EventType.WRITE_ROWS,
        "update": EventType.UPDATE_ROWS,
        "delete": EventType.DELETE_ROWS,
    },
}
"""The rows event types each flavour writes (MariaDB logs v1 rows events, MySQL v2)."""
_MARIADB_DML = MariaGtidFlag.TRANSACTIONAL | MariaGtidFlag.ALLOW_PARALLEL


class Transaction:
    """One transaction of ``writer``'s binlog, written at :meth:`commit`; a context manager
    that commits on success and drops everything on an exception.

    ``gtid``: a MariaDB ``MariaGtid`` (its server id goes into the GTID event's
    header) or a MySQL ``Gtid``; None: MySQL writes an anonymous GTID event,
    MariaDB refuses (its GTID event carries no anonymous form). ``xid``: the
    XID event's transaction id. ``compress``: written as the flavour compresses
    transactions (see :mod:`~binlogkit.writer.compression`): MySQL one
    TRANSACTION_PAYLOAD after the GTID event, MariaDB each rows event of at least
    ``compress_min_len`` bytes of rows as its compressed type.
    """

    def __init__(
        self,
        writer: BinlogWriter,
        *,
        gtid: MariaGtid | Gtid | None,
        xid: int = 0,
        memory_size: int = MEMORY_SIZE,
        directory: str | None = None,
        compress: bool = False,
        compress_min_len: int = MARIADB_COMPRESS_MIN_LEN,
    ) -> None:
        self.writer = writer
        self.flavor = writer.current.fmt.flavor
        if self.flavor is Flavor.MARIADB and not isinstance(gtid, MariaGtid):
            raise BinlogError(f"a MariaDB binlog transaction needs a MariaGtid, not {gtid!r}")
        if self.flavor is Flavor.MYSQL and (isinstance(gtid, MariaGtid) or (gtid and gtid.tag)):
            raise BinlogError(f"a MySQL binlog transaction takes an untagged Gtid, not {gtid!r}")
        self.gtid = gtid
        self.xid = xid
        self.cache = BinlogCache(memory_size, directory)
        self.compress = compress
        self.compress_min_len = compress_min_len
        self._inner_fmt: FormatContext | None = None
        """MySQL compressed: the format of the events inside the payload (no checksums)."""
        if compress and self.flavor is Flavor.MYSQL:
            self._inner_fmt = replace(writer.current.fmt, checksum=ChecksumAlg.OFF)
        self._done = False

    def write(self, event: Event) -> None:
        """Add one event as it is (its position is set at commit)."""
        if self._done:
            raise BinlogError("the transaction is already committed or dropped")
        if self._inner_fmt is not None:
            self.cache.write(encode_event(event, self._inner_fmt))
        else:
            self.cache.write(encode_at(event, self.writer.current.fmt, self.cache.position))

    def rows(
        self,
        table: TableMapEvent,
        change: Change,
        changes: Sequence[RowChange],
        *,
        rows_per_event: int = ROWS_PER_EVENT,
    ) -> None:
        """One statement: ``table``'s map, then rows events of ``change`` holding ``changes``
        (``before`` for deletes and updates, ``after`` for inserts and updates)."""
        if not changes:
            return
        code = _ROWS_TYPES[self.flavor][change]
        cls = EVENT_CODECS[code]
        assert issubclass(cls, RowsEvent)
        self.write(table.with_header(self.writer.header(EventType.TABLE_MAP)))
        plans = self.writer.row_table(table)  # its row plans, kept across transactions
        pad = self.flavor is Flavor.MARIADB  # MariaDB sets the NULL bitmaps' unused bits
        for start in range(0, len(changes), rows_per_event):
            chunk = changes[start : start + rows_per_event]
            last = start + rows_per_event >= len(changes)
            flags = RowsFlag.STMT_END if last else 0
            event = cls.from_rows(
                self.writer.header(code), chunk, table=plans, flags=flags, null_padding=pad
            )
            if self.compress and self.flavor is Flavor.MARIADB:
                event = mariadb_compressed(event, self.compress_min_len)
            self.write(event)

    def commit(self) -> None:
        """Write the transaction into the binlog (starting the next file if one ended); once
        this returns, readers of the file see it (and with ``sync`` it is on disk)."""
        if self._done:
            raise BinlogError("the transaction is already committed or dropped")
        file = self.writer.writable()
        xid = XidEvent(self.writer.header(EventType.XID), self.xid)
        if isinstance(self.gtid, MariaGtid):
            file.write(self._maria_gtid(self.gtid))
            file.write_cache(self.cache)
            file.write(xid)
        elif self._inner_fmt is not None:
            payload = self._payload(self._begin(), xid)
            file.write(self._mysql_gtid(self.gtid, len(encode_at(payload, file.fmt, 0))))
            file.write(payload)
        else:
            begin = self._begin()
            rest = len(encode_at(begin, file.fmt, 0)) + self.cache.length()
            rest += len(encode_at(xid, file.fmt, 0))
            file.write(self._mysql_gtid(self.gtid, rest))
            file.write(begin)
            file.write_cache(self.cache)
            file.write(xid)
        file.persist()
        self.close()

    def _payload(self, begin: QueryEvent, xid: XidEvent) -> TransactionPayloadEvent:
        """BEGIN, the cached events and the XID, compressed into one TRANSACTION_PAYLOAD."""
        assert self._inner_fmt is not None
        sink = ZstdPayload()
        sink.write(encode_event(begin, self._inner_fmt))
        self.cache.copy_to(sink)
        sink.write(encode_event(xid, self._inner_fmt))
        return sink.event(self.writer.header(EventType.TRANSACTION_PAYLOAD))

    def close(self) -> None:
        """Drop what was not committed; the cache's temporary file goes too."""
        self._done = True
        self.cache.close()

    def _maria_gtid(self, gtid: MariaGtid) -> MariaGtidEvent:
        header = self.writer.header(EventType.MARIADB_GTID, EventFlag.SUPPRESS_USE)
        header = replace(header, server_id=gtid.server_id)
        return MariaGtidEvent(header, gtid.seq_no, gtid.domain_id, _MARIADB_DML)

    def _begin(self) -> QueryEvent:
        header = self.writer.header(EventType.QUERY)
        return QueryEvent(header, 0, 0, 0, QueryStatus(), "", b"BEGIN")

    def _mysql_gtid(self, gtid: Gtid | None, rest: int) -> GtidEvent:
        """The GTID event of a transaction whose other events take ``rest`` bytes."""
        file = self.writer.current
        major, minor, patch = parse_version(file.fmt.server_version)
        version = major * 10000 + minor * 100 + patch
        sequence = self.writer.next_sequence_number()
        now_us = int(self.writer.clock() * 1_000_000)
        cls: type[GtidEvent] = GtidEvent if gtid else AnonymousGtidEvent
        header = self.writer.header(EventType.GTID if gtid else EventType.ANONYMOUS_GTID)
        source, gno = (gtid.uuid, gtid.gno) if gtid else (uuid.UUID(int=0), 0)
        length = rest
        while True:  # the length counts the GTID event itself, whose size depends on it
            event = cls(
                header,
                flags=0,  # rows only: no statement-based changes in it
                uuid=source,
                gno=gno,
                lt_type=2,
                last_committed=sequence - 1,
                sequence_number=sequence,
                immediate_commit_timestamp=now_us,
                original_commit_timestamp=now_us,
                transaction_length=length,
                immediate_server_version=version,
                original_server_version=version,
            )
            total = rest + len(encode_at(event, file.fmt, 0))
            if total == length:
                return event
            length = total

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        if exc_type is None and not self._done:
            self.commit()
        else:
            self.close()
