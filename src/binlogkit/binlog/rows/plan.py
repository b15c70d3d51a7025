"""Row plans: how to read and write the row images of one table map, compiled once.

A :class:`RowPlan` holds one value decoder per column, chosen from the column
type, metadata, signedness and charset when the plan is built (once per table
and options, kept by the decoder's :class:`~binlogkit.binlog.tables.Table`).
For each columns-present bitmap it
builds an :class:`ImagePlan`: the present columns' keys and decoders as one
tuple and the size of the NULL bitmap, so decoding a row is one loop over
offsets into ``bytes`` with no lookups. Once an image plan has served a few
rows it also gets a generated reader (:mod:`~binlogkit.binlog.rows.codegen`)
that reads images without NULLs in one straight pass, and leaves the others
to that loop; likewise, once it has written a few rows, a generated writer
(:mod:`~binlogkit.binlog.rows.image_writer`) that writes such rows in one pass.

Row image layout (all rows events): a NULL bitmap with one bit per present
column, low bit first, then the values of the present non-NULL columns. The
pre-GA rows events of MySQL 5.1.0-5.1.17 (``legacy``) instead start with the
table's record NULL bytes: bit 0 is the record's "deleted" bit (always 1),
then one bit per nullable column, unused bits set.

PARTIAL_UPDATE_ROWS puts a shared image between the before and after images:
``value_options`` (packed integer, bit 0 = PARTIAL_JSON_UPDATES) and, with
that bit, one bit per JSON column of the table saying its after-image value
is a list of JSON diffs rather than a document.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, NoReturn

from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.frozen import fast_constructor, frozen_dataclass
from binlogkit.binlog.rows.codegen import ImageReader, SectionReader, image_readers
from binlogkit.binlog.rows.columns import (
    COLUMN_CODECS,
    ColumnInfo,
    ValueDecoder,
    ValueEncoder,
    ValueLayout,
    ValuePacking,
)
from binlogkit.binlog.rows.image_writer import ImageWriter, image_writer
from binlogkit.binlog.rows.json_diff import (
    apply_json_diffs,
    read_json_diff_vector,
    write_json_diff_vector,
)
from binlogkit.errors import DecodeError, EncodeError

if TYPE_CHECKING:
    from binlogkit.binlog.tables import Table

__all__ = [
    "GENERATE_AFTER",
    "PARTIAL_JSON_UPDATES",
    "ImagePlan",
    "PartialRowChange",
    "RowChange",
    "RowPlan",
]

PARTIAL_JSON_UPDATES = 1
"""Bit 0 of binlog_row_value_options: JSON columns may be logged as diffs."""

Row = dict[str, Any]

GENERATE_AFTER = 16
"""Rows an image plan reads with the plain loop before it gets a generated reader."""


@frozen_dataclass
class RowChange:
    """One changed row: ``before`` and ``after`` map column keys to values.

    An insert has no ``before``, a delete no ``after``. A column missing from
    a dict was not logged (MINIMAL or NOBLOB images); a logged NULL is None.
    """

    before: Row | None
    after: Row | None


_new_change = fast_constructor(RowChange)
"""``RowChange(before, after)`` without the frozen dataclass's slow ``__init__``: for hot loops."""


@frozen_dataclass
class PartialRowChange(RowChange):
    """A row of PARTIAL_UPDATE_ROWS: also the shared image's options and the JSON diffs.

    ``diffs`` maps the key of each JSON column logged as diffs to its diffs
    (:class:`~binlogkit.binlog.rows.json_diff.JsonDiff` tuples). ``after``
    holds the full new document of such a column when the before image has
    the old one to apply the diffs to, else (and in raw mode) the diffs.
    """

    value_options: int = 0
    diffs: Mapping[str, Any] = field(default_factory=dict)


def _bits(bitmap: bytes, width: int) -> list[int]:
    """Indexes of the set bits among the first ``width`` (low bit first)."""
    return [i for i in range(width) if bitmap[i >> 3] >> (i & 7) & 1]


def _read_packed(buf: bytes, pos: int) -> tuple[int, int]:
    first = buf[pos]
    if first < 0xFB:
        return first, pos + 1
    size = {0xFC: 2, 0xFD: 3, 0xFE: 8}.get(first)
    if size is None:
        raise DecodeError(f"invalid packed integer prefix {first:#x} in row data")
    end = pos + 1 + size
    if end > len(buf):
        raise DecodeError("row data ends inside a packed integer")
    return int.from_bytes(buf[pos + 1 : end], "little"), end


