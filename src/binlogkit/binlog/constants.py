"""Type codes and flags of the binlog format, as the MySQL and MariaDB servers define them."""

from __future__ import annotations

from enum import IntEnum, IntFlag

MAGIC = b"\xfebin"
"""The four bytes every binlog file starts with."""

V1_HEADER_LENGTH = 13
"""Common header of binlog format v1 (MySQL 3.23): no log_pos, no flags."""

V4_HEADER_LENGTH = 19
"""Common header of binlog formats v3 and v4."""

CHECKSUM_LENGTH = 4

MAX_EVENT_SIZE = 1 << 30
"""The largest event a server writes or sends (max_allowed_packet is at most 1 GiB)."""


class EventType(IntEnum):
    """Event type codes: MySQL 0-42, MariaDB 160-171."""

    UNKNOWN = 0
    START_V3 = 1
    QUERY = 2
    STOP = 3
    ROTATE = 4
    INTVAR = 5
    LOAD = 6
    SLAVE = 7
    CREATE_FILE = 8
    APPEND_BLOCK = 9
    EXEC_LOAD = 10
    DELETE_FILE = 11
    NEW_LOAD = 12
    RAND = 13
    USER_VAR = 14
    FORMAT_DESCRIPTION = 15
    XID = 16
    BEGIN_LOAD_QUERY = 17
    EXECUTE_LOAD_QUERY = 18
    TABLE_MAP = 19
    PRE_GA_WRITE_ROWS = 20
    PRE_GA_UPDATE_ROWS = 21
    PRE_GA_DELETE_ROWS = 22
    WRITE_ROWS_V1 = 23
    UPDATE_ROWS_V1 = 24
    DELETE_ROWS_V1 = 25
    INCIDENT = 26
    HEARTBEAT = 27
    IGNORABLE = 28
    ROWS_QUERY = 29
    WRITE_ROWS = 30
    UPDATE_ROWS = 31
    DELETE_ROWS = 32
    GTID = 33
    ANONYMOUS_GTID = 34
    PREVIOUS_GTIDS = 35
    TRANSACTION_CONTEXT = 36
    VIEW_CHANGE = 37
    XA_PREPARE = 38
    PARTIAL_UPDATE_ROWS = 39
    TRANSACTION_PAYLOAD = 40
    HEARTBEAT_V2 = 41
    GTID_TAGGED = 42

    MARIADB_ANNOTATE_ROWS = 160
    MARIADB_BINLOG_CHECKPOINT = 161
    MARIADB_GTID = 162
    MARIADB_GTID_LIST = 163
    MARIADB_START_ENCRYPTION = 164
    MARIADB_QUERY_COMPRESSED = 165
    MARIADB_WRITE_ROWS_COMPRESSED_V1 = 166
    MARIADB_UPDATE_ROWS_COMPRESSED_V1 = 167
    MARIADB_DELETE_ROWS_COMPRESSED_V1 = 168
    MARIADB_WRITE_ROWS_COMPRESSED = 169
    MARIADB_UPDATE_ROWS_COMPRESSED = 170
    MARIADB_DELETE_ROWS_COMPRESSED = 171


def event_type_name(code: int) -> str:
    """The name of a type code, or ``UNKNOWN_<code>`` for codes this library does not know."""
    try:
        return EventType(code).name
    except ValueError:
        return f"UNKNOWN_{code}"


class TableMapFlag(IntFlag):
    """The 16-bit flags of a table map's post-header (MySQL's low bits, MariaDB's bit 14)."""

    BIT_LEN_EXACT = 0x0001
    REFERRED_FK_DB = 0x0002
    GENERATED_INVISIBLE_PK = 0x0004
    """MySQL 8.0.30+: the table has a generated invisible primary key (``my_row_id``)."""
    HAS_TRIGGERS = 0x4000
    """MariaDB: the table has triggers."""


class EventFlag(IntFlag):
    """The 16-bit flags of the common header."""

    BINLOG_IN_USE = 0x0001
    FORCED_ROTATE = 0x0002
    THREAD_SPECIFIC = 0x0004
    SUPPRESS_USE = 0x0008
    UPDATE_TABLE_MAP_VERSION = 0x0010
    ARTIFICIAL = 0x0020
    RELAY_LOG = 0x0040
    IGNORABLE = 0x0080
    NO_FILTER = 0x0100
    MTS_ISOLATE = 0x0200
    MARIADB_SKIP_REPLICATION = 0x8000


class ChecksumAlg(IntEnum):
    """The checksum algorithm announced by a format description event."""

    OFF = 0
    CRC32 = 1
    UNDEF = 255


class Flavor(IntEnum):
    """Which server family wrote the binlog; some codes and fields differ between them."""

    MYSQL = 1
    MARIADB = 2


class ColumnType(IntEnum):
    """Column type codes as they appear in TABLE_MAP events (MySQL, and MariaDB's 140-141)."""

    DECIMAL = 0
    TINY = 1
    SHORT = 2
    LONG = 3
    FLOAT = 4
    DOUBLE = 5
    NULL = 6
    TIMESTAMP = 7
    LONGLONG = 8
    INT24 = 9
    DATE = 10
    TIME = 11
    DATETIME = 12
    YEAR = 13
    NEWDATE = 14
    VARCHAR = 15
    BIT = 16
    TIMESTAMP2 = 17
    DATETIME2 = 18
    TIME2 = 19
    TYPED_ARRAY = 20
    BLOB_COMPRESSED = 140
    """MariaDB 10.3+: a BLOB/TEXT column declared COMPRESSED."""
    VARCHAR_COMPRESSED = 141
    """MariaDB 10.3+: a VARCHAR/VARBINARY column declared COMPRESSED."""
    VECTOR = 242
    INVALID = 243
    BOOL = 244
    JSON = 245
    NEWDECIMAL = 246
    ENUM = 247
    SET = 248
    TINY_BLOB = 249
    MEDIUM_BLOB = 250
    LONG_BLOB = 251
    BLOB = 252
    VAR_STRING = 253
    STRING = 254
    GEOMETRY = 255
