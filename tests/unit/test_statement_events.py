"""Statement and informational event codecs, on bodies built from the servers' layouts.

Each body is written field by field from the format's definition (MySQL's
statement_events.h / load_data_events.h / binary.cpp and MariaDB's
log_event.cc, as cited in each codec's docstring). Where a value needs an
outside reference, it is one: MySQL's documented decimal2bin example, or the
bytes MariaDB 10.11.19 wrote for ``SET @d := -12345.678900`` etc. together
with what ``mariadb-binlog`` printed for them. Every test checks the decoded
fields and that encoding gives the very same bytes back.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import replace
from decimal import Decimal

import pytest

from binlogkit.binlog import mariadb_compression
from binlogkit.binlog.constants import ChecksumAlg, EventType
from binlogkit.binlog.context import DecodeContext, FormatContext
from binlogkit.binlog.events import EVENT_CODECS, Event
from binlogkit.binlog.events.informational import (
    AnnotateRowsEvent,
    BinlogCheckpointEvent,
    HeartbeatEvent,
    HeartbeatV2Event,
    IgnorableEvent,
    IncidentEvent,
    RowsQueryEvent,
    SlaveEvent,
    StartEncryptionEvent,
)
from binlogkit.binlog.events.load import (
    AppendBlockEvent,
    BeginLoadQueryEvent,
    CreateFileEvent,
    DeleteFileEvent,
    ExecLoadEvent,
    ExecuteLoadQueryEvent,
    LoadEvent,
    LoadOptions,
)
from binlogkit.binlog.events.query import (
    QueryCompressedEvent,
    QueryEvent,
    QueryStatus,
    StatusCode,
)
from binlogkit.binlog.events.statement_context import (
    IntvarEvent,
    IntvarType,
    RandEvent,
    UserVarEvent,
    UserVarType,
)
from binlogkit.binlog.header import EventHeader
from binlogkit.errors import DecodeError, EncodeError

MYSQL = FormatContext(server_version="5.7.44-log", checksum=ChecksumAlg.CRC32)
MARIADB = FormatContext(server_version="10.11.19-MariaDB-log", checksum=ChecksumAlg.CRC32)
V3 = FormatContext.old_format(3, "4.1.24-log", 0)
V1 = FormatContext.old_format(1, "3.23.58-log", 0)


def header(code: int, log_pos: int = 0) -> EventHeader:
    return EventHeader(1700000000, code, 1, 0, log_pos, 0)


def decode(code: int, body: bytes, fmt: FormatContext = MYSQL, log_pos: int = 0) -> Event:
    return EVENT_CODECS[code].decode(header(code, log_pos), body, DecodeContext(fmt))


def roundtrip(code: int, body: bytes, fmt: FormatContext = MYSQL) -> Event:
    """Decode ``body``, check it encodes back to the same bytes, return the event."""
    event = decode(code, body, fmt)
    assert event.encode_body(fmt) == body
    return event


def short(raw: bytes) -> bytes:
    return bytes([len(raw)]) + raw


def query_body(status: bytes, db: bytes, query: bytes, *, post_extra: bytes = b"") -> bytes:
    """A v4 QUERY body: thread id 7, exec time 2, error 0, then the status block."""
    post = struct.pack("<IIBHH", 7, 2, len(db), 0, len(status)) + post_extra
    return post + status + db + b"\0" + query


# -- QUERY -----------------------------------------------------------------------


MYSQL_STATUS = b"".join(
    [
        b"\x00" + struct.pack("<I", 0x04084000),
        b"\x01" + struct.pack("<Q", 0x4000_0000_0020_0001),
        b"\x06" + short(b"std"),
        b"\x03" + struct.pack("<HH", 5, 3),
        b"\x04" + struct.pack("<HHH", 33, 33, 8),
        b"\x05" + short(b"+05:30"),
        b"\x07" + struct.pack("<H", 4),
        b"\x08" + struct.pack("<H", 5),
        b"\x09" + struct.pack("<Q", 3),
        b"\x0a" + struct.pack("<I", 1234),
        b"\x0b" + short(b"root") + short(b"localhost"),
        b"\x0c" + b"\x02" + b"db1\0db2\0",
        b"\x0d" + (654321).to_bytes(3, "little"),
        b"\x0e" + struct.pack("<Q", 77),
        b"\x10" + b"\x01",
        b"\x11" + struct.pack("<Q", 99),
        b"\x12" + struct.pack("<H", 255),
        b"\x13" + b"\x01",
        b"\x14" + b"\x00",
        b"\x15" + b"\x01",
    ]
)


def test_query_every_mysql_status_variable() -> None:
    body = query_body(MYSQL_STATUS, b"test", b"INSERT INTO t VALUES (1)")
    ev = roundtrip(EventType.QUERY, body)
    assert isinstance(ev, QueryEvent)
    assert (ev.thread_id, ev.exec_time, ev.error_code) == (7, 2, 0)
    assert (ev.db, ev.query, ev.text) == (
        "test",
        b"INSERT INTO t VALUES (1)",
        "INSERT INTO t VALUES (1)",
    )
    s = ev.status
    assert s.flags2 == 0x04084000
    assert s.sql_mode == 0x4000_0000_0020_0001
    assert s.catalog == "std"
    assert s.auto_increment == (5, 3)
    assert s.charset == (33, 33, 8)
    assert (s.character_set_client, s.collation_connection, s.collation_server) == (33, 33, 8)
    assert s.time_zone == "+05:30"
    assert (s.lc_time_names, s.charset_database, s.table_map_for_update) == (4, 5, 3)
    assert s.master_data_written == 1234
    assert s.invoker == ("root", "localhost")
    assert (s.updated_db_names, s.updated_db_count) == (("db1", "db2"), 2)
    assert (s.microseconds, s.commit_ts, s.explicit_defaults_for_timestamp) == (654321, 77, 1)
    assert (s.ddl_xid, s.default_collation_for_utf8mb4) == (99, 255)
    assert (s.sql_require_primary_key, s.default_table_encryption) == (1, 0)
    assert s.enable_cascade_triggers == 1
    assert s.order == (0, 1, 6, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 16, 17, 18, 19, 20, 21)
    assert s.unparsed == b""


def test_query_mariadb_status_variables_keep_their_order() -> None:
    # MariaDB 11.5+ writes the collation map (131) before the charset (4).
    status = b"".join(
        [
            b"\x00" + struct.pack("<I", 0),
            b"\x83" + b"\x02" + struct.pack("<HHHH", 33, 83, 45, 46),
            b"\x04" + struct.pack("<HHH", 45, 45, 45),
            b"\x80" + (157264).to_bytes(3, "little"),
            b"\x81" + struct.pack("<Q", 3),
            b"\x82" + b"\x04" + struct.pack("<Q", 12),
        ]
    )
    ev = roundtrip(EventType.QUERY, query_body(status, b"", b"ALTER TABLE t FORCE"), MARIADB)
    assert isinstance(ev, QueryEvent)
    s = ev.status
    assert s.character_set_collations == ((33, 83), (45, 46))
    assert (s.charset, s.hrnow, s.xid) == ((45, 45, 45), 157264, 3)
    assert (s.gtid_flags3, s.start_alter_seq_no) == (4, 12)
    assert s.order == (0, 131, 4, 128, 129, 130)


def test_query_gtid_flags3_without_alter_has_no_seq_no() -> None:
    ev = roundtrip(
        EventType.QUERY, query_body(b"\x82\x02", b"d", b"CREATE TABLE t (a INT)"), MARIADB
    )
    assert isinstance(ev, QueryEvent)
    assert (ev.status.gtid_flags3, ev.status.start_alter_seq_no) == (2, None)


def test_query_unknown_status_code_keeps_the_rest_raw() -> None:
    # The servers stop at an unknown code; the bytes from it on stay as stored.
    status = b"\x00" + struct.pack("<I", 1) + b"\x0f" + b"\x01\x02\x03\x04\x05"
    ev = roundtrip(EventType.QUERY, query_body(status, b"db", b"SELECT 1"))
    assert isinstance(ev, QueryEvent)
    assert ev.status.flags2 == 1
    assert ev.status.unparsed == b"\x0f\x01\x02\x03\x04\x05"
    assert (ev.db, ev.query) == ("db", b"SELECT 1")


def test_query_repeated_status_code_stays_unparsed() -> None:
    status = b"\x07\x01\x00" + b"\x07\x02\x00"
    ev = roundtrip(EventType.QUERY, query_body(status, b"", b"x"))
    assert isinstance(ev, QueryEvent)
    assert ev.status.lc_time_names == 1
    assert ev.status.unparsed == b"\x07\x02\x00"


def test_query_old_catalog_code_has_a_trailing_nul() -> None:
    # Q_CATALOG_CODE (2) of MySQL 5.0.0-5.0.3: length, string, NUL.
    ev = roundtrip(EventType.QUERY, query_body(b"\x02" + short(b"std") + b"\0", b"", b"x"))
    assert isinstance(ev, QueryEvent)
    assert (ev.status.catalog, ev.status.order) == ("std", (2,))
    with pytest.raises(DecodeError):
        decode(EventType.QUERY, query_body(b"\x02" + short(b"std") + b"X", b"", b"x"))


def test_query_updated_db_names_over_the_limit_carry_no_names() -> None:
    ev = roundtrip(EventType.QUERY, query_body(b"\x0c\xfe", b"", b"x"))
    assert isinstance(ev, QueryEvent)
    assert (ev.status.updated_db_names, ev.status.updated_db_count) == ((), 254)


def test_query_v3_and_v1_have_no_status_block() -> None:
    for fmt in (V3, V1):
        body = struct.pack("<IIBH", 1, 0, 4, 0) + b"test\0CREATE TABLE t1 (a int)"
        ev = roundtrip(EventType.QUERY, body, fmt)
        assert isinstance(ev, QueryEvent)
        assert (ev.db, ev.query, ev.status.codes()) == ("test", b"CREATE TABLE t1 (a int)", ())
        bad = replace(ev, status=QueryStatus(sql_mode=0))
        with pytest.raises(EncodeError):
            bad.encode_body(fmt)


def test_query_longer_post_header_is_kept() -> None:
    fmt = replace(MYSQL, post_header_lengths=bytes([56, 15]))
    body = query_body(b"", b"d", b"SELECT 2", post_extra=b"\xaa\xbb")
    ev = roundtrip(EventType.QUERY, body, fmt)
    assert isinstance(ev, QueryEvent)
    assert (ev.post_header_extra, ev.db, ev.query) == (b"\xaa\xbb", "d", b"SELECT 2")


def test_query_built_status_is_written_in_server_order() -> None:
    # 0, 1, 6, 4 is the order of ~21,000 corpus QUERY events from MySQL 5.0-8.0
    # and MariaDB (flags2, sql_mode, catalog, charset).
    status = QueryStatus(charset=(33, 33, 8), catalog="std", sql_mode=0, flags2=0)
    assert status.codes() == (0, 1, 6, 4)
    block = status.encode()
    assert block[0] == 0 and block[5] == 1 and block[14] == 6 and block[19] == 4
    assert QueryStatus.decode(block) == replace(status, order=(0, 1, 6, 4))


@pytest.mark.parametrize(
    "body",
    [
        query_body(b"\x01\x00\x00", b"", b"x"),  # sql_mode cut short
        struct.pack("<IIBHH", 7, 2, 3, 0, 0) + b"dbX" + b"SELECT",  # db without its NUL
        struct.pack("<IIBHH", 7, 2, 0, 0, 500) + b"\0x",  # status block past the end
        b"\x01\x02\x03",  # post-header cut short
    ],
)
def test_query_malformed(body: bytes) -> None:
    with pytest.raises(DecodeError):
        decode(EventType.QUERY, body)


def test_query_encode_rejects_unset_variable_in_order() -> None:
    with pytest.raises(EncodeError):
        QueryStatus(order=(StatusCode.SQL_MODE,)).encode()


# -- QUERY_COMPRESSED ---------------------------------------------------------------


def mariadb_compressed(query: bytes, level: int = -1) -> bytes:
    """MariaDB's layout: 0x80 | length width, the length big-endian, a zlib stream."""
    width = 1 if len(query) < 256 else 2
    return bytes([0x80 | width]) + len(query).to_bytes(width, "big") + zlib.compress(query, level)


