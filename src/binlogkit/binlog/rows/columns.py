"""Column types: what a table map says about a column, and the registry of value codecs.

Each column type has one :class:`ColumnCodec` subclass, registered with
:func:`column_codec`, that knows three things:

- its table-map metadata: how many bytes, and what they mean (``read_meta`` /
  ``write_meta``);
- how to decode one value from a row image (``decoder``), chosen once per
  column when a table map's row plan is built, never per row;
- how to encode a value back (``encoder``), the exact mirror;
- optionally, the value's :class:`ValueLayout` (``layout``), which lets the
  generated row decoders of :mod:`~binlogkit.binlog.rows.codegen` read it
  inline, fused with its fixed-width neighbours, instead of calling the decoder;
- optionally, its :class:`ValuePacking` (``packing``), the same for the
  generated row encoders of :mod:`~binlogkit.binlog.rows.image_writer` (the
  codec's encoder is then built from it too, so both write the same bytes).

A value decoder is ``fn(buf, pos) -> (value, next_pos)``; an encoder is
``fn(value, out: bytearray) -> None``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.wire import ByteReader, ByteWriter

ValueDecoder = Callable[[bytes, int], tuple[Any, int]]
ValueEncoder = Callable[[Any, bytearray], None]


@frozen_dataclass
class DecimalForm:
    """A NEWDECIMAL value's digit groups, most significant first: each one's bytes and
    decimal digits, and the scale. The generated readers convert such a value in place."""

    byte_sizes: tuple[int, ...]
    digits: tuple[int, ...]
    scale: int


@frozen_dataclass
class DateTime2Form:
    """A DATETIME2 value with ``fraction_bytes`` (0-3) bytes of fraction, converted in place."""

    fraction_bytes: int


@frozen_dataclass
class ValueLayout:
    """Where a column's value lies in a row image, for the generated row decoders.

    Either fixed-width: ``fmt`` is the :mod:`struct` code of the value as one
    field of a little-endian struct (``"i"``, ``"d"``, ``"6s"``); or
    length-prefixed (``fmt`` empty): ``prefix`` (1-4) little-endian bytes of
    length, then that many bytes. ``convert`` turns the field (or the bytes)
    into the value exactly as the column's decoder would, or raises, and the
    row is then left to the decoders; None means the field is the value.
    ``form``, when set, lets the generated readers write that conversion out
    in place of the call (giving the very same values).
    """

    fmt: str = ""
    prefix: int = 0
    convert: Callable[[Any], Any] | None = None
    form: DecimalForm | DateTime2Form | None = None


@frozen_dataclass
class ValuePacking:
    """How a column's value is written, for its encoder and the generated row encoders.

    Either one field of a little-endian struct: ``fmt`` its :mod:`struct` code,
    ``to_field`` turning the value into the field (None: the value is the
    field); or length-prefixed (``fmt`` empty): ``prefix`` (1-4) little-endian
    bytes of length, then the bytes ``to_field`` gives. ``to_field`` raises
    :class:`~binlogkit.errors.EncodeError` naming the column for a value the
    column cannot hold; ``what`` names the type in other errors.
    """

    what: str
    fmt: str = ""
    prefix: int = 0
    to_field: Callable[[Any], Any] | None = None


@frozen_dataclass
class ColumnInfo:
    """Everything known about one column of a table map.

    ``type`` is the type code as the rows data is laid out (for ENUM and SET
    columns logged as STRING this is ENUM/SET, and ``binlog_type`` keeps the
    code the table map wrote). ``meta`` is the parsed metadata (its meaning
    depends on the type). The optional fields come from the table map's
    optional metadata and are None when the binlog does not carry them.
    """

    index: int
    type: int
    binlog_type: int
    meta: int
    nullable: bool
    name: str | None = None
    unsigned: bool | None = None
    charset: int | None = None
    enum_values: tuple[bytes, ...] | None = None
    set_values: tuple[bytes, ...] | None = None
    geometry_type: int | None = None
    visible: bool | None = None
    primary_key: bool = False
    vector_dimensions: int | None = None
    """A MySQL VECTOR column's dimensions (from the optional metadata)."""

    @property
    def key(self) -> str:
        """The column's name, or a stable positional name (``@1``, ``@2`` ...) without one."""
        return self.name if self.name is not None else f"@{self.index + 1}"


class ColumnCodec:
    """Base of the per-type codecs; subclasses override what their type needs."""

    meta_length: ClassVar[int] = 0
    """Bytes of table-map metadata this type takes."""

    meta_big_endian: ClassVar[bool] = False
    """The metadata is a big-endian number (CHAR, ENUM/SET, DECIMAL: type or precision first)."""

    @classmethod
    def read_meta(cls, r: ByteReader) -> int:
        """Read this type's table-map metadata: ``meta_length`` bytes as one number."""
        if not cls.meta_length:
            return 0
        what = f"{cls.__name__} metadata"
        if cls.meta_big_endian:
            return r.uint_be(cls.meta_length, what)
        return r.uint(cls.meta_length, what)

    @classmethod
    def write_meta(cls, meta: int, w: ByteWriter) -> None:
        if not cls.meta_length:
            return
        if cls.meta_big_endian:
            w.uint_be(meta, cls.meta_length)
        else:
            w.uint(meta, cls.meta_length)

    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        raise NotImplementedError

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        raise NotImplementedError

    @classmethod
    def layout(cls, col: ColumnInfo, options: DecodeOptions) -> ValueLayout | None:
        """The value's layout, or None: generated row decoders then call :meth:`decoder`."""
        return None

    @classmethod
    def packing(cls, col: ColumnInfo, options: DecodeOptions) -> ValuePacking | None:
        """How the value is written, or None: generated row encoders then call :meth:`encoder`."""
        return None


COLUMN_CODECS: dict[int, type[ColumnCodec]] = {}
"""Column type code → codec; filled at import time by :func:`column_codec`."""


def column_codec(*types: ColumnType) -> Callable[[type[ColumnCodec]], type[ColumnCodec]]:
    """Class decorator: make the class the codec of the given column types."""

    def mark(cls: type[ColumnCodec]) -> type[ColumnCodec]:
        for code in types:
            if code in COLUMN_CODECS:
                raise RuntimeError(f"column type {code} registered twice")
            COLUMN_CODECS[code] = cls
        return cls

    return mark


def real_type(binlog_type: int, meta: int) -> int:
    """The type a column's row data is laid out in.

    ENUM and SET columns are logged as STRING with the real type in the high
    byte of the metadata; CHAR columns longer than 255 bytes borrow two bits of
    that byte for their length, so only a byte with both 0x30 bits set is a type.
    """
    if binlog_type == ColumnType.STRING:
        high = meta >> 8
        if high & 0x30 == 0x30 and high in (ColumnType.ENUM, ColumnType.SET):
            return high
    return binlog_type


# Register every column type's codec (the types package imports this module for
# ColumnCodec and column_codec, which exist by now).
from binlogkit.binlog.rows import types as _types  # noqa: E402, F401
