"""The primary's side of a binlog dump, as a sans-I/O state machine.

:class:`DumpSender` answers one COM_BINLOG_DUMP or COM_BINLOG_DUMP_GTID the
way a primary's dump thread does (MySQL 8.x's ``Binlog_sender``, MariaDB's
``mysql_binlog_send``): before each file a fake ROTATE (artificial, log_pos
0, naming the file and the start position), the file's format description
with BINLOG_IN_USE cleared (its log_pos and create time zeroed when the dump
starts past the file's first events), then the file's events from the
requested point, with the semi-sync header when the replica asked for it. A
primary asks a semi-sync replica for an ACK where a committing transaction
waits; a binlog server has no committers, so it asks at the tail: for the last
event of what the served file holds now (fed with ``at_end``), which is where
live transactions end as a relay appends them.

GTID starts: MySQL's set (COM_BINLOG_DUMP_GTID) starts in the last file whose
PREVIOUS_GTIDS the replica has and leaves out the transactions it has (a
heartbeat then gives the position after them); MariaDB's
``@slave_connect_state`` starts in the last file whose GTID_LIST the
position covers and skips each domain's groups up to the replica's GTID, then
sends a fake GTID_LIST (MariaDB's rules, group ends included). As
MariaDB's ``check_slave_start_position`` does, a requested GTID the served
binlogs do not hold is refused ("not in the master's binlog"), at once, or,
in a domain the binlogs have nothing of yet, when that domain's first GTID
comes; ``@slave_gtid_strict_mode`` refuses a start in a hole, and
``@slave_until_gtid`` (START SLAVE UNTIL master_gtid_pos) ends the dump after
the group that reaches it, with a fake GTID_LIST flagged UNTIL_REACHED.

Encrypted MariaDB binlogs are served decrypted (``decrypted``: the caller
feeds the bytes through the decrypting stage), as MariaDB's dump thread
does: the START_ENCRYPTION event right after the format description goes
out flagged IGNORABLE (log_pos zeroed with the format description's), so
that the replica keeps its position, and no other START_ENCRYPTION is sent.
Without ``decrypted`` an encrypted binlog is refused.

The caller owns the files. It asks :attr:`DumpSender.read_at` where the next
bytes come from (a file and offset: the sender seeks past a file's first
events to the start position), feeds them with :meth:`~DumpSender.receive_data`,
says :meth:`~DumpSender.file_complete` when the file has ended and the next one
exists, and pulls :meth:`~DumpSender.next_packet` until it gives NEED_DATA; then
it waits for more bytes, sending :meth:`~DumpSender.heartbeat` every heartbeat
period, or ends a non-blocking dump with EOF. Refusals come as
:class:`DumpRefused` with the error a primary gives (1236); a dump whose UNTIL
position is reached gives :data:`UNTIL_REACHED` (the caller sends EOF).
"""

from __future__ import annotations