def test_query_compressed_expands_and_keeps_the_stored_bytes() -> None:
    query = b"INSERT INTO t VALUES " + b",".join(b"(%d)" % i for i in range(100))
    stored = mariadb_compressed(query, 9)
    body = query_body(b"\x00\x00\x00\x00\x00", b"test", stored)
    ev = roundtrip(EventType.MARIADB_QUERY_COMPRESSED, body, MARIADB)
    assert isinstance(ev, QueryCompressedEvent)
    assert (ev.query, ev.compressed, ev.db) == (query, stored, "test")
    # A changed statement is compressed afresh and reads back.
    changed = replace(ev, query=b"DELETE FROM t")
    again = decode(EventType.MARIADB_QUERY_COMPRESSED, changed.encode_body(MARIADB), MARIADB)
    assert isinstance(again, QueryCompressedEvent)
    assert again.query == b"DELETE FROM t"


def test_query_compressed_length_width() -> None:
    assert mariadb_compression.uncompress(mariadb_compressed(b"a" * 300)) == b"a" * 300


@pytest.mark.parametrize(
    "stored",
    [
        b"\x01\x05" + zlib.compress(b"hello"),  # no compressed-flag bit
        b"\x91\x05" + zlib.compress(b"hello"),  # algorithm 1 is not defined
        b"\x81\x06" + zlib.compress(b"hello"),  # length disagrees
        b"\x81\x05not zlib",
        b"\x81\x05" + zlib.compress(b"hello")[:-5],  # stream cut short
        b"\x81\x05" + zlib.compress(b"x" * 1_000_000),  # inflates past its length
    ],
)
def test_query_compressed_malformed(stored: bytes) -> None:
    with pytest.raises(DecodeError):
        decode(EventType.MARIADB_QUERY_COMPRESSED, query_body(b"", b"", stored), MARIADB)


