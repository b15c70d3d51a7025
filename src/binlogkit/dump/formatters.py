"""One dump formatter per event family, registered with :func:`~binlogkit.dump.dumper.formats`.

Each formatter writes what the tools' ``Log_event::print`` methods write for
its events (MariaDB's sql/log_event_client.cc, MySQL's sql/log_event.cc),
after the ``# at N`` line that :class:`~binlogkit.dump.dumper.Dumper` prints.
Where the texts equal SHOW BINLOG EVENTS' Info, :mod:`binlogkit.binlog.info`
provides them.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache

from binlogkit.binlog import utf8
from binlogkit.binlog.constants import EventFlag, EventType, Flavor
from binlogkit.binlog.decoder import encode_event
from binlogkit.binlog.events import (
    FormatDescriptionEvent,
    OpaqueEvent,
    RotateEvent,
    StartEventV3,
    XidEvent,
)
from binlogkit.binlog.events.control import StopEvent
from binlogkit.binlog.events.informational import (
    AnnotateRowsEvent,
    BinlogCheckpointEvent,
    IgnorableEvent,
    IncidentEvent,
    StartEncryptionEvent,
)
from binlogkit.binlog.events.load import ExecuteLoadQueryEvent
from binlogkit.binlog.events.mariadb_gtid import MariaGtidEvent, MariaGtidFlag, MariaGtidListEvent
from binlogkit.binlog.events.query import QueryEvent
from binlogkit.binlog.events.rows import RowsEvent, RowsFlag
from binlogkit.binlog.events.statement_context import IntvarEvent, RandEvent, UserVarEvent
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.binlog.events.transaction import XaPrepareEvent
from binlogkit.binlog.info import collation_name, event_info, event_type_str, format_double
from binlogkit.binlog.rows.charsets import charset_name
from binlogkit.binlog.transactions import ends_group, is_trans_keyword, starts_group
from binlogkit.dump.dumper import Dumper, formats
from binlogkit.dump.options import Base64Output
from binlogkit.dump.table_metadata import print_table_metadata
from binlogkit.dump.text import backquoted, base64_lines, timestamp
from binlogkit.errors import BinlogError

# -- the format description ----------------------------------------------------------


@formats(FormatDescriptionEvent, StartEventV3)
def _format_description(d: Dumper, event: FormatDescriptionEvent, raw: bytes) -> None:
    out: list[str] = []
    o = d.options
    if not o.short_form:
        out.append(
            f"{d.header(event, raw)}\tStart: binlog v {event.binlog_version}, "
            f"server v {event.server_version} created {timestamp(event.header.timestamp)}"
        )
        if event.created:
            out.append(" at startup")
        out.append("\n")
        if event.header.flags & EventFlag.BINLOG_IN_USE:
            out.append("# Warning: this binlog is either in use or was not closed properly.\n")
    if not event.header.flags & EventFlag.ARTIFICIAL and event.created:
        out.append(f"ROLLBACK{d.delimiter}\n")
    if o.base64_output is not Base64Output.NEVER and not o.short_form:
        if o.base64_output is not Base64Output.DECODE_ROWS:
            out.append(f"BINLOG '\n{d.base64(raw)}'{d.delimiter}\n")
        d.state.printed_fd = True
    d.write("".join(out))


# -- statements ------------------------------------------------------------------------

# flags2 bits the tools print as session variables, in their order: (bit, name, printed
# value is the bit itself (True) or its negation (False)).
_OPTION_NO_FOREIGN_KEY_CHECKS = 1 << 26
_OPTION_AUTO_IS_NULL = 1 << 14
_OPTION_RELAXED_UNIQUE_CHECKS = 1 << 27
_OPTION_NOT_AUTOCOMMIT = 1 << 19
_OPTION_NO_CHECK_CONSTRAINT_CHECKS = 1 << 15
_OPTION_IF_EXISTS = 1 << 28
_OPTION_EXPLICIT_DEF_TIMESTAMP = 1 << 24
_OPTION_INSERT_HISTORY = 1 << 30

_MARIADB_FLAGS2: tuple[tuple[int, str, bool], ...] = (
    (_OPTION_NO_FOREIGN_KEY_CHECKS, "foreign_key_checks", False),
    (_OPTION_AUTO_IS_NULL, "sql_auto_is_null", True),
    (_OPTION_RELAXED_UNIQUE_CHECKS, "unique_checks", False),
    (_OPTION_NOT_AUTOCOMMIT, "autocommit", False),
    (_OPTION_NO_CHECK_CONSTRAINT_CHECKS, "check_constraint_checks", False),
    (_OPTION_IF_EXISTS, "sql_if_exists", True),
    (_OPTION_EXPLICIT_DEF_TIMESTAMP, "explicit_defaults_for_timestamp", True),
    (_OPTION_INSERT_HISTORY, "system_versioning_insert_history", True),
)
_MYSQL_FLAGS2: tuple[tuple[int, str, bool], ...] = _MARIADB_FLAGS2[:4]


def _mariadb_flags2_mask(version: tuple[int, int, int]) -> int:
    """The flags2 bits a MariaDB server of this version logs beyond the four classic ones."""
    mask = _OPTION_NO_CHECK_CONSTRAINT_CHECKS | _OPTION_INSERT_HISTORY
    if version >= (10, 5, 2):
        mask |= _OPTION_IF_EXISTS
    if version >= (10, 6, 0):
        mask |= _OPTION_EXPLICIT_DEF_TIMESTAMP
    return mask


def _trans_keyword(d: Dumper, query: bytes) -> bool:
    """Whether the tools leave a statement alone: no ``--database`` check, the database kept.

    mariadb-binlog's rule, by the XA flags of the group's GTID event. MySQL
    dumps take it too, their groups having no such flags: unlike
    mysqlbinlog's own rule (``xa=None``), XA statements then count as others.
    """
    return is_trans_keyword(query, xa=bool(d.state.gtid_flags2 & 0xC0))


def _query_header(d: Dumper, event: QueryEvent, raw: bytes) -> list[str]:
    """The comment and SET lines the tools print before a statement (print_query_header)."""
    s = d.state
    st = event.status
    delim = d.delimiter
    out: list[str] = []
    mariadb = d.flavor is Flavor.MARIADB
    if not d.options.short_form:
        if mariadb:
            xid = f"\txid={st.xid or 0}"
        else:
            xid = f"\tXid = {st.ddl_xid}" if st.ddl_xid is not None else ""
        type_name = event_type_str(event.header.type_code, d.flavor)
        out.append(
            f"{d.header(event, raw)}\t{type_name}\tthread_id={event.thread_id}"
            f"\texec_time={event.exec_time}\terror_code={event.error_code}{xid}\n"
        )
    if event.header.flags & EventFlag.SUPPRESS_USE:
        if not _trans_keyword(d, event.query):
            s.db = ""
    elif event.db is not None and event.db != s.db:
        s.db = event.db
        if event.db:
            out.append(f"use {backquoted(event.db)}{delim}\n")
    when = f"SET TIMESTAMP={event.header.timestamp}"
    fraction = st.hrnow if mariadb else st.microseconds
    if fraction and fraction <= 999999:
        when += f".{fraction:06d}"
    out.append(f"{when}{delim}\n")
    if s.thread_id is None or (
        event.header.flags & EventFlag.THREAD_SPECIFIC and event.thread_id != s.thread_id
    ):
        thread = 999999999 if d.options.short_form else event.thread_id
        out.append(f"SET @@session.pseudo_thread_id={thread}{delim}\n")
        s.thread_id = event.thread_id
    if st.flags2 is not None:
        flags2 = st.flags2
        changed = 0xFFFFFFFF if s.flags2 is None else s.flags2 ^ flags2
        if changed:
            if mariadb:
                options = _MARIADB_FLAGS2
                mask = _mariadb_flags2_mask(d.fmt.version) | 0x0C084000
            else:
                options = _MYSQL_FLAGS2
                mask = 0x0C084000
            parts = [
                f"@@session.{name}={int(bool(flags2 & bit) == direct)}"
                for bit, name, direct in options
                if changed & bit & mask
            ]
            out.append("SET " + ", ".join(parts) + f"{delim}\n")
            s.flags2 = flags2
    if st.sql_mode is not None and st.sql_mode != s.sql_mode:
        removed = "/*!80005 &~0x1003ff00*/" if not mariadb and st.sql_mode & 0x1003FF00 else ""
        out.append(f"SET @@session.sql_mode={st.sql_mode}{removed}{delim}\n")
        s.sql_mode = st.sql_mode
    auto = st.auto_increment or (1, 1)
    if auto != s.auto_increment:
        out.append(
            f"SET @@session.auto_increment_increment={auto[0]}, "
            f"@@session.auto_increment_offset={auto[1]}{delim}\n"
        )
        s.auto_increment = auto
    if st.charset is not None and st.charset != s.charset:
        name = charset_name(st.charset[0])
        if name is not None:
            out.append(f"/*!\\C {name} */{delim}\n")
        elif mariadb:
            out.append("# Ignored (Unknown charset) ")
        client = name if mariadb else str(st.charset[0])
        out.append(
            f"SET @@session.character_set_client={client or 'Unknown'},"
            f"@@session.collation_connection={st.charset[1]},"
            f"@@session.collation_server={st.charset[2]}{delim}\n"
        )
        s.charset = st.charset
    if st.time_zone and st.time_zone != s.time_zone:
        out.append(f"SET @@session.time_zone='{st.time_zone}'{delim}\n")
        s.time_zone = st.time_zone
    lc = st.lc_time_names or 0
    if lc != s.lc_time_names:
        out.append(f"SET @@session.lc_time_names={lc}{delim}\n")
        s.lc_time_names = lc
    collation = st.charset_database or 0
    if collation != s.charset_database:
        value = str(collation) if collation else "DEFAULT"
        out.append(f"SET @@session.collation_database={value}{delim}\n")
        s.charset_database = collation
    if not mariadb:
        out += _mysql_session_variables(d, event)
    return out


def _mysql_session_variables(d: Dumper, event: QueryEvent) -> list[str]:
    """The session variables only MySQL's QUERY events carry (print_query_header's last lines)."""
    st = event.status
    s = d.state
    delim = d.delimiter
    out = []
    if st.explicit_defaults_for_timestamp is not None:
        value = 0 if st.explicit_defaults_for_timestamp == 0 else 1
        out.append(f"SET @@session.explicit_defaults_for_timestamp={value}{delim}\n")
    collation = st.default_collation_for_utf8mb4 or 0
    if collation != s.default_collation_for_utf8mb4:
        if collation:
            out.append(
                f"/*!80011 SET @@session.default_collation_for_utf8mb4={collation}*/{delim}\n"
            )
        s.default_collation_for_utf8mb4 = collation
    # mysqlbinlog compares these two with "not printed yet" (0xff) and never remembers them
    if st.sql_require_primary_key is not None:
        value = st.sql_require_primary_key
        out.append(f"/*!80013 SET @@session.sql_require_primary_key={value}*/{delim}\n")
    if st.default_table_encryption is not None:
        value = st.default_table_encryption
        out.append(f"/*!80016 SET @@session.default_table_encryption={value}*/{delim}\n")
    return out


def _track_transaction(d: Dumper, query: bytes) -> None:
    """What mysqlbinlog remembers of the transaction a printed statement belongs to."""
    s = d.state
    if ends_group(query):
        s.in_transaction = s.seen_gtid = s.skipped_in_transaction = False
    elif starts_group(query):
        s.in_transaction = True
    elif not s.in_transaction:
        s.seen_gtid = False


def _rewritten_use(d: Dumper, event: QueryEvent) -> None:
    """``use NEW`` before a statement whose database ``--rewrite-db`` renames (print_use_stmt)."""
    s = d.state
    db = event.db
    if event.header.flags & EventFlag.SUPPRESS_USE or not db or db == s.db:
        return
    target = d.options.rewrite_db.get(db)
    if target is None:
        return
    d.write(f"use {backquoted(target)}{d.delimiter}\n")
    s.db = db  # the statement's own "use" is then left out


@formats(QueryEvent)
def _query(d: Dumper, event: QueryEvent, raw: bytes) -> None:
    deferred = d.state.deferred
    if deferred:
        d.state.deferred = []
    if not _trans_keyword(d, event.query) and d.skips_db(event.db):
        if d.flavor is Flavor.MYSQL:
            s = d.state
            query = event.query
            if s.seen_gtid and not s.in_transaction and not starts_group(query):
                if not ends_group(query):
                    d.write(f"COMMIT /* added by mysqlbinlog */{d.delimiter}\n")
                s.skipped_in_transaction = s.in_transaction = s.seen_gtid = False
            else:
                s.skipped_in_transaction = True
        return
    if d.flavor is Flavor.MYSQL:
        _track_transaction(d, event.query)
    if deferred:
        d.write("".join(deferred))
    _rewritten_use(d, event)
    d.skip_replication(event)
    out = _query_header(d, event, raw)
    out.append(utf8.decode(event.query))
    out.append(f"\n{d.delimiter}\n")
    d.write("".join(out))


@formats(ExecuteLoadQueryEvent)
def _execute_load_query(d: Dumper, event: ExecuteLoadQueryEvent, raw: bytes) -> None:
    if d.state.deferred:
        d.write("".join(d.state.deferred))
        d.state.deferred = []
    d.skip_replication(event)
    out = _query_header(d, event, raw)
    out.append(utf8.decode(event.query))
    out.append(f"\n{d.delimiter}\n")
    if not d.options.short_form:
        out.append(f"# file_id: {event.file_id} \n")
    d.write("".join(out))


@formats(IntvarEvent)
def _intvar(d: Dumper, event: IntvarEvent, raw: bytes) -> None:
    d.skip_replication(event)
    head = "" if d.options.short_form else f"{d.header(event, raw)}\tIntvar\n"
    info = event_info(event, d.flavor)  # NAME=value, signed
    d.statement_context(f"{head}SET {info}{d.delimiter}\n")


@formats(RandEvent)
def _rand(d: Dumper, event: RandEvent, raw: bytes) -> None:
    d.skip_replication(event)
    head = "" if d.options.short_form else f"{d.header(event, raw)}\tRand\n"
    d.statement_context(
        f"{head}SET @@RAND_SEED1={event.seed1}, @@RAND_SEED2={event.seed2}{d.delimiter}\n"
    )


@formats(UserVarEvent)
def _user_var(d: Dumper, event: UserVarEvent, raw: bytes) -> None:
    d.skip_replication(event)
    head = "" if d.options.short_form else f"{d.header(event, raw)}\tUser_var\n"
    name = f"SET @{backquoted(event.name)}"
    value = event.value
    if value is None:
        text = "NULL"
    elif isinstance(value, float):
        text = format_double(value) if d.flavor is Flavor.MYSQL else f"{value:.14g}"
    elif isinstance(value, int):
        text = str(value)
    elif event.value_type == 4:  # DECIMAL
        text = format(value, "f")
    else:
        charset = charset_name(event.charset)
        if charset is None:
            text = "???"
        else:
            hexed = "0x" + event.raw.hex().upper() if event.raw else "''"
            text = f"_{charset} {hexed} COLLATE `{collation_name(event.charset)}`"
    d.statement_context(f"{head}{name}:={text}{d.delimiter}\n")


@formats(XidEvent)
def _xid(d: Dumper, event: XidEvent, raw: bytes) -> None:
    s = d.state
    s.in_transaction = s.seen_gtid = s.skipped_in_transaction = False
    d.skip_replication(event)
    head = "" if d.options.short_form else f"{d.header(event, raw)}\tXid = {event.xid}\n"
    d.write(f"{head}COMMIT{d.delimiter}\n")


@formats(XaPrepareEvent)
def _xa_prepare(d: Dumper, event: XaPrepareEvent, raw: bytes) -> None:
    d.skip_replication(event)
    xid = str(event.xid)
    head = "" if d.options.short_form else f"{d.header(event, raw)}\tXID = {xid}\n"
    verb = "XA COMMIT" if event.one_phase else "XA PREPARE"
    suffix = " ONE PHASE" if event.one_phase else ""
    d.write(f"{head}{verb} {xid}{suffix}\n{d.delimiter}\n")


# -- file-level events ------------------------------------------------------------------


@formats(RotateEvent)
def _rotate(d: Dumper, event: RotateEvent, raw: bytes) -> None:
    d.skip_replication(event)
    if not d.options.short_form:
        d.write(f"{d.header(event, raw)}\tRotate to {event.next_file}  pos: {event.position}\n")


@formats(StopEvent)
def _stop(d: Dumper, event: StopEvent, raw: bytes) -> None:
    d.skip_replication(event)
    if not d.options.short_form:
        d.write(f"{d.header(event, raw)}\tStop\n")


@formats(BinlogCheckpointEvent)
def _checkpoint(d: Dumper, event: BinlogCheckpointEvent, raw: bytes) -> None:
    d.skip_replication(event)
    if not d.options.short_form:
        d.write(f"{d.header(event, raw)}\tBinlog checkpoint {event.log_file}\n")


@formats(MariaGtidListEvent)
def _gtid_list(d: Dumper, event: MariaGtidListEvent, raw: bytes) -> None:
    d.skip_replication(event)
    if not d.options.short_form:
        ordered = sorted(event.gtids, key=lambda g: (g.domain_id, g.seq_no, g.server_id))
        listed = ",\n# ".join(map(str, ordered))
        d.write(f"{d.header(event, raw)}\tGtid list [{listed}]\n")


_GTID_WORDS = tuple(
    "".join(
        word
        for bit, word in (
            (MariaGtidFlag.DDL, " ddl"),
            (MariaGtidFlag.TRANSACTIONAL, " trans"),
            (MariaGtidFlag.WAITED, " waited"),
        )
        if flags & bit
    )
    for flags in range(256)
)
"""The words a GTID line shows after its cid, by the event's flags."""
_GROUP_COMMIT_ID = int(MariaGtidFlag.GROUP_COMMIT_ID)
_ALLOW_PARALLEL = int(MariaGtidFlag.ALLOW_PARALLEL)
_PREPARED_XA = int(MariaGtidFlag.PREPARED_XA)
_STANDALONE = int(MariaGtidFlag.STANDALONE)


