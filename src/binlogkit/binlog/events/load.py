"""LOAD DATA INFILE events: the old LOAD family (MySQL 3.23-4.x) and the 5.0 one.

3.23 logged LOAD / NEW_LOAD (the file named, its rows never shipped). 4.0 and
4.1 shipped the file in CREATE_FILE (the LOAD fields plus a first block),
APPEND_BLOCK, and then EXEC_LOAD or DELETE_FILE. From 5.0 the file goes in
BEGIN_LOAD_QUERY and APPEND_BLOCK, and EXECUTE_LOAD_QUERY carries the LOAD
statement itself with the position of its file name.
"""

from __future__ import annotations

import struct
from enum import IntEnum, IntFlag
from typing import ClassVar

from binlogkit.binlog import utf8
from binlogkit.binlog.constants import EventType
from binlogkit.binlog.context import DecodeContext, FormatContext
from binlogkit.binlog.events.base import Body, Event, register
from binlogkit.binlog.events.query import QueryEvent, decode_query_parts, encode_query_parts
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.header import EventHeader
from binlogkit.errors import DecodeError, EncodeError
from binlogkit.wire import ByteReader, ByteWriter

LOAD_HEADER_LEN = 18
"""Post-header of LOAD and NEW_LOAD (and the first part of CREATE_FILE's)."""

FILE_ID_HEADER_LEN = 4
"""Post-header of the file-id events (and CREATE_FILE's own part): the file id."""

EXECUTE_LOAD_QUERY_EXTRA_HEADER_LEN = 13
"""What EXECUTE_LOAD_QUERY adds to the QUERY post-header."""

_LOAD_POST = struct.Struct("<IIIBBI")
_ELQ_POST = struct.Struct("<IIIB")


class LoadOptFlag(IntFlag):
    """``opt_flags`` of a LOAD statement's options."""

    DUMPFILE = 0x01
    OPT_ENCLOSED = 0x02
    REPLACE = 0x04
    IGNORE = 0x08


class LoadEmptyFlag(IntFlag):
    """``empty_flags`` of the old (single-character) option format."""

    FIELD_TERM = 0x01
    ENCLOSED = 0x02
    LINE_TERM = 0x04
    LINE_START = 0x08
    ESCAPED = 0x10


class DupHandling(IntEnum):
    """What EXECUTE_LOAD_QUERY does with duplicate keys."""

    ERROR = 0
    IGNORE = 1
    REPLACE = 2


@frozen_dataclass
class LoadOptions:
    """The FIELDS/LINES clauses of a LOAD statement (MySQL's ``sql_ex``).

    The new format (NEW_LOAD, CREATE_FILE) stores each terminator as a string
    of up to 255 bytes; the old one (LOAD) stores one byte each plus
    ``empty_flags`` saying which are empty (``empty_flags`` is None in the new
    format). In the old format an "empty" terminator still has its byte, kept
    here as stored.
    """

    field_term: bytes
    enclosed: bytes
    line_term: bytes
    line_start: bytes
    escaped: bytes
    opt_flags: int
    empty_flags: int | None = None

    @classmethod
    def decode(cls, r: ByteReader, *, new_format: bool) -> LoadOptions:
        def term() -> bytes:
            return r.take(r.u8("load option") if new_format else 1, "load option")

        field_term, enclosed, line_term, line_start, escaped = (term() for _ in range(5))
        opt_flags = r.u8("opt_flags")
        empty_flags = None if new_format else r.u8("empty_flags")
        return cls(field_term, enclosed, line_term, line_start, escaped, opt_flags, empty_flags)

    def encode(self, w: ByteWriter, *, new_format: bool) -> None:
        terms = (self.field_term, self.enclosed, self.line_term, self.line_start, self.escaped)
        if new_format != (self.empty_flags is None):
            raise EncodeError("LOAD options: empty_flags belongs to the old format only")
        for term in terms:
            if new_format:
                if len(term) > 255:
                    raise EncodeError("LOAD option longer than 255 bytes")
                w.u8(len(term))
            elif len(term) != 1:
                raise EncodeError("the old LOAD option format takes one byte per terminator")
            w.write(term)
        w.u8(self.opt_flags)
        if self.empty_flags is not None:
            w.u8(self.empty_flags)


def _nul(r: ByteReader, what: str) -> None:
    if r.u8(what) != 0:
        raise DecodeError(f"{what} is not followed by a NUL")


def _post_header(r: ByteReader, length: int, known: int, what: str) -> tuple[bytes, bytes]:
    """The known part of a post-header and what the format adds past it."""
    if length < known:
        raise DecodeError(f"{what} post-header of {length} bytes is shorter than {known}")
    raw = r.take(length, f"{what} post-header")
    return raw[:known], raw[known:]