def test_query_compressed_length_beyond_any_event() -> None:
    # Refused before inflating: the stream may well hold the 4 GiB it declares.
    stored = b"\x84\xff\xff\xff\xff" + zlib.compress(b"x" * 1000)
    with pytest.raises(DecodeError, match="more than an event can hold"):
        mariadb_compression.uncompress(stored)


# -- LOAD DATA family -------------------------------------------------------------


def test_execute_load_query() -> None:
    query = b"LOAD DATA INFILE '/tmp/x.txt' INTO TABLE t"
    start = query.index(b"'")
    end = query.index(b"'", start + 1) + 1
    own = struct.pack("<IIIB", 3, start, end, 2)
    body = struct.pack("<IIBHH", 7, 0, 4, 0, 0) + own + b"test\0" + query
    ev = roundtrip(EventType.EXECUTE_LOAD_QUERY, body)
    assert isinstance(ev, ExecuteLoadQueryEvent)
    assert (ev.file_id, ev.fn_pos_start, ev.fn_pos_end, ev.dup_handling) == (3, start, end, 2)
    assert (ev.db, ev.query, ev.file_name) == ("test", query, b"'/tmp/x.txt'")
    with pytest.raises(DecodeError):
        decode(
            EventType.EXECUTE_LOAD_QUERY,
            body,
            replace(MYSQL, post_header_lengths=bytes(17) + b"\x14"),
        )