import struct
import zlib
from collections import deque
from collections.abc import Callable, Mapping, Sequence
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
    "UNTIL_REACHED",
    "BinlogStart",
    "DumpRefused",
    "DumpSender",
    "EventRun",
    "Flavor",
    "Outgoing",
    "ReplicaSettings",
    "UntilReached",
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
_MARIA_STATES = frozenset({int(EventType.MARIADB_GTID), int(EventType.MARIADB_GTID_LIST)})
_CAPABILITY_TOLERATE_HOLES = 2
_RUN_BYTES = 1 << 18
"""Bytes of plain events handed out as one :class:`EventRun` at most."""
_ANNOTATE = frozenset({int(EventType.MARIADB_ANNOTATE_ROWS)})
_SYNC_HEADS = (bytes((0, SEMI_SYNC_MAGIC, 0)), bytes((0, SEMI_SYNC_MAGIC, 1)))
"""The payload head of an event for a semi-sync replica: no ACK wanted, ACK wanted."""
_QUERY_EVENT_MIN = V4_HEADER.size + 13
"""LOG_EVENT_HEADER_LEN + QUERY_HEADER_LEN: the smallest query event MariaDB looks into."""
_UNTIL_REACHED_FLAG = 1 << 28
"""Gtid_list_log_event::FLAG_UNTIL_REACHED, in the high bits of the GTID count."""


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
    gtid_strict_mode: bool = False
    """``@slave_gtid_strict_mode``: a start GTID missing between two present ones is refused."""
    gtid_ignore_duplicates: bool = False
    """``@slave_gtid_ignore_duplicates``: a start GTID ahead of the binlogs is accepted."""
    until_gtid: MariaGtidList | None = None
    """``@slave_until_gtid`` (START SLAVE UNTIL master_gtid_pos): the dump ends there."""

    @classmethod
    def from_variables(
        cls, variables: Mapping[str, str | None], *, semi_sync_offered: bool = False
    ) -> ReplicaSettings:
        """Read the settings from the session's user variables (names in lower case); a
        malformed GTID position is a ValueError with MariaDB's words."""

        def first(*names: str) -> str | None:
            return next((v for n in names if (v := variables.get(n)) is not None), None)

        period = first("master_heartbeat_period", "source_heartbeat_period")
        semi = first("rpl_semi_sync_slave", "rpl_semi_sync_replica")
        state = variables.get("slave_connect_state")
        until = variables.get("slave_until_gtid")
        gtids = state is not None  # MariaDB reads the GTID options of GTID starts only
        return cls(
            checksum=first("master_binlog_checksum", "source_binlog_checksum"),
            heartbeat_period=_number(period) / 1e9,
            semi_sync=semi_sync_offered and _number(semi) != 0,
            mariadb_capability=int(_number(variables.get("mariadb_slave_capability"))),
            connect_state=None
            if state is None
            else _gtids(state, "start position from GTID state"),
            gtid_strict_mode=gtids and _number(variables.get("slave_gtid_strict_mode")) != 0,
            gtid_ignore_duplicates=gtids
            and _number(variables.get("slave_gtid_ignore_duplicates")) != 0,
            until_gtid=_gtids(until, "UNTIL position sent from slave")
            if gtids and until is not None
            else None,
        )


class _Refusal(Exception):
    """The dump cannot go on: the message is the server error's."""


def _gtids(text: str, what: str) -> MariaGtidList:
    try:
        return MariaGtidList.parse(text)
    except ValueError:
        raise ValueError(
            f"Out of memory or malformed slave request when obtaining {what}"
        ) from None


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

    @property
    def ack(self) -> bool:
        """Whether the packet asks a semi-sync replica for an ACK."""
        return self.event_at == 3 and self.payload[2] == 1


