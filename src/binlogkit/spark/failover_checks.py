"""What keeps a server stream on the server its position belongs to, and a failover exact.

**Identity.** Each offset of a server stream names the server it was taken on:
``@@server_id`` on MariaDB (which has no server UUID; the ids of a replication
topology differ, replication needs it), ``@@server_uuid`` on MySQL.
:class:`SameServer` makes a stream's connections and refuses one that reaches
another server (:class:`~binlogkit.errors.ServerChanged`), and on a reconnection
also one whose binlog no longer has the stream's start at its GTID position
(``BINLOG_GTID_POS``: a server restarted onto a restored or reset binlog).

**Errant transactions.** A GTID position holds the last GTID of each domain, so
a transaction written on a replica alone (``0-2-6`` between the primary's
``0-1-5`` and ``0-1-6``, without ``gtid_strict_mode``) is inside the position
that names the failover point and invisible there. A binlog state (the last GTID
of each domain *and server id*: ``@@gtid_binlog_state``, the GTID_LIST event that
starts each binlog file) shows it: the offsets record the old server's state at
each point, :func:`binlog_state_at` gives the new server's at the same point,
and :func:`errant_gtids` compares them.
"""

from __future__ import annotations

from collections.abc import Callable

from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.events.format_description import FormatDescriptionEvent
from binlogkit.binlog.events.mariadb_gtid import MariaGtidEvent, MariaGtidListEvent
from binlogkit.errors import ServerChanged
from binlogkit.gtid import MariaGtid, MariaGtidList
from binlogkit.io.mysql import MySQLConnection
from binlogkit.protocol.replication import BINLOG_HEADER_SIZE, ResumePoint
from binlogkit.protocol.spec import ConnectionSpec
from binlogkit.services.replica_stream import BinlogStream

__all__ = [
    "SameServer",
    "binlog_state_at",
    "describe",
    "errant_gtids",
    "gtid_at",
    "same_position",
    "server_identity",
]

MOVE_HINT = (
    "if the URL now reaches a replica that took over (a failover), run binlogkit spark sync "
    "--failover (stream option failover=true) to go on there at the same point by GTID; "
    "else point the URL at the server the stream was reading"
)


def server_identity(conn: MySQLConnection) -> str:
    """The server's identity: its ``@@server_id`` on MariaDB, ``@@server_uuid`` on MySQL."""
    name = "@@server_id" if conn.is_mariadb else "@@server_uuid"
    return str(conn.query(f"SELECT {name}").rows[0][0])


def describe(identity: str) -> str:
    """An identity for a message: ``server_id 2`` or ``server_uuid 3e11fa47-...``."""
    return f"server_id {identity}" if identity.isdigit() else f"server_uuid {identity}"


def _text(value: str) -> str:
    """A SQL string literal."""
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def gtid_at(conn: MySQLConnection, file: str, pos: int) -> str | None:
    """The GTID position at ``file``:``pos`` of the server's binlog (MariaDB's BINLOG_GTID_POS,
    which reads the file up to there; None when the file is not there); None on MySQL."""
    if not conn.is_mariadb:
        return None
    value = conn.query(f"SELECT BINLOG_GTID_POS({_text(file)}, {pos})").rows[0][0]
    return value


def same_position(here: str | None, offset: str) -> bool:
    """Whether two MariaDB GTID positions are the same (in any order of domains)."""
    if here is None:
        return False
    try:
        ours, theirs = MariaGtidList.parse(here), MariaGtidList.parse(offset)
    except ValueError:
        return False
    return set(ours.position()) == set(theirs.position())