@formats(MariaGtidEvent)
def _gtid(d: Dumper, event: MariaGtidEvent, raw: bytes) -> None:
    d.skip_replication(event)
    s = d.state
    delim = d.delimiter
    flags = int(event.flags)
    out: list[str] = []
    if not d.options.short_form:
        server_id = event.header.server_id
        line = f"{d.header(event, raw)}\tGTID {event.domain_id}-{server_id}-{event.seq_no}"
        if flags & _GROUP_COMMIT_ID:
            line += f" cid={event.commit_id}"
        line += _GTID_WORDS[flags & 0xFF]
        extra = event.flags_extra
        if extra & 0x0E:
            if extra & 0x02:
                line += " START ALTER"
            if extra & 0x04:
                line += f" COMMIT ALTER id= {event.sa_seq_no}"
            if extra & 0x08:
                line += f" ROLLBACK ALTER id= {event.sa_seq_no}"
        out.append(line + "\n")
        parallel = bool(flags & _ALLOW_PARALLEL)
        if s.allow_parallel is None or s.allow_parallel != parallel:
            out.append(
                f"/*M!100101 SET @@session.skip_parallel_replication={int(not parallel)}*/{delim}\n"
            )
            s.allow_parallel = parallel
        if s.domain_id is None or s.domain_id != event.domain_id:
            out.append(f"/*M!100001 SET @@session.gtid_domain_id={event.domain_id}*/{delim}\n")
            s.domain_id = event.domain_id
        if s.server_id is None or s.server_id != server_id:
            out.append(f"/*M!100001 SET @@session.server_id={server_id}*/{delim}\n")
            s.server_id = server_id
        out.append(f"/*M!100001 SET @@session.gtid_seq_no={event.seq_no}*/{delim}\n")
    if flags & _PREPARED_XA:
        out.append(f"XA START {event.xid}{delim}\n")
    elif not flags & _STANDALONE:
        out.append(f"START TRANSACTION\n{delim}\n")
    s.gtid_flags2 = flags
    d.write("".join(out))


