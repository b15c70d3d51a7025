"""Running a dump: the events of its input, through the selection, printed by a :class:`Dumper`.

The input is binlog files (:class:`FileSource`) or a server
(:class:`~binlogkit.dump.remote.RemoteSource`); :func:`dump` prints what the
selection keeps as the tools do, :func:`dump_flashback` its undo.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from typing import Any, Protocol

from binlogkit.binlog.constants import Flavor
from binlogkit.binlog.context import FormatContext
from binlogkit.binlog.decoder import encode_event
from binlogkit.binlog.events import Event, FormatDescriptionEvent, StartEventV3
from binlogkit.dump.dumper import Dumper
from binlogkit.dump.options import DumpOptions
from binlogkit.dump.selection import Selection
from binlogkit.errors import BinlogError
from binlogkit.io.binlog_index import resolve_sources
from binlogkit.sources import open_binlog

__all__ = ["FileSource", "Source", "dump", "dump_flashback"]

_KEEP_RAW = 4096
"""How many decoded events' raw bytes are kept while the selection may hold them back."""


class FileSource:
    """The events of the inputs, each with its raw bytes and the format it was read with."""

    closes_on_error = True
    current: str | None = None
    live = False

    def __init__(
        self,
        files: tuple[str, ...],
        start: int | None,
        options: dict[str, Any],
        *,
        held: bool = True,
    ) -> None:
        self.paths = resolve_sources(list(files))
        self.start = start
        self.options = {**options, "schema": None}
        """The reader's options: the dump prints the binlog's own columns, as the tools do, so it
        keeps no schema history (nor loads its SQL parser)."""
        self.held = held
        """Whether events may be taken after later ones were read (a selection holds them)."""
        self._raw: OrderedDict[int, tuple[Event, bytes, FormatContext]] = OrderedDict()
        self._reader: Any = None
        """The reader of the event given last (not held: its decoder still knows the bytes)."""

    def events(self) -> Iterator[Event]:
        start = self.start
        if start is not None and start > 4 and self.paths and self.paths[0] != "-":
            with open_binlog(self.paths[0], **self.options) as reader:  # its format description
                for event in self._recorded(reader):
                    if isinstance(event, FormatDescriptionEvent | StartEventV3):
                        yield event
                        break
                    if event.header.end > start:
                        break
        with open_binlog(self.paths, start_position=start, **self.options) as reader:
            yield from self._recorded(reader)

    def _recorded(self, reader: Any) -> Iterator[Event]:
        self._reader = reader
        if not self.held:  # each event is taken before the next is read: nothing to keep
            yield from reader
            return
        raws = self._raw
        for event in reader:
            last = reader.decoder.last_raw
            if last is not None:
                raws[id(event)] = (event, bytes(last[0]), last[1])
                if len(raws) > _KEEP_RAW:
                    raws.popitem(last=False)
            yield event

    def take(
        self, event: Event, fmt: FormatContext
    ) -> tuple[bytes, FormatContext, str | None, int | None]:
        """The bytes an event was read from (its encoding when the selection rewrote it),
        their format, the input it belongs to, and the offset to print when not its own."""
        if not self.held:
            last = self._reader.decoder.last_raw  # of this event, the last one read
            if last is not None:
                return bytes(last[0]), last[1], event.header.file, None
        else:
            entry = self._raw.pop(id(event), None)
            if entry is not None and entry[0] is event:
                return entry[1], entry[2], event.header.file, None
        return encode_event(event, fmt), fmt, event.header.file, None


class Source(Protocol):
    """What :func:`dump` reads: files (:class:`FileSource`) or a server
    (:class:`~binlogkit.dump.remote.RemoteSource`)."""

    paths: list[str]
    closes_on_error: bool
    """Whether the dump's closing lines are still printed after a read error."""
    current: str | None
    """The input being read (when it is known before its first event)."""
    live: bool
    """Whether the source waits for new events (the output is then flushed after each)."""

    def events(self) -> Iterator[Event]: ...

    def take(
        self, event: Event, fmt: FormatContext
    ) -> tuple[bytes, FormatContext, str | None, int | None]: ...


def dump_flashback(source: Source, selection: Selection, options: DumpOptions, write: Any) -> None:
    """Print the undo of the selected events (see :mod:`binlogkit.dump.flashback`)."""
    from binlogkit.dump.flashback import print_flashback

    dumper = Dumper(options, write)
    dumper.begin()
    dumper.begin_file()
    dumper.flush_pending()
    dumper.drain()
    events = source.events()
    if not selection.is_empty:
        events = selection.filter(events, last_file=source.paths[-1] if source.paths else None)
    print_flashback(events, write)
    dumper.end_file()
    dumper.end()


def dump(
    source: Source,
    selection: Selection,
    options: DumpOptions,
    write: Any,
    flush: Any = None,
) -> None:
    """Print the selected events of ``source`` with ``write``, header and trailer included.

    ``flush`` is called after each event of a source that waits for new ones (--stop-never).
    """
    flush = flush if source.live else None
    dumper = Dumper(options, write)
    dumper.begin()
    events = source.events()
    if not selection.is_empty:
        events = selection.filter(events, last_file=source.paths[-1] if source.paths else None)
    try:
        current: str | None = None
        fmt = FormatContext()
        events = iter(events)
        while True:
            try:
                event = next(events, None)
            except BinlogError:  # a read error: the tools still close the output (not -R's)
                if not source.closes_on_error:  # only the lines before the failed dump
                    if source.current != current:
                        if current is not None:
                            dumper.end_file()
                        dumper.begin_file()
                    dumper.flush_pending()
                    raise
                if current is not None:
                    dumper.end_file()
                dumper.end()
                raise
            if event is None:
                break
            raw, fmt, group, at = source.take(event, fmt)
            if group != current:
                if current is not None:
                    dumper.end_file()
                current = group
                dumper.begin_file()
            try:
                dumper.event(event, raw, fmt, at)
                if flush is not None:
                    dumper.drain()
                    flush()
            except BinlogError:  # mysqlbinlog closes the output after an event it cannot print
                if dumper.flavor is Flavor.MYSQL:
                    dumper.end_file()
                    dumper.end()
                raise
        if current is not None:
            dumper.end_file()
        dumper.end()
    finally:  # the text gathered before an error goes out too
        dumper.drain()