@frozen_dataclass
class EventRun:
    """Events of the current file that go out as they are, in one piece: ``data`` (their
    bytes, from ``offset`` of ``file``), ``spans`` (the start and end in ``data`` of each
    event sent, one after the other) and ``heads`` (the payload head of every event:
    ``0x00``, or one per event with the semi-sync header)."""

    data: bytes
    file: str
    offset: int
    spans: list[int]
    heads: bytes | list[bytes]

    def packets(self) -> list[Outgoing]:
        """The run as one packet per event."""
        spans, heads = self.spans, self.heads
        out = []
        for i in range(0, len(spans), 2):
            start, end = spans[i], spans[i + 1]
            head = heads if isinstance(heads, bytes) else heads[i // 2]
            out.append(
                Outgoing(
                    head + self.data[start:end],
                    self.file,
                    self.offset + start,
                    self.data[start + 4],
                    len(head),
                )
            )
        return out


@frozen_dataclass
class UntilReached:
    """The replica's UNTIL position has been sent: the dump ends (with EOF)."""


UNTIL_REACHED = UntilReached()


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


Group = Literal["", "standalone", "transaction"]


@dataclass(slots=True)
class _MariaGtids:
    """A MariaDB GTID dump (sql_repl.cc's ``binlog_send_info``): the groups left out up to
    the replica's position, domain by domain, and the stop at its UNTIL position."""

    pending: dict[int, MariaGtid]
    """The replica's position in the domains not reached yet (``gtid_state``)."""
    empty_domains: set[int]
    """Domains the binlogs had nothing of at the start (START_ON_EMPTY_DOMAIN)."""
    until: dict[int, MariaGtid] | None
    """The UNTIL position in the domains that have not reached it (``until_gtid_state``)."""
    strict: bool
    binlog_state: Callable[[], MariaGtidList]
    state: MariaGtidList = field(default_factory=MariaGtidList)
    """The binlog state of this dump (``until_binlog_state``): the fake GTID_LISTs' content."""
    skip: Group = ""
    stop_after: Group = ""
    send_list: bool = False

    @property
    def watching(self) -> bool:
        """Whether GTIDs still matter (MariaDB looks at them while this holds)."""
        return bool(self.pending) or self.until is not None

    def on_gtid_list(self, gtids: MariaGtidList) -> None:
        if self.until is not None:
            self.state = gtids

    def on_gtid(self, gtid: MariaGtid, flags: int) -> None:
        """A GTID event: start skipping, reach the position or the UNTIL point, or refuse."""
        self.state = self.state.add(gtid)
        group: Group = "standalone" if flags & MariaGtidFlag.STANDALONE else "transaction"
        domain = gtid.domain_id
        want = self.pending.get(domain)
        if want is not None:
            if domain in self.empty_domains:
                have = _in_state(self.binlog_state(), domain, want.server_id)
                if have is None or have.seq_no < want.seq_no:
                    raise _Refusal(_missing_start(want, self.binlog_state()))
                self.empty_domains.discard(domain)
            if gtid.server_id != want.server_id or gtid.seq_no <= want.seq_no:
                self.skip = group
            if gtid.server_id == want.server_id and gtid.seq_no >= want.seq_no:
                if self.strict and gtid.seq_no > want.seq_no:
                    raise _Refusal(
                        f"The binlog on the master is missing the GTID {want} requested by the"
                        " slave (even though both a prior and a subsequent sequence number does"
                        " exist), and GTID strict mode is enabled"
                    )
                self.send_list = True
                del self.pending[domain]
        if self.until is not None:
            stop = self.until.get(domain)
            if stop is None:
                self.skip = group  # this domain reached its UNTIL position already
            elif gtid.server_id == stop.server_id and gtid.seq_no >= stop.seq_no:
                del self.until[domain]
                if not self.until:
                    self.stop_after = group
                if gtid.seq_no > stop.seq_no:
                    self.skip = group  # past a missing UNTIL GTID: this group is not sent

    def skips(self, type_code: int, frame: Frame) -> bool:
        """Whether the event is left out (and ends the skipped group when it is its last)."""
        if self.skip and _ends_group(self.skip, type_code, frame):
            self.skip = ""
            return True
        return bool(self.skip)

    def until_reached(self, type_code: int, frame: Frame) -> bool:
        """Whether the dump stops after this event (MariaDB's ``is_until_reached``)."""
        return bool(self.stop_after) and _ends_group(self.stop_after, type_code, frame)


def _ends_group(group: Group, type_code: int, frame: Frame) -> bool:
    if group == "standalone":
        return type_code not in _MARIADB_GROUP_PARTS
    return type_code in END_CODES or (
        type_code == EventType.QUERY and _ends_transaction(frame.raw, frame.checksum_length)
    )


def _ends_transaction(raw: bytes, checksum_length: int) -> bool:
    """MariaDB's ``Query_log_event::peek_is_commit_rollback``: the event (without its
    checksum) ends with the database name's NUL and ``COMMIT`` or ``ROLLBACK``, exactly
    (no other case, no spaces), and is at least a header and a query post-header long."""
    end = len(raw) - checksum_length
    if end < _QUERY_EVENT_MIN:
        return False
    return raw.endswith(b"\0COMMIT", 0, end) or raw.endswith(b"\0ROLLBACK", 0, end)


def _in_state(state: MariaGtidList, domain: int, server_id: int) -> MariaGtid | None:
    """The binlog state's GTID of ``domain`` and ``server_id`` (find_in_binlog_state)."""
    return next((g for g in state if g.domain_id == domain and g.server_id == server_id), None)


def _missing_start(want: MariaGtid, state: MariaGtidList) -> str:
    """MariaDB's refusal of a start GTID the binlogs do not hold (give_error_start_pos_...)."""
    latest = state.get(want.domain_id)
    text = (
        f"Error: connecting slave requested to start from GTID {want}, which is not in the"
        " master's binlog"
    )
    if latest is not None and latest.seq_no >= want.seq_no:
        text += (
            ". Since the master's binlog contains GTIDs with higher sequence numbers, it"
            " probably means that the slave has diverged due to executing extra erroneous"
            " transactions"
        )
    return text


def _contains_all(position: dict[int, MariaGtid], start: MariaGtidList) -> bool:
    """MariaDB's ``contains_all_slave_gtid``: every GTID the replica needs is in this file
    (whose GTID_LIST is ``start``) or a later one."""
    gtids = start.gtids
    for i, listed in enumerate(gtids):
        want = position.get(listed.domain_id)
        if want is None:
            return False  # the replica needs the domain from its beginning
        if want.server_id == listed.server_id and want.seq_no <= listed.seq_no:
            if want.seq_no < listed.seq_no:
                return False
            if any(g.domain_id == listed.domain_id for g in gtids[i + 1 :]):
                return False  # not the last GTID of its domain before this file
    return True


class DumpSender:
    """One dump: the packets for ``request`` out of ``files`` (the served binlogs, in order).

    Call :meth:`start` first: it chooses the first file (or refuses the dump).
    ``binlog_state``: the served binlogs' MariaDB binlog state now (their last GTID_LIST
    and the GTIDs after it), for the checks of MariaDB GTID starts. ``decrypted``: the
    bytes fed come through a decrypting stage (encrypted binlogs are served decrypted).
    """

    def __init__(
        self,
        request: BinlogDump | BinlogDumpGtid,
        files: Sequence[BinlogStart],
        replica: ReplicaSettings,
        *,
        server_id: int,
        flavor: Flavor,
        binlog_state: Callable[[], GtidSet | MariaGtidList | None] = lambda: None,
        decrypted: bool = False,
    ) -> None:
        self.decrypted = decrypted
        self._after_fde = False
        """The format description was just sent: a START_ENCRYPTION may follow it."""
        self._fde_cleared = False
        """The format description went out with log_pos 0 (the dump starts past it)."""
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
        self._binlog_state = binlog_state
        self._maria: _MariaGtids | None = None
        self._until_reached = False
        self._at_end = False
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
        """MariaDB's ``check_slave_start_position`` and ``gtid_find_binlog_file``."""
        pending = {g.domain_id: g for g in position.position()}
        replica = self.replica
        until = (
            None
            if replica.until_gtid is None
            else {g.domain_id: g for g in replica.until_gtid.position()}
        )
        state = self._maria_state()
        empty = set()
        for domain, want in pending.items():
            have = _in_state(state, domain, want.server_id)
            latest = state.get(domain)
            if have is not None and have.seq_no >= want.seq_no:
                continue
            if latest is None:
                empty.add(domain)  # checked when the domain's first GTID comes
                continue
            if replica.gtid_ignore_duplicates and latest.seq_no < want.seq_no:
                continue
            if until is not None:
                stop = until.get(domain)
                reached = stop is not None and (
                    (held := _in_state(state, domain, stop.server_id)) is not None
                    and held.seq_no >= stop.seq_no
                )
                if stop is None or reached:
                    until.pop(domain, None)  # the stop comes before the start
                    continue
            return self._refuse(_missing_start(want, state))
        for index in reversed(range(len(self.files))):
            start = self.files[index].gtids
            if not isinstance(start, MariaGtidList):
                break
            if _contains_all(pending, start):
                for listed in start:
                    if pending.get(listed.domain_id) == listed:
                        del pending[listed.domain_id]  # starts at the domain's first GTID here
                    stop = None if until is None else until.get(listed.domain_id)
                    if (
                        until is not None
                        and stop is not None
                        and stop.server_id == listed.server_id
                        and stop.seq_no <= listed.seq_no
                    ):
                        del until[listed.domain_id]  # reached before the start
                break
        else:
            return self._refuse(
                "Could not find GTID state requested by slave in any binlog files. Probably the"
                " slave state is too old and required binlog files have been purged."
            )
        self._maria = _MariaGtids(
            pending, empty, until, replica.gtid_strict_mode, self._maria_state
        )
        return index, BINLOG_HEADER_SIZE

    def _maria_state(self) -> MariaGtidList:
        state = self._binlog_state()
        return state if isinstance(state, MariaGtidList) else MariaGtidList()

    def _refuse(self, message: str) -> DumpRefused:
        return DumpRefused(ER_SOURCE_FATAL_ERROR_READING_BINLOG, message)

    # -- input -------------------------------------------------------------------------

    @property
    def read_at(self) -> tuple[str, int]:
        """The file and offset the next bytes fed must start at."""
        return self.file, self._read_offset

    def receive_data(self, data: bytes, *, at_end: bool = False) -> None:
        """Bytes of :attr:`file` from :attr:`read_at` on; ``at_end``: they reach the end the
        file has now (its last event there asks a semi-sync replica for an ACK)."""
        self._framer.receive_data(data)
        self._read_offset += len(data)
        self._at_end = at_end

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
        self._framer = EventFramer(file=name, verify_checksum=False, decrypted=self.decrypted)
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

    def next_packet(self) -> Outgoing | EventRun | DumpRefused | UntilReached | NeedData:
        """The next packet (or run of events sent as they are) to send, a refusal that ends
        the dump, UNTIL_REACHED, or NEED_DATA."""
        if not self._queue:
            if self._plain() and (run := self._run()) is not None:
                return run
            self._fill()
        if self._queue:
            return self._queue.popleft()
        if self._failed is not None:
            return self._failed
        return UNTIL_REACHED if self._until_reached else NEED_DATA

    def _fill(self) -> None:
        """Queue the packets of the whole events buffered now (or note why the dump ends)."""
        if self._failed is not None or self._until_reached:
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

    def wrap(self, raw: bytes, offset: int, *, ack: bool = False) -> Outgoing:
        """The packet of an event of the current file (at ``offset``; -1: artificial) that an
        observer made (``ack``: it asks a semi-sync replica for an ACK)."""
        return self._packet(raw, offset, raw[4], ack=ack)

    def _at_tail(self, end: int) -> bool:
        """Whether an event ending at ``end`` is the last of what the file holds now."""
        return self._at_end and end == self._read_offset

    def _packet(self, raw: bytes, offset: int, type_code: int, *, ack: bool) -> Outgoing:
        if self.replica.semi_sync:
            return Outgoing(
                bytes((0, SEMI_SYNC_MAGIC, int(ack))) + raw, self.file, offset, type_code, 3
            )
        return Outgoing(b"\0" + raw, self.file, offset, type_code)

    def _plain(self) -> bool:
        """Whether the next events go out as they are, without a look at each (no GTID to
        skip or watch, no UNTIL position)."""
        maria = self._maria
        return (
            self._fde_sent
            and not self._after_fde
            and self._exclude is None
            and self._failed is None
            and not self._until_reached
            and (maria is None or not (maria.watching or maria.skip or maria.send_list))
        )

    def _run(self) -> EventRun | None:
        """The plain events whole in the buffer now, as one run (ANNOTATE_ROWS left out
        where MariaDB leaves them out), or None."""
        annotate = EventType.MARIADB_ANNOTATE_ROWS
        leave_out = _ANNOTATE if self._drops_annotate(annotate) else frozenset()
        data, offset, spans = self._framer.take_run(_RUN_BYTES, leave_out)
        if not data:
            return None
        self.position = offset + len(data)
        if not self.replica.semi_sync:
            return EventRun(data, self.file, offset, spans, b"\0")
        heads = [_SYNC_HEADS[0]] * (len(spans) // 2)
        if heads and spans[-1] == len(data) and self._at_tail(self.position):
            heads[-1] = _SYNC_HEADS[1]
        return EventRun(data, self.file, offset, spans, heads)

    def _drain(self) -> list[Outgoing]:
        """Packets for the whole events buffered now (up to where plain runs can go on)."""
        out: list[Outgoing] = []
        while not isinstance(frame := self._framer.next_frame(), Signal):
            code = frame.header.type_code
            if not self._fde_sent:
                self._check_format(frame)
                out.append(self._send_fde(frame))
                maria = self._maria
                if maria is not None and maria.until is not None and not maria.until:
                    maria.stop_after = "standalone"  # reached before the start: stop soon
            elif self._after_fde and self._follows_fde(frame, code, out):
                pass
            elif code == EventType.MARIADB_START_ENCRYPTION:
                self.position = frame.header.offset + len(frame.raw)  # not sent, as MariaDB
            else:
                out += self._event(frame, code)
                if self._until_reached:
                    return out
            if self._plain():
                break
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
        self._fde_cleared = self._clear_fde
        if self._clear_fde:
            struct.pack_into("<I", raw, LOG_POS_OFFSET, 0)
            struct.pack_into("<I", raw, _FDE_CREATED, 0)
            self._clear_fde = False
        elif self._maria is not None and self._maria.pending:
            struct.pack_into("<I", raw, _FDE_CREATED, 0)  # keep the replica's temporary tables
        self._fde_sent = True
        self.position = frame.header.offset + len(frame.raw)
        self._after_fde = True  # a START_ENCRYPTION may come before the start
        return self._packet(
            _resum(raw, self._crc), frame.header.offset, EventType.FORMAT_DESCRIPTION, ack=False
        )

    def _skip_to_start(self) -> None:
        """Go on at the start position when it is past what was read."""
        if self._start > self.position:
            self._framer.seek(self._start)
            self._read_offset = self.position = self._start

    def _follows_fde(self, frame: Frame, code: int, out: list[Outgoing]) -> bool:
        """The event after the format description: a START_ENCRYPTION goes out IGNORABLE
        (refused when the binlog is not decrypted), then the dump goes on at its start.
        True: ``frame`` is done."""
        self._after_fde = False
        if code == EventType.MARIADB_START_ENCRYPTION:
            if not self.decrypted:
                raise _Refusal(f"{self.file} is encrypted: serve it with its key file")
            raw = bytearray(frame.raw)
            flags = struct.unpack_from("<H", raw, FLAGS_OFFSET)[0] | EventFlag.IGNORABLE
            struct.pack_into("<H", raw, FLAGS_OFFSET, flags)
            if self._fde_cleared:
                struct.pack_into("<I", raw, LOG_POS_OFFSET, 0)
            self.position = frame.header.offset + len(raw)
            out.append(self._packet(_resum(raw, self._crc), frame.header.offset, code, ack=False))
            self._skip_to_start()
            return True
        if self._start > frame.header.offset:
            self._skip_to_start()
            return True
        return False

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
        if maria is None:
            if not self._drops_annotate(code):
                out.append(self._packet(frame.raw, header.offset, code, ack=self._at_tail(end)))
            return out
        if maria.watching and code in _MARIA_STATES:
            event = decode_frame(frame, DecodeContext(frame.fmt))
            if code == EventType.MARIADB_GTID:
                maria.on_gtid(event.gtid, event.flags)  # type: ignore[attr-defined]
            else:
                maria.on_gtid_list(event.gtids)  # type: ignore[attr-defined]
        if not maria.skips(code, frame) and not self._drops_annotate(code):
            out.append(self._packet(frame.raw, header.offset, code, ack=self._at_tail(end)))
        if maria.send_list and not maria.skip:
            maria.send_list = False
            out.append(self._fake_gtid_list(maria.state, end, 0))
        if maria.until_reached(code, frame):
            out.append(self._fake_gtid_list(maria.state, end, _UNTIL_REACHED_FLAG))
            self._until_reached = True
        return out

    def _drops_annotate(self, code: int) -> bool:
        """MariaDB leaves ANNOTATE_ROWS out for a replica that did not ask for them and
        tolerates holes."""
        return (
            self.flavor == "mariadb"
            and code == EventType.MARIADB_ANNOTATE_ROWS
            and not self.request.flags & DumpFlag.SEND_ANNOTATE_ROWS
            and self.replica.mariadb_capability >= _CAPABILITY_TOLERATE_HOLES
        )

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

    def _fake_gtid_list(self, state: MariaGtidList, end: int, flags: int) -> Outgoing:
        gtids = state.gtids
        body = struct.pack("<I", len(gtids) | flags) + b"".join(
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
        return self._packet(raw, -1, EventType.MARIADB_GTID_LIST, ack=False)


def start_state(frames: Sequence[Frame]) -> GtidSet | MariaGtidList | None:
    """The GTID state a file's first events write (PREVIOUS_GTIDS or GTID_LIST), if any."""
    for frame in frames:
        if frame.header.type_code in _START_STATES:
            return decode_frame(frame, DecodeContext(frame.fmt)).gtids  # type: ignore[attr-defined, no-any-return]
    return None