@formats(IncidentEvent)
def _incident(d: Dumper, event: IncidentEvent, raw: bytes) -> None:
    d.skip_replication(event)
    if not d.options.short_form:
        what = utf8.decode(event.message) if event.message else "(null)"
        d.write(
            f"{d.header(event, raw)}\n# Incident: {what}\n"
            "RELOAD DATABASE; # Shall generate syntax error\n"
        )


@formats(IgnorableEvent, OpaqueEvent)
def _ignorable(d: Dumper, event: IgnorableEvent, raw: bytes) -> None:
    if d.options.short_form:
        return
    code = event.header.type_code
    if event.header.flags & EventFlag.IGNORABLE:
        name = event_type_str(code, d.flavor)
        d.write(f"{d.header(event, raw)}\tIgnorable\n# Ignorable event type {code} ({name})\n")
    else:
        d.write(f"{d.header(event, raw)}\n# Unknown event\n")


@formats(StartEncryptionEvent)
def _start_encryption(d: Dumper, event: StartEncryptionEvent, raw: bytes) -> None:
    d.write(
        f"# Encryption scheme: {event.scheme}, key_version: {event.key_version}, "
        f"nonce: {event.nonce.hex()}\n# The rest of the binlog is encrypted!\n"
    )


# -- row statements -----------------------------------------------------------------------


