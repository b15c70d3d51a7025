"""The rows events: WRITE, UPDATE and DELETE in every version, and PARTIAL_UPDATE_ROWS.

One layout serves them all: post-header (table id, flags; v2 adds the extra
row info), the column count, one or two columns-present bitmaps, then the
rows. The versions differ only in framing:

- pre-GA (20-22, MySQL 5.1.0-5.1.17): rows start with the table's record
  NULL bytes instead of a NULL bitmap (see :mod:`binlogkit.binlog.rows.plan`);
- v1 (23-25): MySQL 5.1.18-5.6, and MariaDB to this day;
- v2 (30-32, MySQL 5.6+): a variable post-header with NDB and partition info;
- PARTIAL_UPDATE_ROWS (39, MySQL 8.0.3+): v2 with a shared image per row
  carrying JSON diffs;
- MariaDB compressed (166-168 v1, 169-171 v2): the rows section is zlib data
  behind MariaDB's compressed header (0x80 | length-of-size, big-endian size).

The event keeps the rows section exactly as read, so re-encoding is exact and
nothing is decoded until :attr:`RowsEvent.rows` is first read.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Sequence
from dataclasses import field, replace
from typing import ClassVar, Self

from binlogkit.binlog import mariadb_compression
from binlogkit.binlog.constants import EventType
from binlogkit.binlog.context import DecodeContext, DecodeOptions, FormatContext
from binlogkit.binlog.events.base import Body, Event, TransactionRole, register
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.binlog.frozen import fast_constructor, frozen_dataclass
from binlogkit.binlog.header import EventHeader
from binlogkit.binlog.rows.plan import PartialRowChange, RowChange
from binlogkit.binlog.tables import Table
from binlogkit.errors import BinlogError, DecodeError, EncodeError
from binlogkit.wire import ByteReader, ByteWriter

__all__ = [
    "DeleteRowsEvent",
    "ExtraRowInfo",
    "PartialRowChange",
    "PartialUpdateRowsEvent",
    "RowChange",
    "RowsEvent",
    "RowsFlag",
    "UpdateRowsEvent",
    "WriteRowsEvent",
    "table_filter_keeps",
]

ROWS_HEADER_LENGTH_V1 = 8
ROWS_HEADER_LENGTH_V2 = 10

_E = EventType
_PRE_GA = frozenset({_E.PRE_GA_WRITE_ROWS, _E.PRE_GA_UPDATE_ROWS, _E.PRE_GA_DELETE_ROWS})
_V2 = frozenset(
    {
        _E.WRITE_ROWS,
        _E.UPDATE_ROWS,
        _E.DELETE_ROWS,
        _E.PARTIAL_UPDATE_ROWS,
        _E.MARIADB_WRITE_ROWS_COMPRESSED,
        _E.MARIADB_UPDATE_ROWS_COMPRESSED,
        _E.MARIADB_DELETE_ROWS_COMPRESSED,
    }
)
_COMPRESSED = frozenset(
    range(_E.MARIADB_WRITE_ROWS_COMPRESSED_V1, _E.MARIADB_DELETE_ROWS_COMPRESSED + 1)
)
_PARTIAL_UPDATE_ROWS = _E.PARTIAL_UPDATE_ROWS.value  # an int: cheaper than the enum member

_ID_AND_FLAGS = struct.Struct("<IHH")
"""The v1 post-header: the 6-byte table id as its low 4 and high 2 bytes, then the flags."""

# What malformed row data can make a value decoder raise.
_MALFORMED = (struct.error, IndexError, ValueError, KeyError, OverflowError, UnicodeError)


class RowsFlag:
    """Bits of a rows event's ``flags``."""

    STMT_END = 0x0001
    NO_FOREIGN_KEY_CHECKS = 0x0002
    RELAXED_UNIQUE_CHECKS = 0x0004
    COMPLETE_ROWS = 0x0008
    USE_SQL_FOREIGN_KEY = 0x0010


