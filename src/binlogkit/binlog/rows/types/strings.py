"""CHAR, VARCHAR, BINARY, VARBINARY, and the BLOB and TEXT family.

Layouts: every value is its bytes led by their length, little-endian.

- VARCHAR / VARBINARY (type 15): the metadata (2 bytes, little-endian) is the
  column's maximum length in bytes; the length takes 1 byte below 256, else 2.
- CHAR / BINARY (type 254, STRING): the metadata is 2 bytes, the real type then
  the length, and for CHAR columns over 255 bytes the length's two high bits
  are folded, inverted, into bits 4-5 of the type byte. Same 1-or-2-byte rule.
  The server strips CHAR values of their trailing pad (spaces; NULs for
  BINARY) before logging them. CHAR values are given as logged, as SELECT
  gives them; BINARY values (collation 63 known from the table map) get their
  NULs back, padded to the column width as SELECT gives them, and lose them
  again when encoded. Raw mode gives what was logged.
- VAR_STRING (type 253): a pre-5.0 VARCHAR, logged like CHAR.
- BLOB / TEXT (types 249-252; servers log all four as 252): the metadata byte is
  the size of the length (1 TINY, 2 plain, 3 MEDIUM, 4 LONG).

Values: ``str`` decoded with the column's charset when the table map names it
(binlog_row_metadata=FULL) and Python has a codec for it (see
:mod:`~binlogkit.binlog.rows.charsets`); ``bytes`` for binary columns
(collation 63), when the charset is unknown or has no codec, and for a value
that is not valid in its charset (kept intact instead of guessed). Raw mode
gives ``bytes`` always. Encoders take ``str`` (encoded with the column's
charset) or ``bytes`` (written as they are).

MariaDB's INET6 and UUID columns are logged as BINARY(16) (INET4 as
BINARY(4)) and come out as the stored 16 (4) bytes; MariaDB's JSON is a LONGTEXT.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.rows.charsets import BINARY_COLLATION, TextCodec, python_codec, text_codec
from binlogkit.binlog.rows.columns import (
    ColumnCodec,
    ColumnInfo,
    ValueDecoder,
    ValueEncoder,
    ValueLayout,
    ValuePacking,
    column_codec,
)
from binlogkit.binlog.rows.types._base import packing_encoder, prefixed_decoder, unencodable


def string_max_length(meta: int) -> int:
    """The maximum byte length of a CHAR (STRING) column from its table-map metadata."""
    if meta >= 256:
        high, low = meta >> 8, meta & 0xFF
        if high & 0x30 != 0x30:
            return low | ((high & 0x30) ^ 0x30) << 4
        return low
    return meta


def strict_text_decoder(col: ColumnInfo, options: DecodeOptions) -> Callable[[bytes], str] | None:
    """bytes → ``str`` in the column's charset, raising on invalid bytes (None: keep bytes)."""
    codec = None if options.raw_values else text_codec(col.charset)
    if codec is None:
        return None
    if col.charset is not None and python_codec(col.charset) == "utf_8":
        return bytes.decode  # UTF-8 by default, and without partial's call overhead
    return codec.decode


def text_converter(col: ColumnInfo, options: DecodeOptions) -> Callable[[bytes], Any]:
    """bytes → the column's value: ``str`` in a known charset, else ``bytes``."""
    decode = strict_text_decoder(col, options)
    if decode is None:
        return bytes

    def convert(data: bytes) -> str | bytes:
        try:
            return decode(data)
        except UnicodeDecodeError:
            return bytes(data)

    return convert


_BYTES_LIKE = (bytes, bytearray, memoryview)


