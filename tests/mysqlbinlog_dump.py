"""Read the text that ``mysqlbinlog`` / ``mariadb-binlog`` print, as known answers for tests.

The dumps come from the servers' own tools (the corpus's expected outputs, or
``mariadb-binlog`` run by a test), never from binlogkit. :func:`parse_dump`
cuts a dump into one :class:`DumpEvent` per event, keyed by the ``# at``
offset the tool printed; the helpers read the values the tool derived from
each event: the ``SET`` lines of a QUERY, a user variable, INTVAR, RAND, and
the ``###`` row statements of ``-v``/``-vv`` (:func:`dump_rows`);
:func:`printed_value` prints a decoded column value the way ``-vv`` does.
Works on plain, ``-v``/``-vv`` and ``--hexdump`` output of MySQL and MariaDB.
:class:`Checker` compares a dump with the events binlogkit decodes.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple

from binlogkit import BinlogDecoder, DecodeOptions
from binlogkit.binlog.constants import ColumnType as CT
from binlogkit.binlog.events import Event
from binlogkit.binlog.events.informational import (
    AnnotateRowsEvent,
    BinlogCheckpointEvent,
    StartEncryptionEvent,
)
from binlogkit.binlog.events.load import (
    AppendBlockEvent,
    CreateFileEvent,
    ExecLoadEvent,
    ExecuteLoadQueryEvent,
)
from binlogkit.binlog.events.query import QueryEvent
from binlogkit.binlog.events.statement_context import (
    IntvarEvent,
    IntvarType,
    RandEvent,
    UserVarEvent,
)
from binlogkit.binlog.framing import Signal
from binlogkit.binlog.rows.charsets import BINARY_COLLATION, text_codec
from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.binlog.rows.types import Compressed, Geometry, InvalidDateTime
from binlogkit.binlog.rows.types.bit import bit_width
from binlogkit.binlog.rows.types.strings import string_max_length
from binlogkit.errors import BinlogError

_AT = re.compile(rb"^# at (\d+)\s*$")
_HEADER = re.compile(
    rb"^#(\d{6} [ \d]\d:\d\d:\d\d) server id (\d+)\s+end_log_pos (\d+)"
    rb"(?: CRC32 0x[0-9a-f]+)?[ \t]*(.*)$"
)
_HEX_INFO = re.compile(rb"^# (?:Event: )?\t(.*)$")
_LOAD_INFO = re.compile(
    rb"^#((?:Begin_load_query|Append_block|Create_file|Exec_load|Delete_file):.*)$"
)
_ENCRYPTION = re.compile(rb"^# Encryption scheme: (\d+), key_version: (\d+), nonce: ([0-9a-f]+)")
_DELIMITER = b"/*!*/;"


@dataclass
class DumpEvent:
    """One event of a dump: where it starts, its header line and the lines printed for it."""

    offset: int
    end_log_pos: int | None = None
    server_id: int | None = None
    info: bytes = b""
    lines: list[bytes] = field(default_factory=list)

    @property
    def kind(self) -> str:
        """The event's name as the tool printed it (``Query``, ``User_var`` ...)."""
        return re.split(rb"[\t: ]", self.info.strip(), maxsplit=1)[0].decode()

    def info_fields(self) -> dict[str, int]:
        """The ``name=number`` pairs of the header line (thread_id, exec_time, error_code, xid)."""
        return {k.decode(): int(v) for k, v in re.findall(rb"(\w+)=(\d+)", self.info)}

    def statement_lines(self) -> list[bytes]:
        """The lines that are not comments, hex dumps or BINLOG blocks."""
        return [line for line in self.lines if not line.startswith(b"#")]


def parse_dump(text: bytes) -> dict[int, DumpEvent]:
    """Cut a dump into events, keyed by their ``# at`` offsets."""
    events: dict[int, DumpEvent] = {}
    pending: list[int] = []
    current: DumpEvent | None = None
    for line in text.split(b"\n"):
        if m := _AT.match(line):
            pending.append(int(m[1]))
            current = None
            continue
        if m := _HEADER.match(line):
            if not pending:
                current = None
                continue
            current = DumpEvent(pending.pop(0), int(m[3]), int(m[2]), m[4].strip(b" "))
            events[current.offset] = current
            continue
        if current is None and pending and (m := _ENCRYPTION.match(line)):
            event = DumpEvent(pending.pop(0), info=b"Start_encryption")
            event.lines.append(line)
            events[event.offset] = event
            continue
        if current is None:
            continue
        if not current.info and (m := _HEX_INFO.match(line) or _LOAD_INFO.match(line)):
            current.info = m[1].strip(b" ")
            continue
        current.lines.append(line)
    return events