def _read_file_id_layout(
    header: EventHeader, body: Body, ctx: DecodeContext
) -> tuple[int, bytes, bytes]:
    """The file-id layout: file id, the format's post-header past it, the rest of the body."""
    r = ByteReader(body)
    length = ctx.fmt.post_header_length(header.type_code, FILE_ID_HEADER_LEN)
    own, post_extra = _post_header(r, length, FILE_ID_HEADER_LEN, header.type_name)
    return int.from_bytes(own, "little"), post_extra, r.rest()


def _write_file_id_layout(file_id: int, post_extra: bytes, rest: bytes) -> bytes:
    """The mirror of :func:`_read_file_id_layout`."""
    return file_id.to_bytes(4, "little") + post_extra + rest


_Statement = tuple[int, int, int, LoadOptions, tuple[str, ...], str, str]


@frozen_dataclass
class LoadStatementEvent(Event):
    """What LOAD, NEW_LOAD and CREATE_FILE share: the parts of the LOAD DATA statement.

    ``skip_lines`` is IGNORE n LINES, ``fields`` the column list, ``table`` and
    ``db`` the target, ``file_name`` the file the master read.
    """

    thread_id: int
    exec_time: int
    skip_lines: int
    options: LoadOptions
    fields: tuple[str, ...]
    table: str
    db: str
    file_name: str

    @staticmethod
    def _read_statement(post: bytes, r: ByteReader, *, new_format: bool) -> _Statement:
        """Read the LOAD post-header (``post``) and the body up to the file name."""
        thread_id, exec_time, skip_lines, table_len, db_len, nfields = _LOAD_POST.unpack_from(post)
        options = LoadOptions.decode(r, new_format=new_format)
        names = []
        for length in r.take(nfields, "field lengths"):
            names.append(utf8.decode(r.take(length, "field name")))
            _nul(r, "field name")
        table = r.take(table_len, "table name")
        _nul(r, "table name")
        db = r.take(db_len, "database name")
        _nul(r, "database name")
        return (
            thread_id,
            exec_time,
            skip_lines,
            options,
            tuple(names),
            utf8.decode(table),
            utf8.decode(db),
        )

    def _write_statement(self, post: ByteWriter, body: ByteWriter, *, new_format: bool) -> None:
        """Write the LOAD post-header into ``post``, the body up to the file name into ``body``."""
        names = [utf8.encode(name) for name in self.fields]
        table, db = utf8.encode(self.table), utf8.encode(self.db)
        if any(len(x) > 255 for x in (*names, table, db)):
            raise EncodeError("LOAD field, table and database names must fit in 255 bytes")
        post.write(
            _LOAD_POST.pack(
                self.thread_id, self.exec_time, self.skip_lines, len(table), len(db), len(names)
            )
        )
        self.options.encode(body, new_format=new_format)
        body.write(bytes(len(name) for name in names))
        for raw in (*names, table, db):
            body.cstring(raw)


@register(EventType.LOAD, EventType.NEW_LOAD)
@frozen_dataclass
class LoadEvent(LoadStatementEvent):
    """LOAD DATA INFILE as MySQL 3.23 logged it: the statement's parts, not the file.

    LOAD stores the terminators in the old one-byte format, NEW_LOAD in the
    new one (see :class:`LoadOptions`). ``file_name`` runs to the end of the event.
    """

    post_header_extra: bytes = b""

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> LoadEvent:
        r = ByteReader(body)
        length = ctx.fmt.post_header_length(header.type_code, LOAD_HEADER_LEN)
        post, extra = _post_header(r, length, LOAD_HEADER_LEN, "LOAD")
        statement = cls._read_statement(post, r, new_format=header.type_code != EventType.LOAD)
        return cls(header, *statement, utf8.decode(r.rest()), extra)

    def encode_body(self, fmt: FormatContext) -> bytes:
        w, body = ByteWriter(), ByteWriter()
        self._write_statement(w, body, new_format=self.header.type_code != EventType.LOAD)
        w.write(self.post_header_extra)
        w.write(body.getvalue())
        w.write(utf8.encode(self.file_name))
        return w.getvalue()


