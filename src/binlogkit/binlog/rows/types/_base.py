"""Building blocks the column codecs share: fixed-size and length-prefixed values.

Every decoder built here checks its bounds and raises :class:`DecodeError`
naming the column, instead of returning short data.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from binlogkit.binlog.rows.columns import (
    ColumnInfo,
    ValueDecoder,
    ValueEncoder,
    ValueLayout,
    ValuePacking,
)
from binlogkit.errors import DecodeError, EncodeError

_PREFIX_STRUCTS = {
    1: struct.Struct("<B"),
    2: struct.Struct("<H"),
    3: struct.Struct("<HB"),
    4: struct.Struct("<I"),
}


def truncated(col: ColumnInfo, what: str, need: int, buf: bytes, pos: int) -> DecodeError:
    """The error for a value that runs past the end of the row data."""
    return DecodeError(
        f"column {col.key}: {what} needs {need} bytes at row offset {pos}, "
        f"only {max(len(buf) - pos, 0)} left"
    )


def invalid(col: ColumnInfo, what: str) -> DecodeError:
    return DecodeError(f"column {col.key}: {what}")


def unencodable(col: ColumnInfo, value: Any, why: str) -> EncodeError:
    return EncodeError(f"column {col.key}: cannot encode {value!r}: {why}")


def fixed_decoder(
    col: ColumnInfo, fmt: struct.Struct, what: str, convert: Callable[[Any], Any] | None = None
) -> ValueDecoder:
    """A decoder for a one-field ``struct`` value, optionally converted."""
    unpack = fmt.unpack_from
    size = fmt.size

    if convert is None:

        def decode(buf: bytes, pos: int) -> tuple[Any, int]:
            try:
                return unpack(buf, pos)[0], pos + size
            except struct.error:
                raise truncated(col, what, size, buf, pos) from None

        return decode

    def decode_convert(buf: bytes, pos: int) -> tuple[Any, int]:
        try:
            raw = unpack(buf, pos)[0]
        except struct.error:
            raise truncated(col, what, size, buf, pos) from None
        return convert(raw), pos + size

    return decode_convert


def layout_decoder(col: ColumnInfo, layout: ValueLayout, what: str) -> ValueDecoder:
    """The decoder of a fixed-width layout: its field, bounds-checked, then its conversion."""
    return fixed_decoder(col, struct.Struct("<" + layout.fmt), what, layout.convert)


def fixed_encoder(col: ColumnInfo, fmt: struct.Struct, what: str) -> ValueEncoder:
    """The mirror of :func:`fixed_decoder` without conversion."""
    pack = fmt.pack

    def encode(value: Any, out: bytearray) -> None:
        try:
            out += pack(value)
        except (struct.error, TypeError, OverflowError) as exc:
            raise unencodable(col, value, f"not a valid {what} ({exc})") from None

    return encode


def sized_bytes_decoder(
    col: ColumnInfo, size: int, what: str, convert: Callable[[bytes], Any] = bytes
) -> ValueDecoder:
    """A decoder for ``size`` bytes, passed to ``convert``."""

    def decode(buf: bytes, pos: int) -> tuple[Any, int]:
        end = pos + size
        if end > len(buf):
            raise truncated(col, what, size, buf, pos)
        return convert(buf[pos:end]), end

    return decode


def prefixed_decoder(
    col: ColumnInfo, prefix: int, what: str, convert: Callable[[bytes], Any] = bytes
) -> ValueDecoder:
    """A decoder for a value led by its length in ``prefix`` (1-4) little-endian bytes."""
    if prefix not in _PREFIX_STRUCTS:
        raise invalid(col, f"{what} length prefix of {prefix} bytes (1-4 expected)")
    unpack = _PREFIX_STRUCTS[prefix].unpack_from

    if prefix == 1:  # the common case, without the length-reading call

        def decode_short(buf: bytes, pos: int) -> tuple[Any, int]:
            start = pos + 1
            try:
                end = start + buf[pos]
            except IndexError:
                raise truncated(col, f"{what} length", prefix, buf, pos) from None
            if end > len(buf):
                raise truncated(col, what, end - start, buf, start)
            return convert(buf[start:end]), end

        return decode_short

    if prefix == 3:

        def read_length(buf: bytes, pos: int) -> int:
            low, high = unpack(buf, pos)
            return int(low | high << 16)

    else:

        def read_length(buf: bytes, pos: int) -> int:
            return int(unpack(buf, pos)[0])

    def decode(buf: bytes, pos: int) -> tuple[Any, int]:
        try:
            n = read_length(buf, pos)
        except struct.error:
            raise truncated(col, f"{what} length", prefix, buf, pos) from None
        start = pos + prefix
        end = start + n
        if end > len(buf):
            raise truncated(col, what, n, buf, start)
        return convert(buf[start:end]), end

    return decode


def prefixed_encoder(
    col: ColumnInfo, prefix: int, what: str, to_bytes: Callable[[Any], bytes]
) -> ValueEncoder:
    """The mirror of :func:`prefixed_decoder`: ``to_bytes(value)`` led by its length."""
    limit = 1 << (8 * prefix)

    def encode(value: Any, out: bytearray) -> None:
        data = to_bytes(value)
        n = len(data)
        if n >= limit:
            raise unencodable(col, value, f"{n} bytes do not fit a {prefix}-byte {what} length")
        out += n.to_bytes(prefix, "little")
        out += data

    return encode


def as_bytes(col: ColumnInfo, what: str) -> Callable[[Any], bytes]:
    """A converter that accepts only bytes-like values."""

    def convert(value: Any) -> bytes:
        if isinstance(value, bytes | bytearray | memoryview):
            return bytes(value)
        raise unencodable(col, value, f"{what} takes bytes")

    return convert


def exact_bytes_encoder(col: ColumnInfo, size: int, what: str) -> ValueEncoder:
    """An encoder for raw values of a fixed-size type: exactly ``size`` bytes."""
    check = as_bytes(col, what)

    def encode(value: Any, out: bytearray) -> None:
        data = check(value)
        if len(data) != size:
            raise unencodable(col, value, f"raw {what} takes exactly {size} bytes")
        out += data

    return encode


def packing_encoder(col: ColumnInfo, packing: ValuePacking) -> ValueEncoder:
    """The encoder that writes values as ``packing`` says (as the generated row encoders do)."""
    if packing.prefix:
        assert packing.to_field is not None
        return prefixed_encoder(col, packing.prefix, packing.what, packing.to_field)
    fmt = struct.Struct("<" + packing.fmt)
    to_field = packing.to_field
    if to_field is None:
        return fixed_encoder(col, fmt, packing.what)
    pack = fmt.pack

    def encode(value: Any, out: bytearray) -> None:
        field = to_field(value)
        try:
            out += pack(field)
        except (struct.error, TypeError, OverflowError) as exc:
            raise unencodable(col, value, f"not a valid {packing.what} ({exc})") from None

    return encode