@dataclass
class QueryDump:
    """What the tool printed for a QUERY: session settings and the statement."""

    timestamp: int | None = None
    fraction: str | None = None
    db: bytes | None = None
    settings: dict[str, bytes] = field(default_factory=dict)
    statement: bytes = b""


_SET = re.compile(rb"@@session\.(\w+)=('[^']*'|[^,/]*)")


def query_dump(event: DumpEvent) -> QueryDump:
    """Split the lines printed for a QUERY into settings and the statement text.

    Comment and hex-dump lines come before the settings; the statement is every
    line after them (comment-like lines included) up to the delimiter line.
    """
    out = QueryDump()
    lines = event.lines
    i = 0
    while i < len(lines) and (lines[i].startswith(b"#") or lines[i].endswith(_DELIMITER)):
        line = lines[i][: -len(_DELIMITER)]
        if lines[i].startswith(b"#"):
            pass
        elif m := re.match(rb"^use `(.*)`$", line):
            out.db = m[1]
        elif m := re.match(rb"^SET TIMESTAMP=(\d+)(?:\.(\d+))?$", line):
            out.timestamp = int(m[1])
            out.fraction = m[2].decode() if m[2] else None
        elif line.startswith(b"SET @@session."):
            for name, value in _SET.findall(line):
                out.settings[name.decode()] = value
        i += 1
    body = []
    for line in lines[i:]:
        if line == _DELIMITER:
            break
        body.append(line)
    out.statement = b"\n".join(body)
    return out


def set_value(event: DumpEvent, pattern: bytes) -> re.Match[bytes] | None:
    """The first statement line of the event matching ``pattern`` (a regex)."""
    for line in event.statement_lines():
        if m := re.match(pattern, line):
            return m
    return None


def user_var(event: DumpEvent) -> tuple[str, object] | None:
    """``(name, value)`` of a printed ``SET @`name`:=value``.

    The value is None (NULL), ``(charset, bytes)`` for a string (hex literal in
    either tool's style), an int, or a Decimal for other numbers.
    """
    m = set_value(event, rb"^SET @`(.*)`:=(.*)/\*!\*/;$")
    if m is None:
        return None
    name, value = m[1].decode(), m[2]
    if value == b"NULL":
        return name, None
    if s := re.match(rb"^_(\w+) (?:X'([0-9A-Fa-f]*)'|0x([0-9A-Fa-f]*))", value):
        return name, (s[1].decode(), bytes.fromhex((s[2] or s[3] or b"").decode()))
    if re.fullmatch(rb"-?\d+", value):
        return name, int(value)
    return name, Decimal(value.decode())


# -- rows (-v / -vv) --------------------------------------------------------------

_ROWS_INFO = re.compile(rb"(Write|Update|Delete)(_compressed)?_rows(_v1)?: table id ")
_VERBS = {b"INSERT INTO ": "INSERT", b"UPDATE ": "UPDATE", b"DELETE FROM ": "DELETE"}


class DumpValue(NamedTuple):
    """One ``###   @N=value /* comment */`` line: the value and the ``-vv`` comment as printed."""

    text: bytes
    comment: bytes


@dataclass
class DumpRow:
    """One ``### INSERT/UPDATE/DELETE`` the tool printed, its images by column number (from 1).

    ``table`` is the name as printed (`` `db`.`table` ``); ``group`` the offsets of
    the rows events of its statement.
    """

    verb: str
    table: bytes
    before: dict[int, DumpValue] | None = None
    after: dict[int, DumpValue] | None = None
    group: tuple[int, ...] = ()


def row_statements(lines: Iterable[bytes], group: tuple[int, ...] = ()) -> list[DumpRow]:
    """The ``###`` row statements among ``lines`` (other lines are passed over)."""
    rows: list[DumpRow] = []
    image: dict[int, DumpValue] | None = None
    for line in lines:
        if not line.startswith(b"### "):
            continue
        body = line[4:]
        for prefix, verb in _VERBS.items():
            if body.startswith(prefix):
                rows.append(DumpRow(verb, body[len(prefix) :], group=group))
                image = None
                break
        else:
            if body == b"WHERE":
                rows[-1].before = image = {}
            elif body == b"SET":
                rows[-1].after = image = {}
            elif body.startswith(b"  @"):
                assert image is not None, line
                number, _, rest = body[3:].partition(b"=")
                cut = rest.rfind(b" /* ")
                value, comment = (rest[:cut], rest[cut + 4 :]) if cut >= 0 else (rest, b"")
                image[int(number)] = DumpValue(value.rstrip(), comment)
    return rows


