"""Reading binlog files, relay logs, sets of files and stdin: the I/O around the decoder.

Bytes come through the storage streams (:mod:`binlogkit.io.streams`): a file
is a ``FileInputStream``, stdin a forward-only ``StdinInputStream``.
Which files a source names, and in which order, is :mod:`binlogkit.io.binlog_index`.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Generator, Iterator
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from binlogkit.binlog.constants import EventFlag, EventType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.decoder import BinlogDecoder
from binlogkit.binlog.events import Event, RotateEvent
from binlogkit.binlog.framing import END, Signal
from binlogkit.binlog.tables import SchemaSource
from binlogkit.errors import BinlogError
from binlogkit.io.binlog_index import Source, resolve_sources
from binlogkit.io.streams import FileInputStream, SeekableInputStream, StdinInputStream

if TYPE_CHECKING:
    from binlogkit.io.key_files import KeyFile

log = logging.getLogger(__name__)

CHUNK_SIZE = 1 << 20


class BinlogReader:
    """Iterates the decoded events of one or more binlog inputs; a context manager.

    ``start_position`` starts the first input there: the events up to its
    format description are read to learn the format, and only the events at
    ``start_position`` and after are given. ``follow`` keeps reading a file that
    is still being written: at its end (or inside a partial last event) it
    waits ``poll_interval`` seconds for more bytes; a file that ends with a
    STOP or a (non-artificial) ROTATE is done, and after a ROTATE it goes on
    with the file it names, once that exists. Without ``follow`` a partial last
    event is a :class:`~binlogkit.errors.TruncatedError` naming file and offset.
    :meth:`abort` (from another thread) ends a following reader that waits.
    ``key_file``: encrypted binlogs are decrypted with this key file (MariaDB's
    ``file_key_management`` keys, encrypted with ``filekey`` if so, or MySQL's
    ``keyring_file``; see :mod:`binlogkit.io.streams.decryption`), or these keys
    already read (a :class:`~binlogkit.io.key_files.KeyFile`).
    """

    def __init__(
        self,
        source: Source,
        *,
        options: DecodeOptions | None = None,
        start_position: int | None = None,
        follow: bool = False,
        poll_interval: float = 0.5,
        chunk_size: int = CHUNK_SIZE,
        schema: SchemaSource | None = None,
        key_file: str | os.PathLike[str] | KeyFile | None = None,
        filekey: str | None = None,
    ) -> None:
        self.paths = resolve_sources(source)
        self.key_file = key_file
        self.filekey = filekey
        self._keys: KeyFile | None = None
        self.options = options or DecodeOptions()
        self.schema = schema
        """Completes the columns of table maps, across every input (see BinlogDecoder)."""
        self.start_position = start_position
        self.follow = follow
        self.poll_interval = poll_interval
        self.chunk_size = chunk_size
        self.file: str | None = None
        self._stream: SeekableInputStream | None = None
        self._events: Iterator[Event] | None = None
        self.decoder: BinlogDecoder | None = None
        """The decoder of the current input (its ``last_frame`` holds the raw bytes of an event)."""
        self._aborted = threading.Event()

    def __enter__(self) -> BinlogReader:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
        self._stream = None

    def abort(self) -> None:
        """Stop following, from another thread: a wait for more bytes or for the next file
        ends the iteration at once, and no further input is opened."""
        self._aborted.set()

    def __iter__(self) -> Iterator[Event]:
        if self._events is None:
            self._events = self._read_all()
        return self._events

    def __next__(self) -> Event:
        return next(iter(self))

    def _read_all(self) -> Iterator[Event]:
        queue = list(self.paths)
        first = True
        while queue and not self._aborted.is_set():
            path = queue.pop(0)
            last = yield from self._read_one(path, self.start_position if first else None)
            first = False
            if self.follow and not queue and path != "-" and last is not None and _ends_file(last):
                rotated_to = getattr(last, "next_file", None)
                if rotated_to:
                    queue.append(str(Path(path).parent / rotated_to))

    def _read_one(self, path: str, start: int | None) -> Generator[Event, None, Event | None]:
        """The events of one input; returns the last one (None if it had none)."""
        self.file = path
        name = "<stdin>" if path == "-" else path
        if path != "-" and self.follow:
            while not os.path.exists(path):
                if self._aborted.wait(self.poll_interval):
                    return None
        self._stream = StdinInputStream() if path == "-" else FileInputStream(path)
        if self.key_file is not None:
            self._stream = self._decrypting(self._stream, name)
        decoder = self.decoder = BinlogDecoder(
            file=name, options=self.options, schema=self.schema, decrypted=self.key_file is not None
        )
        try:
            if start is not None and start > 4 and not self._seek_past_format(decoder, start):
                return None
            return (yield from self._pump(decoder))
        finally:
            self.close()

    def _decrypting(self, stream: SeekableInputStream, name: str) -> SeekableInputStream:
        """``stream`` through the decrypting stage (cryptography is imported only here)."""
        from binlogkit.io.key_files import KeyFile, read_key_file
        from binlogkit.io.streams.decryption import decrypting

        assert self.key_file is not None
        if isinstance(self.key_file, KeyFile):
            self._keys = self.key_file
        elif self._keys is None:
            self._keys = read_key_file(self.key_file, self.filekey)
        try:
            return decrypting(stream, self._keys, name=name, follow=self.follow)
        except BaseException:
            stream.close()
            raise

    def _seek_past_format(self, decoder: BinlogDecoder, start: int) -> bool:
        """Read the format description (the first event), then continue the input at ``start``.

        Following a file shorter than ``start``, waits until it has grown that far;
        False when :meth:`abort` ended that wait.
        """
        stream = self._stream
        assert stream is not None
        seen = bytearray()
        while isinstance(first := decoder.next_event(), Signal):
            if first is END:
                raise BinlogError(
                    f"start position {start}: the input has no events", file=decoder.framer.file
                )
            chunk = stream.read(4096)
            seen += chunk
            decoder.receive_data(chunk)
        if first.header.end > start:
            raise BinlogError(
                f"start position {start} is inside the format description "
                f"at {first.header.offset}..{first.header.end}",
                file=decoder.framer.file,
                offset=start,
                hint="start at an event boundary (a Pos or End_log_pos value)",
            )
        decoder.seek(start)
        if start <= len(seen):
            decoder.receive_data(seen[start:])
            return True
        while (size := stream.seek(start)) < start:
            if not self.follow:
                raise BinlogError(
                    f"start position {start} is past the end of the input ({size} bytes)",
                    file=decoder.framer.file,
                    offset=start,
                )
            if self._aborted.wait(self.poll_interval):
                return False
        return True

    def _pump(self, decoder: BinlogDecoder) -> Generator[Event, None, Event | None]:
        """Feed the input to ``decoder`` and give its events; returns the last one."""
        stream = self._stream
        assert stream is not None
        next_event = decoder.next_event
        last: Event | None = None
        while True:
            chunk = stream.read(self.chunk_size)
            if chunk:
                decoder.receive_data(chunk)
            elif not self.follow:
                decoder.receive_data(b"")
            while not isinstance(event := next_event(), Signal):
                last = event
                yield event
            if not chunk:
                if not self.follow or (last is not None and _ends_file(last)):
                    return last
                if self._aborted.wait(self.poll_interval):
                    return last


def _ends_file(event: Event) -> bool:
    """A STOP, or a ROTATE the server wrote to close the file (not a relay log's artificial one)."""
    header = event.header
    if header.type_code == EventType.STOP:
        return True
    return isinstance(event, RotateEvent) and not header.flags & EventFlag.ARTIFICIAL