def load_post(table: bytes, db: bytes, nfields: int) -> bytes:
    return struct.pack("<IIIBBI", 9, 1, 2, len(table), len(db), nfields)


def test_load_old_option_format() -> None:
    # LOAD (6): one byte per terminator, then opt_flags and empty_flags.
    options = b"\t" + b"\0" + b"\n" + b"\0" + b"\\" + b"\x04" + b"\x0a"
    body = load_post(b"t1", b"db", 2) + options + b"\x01\x02" + b"a\0bc\0" + b"t1\0db\0/tmp/f.txt"
    ev = roundtrip(EventType.LOAD, body, V1)
    assert isinstance(ev, LoadEvent)
    assert (ev.thread_id, ev.exec_time, ev.skip_lines) == (9, 1, 2)
    assert ev.options == LoadOptions(b"\t", b"\0", b"\n", b"\0", b"\\", 4, 0x0A)
    assert (ev.fields, ev.table, ev.db, ev.file_name) == (("a", "bc"), "t1", "db", "/tmp/f.txt")


def test_new_load_option_format() -> None:
    # NEW_LOAD (12): each terminator as a length-prefixed string, then opt_flags.
    options = short(b"||") + short(b'"') + short(b"\r\n") + short(b"") + short(b"\\") + b"\x02"
    body = load_post(b"t", b"d", 0) + options + b"t\0d\0data.csv"
    ev = roundtrip(EventType.NEW_LOAD, body, V3)
    assert isinstance(ev, LoadEvent)
    assert ev.options == LoadOptions(b"||", b'"', b"\r\n", b"", b"\\", 2, None)
    assert (ev.fields, ev.table, ev.db, ev.file_name) == ((), "t", "d", "data.csv")


