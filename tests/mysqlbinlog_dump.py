"""Read the text that ``mysqlbinlog`` / ``mariadb-binlog`` print, as known answers for tests.

The dumps come from the servers' own tools (the corpus's expected outputs, or
``mariadb-binlog`` run by a test), never from binlogkit. :func:`parse_dump`
cuts a dump into one :class:`DumpEvent` per event, keyed by the ``# at``
offset the tool printed; the helpers read the values the tool derived from
each event: the ``SET`` lines of a QUERY, a user variable, INTVAR, RAND.
Works on plain, ``-v``/``-vv`` and ``--hexdump`` output of MySQL and MariaDB.
:class:`Checker` compares a dump with the events binlogkit decodes.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from binlogkit import BinlogDecoder, DecodeOptions
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
