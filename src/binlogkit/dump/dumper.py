"""The dump of a stream of events, line for line as ``mariadb-binlog`` / ``mysqlbinlog`` print it.

:class:`Dumper` plays the tools' ``process_event``: it prints ``# at N``,
hands each event to the formatter registered for its class (see
:mod:`binlogkit.dump.formatters`), and keeps the state the tools keep between
events (:class:`PrintState`: the session settings already printed, the
table maps, the Annotate_rows event waiting for its table map, and the
head/body/tail caches that gather a row statement until its last event).

Feed it each event with its raw bytes (``BinlogDecoder.last_frame.raw``)::

    dumper = Dumper(DumpOptions(verbose=2), out.write)
    dumper.begin()
    dumper.begin_file()
    for event in events:
        dumper.event(event, raw)
    dumper.end_file()
    dumper.end()
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from binlogkit.binlog.constants import Flavor, TableMapFlag
from binlogkit.binlog.context import FormatContext, flavor_of
from binlogkit.binlog.events import Event, FormatDescriptionEvent, StartEventV3
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.dump.options import Base64Output, DumpOptions, skips_database
from binlogkit.dump.rows import RowsPrinter, TablePrinter, joined_lines
from binlogkit.dump.text import backquoted, base64_lines, hexdump, timestamp

__all__ = ["Dumper", "PrintState", "formats"]

Formatter = Callable[["Dumper", Any, bytes], None]

FORMATTERS: dict[type[Event], Formatter] = {}
"""Event class → the function that prints it; filled by :func:`formats` when the first
:class:`Dumper` imports :data:`FORMATTER_MODULE`."""

FORMATTER_MODULE = "binlogkit.dump.formatters"
"""The formatters of every event family (it imports those of MySQL's own events)."""


def formats(*classes: type[Event]) -> Callable[[Formatter], Formatter]:
    """Decorator: the dump formatter of the given event classes."""

    def mark(fn: Formatter) -> Formatter:
        for cls in classes:
            FORMATTERS[cls] = fn
        return fn

    return mark


_MARIADB_BEGIN = (
    "/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=1*/;\n"
    "/*!40019 SET @@session.max_delayed_threads=0*/;\n"
    "/*!50003 SET @OLD_COMPLETION_TYPE=@@COMPLETION_TYPE,COMPLETION_TYPE=0*/;\n"
)
_MYSQL_BEGIN = (
    "# The proper term is pseudo_replica_mode, but we use this compatibility alias\n"
    "# to make the statement usable on server versions 8.0.24 and older.\n"
    "/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=1*/;\n"
    "/*!50003 SET @OLD_COMPLETION_TYPE=@@COMPLETION_TYPE,COMPLETION_TYPE=0*/;\n"
)
_ALNUM = bytes(
    c if (0x30 <= c <= 0x39 or 0x41 <= c <= 0x5A or 0x61 <= c <= 0x7A) else 0x2E for c in range(256)
)


def mysql_hexdump(raw: bytes, offset: int, header_length: int) -> str:
    """mysqlbinlog's ``--hexdump`` comment of one event at ``offset`` (MySQL's print_header)."""
    out = []
    data = raw
    at = offset
    if header_length == 19 and len(raw) >= 19:
        h = raw[:19]
        out.append(
            "# Position  Timestamp   Type   Source ID        Size      Source Pos    Flags \n"
            f"# {offset:08x} {h[0]:02x} {h[1]:02x} {h[2]:02x} {h[3]:02x}   {h[4]:02x}   "
            f"{h[5]:02x} {h[6]:02x} {h[7]:02x} {h[8]:02x}   {h[9]:02x} {h[10]:02x} {h[11]:02x} "
            f"{h[12]:02x}   {h[13]:02x} {h[14]:02x} {h[15]:02x} {h[16]:02x}   "
            f"{h[17]:02x} {h[18]:02x}\n"
        )
        data = raw[19:]
        at = offset + 19
    for start in range(0, len(data), 16):
        chunk = data[start : start + 16]
        hexes = "".join(f"{b:02x} " for b in chunk[:8]) + "".join(f" {b:02x}" for b in chunk[8:])
        text = chunk.translate(_ALNUM).decode("ascii")
        out.append(f"# {at + start:08x} {hexes:<48} |{text}|\n")
    return "".join(out)


_MYSQL = Flavor.MYSQL
"""(A module constant: reading an enum member off its class is slow.)"""

_PLAIN, _DESCRIPTION, _ROWS = 0, 1, 2
"""What :meth:`Dumper.event` does before an event's formatter, by the event's class."""


def _dispatch(cls: type[Event]) -> tuple[Formatter | None, int]:
    """The formatter of an event class and its role (:data:`_DESCRIPTION`, :data:`_ROWS`)."""
    formatter = next((FORMATTERS[c] for c in cls.__mro__ if c in FORMATTERS), None)
    if issubclass(cls, FormatDescriptionEvent | StartEventV3):
        return formatter, _DESCRIPTION
    return formatter, _ROWS if issubclass(cls, RowsEvent) else _PLAIN


def table_map_line(table: TableMapEvent, mysql: bool) -> str:
    """What a table map's header line shows after the header.

    MySQL's mysqlbinlog (8.0.30 on) adds a line with the table map's flag for a
    generated invisible primary key (``TM_GENERATED_INVISIBLE_PK_F``) to the
    table maps that carry optional metadata (MySQL 8 writes it by default; the
    8.0.40 tool prints no such line for a 5.1 binlog's table map).
    """
    flags = table.flags
    text = (
        f"\tTable_map: {backquoted(table.schema)}.{backquoted(table.table_name)} "
        f"mapped to number {table.table_id}"
    )
    if not mysql:
        return text + (" (has triggers)\n" if flags & TableMapFlag.HAS_TRIGGERS else "\n")
    if not table.optional_metadata:
        return text + "\n"
    gipk = 1 if flags & TableMapFlag.GENERATED_INVISIBLE_PK else 0
    return f"{text}\n# has_generated_invisible_primary_key={gipk}\n"


# The largest BINLOG statement printed in one piece (opt_binlog_rows_event_max_encoded_size).
MAX_ENCODED_SIZE = 1 << 30
_PIECES = 256
"""Above this many events and rows a row statement is written piece by piece."""


@dataclass
class PrintState:
    """What the tools remember between events (their PRINT_EVENT_INFO)."""

    db: str = ""
    flags2: int | None = None
    sql_mode: int | None = None
    auto_increment: tuple[int, int] = (0, 0)
    charset: tuple[int, int, int] | None = None
    time_zone: str = ""
    lc_time_names: int = -1
    charset_database: int = -1
    thread_id: int | None = None
    server_id: int | None = None
    domain_id: int | None = None
    allow_parallel: bool | None = None
    skip_replication: int = 0
    gtid_flags2: int = 0
    tables: dict[int, tuple[Any, TablePrinter]] = field(default_factory=dict)
    annotate: tuple[Event, bytes] | None = None
    head: list[str] = field(default_factory=list)
    body: list[str] = field(default_factory=list)
    tail: list[str] = field(default_factory=list)
    row_count: int = 0
    printed_fd: bool = False
    ignored_tables: set[int] = field(default_factory=set)
    """Table ids whose TABLE_MAP ``--database`` / ``--table`` left out (with their rows)."""
    default_collation_for_utf8mb4: int = -1
    in_transaction: bool = False
    """mysqlbinlog: a BEGIN was printed and its transaction has not ended."""
    seen_gtid: bool = False
    """mysqlbinlog: a GTID event was printed and its transaction has not ended."""
    skipped_in_transaction: bool = False
    """mysqlbinlog: ``--database`` left out part of the current transaction."""
    unflushed: bool = False
    deferred: list[str] = field(default_factory=list)
    """mysqlbinlog: INTVAR, RAND and USER_VAR texts held until their statement is printed."""
    """A row statement's events were gathered and its last one has not come."""


_GATHERED = 256
"""How many pieces of text :meth:`Dumper.event` gathers before handing them to ``write``."""


class Dumper:
    """Prints events as the tools do; ``write`` receives the text, piece by piece.

    The text is gathered and handed over every few events, at the end of each
    file, and by :meth:`drain` (call it before ``write`` is used otherwise,
    or when the output must be up to date).
    """

    def __init__(self, options: DumpOptions, write: Callable[[str], object]) -> None:
        importlib.import_module(FORMATTER_MODULE)  # registers them, the first time
        self.options = options
        self._sink = write
        self._gathered: list[str] = []
        self.write: Callable[[str], object] = self._gathered.append
        """Add text to the output (gathered; :meth:`drain` hands it over)."""
        self.state = PrintState()
        self.fmt = FormatContext()
        self.flavor = options.flavor or Flavor.MARIADB
        self.delimiter = "/*!*/;"
        self.rows_printer = RowsPrinter(options.verbose)
        self._short_form = options.short_form
        self._hexdump = options.hexdump
        self._cache: dict[type[Event], tuple[Formatter | None, int]] = {}
        b64 = options.base64_output
        self.encode_rows = b64 is Base64Output.AUTO and not options.short_form
        """Whether row events and table maps go out as BINLOG blocks (do_print_encoded)."""
        self._when = -1
        self._server_id = -1
        self._prefix = ""
        """The header line up to ``end_log_pos`` of the last timestamp and server id seen."""
        self._crc_fmt: FormatContext | None = None
        self._crc = False
        """Whether events of the format ``_crc_fmt`` end with a CRC32."""
        self._maps: dict[bytes, tuple[FormatContext, Flavor, str, TablePrinter]] = {}
        """Table maps by body: the format and flavour they were read in, and their texts."""
        self.filters_tables = bool(
            options.database is not None or options.table is not None or options.rewrite_db
        )
        """Whether ``--database``, ``--table`` or ``--rewrite-db`` may leave tables out."""
        self._pending: list[str] = []
        self._payload: tuple[int, int] | None = None
        """(end offset, log_pos) of the TRANSACTION_PAYLOAD whose inner events are printing."""
        self._log_pos: int | None = None
        self._at: int | None = None
        """The end_log_pos printed for the current event when it is not its own (inner events)."""
        """The header and DELIMITER lines, held until the flavour to print them in is known."""

    # -- the whole output -------------------------------------------------------------

    def drain(self) -> None:
        """Hand the text gathered so far to ``write``."""
        gathered = self._gathered
        if gathered:
            self._sink("".join(gathered))
            gathered.clear()

    def begin(self) -> None:
        """The lines before the first file (written with the first event, in its flavour)."""
        self._pending.append("begin")

    def begin_file(self) -> None:
        self._pending.append("file")

    def flush_pending(self) -> None:
        """Write the opening lines held back until the flavour is known."""
        mysql = self.flavor is Flavor.MYSQL
        for what in self._pending:
            if what == "file":
                self.write("DELIMITER /*!*/;\n")
            elif mysql:
                self.write(_MYSQL_BEGIN)
            else:
                self.write(_MARIADB_BEGIN)
        self._pending.clear()

    def end_file(self) -> None:
        if self._pending:
            self.flush_pending()
        self.close_payload()
        if self.flavor is not Flavor.MYSQL:
            self.write("DELIMITER ;\n")
            self.drain()
            return
        s = self.state
        out = []
        if s.unflushed:
            pass  # mysqlbinlog warns on stderr and leaves the partial statement out
        elif s.in_transaction:
            out.append(f"ROLLBACK /* added by mysqlbinlog */ {self.delimiter}\n")
        elif s.seen_gtid:
            out.append(
                f"BEGIN /*added by mysqlbinlog */{self.delimiter}\n"
                f"ROLLBACK /* added by mysqlbinlog */{self.delimiter}\n"
            )
        if not self.options.skip_gtids:
            added = "/* added by mysqlbinlog */"
            out.append(f"SET @@SESSION.GTID_NEXT= 'AUTOMATIC' {added} {self.delimiter}\n")
        out.append("DELIMITER ;\n")
        self.write("".join(out))
        self.drain()

    def end(self) -> None:
        """The lines after the last file."""
        if self._pending:
            self.flush_pending()
        if self.flavor is Flavor.MYSQL:
            self.write(
                "# End of log file\n"
                "/*!50003 SET COMPLETION_TYPE=@OLD_COMPLETION_TYPE*/;\n"
                "/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=0*/;\n"
            )
            self.drain()
            return
        self.write(
            "# End of log file\n"
            "ROLLBACK /* added by mysqlbinlog */;\n"
            "/*!50003 SET COMPLETION_TYPE=@OLD_COMPLETION_TYPE*/;\n"
            "/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=0*/;\n"
        )
        if self.options.id_filters:
            self.write(
                "/*!100001 SET @@SESSION.SERVER_ID=@@GLOBAL.SERVER_ID */;\n"
                "/*!100001 SET @@SESSION.GTID_DOMAIN_ID=@@GLOBAL.GTID_DOMAIN_ID */;\n"
            )
        self.drain()

    # -- one event ----------------------------------------------------------------------

    def event(
        self, event: Event, raw: bytes, fmt: FormatContext | None = None, at: int | None = None
    ) -> None:
        """Print one event; ``raw`` is its bytes as read, ``fmt`` the format it was read with.

        ``at``: the offset to print for it when not its own (a remote dump's numbering).
        """
        entry = self._cache.get(event.__class__)
        if entry is None:
            cls = type(event)
            entry = self._cache[cls] = _dispatch(cls)
        formatter, role = entry
        if role == _DESCRIPTION:
            if isinstance(event, FormatDescriptionEvent):
                self.fmt = event.context()
            else:
                self.fmt = fmt or self.fmt
            if self.options.flavor is None:
                self.flavor = flavor_of(event.server_version)  # type: ignore[attr-defined]
        elif fmt is not None:
            self.fmt = fmt
        if self._pending:
            self.flush_pending()
        if self._payload is not None:
            h = event.header
            payload = self._payload
            if h.log_pos == 0 and h.offset == payload[0]:
                self._log_pos = payload[1]
            else:
                self.close_payload()
        if at is not None:
            self._at = at
        if self._short_form or (role == _ROWS and self.flavor is _MYSQL and self.refuses_rows()):
            pass  # mysqlbinlog leaves ``# at N`` out before a row event it refuses to print
        elif self._log_pos is None:
            self.write(f"# at {event.header.offset if at is None else at}\n")
        else:
            self.write(f"# at {self._log_pos}\n")
        if formatter is not None:
            formatter(self, event, raw)
        if at is not None:
            self._at = None
        self._log_pos = None
        if len(self._gathered) > _GATHERED:
            self.drain()

    def statement_context(self, text: str) -> None:
        """An INTVAR, RAND or USER_VAR text: mysqlbinlog prints it with its statement."""
        if self.flavor is Flavor.MYSQL:
            self.state.deferred.append(text)
        else:
            self.write(text)

    def open_payload(self, event: Event) -> None:
        """The events that follow, up to the next outer one, are the payload's inner events."""
        h = event.header
        self._payload = (h.end, h.log_pos)

    def close_payload(self) -> None:
        if self._payload is not None:
            self._payload = None
            if not self.options.short_form:
                self.write("# End of compressed events!\n")

    def offset(self, event: Event) -> int:
        """The offset printed for the event being printed (``# at``, hex dump addresses)."""
        if self._log_pos is not None:
            return self._log_pos
        return event.header.offset if self._at is None else self._at

    def refuses_rows(self) -> bool:
        """mysqlbinlog stops at a row event when no format description was printed as base64."""
        o = self.options
        return not (
            self.state.printed_fd or o.short_form or o.base64_output is Base64Output.DECODE_ROWS
        )

    # -- pieces the formatters share ------------------------------------------------------

    def header(
        self,
        event: Event,
        raw: bytes,
        hexdump_offset: int | None = None,
        shown: bytes | None = None,
    ) -> str:
        """``#YYMMDD HH:MM:SS server id N  end_log_pos N [CRC32 0x...] `` (and the hex dump).

        The hex dump's addresses start at ``hexdump_offset`` (default: the event's offset);
        it shows ``shown`` (default: ``raw``), the bytes the tools print for the event.
        """
        h = event.header
        if h.timestamp != self._when or h.server_id != self._server_id:
            self._when = h.timestamp
            self._server_id = h.server_id
            self._prefix = f"#{timestamp(h.timestamp)} server id {h.server_id}  end_log_pos "
        log_pos = h.log_pos if self._log_pos is None else self._log_pos
        fmt = self.fmt
        if fmt is not self._crc_fmt:
            self._crc_fmt = fmt
            self._crc = fmt.checksum_length != 0
        if self._crc and len(raw) >= 4:
            # the checksum's hex digits: its little-endian bytes read backwards
            line = f"{self._prefix}{log_pos} CRC32 0x{raw[:-5:-1].hex()} "
        else:
            line = f"{self._prefix}{log_pos} "
        if self._hexdump:
            at = self.offset(event) if hexdump_offset is None else hexdump_offset
            if self._log_pos is not None:
                at = self._log_pos
            dumped = raw if shown is None else shown
            if self.flavor is _MYSQL:
                line += "\n" + mysql_hexdump(dumped, at, fmt.header_length) + "# "
            else:
                line += "\n" + hexdump(dumped, at, fmt.header_length) + "# Event: "
        return line

    def base64(self, raw: bytes) -> str:
        return base64_lines(raw)

    def skip_replication(self, event: Event) -> None:
        """``SET skip_replication`` when the event's flag differs from the last one printed."""
        value = 1 if event.header.flags & 0x8000 else 0
        if value != self.state.skip_replication:
            self.write(f"/*!50521 SET skip_replication={value}*/{self.delimiter}\n")
            self.state.skip_replication = value

    def table_printer(self, table_id: int) -> TablePrinter | None:
        entry = self.state.tables.get(table_id)
        return None if entry is None else entry[1]

    def table_map_texts(self, table: TableMapEvent, raw: bytes) -> tuple[str, TablePrinter]:
        """What a table map's header line shows after the header, and its columns' printers.

        Kept by the event's body (``raw`` without header and checksum): transactions
        map the same tables again and again.
        """
        fmt = self.fmt
        if fmt is not self._crc_fmt:
            self._crc_fmt = fmt
            self._crc = fmt.checksum_length != 0
        body = raw[fmt.header_length : -4 if self._crc else len(raw)]
        entry = self._maps.get(body)
        if entry is None or entry[0] is not fmt or entry[1] is not self.flavor:
            if len(self._maps) > 4096:
                self._maps.clear()
            mysql = self.flavor is _MYSQL
            entry = self._maps[body] = (
                fmt,
                self.flavor,
                table_map_line(table, mysql),
                TablePrinter.of(table, mysql=mysql),
            )
        return entry[2], entry[3]

    def skips_db(self, db: str) -> bool:
        """Whether ``--database`` leaves out ``db`` (see :func:`skips_database`)."""
        options = self.options
        return skips_database(db, options.database, options.rewrite_db, self.flavor)

    def flush_statement(self, trailer: str = "") -> None:
        """Write a row statement's head, its BINLOG block, its ``###`` rows (STMT_END_F)
        and ``trailer``; a long statement goes out piece by piece, not as one string."""
        s = self.state
        text = "".join(s.head)
        s.head.clear()
        body = s.body
        tail = s.tail
        if len(body) + len(tail) > _PIECES:
            self._flush_long(text, trailer)
            return
        if self.encode_rows:
            joined = "".join(body)
            delimiter = self.delimiter
            if 4 + 11 + len(joined) + 5 > MAX_ENCODED_SIZE:
                text += self._fragments(joined)
            else:
                text += f"\nBINLOG '\n{joined}'{delimiter}\n"
        body.clear()
        if tail:
            text += joined_lines(tail)
            tail.clear()
        self.write(text + trailer)

    def _flush_long(self, head: str, trailer: str) -> None:
        """:meth:`flush_statement` of a statement of many events or rows."""
        s = self.state
        self.write(head)
        self.drain()
        write = self._sink
        body = s.body
        if self.encode_rows:
            if 4 + 11 + sum(map(len, body)) + 5 > MAX_ENCODED_SIZE:
                write(self._fragments("".join(body)))
            else:
                write("\nBINLOG '\n")
                for piece in body:
                    write(piece)
                write(f"'{self.delimiter}\n")
        body.clear()
        tail = s.tail
        for at in range(0, len(tail), _PIECES):
            write(joined_lines(tail[at : at + _PIECES]))
        tail.clear()
        write(trailer)

    def _fragments(self, body: str) -> str:
        """A BINLOG block too long for one statement, in two ``@binlog_fragment`` variables."""
        delimiter = self.delimiter
        half = len(body) // 2 + 1
        return (
            f"\nSET @binlog_fragment_0='\n{body[:half]}\n'{delimiter}"
            f"\nSET @binlog_fragment_1='\n{body[half:]}'{delimiter}\n"
            f"BINLOG @binlog_fragment_0, @binlog_fragment_1{delimiter}\n"
        )
