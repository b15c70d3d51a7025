"""``binlogkit dump -R``: a server's binlogs read over the replication protocol, as the tools do.

:class:`RemoteSource` plays ``mariadb-binlog --read-from-remote-server``:
one binlog dump per file named (each on a new connection, ending at the
end of that file), or a single dump that runs on through the later files
(``to_last_log``) and, with ``stop_never``, waits for new events. It gives
each event with the bytes the server sent and the offset the tool prints
for it in ``# at N``. That offset is the tool's: the start position, grown
by the size of each event it prints, except the fake ROTATE that names the
file and a format description anywhere but at offset 4, which the server
re-sends or which starts the next file. So after ``to_last_log`` crosses into
the next file the tool keeps counting from the end of the previous one, and
so does this source (the ``end_log_pos`` values stay the server's).

The fake ROTATE of a dump is printed only with ``to_last_log`` (as a marker
between files); the first one comes before any format description, so it is
shown without checksum, as the tool asks the server to send it.

:func:`copy_raw` is ``--raw``: the server's files written byte for byte with
:class:`~binlogkit.services.relay.RelayWriter`.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

from binlogkit.binlog.constants import V4_HEADER_LENGTH, EventType
from binlogkit.binlog.context import DecodeOptions, FormatContext
from binlogkit.binlog.decoder import encode_event
from binlogkit.binlog.events import Event, FormatDescriptionEvent, RotateEvent
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.header import TYPE_CODE_OFFSET, V4_HEADER, EventHeader
from binlogkit.errors import BinlogError
from binlogkit.io.mysql import MySQLConnection
from binlogkit.protocol.replication import BINLOG_HEADER_SIZE, DumpFlag, StreamDecoder
from binlogkit.protocol.spec import ConnectionSpec
from binlogkit.services.relay import RelayWriter
from binlogkit.services.replica_stream import ReplicaStream

__all__ = ["RemoteOptions", "RemoteSource", "copy_raw"]

_HEARTBEATS = frozenset({EventType.HEARTBEAT, EventType.HEARTBEAT_V2})
_KEEP = 4096
"""How many events' bytes are kept while the selection may hold the events back."""


@frozen_dataclass
class RemoteOptions:
    """Where and how to read: the server, the binlogs named, and the tools' remote options.

    ``files``: the binlog names to dump (none: the server's oldest).
    ``start_position`` applies to the first one. ``server_id``: the replica id
    the dump announces (a running dump with the same id is ended by the
    server). ``annotate_rows``: ask for MariaDB's ANNOTATE_ROWS events.
    """

    spec: ConnectionSpec
    files: tuple[str, ...] = ()
    start_position: int | None = None
    to_last_log: bool = False
    stop_never: bool = False
    server_id: int = 1
    verify_checksum: bool = True
    annotate_rows: bool = True
    heartbeat: float = 30.0


@frozen_dataclass
class _Entry:
    event: Event
    raw: bytes
    fmt: FormatContext
    group: str
    at: int


def _fake_rotate(raw: bytes) -> bool:
    timestamp, code = V4_HEADER.unpack_from(raw)[:2]
    return bool(code == EventType.ROTATE and timestamp == 0)


def _without_checksum(raw: bytes) -> bytes:
    """An event as the server sends it to a client that asked for no checksum."""
    size = len(raw) - 4
    header = EventHeader.decode(raw, 0, V4_HEADER_LENGTH)
    return header.encode(V4_HEADER_LENGTH, size) + raw[V4_HEADER_LENGTH:size]