@register(EventType.CREATE_FILE)
@frozen_dataclass
class CreateFileEvent(LoadStatementEvent):
    """MySQL 4.x LOAD DATA: the statement's parts, a file id and the file's first block.

    The post-header is LOAD's (its length from the LOAD entry of the format)
    followed by CREATE_FILE's own (the file id). The options are in the new
    format; the file name ends with a NUL and the block fills the rest.
    """

    file_id: int = 0
    block: bytes = b""
    load_header_extra: bytes = b""
    post_header_extra: bytes = b""

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> CreateFileEvent:
        r = ByteReader(body)
        fmt = ctx.fmt
        load_len = fmt.post_header_length(EventType.LOAD, LOAD_HEADER_LEN)
        post, load_extra = _post_header(r, load_len, LOAD_HEADER_LEN, "CREATE_FILE (LOAD part)")
        own_len = fmt.post_header_length(EventType.CREATE_FILE, FILE_ID_HEADER_LEN)
        own, extra = _post_header(r, own_len, FILE_ID_HEADER_LEN, "CREATE_FILE")
        statement = cls._read_statement(post, r, new_format=True)
        file_name = utf8.decode(r.cstring("file name"))
        file_id = int.from_bytes(own, "little")
        return cls(header, *statement, file_name, file_id, r.rest(), load_extra, extra)

    def encode_body(self, fmt: FormatContext) -> bytes:
        w, body = ByteWriter(), ByteWriter()
        self._write_statement(w, body, new_format=True)
        w.write(self.load_header_extra)
        w.u32(self.file_id)
        w.write(self.post_header_extra)
        w.write(body.getvalue())
        w.cstring(utf8.encode(self.file_name))
        w.write(self.block)
        return w.getvalue()


@register(EventType.APPEND_BLOCK)
@frozen_dataclass
class AppendBlockEvent(Event):
    """A block of the file being loaded, appended to the file ``file_id``."""

    file_id: int
    block: bytes
    post_header_extra: bytes = b""

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> AppendBlockEvent:
        file_id, post_extra, block = _read_file_id_layout(header, body, ctx)
        return cls(header, file_id, block, post_extra)

    def encode_body(self, fmt: FormatContext) -> bytes:
        return _write_file_id_layout(self.file_id, self.post_header_extra, self.block)


@register(EventType.BEGIN_LOAD_QUERY)
@frozen_dataclass
class BeginLoadQueryEvent(AppendBlockEvent):
    """MySQL 5.0+ LOAD DATA: the first block of the file ``file_id`` (layout of APPEND_BLOCK)."""


@frozen_dataclass
class FileIdEvent(Event):
    """The layout of EXEC_LOAD and DELETE_FILE: a file id; ``extra`` keeps any bytes after it."""

    file_id: int
    post_header_extra: bytes = b""
    extra: bytes = b""

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> FileIdEvent:
        return cls(header, *_read_file_id_layout(header, body, ctx))

    def encode_body(self, fmt: FormatContext) -> bytes:
        return _write_file_id_layout(self.file_id, self.post_header_extra, self.extra)


@register(EventType.EXEC_LOAD)
@frozen_dataclass
class ExecLoadEvent(FileIdEvent):
    """MySQL 4.x: load the file ``file_id`` (built by CREATE_FILE and APPEND_BLOCK) now."""


@register(EventType.DELETE_FILE)
@frozen_dataclass
class DeleteFileEvent(FileIdEvent):
    """MySQL 4.x: drop the file ``file_id`` without loading it (the statement failed)."""


@register(EventType.EXECUTE_LOAD_QUERY)
@frozen_dataclass
class ExecuteLoadQueryEvent(QueryEvent):
    """MySQL 5.0+ LOAD DATA statement: a QUERY that loads the file ``file_id``.

    ``query[fn_pos_start:fn_pos_end]`` is the file-name part of the statement,
    which a replica replaces by its local copy. ``dup_handling`` is a
    :class:`DupHandling` value.
    """

    file_id: int = 0
    fn_pos_start: int = 0
    fn_pos_end: int = 0
    dup_handling: int = 0

    default_post_header: ClassVar[int] = 13 + EXECUTE_LOAD_QUERY_EXTRA_HEADER_LEN

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> ExecuteLoadQueryEvent:
        length = ctx.fmt.post_header_length(header.type_code, cls.default_post_header)
        p = decode_query_parts(body, length)
        rest = p.post_header_rest
        if len(rest) < EXECUTE_LOAD_QUERY_EXTRA_HEADER_LEN:
            raise DecodeError("EXECUTE_LOAD_QUERY post-header lacks its 13 own bytes")
        file_id, start, end, dup = _ELQ_POST.unpack_from(rest)
        return cls(
            header,
            p.thread_id,
            p.exec_time,
            p.error_code,
            p.status,
            p.db,
            p.query,
            rest[EXECUTE_LOAD_QUERY_EXTRA_HEADER_LEN:],
            file_id,
            start,
            end,
            dup,
        )

    def encode_body(self, fmt: FormatContext) -> bytes:
        own = _ELQ_POST.pack(self.file_id, self.fn_pos_start, self.fn_pos_end, self.dup_handling)
        parts = self._parts(self.query, own + self.post_header_extra)
        return encode_query_parts(parts, self._post_len(fmt))

    @property
    def file_name(self) -> bytes:
        """The file-name part of the statement (with its quotes)."""
        return self.query[self.fn_pos_start : self.fn_pos_end]