@frozen_dataclass
class ExtraRowInfo:
    """The v2 extra row info, parsed: NDB info and partition ids (MySQL's Extra_row_info).

    ``ndb_info`` is the NDB chunk as written (its length byte, format byte and
    data); ``unknown`` is what follows a tag this library does not know.
    """

    ndb_info: bytes | None = None
    partition_id: int | None = None
    source_partition_id: int | None = None
    unknown: bytes = b""

    NDB_TAG: ClassVar[int] = 0
    PARTITION_TAG: ClassVar[int] = 1

    @classmethod
    def parse(cls, data: bytes, update: bool) -> ExtraRowInfo:
        r = ByteReader(data)
        ndb = part = source = None
        while not r.at_end():
            tag = r.u8("extra row info tag")
            if tag == cls.NDB_TAG:
                length = r.buf[r.pos] if r.pos < r.end else 0
                if length < 2:
                    raise DecodeError(f"NDB extra row info of invalid length {length}")
                chunk = r.take(length, "NDB extra row info")
                ndb = chunk if ndb is None else ndb
            elif tag == cls.PARTITION_TAG:
                part = r.u16("partition id")
                if update:
                    source = r.u16("source partition id")
            else:
                r.pos -= 1
                return cls(ndb, part, source, r.rest())
        return cls(ndb, part, source)


