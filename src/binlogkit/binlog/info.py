"""What SHOW BINLOG EVENTS prints for each event: its Event_type name and Info text.

The texts follow the servers' ``pack_info`` methods (MariaDB's
sql/log_event_server.cc, MySQL's sql/log_event.cc), so a listing of a file
reads like the server's own. One function per event class, registered with
:func:`info_for`; a class without one inherits its nearest base's, and plain
:class:`~binlogkit.binlog.events.base.Event` gives the empty text, as the
servers do.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal
from typing import Any, TypeVar

from binlogkit.binlog import utf8
from binlogkit.binlog.constants import EventFlag, EventType, Flavor
from binlogkit.binlog.context import flavor_of
from binlogkit.binlog.events import (
    Event,
    FormatDescriptionEvent,
    OpaqueEvent,
    RotateEvent,
    SkippedEvent,
    StartEventV3,
    XidEvent,
)
from binlogkit.binlog.events.gtid import (
    GtidEvent,
    PreviousGtidsEvent,
    TaggedGtidEvent,
)
from binlogkit.binlog.events.informational import (
    AnnotateRowsEvent,
    BinlogCheckpointEvent,
    IgnorableEvent,
    IncidentEvent,
    IncidentType,
    RowsQueryEvent,
    SlaveEvent,
)
from binlogkit.binlog.events.load import (
    AppendBlockEvent,
    CreateFileEvent,
    ExecuteLoadQueryEvent,
    FileIdEvent,
    LoadEmptyFlag,
    LoadEvent,
    LoadOptFlag,
    LoadOptions,
)
from binlogkit.binlog.events.mariadb_gtid import (
    MariaGtidEvent,
    MariaGtidExtraFlag,
    MariaGtidFlag,
    MariaGtidListEvent,
)
from binlogkit.binlog.events.payload import CompressionType, TransactionPayloadEvent
from binlogkit.binlog.events.query import QueryEvent
from binlogkit.binlog.events.rows import RowsEvent, RowsFlag
from binlogkit.binlog.events.statement_context import (
    IntvarEvent,
    IntvarType,
    RandEvent,
    UserVarEvent,
    UserVarType,
)
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.binlog.events.transaction import (
    TransactionContextEvent,
    ViewChangeEvent,
    XaPrepareEvent,
)
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.rows.charsets import charset_name

__all__ = [
    "PRETTY_PRINT_ESCAPES",
    "EventListing",
    "event_info",
    "event_type_str",
    "info_for",
    "list_events",
    "quote_identifier",
]

InfoFn = Callable[[Any, Flavor], str]
F = TypeVar("F", bound=InfoFn)

INFO: dict[type[Event], InfoFn] = {}
"""Event class → its Info function; filled at import time by :func:`info_for`."""


def info_for(*classes: type[Event]) -> Callable[[F], F]:
    """Decorator: the Info text function of the given event classes."""

    def mark(fn: F) -> F:
        for cls in classes:
            if cls in INFO:
                raise RuntimeError(f"Info of {cls.__name__} registered twice")
            INFO[cls] = fn
        return fn

    return mark


def event_info(event: Event, flavor: Flavor = Flavor.MYSQL) -> str:
    """The Info column of SHOW BINLOG EVENTS for ``event``, as a ``flavor`` server prints it."""
    for cls in type(event).__mro__:
        fn = INFO.get(cls)
        if fn is not None:
            return fn(event, flavor)
    return ""


# -- Event_type names --------------------------------------------------------------

_TYPE_NAMES: dict[int, str] = {
    EventType.START_V3: "Start_v3",
    EventType.QUERY: "Query",
    EventType.STOP: "Stop",
    EventType.ROTATE: "Rotate",
    EventType.INTVAR: "Intvar",
    EventType.LOAD: "Load",
    EventType.SLAVE: "Slave",
    EventType.CREATE_FILE: "Create_file",
    EventType.APPEND_BLOCK: "Append_block",
    EventType.EXEC_LOAD: "Exec_load",
    EventType.DELETE_FILE: "Delete_file",
    EventType.NEW_LOAD: "New_load",
    EventType.RAND: "RAND",
    EventType.USER_VAR: "User var",
    EventType.FORMAT_DESCRIPTION: "Format_desc",
    EventType.XID: "Xid",
    EventType.BEGIN_LOAD_QUERY: "Begin_load_query",
    EventType.EXECUTE_LOAD_QUERY: "Execute_load_query",
    EventType.TABLE_MAP: "Table_map",
    EventType.PRE_GA_WRITE_ROWS: "Write_rows_event_old",
    EventType.PRE_GA_UPDATE_ROWS: "Update_rows_event_old",
    EventType.PRE_GA_DELETE_ROWS: "Delete_rows_event_old",
    EventType.WRITE_ROWS_V1: "Write_rows_v1",
    EventType.UPDATE_ROWS_V1: "Update_rows_v1",
    EventType.DELETE_ROWS_V1: "Delete_rows_v1",
    EventType.INCIDENT: "Incident",
    EventType.HEARTBEAT: "Heartbeat",
    EventType.IGNORABLE: "Ignorable",
    EventType.ROWS_QUERY: "Rows_query",
    EventType.WRITE_ROWS: "Write_rows",
    EventType.UPDATE_ROWS: "Update_rows",
    EventType.DELETE_ROWS: "Delete_rows",
    EventType.GTID: "Gtid",
    EventType.ANONYMOUS_GTID: "Anonymous_Gtid",
    EventType.PREVIOUS_GTIDS: "Previous_gtids",
    EventType.TRANSACTION_CONTEXT: "Transaction_context",
    EventType.VIEW_CHANGE: "View_change",
    EventType.XA_PREPARE: "XA_prepare",
    EventType.PARTIAL_UPDATE_ROWS: "Update_rows_partial",
    EventType.TRANSACTION_PAYLOAD: "Transaction_payload",
    EventType.HEARTBEAT_V2: "Heartbeat_v2",
    EventType.GTID_TAGGED: "Gtid_tagged",
    EventType.MARIADB_ANNOTATE_ROWS: "Annotate_rows",
    EventType.MARIADB_BINLOG_CHECKPOINT: "Binlog_checkpoint",
    EventType.MARIADB_GTID: "Gtid",
    EventType.MARIADB_GTID_LIST: "Gtid_list",
    EventType.MARIADB_START_ENCRYPTION: "Start_encryption",
    EventType.MARIADB_QUERY_COMPRESSED: "Query_compressed",
    EventType.MARIADB_WRITE_ROWS_COMPRESSED_V1: "Write_rows_compressed_v1",
    EventType.MARIADB_UPDATE_ROWS_COMPRESSED_V1: "Update_rows_compressed_v1",
    EventType.MARIADB_DELETE_ROWS_COMPRESSED_V1: "Delete_rows_compressed_v1",
    EventType.MARIADB_WRITE_ROWS_COMPRESSED: "Write_rows_compressed",
    EventType.MARIADB_UPDATE_ROWS_COMPRESSED: "Update_rows_compressed",
    EventType.MARIADB_DELETE_ROWS_COMPRESSED: "Delete_rows_compressed",
}

# MariaDB names the MySQL-only types it can merely skip after their origin.
_MARIADB_NAMES: dict[int, str] = {
    EventType.IGNORABLE: "Ignorable log event",
    EventType.ROWS_QUERY: "MySQL Rows_query",
    EventType.GTID: "MySQL Gtid",
    EventType.ANONYMOUS_GTID: "MySQL Anonymous_Gtid",
    EventType.PREVIOUS_GTIDS: "MySQL Previous_gtids",
    EventType.PARTIAL_UPDATE_ROWS: "MySQL Update_rows_partial",
    EventType.TRANSACTION_PAYLOAD: "MySQL Transaction_payload",
    EventType.HEARTBEAT_V2: "MySQL Heartbeat",
}


def event_type_str(type_code: int, flavor: Flavor = Flavor.MYSQL) -> str:
    """The Event_type column: the name the server of ``flavor`` gives a type code."""
    if flavor is Flavor.MARIADB and type_code in _MARIADB_NAMES:
        return _MARIADB_NAMES[type_code]
    return _TYPE_NAMES.get(type_code, "Unknown")


# -- shared pieces -----------------------------------------------------------------


def quote_identifier(name: str) -> str:
    """A name in backquotes, inner backquotes doubled (the servers' append_identifier)."""
    return "`" + name.replace("`", "``") + "`"


# -- the events of the core --------------------------------------------------------


@info_for(FormatDescriptionEvent, StartEventV3)
def _format_info(event: FormatDescriptionEvent | StartEventV3, flavor: Flavor) -> str:
    return f"Server ver: {event.server_version}, Binlog ver: {event.binlog_version}"


@info_for(RotateEvent)
def _rotate_info(event: RotateEvent, flavor: Flavor) -> str:
    return f"{event.next_file};pos={event.position}"


@info_for(XidEvent)
def _xid_info(event: XidEvent, flavor: Flavor) -> str:
    return f"COMMIT /* xid={event.xid} */"


def _ignorable_info(type_code: int, flavor: Flavor) -> str:
    """The Info of an event a reader may skip (the servers' Ignorable_log_event::pack_info)."""
    if flavor is Flavor.MARIADB:
        return f"# Ignorable event type {type_code} ({event_type_str(type_code, flavor)})"
    return "# Unrecognized ignorable event"


@info_for(OpaqueEvent)
def _opaque_info(event: OpaqueEvent, flavor: Flavor) -> str:
    return _ignorable_info(event.header.type_code, flavor) if event.ignorable else ""


@info_for(SkippedEvent)
def _skipped_info(event: SkippedEvent, flavor: Flavor) -> str:
    return f"# skipped: {event.error}"


# -- statements -------------------------------------------------------------------

# MariaDB session option bits (sql_priv.h) that its QUERY Info spells out, in
# the order and words of MariaDB 10.11's Query_log_event::pack_info.
_MARIADB_QUERY_OPTIONS = (
    (1 << 26, "foreign_key_checks=0"),  # OPTION_NO_FOREIGN_KEY_CHECKS
    (1 << 14, "sql_auto_is_null=1"),  # OPTION_AUTO_IS_NULL
    (1 << 27, "unique_checks=0"),  # OPTION_RELAXED_UNIQUE_CHECKS
    (1 << 15, "check_constraint_checks=0"),  # OPTION_NO_CHECK_CONSTRAINT_CHECKS
    (1 << 28, "@@sql_if_exists=1"),  # OPTION_IF_EXISTS
    (1 << 30, "@@system_versioning_insert_history=1"),  # OPTION_INSERT_HISTORY
)


def _use_prefix(db: str) -> str:
    return f"use {quote_identifier(db)}; " if db else ""


@info_for(QueryEvent)
def _query_info(event: QueryEvent, flavor: Flavor) -> str:
    prefix = "" if event.header.flags & EventFlag.SUPPRESS_USE else _use_prefix(event.db)
    flags2 = event.status.flags2 or 0
    if flavor is Flavor.MARIADB:
        names = [name for bit, name in _MARIADB_QUERY_OPTIONS if flags2 & bit]
        if names:
            prefix += "set " + ", ".join(names) + "; "
    return prefix + event.text


@info_for(ExecuteLoadQueryEvent)
def _execute_load_query_info(event: ExecuteLoadQueryEvent, flavor: Flavor) -> str:
    return f"{_use_prefix(event.db)}{event.text} ;file_id={event.file_id}"


@info_for(IntvarEvent)
def _intvar_info(event: IntvarEvent, flavor: Flavor) -> str:
    try:
        name = IntvarType(event.var_type).name
    except ValueError:
        name = "UNKNOWN"
    if name == "INVALID":
        name = "INVALID_INT"
    return f"{name}={_signed64(event.value)}"


@info_for(RandEvent)
def _rand_info(event: RandEvent, flavor: Flavor) -> str:
    return f"rand_seed1={event.seed1},rand_seed2={event.seed2}"


@info_for(UserVarEvent)
def _user_var_info(event: UserVarEvent, flavor: Flavor) -> str:
    name = f"@{quote_identifier(event.name)}="
    value = event.value
    if value is None:
        return name + "NULL"
    if event.value_type == UserVarType.REAL:
        assert isinstance(value, float)
        return name + format_double(value)
    if event.value_type == UserVarType.DECIMAL:
        assert isinstance(value, Decimal)
        return name + format(value, "f")
    if event.value_type == UserVarType.INT:
        return name + str(value)
    data = event.raw
    hexed = f"X'{data.hex().upper()}'" if data else '""'
    charset = charset_name(event.charset)
    if charset is None:
        return "???"
    return f"{name}_{charset} {hexed} COLLATE {collation_name(event.charset)}"


# The collations user variables usually carry. A complete id → name table would
# belong beside the charset table in binlogkit.binlog.rows.charsets.
_COLLATION_NAMES = {
    8: "latin1_swedish_ci",
    11: "ascii_general_ci",
    33: "utf8mb3_general_ci",
    45: "utf8mb4_general_ci",
    46: "utf8mb4_bin",
    47: "latin1_bin",
    63: "binary",
    83: "utf8mb3_bin",
    192: "utf8mb3_unicode_ci",
    224: "utf8mb4_unicode_ci",
    255: "utf8mb4_0900_ai_ci",
}


def collation_name(collation_id: int) -> str:
    """The name of a collation id, or the id itself when this module does not know it."""
    return _COLLATION_NAMES.get(collation_id, str(collation_id))


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


_F_FORMAT_MAX_DECPT = 15  # MAX_DECPT_FOR_F_FORMAT (DBL_DIG)
_GCVT_WIDTH = 15 + 4 + _F_FORMAT_MAX_DECPT  # MY_GCVT_MAX_FIELD_WIDTH


def format_double(value: float) -> str:
    """A double as the servers print it (``my_gcvt``, 34 wide): the shortest digits that
    read back the same, in plain notation unless the exponent is far from zero.

    ``my_gcvt`` cuts digits that do not fit its width; the shortest digits of
    a double (17 at most) always fit the notation chosen here.
    """
    if not math.isfinite(value):
        return repr(value)
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0"
    exact = Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, exact.digits)).rstrip("0")
    exponent = int(exact.exponent) + len(exact.digits) - len(digits)
    length = len(digits)
    decpt = length + exponent  # value = 0.DIGITS * 10**decpt
    width = _GCVT_WIDTH - len(sign)
    plain_length = length - decpt + 2 if decpt <= 0 else length + 1 if decpt < length else decpt
    if (
        plain_length <= width
        and decpt >= 1 - _F_FORMAT_MAX_DECPT
        and (decpt <= _F_FORMAT_MAX_DECPT or length > decpt)
    ):
        if decpt <= 0:
            return f"{sign}0.{'0' * -decpt}{digits}"
        if decpt < length:
            return f"{sign}{digits[:decpt]}.{digits[decpt:]}"
        return f"{sign}{digits}{'0' * (decpt - length)}"
    mantissa = digits[0] + ("." + digits[1:] if length > 1 else "")
    return f"{sign}{mantissa}e{decpt - 1}"