class RemoteSource:
    """The events of a server's binlogs, as ``mariadb-binlog -R`` receives and numbers them."""

    closes_on_error = False
    """``mariadb-binlog -R`` stops at once when the server fails or refuses the dump."""

    def __init__(self, options: RemoteOptions) -> None:
        self.options = options
        self.paths: list[str] = list(options.files)
        self.current: str | None = None
        self.live = options.stop_never
        """The binlog being dumped now (its name as given)."""
        self._entries: OrderedDict[int, _Entry] = OrderedDict()
        self._stream: ReplicaStream | None = None

    def close(self) -> None:
        """End the dump running now (from a signal handler too)."""
        stream = self._stream
        if stream is not None:
            stream.abort()

    def events(self) -> Iterator[Event]:
        o = self.options
        names: list[str | None] = list(o.files) or [None]
        start = o.start_position or BINLOG_HEADER_SIZE
        for name in names:
            if name is None:
                name = _oldest(o.spec)
                self.paths = [name]
            self.current = name
            yield from self._dump(name, start)
            start = BINLOG_HEADER_SIZE  # the start position is the first file's
            if o.to_last_log or o.stop_never:
                break

    def _dump(self, name: str, start: int) -> Iterator[Event]:
        o = self.options
        to_last = o.to_last_log or o.stop_never
        stream = self._stream = ReplicaStream(
            o.spec,
            server_id=o.server_id,
            heartbeat=o.heartbeat if o.stop_never else None,
            annotate_rows=o.annotate_rows,
        )
        try:
            flags = 0 if o.stop_never else DumpFlag.NON_BLOCK
            request = stream.open(file=name, position=start, flags=flags)
            decoder = StreamDecoder(
                request.file,
                request.position,
                checksum=stream.checksum,
                options=DecodeOptions(verify_checksum=o.verify_checksum),
            )
            at = start
            described = False
            while (raw := stream.fetch()) is not None:
                code = raw[TYPE_CODE_OFFSET]
                if code in _HEARTBEATS:
                    continue
                size = len(raw)
                packet = decoder.feed(raw)
                if _fake_rotate(raw):
                    size = 0
                    if not to_last:
                        if isinstance(packet[0][0], RotateEvent) and packet[0][0].next_file != name:
                            return
                        continue
                elif code == EventType.FORMAT_DESCRIPTION and at != BINLOG_HEADER_SIZE:
                    size = 0
                frame = decoder.decoder.last_frame
                fmt = frame.fmt if frame is not None and described else FormatContext()
                shown = raw
                if not described and stream.checksum and _fake_rotate(raw):
                    shown = _without_checksum(raw)  # the tool asks for it without one
                for index, (event, _point) in enumerate(packet):
                    if isinstance(event, FormatDescriptionEvent):
                        described = True
                        fmt = event.context()
                    self._keep(_Entry(event, shown if index == 0 else b"", fmt, name, at))
                    yield event
                at += size
        finally:
            self._stream = None
            stream.close()

    def _keep(self, entry: _Entry) -> None:
        entries = self._entries
        entries[id(entry.event)] = entry
        if len(entries) > _KEEP:
            entries.popitem(last=False)

    def take(
        self, event: Event, fmt: FormatContext
    ) -> tuple[bytes, FormatContext, str, int | None]:
        """An event's bytes, format, the file argument it belongs to and its ``# at`` offset."""
        entry = self._entries.pop(id(event), None)
        if entry is None or entry.event is not event:
            return encode_event(event, fmt), fmt, event.header.file or "", None
        raw = entry.raw or encode_event(event, entry.fmt)
        return raw, entry.fmt, entry.group, entry.at


def _oldest(spec: ConnectionSpec) -> str:
    """The name of the server's oldest binlog."""
    with MySQLConnection.connect(spec) as conn:
        rows = conn.query("SHOW BINARY LOGS").rows
    if not rows or rows[0][0] is None:
        raise BinlogError("the server has no binary logs (is log_bin on?)")
    return str(rows[0][0])


def copy_raw(options: RemoteOptions, directory: str | os.PathLike[str]) -> list[str]:
    """``--raw``: write the server's binlog files into ``directory`` byte for byte.

    One dump per file named (or one running on with ``to_last_log`` /
    ``stop_never``); the files get the server's names and an index file.
    Returns the names written.
    """
    o = options
    if o.start_position not in (None, BINLOG_HEADER_SIZE):
        raise BinlogError(
            "--raw copies whole files: it cannot start at a position",
            hint="leave --start-position out",
        )
    Path(directory).mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    names: list[str] = list(o.files) or [_oldest(o.spec)]
    with RelayWriter(directory, verify_checksum=o.verify_checksum) as writer:
        for name in names:
            stream = ReplicaStream(
                o.spec,
                server_id=o.server_id,
                heartbeat=o.heartbeat if o.stop_never else None,
                annotate_rows=True,
            )
            with stream:
                stream.open(file=name, flags=0 if o.stop_never else DumpFlag.NON_BLOCK)
                while (raw := stream.fetch()) is not None:
                    if _fake_rotate(raw) and not (o.to_last_log or o.stop_never):
                        checksum = 4 if stream.checksum else 0
                        if _rotate_name(raw, checksum) != name:
                            break
                    writer.write_event(raw)
                    if writer.file is not None and writer.file not in written:
                        written.append(writer.file)
            writer.close()
            if o.to_last_log or o.stop_never:
                break
    return written


def _rotate_name(raw: bytes, checksum_length: int) -> str:
    return raw[19 + 8 : len(raw) - checksum_length].decode("utf-8", "replace")
