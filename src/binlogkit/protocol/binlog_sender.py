"""The primary's side of a binlog dump, as a sans-I/O state machine.

:class:`DumpSender` answers one COM_BINLOG_DUMP or COM_BINLOG_DUMP_GTID the
way a primary's dump thread does (MySQL 8.x's ``Binlog_sender``, MariaDB's
``mysql_binlog_send``): before each file a fake ROTATE (artificial, log_pos
0, naming the file and the start position), the file's format description
with BINLOG_IN_USE cleared (its log_pos and create time zeroed when the dump
starts past the file's first events), then the file's events from the
requested point, with the semi-sync header when the replica asked for it.

GTID starts: MySQL's set (COM_BINLOG_DUMP_GTID) starts in the last file whose
PREVIOUS_GTIDS the replica has and leaves out the transactions it has (a
heartbeat then gives the position after them); MariaDB's
``@slave_connect_state`` starts in the last file whose GTID_LIST the
position covers and skips each domain's groups up to the replica's GTID, then
sends a fake GTID_LIST (MariaDB's rules, group ends included).

The caller owns the files. It asks :attr:`DumpSender.read_at` where the next
bytes come from (a file and offset: the sender seeks past a file's first
events to the start position), feeds them with :meth:`~DumpSender.receive_data`,
says :meth:`~DumpSender.file_complete` when the file has ended and the next one
exists, and pulls :meth:`~DumpSender.next_packet` until it gives NEED_DATA; then
it waits for more bytes, sending :meth:`~DumpSender.heartbeat` every heartbeat
period, or ends a non-blocking dump with EOF. Refusals come as
:class:`DumpRefused` with the error a primary gives (1236).
"""

from __future__ import annotations

import struct
import zlib
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from binlogkit.binlog.constants import EventFlag, EventType
from binlogkit.binlog.context import DecodeContext
from binlogkit.binlog.decoder import decode_frame
from binlogkit.binlog.events.mariadb_gtid import MariaGtidFlag
from binlogkit.binlog.framing import EventFramer, Frame, Signal
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.header import FLAGS_OFFSET, LOG_POS_OFFSET, V4_HEADER
from binlogkit.binlog.transactions import END_CODES, ROW_CODES
from binlogkit.errors import BinlogError
from binlogkit.gtid import Gtid, GtidSet, MariaGtid, MariaGtidList
from binlogkit.protocol.packets import NEED_DATA, NeedData
from binlogkit.protocol.replication import (
    BINLOG_HEADER_SIZE,
    SEMI_SYNC_MAGIC,
    BinlogDump,
    BinlogDumpGtid,
    DumpFlag,
)

__all__ = [
    "ER_SOURCE_FATAL_ERROR_READING_BINLOG",
    "BinlogStart",
    "DumpRefused",
    "DumpSender",
    "Flavor",
    "Outgoing",
    "ReplicaSettings",
    "artificial_event",
]

Flavor = Literal["mysql", "mariadb"]

ER_SOURCE_FATAL_ERROR_READING_BINLOG = 1236

_FDE_CREATED = 19 + 2 + 50  # header, binlog version, server version: the create timestamp
_MYSQL_GTIDS = frozenset({int(EventType.GTID), int(EventType.GTID_TAGGED)})
_START_STATES = frozenset({int(EventType.PREVIOUS_GTIDS), int(EventType.MARIADB_GTID_LIST)})
_MARIADB_GROUP_PARTS = frozenset(
    int(t)
    for t in (
        EventType.MARIADB_GTID,
        EventType.XID,
        EventType.XA_PREPARE,
        EventType.TABLE_MAP,
        EventType.INTVAR,
        EventType.USER_VAR,
        EventType.RAND,
        EventType.MARIADB_ANNOTATE_ROWS,
        EventType.BEGIN_LOAD_QUERY,
        EventType.APPEND_BLOCK,
    )
) | frozenset(ROW_CODES)
"""MariaDB's ``Log_event::is_part_of_group``: a standalone group ends at the first other event."""
_CAPABILITY_TOLERATE_HOLES = 2
_ACK_TYPES = frozenset({int(EventType.XID)})


@frozen_dataclass
class BinlogStart:
    """A served binlog as the sender chooses among them: its name, its size when the dump
    starts, and the GTID state written at its start (PREVIOUS_GTIDS or GTID_LIST; None
    when it has neither)."""

    name: str
    size: int
    gtids: GtidSet | MariaGtidList | None = None