# -- LOAD DATA (MySQL 3.23-5.0) ------------------------------------------------------

PRETTY_PRINT_ESCAPES = {
    ord("\n"): "\\n",
    ord("\r"): "\\r",
    ord("\\"): "\\\\",
    ord("\b"): "\\b",
    ord("\t"): "\\t",
    ord("'"): "\\'",
    0: "\\0",
}
"""The escapes of MySQL's ``pretty_print_str`` (for ``str.translate``)."""


def _pretty(value: bytes) -> str:
    """A LOAD option in quotes, special bytes escaped (MySQL's pretty_print_str)."""
    return "'" + utf8.decode(value).translate(PRETTY_PRINT_ESCAPES) + "'"


def _load_terms(options: LoadOptions) -> tuple[bytes, bytes, bytes, bytes, bytes]:
    """The five terminators, the old format's "empty" ones made empty (sql_ex_info::init)."""
    terms = (
        options.field_term,
        options.enclosed,
        options.line_term,
        options.line_start,
        options.escaped,
    )
    if options.empty_flags is None:
        return terms
    flags = (
        LoadEmptyFlag.FIELD_TERM,
        LoadEmptyFlag.ENCLOSED,
        LoadEmptyFlag.LINE_TERM,
        LoadEmptyFlag.LINE_START,
        LoadEmptyFlag.ESCAPED,
    )
    field_term, enclosed, line_term, line_start, escaped = (
        b"" if options.empty_flags & flag else term for term, flag in zip(terms, flags, strict=True)
    )
    return field_term, enclosed, line_term, line_start, escaped