def test_create_file_append_block_exec_load_delete_file() -> None:
    options = short(b"\t") + short(b"") + short(b"\n") + short(b"") + short(b"\\") + b"\x00"
    block = b"Aarhus\nAaron\n"
    body = (
        load_post(b"t3", b"test", 1)
        + struct.pack("<I", 2)
        + options
        + b"\x01a\0"
        + b"t3\0test\0big_file.dat\0"
        + block
    )
    ev = roundtrip(EventType.CREATE_FILE, body, V3)
    assert isinstance(ev, CreateFileEvent)
    assert (ev.file_id, ev.file_name, ev.table, ev.db, ev.fields) == (
        2,
        "big_file.dat",
        "t3",
        "test",
        ("a",),
    )
    assert (ev.block, ev.options.field_term, ev.options.escaped) == (block, b"\t", b"\\")

    append = roundtrip(EventType.APPEND_BLOCK, struct.pack("<I", 2) + b"Ababa\n", V3)
    assert isinstance(append, AppendBlockEvent)
    assert (append.file_id, append.block) == (2, b"Ababa\n")
    begin = roundtrip(EventType.BEGIN_LOAD_QUERY, struct.pack("<I", 5) + b"1\tone\n")
    assert isinstance(begin, BeginLoadQueryEvent)
    assert (begin.file_id, begin.block) == (5, b"1\tone\n")
    exec_load = roundtrip(EventType.EXEC_LOAD, struct.pack("<I", 2), V3)
    delete = roundtrip(EventType.DELETE_FILE, struct.pack("<I", 4), V3)
    assert isinstance(exec_load, ExecLoadEvent) and exec_load.file_id == 2
    assert isinstance(delete, DeleteFileEvent) and delete.file_id == 4
    with pytest.raises(DecodeError):
        decode(EventType.APPEND_BLOCK, b"\x01\x00", V3)


def test_load_rejects_missing_nul() -> None:
    options = short(b"\t") + short(b"") + short(b"\n") + short(b"") + short(b"\\") + b"\x00"
    with pytest.raises(DecodeError):
        decode(EventType.NEW_LOAD, load_post(b"t", b"d", 0) + options + b"tXd\0f", V3)


# -- INTVAR, RAND, USER_VAR -----------------------------------------------------


def test_intvar_and_rand() -> None:
    ev = roundtrip(EventType.INTVAR, b"\x02" + struct.pack("<Q", 113))
    assert isinstance(ev, IntvarEvent)
    assert (ev.var_type, ev.value) == (IntvarType.INSERT_ID, 113)
    rand = roundtrip(EventType.RAND, struct.pack("<QQ", 470140530, 465986142))
    assert isinstance(rand, RandEvent)
    assert (rand.seed1, rand.seed2) == (470140530, 465986142)
    with pytest.raises(DecodeError):
        decode(EventType.RAND, b"\x00" * 15)


