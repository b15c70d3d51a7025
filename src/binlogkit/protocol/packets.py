"""Packet framing: a 3-byte length and a sequence number before every payload.

A payload of ``0xFFFFFF`` bytes or more goes out as several packets: every one
but the last is exactly ``0xFFFFFF`` long, and a payload whose length is a
multiple of ``0xFFFFFF`` ends with an empty packet. :class:`PacketReader`
joins them back; :func:`write_packets` splits.
"""

from __future__ import annotations

import struct
from enum import Enum

from binlogkit.binlog.frozen import fast_constructor, frozen_dataclass
from binlogkit.errors import ProtocolError
from binlogkit.protocol.constants import MAX_PACKET_PAYLOAD

HEADER_LENGTH = 4
_HEADER = struct.Struct("<I")
"""A packet header as one number: the length in the low 3 bytes, the sequence number on top."""


class _NeedData(Enum):
    NEED_DATA = "NEED_DATA"

    def __repr__(self) -> str:
        return "NEED_DATA"


NEED_DATA = _NeedData.NEED_DATA
"""Returned by the readers and state machines: feed more bytes first."""

NeedData = _NeedData


@frozen_dataclass
class Packet:
    """One logical packet: its payload, the sequence number of its first part, and its parts."""

    seq: int
    payload: bytes
    parts: int = 1

    @property
    def last_seq(self) -> int:
        """The sequence number of the last part (the next packet uses this + 1)."""
        return (self.seq + self.parts - 1) & 0xFF


_new_packet = fast_constructor(Packet)


class PacketReader:
    """Cuts a byte stream into packets, joining the parts of payloads over 16 MiB.

    ``receive_data(b"")`` says the stream ended: :attr:`eof` becomes true and
    :meth:`next_packet` returns what is still buffered, then NEED_DATA forever
    (callers check :attr:`eof` and :attr:`pending` to tell a clean end from a cut).
    """

    __slots__ = ("_buf", "_first_seq", "_next_part_seq", "_parts", "eof")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._parts: list[bytes] = []
        self._first_seq = 0
        self._next_part_seq = 0
        self.eof = False

    @property
    def pending(self) -> int:
        """Bytes received but not yet returned in a packet."""
        return len(self._buf) + sum(len(p) for p in self._parts)

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        if self.eof and data:
            raise ProtocolError("data received after the end of the stream")
        if not data:
            self.eof = True
            return
        self._buf += data

    def head(self, count: int) -> bytes:
        """The first ``count`` bytes received and not yet returned (fewer if not there yet)."""
        return bytes(self._buf[:count])

    @property
    def ready(self) -> bool:
        """A whole packet is buffered, or the stream has ended: :meth:`next_packet` will not
        answer NEED_DATA for want of bytes."""
        buf = self._buf
        if len(buf) < HEADER_LENGTH:
            return self.eof
        return self.eof or len(buf) >= HEADER_LENGTH + (buf[0] | buf[1] << 8 | buf[2] << 16)

    def payloads(self, seq: int, first: int, skip: int) -> tuple[list[bytes], int]:
        """Cut a run of small packets at once: the payloads of the whole packets buffered next.

        Takes packets while each has the sequence number ``seq`` (counting on),
        fits in one part and starts with the byte ``first``; gives their
        payloads without the first ``skip`` bytes, and the sequence number
        after them. Stops at any other packet, left for :meth:`next_packet`.
        """
        buf = self._buf
        avail = len(buf)
        if self._parts or avail <= HEADER_LENGTH:
            return [], seq
        if avail < HEADER_LENGTH + (buf[0] | buf[1] << 8 | buf[2] << 16):
            return [], seq  # not even one whole packet: copy nothing
        data = bytes(buf)  # one copy; slicing bytes is cheaper per packet than a view
        out: list[bytes] = []
        append = out.append
        unpack = _HEADER.unpack_from
        pos = 0
        while avail - pos > HEADER_LENGTH:
            word = unpack(data, pos)[0]
            length = word & 0xFFFFFF
            end = pos + HEADER_LENGTH + length
            if (
                end > avail
                or word >> 24 != seq
                or not skip <= length < MAX_PACKET_PAYLOAD
                or not length
                or data[pos + HEADER_LENGTH] != first
            ):
                break
            append(data[pos + HEADER_LENGTH + skip : end])
            seq = (seq + 1) & 0xFF
            pos = end
        del buf[:pos]
        return out, seq

    def next_packet(self) -> Packet | _NeedData:
        """The next whole packet, or NEED_DATA."""
        buf = self._buf
        while len(buf) >= HEADER_LENGTH:
            length = buf[0] | buf[1] << 8 | buf[2] << 16
            end = HEADER_LENGTH + length
            if len(buf) < end:
                return NEED_DATA
            seq = buf[3]
            part = bytes(buf[HEADER_LENGTH:end])
            del buf[:end]  # cheap: a bytearray drops its head without moving the rest
            if length < MAX_PACKET_PAYLOAD and not self._parts:  # the usual one-part packet
                return _new_packet(seq, part, 1)
            if self._parts:
                if seq != self._next_part_seq:
                    raise ProtocolError(
                        f"packet continuation has sequence number {seq}, "
                        f"expected {self._next_part_seq}"
                    )
            else:
                self._first_seq = seq
            self._parts.append(part)
            self._next_part_seq = (seq + 1) & 0xFF
            if length < MAX_PACKET_PAYLOAD:
                parts, self._parts = self._parts, []
                payload = parts[0] if len(parts) == 1 else b"".join(parts)
                return Packet(self._first_seq, payload, len(parts))
        return NEED_DATA


def write_packets(payload: bytes | bytearray | memoryview, seq: int) -> tuple[bytes, int]:
    """The framed bytes of ``payload`` starting at sequence ``seq``, and the next sequence."""
    view = memoryview(payload)
    out = bytearray()
    seq &= 0xFF
    start = 0
    while True:
        chunk = view[start : start + MAX_PACKET_PAYLOAD]
        n = len(chunk)
        out += bytes((n & 0xFF, (n >> 8) & 0xFF, n >> 16, seq))
        out += chunk
        seq = (seq + 1) & 0xFF
        start += n
        if n < MAX_PACKET_PAYLOAD:
            return bytes(out), seq