@info_for(LoadEvent)
def _load_info(event: LoadEvent | CreateFileEvent, flavor: Flavor) -> str:
    field_term, enclosed, line_term, line_start, escaped = _load_terms(event.options)
    opt = event.options.opt_flags
    out = [f"use {event.db}; " if event.db else "", "LOAD DATA "]
    if event.file_name:
        out.append(f"INFILE {_pretty(utf8.encode(event.file_name))} ")
    if opt & LoadOptFlag.REPLACE:
        out.append("REPLACE ")
    elif opt & LoadOptFlag.IGNORE:
        out.append("IGNORE ")
    out.append(f"INTO TABLE `{event.table}` FIELDS TERMINATED BY {_pretty(field_term)}")
    if opt & LoadOptFlag.OPT_ENCLOSED:
        out.append(" OPTIONALLY ")
    out.append(f" ENCLOSED BY {_pretty(enclosed)}")
    out.append(f" ESCAPED BY {_pretty(escaped)}")
    out.append(f" LINES TERMINATED BY {_pretty(line_term)}")
    if line_start:
        out.append(f" STARTING BY {_pretty(line_start)}")
    if event.skip_lines > 0:
        out.append(f" IGNORE {event.skip_lines} LINES ")
    if event.fields:
        out.append(" (" + " ,".join(event.fields) + ")")
    return "".join(out)