@frozen_dataclass
class ReplicaSettings:
    """What a replica set in its session before the dump (its user variables)."""

    checksum: str | None = None
    """``@master_binlog_checksum`` / ``@source_binlog_checksum``; None: not set, the
    replica cannot take checksummed events."""
    heartbeat_period: float = 0.0
    """Seconds between heartbeats while idle (0: none)."""
    semi_sync: bool = False
    """The replica asked for semi-sync (``@rpl_semi_sync_slave``) and the server offers it."""
    mariadb_capability: int = 0
    connect_state: MariaGtidList | None = None
    """MariaDB's ``@slave_connect_state``: the replica starts after these GTIDs."""

    @classmethod
    def from_variables(
        cls, variables: Mapping[str, str | None], *, semi_sync_offered: bool = False
    ) -> ReplicaSettings:
        """Read the settings from the session's user variables (names in lower case)."""

        def first(*names: str) -> str | None:
            return next((v for n in names if (v := variables.get(n)) is not None), None)

        period = first("master_heartbeat_period", "source_heartbeat_period")
        semi = first("rpl_semi_sync_slave", "rpl_semi_sync_replica")
        state = variables.get("slave_connect_state")
        return cls(
            checksum=first("master_binlog_checksum", "source_binlog_checksum"),
            heartbeat_period=_number(period) / 1e9,
            semi_sync=semi_sync_offered and _number(semi) != 0,
            mariadb_capability=int(_number(variables.get("mariadb_slave_capability"))),
            connect_state=None if state is None else MariaGtidList.parse(state),
        )


class _Refusal(Exception):
    """The dump cannot go on: the message is the server error's."""


def _number(text: str | None) -> float:
    try:
        return float(text or 0)
    except ValueError:
        return 0.0


@frozen_dataclass
class Outgoing:
    """One event packet for the replica: its payload (``0x00``, the semi-sync header, the
    event) and where the event comes from (``offset`` -1 for an artificial event)."""

    payload: bytes
    file: str
    offset: int
    type_code: int
    event_at: int = 1
    """Where the event starts in the payload (3 after a semi-sync header)."""

    @property
    def event(self) -> bytes:
        """The event's bytes (header, body, checksum)."""
        return self.payload[self.event_at :]


@frozen_dataclass
class DumpRefused:
    """The dump ends with this server error (sent instead of the next packet)."""

    code: int
    message: str
    sql_state: str = "HY000"


def artificial_event(
    type_code: int, server_id: int, log_pos: int, body: bytes, *, checksum: bool, flags: int = 0
) -> bytes:
    """An event the server makes up (fake ROTATE, heartbeat, fake GTID_LIST): timestamp 0."""
    size = V4_HEADER.size + len(body) + (4 if checksum else 0)
    raw = V4_HEADER.pack(0, type_code, server_id, size, log_pos, flags) + body
    return raw + struct.pack("<I", zlib.crc32(raw)) if checksum else raw


def _resum(raw: bytearray, checksum: bool) -> bytes:
    if checksum:
        raw[-4:] = struct.pack("<I", zlib.crc32(raw[:-4]))
    return bytes(raw)


@dataclass(slots=True)
class _MariaSkip:
    """MariaDB's skipping up to the replica's GTID position, domain by domain."""

    pending: dict[int, MariaGtid]
    state: MariaGtidList = field(default_factory=MariaGtidList)
    """The binlog state of the GTIDs seen by this dump: the fake GTID_LIST's content."""
    group: Literal["", "standalone", "transaction"] = ""
    send_list: bool = False

    def on_gtid(self, gtid: MariaGtid, flags: int) -> None:
        self.state = self.state.add(gtid)
        want = self.pending.get(gtid.domain_id)
        if want is None:
            return
        if gtid.server_id != want.server_id or gtid.seq_no <= want.seq_no:
            self.group = "standalone" if flags & MariaGtidFlag.STANDALONE else "transaction"
        if gtid.server_id == want.server_id and gtid.seq_no >= want.seq_no:
            self.send_list = True
            del self.pending[gtid.domain_id]

    def skips(self, type_code: int, frame: Frame) -> bool:
        """Whether the event is left out (and ends the skipped group when it is its last)."""
        if self.group == "standalone":
            if type_code not in _MARIADB_GROUP_PARTS:
                self.group = ""
            return True
        if self.group == "transaction":
            if type_code in END_CODES or (
                type_code == EventType.QUERY and _ends_transaction(frame)
            ):
                self.group = ""
            return True
        return False


