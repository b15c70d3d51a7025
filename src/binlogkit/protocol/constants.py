"""Numbers of the MySQL client/server protocol: capabilities, commands, status flags.

Values from MySQL's ``include/mysql_com.h`` and ``my_command.h`` and MariaDB's
``include/mysql_com.h`` (the MariaDB extended capabilities sit in bits 32-63:
the server and client send them in otherwise reserved bytes of the handshake
packets when the ``CLIENT_MYSQL`` bit, bit 0, is clear).
"""

from __future__ import annotations

from enum import IntEnum, IntFlag

MAX_PACKET_PAYLOAD = 0xFFFFFF
"""A payload this long continues in the next packet (packets over 16 MiB)."""

SCRAMBLE_LENGTH = 20
"""The length of the random challenge most auth plugins use."""

UTF8MB4_GENERAL_CI = 45
"""The collation id a client asks for: understood by every server since 5.5."""


class Capability(IntFlag):
    """Capability flags of the handshake (32 bits MySQL, bits 32+ MariaDB's extension)."""

    LONG_PASSWORD = 1 << 0  # also "CLIENT_MYSQL": clear on a MariaDB server
    FOUND_ROWS = 1 << 1
    LONG_FLAG = 1 << 2
    CONNECT_WITH_DB = 1 << 3
    NO_SCHEMA = 1 << 4
    COMPRESS = 1 << 5
    ODBC = 1 << 6
    LOCAL_FILES = 1 << 7
    IGNORE_SPACE = 1 << 8
    PROTOCOL_41 = 1 << 9
    INTERACTIVE = 1 << 10
    SSL = 1 << 11
    IGNORE_SIGPIPE = 1 << 12
    TRANSACTIONS = 1 << 13
    RESERVED = 1 << 14
    SECURE_CONNECTION = 1 << 15
    MULTI_STATEMENTS = 1 << 16
    MULTI_RESULTS = 1 << 17
    PS_MULTI_RESULTS = 1 << 18
    PLUGIN_AUTH = 1 << 19
    CONNECT_ATTRS = 1 << 20
    PLUGIN_AUTH_LENENC_CLIENT_DATA = 1 << 21
    CAN_HANDLE_EXPIRED_PASSWORDS = 1 << 22
    SESSION_TRACK = 1 << 23
    DEPRECATE_EOF = 1 << 24
    OPTIONAL_RESULTSET_METADATA = 1 << 25
    ZSTD_COMPRESSION_ALGORITHM = 1 << 26
    QUERY_ATTRIBUTES = 1 << 27
    MULTI_FACTOR_AUTHENTICATION = 1 << 28
    CAPABILITY_EXTENSION = 1 << 29
    SSL_VERIFY_SERVER_CERT = 1 << 30
    REMEMBER_OPTIONS = 1 << 31
    # MariaDB extended capabilities (MARIADB_CLIENT_*), sent as a second 32-bit word.
    MARIADB_PROGRESS = 1 << 32
    MARIADB_COM_MULTI = 1 << 33
    MARIADB_STMT_BULK_OPERATIONS = 1 << 34
    MARIADB_EXTENDED_METADATA = 1 << 35
    MARIADB_CACHE_METADATA = 1 << 36


CLIENT_MYSQL = Capability.LONG_PASSWORD
"""MariaDB's name for bit 0: a MariaDB server clears it to say "read my extended caps"."""


class Command(IntEnum):
    """The first byte of a command packet (``enum_server_command``)."""

    SLEEP = 0
    QUIT = 1
    INIT_DB = 2
    QUERY = 3
    FIELD_LIST = 4
    CREATE_DB = 5
    DROP_DB = 6
    REFRESH = 7
    SHUTDOWN = 8
    STATISTICS = 9
    PROCESS_INFO = 10
    CONNECT = 11
    PROCESS_KILL = 12
    DEBUG = 13
    PING = 14
    TIME = 15
    DELAYED_INSERT = 16
    CHANGE_USER = 17
    BINLOG_DUMP = 18
    TABLE_DUMP = 19
    CONNECT_OUT = 20
    REGISTER_SLAVE = 21
    STMT_PREPARE = 22
    STMT_EXECUTE = 23
    STMT_SEND_LONG_DATA = 24
    STMT_CLOSE = 25
    STMT_RESET = 26
    SET_OPTION = 27
    STMT_FETCH = 28
    DAEMON = 29
    BINLOG_DUMP_GTID = 30
    RESET_CONNECTION = 31
    CLONE = 32
    SUBSCRIBE_GROUP_REPLICATION_STREAM = 33


class ServerStatus(IntFlag):
    """Status flags in OK and EOF packets (``SERVER_STATUS_*``)."""

    IN_TRANS = 1 << 0
    AUTOCOMMIT = 1 << 1
    MORE_RESULTS_EXISTS = 1 << 3
    QUERY_NO_GOOD_INDEX_USED = 1 << 4
    QUERY_NO_INDEX_USED = 1 << 5
    CURSOR_EXISTS = 1 << 6
    LAST_ROW_SENT = 1 << 7
    DB_DROPPED = 1 << 8
    NO_BACKSLASH_ESCAPES = 1 << 9
    METADATA_CHANGED = 1 << 10
    QUERY_WAS_SLOW = 1 << 11
    PS_OUT_PARAMS = 1 << 12
    IN_TRANS_READONLY = 1 << 13
    SESSION_STATE_CHANGED = 1 << 14


class ErrorCode(IntEnum):
    """Server error codes this package sends or treats specially."""

    ACCESS_DENIED = 1045  # ER_ACCESS_DENIED_ERROR
    UNKNOWN_COM = 1047  # ER_UNKNOWN_COM_ERROR
    HANDSHAKE = 1043  # ER_HANDSHAKE_ERROR
    NOT_SUPPORTED_AUTH_MODE = 1251
    PLUGIN_IS_NOT_LOADED = 1524


OK_HEADER = 0x00
EOF_HEADER = 0xFE
ERR_HEADER = 0xFF
AUTH_MORE_DATA_HEADER = 0x01
AUTH_SWITCH_HEADER = 0xFE
LOCAL_INFILE_HEADER = 0xFB