@info_for(CreateFileEvent)
def _create_file_info(event: CreateFileEvent, flavor: Flavor) -> str:
    return f"db={event.db};table={event.table};file_id={event.file_id};block_len={len(event.block)}"


@info_for(AppendBlockEvent)
def _append_block_info(event: AppendBlockEvent, flavor: Flavor) -> str:
    return f";file_id={event.file_id};block_len={len(event.block)}"


@info_for(FileIdEvent)
def _file_id_info(event: FileIdEvent, flavor: Flavor) -> str:
    return f";file_id={event.file_id}"


# -- rows ---------------------------------------------------------------------------


@info_for(TableMapEvent)
def _table_map_info(event: TableMapEvent, flavor: Flavor) -> str:
    return f"table_id: {event.table_id} ({event.schema}.{event.table_name})"


@info_for(RowsEvent)
def _rows_info(event: RowsEvent, flavor: Flavor) -> str:
    end = " flags: STMT_END_F" if event.flags & RowsFlag.STMT_END else ""
    return f"table_id: {event.table_id}{end}"


@info_for(RowsQueryEvent)
def _rows_query_info(event: RowsQueryEvent, flavor: Flavor) -> str:
    return "# " + event.text


@info_for(AnnotateRowsEvent)
def _annotate_rows_info(event: AnnotateRowsEvent, flavor: Flavor) -> str:
    return event.text