def _write_packed(value: int, out: bytearray) -> None:
    if value < 0xFB:
        out.append(value)
    elif value <= 0xFFFF:
        out.append(0xFC)
        out += value.to_bytes(2, "little")
    elif value <= 0xFFFFFF:
        out.append(0xFD)
        out += value.to_bytes(3, "little")
    else:
        out.append(0xFE)
        out += value.to_bytes(8, "little")


class ImagePlan:
    """Reads and writes row images that carry a given set of columns."""

    __slots__ = (
        "_enc_items",
        "_plan",
        "_read_all",
        "_reader",
        "_served",
        "_writer",
        "_written",
        "indexes",
        "items",
        "json_slots",
        "keys",
        "legacy_bits",
        "null_bytes",
        "pad_mask",
    )

    def __init__(self, plan: RowPlan, indexes: Sequence[int], legacy: bool) -> None:
        self._plan = plan
        self.indexes = tuple(indexes)
        self.keys = tuple(plan.keys[i] for i in indexes)
        self.items: tuple[tuple[str, ValueDecoder], ...] = tuple(
            (plan.keys[i], plan.decoders[i]) for i in indexes
        )
        self._enc_items: tuple[tuple[str, ValueEncoder], ...] | None = None
        self.json_slots = tuple(
            (n, plan.json_ordinal[i]) for n, i in enumerate(indexes) if plan.json_ordinal[i] >= 0
        )
        self.legacy_bits: tuple[int | None, ...] | None = None
        if legacy:
            # Record NULL bytes: bit 0 is the "deleted" bit, then nullable columns in order.
            nullable = [c.index for c in plan.columns if c.nullable]
            self.null_bytes = (len(nullable) + 1 + 7) // 8
            bit_of = {index: n + 1 for n, index in enumerate(nullable)}
            self.legacy_bits = tuple(bit_of.get(i) for i in indexes)
            used = len(nullable) + 1
        else:
            self.null_bytes = (len(indexes) + 7) // 8
            used = len(indexes)
        self.pad_mask = ((1 << (8 * self.null_bytes)) - 1) ^ ((1 << used) - 1)
        """The unused bits of the NULL bitmap."""
        self._reader: ImageReader | None = None
        self._read_all: SectionReader | None = None
        """The generated reader's :data:`SectionReader`, made with it."""
        self._served = 0
        self._writer: ImageWriter | None = None
        self._written = 0

    def reader(self, rows: int) -> ImageReader:
        """The fastest way to read this image, for a section of about ``rows`` more rows.

        The plain :meth:`decode` until the plan has served :data:`GENERATE_AFTER`
        rows, then a generated reader that gives the very same results.
        """
        reader = self._reader
        if reader is not None:
            return reader
        self._served += rows
        if self._served < GENERATE_AFTER:
            return self.decode
        reader, self._read_all = self.generated_readers()
        self._reader = reader
        return reader

    def generated_reader(self) -> ImageReader:
        """A new generated reader of this image (see :mod:`~binlogkit.binlog.rows.codegen`)."""
        return self.generated_readers()[0]

    def generated_readers(self) -> tuple[ImageReader, SectionReader]:
        """A new generated reader of this image and its section reader."""
        plan = self._plan
        if self.legacy_bits is None:
            mask = (1 << len(self.indexes)) - 1
        else:
            mask = sum(1 << bit for bit in self.legacy_bits if bit is not None)
        return image_readers(
            self.keys,
            tuple(plan.layouts[i] for i in self.indexes),
            tuple(plan.decoders[i] for i in self.indexes),
            self.null_bytes,
            mask,
            self.decode,
        )

    def writer(self, rows: int) -> ImageWriter:
        """The fastest way to write this image, for about ``rows`` more rows: the plain
        :meth:`write` until the plan has written :data:`GENERATE_AFTER` rows, then a
        generated writer that gives the very same bytes (or errors)."""
        writer = self._writer
        if writer is not None:
            return writer
        self._written += rows
        if self._written < GENERATE_AFTER or self.legacy_bits is not None:
            return self.write
        writer = self._writer = self.generated_writer()
        return writer

    def generated_writer(self) -> ImageWriter:
        """A new generated writer of this image (see :mod:`~binlogkit.binlog.rows.image_writer`)."""
        plan = self._plan
        if self.legacy_bits is not None:
            raise EncodeError("pre-GA row images are written by the plain encoder only")
        return image_writer(
            self.keys,
            tuple(plan.packings[i] for i in self.indexes),
            tuple(plan.encoders[i] for i in self.indexes),
            self.null_bytes,
            self.pad_mask,
            self.write,
        )

    def write(self, row: Mapping[str, Any], out: bytearray, pad: bool) -> None:
        """:meth:`encode` as an :data:`ImageWriter` (a whole image, no JSON diffs)."""
        self.encode(row, out, pad=pad)

    def decode(self, buf: bytes, pos: int) -> tuple[Row, int]:
        """One image at ``buf[pos:]``: the row and the offset after it."""
        end = pos + self.null_bytes
        nulls = int.from_bytes(buf[pos:end], "little")
        pos = end
        row: Row = {}
        if self.legacy_bits is not None:
            for (key, dec), bit in zip(self.items, self.legacy_bits, strict=True):
                if bit is not None and nulls >> bit & 1:
                    row[key] = None
                else:
                    row[key], pos = dec(buf, pos)
        elif not nulls:
            for key, dec in self.items:
                row[key], pos = dec(buf, pos)
        else:
            for key, dec in self.items:
                if nulls & 1:
                    row[key] = None
                else:
                    row[key], pos = dec(buf, pos)
                nulls >>= 1
        return row, pos

    def decode_partial(self, buf: bytes, pos: int, partial: int) -> tuple[Row, Row, int]:
        """An after image whose JSON columns with a bit in ``partial`` hold diffs."""
        diff_slots = {n for n, ordinal in self.json_slots if partial >> ordinal & 1}
        if not diff_slots:
            whole, pos = self.decode(buf, pos)
            return whole, {}, pos
        end = pos + self.null_bytes
        nulls = int.from_bytes(buf[pos:end], "little")
        pos = end
        row: Row = {}
        diffs: Row = {}
        for n, (key, dec) in enumerate(self.items):
            if nulls >> n & 1:
                row[key] = None
            elif n in diff_slots:
                row[key], pos = read_json_diff_vector(buf, pos)
                diffs[key] = row[key]
            else:
                row[key], pos = dec(buf, pos)
        return row, diffs, pos

    def padding(self, buf: bytes, pos: int) -> bool | None:
        """Whether the image at ``pos`` sets its NULL bitmap's unused bits (None: it has none)."""
        if not self.pad_mask:
            return None
        nulls = int.from_bytes(buf[pos : pos + self.null_bytes], "little")
        return nulls & self.pad_mask == self.pad_mask

    def encode(
        self,
        row: Mapping[str, Any],
        out: bytearray,
        diffs: Mapping[str, Any] = {},
        pad: bool = False,
    ) -> None:
        """Append the image of ``row`` (which must have exactly this image's keys).

        ``pad`` sets the unused bits of the NULL bitmap, as MySQL 5.x and MariaDB
        do (MySQL 8 clears them); pre-GA record NULL bytes always have them set.
        """
        if len(row) != len(self.keys):
            _missing_or_extra(self.keys, row)
        items = self._enc_items
        if items is None:
            enc = self._plan.encoders
            items = self._enc_items = tuple((self._plan.keys[i], enc[i]) for i in self.indexes)
        start = len(out)
        out += bytes(self.null_bytes)  # filled in below
        nulls = 0
        bits = self.legacy_bits
        try:
            if bits is None and not diffs:
                bit = 1
                for key, enc_one in items:
                    value = row[key]
                    if value is None:
                        nulls |= bit
                    else:
                        enc_one(value, out)
                    bit <<= 1
            else:
                for n, (key, enc_one) in enumerate(items):
                    value = row[key]
                    if value is None:
                        nbit = n if bits is None else bits[n]
                        if nbit is None:
                            raise EncodeError(f"column {key} is NOT NULL in the table map")
                        nulls |= 1 << nbit
                    elif key in diffs:
                        write_json_diff_vector(diffs[key], out)
                    else:
                        enc_one(value, out)
        except KeyError:
            if set(row) != set(self.keys):
                _missing_or_extra(self.keys, row)
            raise
        if bits is not None:
            nulls |= 1 | self.pad_mask
        elif pad:
            nulls |= self.pad_mask
        out[start : start + self.null_bytes] = nulls.to_bytes(self.null_bytes, "little")