def user_var(name: bytes, kind: int, charset: int, raw: bytes, flags: bytes = b"") -> bytes:
    """USER_VAR body: name length, name, is_null 0, type, charset, value length, value, flags."""
    head = struct.pack("<I", len(name)) + name + b"\x00"
    return head + struct.pack("<BII", kind, charset, len(raw)) + raw + flags


# Value bytes MariaDB 10.11.19 wrote for these statements (binlog_format=STATEMENT),
# and the values `mariadb-binlog -vv` printed for them.
MARIADB_USER_VARS = [
    # SET @s := _latin1 X'636166E9'  ->  SET @`s`:=_latin1 X'636166E9' COLLATE `latin1_swedish_ci`
    (b"s", UserVarType.STRING, 8, b"caf\xe9", b"", b"caf\xe9"),
    # SET @d := -12345.678900  ->  SET @`d`:=-12345.678900
    (
        b"d",
        UserVarType.DECIMAL,
        8,
        bytes.fromhex("0b067fcfc6f5a40b"),
        b"",
        Decimal("-12345.678900"),
    ),
    # SET @dpos := 0.5  ->  SET @`dpos`:=0.5
    (b"dpos", UserVarType.DECIMAL, 8, bytes.fromhex("02018005"), b"", Decimal("0.5")),
    # SET @dbig := 123456789012345678.123456
    (
        b"dbig",
        UserVarType.DECIMAL,
        8,
        bytes.fromhex("1806875bcd1500bc614e01e240"),
        b"",
        Decimal("123456789012345678.123456"),
    ),
    # SET @f := 2.5e-3  ->  SET @`f`:=0.0025
    (b"f", UserVarType.REAL, 8, bytes.fromhex("7b14ae47e17a643f"), b"", 0.0025),
    # SET @i := -42  ->  SET @`i`:=-42 (flags byte 0: signed)
    (b"i", UserVarType.INT, 8, bytes.fromhex("d6ffffffffffffff"), b"\x00", -42),
    # SET @u := CAST(18446744073709551615 AS UNSIGNED) (flags byte 1: unsigned)
    (b"u", UserVarType.INT, 8, b"\xff" * 8, b"\x01", 18446744073709551615),
]


@pytest.mark.parametrize(("name", "kind", "charset", "raw", "flags", "value"), MARIADB_USER_VARS)
def test_user_var_values(
    name: bytes, kind: int, charset: int, raw: bytes, flags: bytes, value: object
) -> None:
    ev = roundtrip(EventType.USER_VAR, user_var(name, kind, charset, raw, flags))
    assert isinstance(ev, UserVarEvent)
    assert (ev.name, ev.value_type, ev.charset, ev.raw) == (name.decode(), kind, charset, raw)
    assert ev.flags == (flags[0] if flags else None)
    assert ev.value == value
    assert not ev.is_null


def test_user_var_int_without_flags_byte_is_signed() -> None:
    # MySQL before 5.1 wrote no flags byte (corpus: 4.1 and 5.1 logs, SET @x := 4).
    ev = roundtrip(EventType.USER_VAR, user_var(b"x", UserVarType.INT, 63, b"\xfe" + b"\xff" * 7))
    assert isinstance(ev, UserVarEvent)
    assert (ev.flags, ev.unsigned, ev.value) == (None, False, -2)


def test_user_var_null() -> None:
    # MySQL 5.6 wrote `SET @`2`:=NULL` as name length, name, is_null = 1 (mysqlbinlog_hexdump).
    ev = roundtrip(EventType.USER_VAR, bytes.fromhex("010000003201"))
    assert isinstance(ev, UserVarEvent)
    assert (ev.name, ev.is_null, ev.value, ev.value_type) == ("2", True, None, None)
    with pytest.raises(EncodeError):
        replace(ev, raw=b"x").encode_body(MYSQL)
    with pytest.raises(DecodeError):
        decode(EventType.USER_VAR, bytes.fromhex("010000003202"))


