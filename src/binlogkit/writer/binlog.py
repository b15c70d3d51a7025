"""A series of binlog files, as a server writes them: numbered files, an index, ROTATE, STOP."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from binlogkit.binlog.constants import MAGIC, EventType, Flavor
from binlogkit.binlog.context import DecodeContext
from binlogkit.binlog.decoder import decode_frame
from binlogkit.binlog.events import Event, FormatDescriptionEvent, RotateEvent, StopEvent
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.binlog.header import EventHeader
from binlogkit.binlog.tables import Table
from binlogkit.errors import BinlogError, EncryptedBinlogError
from binlogkit.gtid import Gtid, MariaGtid
from binlogkit.io.binlog_end import scan_to_end
from binlogkit.io.binlog_index import (
    add_to_index,
    binlog_name,
    index_name,
    next_binlog_name,
    read_index,
)
from binlogkit.io.streams.cache import MEMORY_SIZE
from binlogkit.schema.model import TableDef
from binlogkit.writer.binlog_file import ENDING_TYPES as _ENDING_TYPES
from binlogkit.writer.binlog_file import BinlogFileWriter
from binlogkit.writer.format import format_description
from binlogkit.writer.table_maps import table_map_for
from binlogkit.writer.transaction import Transaction

if TYPE_CHECKING:
    from binlogkit.io.key_files import BinlogEncryption

__all__ = ["BinlogWriter", "default_base_name"]


def default_base_name(kind: Literal["binlog", "relay"], flavor: Flavor) -> str:
    """The base name a server gives its binlogs or relay logs when none is configured:
    MySQL 8.0 ``binlog``, MariaDB ``HOST-bin``; relay logs ``HOST-relay-bin`` on both."""
    host = socket.gethostname().split(".")[0]
    if kind == "relay":
        return f"{host}-relay-bin"
    return "binlog" if flavor is Flavor.MYSQL else f"{host}-bin"


_KEPT_TABLES = 64
"""Table maps whose row plans a writer keeps (:meth:`BinlogWriter.row_table`)."""


class BinlogWriter:
    """Writes binlog files ``BASE.000001``, ``BASE.000002`` ... in ``directory``, listed in
    ``BASE.index``; a context manager (leaving it ends the file with STOP).

    Make one with :meth:`create` (a new series) or :meth:`open` (continue the last
    file of an existing one). Each file starts with ``fde`` (its timestamp set to
    the time the file starts); :meth:`rotate` ends the file with a ROTATE naming the
    next one, :meth:`close` with a STOP. Events the writer makes (FDE, ROTATE, STOP)
    carry ``server_id`` and the time ``clock`` gives.
    """

    def __init__(
        self,
        directory: Path,
        current: BinlogFileWriter,
        *,
        server_id: int,
        clock: Callable[[], float],
        sync: bool,
    ) -> None:
        self.directory = directory
        self.current = current
        self.server_id = server_id
        self.clock = clock
        self.sync = sync
        self.encryption: BinlogEncryption | None = None
        """How the files this writer starts are encrypted (None: they are not)."""
        self._sequence = (current.path, 0)
        self._tables: dict[int, tuple[TableMapEvent, Table]] = {}
        """Row plans of the table maps rows were written for, kept across transactions."""

    @classmethod
    def create(
        cls,
        directory: str | os.PathLike[str],
        base: str,
        *,
        fde: FormatDescriptionEvent | None = None,
        flavor: Flavor = Flavor.MARIADB,
        server_id: int = 1,
        clock: Callable[[], float] = time.time,
        sync: bool = False,
        encryption: BinlogEncryption | None = None,
    ) -> BinlogWriter:
        """Start a new series with ``BASE.000001``; ``fde`` defaults to ``flavor``'s.

        ``encryption``: every file is encrypted (MariaDB's ``encrypt_binlog``);
        :meth:`open` continues such a series given the same key.
        """
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        first = binlog_name(base, 1)
        index = folder / index_name(first)
        if index.exists() and read_index(index):
            raise BinlogError(
                f"{index.name} already lists binlogs",
                file=str(index),
                hint="continue them with BinlogWriter.open, or write into another folder",
            )
        if fde is None:
            fde = format_description(flavor, server_id=server_id)
        current = cls._start(folder, first, fde, clock, sync, encryption)
        writer = cls(folder, current, server_id=server_id, clock=clock, sync=sync)
        writer.encryption = encryption
        return writer

    @classmethod
    def open(
        cls,
        directory: str | os.PathLike[str],
        base: str,
        *,
        server_id: int = 1,
        clock: Callable[[], float] = time.time,
        sync: bool = False,
        encryption: BinlogEncryption | None = None,
    ) -> BinlogWriter:
        """Continue the last binlog ``BASE.index`` lists: after its last complete event, or in
        a new file after it when a STOP or ROTATE ended it.

        ``encryption``: the binlog key of an encrypted series (an encrypted file is
        continued encrypted, see :meth:`BinlogFileWriter.append`); the files the
        writer starts are encrypted with it."""
        folder = Path(directory)
        index = folder / f"{base}.index"
        names = read_index(index) if index.exists() else []
        if not names:
            raise BinlogError(
                f"no binlogs listed in {index}", hint="start a series with BinlogWriter.create"
            )
        last = folder / names[-1]
        end = _ending_event(last, encryption)
        if end is None:
            current = BinlogFileWriter.append(last, sync=sync, encryption=encryption)
        else:
            fde, next_name = end
            current = cls._start(folder, next_name, fde, clock, sync, encryption)
        writer = cls(folder, current, server_id=server_id, clock=clock, sync=sync)
        writer.encryption = encryption
        return writer

    @staticmethod
    def _start(
        folder: Path,
        name: str,
        fde: FormatDescriptionEvent,
        clock: Callable[[], float],
        sync: bool,
        encryption: BinlogEncryption | None = None,
    ) -> BinlogFileWriter:
        stamp = int(clock())
        fde = replace(fde, header=replace(fde.header, timestamp=stamp))
        writer = BinlogFileWriter.create(folder / name, fde, sync=sync, encryption=encryption)
        add_to_index(folder, name, sync=sync)
        return writer

    # -- writing ------------------------------------------------------------------------

    @property
    def file(self) -> Path:
        """The file being written."""
        return self.current.path

    @property
    def position(self) -> int:
        """Where the next event starts in :attr:`file`."""
        return self.current.position

    def write(self, event: Event) -> EventHeader:
        """Append ``event`` to the current file; returns its header as written.

        A ROTATE or STOP written here ends the file as :meth:`rotate` and
        :meth:`close` do (the next write starts the next file).
        """
        return self.writable().write(event)

    def writable(self) -> BinlogFileWriter:
        """The file to write into: the current one, or the next once a STOP or ROTATE ended it."""
        if self.current.ended:
            self.current = self._start(
                self.directory,
                next_binlog_name(self.current.path.name),
                self.current.format_description,
                self.clock,
                self.sync,
                self.encryption,
            )
        return self.current

    def rotate(self) -> Path:
        """End the current file with a ROTATE and start the next; returns the new file."""
        name = next_binlog_name(self.current.path.name)
        header = self.header(EventType.ROTATE)
        self.write(RotateEvent(header, len(MAGIC), name))
        self.current = self._start(
            self.directory,
            name,
            self.current.format_description,
            self.clock,
            self.sync,
            self.encryption,
        )
        return self.current.path

    def table_map(self, definition: TableDef, table_id: int, *, full: bool = True) -> TableMapEvent:
        """The TABLE_MAP of ``definition`` as this binlog's server logs it (see
        :func:`~binlogkit.writer.table_maps.table_map_for`), for :meth:`Transaction.rows`."""
        header = self.header(EventType.TABLE_MAP)
        version = self.current.fmt.server_version
        return table_map_for(definition, header, version, table_id=table_id, full=full)

    def row_table(self, table: TableMapEvent) -> Table:
        """The rows side of ``table`` (its row plans, their generated writers), built once for
        all the transactions that write rows of that very map (the last 64 maps are kept)."""
        cached = self._tables.get(id(table))
        if cached is not None and cached[0] is table:
            return cached[1]
        if len(self._tables) >= _KEPT_TABLES:
            del self._tables[next(iter(self._tables))]
        rows_side = Table(table)
        self._tables[id(table)] = (table, rows_side)
        return rows_side

    def transaction(
        self,
        gtid: MariaGtid | Gtid | None = None,
        *,
        xid: int = 0,
        memory_size: int = MEMORY_SIZE,
        compress: bool = False,
    ) -> Transaction:
        """A transaction to fill with row changes, written whole at its commit
        (see :class:`~binlogkit.writer.transaction.Transaction`)."""
        return Transaction(self, gtid=gtid, xid=xid, memory_size=memory_size, compress=compress)

    def next_sequence_number(self) -> int:
        """The logical clock of MySQL GTID events: 1, 2, ... in each file, one transaction
        after the other (each one's ``last_committed`` is the one before)."""
        path, number = self._sequence
        number = number + 1 if path == self.current.path else 1
        self._sequence = (self.current.path, number)
        return number

    def flush(self) -> None:
        self.current.flush()

    def close(self) -> None:
        """End the current file with a STOP event (unless a STOP or ROTATE ended it)."""
        if not self.current.ended:
            self.current.write(StopEvent(self.header(EventType.STOP)))

    def abandon(self) -> None:
        """Stop writing and leave the current file in use, as a crash would (without a
        partial event): :meth:`open` continues it."""
        self.current.close()

    def header(self, type_code: int, flags: int = 0) -> EventHeader:
        """A header for an event of ``type_code`` the writer makes: its server id, the time now."""
        return EventHeader(int(self.clock()), type_code, self.server_id, 0, 0, flags)

    def __enter__(self) -> BinlogWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abandon()


def _ending_event(
    path: Path, encryption: BinlogEncryption | None
) -> tuple[FormatDescriptionEvent, str] | None:
    """For a binlog a STOP or ROTATE ended: its format description and the next file's name."""
    try:
        scanned = scan_to_end(path, keys=None if encryption is None else encryption.keys())
    except EncryptedBinlogError:
        if encryption is not None:
            raise
        return None  # BinlogFileWriter.append says what it needs
    first, last = scanned.first, scanned.last
    if first is None or last is None or last.header.type_code not in _ENDING_TYPES:
        return None
    fde = decode_frame(first, DecodeContext())
    if not isinstance(fde, FormatDescriptionEvent):
        raise BinlogError("not a v4 binlog: no format description", file=str(path))
    ending = decode_frame(last, DecodeContext(fmt=last.fmt))
    if isinstance(ending, RotateEvent):
        return fde, ending.next_file
    return fde, next_binlog_name(path.name)