@formats(AnnotateRowsEvent)
def _annotate(d: Dumper, event: AnnotateRowsEvent, raw: bytes) -> None:
    if d.options.skip_annotate_row_events:
        return
    d.state.annotate = (event, raw)


def _annotate_text(header: str, event: AnnotateRowsEvent) -> str:
    head = f"{header}\tAnnotate_rows:\n" if header else "# Annotate_rows:\n"
    query = event.query
    if 10 not in query and 13 not in query:  # one line (no LF, no CR): most statements
        return f"{head}#Q> {utf8.decode(query)}\n" if query else head
    text = utf8.decode(query).replace("\r", "\n")
    return head + "".join(f"#Q> {line}\n" for line in text.split("\n") if line)


@formats(TableMapEvent)
def _table_map(d: Dumper, event: TableMapEvent, raw: bytes) -> None:
    s = d.state
    o = d.options
    shown = raw
    if d.filters_tables:
        wanted_table = o.table
        if d.skips_db(event.schema) or (
            wanted_table is not None and event.table_name != wanted_table
        ):
            s.ignored_tables.add(event.table_id)
            return
        target = o.rewrite_db.get(event.schema)
        if target is not None:
            # Renamed as the tools do: the bytes re-encoded, but with the old checksum (sic).
            event = replace(event, schema=target)
            shown = encode_event(event, d.fmt)
            if d.fmt.checksum_length:
                shown = shown[:-4] + raw[-4:]
    line, printer = d.table_map_texts(event, shown)
    text = "" if o.short_form else d.header(event, raw, None, shown) + line
    if s.annotate is not None:
        annotate, annotate_raw = s.annotate
        # The tools print it now, their hex dump address already the table map's (sic).
        if o.short_form:
            header = ""
        else:
            header = d.header(annotate, annotate_raw, d.offset(event) if o.hexdump else None)
        text = _annotate_text(header, annotate) + text  # type: ignore[arg-type]
        s.annotate = None
    s.tables[event.table_id] = (event, printer)
    head = s.head
    if head or o.print_table_metadata:
        head.append(text)
        if o.print_table_metadata:
            print_table_metadata(d, event)
        d.write("".join(head))
        head.clear()
    else:
        d.write(text)
    if d.encode_rows:
        s.body.append(base64_lines(shown))


