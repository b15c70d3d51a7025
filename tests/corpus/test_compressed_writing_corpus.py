"""Compressed events written afresh are the bytes the servers wrote.

Every QUERY_COMPRESSED and compressed rows event of the corpus' MariaDB 10.11
``log_bin_compress`` binlogs is taken apart (statement or rows section
uncompressed), then compressed again by binlogkit from its plain twin: the
rows event by :func:`~binlogkit.writer.compression.mariadb_compressed`, the
query by :func:`~binlogkit.writer.compression.mariadb_compressed_query`. The
events encode to exactly the bytes of the file (same header byte, length width
and zlib stream). The same holds for
MySQL's TRANSACTION_PAYLOAD events, compressed again from their inner events.
"""

from __future__ import annotations

from dataclasses import fields, replace

import pytest
from corpus_walk import path

import binlogkit
from binlogkit.binlog.constants import EventType
from binlogkit.binlog.decoder import encode_event
from binlogkit.binlog.events.payload import TransactionPayloadEvent
from binlogkit.binlog.events.query import QueryCompressedEvent, QueryEvent
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.writer.compression import (
    ZstdPayload,
    mariadb_compressed,
    mariadb_compressed_query,
)

pytestmark = pytest.mark.corpus

_PLAIN = {
    EventType.MARIADB_WRITE_ROWS_COMPRESSED_V1: EventType.WRITE_ROWS_V1,
    EventType.MARIADB_UPDATE_ROWS_COMPRESSED_V1: EventType.UPDATE_ROWS_V1,
    EventType.MARIADB_DELETE_ROWS_COMPRESSED_V1: EventType.DELETE_ROWS_V1,
}


@pytest.mark.parametrize("number", [1, 2, 3])
def test_compressed_events_written_again_are_identical(number: int) -> None:
    source = path(f"local-mariadb-10.11/compressed/mysql-bin.00000{number}")
    data = source.read_bytes()
    seen = 0
    with binlogkit.open(str(source), schema=None) as reader:
        for event in reader:
            fmt = reader.decoder.fmt  # type: ignore[union-attr]
            if isinstance(event, RowsEvent) and event.compressed:
                plain = replace(
                    event,
                    header=replace(event.header, type_code=_PLAIN[event.header.type_code]),
                    data=event.rows_data,
                )
                again = mariadb_compressed(plain, min_len=0)
            elif isinstance(event, QueryCompressedEvent):
                values = {f.name: getattr(event, f.name) for f in fields(QueryEvent)}
                header = replace(event.header, type_code=EventType.QUERY)
                plain_query = QueryEvent(**values | {"header": header})
                again = mariadb_compressed_query(plain_query, min_len=0)
            else:
                continue
            written = data[event.header.offset : event.header.end]
            assert encode_event(again, fmt) == written, event.header.offset
            seen += 1
    assert seen >= {1: 7, 2: 78, 3: 3}[number]


@pytest.mark.parametrize(
    "name",
    [
        "blackbeam+rust_mysql_common/test-data/binlogs/transaction_compression.000001",
        "osheroff+mysql-binlog-connector-java/src/test/resources/mysql-bin.compressed",
    ],
)
def test_mysql_payloads_compressed_again_are_identical(name: str) -> None:
    """MySQL 8.0.28/8.0.32 TRANSACTION_PAYLOADs: their inner events compressed again by
    :class:`ZstdPayload` give the very event the server wrote."""
    source = path(name)
    data = source.read_bytes()
    with binlogkit.open(str(source), schema=None) as reader:
        payloads = [e for e in reader if isinstance(e, TransactionPayloadEvent)]
        fmt = reader.decoder.fmt  # type: ignore[union-attr]
    assert payloads
    for event in payloads:
        sink = ZstdPayload()
        sink.write(event.uncompressed())
        again = sink.event(event.header)
        assert encode_event(again, fmt) == data[event.header.offset : event.header.end]