def test_user_var_decimal_documented_example() -> None:
    # MySQL strings/decimal.c: 1234567890.1234 as DECIMAL(14,4) is 81 0D FB 38 D2 04 D2,
    # and its negation has every bit inverted.
    for packed, value in (
        ("810DFB38D204D2", "1234567890.1234"),
        ("7EF204C72DFB2D", "-1234567890.1234"),
    ):
        raw = bytes([14, 4]) + bytes.fromhex(packed)
        ev = roundtrip(EventType.USER_VAR, user_var(b"v", UserVarType.DECIMAL, 8, raw))
        assert isinstance(ev, UserVarEvent)
        assert ev.value == Decimal(value)
    short_value = decode(
        EventType.USER_VAR, user_var(b"v", UserVarType.DECIMAL, 8, b"\x0e\x04\x80")
    )
    assert isinstance(short_value, UserVarEvent)
    with pytest.raises(DecodeError):
        short_value.value  # noqa: B018


def test_user_var_text_uses_the_collation() -> None:
    cases = [(8, b"caf\xe9", "café"), (45, "ü€".encode(), "ü€"), (63, b"x\0y", None)]
    for charset, raw, text in cases:
        ev = decode(EventType.USER_VAR, user_var(b"s", UserVarType.STRING, charset, raw))
        assert isinstance(ev, UserVarEvent)
        assert ev.text == text


def test_query_text_uses_character_set_client() -> None:
    latin1 = b"\x04" + struct.pack("<HHH", 8, 8, 8)
    ev = decode(EventType.QUERY, query_body(latin1, b"", b"INSERT INTO t VALUES ('\xe9t\xe9')"))
    assert isinstance(ev, QueryEvent)
    assert ev.text == "INSERT INTO t VALUES ('été')"
    utf8 = b"\x04" + struct.pack("<HHH", 33, 33, 8)
    bad = decode(EventType.QUERY, query_body(utf8, b"", b"SELECT '\xff'"))
    assert isinstance(bad, QueryEvent)
    assert bad.text.encode("utf-8", "surrogateescape") == b"SELECT '\xff'"


# -- informational events -----------------------------------------------------------


def test_rows_query_length_byte() -> None:
    ev = roundtrip(EventType.ROWS_QUERY, b"\x0dDELETE FROM t")
    assert isinstance(ev, RowsQueryEvent)
    assert (ev.query, ev.length_byte, ev.text) == (b"DELETE FROM t", None, "DELETE FROM t")
    long_query = b"x" * 300  # the server writes the length modulo 256 and the whole text
    ev = roundtrip(EventType.ROWS_QUERY, bytes([300 % 256]) + long_query)
    assert isinstance(ev, RowsQueryEvent)
    assert (ev.query, ev.length_byte) == (long_query, None)
    odd = roundtrip(EventType.ROWS_QUERY, b"\x00abc")
    assert isinstance(odd, RowsQueryEvent)
    assert (odd.query, odd.length_byte) == (b"abc", 0)


def test_annotate_rows_checkpoint_start_encryption() -> None:
    ann = roundtrip(EventType.MARIADB_ANNOTATE_ROWS, b"INSERT INTO t VALUES (1)", MARIADB)
    assert isinstance(ann, AnnotateRowsEvent) and ann.text == "INSERT INTO t VALUES (1)"
    cp = roundtrip(EventType.MARIADB_BINLOG_CHECKPOINT, b"\x10\0\0\0mysql-bin.000001", MARIADB)
    assert isinstance(cp, BinlogCheckpointEvent)
    assert (cp.log_file, cp.extra) == ("mysql-bin.000001", b"")
    nonce = bytes.fromhex("be1a60811a63c61f4200cc6e")
    enc = roundtrip(EventType.MARIADB_START_ENCRYPTION, b"\x01\x01\0\0\0" + nonce, MARIADB)
    assert isinstance(enc, StartEncryptionEvent)
    assert (enc.scheme, enc.key_version, enc.nonce, enc.extra) == (1, 1, nonce, b"")
    with pytest.raises(DecodeError):
        decode(EventType.MARIADB_START_ENCRYPTION, b"\x01\x01\0\0\0" + nonce[:5], MARIADB)


