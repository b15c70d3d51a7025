"""MariaDB's COMPRESSED columns (10.3+): VARCHAR and BLOB/TEXT compressed with zlib.

They are logged with their own type codes, 141 (VARCHAR_COMPRESSED, metadata as
VARCHAR: the maximum length plus one) and 140 (BLOB_COMPRESSED, metadata as
BLOB), and lengths as those types. The stored bytes (MariaDB's field_comp.cc)
are empty for an empty value; otherwise a header byte, then:

- header 0x00: the value itself, uncompressed;
- header 0x80 | n (n = 1-4) | 0x08 for a raw deflate stream: the value's
  length in n big-endian bytes, then the zlib (or raw deflate) stream.

Values are :class:`~binlogkit.binlog.rows.types.values.Compressed`, holding
the uncompressed value (``str`` in a known charset, else ``bytes``, as for
VARCHAR and TEXT) and the stored bytes, which the encoder writes back
unchanged; it compresses a plain ``str`` or ``bytes`` itself. Raw mode gives
the stored bytes.
"""

from __future__ import annotations

import zlib
from typing import Any, ClassVar

from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.mariadb_compression import declared_length
from binlogkit.binlog.rows.columns import (
    ColumnCodec,
    ColumnInfo,
    ValueDecoder,
    ValueEncoder,
    ValuePacking,
    column_codec,
)
from binlogkit.binlog.rows.types._base import as_bytes, packing_encoder, prefixed_decoder
from binlogkit.binlog.rows.types.strings import text_converter, text_to_bytes
from binlogkit.binlog.rows.types.values import Compressed
from binlogkit.errors import DecodeError


def uncompress(stored: bytes) -> bytes:
    """The value MariaDB's compressed-column bytes stand for."""
    if not stored:
        return b""
    header = stored[0]
    if header == 0:
        return bytes(stored[1:])
    length_size = header & 0x07
    if not header & 0x80 or header & 0x70 or not 1 <= length_size <= 4:
        raise DecodeError(f"unknown compressed column header {header:#04x}")
    length = declared_length(stored[1 : 1 + length_size], "compressed column value")
    inflater = zlib.decompressobj(-zlib.MAX_WBITS if header & 0x08 else zlib.MAX_WBITS)
    try:
        data = inflater.decompress(stored[1 + length_size :], length + 1)
    except zlib.error as exc:
        raise DecodeError(f"compressed column value does not inflate: {exc}") from None
    if len(data) != length or not inflater.eof:
        raise DecodeError(
            f"compressed column value inflates to {len(data)} bytes, its header says {length}"
        )
    return data


COMPRESSION_THRESHOLD = 100
"""column_compression_threshold's default: shorter values are stored as they are."""


def compress(data: bytes) -> bytes:
    """The stored form of ``data`` as MariaDB writes it by default.

    Values of :data:`COMPRESSION_THRESHOLD` bytes or more: raw deflate at level
    6 (column_compression_zlib_level=6, column_compression_zlib_wrap=OFF,
    field_comp.cc ``compress_zlib``) behind the header and the length, kept
    only when it is shorter than the value: the server gives deflate a buffer
    of the value's length less the header and length bytes, and a stream that
    just fills it does not end (Z_OK, not Z_STREAM_END), so the value is stored
    as it is. Shorter values, and those, are the plain value after a 0x00 header.
    """
    if not data:
        return b""
    if len(data) >= COMPRESSION_THRESHOLD:
        length_size = (len(data).bit_length() + 7) // 8
        deflater = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
        packed = deflater.compress(data) + deflater.flush()
        if 1 + length_size + len(packed) < len(data):
            return bytes([0x88 | length_size]) + len(data).to_bytes(length_size, "big") + packed
    return b"\x00" + data


class _CompressedCodec(ColumnCodec):
    @classmethod
    def prefix_size(cls, col: ColumnInfo) -> int:
        raise NotImplementedError

    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        prefix = cls.prefix_size(col)
        name = ColumnType(col.type).name
        if options.raw_values:
            return prefixed_decoder(col, prefix, name)
        to_value = text_converter(col, options)

        def convert(stored: bytes) -> Compressed:
            stored = bytes(stored)
            try:
                data = uncompress(stored)
            except DecodeError as exc:
                raise DecodeError(f"column {col.key}: {exc.message}") from None
            return Compressed(to_value(data), stored)

        return prefixed_decoder(col, prefix, name, convert)

    @classmethod
    def packing(cls, col: ColumnInfo, options: DecodeOptions) -> ValuePacking:
        prefix = cls.prefix_size(col)
        name = ColumnType(col.type).name
        if options.raw_values:
            return ValuePacking(name, prefix=prefix, to_field=as_bytes(col, f"raw {name}"))
        plain = text_to_bytes(col, options)

        def to_bytes(value: Any) -> bytes:
            if isinstance(value, Compressed):
                return value.stored
            return compress(plain(value))

        return ValuePacking(name, prefix=prefix, to_field=to_bytes)

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        return packing_encoder(col, cls.packing(col, options))


@column_codec(ColumnType.VARCHAR_COMPRESSED)
class VarcharCompressedCodec(_CompressedCodec):
    meta_length: ClassVar[int] = 2

    @classmethod
    def prefix_size(cls, col: ColumnInfo) -> int:
        return 1 if col.meta < 256 else 2


@column_codec(ColumnType.BLOB_COMPRESSED)
class BlobCompressedCodec(_CompressedCodec):
    meta_length: ClassVar[int] = 1

    @classmethod
    def prefix_size(cls, col: ColumnInfo) -> int:
        return col.meta