_UNCOMPRESSED: dict[int, int] = {
    EventType.MARIADB_WRITE_ROWS_COMPRESSED_V1: EventType.WRITE_ROWS_V1,
    EventType.MARIADB_UPDATE_ROWS_COMPRESSED_V1: EventType.UPDATE_ROWS_V1,
    EventType.MARIADB_DELETE_ROWS_COMPRESSED_V1: EventType.DELETE_ROWS_V1,
    EventType.MARIADB_WRITE_ROWS_COMPRESSED: EventType.WRITE_ROWS,
    EventType.MARIADB_UPDATE_ROWS_COMPRESSED: EventType.UPDATE_ROWS,
    EventType.MARIADB_DELETE_ROWS_COMPRESSED: EventType.DELETE_ROWS,
}

_ROWS_NAMES: dict[int, str] = {
    EventType.MARIADB_WRITE_ROWS_COMPRESSED_V1: "Write_compressed_rows",
    EventType.MARIADB_UPDATE_ROWS_COMPRESSED_V1: "Update_compressed_rows",
    EventType.MARIADB_DELETE_ROWS_COMPRESSED_V1: "Delete_compressed_rows",
    EventType.MARIADB_WRITE_ROWS_COMPRESSED: "Write_compressed_rows",
    EventType.MARIADB_UPDATE_ROWS_COMPRESSED: "Update_compressed_rows",
    EventType.MARIADB_DELETE_ROWS_COMPRESSED: "Delete_compressed_rows",
}


