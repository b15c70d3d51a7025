"""The fast paths of the binlog stream: packets cut in runs, events decoded from their packets.

Packet bytes follow the protocol's framing (a 3-byte length, a sequence
number; a payload of 0xFFFFFF bytes continues in the next packet), event
bytes the binlog format (a 19-byte v4 header, the body, a CRC32). Each fast
path must give exactly what the plain path gives for the same bytes.
"""

from __future__ import annotations

import random
import struct
import zlib

import pytest
from test_protocol_client import FEEDERS, Feeder, connect_552, frame, whole

from binlogkit.binlog.constants import ChecksumAlg, EventType
from binlogkit.binlog.context import DecodeOptions, FormatContext
from binlogkit.binlog.decoder import BinlogDecoder
from binlogkit.binlog.events import SkippedEvent, XidEvent
from binlogkit.errors import ChecksumError, DecodeError, ProtocolError, ServerError
from binlogkit.protocol.client import ClientState
from binlogkit.protocol.packets import NEED_DATA, Packet, PacketReader, write_packets

MAX = 0xFFFFFF


def cut_all(data: bytes, sizes: list[int], first: int, skip: int) -> list[bytes]:
    """Feed ``data`` in pieces; cut runs with ``payloads`` and take the rest with next_packet."""
    reader = PacketReader()
    seq = 0
    out: list[bytes] = []
    pos = 0
    for size in sizes:
        reader.receive_data(data[pos : pos + size])
        pos += size
        while True:
            run, seq = reader.payloads(seq, first, skip)
            out += run
            if run:
                continue
            packet = reader.next_packet()
            if packet is NEED_DATA:
                break
            assert isinstance(packet, Packet)
            out.append(b"<other>" + packet.payload)
            seq = (packet.seq + packet.parts) & 0xFF
    assert pos == len(data) and reader.pending == 0
    return out