def _missing_or_extra(keys: Sequence[str], row: Mapping[str, Any]) -> NoReturn:
    missing = [k for k in keys if k not in row]
    extra = [k for k in row if k not in keys]
    raise EncodeError(
        f"row does not match the logged columns: missing {missing or 'none'}, "
        f"not logged {extra or 'none'}"
    )


class RowPlan:
    """Everything needed to read and write the rows of one table map, for one set of options."""

    __slots__ = (
        "_encoders",
        "_images",
        "_layouts",
        "_packings",
        "columns",
        "decoders",
        "json_count",
        "json_ordinal",
        "keys",
        "options",
        "table",
    )

    def __init__(self, table: Table, options: DecodeOptions) -> None:
        self.table = table
        self.options = options
        self.columns: tuple[ColumnInfo, ...] = table.columns
        self.keys = tuple(col.key for col in self.columns)
        self.decoders: tuple[ValueDecoder, ...] = tuple(
            _codec(col).decoder(col, options) for col in self.columns
        )
        self._encoders: tuple[ValueEncoder, ...] | None = None
        self._layouts: tuple[ValueLayout | None, ...] | None = None
        self._packings: tuple[ValuePacking | None, ...] | None = None
        ordinal = []
        count = 0
        for col in self.columns:
            if col.binlog_type == ColumnType.JSON:
                ordinal.append(count)
                count += 1
            else:
                ordinal.append(-1)
        self.json_ordinal = tuple(ordinal)
        self.json_count = count
        self._images: dict[tuple[bytes, int, bool], ImagePlan] = {}

    @property
    def layouts(self) -> tuple[ValueLayout | None, ...]:
        """Each column's value layout, for the generated readers (None: call its decoder)."""
        if self._layouts is None:
            self._layouts = tuple(_codec(c).layout(c, self.options) for c in self.columns)
        return self._layouts

    @property
    def packings(self) -> tuple[ValuePacking | None, ...]:
        """Each column's value packing, for the generated writers (None: call its encoder)."""
        if self._packings is None:
            self._packings = tuple(_codec(c).packing(c, self.options) for c in self.columns)
        return self._packings

    @property
    def encoders(self) -> tuple[ValueEncoder, ...]:
        if self._encoders is None:
            self._encoders = tuple(_codec(c).encoder(c, self.options) for c in self.columns)
        return self._encoders

    def image(self, present: bytes, width: int, legacy: bool = False) -> ImagePlan:
        """The image plan for a columns-present bitmap of ``width`` columns."""
        key = (present, width, legacy)
        plan = self._images.get(key)
        if plan is None:
            if width > len(self.columns):
                raise DecodeError(
                    f"rows event has {width} columns, table map of "
                    f"{self.table.qualified_name} has {len(self.columns)}"
                )
            plan = self._images[key] = ImagePlan(self, _bits(present, width), legacy)
        return plan

    # --- whole rows sections -------------------------------------------------------------------

    def decode_rows(
        self,
        data: bytes,
        width: int,
        before: bytes | None,
        after: bytes | None,
        partial: bool = False,
        legacy: bool = False,
    ) -> tuple[RowChange, ...]:
        """Every row of a rows section; ``before``/``after`` are the present bitmaps it has."""
        if type(data) is not bytes:
            data = bytes(data)  # the readers slice values out of bytes
        end = len(data)
        pos = 0
        out: list[RowChange] = []
        append = out.append
        new_change = _new_change
        images = self._images
        bi = ai = None
        if before is not None:
            bi = images.get((before, width, legacy)) or self.image(before, width, legacy)
        if after is not None:
            ai = images.get((after, width, legacy)) or self.image(after, width, legacy)
        if data and not partial and not (bi and bi.null_bytes) and not (ai and ai.null_bytes):
            raise DecodeError("rows data for images that carry no column")  # would never end
        # A rough row count, for when to generate readers (a small row takes ~16 bytes).
        guess = end // 16 + 1
        if ai is None:
            assert bi is not None
            decode = bi._reader or bi.reader(guess)
            if bi._read_all is not None:
                pos = bi._read_all(data, pos, end, new_change, False, out)
            while pos < end:
                row, pos = decode(data, pos)
                append(new_change(row, None))
        elif bi is None:
            decode = ai._reader or ai.reader(guess)
            if ai._read_all is not None:
                pos = ai._read_all(data, pos, end, new_change, True, out)
            while pos < end:
                row, pos = decode(data, pos)
                append(new_change(None, row))
        elif not partial:
            decode_old = bi._reader or bi.reader(guess)
            decode_new = ai._reader or ai.reader(guess)
            while pos < end:
                old, pos = decode_old(data, pos)
                new, pos = decode_new(data, pos)
                append(new_change(old, new))
        else:
            decode = bi.decode
            while pos < end:
                old, pos = decode(data, pos)
                change, pos = self._decode_partial_after(data, pos, old, ai)
                append(change)
        if pos != end:
            raise DecodeError(f"last row image runs {pos - end} bytes past the rows data")
        return tuple(out)

    def _decode_partial_after(
        self, data: bytes, pos: int, old: Row, image: ImagePlan
    ) -> tuple[PartialRowChange, int]:
        """The shared image and after image of one PARTIAL_UPDATE_ROWS row."""
        options, pos = _read_packed(data, pos)
        partial = 0
        if options & PARTIAL_JSON_UPDATES:
            nbytes = (self.json_count + 7) // 8
            partial = int.from_bytes(data[pos : pos + nbytes], "little")
            pos += nbytes
        new, diffs, pos = image.decode_partial(data, pos, partial)
        if diffs and not self.options.raw_values:
            for key, diff in diffs.items():
                base = old.get(key)
                if base is not None:
                    new[key] = apply_json_diffs(base, diff)
        return PartialRowChange(old, new, options, diffs), pos

    def encode_rows(
        self,
        rows: Iterable[RowChange],
        width: int,
        before: bytes | None,
        after: bytes | None,
        *,
        partial: bool = False,
        legacy: bool = False,
        pad: bool = False,
    ) -> bytes:
        """The rows section for ``rows``: the mirror of :meth:`decode_rows`.

        ``pad`` sets the unused bits of the NULL bitmaps (see :meth:`null_padding`).
        """
        out = bytearray()
        if not isinstance(rows, Sequence):
            rows = list(rows)
        bi = None if before is None else self.image(before, width, legacy)
        ai = None if after is None else self.image(after, width, legacy)
        write_old = None if bi is None else bi.writer(len(rows))
        write_new = None if ai is None or partial else ai.writer(len(rows))
        for change in rows:
            if write_old is not None:
                if change.before is None:
                    raise EncodeError("this rows event needs a before image for every row")
                write_old(change.before, out, pad)
            if ai is not None:
                if change.after is None:
                    raise EncodeError("this rows event needs an after image for every row")
                if write_new is not None:
                    write_new(change.after, out, pad)
                else:
                    self._encode_shared(change, out)
                    diffs = change.diffs if isinstance(change, PartialRowChange) else {}
                    ai.encode(change.after, out, diffs, pad)
        return bytes(out)

    def null_padding(
        self,
        data: bytes,
        width: int,
        before: bytes | None,
        after: bytes | None,
        *,
        partial: bool = False,
    ) -> bool:
        """Whether a rows section sets the unused bits of its NULL bitmaps.

        MySQL 5.x and MariaDB set them, MySQL 8 clears them; the first image
        that has such bits tells (False when none has).
        """
        pos = 0
        images = [self.image(bitmap, width) for bitmap in (before, after) if bitmap is not None]
        for n, image in enumerate(images):
            if pos >= len(data):
                break
            pad = image.padding(data, pos)
            if pad is not None:
                return pad
            if n + 1 < len(images):
                _, pos = image.decode(data, pos)
                if partial:
                    options, pos = _read_packed(data, pos)
                    if options & PARTIAL_JSON_UPDATES:
                        pos += (self.json_count + 7) // 8
        return False

    def _encode_shared(self, change: RowChange, out: bytearray) -> None:
        options = change.value_options if isinstance(change, PartialRowChange) else 0
        diffs = change.diffs if isinstance(change, PartialRowChange) else {}
        _write_packed(options, out)
        if options & PARTIAL_JSON_UPDATES:
            bits = 0
            for key, ordinal in zip(self.keys, self.json_ordinal, strict=True):
                if ordinal >= 0 and key in diffs:
                    bits |= 1 << ordinal
            out += bits.to_bytes((self.json_count + 7) // 8, "little")
        elif diffs:
            raise EncodeError("JSON diffs need value_options with PARTIAL_JSON_UPDATES")


def _codec(col: ColumnInfo) -> Any:
    codec = COLUMN_CODECS.get(col.type)
    if codec is None:
        raise DecodeError(f"no codec for column {col.key} of type {col.type}")
    return codec