_OLD_ROWS_NAMES: dict[int, str] = {
    EventType.PRE_GA_WRITE_ROWS: "Write_rows_old",
    EventType.PRE_GA_UPDATE_ROWS: "Update_rows_old",
    EventType.PRE_GA_DELETE_ROWS: "Delete_rows_old",
}


@cache
def _rows_name(code: int, mysql: bool, before: bool, after: bool) -> str:
    """The name a rows event's header line shows: by its type code, flavour and images."""
    if code in _OLD_ROWS_NAMES:
        return _OLD_ROWS_NAMES[code]
    if mysql:
        return event_type_str(code, Flavor.MYSQL)
    name = _ROWS_NAMES.get(code)
    if name is not None:
        return name
    if before and after:
        return "Update_rows"
    return "Delete_rows" if before else "Write_rows"


_STMT_END = int(RowsFlag.STMT_END)
_END_FLAGS = ("", " flags: STMT_END_F")
"""What a rows event's header line ends with, by whether it ends its statement."""
_MYSQL = Flavor.MYSQL
"""(A module constant: reading an enum member off its class is slow.)"""


@formats(RowsEvent)
def _rows(d: Dumper, event: RowsEvent, raw: bytes) -> None:
    s = d.state
    end = bool(event.flags & _STMT_END)
    if s.ignored_tables:
        if event.table_id in s.ignored_tables:
            if end:  # the statement's last event is left out: flush what its others gathered
                s.ignored_tables.clear()
                s.annotate = None
                if s.body:
                    s.body.append(f"'{d.delimiter}\n")
                d.write("".join(s.head) + "".join(s.body))
                s.head.clear()
                s.body.clear()
            return
        if end:
            s.ignored_tables.clear()
    mysql = d.flavor is _MYSQL
    if mysql and d.refuses_rows():
        name = event_type_str(event.header.type_code, d.flavor)
        if d.options.base64_output is Base64Output.NEVER:
            raise BinlogError(
                f"--base64-output=never specified, but binlog contains a {name} event "
                "which must be printed in base64."
            )
        raise BinlogError(
            "malformed binlog: it does not contain any Format_description_log_event. "
            f"I now found a {name} event, which is not safe to process without a "
            "Format_description_log_event."
        )
    s.unflushed = not end
    o = d.options
    code = event.header.type_code
    shown = raw
    plain_code = _UNCOMPRESSED.get(code)
    if plain_code is not None and (d.encode_rows or o.hexdump):
        # The tools print compressed rows events uncompressed (base64 and hex dump).
        plain = replace(
            event, header=replace(event.header, type_code=plain_code), data=event.rows_data
        )
        shown = encode_event(plain, d.fmt)
    if not o.short_form:
        name = _rows_name(code, mysql, event.has_before, event.has_after)
        header = d.header(event, raw, None, shown)
        s.head.append(f"{header}\t{name}: table id {event.table_id}{_END_FLAGS[end]}\n")
    if d.encode_rows:
        s.body.append(base64_lines(shown))
    entry = s.tables.get(event.table_id)
    if code in _OLD_ROWS_NAMES:
        # The tools' Old_rows_log_event prints no pseudo-SQL and counts no rows: the
        # images start with record NULL bytes, which their row printer cannot read.
        count = 0
    elif o.verbose:
        lines, count = d.rows_printer.rows(event, None if entry is None else entry[1])
        s.tail += lines
    else:
        count = d.rows_printer.count(event, None if entry is None else entry[1])
    s.row_count += count
    if end:
        if o.print_row_count and not o.short_form and not mysql:
            d.flush_statement(f"# Number of rows: {s.row_count}\n")
        else:
            d.flush_statement()
        s.row_count = 0
        s.annotate = None


# The MySQL-only events' formatters register themselves on import.
from binlogkit.dump import mysql as _mysql  # noqa: E402, F401