@frozen_dataclass
class RowsEvent(Event):
    """A rows event: the changed rows of one table, decoded on first access of :attr:`rows`.

    ``width`` is the column count the event was written for; ``columns_before``
    and ``columns_after`` are the columns-present bitmaps of the before and
    after images (None where the type has no such image; a pre-GA update has
    only ``columns_before``, which serves both images); ``extra_info`` is
    the raw v2 extra row info (None for v0/v1); ``data`` is the rows section
    as written (zlib data behind MariaDB's header for the compressed types).
    ``table`` is the table the event refers to (its TABLE_MAP, columns and row
    plans), from the decoder's cache.
    """

    table_id: int
    flags: int
    extra_info: bytes | None
    width: int
    columns_before: bytes | None
    columns_after: bytes | None
    data: bytes
    table: Table | None = field(default=None, repr=False, compare=False)
    options: DecodeOptions = field(default_factory=DecodeOptions, repr=False, compare=False)
    _rows: tuple[RowChange, ...] | None = field(default=None, init=False, repr=False, compare=False)
    _rows_data: bytes | None = field(default=None, init=False, repr=False, compare=False)

    has_before: ClassVar[bool] = False
    has_after: ClassVar[bool] = False
    transaction_role: ClassVar[TransactionRole] = TransactionRole.ROWS

    # --- what kind of rows event --------------------------------------------------------------

    @property
    def compressed(self) -> bool:
        """MariaDB compressed rows (codes 166-171)."""
        return self.header.type_code in _COMPRESSED

    @property
    def legacy(self) -> bool:
        """Pre-GA rows (codes 20-22), whose rows carry record NULL bytes."""
        return self.header.type_code in _PRE_GA

    @property
    def partial(self) -> bool:
        return self.header.type_code == _PARTIAL_UPDATE_ROWS

    @property
    def schema(self) -> str | None:
        return None if self.table is None else self.table.schema

    @property
    def table_name(self) -> str | None:
        return None if self.table is None else self.table.table_name

    @property
    def extra_row_info(self) -> ExtraRowInfo | None:
        """The parsed v2 extra row info (None for v0/v1 events)."""
        if self.extra_info is None:
            return None
        return ExtraRowInfo.parse(self.extra_info, self.has_before and self.has_after)

    # --- decode / encode ----------------------------------------------------------------------

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> Self:
        code = header.type_code
        fmt = ctx.fmt
        lengths = fmt.post_header_lengths
        if code <= len(lengths) and not fmt.permuted_types:  # fmt.post_header_length, inline
            phl = lengths[code - 1]
        else:
            phl = _post_header_length(fmt, code)
        if phl == ROWS_HEADER_LENGTH_V1 and len(body) > 8 and body[8] < 0xFB:
            low, high, flags = _ID_AND_FLAGS.unpack_from(body)  # the usual v1 post-header
            table_id, extra, width, pos = low | high << 32, None, body[8], 9
        else:
            table_id, flags, extra, width, pos = _read_post_header(body, phl)
        nbytes = (width + 7) // 8
        # Pre-GA updates have one bitmap, for both images.
        has_after = cls.has_after and not (cls.has_before and code in _PRE_GA)
        end = pos + nbytes * (cls.has_before + has_after)
        if end > len(body):
            raise DecodeError(
                f"columns-present bitmaps need {end - pos} bytes at body offset {pos}, "
                f"only {len(body) - pos} left"
            )
        before = body[pos : pos + nbytes] if cls.has_before else None
        after = body[end - nbytes : end] if has_after else None
        data = body[end:]
        if isinstance(body, memoryview):  # a large event's body: keep copies, not views
            before, after, data = _copy(before), _copy(after), bytes(data)
        table = ctx.tables.get(table_id)  # None (read from inside a transaction): see rows
        return fast_constructor(cls)(
            header, table_id, flags, extra, width, before, after, data, table, ctx.options
        )

    def encode_body(self, fmt: FormatContext) -> bytes:
        phl = _post_header_length(fmt, self.header.type_code)
        w = ByteWriter()
        w.uint(self.table_id, 4 if phl == 6 else 6)
        w.u16(self.flags)
        if phl == ROWS_HEADER_LENGTH_V2:
            extra = self.extra_info or b""
            w.u16(len(extra) + 2)
            w.write(extra)
        elif self.extra_info:
            raise EncodeError("extra row info needs the v2 rows post-header")
        w.packed_int(self.width)
        for bitmap in (self.columns_before, self.columns_after):
            if bitmap is not None:
                w.write(bitmap)
        w.write(self.data)
        return w.getvalue()

    # --- rows ---------------------------------------------------------------------------------

    @property
    def rows_data(self) -> bytes:
        """The rows section uncompressed (the same as ``data`` for uncompressed types)."""
        if not self.compressed:
            return self.data
        raw = self._rows_data
        if raw is None:
            raw = mariadb_compression.uncompress(self.data)
            object.__setattr__(self, "_rows_data", raw)
        return raw

    @property
    def rows(self) -> tuple[RowChange, ...]:
        """The row changes, decoded on first access and kept."""
        rows = self._rows
        if rows is None:
            rows = self._decode_rows()
            object.__setattr__(self, "_rows", rows)
        return rows

    def _decode_rows(self) -> tuple[RowChange, ...]:
        header = self.header
        code = header.type_code
        table = self.table
        try:
            data = self.rows_data if code in _COMPRESSED else self.data
            if table is None:
                if data:
                    raise DecodeError(
                        f"no TABLE_MAP event for table id {self.table_id} before this rows event",
                        hint="start reading at or before the transaction's TABLE_MAP events",
                    )
                return ()
            before = self.columns_before
            after = self.columns_after
            if after is None and self.has_after:
                after = before  # _bitmaps, inline: a pre-GA update has one for both images
            return table.plan(self.options).decode_rows(
                data, self.width, before, after, code == _PARTIAL_UPDATE_ROWS, code in _PRE_GA
            )
        except BinlogError as err:
            err.locate(file=header.file, offset=header.offset, event_type=header.type_name)
            raise
        except (*_MALFORMED, zlib.error) as err:
            raise DecodeError(
                f"malformed row data of {self._table_label()}: {err}",
                file=header.file,
                offset=header.offset,
                event_type=header.type_name,
            ) from err

    def _table_label(self) -> str:
        return f"table id {self.table_id}" if self.table is None else self.table.qualified_name

    def encode_rows(self, rows: Sequence[RowChange], *, null_padding: bool | None = None) -> bytes:
        """The uncompressed rows section for ``rows``, written with this event's table and bitmaps.

        ``null_padding`` sets the unused bits of the NULL bitmaps (MySQL 5.x and
        MariaDB do, MySQL 8 does not); by default the event's own rows tell.
        """
        if self.table is None:
            raise EncodeError(f"no table map to encode the rows of table id {self.table_id}")
        plan = self.table.plan(self.options)
        before, after = self._bitmaps()
        if null_padding is None:
            null_padding = (
                plan.null_padding(self.rows_data, self.width, before, after, partial=self.partial)
                if not self.legacy
                else False
            )
        return plan.encode_rows(
            rows,
            self.width,
            before,
            after,
            partial=self.partial,
            legacy=self.legacy,
            pad=null_padding,
        )

    def _bitmaps(self) -> tuple[bytes | None, bytes | None]:
        """The columns-present bitmaps of the before and after images."""
        if self.has_after and self.columns_after is None:
            return self.columns_before, self.columns_before  # pre-GA update: one for both
        return self.columns_before, self.columns_after

    def with_rows(self, rows: Sequence[RowChange], *, null_padding: bool | None = None) -> Self:
        """This event with its rows section written from ``rows`` (compressed if its type is)."""
        raw = self.encode_rows(rows, null_padding=null_padding)
        if self.compressed:
            data = self.data if raw == self.rows_data else mariadb_compression.compress(raw)
        else:
            data = raw
        return replace(self, data=data)

    @classmethod
    def from_rows(
        cls,
        header: EventHeader,
        rows: Sequence[RowChange],
        *,
        table: Table | TableMapEvent | None = None,
        template: RowsEvent | None = None,
        flags: int = RowsFlag.STMT_END,
        columns_before: bytes | None = None,
        columns_after: bytes | None = None,
        extra_info: bytes | None = None,
        options: DecodeOptions | None = None,
        null_padding: bool = False,
    ) -> Self:
        """A rows event of this type written from row values.

        With ``template``, its fields (table, bitmaps, flags, extra info) and
        ``rows``; else a new event for ``table`` (a table map, or the table of
        one), whose images default to every column (binlog_row_image=FULL).
        ``null_padding``: see :meth:`encode_rows`.
        """
        if template is not None:
            return replace(template.with_rows(rows), header=header)  # type: ignore[return-value]
        if table is None:
            raise EncodeError("from_rows needs a table map or a template event")
        if isinstance(table, TableMapEvent):
            table = Table(table)
        width = table.column_count
        full = (1 << width) - 1
        everything = full.to_bytes((width + 7) // 8, "little")
        event = cls(
            header,
            table.table_id,
            flags,
            extra_info,
            width,
            (columns_before or everything) if cls.has_before else None,
            (columns_after or everything) if cls.has_after else None,
            b"",
            table,
            options or DecodeOptions(),
        )
        return event.with_rows(rows, null_padding=null_padding)


def _read_post_header(body: Body, phl: int) -> tuple[int, int, bytes | None, int, int]:
    """Table id, flags, extra row info, column count, and the body offset after them."""
    r = ByteReader(body)
    table_id = r.uint(4 if phl == 6 else 6, "table id")
    flags = r.u16("flags")
    extra = None
    if phl == ROWS_HEADER_LENGTH_V2:
        length = r.u16("extra row info length")
        if length < 2:
            raise DecodeError(f"extra row info length {length} is less than 2")
        extra = r.take(length - 2, "extra row info")
    width = r.packed_length("column count")
    return table_id, flags, extra, width, r.pos


def _copy(view: Body | None) -> bytes | None:
    return None if view is None else bytes(view)


def _post_header_length(fmt: FormatContext, code: int) -> int:
    default = ROWS_HEADER_LENGTH_V2 if code in _V2 else ROWS_HEADER_LENGTH_V1
    return fmt.post_header_length(code, default)


@register(
    EventType.PRE_GA_WRITE_ROWS,
    EventType.WRITE_ROWS_V1,
    EventType.WRITE_ROWS,
    EventType.MARIADB_WRITE_ROWS_COMPRESSED_V1,
    EventType.MARIADB_WRITE_ROWS_COMPRESSED,
)
@frozen_dataclass
class WriteRowsEvent(RowsEvent):
    """Inserted rows: after images only."""

    has_after: ClassVar[bool] = True


@register(
    EventType.PRE_GA_UPDATE_ROWS,
    EventType.UPDATE_ROWS_V1,
    EventType.UPDATE_ROWS,
    EventType.MARIADB_UPDATE_ROWS_COMPRESSED_V1,
    EventType.MARIADB_UPDATE_ROWS_COMPRESSED,
)
@frozen_dataclass
class UpdateRowsEvent(RowsEvent):
    """Updated rows: a before and an after image per row."""

    has_before: ClassVar[bool] = True
    has_after: ClassVar[bool] = True


@register(EventType.PARTIAL_UPDATE_ROWS)
@frozen_dataclass
class PartialUpdateRowsEvent(UpdateRowsEvent):
    """Updated rows whose JSON columns may be logged as diffs (binlog_row_value_options).

    Its rows are :class:`PartialRowChange`: ``diffs`` holds the diffs, and
    ``after`` the full new documents where the before image has the old ones.
    """


@register(
    EventType.PRE_GA_DELETE_ROWS,
    EventType.DELETE_ROWS_V1,
    EventType.DELETE_ROWS,
    EventType.MARIADB_DELETE_ROWS_COMPRESSED_V1,
    EventType.MARIADB_DELETE_ROWS_COMPRESSED,
)
@frozen_dataclass
class DeleteRowsEvent(RowsEvent):
    """Deleted rows: before images only."""

    has_before: ClassVar[bool] = True


# --- MariaDB's compressed rows ------------------------------------------------------------------


def table_filter_keeps(event: Event, keep: Callable[[str, str], bool]) -> bool:
    """Whether a table filter lets ``event`` through (any event but TABLE_MAP and rows events)."""
    if isinstance(event, TableMapEvent):
        return keep(event.schema, event.table_name)
    if isinstance(event, RowsEvent) and event.table is not None:
        return keep(event.table.schema, event.table.table_name)
    return True