def text_to_bytes(col: ColumnInfo, options: DecodeOptions) -> Callable[[Any], bytes]:
    """The mirror of :func:`text_converter`: ``str`` in the column's charset, or ``bytes``."""
    codec: TextCodec | None = None if options.raw_values else text_codec(col.charset)
    encode = None if codec is None else codec.encode
    if col.charset is not None and encode is not None and python_codec(col.charset) == "utf_8":
        encode = str.encode  # UTF-8 by default, without the methodcaller's lookup

    def to_bytes(value: Any) -> bytes:
        if type(value) is not str or encode is None:  # str itself first: the common case
            if isinstance(value, _BYTES_LIKE):
                return bytes(value)
            if not isinstance(value, str) or encode is None:
                raise unencodable(
                    col, value, "a text column takes bytes, or str when its charset is known"
                )
        try:
            return encode(value)
        except UnicodeEncodeError as exc:
            assert codec is not None
            raise unencodable(col, value, f"not valid in {codec.charset}: {exc}") from None

    return to_bytes


class _StringCodec(ColumnCodec):
    """Shared by the string types: a length prefix whose size the subclass derives."""

    @classmethod
    def prefix_size(cls, col: ColumnInfo) -> int:
        raise NotImplementedError

    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        return prefixed_decoder(
            col, cls.prefix_size(col), ColumnType(col.type).name, text_converter(col, options)
        )

    @classmethod
    def layout(cls, col: ColumnInfo, options: DecodeOptions) -> ValueLayout | None:
        prefix = cls.prefix_size(col)
        if not 1 <= prefix <= 4:
            return None
        # Invalid text raises here; the row then goes to the decoder, which keeps the bytes.
        return ValueLayout(prefix=prefix, convert=strict_text_decoder(col, options))

    @classmethod
    def packing(cls, col: ColumnInfo, options: DecodeOptions) -> ValuePacking:
        name = ColumnType(col.type).name
        return ValuePacking(name, prefix=cls.prefix_size(col), to_field=text_to_bytes(col, options))

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        return packing_encoder(col, cls.packing(col, options))


@column_codec(ColumnType.VARCHAR)
class VarcharCodec(_StringCodec):
    meta_length: ClassVar[int] = 2

    @classmethod
    def prefix_size(cls, col: ColumnInfo) -> int:
        return 1 if col.meta < 256 else 2


@column_codec(ColumnType.STRING, ColumnType.VAR_STRING)
class CharCodec(_StringCodec):
    meta_length: ClassVar[int] = 2
    meta_big_endian: ClassVar[bool] = True

    @classmethod
    def prefix_size(cls, col: ColumnInfo) -> int:
        return 1 if string_max_length(col.meta) < 256 else 2

    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        if col.charset != BINARY_COLLATION or options.raw_values:
            return super().decoder(col, options)
        return prefixed_decoder(col, cls.prefix_size(col), "BINARY", cls._padded(col))

    @classmethod
    def layout(cls, col: ColumnInfo, options: DecodeOptions) -> ValueLayout | None:
        if col.charset != BINARY_COLLATION or options.raw_values:
            return super().layout(col, options)
        return ValueLayout(prefix=cls.prefix_size(col), convert=cls._padded(col))

    @staticmethod
    def _padded(col: ColumnInfo) -> Callable[[bytes], bytes]:
        """BINARY values get back the NULs the server stripped, up to the column width."""
        width = string_max_length(col.meta)

        def padded(data: bytes) -> bytes:
            return bytes(data).ljust(width, b"\0")

        return padded

    @classmethod
    def packing(cls, col: ColumnInfo, options: DecodeOptions) -> ValuePacking:
        if col.charset != BINARY_COLLATION or options.raw_values:
            return super().packing(col, options)
        to_bytes = text_to_bytes(col, options)

        def stripped(value: Any) -> bytes:
            return to_bytes(value).rstrip(b"\0")

        return ValuePacking("BINARY", prefix=cls.prefix_size(col), to_field=stripped)


@column_codec(ColumnType.TINY_BLOB, ColumnType.BLOB, ColumnType.MEDIUM_BLOB, ColumnType.LONG_BLOB)
class BlobCodec(_StringCodec):
    meta_length: ClassVar[int] = 1

    @classmethod
    def prefix_size(cls, col: ColumnInfo) -> int:
        return col.meta
