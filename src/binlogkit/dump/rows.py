"""Row events as ``-v`` / ``-vv`` pseudo-SQL (``### INSERT INTO ...``), and row counts.

Follows the tools' ``Rows_log_event::print_verbose``: each row image is read
from the (uncompressed) rows section with the column printers of
:mod:`binlogkit.dump.values`, built once per table map. The after-image of a
MySQL PARTIAL_UPDATE_ROWS event starts with its value options and, for partial
JSON updates, a bit per JSON column of the table telling whether that column
holds diffs, printed as ``JSON_REPLACE(@N, ...)`` and the like
(:func:`~binlogkit.dump.json_values.diff_text`). By default the rows
go through the straight-line printers and counters of
:mod:`binlogkit.dump.compiled`, made once per table and row shape; the plain
column-by-column walk here is their reference and takes over whenever they
cannot vouch for a rows section.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import field, replace
from typing import Any

from binlogkit.binlog.constants import ColumnType as CT
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.dump.compiled import compile_counter, compile_rows
from binlogkit.dump.json_values import partial_json_printer
from binlogkit.dump.text import backquoted
from binlogkit.dump.values import ColumnPrinter, PrintFn, table_def_metas, value_printer
from binlogkit.errors import BinlogError, DecodeError

__all__ = ["RowsPrinter", "TablePrinter", "Unterminated", "joined_lines"]


@frozen_dataclass
class TablePrinter:
    """The printers of one table map's columns, and its name as the tools print it."""

    name: str
    columns: tuple[ColumnPrinter, ...]
    unsized: frozenset[str] = frozenset()
    """Keys of the columns whose size the tools' row counter cannot tell (it stops there)."""
    diffs: tuple[tuple[int, PrintFn], ...] = ()
    """Each JSON column (index) and its printer of partial-update diffs."""
    compiled: dict[tuple[Any, ...], Callable[[bytes], Any]] = field(
        default_factory=dict, compare=False, repr=False
    )
    """The generated printers and counters of this table, by row shape."""

    @classmethod
    def of(cls, table: TableMapEvent, *, mysql: bool = False) -> TablePrinter:
        """The printers of ``table``'s columns; ``mysql``: as MySQL's mysqlbinlog prints."""
        metas = table_def_metas(table.column_types, table.metadata)
        nulls = table.null_bitmap
        vectors = CT.VECTOR in table.column_types
        dimensions = iter((vectors and table.metadata_fields.vector_dimensions) or ())
        columns = tuple(
            value_printer(
                code,
                meta,
                bool(nulls[i >> 3] >> (i & 7) & 1) if i >> 3 < len(nulls) else False,
                mysql=mysql,
                dimensions=next(dimensions, 0) if code == CT.VECTOR else 0,
            )
            for i, (code, meta) in enumerate(zip(table.column_types, metas, strict=True))
        )
        unsized = frozenset(
            info.key for info, col in zip(table.columns, columns, strict=True) if not col.sized
        )
        diffs = tuple(
            (i, partial_json_printer(col.meta, f"@{i + 1}"))
            for i, col in enumerate(columns)
            if col.code == CT.JSON
        )
        name = f"{backquoted(table.schema)}.{backquoted(table.table_name)}"
        return cls(name, columns, unsized, diffs)


class Unterminated(str):
    """A ``###`` text the tools print without its newline (an unknown table's rows event)."""

    __slots__ = ()


def _present(bitmap: bytes | None, width: int) -> tuple[int, ...]:
    if bitmap is None:
        return ()
    return tuple(i for i in range(width) if bitmap[i >> 3] >> (i & 7) & 1)