def dump_rows(dump: dict[int, DumpEvent]) -> list[DumpRow]:
    """Every row statement of a dump, in order, each with its statement's rows events.

    The tools print the rows of a statement's rows events together, after the
    last of them (the one with STMT_END_F), so a row knows the offsets of its
    statement's rows events (``group``), not which one holds it.
    """
    rows: list[DumpRow] = []
    group: list[int] = []
    for offset, event in sorted(dump.items()):
        if _ROWS_INFO.match(event.info):
            group.append(offset)
        printed = row_statements(event.lines, tuple(group))
        if printed:
            rows += printed
            group = []
    return rows


# -- values (-vv) -----------------------------------------------------------------

_INT_BITS: dict[int, int] = {CT.TINY: 8, CT.SHORT: 16, CT.INT24: 24, CT.LONG: 32, CT.LONGLONG: 64}


def _quoted(raw: bytes) -> bytes:
    """my_b_write_quoted: bytes above 0x1f as they are, the rest as \\xNN."""
    return b"'" + b"".join(bytes([c]) if c > 0x1F else b"\\x%02x" % c for c in raw) + b"'"


def _fraction(microsecond: int, fsp: int) -> str:
    return "." + f"{microsecond:06d}"[:fsp] if fsp else ""


def printed_value(col: ColumnInfo, value: Any) -> bytes:
    """How mysqlbinlog / mariadb-binlog -vv (log_event_print_value) print a value of ``col``."""
    t = col.type
    if value is None:
        return b"NULL"
    if t in _INT_BITS:
        bits = _INT_BITS[t]
        signed = value - (1 << bits) if value >= 1 << (bits - 1) else value
        return (str(signed) + (f" ({signed + (1 << bits)})" if signed < 0 else "")).encode()
    if t == CT.NEWDECIMAL:
        return format(value, "f").encode()
    if t == CT.FLOAT:
        return b"%g" % value
    if t == CT.DOUBLE:
        return b"%.20g" % value
    if t == CT.BIT:
        return f"b'{value:0{bit_width(col.meta)}b}'".encode()
    if t == CT.YEAR:
        return b"%04d" % (value or 1900)
    if t == CT.DATE:
        return b"'%04d:%02d:%02d'" % (value.year, value.month, value.day)
    if t in (CT.DATETIME, CT.DATETIME2):
        fsp = col.meta if t == CT.DATETIME2 else 0
        text = (
            f"{value.year:04d}-{value.month:02d}-{value.day:02d} "
            f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
        )
        return _quoted((text + _fraction(value.microsecond, fsp)).encode())
    if t in (CT.TIMESTAMP, CT.TIMESTAMP2):
        fsp = col.meta if t == CT.TIMESTAMP2 else 0
        if isinstance(value, InvalidDateTime):
            seconds, micro = 0, 0
        else:
            seconds, micro = divmod(
                (value - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1), 10**6
            )
        return (str(seconds) + _fraction(micro, fsp)).encode()
    if t in (CT.TIME, CT.TIME2):
        fsp = col.meta if t == CT.TIME2 else 0
        micros = value // timedelta(microseconds=1)
        seconds, micro = divmod(abs(micros), 10**6)
        hours, rest = divmod(seconds, 3600)
        text = f"{'-' if micros < 0 else ''}{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"
        return _quoted((text + _fraction(micro, fsp)).encode())
    if t == CT.ENUM:
        if isinstance(value, int):
            return str(value).encode()
        members = [_as_text(col, m) for m in col.enum_values or ()]
        return str(members.index(value) + 1 if value != "" else 0).encode()
    if t == CT.SET:
        if not isinstance(value, int):
            members = [_as_text(col, m) for m in col.set_values or ()]
            value = sum(1 << members.index(m) for m in value)
        stored = value.to_bytes(col.meta & 0xFF, "little")
        return ("b'" + "".join(f"{b:08b}" for b in stored) + "'").encode()
    if t == CT.STRING and col.charset == BINARY_COLLATION:
        # The server logs BINARY values without their trailing NULs; we give them back.
        assert isinstance(value, bytes) and len(value) == string_max_length(col.meta)
        return _quoted(value.rstrip(b"\0"))
    if t in (CT.STRING, CT.VARCHAR, CT.VAR_STRING, CT.BLOB):
        return _quoted(value if isinstance(value, bytes) else _codec(col).encode(value))
    if t == CT.GEOMETRY:
        assert isinstance(value, Geometry)
        return _quoted(value.to_bytes())
    if t in (CT.BLOB_COMPRESSED, CT.VARCHAR_COMPRESSED):
        assert isinstance(value, Compressed)
        return _quoted(value.stored)
    raise AssertionError(f"no printed form for type {t}")