def random_sizes(total: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    sizes = []
    while total > 0:
        sizes.append(min(total, rng.randint(1, 40)))
        total -= sizes[-1]
    return sizes


def test_payloads_cut_runs_and_leave_other_packets() -> None:
    payloads = [b"\x00ev1", b"\x00", b"\x00" + b"x" * 300, b"\xff\x01\x02err", b"\x00ev2", b""]
    payloads += [b"\x00" + b"y" * MAX, b"\x00ev3", b"\xfe\x00\x00\x02\x00"]
    data = b""
    seq = 0
    for payload in payloads:
        framed, seq = write_packets(payload, seq)
        data += framed
    expected = [
        b"ev1",
        b"",
        b"x" * 300,
        b"<other>\xff\x01\x02err",  # another first byte
        b"ev2",
        b"<other>",  # an empty packet
        b"<other>\x00" + b"y" * MAX,  # in two parts (the second one empty)
        b"ev3",
        b"<other>\xfe\x00\x00\x02\x00",
    ]
    assert cut_all(data, [len(data)], 0x00, 1) == expected
    assert cut_all(data, [1] * 200 + [len(data) - 200], 0x00, 1) == expected
    small = data[: data.index(b"y") - 5]  # everything before the big packet
    small_expected = expected[:6]
    for seed in range(5):
        assert cut_all(small, random_sizes(len(small), seed), 0x00, 1) == small_expected


def test_payloads_stop_at_a_sequence_gap() -> None:
    reader = PacketReader()
    reader.receive_data(frame(b"\x00a", 3) + frame(b"\x00b", 4) + frame(b"\x00c", 9))
    assert reader.payloads(3, 0x00, 0) == ([b"\x00a", b"\x00b"], 5)
    assert reader.payloads(5, 0x00, 0) == ([], 5)  # left for next_packet, which sees seq 9
    assert reader.next_packet() == Packet(9, b"\x00c")
    assert reader.ready is False
    reader.receive_data(b"\x05\x00\x00")
    assert reader.ready is False and reader.payloads(0, 0x00, 0) == ([], 0)
    reader.receive_data(b"")
    assert reader.ready is True  # the end: next_packet has the last word


@pytest.mark.parametrize("feeder", FEEDERS)
def test_next_payloads_in_command_mode(feeder: Feeder) -> None:
    client = connect_552(whole)
    with pytest.raises(ProtocolError, match="command mode"):
        client.next_payloads(0x00, 1)
    client.send_command(b"\x12dump")
    stream = frame(b"\x00event-1", 1) + frame(b"\x00event-2", 2) + frame(b"\xfe\x00\x00\x02\x00", 3)
    got: list[bytes] = []
    for piece in feeder(stream):
        client.receive_data(piece)
        while (run := client.next_payloads(0x00, 1)) is not NEED_DATA:
            if not run:
                got.append(b"<next_packet>" + client.next_packet())  # type: ignore[operator]
            got += run  # type: ignore[arg-type]
    assert got == [b"event-1", b"event-2", b"<next_packet>\xfe\x00\x00\x02\x00"]
    assert client.next_payloads(0x00, 1) is NEED_DATA


def test_next_payloads_leave_errors_and_disorder_to_next_packet() -> None:
    client = connect_552(whole)
    client.send_command(b"\x12x")
    client.receive_data(frame(b"\x00e", 1) + frame(b"\xff\xd4\x04#HY000gone", 2))
    assert client.next_payloads(0x00, 1) == [b"e"]
    assert client.next_payloads(0x00, 1) == []
    with pytest.raises(ServerError) as info:
        client.next_packet()
    assert info.value.code == 1236
    client.send_command(b"\x12x")
    client.receive_data(frame(b"\x00e", 5))
    assert client.next_payloads(0x00, 1) == []
    with pytest.raises(ProtocolError, match="out of order"):
        client.next_packet()
    assert client.state is ClientState.CLOSED


# -- events decoded from their packets ----------------------------------------------------------

FMT = FormatContext(server_version="10.11.6-MariaDB", checksum=ChecksumAlg.CRC32)


def xid_event(xid: int, log_pos: int, *, body: bytes | None = None, crc: bool = True) -> bytes:
    """An XID event as the format defines it: v4 header, the 8-byte id, the CRC32."""
    payload = xid.to_bytes(8, "little") if body is None else body
    size = 19 + len(payload) + 4
    raw = struct.pack("<IBIIIH", 1700000000, EventType.XID, 7, size, log_pos, 0) + payload
    checksum = zlib.crc32(raw) if crc else zlib.crc32(raw) ^ 1
    return raw + checksum.to_bytes(4, "little")


def fresh_decoder(options: DecodeOptions | None = None) -> BinlogDecoder:
    dec = BinlogDecoder(file="f.000001", options=options, expect_magic=False, fmt=FMT)
    # The first event goes the long way (the framer learns the format is settled).
    first = dec.decode_event(xid_event(1, 131), 100, "f.000001")
    assert isinstance(first, XidEvent) and first.xid == 1
    return dec


def test_decode_event_matches_the_framer() -> None:
    dec = fresh_decoder()
    assert dec.framer.fast is not None
    raw = xid_event(0x0102030405060708, 600)
    event = dec.decode_event(raw, 569, "f.000002")
    assert isinstance(event, XidEvent) and event.xid == 0x0102030405060708
    assert (event.header.offset, event.header.file, event.header.log_pos) == (569, "f.000002", 600)
    frame = dec.last_frame
    assert frame is not None and frame.raw == raw and frame.fmt is dec.fmt
    assert frame.header == event.header and frame.header.offset == 569
    plain = BinlogDecoder(file="f.000002", expect_magic=False, fmt=FMT, offset=569)
    plain.receive_data(raw)
    assert plain.next_event() == event


def test_decode_event_errors_are_located_or_skipped() -> None:
    dec = fresh_decoder()
    with pytest.raises(ChecksumError) as crc:
        dec.decode_event(xid_event(2, 300, crc=False), 269, "f.000001")
    assert crc.value.offset == 269
    short = xid_event(2, 300, body=bytes(7))
    with pytest.raises(DecodeError, match="XID body is 7 bytes") as bad:
        dec.decode_event(short, 270, "f.000001")
    assert (bad.value.offset, bad.value.file) == (270, "f.000001")
    skipping = fresh_decoder(DecodeOptions(on_corrupt="skip"))
    skipped = skipping.decode_event(short, 270, "f.000001")
    assert isinstance(skipped, SkippedEvent) and skipped.raw == short
    assert isinstance(skipping.decode_event(xid_event(2, 300, crc=False), 9, "f"), SkippedEvent)
    assert isinstance(skipping.decode_event(xid_event(3, 400), 369, "f"), XidEvent)
