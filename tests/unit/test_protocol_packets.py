"""Packet framing: 3-byte length + sequence number; payloads of 16 MiB and more split.

Known answers from MySQL's protocol documentation ("MySQL Packets": a payload
of exactly 0xFFFFFF bytes is followed by an empty packet; COM_QUIT is
``01 00 00 00 01``).
"""

from __future__ import annotations

import random

import pytest

from binlogkit.errors import ProtocolError
from binlogkit.protocol.packets import NEED_DATA, Packet, PacketReader, write_packets

MAX = 0xFFFFFF


def read_all(data: bytes, chunks: list[int] | None = None) -> list[Packet]:
    reader = PacketReader()
    out: list[Packet] = []
    pos = 0
    sizes = iter(chunks or [len(data)])
    while pos < len(data):
        size = next(sizes, len(data) - pos)
        reader.receive_data(data[pos : pos + size])
        pos += size
        while (packet := reader.next_packet()) is not NEED_DATA:
            assert isinstance(packet, Packet)
            out.append(packet)
    assert reader.pending == 0
    return out


def random_chunks(total: int, seed: int, largest: int = 100) -> list[int]:
    rng = random.Random(seed)
    sizes = []
    while total > 0:
        size = min(total, rng.randint(1, largest))
        sizes.append(size)
        total -= size
    return sizes


def test_com_quit_known_answer() -> None:
    data, nxt = write_packets(b"\x01", 0)
    assert data == bytes.fromhex("0100000001")
    assert nxt == 1
    assert read_all(data) == [Packet(0, b"\x01")]


def test_empty_payload_and_sequence_wrap() -> None:
    assert write_packets(b"", 255) == (bytes.fromhex("000000ff"), 0)


def test_small_packets_byte_by_byte() -> None:
    stream = b"".join(write_packets(p, s)[0] for s, p in enumerate([b"a", b"", b"xyz" * 100]))
    expected = [Packet(0, b"a"), Packet(1, b""), Packet(2, b"xyz" * 100)]
    assert read_all(stream, [1] * len(stream)) == expected
    for seed in range(5):
        assert read_all(stream, random_chunks(len(stream), seed)) == expected


def test_payload_over_16_mib_both_directions() -> None:
    payload = bytes(range(256)) * (MAX // 256 + 1) + b"tail-bytes"
    assert len(payload) > MAX
    data, nxt = write_packets(payload, 7)
    assert data[:4] == b"\xff\xff\xff\x07"
    rest = len(payload) - MAX
    assert data[4 + MAX : 8 + MAX] == bytes((rest, 0, 0, 8))
    assert len(data) == len(payload) + 8 and nxt == 9
    packets = read_all(data, random_chunks(len(data), 1, largest=1 << 20))
    assert packets == [Packet(7, payload, 2)]
    assert packets[0].last_seq == 8


def test_payload_of_exactly_max_ends_with_empty_packet() -> None:
    payload = b"\x00" * MAX
    data, nxt = write_packets(payload, 0)
    assert data[-4:] == b"\x00\x00\x00\x01" and nxt == 2
    follow, _ = write_packets(b"next", nxt)
    assert read_all(data + follow) == [Packet(0, payload, 2), Packet(2, b"next")]


def test_continuation_with_wrong_sequence_is_an_error() -> None:
    first = b"\xff\xff\xff\x00" + b"\x00" * MAX
    reader = PacketReader()
    reader.receive_data(first + b"\x01\x00\x00\x05x")
    with pytest.raises(ProtocolError, match="sequence number 5"):
        reader.next_packet()


def test_end_of_stream_mid_packet() -> None:
    reader = PacketReader()
    reader.receive_data(b"\x05\x00\x00\x00ab")
    reader.receive_data(b"")
    assert reader.next_packet() is NEED_DATA
    assert reader.eof and reader.pending == 6
    with pytest.raises(ProtocolError):
        reader.receive_data(b"more")