def _codec(col: ColumnInfo) -> Any:
    codec = text_codec(col.charset)
    assert codec is not None, f"{col.key}: str value without a charset"
    return codec


def _as_text(col: ColumnInfo, member: bytes) -> Any:
    codec = text_codec(col.charset)
    if codec is None:
        return member
    try:
        return codec.decode(member)
    except UnicodeDecodeError:
        return member


# flags2 bits the tools print as session variables (MySQL's OPTIONS_WRITTEN_TO_BIN_LOG):
# name -> (bit, the value printed when the bit is set).
FLAGS2 = {
    "foreign_key_checks": (0x04000000, 0),
    "sql_auto_is_null": (0x00004000, 1),
    "unique_checks": (0x08000000, 0),
    "autocommit": (0x00080000, 0),
}
# MariaDB prints character_set_client by name; the collation ids of those names
# that occur in the corpus (from the servers' collation tables).
CHARSET_OF = {
    "latin1": {5, 8, 15, 31, 47, 48, 49, 94},
    "utf8mb3": {33, 83, 192, 223},
    "utf8mb4": {45, 46, 224, 255, 2304},
    "binary": {63},
}


def decode_all(path: Path) -> tuple[dict[int, Event], BinlogError | None]:
    """Every event binlogkit decodes from the file, by offset, and the error it stopped at."""
    dec = BinlogDecoder(file=str(path), options=DecodeOptions(on_unknown="pass"))
    dec.receive_data(path.read_bytes())
    dec.receive_data(b"")
    events: dict[int, Event] = {}
    try:
        while not isinstance(event := dec.next_event(), Signal):
            events.setdefault(event.header.offset, event)
    except BinlogError as err:
        return events, err
    return events, None