class SameServer:
    """Makes a stream's connections (``BinlogStream(connect=...)``), each checked to reach the
    server ``expected`` names; a reconnection also checks that its binlog at ``start`` (file,
    position, GTID position) is still there with those GTIDs."""

    def __init__(self, expected: str, start: tuple[str, int, str | None] | None = None) -> None:
        self.expected = expected
        self.start = start
        self.connections = 0

    def __call__(self, spec: ConnectionSpec) -> MySQLConnection:
        conn = MySQLConnection.connect(spec)
        try:
            self.check(conn)
        except BaseException:
            conn.close()
            raise
        self.connections += 1
        return conn

    def check(self, conn: MySQLConnection) -> None:
        found = server_identity(conn)
        address = conn.spec.address
        if found != self.expected:
            raise ServerChanged(
                f"{address} is now {describe(found)}, not {describe(self.expected)} whose "
                "binlog the stream reads (another server behind the URL: a failover, a moved "
                "virtual IP or DNS name?)",
                hint=MOVE_HINT,
            )
        if not self.connections or self.start is None or not conn.is_mariadb:
            return
        file, pos, gtid = self.start
        here = gtid_at(conn, file, pos) or "(none: the file is gone)"
        if gtid is not None and not same_position(here, gtid):
            raise ServerChanged(
                f"{address} ({describe(found)}) reconnected, and its binlog at {file}:{pos} is "
                f"at GTIDs {here}, not the stream's {gtid or '(none)'} "
                "(its binlog was reset, restored or purged, or another server has its id)",
                hint=MOVE_HINT,
            )


def _no_table(db: str, table: str) -> bool:
    return False


def binlog_state_at(
    url: str,
    file: str,
    pos: int,
    *,
    server_id: int,
    verify_checksum: bool = True,
    connect: Callable[[ConnectionSpec], MySQLConnection] = MySQLConnection.connect,
) -> MariaGtidList | None:
    """A MariaDB server's binlog state (the last GTID of each domain and server id) at
    ``file``:``pos``, a point where no transaction is open: the GTID_LIST event that starts the
    file, then each GTID event before ``pos`` (a non-blocking dump of the file, events not
    decoded past their headers but for those; ``connect`` makes its connection). None when
    the file has no GTID_LIST."""
    quiet = DecodeOptions(verify_checksum=verify_checksum, tables=_no_table)
    stream = BinlogStream(
        url,
        server_id=server_id,
        start=ResumePoint(file, BINLOG_HEADER_SIZE),
        blocking=False,
        heartbeat=None,
        reconnect=None,
        options=quiet,
        connect=connect,
    )
    state: MariaGtidList | None = None
    with stream:
        for event in stream:
            header = event.header
            if isinstance(event, MariaGtidListEvent):
                state = event.gtids
            elif header.file != file or (
                header.offset >= pos and not isinstance(event, FormatDescriptionEvent)
            ):
                break
            elif isinstance(event, MariaGtidEvent) and state is not None:
                state = state.add(event.gtid)
    return state


def errant_gtids(
    new: MariaGtidList, old: MariaGtidList, since: MariaGtidList | None
) -> tuple[MariaGtid, ...]:
    """The entries of ``new`` (the new server's binlog state at the failover point) that name
    transactions the old server had not written by the same point (``old``, its binlog state
    there): a GTID of a (domain, server id) that ``old`` has, numbered higher (each server
    numbers its transactions of a domain upwards, and replicas log them in that order); or of
    one ``old`` never logged, numbered above ``since`` (the GTID position where the lake's
    stream began) in its domain, or in a domain ``since`` lacks. An entry of a server the old
    one never logged, at or below ``since``, is taken as a transaction from before the lake
    (the old server got its data from a backup: the snapshot holds it)."""
    covered = {(g.domain_id, g.server_id): g.seq_no for g in old}
    errant = []
    for gtid in new:
        last = covered.get((gtid.domain_id, gtid.server_id))
        if last is None:
            floor = None if since is None else since.get(gtid.domain_id)
            if floor is not None and gtid.seq_no <= floor.seq_no:
                continue
        elif gtid.seq_no <= last:
            continue
        errant.append(gtid)
    return tuple(errant)
