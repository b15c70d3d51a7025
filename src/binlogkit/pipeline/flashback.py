"""Flashback: the undo of a range of binlog events, as rows events that reverse it.

:func:`flashback` groups the rows events of a stream into transactions and
statements and reverses everything: transactions last to first, the
statements of a transaction last to first, the rows events of a statement
last to first (the statement-end flag moves to the new last event, as
``mariadb-binlog --flashback`` does), and the rows of an event last to first.
Each rows event is turned around: a WRITE becomes a DELETE of the same rows,
a DELETE a WRITE, an UPDATE swaps its before and after images. This works on
MySQL and MariaDB binlogs alike, on MySQL's compressed transactions (the
events of a TRANSACTION_PAYLOAD, as the decoder expands them), MariaDB's
compressed rows events (their undo is uncompressed, as mariadb-binlog's) and MySQL's
PARTIAL_UPDATE_ROWS, whose undo is a plain UPDATE_ROWS that writes the full
old JSON documents back.

An undo needs full row images: the old values of every column an UPDATE
changed, every column of a deleted row. Events logged with
``binlog_row_image=MINIMAL`` or ``NOBLOB`` that lack them, and JSON diffs
whose old document is not in the before image, raise :class:`FlashbackError`
naming the event and the columns. Statements (DDL, statement-based DML) are
not undone: they are logged and left out.

:func:`undo_script` writes the undo as ``BINLOG '...'`` statements (a
format description first, then one block per transaction with its table maps
and reversed rows events) that ``mariadb``/``mysql`` clients can apply;
:mod:`binlogkit.pipeline.sql` writes it as plain SQL.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace

from binlogkit.binlog.constants import EventType
from binlogkit.binlog.context import FormatContext
from binlogkit.binlog.decoder import encode_event
from binlogkit.binlog.events import EVENT_CODECS, Event, FormatDescriptionEvent
from binlogkit.binlog.events.query import QueryEvent
from binlogkit.binlog.events.rows import RowsEvent, RowsFlag
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.rows.plan import PartialRowChange, RowChange
from binlogkit.binlog.transactions import Step, TransactionState, control
from binlogkit.errors import BinlogError

__all__ = ["FlashbackError", "UndoTransaction", "flashback", "reverse_rows_event", "undo_script"]

log = logging.getLogger(__name__)

_E = EventType
_OPPOSITE: dict[int, int] = {}
for _write, _update, _delete in (
    (_E.PRE_GA_WRITE_ROWS, _E.PRE_GA_UPDATE_ROWS, _E.PRE_GA_DELETE_ROWS),
    (_E.WRITE_ROWS_V1, _E.UPDATE_ROWS_V1, _E.DELETE_ROWS_V1),
    (_E.WRITE_ROWS, _E.UPDATE_ROWS, _E.DELETE_ROWS),
):
    _OPPOSITE.update({_write: _delete, _delete: _write, _update: _update})
_OPPOSITE.update(
    {
        _E.MARIADB_WRITE_ROWS_COMPRESSED_V1: _E.DELETE_ROWS_V1,
        _E.MARIADB_UPDATE_ROWS_COMPRESSED_V1: _E.UPDATE_ROWS_V1,
        _E.MARIADB_DELETE_ROWS_COMPRESSED_V1: _E.WRITE_ROWS_V1,
        _E.MARIADB_WRITE_ROWS_COMPRESSED: _E.DELETE_ROWS,
        _E.MARIADB_UPDATE_ROWS_COMPRESSED: _E.UPDATE_ROWS,
        _E.MARIADB_DELETE_ROWS_COMPRESSED: _E.WRITE_ROWS,
        _E.PARTIAL_UPDATE_ROWS: _E.UPDATE_ROWS,
    }
)
"""Type code of a rows event → type code of its undo."""


class FlashbackError(BinlogError):
    """A change that cannot be undone from what the binlog holds."""


@frozen_dataclass
class UndoTransaction:
    """The undo of one transaction, in the order to apply it.

    ``rows`` are the reversed rows events; ``table_maps`` the table maps they
    refer to; ``source`` the event that started the original transaction
    (its GTID or BEGIN, None when the range began inside it);
    ``format_event`` the format description of the binlog it came from.
    """

    source: Event | None
    table_maps: tuple[TableMapEvent, ...]
    rows: tuple[RowsEvent, ...]
    format_event: FormatDescriptionEvent

    @property
    def fmt(self) -> FormatContext:
        return self.format_event.own_context()

    def events(self) -> list[Event]:
        """What one BINLOG block holds: each statement's table maps, then its rows events.

        A server forgets its table maps at each statement end, so every
        statement brings its own.
        """
        maps = {m.table_id: m for m in self.table_maps}
        out: list[Event] = []
        statement: dict[int, None] = {}
        pending: list[RowsEvent] = []
        for event in self.rows:
            statement.setdefault(event.table_id)
            pending.append(event)
            if event.flags & RowsFlag.STMT_END:
                out += [maps[i] for i in statement if i in maps]
                out += pending
                statement, pending = {}, []
        out += [maps[i] for i in statement if i in maps]
        out += pending
        return out


def _where(event: Event) -> str:
    header = event.header
    return f"{header.type_name} at {header.file or '<input>'}:{header.offset}"


def _label(event: RowsEvent) -> str:
    table = event.table
    return (
        f"table id {event.table_id}" if table is None else f"`{table.schema}`.`{table.table_name}`"
    )


def _check_images(event: RowsEvent) -> None:
    """Raise when an image the undo needs is not full (MINIMAL / NOBLOB row images)."""
    width = event.width
    table = event.table
    names = [c.key for c in table.columns] if table is not None else []
    for bitmap, what in ((event.columns_before, "before"), (event.columns_after, "after")):
        if bitmap is None:
            continue
        missing = [i for i in range(width) if not bitmap[i >> 3] >> (i & 7) & 1]
        if missing:
            shown = ", ".join(names[i] if i < len(names) else f"@{i + 1}" for i in missing)
            raise FlashbackError(
                f"cannot undo {_where(event)} on {_label(event)}: its {what} image lacks "
                f"column(s) {shown} (binlog_row_image=MINIMAL or NOBLOB)",
                hint="flashback needs binlog_row_image=FULL",
            )


def _reverse_row(event: RowsEvent, change: RowChange) -> RowChange:
    if isinstance(change, PartialRowChange) and change.diffs:
        before = change.before or {}
        lost = [key for key in change.diffs if before.get(key) is None]
        if lost:
            raise FlashbackError(
                f"cannot undo {_where(event)} on {_label(event)}: JSON column(s) "
                f"{', '.join(lost)} are logged as partial updates (diffs) and the before "
                "image does not hold their old documents",
                hint="log full before images (binlog_row_image=FULL) for flashback",
            )
    return RowChange(change.after, change.before)


def reverse_rows_event(event: RowsEvent, *, last: bool) -> RowsEvent:
    """The undo of one rows event; ``last`` says it ends its (reversed) statement."""
    _check_images(event)
    code = event.header.type_code
    new_code = _OPPOSITE[code]
    cls = EVENT_CODECS[new_code]
    plan_images = event._bitmaps()
    pad = False
    if not event.legacy and event.table is not None and event.data:
        pad = event.table.plan(event.options).null_padding(
            event.rows_data, event.width, *plan_images, partial=event.partial
        )
    rows = [_reverse_row(event, change) for change in reversed(event.rows)]
    flags = event.flags | RowsFlag.STMT_END if last else event.flags & ~RowsFlag.STMT_END
    before, after = plan_images
    if event.has_before and not event.has_after:  # DELETE → WRITE
        before, after = None, before
    elif event.has_after and not event.has_before:  # WRITE → DELETE
        before, after = after, None
    else:  # UPDATE: swap
        before, after = after, before
    header = replace(event.header, type_code=new_code)
    undo = cls(  # type: ignore[call-arg]
        header,
        event.table_id,
        flags,
        event.extra_info,
        event.width,
        before,
        after,
        b"",
        event.table,
        event.options,
    )
    assert isinstance(undo, RowsEvent)
    return replace(undo, data=undo.encode_rows(rows, null_padding=pad))


class _Transaction:
    def __init__(self, source: Event | None, fde: FormatDescriptionEvent | None) -> None:
        self.source = source
        self.fde = fde
        self.statements: list[list[RowsEvent]] = []
        self.open: list[RowsEvent] = []
        self.maps: dict[int, TableMapEvent] = {}

    def add(self, event: RowsEvent) -> None:
        self.fde = _need_format(self.fde, event)
        if event.table is not None:
            self.maps.setdefault(event.table_id, event.table.map)
        self.open.append(event)
        if event.flags & RowsFlag.STMT_END:
            self.statements.append(self.open)
            self.open = []

    def undo(self) -> UndoTransaction | None:
        if self.open:
            self.statements.append(self.open)
            self.open = []
        if not self.statements:
            return None
        assert self.fde is not None  # rows were added
        rows: list[RowsEvent] = []
        for statement in reversed(self.statements):
            count = len(statement)
            for n, event in enumerate(reversed(statement)):
                rows.append(reverse_rows_event(event, last=n == count - 1))
        return UndoTransaction(self.source, tuple(self.maps.values()), tuple(rows), self.fde)


def flashback(events: Iterable[Event]) -> list[UndoTransaction]:
    """The undo of every transaction with rows events in ``events``, last transaction first."""
    fde: FormatDescriptionEvent | None = None
    done: list[UndoTransaction] = []
    current: _Transaction | None = None
    skipped = 0

    def close() -> None:
        nonlocal current
        if current is not None:
            undo = current.undo()
            if undo is not None:
                done.append(undo)
            current = None

    state = TransactionState()
    for event in events:
        step = state.step(event)
        if step & Step.BEGINS:
            close()
            current = _Transaction(event, fde)
        if isinstance(event, FormatDescriptionEvent):
            fde = event
        elif isinstance(event, RowsEvent):
            if current is None:  # the range began inside the transaction
                current = _Transaction(None, fde)
            current.add(event)
        elif isinstance(event, QueryEvent) and control(event.query) is None:
            skipped += 1
            log.info("statement %s is not undone: %.80r", _where(event), event.text)
        if step & Step.ENDS:
            close()
    close()
    if skipped:
        log.warning("%d statement(s) (DDL or statement-based changes) are not undone", skipped)
    done.reverse()
    return done


def _need_format(fde: FormatDescriptionEvent | None, event: Event) -> FormatDescriptionEvent:
    if fde is None:
        raise FlashbackError(
            f"no format description before {_where(event)}",
            hint="read the binlog from its start (a start position still reads the format)",
        )
    return fde


def _base64_lines(data: bytes) -> Iterator[str]:
    text = base64.b64encode(data).decode("ascii")
    for i in range(0, len(text), 76):
        yield text[i : i + 76]


def _binlog_statement(data: bytes) -> list[str]:
    return ["BINLOG '", *_base64_lines(data), "';"]


def undo_script(transactions: Sequence[UndoTransaction]) -> Iterator[str]:
    """The undo as lines of SQL: ``BINLOG '...'`` statements, one block per transaction.

    A BINLOG statement needs a format description first in the session: the
    script starts with the first transaction's.
    """
    if not transactions:
        return
    first = transactions[0]
    yield from _binlog_statement(encode_event(first.format_event, first.fmt))
    for undo in transactions:
        source = undo.source
        if source is not None:
            yield f"# undo of the transaction at {source.header.file}:{source.header.offset}"
        fmt = undo.fmt
        yield "BEGIN;"
        yield from _binlog_statement(b"".join(encode_event(e, fmt) for e in undo.events()))
        yield "COMMIT;"