class Checker:
    """Compares decoded events with a dump; counts what it checked and collects mismatches."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.done: Counter[str] = Counter()
        self.failed: list[str] = []

    def check(self, ok: bool, what: str, where: DumpEvent, detail: object = "") -> None:
        self.done[what] += 1
        if not ok:
            self.failed.append(f"{self.name} @{where.offset} {what}: {detail}")

    def compare(self, dump: dict[int, DumpEvent], events: dict[int, Event]) -> None:
        for offset, printed in dump.items():
            event = events.get(offset)
            if event is None:
                continue
            if isinstance(event, QueryEvent):
                self.query(printed, event)
            elif isinstance(event, UserVarEvent):
                self.user_var(printed, event)
            elif isinstance(event, IntvarEvent):
                m = set_value(printed, rb"^SET (INSERT_ID|LAST_INSERT_ID)=(-?\d+)/")
                kind = IntvarType[m[1].decode()] if m else None
                value = int(m[2]) if m else None
                signed = event.value - (1 << 64) if event.value >= 1 << 63 else event.value
                self.check((event.var_type, signed) == (kind, value), "intvar", printed, event)
            elif isinstance(event, RandEvent):
                m = set_value(printed, rb"^SET @@RAND_SEED1=(\d+), @@RAND_SEED2=(\d+)/")
                seeds = (int(m[1]), int(m[2])) if m else None
                self.check((event.seed1, event.seed2) == seeds, "rand", printed, event)
            elif isinstance(event, CreateFileEvent):
                self.create_file(printed, event)
            elif isinstance(event, AppendBlockEvent):
                m = re.search(rb"file_id: (\d+)\s+block_len: (\d+)", printed.info)
                got = (event.file_id, len(event.block))
                self.check(m is not None and got == (int(m[1]), int(m[2])), "block", printed, got)
            elif isinstance(event, ExecLoadEvent):
                m = re.search(rb"file_id=(\d+)", printed.info)
                self.check(m is not None and event.file_id == int(m[1]), "exec_load", printed)
            elif isinstance(event, AnnotateRowsEvent):
                text = b"\n".join(line[4:] for line in printed.lines if line.startswith(b"#Q> "))
                self.check(text == event.query, "annotate", printed, event.query[:60])
            elif isinstance(event, BinlogCheckpointEvent):
                expected = b"Binlog checkpoint " + event.log_file.encode()
                self.check(printed.info == expected, "checkpoint", printed, printed.info)
            elif isinstance(event, StartEncryptionEvent):
                m = re.match(
                    rb"^# Encryption scheme: (\d+), key_version: (\d+), nonce: (\w+)",
                    printed.lines[0],
                )
                enc = (event.scheme, event.key_version, event.nonce.hex().encode())
                self.check(
                    m is not None and enc == (int(m[1]), int(m[2]), m[3]), "encryption", printed
                )

    def query(self, printed: DumpEvent, event: QueryEvent) -> None:
        info = printed.info_fields()
        q = query_dump(printed)
        s = event.status
        got = (event.thread_id, event.exec_time, event.error_code, event.header.timestamp)
        want = (info.get("thread_id"), info.get("exec_time"), info.get("error_code"), q.timestamp)
        self.check(got == want, "query header", printed, (got, want))
        if "xid" in info:
            self.check((s.xid or 0) == info["xid"], "xid", printed, s.xid)
        if q.fraction is not None:
            fraction = s.hrnow if s.hrnow is not None else s.microseconds
            ok = fraction is not None and f"{fraction:06d}" == q.fraction
            self.check(ok, "fraction", printed, fraction)
        if q.db is not None:
            self.check(event.db.encode() == q.db, "db", printed, event.db)
        self.settings(printed, event, q.settings)
        if isinstance(event, ExecuteLoadQueryEvent):
            # The tool replaces the file name (query[fn_pos_start:fn_pos_end]) by its local copy.
            head, tail = event.query[: event.fn_pos_start], event.query[event.fn_pos_end :]
            ok = q.statement.startswith(head) and q.statement.endswith(tail)
            self.check(ok, "load statement", printed, event.query[:80])
        else:
            self.check(q.statement == event.query, "statement", printed, event.query[:80])

    def settings(self, printed: DumpEvent, event: QueryEvent, values: dict[str, bytes]) -> None:
        s = event.status
        if "sql_mode" in values:
            self.check(s.sql_mode == int(values["sql_mode"]), "sql_mode", printed, s.sql_mode)
        if "pseudo_thread_id" in values:
            ok = event.thread_id == int(values["pseudo_thread_id"])
            self.check(ok, "pseudo_thread_id", printed)
        if "auto_increment_increment" in values:
            want = (int(values["auto_increment_increment"]), int(values["auto_increment_offset"]))
            self.check((s.auto_increment or (1, 1)) == want, "auto_increment", printed)
        if "collation_connection" in values:
            client = values["character_set_client"]
            ok = s.charset is not None and (
                s.charset[0] == int(client)
                if client.isdigit()
                else s.charset[0] in CHARSET_OF[client.decode()]
            )
            rest = (int(values["collation_connection"]), int(values["collation_server"]))
            self.check(
                ok and s.charset is not None and s.charset[1:] == rest,
                "charset",
                printed,
                s.charset,
            )
        if "lc_time_names" in values:
            ok = (s.lc_time_names or 0) == int(values["lc_time_names"])
            self.check(ok, "lc_time_names", printed, s.lc_time_names)
        if "collation_database" in values:
            text = values["collation_database"]
            collation = 0 if text == b"DEFAULT" else int(text)
            self.check((s.charset_database or 0) == collation, "collation_database", printed)
        if "time_zone" in values:
            ok = s.time_zone == values["time_zone"].strip(b"'").decode()
            self.check(ok, "time_zone", printed, s.time_zone)
        for name, (bit, when_set) in FLAGS2.items():
            if name in values and s.flags2 is not None:
                shown = when_set if s.flags2 & bit else 1 - when_set
                self.check(shown == int(values[name]), "flags2", printed, name)

    def user_var(self, printed: DumpEvent, event: UserVarEvent) -> None:
        printed_var = user_var(printed)
        if printed_var is None:
            self.check(False, "user_var", printed, "no SET @var line")
            return
        name, value = printed_var
        self.check(event.name == name, "user_var name", printed, event.name)
        if isinstance(value, tuple):
            self.check(event.raw == value[1], "user_var string", printed, event.raw)
        elif isinstance(event.value, float) and isinstance(value, Decimal | int):
            self.check(event.value == float(value), "user_var real", printed, event.value)
        else:
            self.check(event.value == value, "user_var value", printed, event.value)

    def create_file(self, printed: DumpEvent, event: CreateFileEvent) -> None:
        text = b"\n".join(printed.lines)
        m = re.search(rb"LOAD DATA INFILE '(.*?)' INTO TABLE `(.*?)`", text)
        ids = re.search(rb"# file_id: (\d+)\s+block_len: (\d+)", text)
        got = (event.file_name, event.table, event.file_id, len(event.block))
        want = (m[1].decode(), m[2].decode(), int(ids[1]), int(ids[2])) if m and ids else None
        self.check(got == want, "create_file", printed, (got, want))
