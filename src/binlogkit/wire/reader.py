"""A cursor over immutable bytes that never reads past its end."""

from __future__ import annotations

import struct

from binlogkit.errors import DecodeError

_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_I8 = struct.Struct("<b")
_I16 = struct.Struct("<h")
_I32 = struct.Struct("<i")
_I64 = struct.Struct("<q")
_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")


class ByteReader:
    """Reads little-endian integers, strings and packed lengths from ``buf[pos:end]``.

    Every read checks the bounds and raises :class:`DecodeError` naming the field
    and the body offset, instead of returning short data.
    """

    __slots__ = ("buf", "end", "pos")

    def __init__(self, buf: bytes | memoryview, pos: int = 0, end: int | None = None) -> None:
        self.buf = buf
        self.pos = pos
        self.end = len(buf) if end is None else end

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def at_end(self) -> bool:
        return self.pos >= self.end

    def need(self, n: int, what: str = "field") -> int:
        """Reserve ``n`` bytes and return their start offset."""
        start = self.pos
        if n < 0 or start + n > self.end:
            raise DecodeError(
                f"{what} needs {n} bytes at body offset {start}, only {self.end - start} left"
            )
        self.pos = start + n
        return start

    def skip(self, n: int, what: str = "field") -> None:
        self.need(n, what)

    def take(self, n: int, what: str = "field") -> bytes:
        start = self.need(n, what)
        return bytes(self.buf[start : start + n])

    def rest(self) -> bytes:
        start, self.pos = self.pos, self.end
        return bytes(self.buf[start : self.end])

    def u8(self, what: str = "u8") -> int:
        return self.buf[self.need(1, what)]

    def i8(self, what: str = "i8") -> int:
        return int(_I8.unpack_from(self.buf, self.need(1, what))[0])

    def u16(self, what: str = "u16") -> int:
        return int(_U16.unpack_from(self.buf, self.need(2, what))[0])

    def i16(self, what: str = "i16") -> int:
        return int(_I16.unpack_from(self.buf, self.need(2, what))[0])

    def u24(self, what: str = "u24") -> int:
        return self.uint(3, what)

    def u32(self, what: str = "u32") -> int:
        return int(_U32.unpack_from(self.buf, self.need(4, what))[0])

    def i32(self, what: str = "i32") -> int:
        return int(_I32.unpack_from(self.buf, self.need(4, what))[0])

    def u48(self, what: str = "u48") -> int:
        return self.uint(6, what)

    def u64(self, what: str = "u64") -> int:
        return int(_U64.unpack_from(self.buf, self.need(8, what))[0])

    def i64(self, what: str = "i64") -> int:
        return int(_I64.unpack_from(self.buf, self.need(8, what))[0])

    def f32(self, what: str = "f32") -> float:
        return float(_F32.unpack_from(self.buf, self.need(4, what))[0])

    def f64(self, what: str = "f64") -> float:
        return float(_F64.unpack_from(self.buf, self.need(8, what))[0])

    def uint(self, n: int, what: str = "uint") -> int:
        """An unsigned little-endian integer of ``n`` bytes."""
        start = self.need(n, what)
        return int.from_bytes(self.buf[start : start + n], "little")

    def uint_be(self, n: int, what: str = "uint") -> int:
        """An unsigned big-endian integer of ``n`` bytes."""
        start = self.need(n, what)
        return int.from_bytes(self.buf[start : start + n], "big")

    def packed_int(self, what: str = "packed integer") -> int | None:
        """A length-encoded integer; ``None`` for the NULL marker 0xfb."""
        first = self.u8(what)
        if first < 0xFB:
            return first
        if first == 0xFB:
            return None
        if first == 0xFC:
            return self.u16(what)
        if first == 0xFD:
            return self.u24(what)
        if first == 0xFE:
            return self.u64(what)
        raise DecodeError(f"{what}: invalid length prefix 0xff at body offset {self.pos - 1}")

    def packed_length(self, what: str = "length") -> int:
        """A length-encoded integer that must not be NULL."""
        value = self.packed_int(what)
        if value is None:
            raise DecodeError(f"{what}: unexpected NULL length at body offset {self.pos - 1}")
        return value

    def packed_bytes(self, what: str = "string") -> bytes:
        """A length-encoded string."""
        return self.take(self.packed_length(what), what)

    def cstring(self, what: str = "string") -> bytes:
        """Bytes up to (not including) the next NUL, which is consumed."""
        buf = self.buf
        start = self.pos
        if isinstance(buf, memoryview):
            stop = bytes(buf[start : self.end]).find(b"\0")
            stop = -1 if stop < 0 else start + stop
        else:
            stop = buf.find(b"\0", start, self.end)
        if stop < 0:
            raise DecodeError(f"{what}: no terminating NUL after body offset {start}")
        self.pos = stop + 1
        return bytes(buf[start:stop])

    def sub(self, n: int, what: str = "block") -> ByteReader:
        """A reader over the next ``n`` bytes, which this reader skips."""
        start = self.need(n, what)
        return ByteReader(self.buf, start, start + n)
