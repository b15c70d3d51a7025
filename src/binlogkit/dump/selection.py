"""Event selection with the semantics of mysqlbinlog's and mariadb-binlog's options.

:class:`Selection` holds the options; :meth:`Selection.filter` walks decoded
events and gives the ones the tools would print, in order, with
``--rewrite-db`` applied (rewritten TABLE_MAP and QUERY events, ready to
re-encode). The rules, as the tools apply them:

- **Positions** (``--start-position``/``--stop-position``): the start applies
  to the first input, the stop to the last. Events of the first input that
  begin before the start are dropped, except its format description; reading
  stops at the first event (the format description included) that begins at
  or after the stop. Events inside a TRANSACTION_PAYLOAD are placed at the
  payload's own position.
- **Datetimes** (``--start-datetime``/``--stop-datetime``, epoch seconds):
  events before the first one stamped at or after the start are dropped
  (format descriptions excepted); once one passes, every later event passes
  whatever its time. Reading stops at the first event stamped at or after
  the stop.
- **Server ids** (``--server-id``, MariaDB's ``--do-server-ids`` /
  ``--ignore-server-ids``): checked on every event's own server id; format
  descriptions and ROTATE events always pass. On MariaDB binlogs the GTID's
  server id also decides its whole group for ``--do-server-ids`` and
  ``--ignore-server-ids`` (not for ``--server-id``; see below).
- **MariaDB GTID groups** (``--start-position``/``--stop-position`` given
  as GTID lists, ``--do-domain-ids``/``--ignore-domain-ids`` and
  ``--do-server-ids``/``--ignore-server-ids``, all intersected): decided at each GTID event, the
  decision holds for every event up to the next GTID event; an excluded
  group is skipped whole (no other check sees it). Each input file starts
  with a kept group (its format description, GTID list, ... pass). A start
  GTID ``D-S-N`` opens domain D at the first GTID of D with a sequence
  number M >= N (that group is kept only if M > N); until then the domain is
  dropped. A stop GTID is inclusive: without a start, the window of domain D
  opens at the first GTID of D with M <= N; it closes at the first GTID of D
  with M >= N (kept only if M == N). As in mariadb-binlog 10.11, the server
  id of the bounds is not compared (later versions compare it too). With stop GTIDs, domains
  without one are dropped; once every stop window has closed, reading stops
  at the next GTID event. A start GTID with sequence number 0 is ignored.
  ``gtid_strict_mode`` (the tool's default) adds its checks: start <= stop
  per domain, GTIDs of kept groups in order per domain, the first GTID_LIST
  consistent with the start list, and each start state reached by the end.
- **MySQL GTID sets** (``--include-gtids``/``--exclude-gtids``): decided at
  each GTID, tagged GTID or anonymous GTID event (an anonymous one is never
  in a set: dropped by an include set, kept by an exclude set) and held
  until the transaction's XID or ending COMMIT/ROLLBACK/XA ROLLBACK query
  (:func:`~binlogkit.binlog.transactions.ends_group`). STOP, ROTATE,
  format description, INCIDENT, IGNORABLE and PREVIOUS_GTIDS events always
  pass; so does any event the server-id filter already dropped, which
  leaves the state alone. A dropped TRANSACTION_PAYLOAD is dropped with the
  events inside it, which are never looked at.
- **Database** (``--database``): a QUERY whose default database differs is
  dropped (BEGIN, COMMIT, ROLLBACK, SAVEPOINT and XA statements are not
  checked); a TABLE_MAP of another database is dropped with every rows event
  that refers to it; an Annotate_rows event is kept only when one of the
  table maps of its statement is. Other events (GTID, XID, ...) pass. MySQL
  compares the rewritten database name, MariaDB the original one.
- **Table** (``--table``, MariaDB): only TABLE_MAP and rows events are
  checked, by table name.
- **Rewrite** (``--rewrite-db=FROM->TO``): TABLE_MAP schema names and the
  default database of QUERY events are renamed (the statement text is not).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from binlogkit.binlog.constants import EventType, Flavor
from binlogkit.binlog.events import Event, FormatDescriptionEvent
from binlogkit.binlog.events.gtid import GtidEvent, TaggedGtidEvent
from binlogkit.binlog.events.mariadb_gtid import MariaGtidEvent, MariaGtidListEvent
from binlogkit.binlog.events.payload import TransactionPayloadEvent
from binlogkit.binlog.events.query import QueryEvent
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.binlog.transactions import ends_group, is_trans_keyword
from binlogkit.dump.options import skips_database
from binlogkit.errors import BinlogError
from binlogkit.gtid import GtidSet, MariaGtid, MariaGtidList
from binlogkit.pipeline.filters import parse_rewrite_db
from binlogkit.pipeline.gate import TableGate

__all__ = [
    "Selection",
    "parse_id_list",
    "parse_position",
    "parse_rewrite_db",
    "read_selected",
]

log = logging.getLogger(__name__)

_E = EventType
_FORMAT = frozenset({_E.FORMAT_DESCRIPTION, _E.START_V3})
_MYSQL_GTID_PASS = frozenset(
    {
        _E.START_V3,
        _E.SLAVE,
        _E.STOP,
        _E.FORMAT_DESCRIPTION,
        _E.ROTATE,
        _E.IGNORABLE,
        _E.INCIDENT,
        _E.PREVIOUS_GTIDS,
    }
)
"""Events mysqlbinlog never drops for --include-gtids/--exclude-gtids (PREVIOUS_GTIDS only
goes with --skip-gtids)."""


def parse_id_list(text: str) -> frozenset[int]:
    """A comma-separated list of non-negative integers (``--do-domain-ids=1,2``)."""
    try:
        ids = frozenset(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise BinlogError(f"not a list of integers: {text!r}") from None
    if any(i < 0 or i >= 1 << 32 for i in ids):
        raise BinlogError(f"ids must be 32-bit unsigned integers: {text!r}")
    return ids


def parse_position(text: str) -> int | MariaGtidList:
    """A ``--start-position``/``--stop-position`` value: an offset, or a MariaDB GTID list.

    Like mariadb-binlog: a value that is not a list of ``D-S-N`` GTIDs must be
    a non-negative integer.
    """
    try:
        gtids = MariaGtidList.parse(text)
    except ValueError:
        gtids = MariaGtidList()
    if gtids:
        return gtids
    if not text.strip().isdigit():
        raise BinlogError(f"position must be a positive integer or a GTID list: {text!r}")
    return int(text)


def _epoch(value: int | float | datetime | None) -> float | None:
    if value is None or isinstance(value, int | float):
        return value
    return value.timestamp()  # a naive datetime is local time, as the tools read it


@dataclass(frozen=True)
class Selection:
    """The selection options of mysqlbinlog / mariadb-binlog; see the module doc.

    ``start_datetime``/``stop_datetime`` are epoch seconds or datetimes (a
    naive datetime is local time, as the tools take it). ``rewrite_db`` maps
    database names to new ones. ``start_gtids``/``stop_gtids`` are MariaDB
    GTID positions (``--start-position=0-1-5,1-2-9``; one GTID per domain), with
    ``gtid_strict_mode`` as ``--gtid-strict-mode`` (on by default in the tool).
    ``flavor`` says whose rules to follow where
    they differ (the order of ``--rewrite-db`` and ``--database``); by default
    the flavour of each input's format description.
    """

    start_position: int | None = None
    stop_position: int | None = None
    start_datetime: int | float | datetime | None = None
    stop_datetime: int | float | datetime | None = None
    database: str | None = None
    table: str | None = None
    rewrite_db: Mapping[str, str] = field(default_factory=dict)
    include_gtids: GtidSet | None = None
    exclude_gtids: GtidSet | None = None
    do_domain_ids: frozenset[int] | None = None
    ignore_domain_ids: frozenset[int] | None = None
    do_server_ids: frozenset[int] | None = None
    ignore_server_ids: frozenset[int] | None = None
    server_id: int | None = None
    flavor: Flavor | None = None
    start_gtids: MariaGtidList | None = None
    stop_gtids: MariaGtidList | None = None
    gtid_strict_mode: bool = True

    def __post_init__(self) -> None:
        for name, gtids in (("Start", self.start_gtids), ("Stop", self.stop_gtids)):
            seen: dict[int, MariaGtid] = {}
            for gtid in gtids or ():
                if gtid.domain_id in seen:
                    raise BinlogError(
                        f"{name} position cannot have repeated domain ids "
                        f"(found {gtid} when {seen[gtid.domain_id]} was previously specified)"
                    )
                seen[gtid.domain_id] = gtid
        if self.gtid_strict_mode and self.start_gtids and self.stop_gtids:
            for start in self.start_gtids:
                stop = self.stop_gtids.get(start.domain_id)
                if start.seq_no and stop is not None and start.seq_no > stop.seq_no:
                    raise BinlogError(
                        f"Queried GTID range is invalid in strict mode. Stop position {stop} "
                        f"is not greater than or equal to start {start}."
                    )
        if self.do_domain_ids is not None and self.ignore_domain_ids is not None:
            raise BinlogError("--do-domain-ids and --ignore-domain-ids cannot be used together")
        if self.do_server_ids is not None and self.ignore_server_ids is not None:
            raise BinlogError("--do-server-ids and --ignore-server-ids cannot be used together")

    @property
    def is_empty(self) -> bool:
        """Whether the selection keeps every event unchanged."""
        empty = Selection(flavor=self.flavor, gtid_strict_mode=self.gtid_strict_mode)
        return self == empty

    def _server_ids(self) -> tuple[frozenset[int] | None, frozenset[int] | None]:
        do = self.do_server_ids
        if self.server_id is not None:
            do = (do or frozenset()) | {self.server_id}
        return do, self.ignore_server_ids

    def filter(self, events: Iterable[Event], *, last_file: str | None = None) -> Iterator[Event]:
        """The selected events, with ``rewrite_db`` applied.

        ``last_file`` names the last input (where ``stop_position`` applies);
        without it the stop position applies to every input. The first input
        is the file of the first event.
        """
        return _Run(self, last_file).run(events)


class _Run:
    """The state of one pass of a :class:`Selection` over a stream of events."""

    def __init__(self, sel: Selection, last_file: str | None) -> None:
        self.sel = sel
        self.last_file = last_file
        self.start_time = _epoch(sel.start_datetime)
        self.stop_time = _epoch(sel.stop_datetime)
        self.do_servers, self.ignore_servers = sel._server_ids()
        self.flavor = sel.flavor
        self.first_file: str | None = None
        self.file_seen = False
        self.groups = _MariaGroups.of(sel)
        self.group_on = True  # MariaDB GTID filters: the current GTID group passes
        self.group_file: str | None = None
        self.skip_gtid_group = False  # MySQL include/exclude GTIDs: inside a dropped group
        self.dropped_payload_end = -1  # the end of a TRANSACTION_PAYLOAD the filters dropped
        self.tables = TableGate(
            self._keeps_map, sel.rewrite_db.get, hold_annotate=bool(sel.database or sel.table)
        )
        self.payload_end = -1
        self.payload_offset = -1
        self.pos = 0

    def run(self, events: Iterable[Event]) -> Iterator[Event]:
        for event in events:
            if self._before_start(event):
                continue
            if self.groups is not None:
                gate = self._maria_group(event)
                if gate is None:
                    break
                if not gate:
                    continue
            verdict = self._time_and_stop(event)
            if verdict is None:
                break
            if verdict:
                yield from self._content(event)
        if self.groups is not None:
            self.groups.finish()

    # --- where and when ----------------------------------------------------------------------

    def _before_start(self, event: Event) -> bool:
        """Whether the event lies before the start position (the tools never read it)."""
        header = event.header
        sel = self.sel
        if not self.file_seen:
            self.file_seen = True
            self.first_file = header.file
        code = header.type_code
        is_format = code in _FORMAT
        if isinstance(event, FormatDescriptionEvent) and self.sel.flavor is None:
            self.flavor = event.own_context().flavor
        pos = header.offset
        if isinstance(event, TransactionPayloadEvent):
            self.payload_offset, self.payload_end = header.offset, header.end
        elif header.log_pos == 0 and pos == self.payload_end:
            pos = self.payload_offset  # an event inside the payload
        self.pos = pos
        return (
            sel.start_position is not None
            and not is_format
            and header.file == self.first_file
            and 0 <= pos < sel.start_position
        )

    def _maria_group(self, event: Event) -> bool | None:
        """The MariaDB GTID-group gate: False drops the event, None stops reading."""
        assert self.groups is not None
        if event.header.file != self.group_file:
            self.group_file = event.header.file  # the tool starts each file in a kept group
            self.group_on = True
        if isinstance(event, MariaGtidListEvent):
            self.groups.gtid_list(event)
        elif isinstance(event, MariaGtidEvent):
            if self.groups.finished():
                return None
            self.group_on = self.groups.keep(event.gtid)
        return self.group_on

    def _time_and_stop(self, event: Event) -> bool | None:
        """False: drop the event; None: stop reading; True: go on with the content checks."""
        header = event.header
        sel = self.sel
        is_format = header.type_code in _FORMAT
        pos = self.pos
        if self.start_time is not None and not is_format:
            if header.timestamp < self.start_time:
                return False
            self.start_time = None
        if self.stop_time is not None and header.timestamp >= self.stop_time:
            return None
        if (
            sel.stop_position is not None
            and (self.last_file is None or header.file == self.last_file)
            and pos >= sel.stop_position
        ):
            return None
        return True

    # --- what ----------------------------------------------------------------------------------

    def _content(self, event: Event) -> Iterator[Event]:
        code = event.header.type_code
        if code in _FORMAT:
            yield event
            return
        header = event.header
        if header.log_pos == 0 and header.offset == self.dropped_payload_end:
            return  # inside a TRANSACTION_PAYLOAD the filters dropped: never looked at
        if not (
            (code == EventType.ROTATE or self._server_passes(header.server_id))
            and self._gtid_sets(event, code)
        ):
            if isinstance(event, TransactionPayloadEvent):
                self.dropped_payload_end = header.end
            return
        if isinstance(event, QueryEvent):
            if is_trans_keyword(event.query) or not self._skip_db(event.db):
                yield self.tables.query(event)
        else:
            yield from self.tables.feed(event)

    def _gtid_sets(self, event: Event, code: int) -> bool:
        """MySQL's --include-gtids/--exclude-gtids (mysqlbinlog's shall_skip_gtids)."""
        sel = self.sel
        if sel.include_gtids is None and sel.exclude_gtids is None:
            return True
        if isinstance(event, GtidEvent | TaggedGtidEvent):
            gtid = event.gtid
            skip = False
            if sel.include_gtids is not None:
                skip = gtid is None or gtid not in sel.include_gtids
            if sel.exclude_gtids is not None and gtid is not None:
                skip = skip or gtid in sel.exclude_gtids
            self.skip_gtid_group = skip
            return not skip
        if code in _MYSQL_GTID_PASS:
            return True
        skip = self.skip_gtid_group
        # mysqlbinlog's shall_skip_gtids: an XID or a group-ending statement (not XA_PREPARE)
        if code == EventType.XID or (isinstance(event, QueryEvent) and ends_group(event.query)):
            self.skip_gtid_group = False
        return not skip

    def _server_passes(self, server_id: int) -> bool:
        if self.do_servers is not None and server_id not in self.do_servers:
            return False
        return self.ignore_servers is None or server_id not in self.ignore_servers

    def _skip_db(self, db: str) -> bool:
        sel = self.sel
        return skips_database(db, sel.database, sel.rewrite_db, self.flavor)

    def _keeps_map(self, event: TableMapEvent) -> bool:
        table = self.sel.table
        return not self._skip_db(event.schema) and (table is None or event.table_name == table)


def _at_or_after(bound: MariaGtid, gtid: MariaGtid) -> bool:
    return gtid.domain_id == bound.domain_id and gtid.seq_no >= bound.seq_no


def _at_or_before(bound: MariaGtid, gtid: MariaGtid) -> bool:
    return gtid.domain_id == bound.domain_id and gtid.seq_no <= bound.seq_no


class _Window:
    """mariadb-binlog's window of one domain: after ``start`` (exclusive) up to ``stop``."""

    def __init__(self, start: MariaGtid | None, stop: MariaGtid | None) -> None:
        self.start, self.stop = start, stop
        self.active = self.passed = False

    @property
    def finished(self) -> bool:
        return self.stop is not None and self.passed

    def exclude(self, gtid: MariaGtid) -> bool:
        start, stop = self.start, self.stop
        if not self.active and not self.passed:
            if start is None and stop is not None and _at_or_before(stop, gtid):
                self.active = True
                self.passed = gtid.seq_no == stop.seq_no
                return False
            if (
                start is not None
                and _at_or_after(start, gtid)
                and (stop is None or _at_or_before(stop, gtid))
            ):
                self.active = True
                self.passed = stop is not None and gtid.seq_no == stop.seq_no
                return gtid.seq_no == start.seq_no
            return True
        if self.active and not self.passed:
            if stop is not None and _at_or_after(stop, gtid):
                self.active, self.passed = False, True
                return not _at_or_before(stop, gtid)
            return False
        return True


