"""QUERY and MariaDB QUERY_COMPRESSED: a statement, its default database and session state.

The post-header is thread id, execution time, database length and error code
(11 bytes in formats v1 and v3), then the length of the status-variable block
(13 bytes from MySQL 5.0). The body is the status block, the database name
with a NUL, and the statement up to the end of the event.

The status block is a run of ``code, value`` pairs. :class:`QueryStatus`
decodes every code MySQL (0-21) and MariaDB (128-131) define, keeps the order
they were written in, and keeps the bytes from the first unknown code on
unparsed, as the servers do, so re-encoding gives the same bytes.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable
from enum import IntEnum
from typing import Any, ClassVar, NamedTuple

from binlogkit.binlog import mariadb_compression, utf8
from binlogkit.binlog.constants import V4_HEADER_LENGTH, EventType
from binlogkit.binlog.context import DecodeContext, FormatContext
from binlogkit.binlog.events.base import Body, Event, TransactionRole, register
from binlogkit.binlog.events.mariadb_gtid import MariaGtidExtraFlag
from binlogkit.binlog.frozen import fast_constructor, frozen_dataclass
from binlogkit.binlog.header import EventHeader
from binlogkit.binlog.rows.charsets import text_codec
from binlogkit.errors import DecodeError, EncodeError
from binlogkit.wire import ByteReader, ByteWriter

QUERY_HEADER_MINIMAL_LEN = 11
"""Post-header of formats v1 and v3: no status-variable block."""

QUERY_HEADER_LEN = 13
"""Post-header from MySQL 5.0 (format v4): adds the status-block length."""

MAX_DBS_IN_EVENT_MTS = 16
"""Above this many databases, Q_UPDATED_DB_NAMES carries a count and no names."""

OVER_MAX_DBS_IN_EVENT_MTS = 254
"""The count MySQL writes when a statement touched more than 16 databases."""

_ALTER_DONE = int(MariaGtidExtraFlag.COMMIT_ALTER | MariaGtidExtraFlag.ROLLBACK_ALTER)
"""MariaDB GTID extra flags after which Q_GTID_FLAGS3 carries the start-alter seq_no."""

_POST = struct.Struct("<IIBH")


class StatusCode(IntEnum):
    """Codes of the QUERY status variables (MySQL ``Q_*``, MariaDB from 128)."""

    FLAGS2 = 0
    SQL_MODE = 1
    CATALOG = 2
    AUTO_INCREMENT = 3
    CHARSET = 4
    TIME_ZONE = 5
    CATALOG_NZ = 6
    LC_TIME_NAMES = 7
    CHARSET_DATABASE = 8
    TABLE_MAP_FOR_UPDATE = 9
    MASTER_DATA_WRITTEN = 10
    INVOKER = 11
    UPDATED_DB_NAMES = 12
    MICROSECONDS = 13
    COMMIT_TS = 14
    COMMIT_TS2 = 15
    EXPLICIT_DEFAULTS_FOR_TIMESTAMP = 16
    DDL_LOGGED_WITH_XID = 17
    DEFAULT_COLLATION_FOR_UTF8MB4 = 18
    SQL_REQUIRE_PRIMARY_KEY = 19
    DEFAULT_TABLE_ENCRYPTION = 20
    ENABLE_CASCADE_TRIGGERS = 21
    MARIADB_HRNOW = 128
    MARIADB_XID = 129
    MARIADB_GTID_FLAGS3 = 130
    MARIADB_CHARACTER_SET_COLLATIONS = 131


@frozen_dataclass
class QueryStatus:
    """The status variables of a QUERY event; ``None`` means the variable was not written.

    - ``flags2``: session option bits (autocommit, foreign_key_checks ...).
    - ``sql_mode``: the 64-bit sql_mode.
    - ``catalog``: the catalog (``std``), from code 6 or, in MySQL 5.0.0-5.0.3, code 2.
    - ``auto_increment``: (auto_increment_increment, auto_increment_offset).
    - ``charset``: (character_set_client, collation_connection, collation_server) ids.
    - ``time_zone``, ``lc_time_names``, ``charset_database``: session values.
    - ``table_map_for_update``: the tables a multi-table UPDATE changes (bitmap).
    - ``master_data_written``: original event size, in relay logs of pre-5.0 masters.
    - ``invoker``: (user, host) of the definer for account-management statements.
    - ``updated_db_names``: databases the statement changed (MySQL multi-threaded
      replica); ``updated_db_count`` is the count byte, 254 with no names when
      more than 16 databases were touched (None: derive it from the names).
    - ``microseconds`` (MySQL) and ``hrnow`` (MariaDB): the fractional second of
      the statement's start time.
    - ``commit_ts``: commit sequence number of the MySQL 5.7.0-5.7.3 previews.
    - ``explicit_defaults_for_timestamp``, ``sql_require_primary_key``,
      ``default_table_encryption``, ``enable_cascade_triggers``: 1-byte session values.
    - ``ddl_xid`` (MySQL) and ``xid`` (MariaDB): the XID of a recoverable DDL.
    - ``default_collation_for_utf8mb4``: collation id.
    - ``gtid_flags3``: MariaDB GTID extra flags; ``start_alter_seq_no`` follows
      when they mark the commit or rollback of a replicated ALTER.
    - ``character_set_collations``: MariaDB's (charset id, collation id) pairs.

    ``order`` lists the codes in the order they were written (None: ascending
    write order of the servers: flags2, sql_mode, catalog, then ascending codes;
    MariaDB 11.5+ writes code 131 before the charset). ``unparsed`` holds the block from
    the first code this library does not know (or a repeated code) to its end.
    """

    flags2: int | None = None
    sql_mode: int | None = None
    catalog: str | None = None
    auto_increment: tuple[int, int] | None = None
    charset: tuple[int, int, int] | None = None
    time_zone: str | None = None
    lc_time_names: int | None = None
    charset_database: int | None = None
    table_map_for_update: int | None = None
    master_data_written: int | None = None
    invoker: tuple[str, str] | None = None
    updated_db_names: tuple[str, ...] | None = None
    updated_db_count: int | None = None
    microseconds: int | None = None
    commit_ts: int | None = None
    explicit_defaults_for_timestamp: int | None = None
    ddl_xid: int | None = None
    default_collation_for_utf8mb4: int | None = None
    sql_require_primary_key: int | None = None
    default_table_encryption: int | None = None
    enable_cascade_triggers: int | None = None
    hrnow: int | None = None
    xid: int | None = None
    gtid_flags3: int | None = None
    start_alter_seq_no: int | None = None
    character_set_collations: tuple[tuple[int, int], ...] | None = None
    order: tuple[int, ...] | None = None
    unparsed: bytes = b""

    @classmethod
    def decode(cls, block: bytes | memoryview) -> QueryStatus:
        """Parse a status-variable block.

        A session writes the same block again and again (every BEGIN): the parse
        of a recent block is reused, which is safe as the value is immutable.
        """
        return _decode_status(bytes(block))

    def encode(self) -> bytes:
        """The status-variable block."""
        w = ByteWriter()
        for code in self.codes():
            spec = _STATUS.get(code)
            if spec is None:
                raise EncodeError(f"unknown QUERY status variable code {code} in order")
            if getattr(self, spec.field) is None:
                raise EncodeError(f"status variable {spec.field} is listed in order but unset")
            w.u8(code)
            spec.write(w, self)
        w.write(self.unparsed)
        return w.getvalue()

    def codes(self) -> tuple[int, ...]:
        """The codes written, in order (the explicit ``order``, else the servers' write order)."""
        if self.order is not None:
            return self.order
        return tuple(
            code for code in _WRITE_ORDER if getattr(self, _STATUS[code].field) is not None
        )

    @property
    def character_set_client(self) -> int | None:
        return None if self.charset is None else self.charset[0]

    @property
    def collation_connection(self) -> int | None:
        return None if self.charset is None else self.charset[1]

    @property
    def collation_server(self) -> int | None:
        return None if self.charset is None else self.charset[2]


class _Spec(NamedTuple):
    field: str
    read: Callable[[ByteReader, dict[str, Any]], None]
    write: Callable[[ByteWriter, QueryStatus], None]


_UNPACK = {
    1: struct.Struct("<B"),
    2: struct.Struct("<H"),
    4: struct.Struct("<I"),
    8: struct.Struct("<Q"),
}


def _int_spec(name: str, size: int) -> _Spec:
    unpack = _UNPACK[size].unpack_from if size in _UNPACK else None

    def read(r: ByteReader, out: dict[str, Any]) -> None:
        start = r.need(size, name)
        if unpack is None:
            out[name] = int.from_bytes(r.buf[start : start + size], "little")
        else:
            out[name] = unpack(r.buf, start)[0]

    def write(w: ByteWriter, status: QueryStatus) -> None:
        w.uint(getattr(status, name), size)

    return _Spec(name, read, write)


def _ints_spec(name: str, count: int) -> _Spec:
    unpack = struct.Struct("<" + "H" * count).unpack_from

    def read(r: ByteReader, out: dict[str, Any]) -> None:
        out[name] = unpack(r.buf, r.need(2 * count, name))

    def write(w: ByteWriter, status: QueryStatus) -> None:
        values = getattr(status, name)
        if len(values) != count:
            raise EncodeError(f"status variable {name} needs {count} values")
        for value in values:
            w.u16(value)

    return _Spec(name, read, write)


def _str_spec(name: str, *, nul: bool = False) -> _Spec:
    """A string with a 1-byte length (and, for the old catalog code, a trailing NUL)."""

    def read(r: ByteReader, out: dict[str, Any]) -> None:
        out[name] = utf8.decode(r.take(r.u8(name), name))
        if nul and r.u8(name) != 0:
            raise DecodeError(f"status variable {name} lacks its terminating NUL")

    def write(w: ByteWriter, status: QueryStatus) -> None:
        _write_short(w, utf8.encode(getattr(status, name)), name)
        if nul:
            w.u8(0)

    return _Spec(name, read, write)


def _write_short(w: ByteWriter, raw: bytes, what: str) -> None:
    if len(raw) > 255:
        raise EncodeError(f"{what} is longer than 255 bytes")
    w.u8(len(raw))
    w.write(raw)


def _read_invoker(r: ByteReader, out: dict[str, Any]) -> None:
    user = r.take(r.u8("invoker user"), "invoker user")
    host = r.take(r.u8("invoker host"), "invoker host")
    out["invoker"] = (utf8.decode(user), utf8.decode(host))


def _write_invoker(w: ByteWriter, status: QueryStatus) -> None:
    assert status.invoker is not None
    user, host = status.invoker
    _write_short(w, utf8.encode(user), "invoker user")
    _write_short(w, utf8.encode(host), "invoker host")


def _read_db_names(r: ByteReader, out: dict[str, Any]) -> None:
    count = r.u8("updated db count")
    names: tuple[str, ...] = ()
    if count <= MAX_DBS_IN_EVENT_MTS:
        names = tuple(utf8.decode(r.cstring("updated db name")) for _ in range(count))
    out["updated_db_names"] = names
    out["updated_db_count"] = count


def _write_db_names(w: ByteWriter, status: QueryStatus) -> None:
    names = status.updated_db_names or ()
    count = status.updated_db_count
    if count is None:
        count = len(names) if len(names) <= MAX_DBS_IN_EVENT_MTS else OVER_MAX_DBS_IN_EVENT_MTS
    w.u8(count)
    if count <= MAX_DBS_IN_EVENT_MTS:
        if count != len(names):
            raise EncodeError(f"updated_db_count {count} but {len(names)} names")
        for name in names:
            w.cstring(utf8.encode(name))


def _read_gtid_flags3(r: ByteReader, out: dict[str, Any]) -> None:
    flags = r.u8("gtid flags3")
    out["gtid_flags3"] = flags
    if flags & _ALTER_DONE:
        out["start_alter_seq_no"] = r.u64("start alter seq_no")


def _write_gtid_flags3(w: ByteWriter, status: QueryStatus) -> None:
    flags = status.gtid_flags3
    assert flags is not None
    w.u8(flags)
    if flags & _ALTER_DONE:
        if status.start_alter_seq_no is None:
            raise EncodeError(
                "gtid_flags3 marks an ALTER commit/rollback: start_alter_seq_no needed"
            )
        w.u64(status.start_alter_seq_no)


def _read_collations(r: ByteReader, out: dict[str, Any]) -> None:
    count = r.u8("character set collations")
    out["character_set_collations"] = tuple(
        (r.u16("charset id"), r.u16("collation id")) for _ in range(count)
    )


def _write_collations(w: ByteWriter, status: QueryStatus) -> None:
    pairs = status.character_set_collations
    assert pairs is not None
    w.u8(len(pairs))
    for charset, collation in pairs:
        w.u16(charset)
        w.u16(collation)


_STATUS: dict[int, _Spec] = {
    StatusCode.FLAGS2: _int_spec("flags2", 4),
    StatusCode.SQL_MODE: _int_spec("sql_mode", 8),
    StatusCode.CATALOG: _str_spec("catalog", nul=True),
    StatusCode.AUTO_INCREMENT: _ints_spec("auto_increment", 2),
    StatusCode.CHARSET: _ints_spec("charset", 3),
    StatusCode.TIME_ZONE: _str_spec("time_zone"),
    StatusCode.CATALOG_NZ: _str_spec("catalog"),
    StatusCode.LC_TIME_NAMES: _int_spec("lc_time_names", 2),
    StatusCode.CHARSET_DATABASE: _int_spec("charset_database", 2),
    StatusCode.TABLE_MAP_FOR_UPDATE: _int_spec("table_map_for_update", 8),
    StatusCode.MASTER_DATA_WRITTEN: _int_spec("master_data_written", 4),
    StatusCode.INVOKER: _Spec("invoker", _read_invoker, _write_invoker),
    StatusCode.UPDATED_DB_NAMES: _Spec("updated_db_names", _read_db_names, _write_db_names),
    StatusCode.MICROSECONDS: _int_spec("microseconds", 3),
    StatusCode.COMMIT_TS: _int_spec("commit_ts", 8),
    StatusCode.EXPLICIT_DEFAULTS_FOR_TIMESTAMP: _int_spec("explicit_defaults_for_timestamp", 1),
    StatusCode.DDL_LOGGED_WITH_XID: _int_spec("ddl_xid", 8),
    StatusCode.DEFAULT_COLLATION_FOR_UTF8MB4: _int_spec("default_collation_for_utf8mb4", 2),
    StatusCode.SQL_REQUIRE_PRIMARY_KEY: _int_spec("sql_require_primary_key", 1),
    StatusCode.DEFAULT_TABLE_ENCRYPTION: _int_spec("default_table_encryption", 1),
    StatusCode.ENABLE_CASCADE_TRIGGERS: _int_spec("enable_cascade_triggers", 1),
    StatusCode.MARIADB_HRNOW: _int_spec("hrnow", 3),
    StatusCode.MARIADB_XID: _int_spec("xid", 8),
    StatusCode.MARIADB_GTID_FLAGS3: _Spec("gtid_flags3", _read_gtid_flags3, _write_gtid_flags3),
    StatusCode.MARIADB_CHARACTER_SET_COLLATIONS: _Spec(
        "character_set_collations", _read_collations, _write_collations
    ),
}
"""Code → how to read and write it. Q_COMMIT_TS2 (15) has no known layout: it stays unparsed."""

_WRITE_ORDER = (
    StatusCode.FLAGS2,
    StatusCode.SQL_MODE,
    StatusCode.CATALOG_NZ,
    *sorted(
        set(_STATUS)
        - {StatusCode.FLAGS2, StatusCode.SQL_MODE, StatusCode.CATALOG, StatusCode.CATALOG_NZ}
    ),
)
"""The order servers write the variables in (MySQL's Query_log_event::write)."""

EMPTY_STATUS = QueryStatus(order=())


@functools.lru_cache(maxsize=256)
def _decode_status(data: bytes) -> QueryStatus:
    """:meth:`QueryStatus.decode`, with the last few hundred distinct blocks remembered."""
    r = ByteReader(data)
    values: dict[str, Any] = {}
    order: list[int] = []
    end = len(data)
    while r.pos < end:
        spec = _STATUS.get(data[r.pos])
        if spec is None or spec.field in values:
            break
        order.append(data[r.pos])
        r.pos += 1
        spec.read(r, values)
    return QueryStatus(**values, order=tuple(order), unparsed=r.rest())


class QueryParts(NamedTuple):
    """The pieces of a QUERY-layout body (QUERY, EXECUTE_LOAD_QUERY, QUERY_COMPRESSED)."""

    thread_id: int
    exec_time: int
    error_code: int
    post_header_rest: bytes
    status: QueryStatus
    db: str
    query: bytes


def decode_query_parts(body: Body, post_header_length: int) -> QueryParts:
    """Split a QUERY-layout body; ``post_header_rest`` is the post-header past the QUERY part."""
    if post_header_length < QUERY_HEADER_MINIMAL_LEN or post_header_length == 12:
        raise DecodeError(f"QUERY post-header of {post_header_length} bytes is not a known layout")
    r = ByteReader(body)
    r.need(QUERY_HEADER_MINIMAL_LEN, "query post-header")
    thread_id, exec_time, db_len, error_code = _POST.unpack_from(body, 0)
    status = EMPTY_STATUS
    status_len = 0
    if post_header_length >= QUERY_HEADER_LEN:
        status_len = r.u16("status block length")
    rest = r.take(post_header_length - r.pos, "query post-header")
    if status_len:
        status = QueryStatus.decode(r.take(status_len, "status variables"))
    db = r.take(db_len, "database name")
    if r.u8("database name terminator") != 0:
        raise DecodeError("database name is not followed by a NUL")
    return QueryParts(thread_id, exec_time, error_code, rest, status, utf8.decode(db), r.rest())


_RAW_LENGTHS = struct.Struct(f"<{V4_HEADER_LENGTH + 8}xBxxH")
"""db_len and status_len of a whole raw QUERY event (after its v4 header)."""


def raw_statement(raw: bytes, post_header_length: int, checksum_length: int) -> bytes | None:
    """The statement of a whole raw QUERY event (v4 header first), without decoding it; None
    when the format has no status block (older than v4) or the bytes are too short."""
    if post_header_length < QUERY_HEADER_LEN:
        return None
    end = len(raw) - checksum_length
    if end < V4_HEADER_LENGTH + post_header_length:
        return None
    db_len, status_len = _RAW_LENGTHS.unpack_from(raw)
    start = V4_HEADER_LENGTH + post_header_length + status_len + db_len + 1
    return raw[start:end] if start <= end else None


def encode_query_parts(parts: QueryParts, post_header_length: int) -> bytes:
    """The mirror of :func:`decode_query_parts`."""
    db = utf8.encode(parts.db)
    if len(db) > 255:
        raise EncodeError("database name is longer than 255 bytes")
    w = ByteWriter()
    w.write(_POST.pack(parts.thread_id, parts.exec_time, len(db), parts.error_code))
    block = b""
    if post_header_length >= QUERY_HEADER_LEN:
        block = parts.status.encode()
        w.u16(len(block))
    elif parts.status.codes() or parts.status.unparsed:
        raise EncodeError("status variables need the 13-byte QUERY post-header (format v4)")
    w.write(parts.post_header_rest)
    if len(w) != post_header_length:
        raise EncodeError(
            f"QUERY post-header is {len(w)} bytes, the format says {post_header_length}"
        )
    w.write(block)
    w.write(db)
    w.u8(0)
    w.write(parts.query)
    return w.getvalue()


@register(EventType.QUERY)
@frozen_dataclass
class QueryEvent(Event):
    """A statement as the server logged it.

    ``query`` is the statement's bytes, in the client character set
    (``status.character_set_client``); :attr:`text` decodes it. ``db`` is the default
    database ("" when none). ``status`` is empty in formats v1 and v3.
    ``post_header_extra`` keeps post-header bytes past the known ones.
    """

    transaction_role: ClassVar[TransactionRole] = TransactionRole.STATEMENT

    thread_id: int
    exec_time: int
    error_code: int
    status: QueryStatus
    db: str
    query: bytes
    post_header_extra: bytes = b""

    default_post_header: ClassVar[int] = QUERY_HEADER_LEN

    @property
    def text(self) -> str:
        """The statement as text, in character_set_client when the event names a known one.

        Otherwise (formats v1/v3, or bytes the charset does not allow) UTF-8 with
        undecodable bytes kept as surrogates, so no byte is lost.
        """
        codec = text_codec(self.status.character_set_client)
        if codec is not None:
            try:
                return codec.decode(self.query)
            except UnicodeDecodeError:
                pass
        return utf8.decode(self.query)

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> QueryEvent:
        p = decode_query_parts(body, ctx.fmt.post_header_length(header.type_code, QUERY_HEADER_LEN))
        return fast_constructor(cls)(
            header,
            p.thread_id,
            p.exec_time,
            p.error_code,
            p.status,
            p.db,
            p.query,
            p.post_header_rest,
        )

    def encode_body(self, fmt: FormatContext) -> bytes:
        return encode_query_parts(
            self._parts(self.query, self.post_header_extra), self._post_len(fmt)
        )

    def _parts(self, query: bytes, post_rest: bytes) -> QueryParts:
        return QueryParts(
            self.thread_id, self.exec_time, self.error_code, post_rest, self.status, self.db, query
        )

    def _post_len(self, fmt: FormatContext) -> int:
        return fmt.post_header_length(self.header.type_code, self.default_post_header)


@register(EventType.MARIADB_QUERY_COMPRESSED)
@frozen_dataclass
class QueryCompressedEvent(QueryEvent):
    """MariaDB's QUERY with the statement compressed (log_bin_compress).

    ``query`` is the expanded statement; ``compressed`` the bytes as stored.
    Encoding writes ``compressed`` when it still expands to ``query`` (so the
    server's bytes come back exactly), else compresses ``query`` afresh.
    """

    compressed: bytes = b""

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> QueryCompressedEvent:
        p = decode_query_parts(body, ctx.fmt.post_header_length(header.type_code, QUERY_HEADER_LEN))
        return cls(
            header,
            p.thread_id,
            p.exec_time,
            p.error_code,
            p.status,
            p.db,
            mariadb_compression.uncompress(p.query),
            p.post_header_rest,
            p.query,
        )

    def encode_body(self, fmt: FormatContext) -> bytes:
        stored = self.compressed
        if not _expands_to(stored, self.query):
            stored = mariadb_compression.compress(self.query)
        return encode_query_parts(self._parts(stored, self.post_header_extra), self._post_len(fmt))


def _expands_to(compressed: bytes, expected: bytes) -> bool:
    try:
        return mariadb_compression.uncompress(compressed) == expected
    except DecodeError:
        return False