# -- transactions and GTIDs ----------------------------------------------------------


@info_for(GtidEvent, TaggedGtidEvent)
def _gtid_info(event: GtidEvent | TaggedGtidEvent, flavor: Flavor) -> str:
    gtid = event.gtid
    return f"SET @@SESSION.GTID_NEXT= '{'ANONYMOUS' if gtid is None else gtid}'"


@info_for(PreviousGtidsEvent)
def _previous_gtids_info(event: PreviousGtidsEvent, flavor: Flavor) -> str:
    return event.gtids.to_string()


@info_for(MariaGtidEvent)
def _maria_gtid_info(event: MariaGtidEvent, flavor: Flavor) -> str:
    if event.flags & MariaGtidFlag.STANDALONE:
        out = "GTID "
    elif event.flags & MariaGtidFlag.PREPARED_XA:
        out = f"XA START {event.xid} GTID "
    else:
        out = "BEGIN GTID "
    out += f"{event.domain_id}-{event.header.server_id}-{event.seq_no}"
    if event.flags & MariaGtidFlag.GROUP_COMMIT_ID:
        out += f" cid={event.commit_id}"
    extra = event.flags_extra
    if extra & MariaGtidExtraFlag.START_ALTER:
        out += " START ALTER"
    if extra & MariaGtidExtraFlag.COMMIT_ALTER:
        out += f" COMMIT ALTER id={event.sa_seq_no}"
    if extra & MariaGtidExtraFlag.ROLLBACK_ALTER:
        out += f" ROLLBACK ALTER id={event.sa_seq_no}"
    return out


