"""Transports (WL#3283's Binary_log_driver): where a binary log's events come from, by URI.

:func:`create_transport` takes a ``mysql://`` or ``mariadb://`` URL (a live
server), a ``file://`` URL, a path (a file, a directory, an index file, a
glob), a list of paths, or ``-`` (stdin). A transport opens a :class:`Feed`
at a start: ``"oldest"`` (None), ``"now"``, ``(file, offset)``, a GTID set
(MySQL :class:`~binlogkit.gtid.GtidSet`, MariaDB
:class:`~binlogkit.gtid.MariaGtidList`) or a
:class:`~binlogkit.protocol.replication.ResumePoint`. A feed gives each event
with the resume point after it.

Files name a file by its base name (as servers do). Files opened at a GTID
set are read from the start, leaving out the transactions the set holds
(MySQL: its GTIDs; MariaDB: each domain's up to its sequence number), as a
server's GTID dump does. Servers stream through
:class:`~binlogkit.services.replica_stream.BinlogStream`, which reconnects
by itself.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import unquote, urlsplit

from binlogkit.binlog.constants import EventType
from binlogkit.binlog.events import Event
from binlogkit.errors import BinlogError
from binlogkit.gtid import GtidSet, MariaGtid, MariaGtidList
from binlogkit.io.binlog_index import Source, resolve_sources
from binlogkit.io.files import BinlogReader
from binlogkit.pipeline.transactions import Transaction, grouped
from binlogkit.protocol.replication import (
    BINLOG_HEADER_SIZE,
    ExecutedGtids,
    ResumePoint,
    ResumeTracker,
)
from binlogkit.protocol.spec import ConnectionSpec
from binlogkit.services.receiver import Feed
from binlogkit.services.replica_stream import BinlogStream, PointFields, Start
from binlogkit.sources import open_binlog

__all__ = ["FileTransport", "ServerTransport", "Transport", "create_transport"]

Item = tuple[Event, ResumePoint | PointFields]
_PAYLOAD = int(EventType.TRANSACTION_PAYLOAD)


class Transport(ABC):
    """Opens feeds of one source; ``name`` names it (without a password)."""

    name: str

    @abstractmethod
    def open(self, start: Start | None) -> Feed:
        """A feed from ``start`` (None: the source's default)."""


def create_transport(source: Source | Transport, **options: Any) -> Transport:
    """The transport of ``source`` (see the module doc; a transport is itself); ``options`` go
    to :func:`binlogkit.open` (decoding options, ``follow`` and ``schema`` for files,
    ``server_id``, ``blocking`` ... for servers)."""
    if isinstance(source, Transport):
        if options:
            raise ValueError(f"options {sorted(options)} are for a source, not a transport")
        return source
    if isinstance(source, str):
        scheme = urlsplit(source).scheme
        if scheme in ("mysql", "mariadb"):
            return ServerTransport(source, **options)
        if scheme == "file":
            return FileTransport(unquote(urlsplit(source).path), **options)
    return FileTransport(source, **options)


class ServerTransport(Transport):
    """A live server's binlog stream (``mysql://`` or ``mariadb://``)."""

    def __init__(self, url: str, **options: Any) -> None:
        if "server_id" not in options:
            raise ValueError("a server stream needs server_id= (the replica id to register)")
        self.url = url
        self.options = options
        self.name = f"{urlsplit(url).scheme}://{ConnectionSpec.from_url(url).address}"

    def open(self, start: Start | None) -> Feed:
        options = self.options if start is None else {**self.options, "start": start}
        stream = open_binlog(self.url, **options)
        assert isinstance(stream, BinlogStream)
        return _StreamFeed(stream)


class _StreamFeed:
    def __init__(self, stream: BinlogStream) -> None:
        self.stream = stream

    def __iter__(self) -> Iterator[Item]:
        return self.stream.located()

    def abort(self) -> None:
        self.stream.abort()

    def close(self) -> None:
        self.stream.close()


class FileTransport(Transport):
    """Binlog files (or stdin); opening again reads them again, from the start asked for."""

    def __init__(self, source: Source, **options: Any) -> None:
        self.source = source
        self.options = options
        self.name = os.fspath(source) if isinstance(source, str | os.PathLike) else str(source)

    def open(self, start: Start | None) -> Feed:
        paths = resolve_sources(self.source)
        gtids: ExecutedGtids | None = None
        offset: int | None = None
        if isinstance(start, ResumePoint):
            gtids = start.gtids
            if start.file:
                start = (start.file, start.position)
        if isinstance(start, tuple):
            paths = paths[_index_of(paths, start[0]) :]
            offset = start[1]
        elif start == "now":
            paths = paths[-1:]
            if paths[0] != "-":
                offset = max(BINLOG_HEADER_SIZE, os.path.getsize(paths[0]))
        elif isinstance(start, GtidSet | MariaGtidList):
            gtids = start
        elif start not in (None, "oldest"):
            raise ValueError(f"cannot start reading files at {start!r}")
        reader = open_binlog(paths, start_position=offset, **self.options)
        assert isinstance(reader, BinlogReader)
        tracker = ResumeTracker(_name(paths[0]), offset or BINLOG_HEADER_SIZE, gtids)
        skip = gtids if isinstance(start, GtidSet | MariaGtidList) else None
        return _FileFeed(reader, tracker, skip)


def _name(path: str) -> str:
    return os.path.basename(path)


def _index_of(paths: list[str], file: str) -> int:
    for index, path in enumerate(paths):
        if _name(path) == file:
            return index
    names = ", ".join(_name(path) for path in paths[:5])
    raise BinlogError(
        f"{file} is not one of the files of this source",
        hint=f"name one of {names}{' ...' if len(paths) > 5 else ''}",
    )


class _FileFeed:
    """The events of a file reader, each with its resume point (files named by base name)."""

    def __init__(self, reader: BinlogReader, tracker: ResumeTracker, skip: ExecutedGtids | None):
        self.reader = reader
        self.tracker = tracker
        self.skip = skip
        self._payload_end = -1  # the end of the TRANSACTION_PAYLOAD whose events come next

    def __iter__(self) -> Iterator[Item]:
        events: Iterable[Event] = self.reader
        if self.skip is not None:
            events = _unexecuted(events, self.skip)
        tracker = self.tracker
        path = name = ""
        for event in events:
            header = event.header
            code = header.type_code
            if header.log_pos or header.offset != self._payload_end:  # not inside a payload
                if code == _PAYLOAD:
                    self._payload_end = header.end
                if header.file != path:
                    path = header.file or ""
                    name = tracker.file = _name(path)
                tracker.position = header.end
            tracker.take(event, code)
            yield event, (name, tracker.position, tracker.gtids, not tracker.open)

    def abort(self) -> None:
        self.reader.abort()

    def close(self) -> None:
        self.reader.close()


def _unexecuted(events: Iterable[Event], gtids: ExecutedGtids) -> Iterator[Event]:
    """``events`` without the transactions ``gtids`` holds."""
    if isinstance(gtids, GtidSet):
        executed = gtids.__contains__
    else:
        position = gtids.position()

        def executed(gtid: object) -> bool:
            return isinstance(gtid, MariaGtid) and position.includes(gtid)

    for item in grouped(events):
        if not isinstance(item, Transaction):
            yield item
        elif item.gtid is None or not executed(item.gtid):
            yield from item.events()
