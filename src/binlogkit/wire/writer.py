"""The mirror of :class:`~binlogkit.wire.reader.ByteReader`: appends to a bytearray."""

from __future__ import annotations

import struct

from binlogkit.errors import EncodeError

_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")


class ByteWriter:
    """Appends little-endian integers, strings and packed lengths; ``getvalue()`` ends it."""

    __slots__ = ("buf",)

    def __init__(self) -> None:
        self.buf = bytearray()

    def __len__(self) -> int:
        return len(self.buf)

    def getvalue(self) -> bytes:
        return bytes(self.buf)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.buf += data

    def uint(self, value: int, n: int) -> None:
        """An unsigned little-endian integer of ``n`` bytes."""
        try:
            self.buf += value.to_bytes(n, "little")
        except OverflowError:
            raise EncodeError(f"{value} does not fit in {n} unsigned bytes") from None

    def sint(self, value: int, n: int) -> None:
        """A two's-complement little-endian integer of ``n`` bytes."""
        try:
            self.buf += value.to_bytes(n, "little", signed=True)
        except OverflowError:
            raise EncodeError(f"{value} does not fit in {n} signed bytes") from None

    def uint_be(self, value: int, n: int) -> None:
        try:
            self.buf += value.to_bytes(n, "big")
        except OverflowError:
            raise EncodeError(f"{value} does not fit in {n} unsigned bytes") from None

    def u8(self, value: int) -> None:
        self.uint(value, 1)

    def u16(self, value: int) -> None:
        self.uint(value, 2)

    def u24(self, value: int) -> None:
        self.uint(value, 3)

    def u32(self, value: int) -> None:
        self.uint(value, 4)

    def u48(self, value: int) -> None:
        self.uint(value, 6)

    def u64(self, value: int) -> None:
        self.uint(value, 8)

    def f32(self, value: float) -> None:
        self.buf += _F32.pack(value)

    def f64(self, value: float) -> None:
        self.buf += _F64.pack(value)

    def packed_int(self, value: int | None) -> None:
        """A length-encoded integer (``None`` writes the NULL marker)."""
        if value is None:
            self.buf.append(0xFB)
        elif value < 0xFB:
            self.buf.append(value)
        elif value <= 0xFFFF:
            self.buf.append(0xFC)
            self.uint(value, 2)
        elif value <= 0xFFFFFF:
            self.buf.append(0xFD)
            self.uint(value, 3)
        else:
            self.buf.append(0xFE)
            self.uint(value, 8)

    def packed_bytes(self, data: bytes) -> None:
        self.packed_int(len(data))
        self.buf += data

    def cstring(self, data: bytes) -> None:
        if b"\0" in data:
            raise EncodeError("a NUL-terminated string cannot contain NUL")
        self.buf += data
        self.buf.append(0)