def _ends_transaction(frame: Frame) -> bool:
    query = decode_frame(frame, DecodeContext(frame.fmt)).query  # type: ignore[attr-defined]
    return bytes(query).strip().upper() in (b"COMMIT", b"ROLLBACK")


class DumpSender:
    """One dump: the packets for ``request`` out of ``files`` (the served binlogs, in order).

    Call :meth:`start` first: it chooses the first file (or refuses the dump).
    """

    def __init__(
        self,
        request: BinlogDump | BinlogDumpGtid,
        files: Sequence[BinlogStart],
        replica: ReplicaSettings,
        *,
        server_id: int,
        flavor: Flavor,
    ) -> None:
        self.request = request
        self.files = list(files)
        self.replica = replica
        self.server_id = server_id
        self.flavor = flavor
        self.blocking = not (request.flags & DumpFlag.NON_BLOCK or request.server_id == 0)
        self.file = ""
        self._framer = EventFramer()
        self._read_offset = 0
        self._start = BINLOG_HEADER_SIZE
        self._clear_fde = False
        self._crc = (replica.checksum or "").upper() == "CRC32"
        self._fde_sent = False
        self._exclude = request.gtids if isinstance(request, BinlogDumpGtid) else None
        self._in_excluded = False
        self._skipped_to = 0
        self._maria: _MariaSkip | None = None
        self._queue: deque[Outgoing] = deque()
        self._failed: DumpRefused | None = None
        self.read_at_start = ("", 0)
        """The file and position the dump starts at (chosen by :meth:`start`)."""
        self.position = 0
        """The end of the last event sent or skipped in :attr:`file` (where a heartbeat points)."""

    # -- choosing the start ----------------------------------------------------------

    def start(self) -> DumpRefused | None:
        """Choose the first file and position; None when the dump goes ahead."""
        if not self.files:
            return self._refuse("Binary log is not open")
        names = [f.name for f in self.files]
        if self._exclude is not None and not self.request.file:
            chosen = self._mysql_gtid_start()
        elif self.flavor == "mariadb" and self.replica.connect_state is not None:
            chosen = self._mariadb_gtid_start(self.replica.connect_state)
        else:
            chosen = self._position_start(names)
        if isinstance(chosen, DumpRefused):
            return chosen
        index, position = chosen
        self.read_at_start = (self.files[index].name, position)
        self._open(self.files[index].name, position)
        return None

    def _position_start(self, names: list[str]) -> tuple[int, int] | DumpRefused:
        name = self.request.file or names[0]
        if name not in names:
            return self._refuse("Could not find first log file name in binary log index file")
        index = names.index(name)
        position = self.request.position
        if position < BINLOG_HEADER_SIZE:
            return self._refuse("Client requested source to start replication from position < 4")
        if position > self.files[index].size:
            return self._refuse(
                "Client requested source to start replication from position > file size"
            )
        self._clear_fde = position > BINLOG_HEADER_SIZE
        return index, position

    def _mysql_gtid_start(self) -> tuple[int, int] | DumpRefused:
        have = self._exclude
        assert have is not None
        purged = self.files[0].gtids
        if isinstance(purged, GtidSet) and not purged.issubset(have):
            return self._refuse(
                "Cannot replicate because the source purged required binary logs. Replicate"
                " the missing transactions from elsewhere, or provision a new replica from"
                f" backup. The GTID set sent by the replica is '{have}', and the"
                f" missing transactions are '{purged - have}'"
            )
        index = max(
            (
                i
                for i, f in enumerate(self.files)
                if not isinstance(f.gtids, GtidSet) or f.gtids.issubset(have)
            ),
            default=0,
        )
        return index, BINLOG_HEADER_SIZE

    def _mariadb_gtid_start(self, position: MariaGtidList) -> tuple[int, int] | DumpRefused:
        def covered(start: GtidSet | MariaGtidList | None) -> bool:
            return not isinstance(start, MariaGtidList) or all(
                position.includes(g) for g in start.position()
            )

        found = [i for i, f in enumerate(self.files) if covered(f.gtids)]
        if not found:
            return self._refuse(
                "Could not find GTID state requested by slave in any binlog files. Probably the"
                " slave state is too old and required binlog files have been purged."
            )
        self._maria = _MariaSkip({g.domain_id: g for g in position.position()})
        return found[-1], BINLOG_HEADER_SIZE

    def _refuse(self, message: str) -> DumpRefused:
        return DumpRefused(ER_SOURCE_FATAL_ERROR_READING_BINLOG, message)

    # -- input -------------------------------------------------------------------------

    @property
    def read_at(self) -> tuple[str, int]:
        """The file and offset the next bytes fed must start at."""
        return self.file, self._read_offset

    def receive_data(self, data: bytes) -> None:
        """Bytes of :attr:`file` from :attr:`read_at` on."""
        self._framer.receive_data(data)
        self._read_offset += len(data)

    def file_complete(self, next_file: str) -> None:
        """Every byte of :attr:`file` has been fed and ``next_file`` follows it."""
        self._fill()
        if self._failed is None and self._framer.offset != self._read_offset:
            offset = self._framer.offset
            self._failed = self._refuse(f"binlog {self.file} ends inside an event at {offset}")
        if self._failed is None:
            self._open(next_file, BINLOG_HEADER_SIZE)

    def _open(self, name: str, position: int) -> None:
        self.file = name
        self._start = position
        # checksums are the replica's to verify (a primary's master_verify_checksum is OFF)
        self._framer = EventFramer(file=name, verify_checksum=False)
        self._read_offset = 0
        self._fde_sent = False
        self._in_excluded = False
        self.position = position
        rotate = struct.pack("<Q", position) + name.encode()
        raw = artificial_event(
            EventType.ROTATE,
            self.server_id,
            0,
            rotate,
            checksum=self._crc,
            flags=EventFlag.ARTIFICIAL,
        )
        self._queue.append(self._packet(raw, -1, EventType.ROTATE, ack=False))

    # -- output ------------------------------------------------------------------------

    def next_packet(self) -> Outgoing | DumpRefused | NeedData:
        """The next packet to send, a refusal that ends the dump, or NEED_DATA."""
        if not self._queue:
            self._fill()
        if self._queue:
            return self._queue.popleft()
        return NEED_DATA if self._failed is None else self._failed

    def _fill(self) -> None:
        """Queue the packets of the whole events buffered now (or note why the dump ends)."""
        if self._failed is not None:
            return
        try:
            self._queue += self._drain()
        except _Refusal as err:
            self._failed = self._refuse(str(err))
        except BinlogError as err:
            self._failed = self._refuse(f"{err} (reading {self.file})")

    def heartbeat(self) -> Outgoing:
        """A heartbeat naming the current file and the position reached in it."""
        return self._heartbeat_at(self.position)

    def wrap(self, raw: bytes, offset: int) -> Outgoing:
        """The packet of an event of the current file (at ``offset``; -1: artificial) that an
        observer made: a commit asks for a semi-sync ACK."""
        code = raw[4]
        return self._packet(raw, offset, code, ack=code in _ACK_TYPES)

    def _packet(self, raw: bytes, offset: int, type_code: int, *, ack: bool) -> Outgoing:
        if self.replica.semi_sync:
            return Outgoing(
                bytes((0, SEMI_SYNC_MAGIC, int(ack))) + raw, self.file, offset, type_code, 3
            )
        return Outgoing(b"\0" + raw, self.file, offset, type_code)

    def _drain(self) -> list[Outgoing]:
        """Packets for the whole events buffered now."""
        out: list[Outgoing] = []
        while not isinstance(frame := self._framer.next_frame(), Signal):
            code = frame.header.type_code
            if not self._fde_sent:
                self._check_format(frame)
                out.append(self._send_fde(frame))
                continue
            if code == EventType.MARIADB_START_ENCRYPTION:
                raise _Refusal(f"{self.file} is encrypted: encrypted binlogs cannot be served")
            out += self._event(frame, code)
        if self._skipped_to:
            out.append(self._heartbeat_at(self._skipped_to))
            self._skipped_to = 0
        return out

    def _check_format(self, frame: Frame) -> None:
        if frame.header.type_code != EventType.FORMAT_DESCRIPTION:
            raise _Refusal(f"Could not find format_description_event in binlog {self.file}")
        checksum = frame.checksum_length > 0
        if self.replica.checksum is None and checksum:
            who = ("Slave", "master") if self.flavor == "mariadb" else ("Replica", "source")
            raise _Refusal(
                f"{who[0]} can not handle replication events with the checksum that {who[1]} is"
                " configured to log"
            )
        self._crc = checksum

    def _send_fde(self, frame: Frame) -> Outgoing:
        raw = bytearray(frame.raw)
        flags = struct.unpack_from("<H", raw, FLAGS_OFFSET)[0] & ~EventFlag.BINLOG_IN_USE
        struct.pack_into("<H", raw, FLAGS_OFFSET, flags)
        if self._clear_fde:
            struct.pack_into("<I", raw, LOG_POS_OFFSET, 0)
            struct.pack_into("<I", raw, _FDE_CREATED, 0)
            self._clear_fde = False
        elif self._maria is not None and self._maria.pending:
            struct.pack_into("<I", raw, _FDE_CREATED, 0)  # keep the replica's temporary tables
        self._fde_sent = True
        self.position = frame.header.offset + len(frame.raw)
        if self._start > self.position:
            self._framer.seek(self._start)
            self._read_offset = self.position = self._start
        return self._packet(
            _resum(raw, self._crc), frame.header.offset, EventType.FORMAT_DESCRIPTION, ack=False
        )

    def _event(self, frame: Frame, code: int) -> list[Outgoing]:
        header = frame.header
        end = header.offset + len(frame.raw)
        self.position = end
        if self._exclude is not None and self._mysql_skips(frame, code):
            self._skipped_to = end
            return []
        out: list[Outgoing] = []
        if self._skipped_to:
            out.append(self._heartbeat_at(self._skipped_to))
            self._skipped_to = 0
        maria = self._maria
        if maria is not None:
            if code == EventType.MARIADB_GTID:
                event = decode_frame(frame, DecodeContext(frame.fmt))
                maria.on_gtid(event.gtid, event.flags)  # type: ignore[attr-defined]
            if maria.skips(code, frame):
                return self._fake_gtid_list(maria, end)
        if (
            self.flavor == "mariadb"
            and code == EventType.MARIADB_ANNOTATE_ROWS
            and not self.request.flags & DumpFlag.SEND_ANNOTATE_ROWS
            and self.replica.mariadb_capability >= _CAPABILITY_TOLERATE_HOLES
        ):
            return out
        out.append(self._packet(frame.raw, header.offset, code, ack=code in _ACK_TYPES))
        if maria is not None:
            out += self._fake_gtid_list(maria, end)
        return out

    def _heartbeat_at(self, position: int) -> Outgoing:
        raw = artificial_event(
            EventType.HEARTBEAT, self.server_id, position, self.file.encode(), checksum=self._crc
        )
        return self._packet(raw, -1, EventType.HEARTBEAT, ack=False)

    def _mysql_skips(self, frame: Frame, code: int) -> bool:
        """MySQL: leave out the transactions whose GTID the replica has."""
        exclude = self._exclude
        assert exclude is not None
        if code in _MYSQL_GTIDS:
            gtid: Gtid = decode_frame(frame, DecodeContext(frame.fmt)).gtid  # type: ignore[attr-defined]
            self._in_excluded = gtid in exclude
        elif code == EventType.ROTATE:
            self._in_excluded = False
        return self._in_excluded

    def _fake_gtid_list(self, maria: _MariaSkip, end: int) -> list[Outgoing]:
        if not maria.send_list or maria.group:
            return []
        maria.send_list = False
        gtids = maria.state.gtids
        body = struct.pack("<I", len(gtids)) + b"".join(
            struct.pack("<IIQ", g.domain_id, g.server_id, g.seq_no) for g in gtids
        )
        raw = artificial_event(
            EventType.MARIADB_GTID_LIST,
            self.server_id,
            end,
            body,
            checksum=self._crc,
            flags=EventFlag.ARTIFICIAL,
        )
        return [self._packet(raw, -1, EventType.MARIADB_GTID_LIST, ack=False)]


def start_state(frames: Sequence[Frame]) -> GtidSet | MariaGtidList | None:
    """The GTID state a file's first events write (PREVIOUS_GTIDS or GTID_LIST), if any."""
    for frame in frames:
        if frame.header.type_code in _START_STATES:
            return decode_frame(frame, DecodeContext(frame.fmt)).gtids  # type: ignore[attr-defined, no-any-return]
    return None
