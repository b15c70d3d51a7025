"""MariaDB's compressed-event format (log_bin_compress): QUERY_COMPRESSED and compressed rows.

The compressed bytes are a header byte, the original length and a zlib
stream. The header byte has bit 7 set, the algorithm in bits 4-6 (0: zlib,
the only one defined) and the width of the big-endian original length
(1-4 bytes) in bits 0-2.

(MariaDB's COMPRESSED columns use a format of their own: see
:mod:`binlogkit.binlog.rows.types.compressed`.)
"""

from __future__ import annotations

import zlib

from binlogkit.binlog.constants import MAX_EVENT_SIZE
from binlogkit.errors import DecodeError, EncodeError

__all__ = ["compress", "declared_length", "uncompress"]


def declared_length(field: bytes, what: str) -> int:
    """The big-endian original length before a zlib stream; refused above any event's size."""
    length = int.from_bytes(field, "big")
    if length > MAX_EVENT_SIZE:
        raise DecodeError(
            f"{what} declares {length} bytes, more than an event can hold "
            f"({MAX_EVENT_SIZE}, the ceiling of max_allowed_packet)"
        )
    return length


def uncompress(data: bytes) -> bytes:
    """The original bytes of a compressed event part; :class:`DecodeError` when malformed."""
    if not data or data[0] & 0x80 == 0:
        raise DecodeError("compressed payload lacks its header byte")
    alg = (data[0] >> 4) & 0x07
    width = data[0] & 0x07
    if alg != 0:
        raise DecodeError(f"compressed payload uses unknown algorithm {alg}")
    if not 1 <= width <= 4 or len(data) < 1 + width:
        raise DecodeError(f"compressed payload has a bad length width {width}")
    length = declared_length(data[1 : 1 + width], "compressed payload")
    inflater = zlib.decompressobj()
    try:
        # Never inflate past the announced length (+1 to notice a longer stream).
        out = inflater.decompress(data[1 + width :], length + 1)
    except zlib.error as err:
        raise DecodeError(f"compressed payload does not inflate: {err}") from None
    if not inflater.eof and len(out) <= length:
        raise DecodeError("compressed payload is cut short")
    if len(out) != length:
        raise DecodeError(f"compressed payload inflates to {len(out)} bytes, header says {length}")
    return out


def compress(data: bytes) -> bytes:
    """Compress as MariaDB does (zlib's default level, shortest length width)."""
    width = max(1, (len(data).bit_length() + 7) // 8)
    if width > 4:
        raise EncodeError("payload too large for MariaDB compression")
    return bytes([0x80 | width]) + len(data).to_bytes(width, "big") + zlib.compress(data)