def test_incident() -> None:
    ev = roundtrip(EventType.INCIDENT, b"\x01\x00" + short(b"error writing to the binary log"))
    assert isinstance(ev, IncidentEvent)
    assert (ev.incident, ev.message) == (1, b"error writing to the binary log")
    empty = roundtrip(EventType.INCIDENT, b"\x01\x00\x00")
    assert isinstance(empty, IncidentEvent) and empty.message == b""
    # Only LOST_EVENTS (1) is valid: MySQL's reader throws "Invalid incident number".
    for number in (0, 2, 66):
        with pytest.raises(DecodeError):
            decode(EventType.INCIDENT, struct.pack("<H", number) + b"\x00")


def test_heartbeat() -> None:
    ev = decode(EventType.HEARTBEAT, b"mysql-bin.000007", log_pos=1234)
    assert isinstance(ev, HeartbeatEvent)
    assert (ev.log_file, ev.position) == ("mysql-bin.000007", 1234)
    assert ev.encode_body(MYSQL) == b"mysql-bin.000007"


def test_heartbeat_v2_tlv() -> None:
    # MySQL's Heartbeat codec: (type, length, value) with packed integers, end mark 0.
    body = b"\x01\x10mysql-bin.000003" + b"\x02\x03\xfc\x10\x27" + b"\x00"
    ev = roundtrip(EventType.HEARTBEAT_V2, body)
    assert isinstance(ev, HeartbeatV2Event)
    assert (ev.log_file, ev.position, ev.end_mark) == ("mysql-bin.000003", 10000, True)
    built = HeartbeatV2Event.build(header(EventType.HEARTBEAT_V2), "mysql-bin.000003", 10000)
    assert built.encode_body(MYSQL) == body
    unknown = roundtrip(EventType.HEARTBEAT_V2, b"\x07\x02ab" + body)
    assert isinstance(unknown, HeartbeatV2Event)
    assert unknown.fields[0] == (7, b"ab") and unknown.position == 10000


def test_ignorable_and_slave() -> None:
    ign = roundtrip(EventType.IGNORABLE, b"\x01\x02\x03")
    assert isinstance(ign, IgnorableEvent) and ign.payload == b"\x01\x02\x03"
    body = struct.pack("<QH", 4, 3306) + b"master.example\0master-bin.000001"
    slave = roundtrip(EventType.SLAVE, body, V3)
    assert isinstance(slave, SlaveEvent)
    assert (slave.master_pos, slave.master_port) == (4, 3306)
    assert (slave.master_host, slave.master_log) == ("master.example", "master-bin.000001")


def test_every_statement_and_informational_type_has_its_codec() -> None:
    expected = {
        EventType.QUERY: QueryEvent,
        EventType.INTVAR: IntvarEvent,
        EventType.LOAD: LoadEvent,
        EventType.SLAVE: SlaveEvent,
        EventType.CREATE_FILE: CreateFileEvent,
        EventType.APPEND_BLOCK: AppendBlockEvent,
        EventType.EXEC_LOAD: ExecLoadEvent,
        EventType.DELETE_FILE: DeleteFileEvent,
        EventType.NEW_LOAD: LoadEvent,
        EventType.RAND: RandEvent,
        EventType.USER_VAR: UserVarEvent,
        EventType.BEGIN_LOAD_QUERY: BeginLoadQueryEvent,
        EventType.EXECUTE_LOAD_QUERY: ExecuteLoadQueryEvent,
        EventType.INCIDENT: IncidentEvent,
        EventType.HEARTBEAT: HeartbeatEvent,
        EventType.IGNORABLE: IgnorableEvent,
        EventType.ROWS_QUERY: RowsQueryEvent,
        EventType.HEARTBEAT_V2: HeartbeatV2Event,
        EventType.MARIADB_ANNOTATE_ROWS: AnnotateRowsEvent,
        EventType.MARIADB_BINLOG_CHECKPOINT: BinlogCheckpointEvent,
        EventType.MARIADB_START_ENCRYPTION: StartEncryptionEvent,
        EventType.MARIADB_QUERY_COMPRESSED: QueryCompressedEvent,
    }
    assert {code: EVENT_CODECS[code] for code in expected} == expected