@info_for(MariaGtidListEvent)
def _maria_gtid_list_info(event: MariaGtidListEvent, flavor: Flavor) -> str:
    ordered = sorted(event.gtids, key=lambda g: (g.domain_id, g.seq_no, g.server_id))
    return "[" + ",".join(map(str, ordered)) + "]"


@info_for(BinlogCheckpointEvent)
def _checkpoint_info(event: BinlogCheckpointEvent, flavor: Flavor) -> str:
    return event.log_file


@info_for(XaPrepareEvent)
def _xa_prepare_info(event: XaPrepareEvent, flavor: Flavor) -> str:
    return f"XA COMMIT {event.xid} ONE PHASE" if event.one_phase else f"XA PREPARE {event.xid}"


@info_for(TransactionPayloadEvent)
def _payload_info(event: TransactionPayloadEvent, flavor: Flavor) -> str:
    try:
        compression = CompressionType(event.compression_type).name
    except ValueError:
        compression = str(event.compression_type)
    return f"compression='{compression}', decompressed_size={event.uncompressed_size} bytes"


@info_for(TransactionContextEvent)
def _transaction_context_info(event: TransactionContextEvent, flavor: Flavor) -> str:
    return f"server_uuid={event.server_uuid}\tthread_id={event.thread_id}"


@info_for(ViewChangeEvent)
def _view_change_info(event: ViewChangeEvent, flavor: Flavor) -> str:
    return f"view_id={event.view_id}"


# -- the rest --------------------------------------------------------------------------


@info_for(IncidentEvent)
def _incident_info(event: IncidentEvent, flavor: Flavor) -> str:
    try:
        what = IncidentType(event.incident).name
    except ValueError:
        what = "UNKNOWN"
    # Both servers print the message only when there is none (sic).
    if event.message:
        return f"#{event.incident} ({what})"
    return f"#{event.incident} ({what}): "


@info_for(IgnorableEvent)
def _ignorable_event_info(event: IgnorableEvent, flavor: Flavor) -> str:
    return _ignorable_info(event.header.type_code, flavor)


@info_for(SlaveEvent)
def _slave_info(event: SlaveEvent, flavor: Flavor) -> str:
    return (
        f"host={event.master_host},port={event.master_port},"
        f"log={event.master_log},pos={event.master_pos}"
    )


# -- listings ----------------------------------------------------------------------


@frozen_dataclass
class EventListing:
    """One row of SHOW BINLOG EVENTS, plus the event it describes."""

    log_name: str
    pos: int
    event_type: str
    server_id: int
    end_log_pos: int
    info: str
    event: Event


def list_events(events: Iterable[Event], log_name: str | None = None) -> Iterator[EventListing]:
    """SHOW BINLOG EVENTS rows for a stream of events.

    The Event_type names follow the server flavour of the latest format
    description; ``log_name`` defaults to the base name of each event's file.
    """
    flavor = Flavor.MYSQL
    for event in events:
        if isinstance(event, FormatDescriptionEvent | StartEventV3):
            flavor = flavor_of(event.server_version)
        header = event.header
        # The servers print the name past the last "/" (strrchr(log_name, FN_LIBCHAR)).
        name = log_name if log_name is not None else (header.file or "-").rsplit("/", 1)[-1]
        yield EventListing(
            name,
            header.offset,
            event_type_str(header.type_code, flavor),
            header.server_id,
            header.log_pos,
            event_info(event, flavor),
            event,
        )
