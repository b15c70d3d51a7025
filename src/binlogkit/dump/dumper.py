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

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from binlogkit.binlog.constants import Flavor
from binlogkit.binlog.context import FormatContext, flavor_of
from binlogkit.binlog.events import Event, FormatDescriptionEvent, StartEventV3
from binlogkit.dump.options import Base64Output, DumpOptions
from binlogkit.dump.rows import RowsPrinter, TablePrinter
from binlogkit.dump.text import base64_lines, hexdump, timestamp

__all__ = ["Dumper", "PrintState", "formats"]

Formatter = Callable[["Dumper", Any, bytes], None]

FORMATTERS: dict[type[Event], Formatter] = {}
"""Event class → the function that prints it; filled by :func:`formats`."""


def formats(*classes: type[Event]) -> Callable[[Formatter], Formatter]:
    """Decorator: the dump formatter of the given event classes."""

    def mark(fn: Formatter) -> Formatter:
        for cls in classes:
            FORMATTERS[cls] = fn
        return fn

    return mark


# The largest BINLOG statement printed in one piece (opt_binlog_rows_event_max_encoded_size).
MAX_ENCODED_SIZE = 1 << 30


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


class Dumper:
    """Prints events as the tools do; ``write`` receives the text, piece by piece."""

    def __init__(self, options: DumpOptions, write: Callable[[str], object]) -> None:
        self.options = options
        self.write = write
        self.state = PrintState()
        self.fmt = FormatContext()
        self.flavor = options.flavor or Flavor.MARIADB
        self.delimiter = "/*!*/;"
        self.rows_printer = RowsPrinter(options.verbose)
        self._cache: dict[type[Event], Formatter | None] = {}
        b64 = options.base64_output
        self.encode_rows = b64 is Base64Output.AUTO and not options.short_form
        """Whether row events and table maps go out as BINLOG blocks (do_print_encoded)."""
        self._ts: tuple[int, str] = (-1, "")
        self._printers: dict[tuple[Any, ...], TablePrinter] = {}

    # -- the whole output -------------------------------------------------------------

    def begin(self) -> None:
        """The lines before the first file."""
        self.write(
            "/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=1*/;\n"
            "/*!40019 SET @@session.max_delayed_threads=0*/;\n"
            "/*!50003 SET @OLD_COMPLETION_TYPE=@@COMPLETION_TYPE,COMPLETION_TYPE=0*/;\n"
        )

    def begin_file(self) -> None:
        self.write("DELIMITER /*!*/;\n")

    def end_file(self) -> None:
        self.write("DELIMITER ;\n")

    def end(self) -> None:
        """The lines after the last file."""
        self.write(
            "# End of log file\n"
            "ROLLBACK /* added by mysqlbinlog */;\n"
            "/*!50003 SET COMPLETION_TYPE=@OLD_COMPLETION_TYPE*/;\n"
            "/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=0*/;\n"
        )
        if self.options.id_filters and self.flavor is Flavor.MARIADB:
            self.write(
                "/*!100001 SET @@SESSION.SERVER_ID=@@GLOBAL.SERVER_ID */;\n"
                "/*!100001 SET @@SESSION.GTID_DOMAIN_ID=@@GLOBAL.GTID_DOMAIN_ID */;\n"
            )

    # -- one event ----------------------------------------------------------------------

    def event(self, event: Event, raw: bytes, fmt: FormatContext | None = None) -> None:
        """Print one event; ``raw`` is its bytes as read, ``fmt`` the format it was read with."""
        if isinstance(event, FormatDescriptionEvent):
            self.fmt = event.context()
            if self.options.flavor is None:
                self.flavor = flavor_of(event.server_version)
        elif isinstance(event, StartEventV3):
            self.fmt = fmt or self.fmt
            if self.options.flavor is None:
                self.flavor = flavor_of(event.server_version)
        elif fmt is not None:
            self.fmt = fmt
        if not self.options.short_form:
            self.write(f"# at {event.header.offset}\n")
        cls = type(event)
        if cls in self._cache:
            formatter = self._cache[cls]
        else:
            formatter = next((FORMATTERS[c] for c in cls.__mro__ if c in FORMATTERS), None)
            self._cache[cls] = formatter
        if formatter is not None:
            formatter(self, event, raw)

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
        when, text = self._ts
        if when != h.timestamp:
            text = timestamp(h.timestamp)
            self._ts = (h.timestamp, text)
        line = f"#{text} server id {h.server_id}  end_log_pos {h.log_pos} "
        if self.fmt.checksum_length and len(raw) >= 4:
            line += f"CRC32 0x{int.from_bytes(raw[-4:], 'little'):08x} "
        if self.options.hexdump:
            at = h.offset if hexdump_offset is None else hexdump_offset
            dumped = raw if shown is None else shown
            line += "\n" + hexdump(dumped, at, self.fmt.header_length) + "# Event: "
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

    def remember_table(self, table: Any) -> None:
        known = self.state.tables.get(table.table_id)
        if known is not None and known[0] is table:
            return
        key = (
            table.schema,
            table.table_name,
            table.column_types,
            table.metadata,
            table.null_bitmap,
        )
        printer = self._printers.get(key)
        if printer is None:
            if len(self._printers) > 4096:
                self._printers.clear()
            printer = self._printers[key] = TablePrinter.of(table)
        self.state.tables[table.table_id] = (table, printer)

    def skips_db(self, db: str) -> bool:
        """Whether ``--database`` leaves out ``db``.

        MariaDB compares the name the binlog holds, MySQL the ``--rewrite-db`` one.
        """
        wanted = self.options.database
        if wanted is None:
            return False
        if self.flavor is Flavor.MYSQL:
            db = self.options.rewrite_db.get(db, db)
        return db != wanted

    def flush_statement(self) -> None:
        """Write a row statement's head, its BINLOG block and its ``###`` rows (STMT_END_F)."""
        s = self.state
        out = self.write
        if s.head:
            out("".join(s.head))
            s.head.clear()
        if self.encode_rows:
            body = "".join(s.body)
            if 4 + 11 + len(body) + 5 > MAX_ENCODED_SIZE:
                half = len(body) // 2 + 1
                out(f"\nSET @binlog_fragment_0='\n{body[:half]}\n'{self.delimiter}")
                out(f"\nSET @binlog_fragment_1='\n{body[half:]}'{self.delimiter}\n")
                out(f"BINLOG @binlog_fragment_0, @binlog_fragment_1{self.delimiter}\n")
            else:
                out(f"\nBINLOG '\n{body}'{self.delimiter}\n")
        s.body.clear()
        if s.tail:
            out("\n".join(s.tail) + "\n")
            s.tail.clear()