class RowsPrinter:
    """Prints (or counts) the rows of row events, ``verbose`` 1 or 2 (0: count only).

    ``compiled=False`` keeps to the plain walk (the reference of the generated code).
    """

    def __init__(self, verbose: int, *, compiled: bool = True) -> None:
        self.verbose = verbose
        self.compiled = compiled

    def generated(self, event: RowsEvent, table: TablePrinter) -> Callable[[bytes], Any]:
        """The generated printer (or, not verbose, counter) of rows shaped like ``event``'s.

        It takes the rows section and gives what :meth:`rows` (or :meth:`count`)
        gives, or raises when the plain walk must decide.
        """
        key = (self.verbose, type(event), event.width, event.columns_before, event.columns_after)
        fn = table.compiled.get(key)
        if fn is None:
            fn = table.compiled[key] = self._compile(event, table)
        return fn

    def count(self, event: RowsEvent, table: TablePrinter | None) -> int:
        """The number of rows the tools count without ``-v`` (count_row_events).

        Their counter stops after the first row holding a value whose size it
        cannot tell (GEOMETRY, compressed columns ...): that row is the last counted.
        """
        if table is None:
            return 0
        data = event.rows_data
        if not data:
            return 0 if event.has_before else 1
        if self.compiled and not (event.partial or event.legacy):
            # (their images are laid out otherwise; the decoder counts them below)
            try:
                return self.generated(event, table)(data)  # type: ignore[no-any-return]
            except Exception:  # the plain count gives the answer or the error
                pass
        unsized = table.unsized
        count = 0
        try:
            rows = event.rows
        except BinlogError:
            return self._scan_count(event, table)
        for change in rows:
            count += 1
            if unsized and any(
                image is not None and any(image.get(key) is not None for key in unsized)
                for image in (change.before, change.after)
            ):
                break
        return count

    def _scan_count(self, event: RowsEvent, table: TablePrinter) -> int:
        """Count rows the tools' way, from the value sizes (when the decoder cannot read them)."""
        data = event.rows_data
        images = [self._bitmaps(event, table)[0]]
        second = self._bitmaps(event, table)[1]
        if second is not None:
            images.append(second)
        count = 0
        pos = 0
        columns = table.columns
        try:
            while pos < len(data):
                count += 1
                for present in images:
                    nulls = data[pos : pos + (len(present) + 7) // 8]
                    pos += len(nulls)
                    for n, i in enumerate(present):
                        if nulls[n >> 3] >> (n & 7) & 1:
                            continue
                        if not columns[i].sized:
                            return count
                        pos = columns[i].print(data, pos)[1]
        except (DecodeError, IndexError, ValueError, struct.error):
            pass
        return count

    def _bitmaps(
        self, event: RowsEvent, table: TablePrinter
    ) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
        """The present columns of the first image, and of the second (updates only)."""
        before = event.columns_before
        after = event.columns_after
        both = event.has_before and event.has_after
        if both and after is None:
            after = before  # pre-GA updates: one bitmap for both images
        width = min(event.width, len(table.columns))
        first = _present(before if event.has_before else after, width)
        second = _present(after, width) if both else None
        if not first and not second and event.rows_data and not event.partial:
            # Rows of no column take no bytes: a walk of the rows section would never end.
            raise DecodeError(
                f"{len(event.rows_data)} bytes of rows data for row images of no column "
                "(the columns-present bitmaps are empty)",
                file=event.header.file,
                offset=event.header.offset,
                event_type=event.header.type_name,
            )
        return first, second

    def rows(self, event: RowsEvent, table: TablePrinter | None) -> tuple[list[str], int]:
        """The ``###`` lines of ``event`` (none when not verbose) and its number of rows."""
        if table is None:
            if not self.verbose:
                return [], 0
            return [Unterminated(f"### Row event for unknown table #{event.table_id}")], 0
        data = event.rows_data
        if self.compiled and self.verbose and data and not event.partial:
            try:
                return self.generated(event, table)(data)  # type: ignore[no-any-return]
            except Exception:  # the plain walk gives the output or the error
                pass
        first, second = self._bitmaps(event, table)
        if event.has_before and event.has_after:
            verb, clause1, clause2 = "UPDATE", "### WHERE", "### SET"
        elif event.has_before:
            verb, clause1, clause2 = "DELETE FROM", "### WHERE", None
        else:
            verb, clause1, clause2 = "INSERT INTO", "### SET", None
        if not event.has_before and not data:
            if not self.verbose:
                return [], 1
            return [f"### INSERT INTO {table.name} VALUES ()"], 1
        out: list[str] = []
        count = 0
        pos = 0
        end = len(data)
        head = f"### {verb} {table.name}"
        image = self._image
        try:
            while pos < end:
                count += 1
                out.append(head)
                pos = image(data, pos, first, table.columns, clause1, out)
                if second is not None:
                    if event.partial:
                        pos = self._partial_image(data, pos, second, table, out)
                    elif not second:
                        out.append("### SET /* no columns */")
                    else:
                        pos = image(data, pos, second, table.columns, clause2, out)
        except (struct.error, IndexError, ValueError) as err:
            raise DecodeError(
                f"row {count} of {table.name} cannot be printed: {err}",
                file=event.header.file,
                offset=event.header.offset,
                event_type=event.header.type_name,
            ) from err
        if not self.verbose:
            return [], count
        return out, count

    def _compile(self, event: RowsEvent, table: TablePrinter) -> Callable[[bytes], Any]:
        first, second = self._bitmaps(event, table)
        if not self.verbose:
            return compile_counter(table.columns, (first,) if second is None else (first, second))
        images: list[tuple[str, tuple[int, ...] | None]]
        if event.has_before and event.has_after:
            verb = "UPDATE"
            images = [("### WHERE", first), ("### SET", second or None)]
        elif event.has_before:
            verb, images = "DELETE FROM", [("### WHERE", first)]
        else:
            verb, images = "INSERT INTO", [("### SET", first)]
        return compile_rows(table.columns, f"### {verb} {table.name}", images, self.verbose)

    def _partial_image(
        self, buf: bytes, pos: int, present: tuple[int, ...], table: TablePrinter, out: list[str]
    ) -> int:
        """The after-image of a PARTIAL_UPDATE_ROWS event (print_verbose_one_row, UPDATE_AI).

        Its value options (a length-encoded integer) come first; with
        PARTIAL_JSON_UPDATES (bit 0) a bitmap follows with a bit per JSON column
        of the table, set where the column holds diffs instead of a document.
        """
        if pos >= len(buf):
            raise DecodeError("the value options of a partial update run past the rows section")
        first = buf[pos]
        size = {0xFC: 2, 0xFD: 3, 0xFE: 8}.get(first, 0) if first >= 0xFB else 0
        if first == 0xFB or pos + 1 + size > len(buf):
            raise DecodeError("bad value options in a partial update")
        options = int.from_bytes(buf[pos + 1 : pos + 1 + size], "little") if size else first
        pos += 1 + size
        columns = table.columns
        if options & 1:
            bits = buf[pos : pos + (len(table.diffs) + 7) // 8]
            pos += len(bits)
            diffs = {i: fn for k, (i, fn) in enumerate(table.diffs) if bits[k >> 3] >> (k & 7) & 1}
            columns = tuple(
                replace(col, print=diffs[i]) if i in diffs else col for i, col in enumerate(columns)
            )
        return self._image(buf, pos, present, columns, "### SET", out)

    def _image(
        self,
        buf: bytes,
        pos: int,
        present: tuple[int, ...],
        columns: tuple[ColumnPrinter, ...],
        clause: str | None,
        out: list[str],
    ) -> int:
        nulls = buf[pos : pos + (len(present) + 7) // 8]
        pos += len(nulls)
        verbose = self.verbose
        if verbose:
            out.append(clause or "")
        for n, i in enumerate(present):
            col = columns[i]
            is_null = nulls[n >> 3] >> (n & 7) & 1
            if is_null:
                text = "NULL"
            else:
                if pos >= len(buf):
                    raise DecodeError("row image runs past the end of the rows section")
                text, pos = col.print(buf, pos)
            if verbose > 1:
                out.append(
                    f"###   @{i + 1}={text} /* {col.typestr} meta={col.meta} "
                    f"nullable={int(col.nullable)} is_null={is_null} */"
                )
            elif verbose:
                out.append(f"###   @{i + 1}={text}")
        return pos


def joined_lines(lines: list[str]) -> str:
    """``###`` texts as the tools print them: each on its line, but see :class:`Unterminated`."""
    return "".join(line if isinstance(line, Unterminated) else line + "\n" for line in lines)