class _MariaGroups:
    """mariadb-binlog's GTID filters (positions, domain ids, server ids) and its strict checks."""

    def __init__(self, sel: Selection) -> None:
        starts = {g.domain_id: g for g in sel.start_gtids or () if g.seq_no}
        stops = {g.domain_id: g for g in sel.stop_gtids or ()}
        self.windows = {d: _Window(starts.get(d), stops.get(d)) for d in {*starts, *stops}}
        self.has_stops = bool(stops)
        self.has_starts = bool(starts)
        self.done_windows = 0
        self.do_domains, self.ignore_domains = sel.do_domain_ids, sel.ignore_domain_ids
        self.do_servers, self.ignore_servers = sel.do_server_ids, sel.ignore_server_ids
        self.strict = sel.gtid_strict_mode
        self.audit: dict[int, list[MariaGtid]] | None = None  # domain -> [start, last]
        if sel.start_gtids is not None or sel.stop_gtids is not None:
            self.audit = {d: [g, MariaGtid(d, 0, 0)] for d, g in starts.items()}
        self.list_seen = sel.start_position is not None and sel.start_position > 4

    @classmethod
    def of(cls, sel: Selection) -> _MariaGroups | None:
        wanted = (sel.start_gtids, sel.stop_gtids, sel.do_domain_ids, sel.ignore_domain_ids)
        if all(v is None for v in (*wanted, sel.do_server_ids, sel.ignore_server_ids)):
            return None
        return cls(sel)

    def finished(self) -> bool:
        return self.has_stops and self.done_windows == len(self.stops())

    def stops(self) -> list[_Window]:
        return [w for w in self.windows.values() if w.stop is not None]

    def keep(self, gtid: MariaGtid) -> bool:
        """Whether the group that ``gtid`` starts passes (the filters are intersected in order)."""
        keep = not (
            self._position_excludes(gtid)
            or (self.do_domains is not None and gtid.domain_id not in self.do_domains)
            or (self.ignore_domains is not None and gtid.domain_id in self.ignore_domains)
            or (self.do_servers is not None and gtid.server_id not in self.do_servers)
            or (self.ignore_servers is not None and gtid.server_id in self.ignore_servers)
        )
        if keep and self.audit is not None:
            if self.strict:
                self._record(gtid)
            else:
                self.audit = None  # the tool checks the stream only in strict mode
        return keep

    def _position_excludes(self, gtid: MariaGtid) -> bool:
        window = self.windows.get(gtid.domain_id)
        if window is None:
            return self.has_stops  # with stop positions, other domains are dropped
        if (self.has_stops and window.stop is None) or window.finished:
            return True
        excluded = window.exclude(gtid)
        if window.finished:
            self.done_windows += 1
        return excluded

    def _record(self, gtid: MariaGtid) -> None:
        assert self.audit is not None
        entry = self.audit.get(gtid.domain_id)
        if entry is None:
            self.audit[gtid.domain_id] = [MariaGtid(gtid.domain_id, 0, 0), gtid]
        elif entry[0].seq_no <= gtid.seq_no <= entry[1].seq_no:
            raise BinlogError(
                f"Found out of order GTID. Got {gtid} after {entry[1]} "
                "(gtid_strict_mode; turn it off to read on)"
            )
        else:
            entry[1] = gtid

    def gtid_list(self, event: MariaGtidListEvent) -> None:
        """The first GTID_LIST: the binlog state the start position must agree with."""
        if not event.header.timestamp:
            return
        if self.audit is not None and not self.list_seen and event.gtids:
            self._check_state(event.gtids)
        self.list_seen = True

    def _check_state(self, state: MariaGtidList) -> None:
        audit = self.audit
        assert audit is not None
        if not audit:
            for g in state:
                if g.domain_id not in audit:
                    audit[g.domain_id] = [g, MariaGtid(g.domain_id, 0, 0)]
                elif g.seq_no > audit[g.domain_id][0].seq_no:
                    audit[g.domain_id][0] = g
        errors = []
        for g in state:
            entry = audit.get(g.domain_id)
            if entry is None:
                errors.append(
                    f"Starting GTID position list does not specify an initial value for "
                    f"domain {g.domain_id}, whose events may be present in the requested "
                    f"binlog file(s). The last known position for this domain was {g}."
                )
            elif entry[0].seq_no < g.seq_no:
                errors.append(
                    f"Binary logs are missing data for domain {g.domain_id}. Expected data "
                    f"to start from state {entry[0]}; however, the initial GTID state of "
                    f"the logs was {g}."
                )
            elif g.seq_no > entry[1].seq_no:
                entry[1] = g
        if not errors and not self.has_starts:
            for w in self.stops():
                assert w.stop is not None
                entry = audit.get(w.stop.domain_id)
                if entry is not None and w.stop.seq_no <= entry[0].seq_no:
                    errors.append(
                        f"--stop-position GTID {w.stop} does not exist in the specified "
                        f"binlog files. The current GTID state of domain "
                        f"{w.stop.domain_id} in the specified binary logs is {entry[0]}"
                    )
                    break
        if errors:
            raise BinlogError("; ".join(errors))

    def finish(self) -> None:
        """The checks at the end of the input (warnings, or an error in strict mode)."""
        for w in self.stops():
            if not w.passed:
                log.warning("Did not reach stop position %s before end of input", w.stop)
        for start, last in (self.audit or {}).values():
            if last.seq_no < start.seq_no:
                if not self.strict:
                    log.warning("Binary logs never reached expected GTID state of %s", start)
                    continue
                raise BinlogError(f"Binary logs never reached expected GTID state of {start}")


def read_selected(
    files: Sequence[str | os.PathLike[str]], selection: Selection, **options: Any
) -> Iterator[Event]:
    """The events of binlog files as the tools select them (``options`` go to ``binlogkit.open``).

    With a start position, the first file's format description is read and
    given first, then reading jumps to the start position (the tools do the
    same); the rest of the first file before it is never decoded.
    """
    from binlogkit.io.binlog_index import resolve_sources

    paths = resolve_sources(list(files))
    if not paths:
        return iter(())
    return selection.filter(
        _with_start(paths, selection.start_position, options), last_file=paths[-1]
    )


def _with_start(paths: list[str], start: int | None, options: dict[str, Any]) -> Iterator[Event]:
    from binlogkit.sources import open_binlog

    if start is not None and start > 4 and paths[0] != "-":
        with open_binlog(paths[0], **options) as reader:
            for event in reader:
                if event.header.type_code in _FORMAT:
                    yield event
                    break
                if event.header.end > start:
                    break
    with open_binlog(paths, start_position=start, **options) as reader:
        yield from reader
