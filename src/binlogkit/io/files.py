"""Reading binlog files, relay logs, sets of files and stdin: the I/O around the decoder."""

from __future__ import annotations

import glob
import logging
import os
import re
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from binlogkit.binlog.constants import EventType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.decoder import BinlogDecoder
from binlogkit.binlog.events import Event, RotateEvent
from binlogkit.binlog.framing import Signal
from binlogkit.errors import BinlogError

log = logging.getLogger(__name__)

Source = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]

_NUMBERED = re.compile(r"\.\d{6,}$")
CHUNK_SIZE = 1 << 20


def resolve_sources(source: Source) -> list[str]:
    """The ordered list of inputs a source names.

    A path is itself; ``-`` is stdin; an ``.index`` file lists its binlogs
    (relative to its own folder); a directory holds the binlogs named in its
    index file, or else every ``name.NNNNNN`` file in it; a glob pattern is
    expanded and sorted; a list is each of these in turn.
    """
    if not isinstance(source, str | os.PathLike):
        return [path for item in source for path in resolve_sources(item)]
    text = os.fspath(source)
    if text == "-":
        return ["-"]
    path = Path(text)
    if path.is_dir():
        indexes = sorted(path.glob("*.index"))
        if indexes:
            return resolve_sources(str(indexes[0]))
        found = sorted(str(p) for p in path.iterdir() if _NUMBERED.search(p.name))
        if not found:
            raise BinlogError(f"no binlog files (name.NNNNNN) in directory {text}")
        return found
    if path.suffix == ".index" and path.is_file():
        names = [line.strip() for line in path.read_text().splitlines() if line.strip()]
        return [str(path.parent / Path(name).name) for name in names]
    if glob.has_magic(text):
        found = sorted(glob.glob(text))
        if not found:
            raise BinlogError(f"no files match {text}")
        return found
    if not path.exists():
        raise BinlogError(f"no such binlog file: {text}")
    return [text]


class BinlogReader:
    """Iterates the decoded events of one or more binlog inputs; a context manager.

    ``start_position`` seeks the first file there after reading its format
    description. ``follow`` keeps reading a file that is still being written:
    at its end it waits ``poll_interval`` seconds for more bytes, and after a
    ROTATE it goes on with the next file. Without ``follow`` a partial last
    event is a :class:`~binlogkit.errors.TruncatedError` naming file and offset.
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
    ) -> None:
        self.paths = resolve_sources(source)
        self.options = options or DecodeOptions()
        self.start_position = start_position
        self.follow = follow
        self.poll_interval = poll_interval
        self.chunk_size = chunk_size
        self.file: str | None = None
        self._stream: BinaryIO | None = None
        self._events: Iterator[Event] | None = None

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
        if self._stream is not None and self._stream is not sys.stdin.buffer:
            self._stream.close()
        self._stream = None

    def __iter__(self) -> Iterator[Event]:
        if self._events is None:
            self._events = self._read_all()
        return self._events

    def __next__(self) -> Event:
        return next(iter(self))

    def _read_all(self) -> Iterator[Event]:
        queue = list(self.paths)
        first = True
        while queue:
            path = queue.pop(0)
            rotated_to: str | None = None
            for event in self._read_one(path, self.start_position if first else None):
                if event.header.type_code == EventType.ROTATE and self.follow:
                    rotated_to = event.next_file  # type: ignore[attr-defined]
                yield event
            first = False
            if rotated_to and not queue and path != "-":
                queue.append(str(Path(path).parent / rotated_to))

    def _read_one(self, path: str, start: int | None) -> Iterator[Event]:
        self.file = path
        name = "<stdin>" if path == "-" else path
        self._stream = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115
        decoder = BinlogDecoder(file=name, options=self.options)
        try:
            if start is not None and start > 4:
                yield from self._until_format(decoder)
                self._stream.seek(start)
                decoder.seek(start)
            yield from self._pump(decoder)
        finally:
            self.close()

    def _until_format(self, decoder: BinlogDecoder) -> Iterator[Event]:
        """Read up to and including the format description, so a seek can follow."""
        assert self._stream is not None
        while True:
            chunk = self._stream.read(4096)
            decoder.receive_data(chunk)
            while not isinstance(event := decoder.next_event(), Signal):
                yield event
                if event.header.type_code in (EventType.FORMAT_DESCRIPTION, EventType.START_V3):
                    return
            if not chunk:
                return

    def _pump(self, decoder: BinlogDecoder) -> Iterator[Event]:
        assert self._stream is not None
        stream = self._stream
        while True:
            chunk = stream.read(self.chunk_size)
            if not chunk:
                if not self.follow:
                    decoder.receive_data(b"")
            else:
                decoder.receive_data(chunk)
            stopped = False
            while not isinstance(event := decoder.next_event(), Signal):
                yield event
                if isinstance(event, RotateEvent) or event.header.type_code == EventType.STOP:
                    stopped = self.follow
            if not chunk:
                if not self.follow or stopped:
                    return
                time.sleep(self.poll_interval)


def open_binlog(
    source: Source,
    *,
    start_position: int | None = None,
    follow: bool = False,
    verify_checksum: bool = True,
    on_unknown: str = "error",
    on_corrupt: str = "error",
    raw_values: bool = False,
    **kwargs: object,
) -> BinlogReader:
    """Open binlog files (a path, a list, a directory, an index file, a glob or ``-``).

    Returns a context manager that iterates decoded events. See
    :class:`~binlogkit.binlog.context.DecodeOptions` for the decoding options.
    """
    options = DecodeOptions(
        verify_checksum=verify_checksum,
        on_unknown=on_unknown,  # type: ignore[arg-type]
        on_corrupt=on_corrupt,  # type: ignore[arg-type]
        raw_values=raw_values,
        **kwargs,  # type: ignore[arg-type]
    )
    return BinlogReader(source, options=options, start_position=start_position, follow=follow)
