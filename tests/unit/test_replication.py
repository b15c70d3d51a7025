"""Replication commands and stream packets: known answers from the protocol's documentation.

The packet dumps are the examples of the MariaDB replication-protocol pages
(COM_BINLOG_DUMP, COM_REGISTER_SLAVE, semi-sync); the GTID sets' binary form
is taken from real PREVIOUS_GTIDS events of the corpus.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from binlogkit.binlog.constants import ChecksumAlg
from binlogkit.binlog.context import FormatContext
from binlogkit.binlog.framing import EventFramer, Signal
from binlogkit.errors import ProtocolError
from binlogkit.gtid import GtidSet
from binlogkit.protocol.replication import (
    BinlogDump,
    BinlogDumpGtid,
    DumpFlag,
    EndOfStream,
    EventPacket,
    RegisterSlave,
    SemiSyncAck,
    parse_stream_packet,
)


def packet(dump: str) -> tuple[int, bytes]:
    """A packet written as hex: (sequence number, payload), its 3-byte length checked."""
    raw = bytes.fromhex(dump)
    length = int.from_bytes(raw[:3], "little")
    assert length == len(raw) - 4
    return raw[3], raw[4:]


# COM_BINLOG_DUMP of mysql-bin.000034 at 1588, flags BINLOG_SEND_ANNOTATE_ROWS_EVENT, server 10101.
DUMP = "1b000000 12 34060000 0200 75270000 6d7973716c2d62696e2e303030303334"
# COM_REGISTER_SLAVE: server 10101, host "SBslave1", no user or password, port 23241.
REGISTER = "1a000000 15 75270000 08 5342736c61766531 00 00 c95a 00000000 00000000"
REGISTER_2 = "1b000000 15 75270000 09 736c6176655f6e5f31 00 00 c95a 00000000 00000000"
# Semi-sync: a heartbeat without ACK request, an XID that asks for one, and the ACK.
SEMI_HEARTBEAT = (
    "2a000006 00 ef00 000000001bd92700002700000079040000 0000"
    "6d7973716c2d62696e2e303030303334 edefe1f0"
)
SEMI_XID = "2200000c 00 ef01 17d0375a10d92700001f0000004a05000000006f00000000000000 4430aafc"
ACK = "19000000 ef 4a05000000000000 6d7973716c2d62696e2e303030303334"


def test_binlog_dump_known_answer() -> None:
    seq, payload = packet(DUMP)
    assert seq == 0
    dump = BinlogDump.decode(payload)
    assert dump == BinlogDump("mysql-bin.000034", 1588, 10101, DumpFlag.SEND_ANNOTATE_ROWS)
    assert dump.encode() == payload


@pytest.mark.parametrize("dump", [REGISTER, REGISTER_2])
def test_register_slave_known_answer(dump: str) -> None:
    _, payload = packet(dump)
    reg = RegisterSlave.decode(payload)
    assert reg.server_id == 10101
    assert reg.host in ("SBslave1", "slave_n_1")
    assert (reg.user, reg.password, reg.port, reg.rank, reg.master_id) == ("", "", 23241, 0, 0)
    assert reg.encode() == payload


def test_register_slave_hides_password() -> None:
    reg = RegisterSlave(7, "h", "u", "secret-pw")
    assert "secret-pw" not in repr(reg)
    assert RegisterSlave.decode(reg.encode()) == reg


def _previous_gtids_body(path: Path) -> bytes:
    """The GTID set bytes of the PREVIOUS_GTIDS event of a real binlog."""
    framer = EventFramer(file=str(path))
    framer.receive_data(path.read_bytes())
    framer.receive_data(b"")
    while not isinstance(frame := framer.next_frame(), Signal):
        if frame.header.type_name == "PREVIOUS_GTIDS":
            return bytes(frame.body)
    raise AssertionError(f"{path} has no PREVIOUS_GTIDS event")


@pytest.mark.parametrize(
    ("name", "text", "tagged"),
    [
        (
            "binlog_transaction_previous_GTID_no_tag.000001",
            "b9b88c66-0755-11f1-9899-4a9da94c4d71:1-2",
            False,
        ),
        (
            "binlog_transaction_with_GTID_TAG.000001",
            "55778904-0299-11f1-b1b8-4ef0c4956feb:1-13:mytag:1-2",
            True,
        ),
    ],
)
def test_binlog_dump_gtid_layout(corpus_dir: Path, name: str, text: str, tagged: bool) -> None:
    """The layout of MySQL's com_binlog_dump_gtid, with the set as a real server encodes it."""
    encoded = _previous_gtids_body(
        corpus_dir / "blackbeam+rust_mysql_common/test-data/binlogs" / name
    )
    gtids = GtidSet.parse(text)
    command = BinlogDumpGtid(server_id=99, gtids=gtids, flags=DumpFlag.NON_BLOCK)
    expected = struct.pack("<BHIIQI", 0x1E, 0x01 | 0x04, 99, 0, 4, len(encoded)) + encoded
    assert command.encode() == expected
    back = BinlogDumpGtid.decode(expected)
    assert back.gtids == gtids
    assert back.tagged_format is tagged
    assert back.flags == DumpFlag.NON_BLOCK
    assert back.encode() == expected


def test_binlog_dump_gtid_with_file_and_no_set() -> None:
    command = BinlogDumpGtid(server_id=5, file="binlog.000002", position=1234)
    payload = command.encode()
    name = b"binlog.000002"
    assert payload == struct.pack("<BHII", 0x1E, 0, 5, len(name)) + name + struct.pack("<Q", 1234)
    assert BinlogDumpGtid.decode(payload) == command


def test_stream_packets_plain_and_eof() -> None:
    event = bytes.fromhex("000000001bd92700002700000079040000 0000") + b"x" * 20
    parsed = parse_stream_packet(b"\x00" + event)
    assert parsed == EventPacket(event, None)
    assert parsed.encode() == b"\x00" + event
    assert isinstance(parse_stream_packet(b"\xfe\x00\x00\x02\x00"), EndOfStream)
    with pytest.raises(ProtocolError):
        parse_stream_packet(b"\x05abc")


def test_semi_sync_packets_known_answer() -> None:
    _, heartbeat = packet(SEMI_HEARTBEAT)
    parsed = parse_stream_packet(heartbeat, semi_sync=True)
    assert isinstance(parsed, EventPacket)
    assert parsed.ack_requested is False
    assert parsed.event[4] == 27  # HEARTBEAT
    assert parsed.event.endswith(b"mysql-bin.000034" + bytes.fromhex("edefe1f0"))
    assert parsed.encode() == heartbeat

    _, xid = packet(SEMI_XID)
    parsed = parse_stream_packet(xid, semi_sync=True)
    assert isinstance(parsed, EventPacket)
    assert parsed.ack_requested is True
    crc32 = FormatContext(checksum=ChecksumAlg.CRC32)  # the frame's checksum is verified
    framer = EventFramer(expect_magic=False, file="mysql-bin.000034", fmt=crc32)
    framer.receive_data(parsed.event)
    frame = framer.next_frame()
    assert not isinstance(frame, Signal)
    assert (frame.header.type_name, frame.header.log_pos) == ("XID", 1354)

    seq, ack = packet(ACK)
    assert seq == 0
    assert SemiSyncAck.decode(ack) == SemiSyncAck("mysql-bin.000034", 1354)
    assert SemiSyncAck("mysql-bin.000034", frame.header.log_pos).encode() == ack
    with pytest.raises(ProtocolError):
        parse_stream_packet(b"\x00" + parsed.event, semi_sync=True)


@pytest.mark.parametrize(
    "bad",
    [
        lambda: BinlogDump("f", 1 << 32, 1).encode(),
        lambda: BinlogDump("a\0b", 4, 1).encode(),
        lambda: BinlogDump("f", 4, -1).encode(),
        lambda: RegisterSlave(1, "h" * 256).encode(),
        lambda: BinlogDump.decode(b"\x12\x04\x00"),
        lambda: BinlogDump.decode(b"\x03select"),
        lambda: BinlogDumpGtid.decode(b"\x1e\x04\x00\x01\x00\x00\x00\x00\x00\x00\x00" + bytes(8)),
        lambda: RegisterSlave.decode(packet(REGISTER)[1] + b"\0"),
    ],
)
def test_malformed_or_out_of_range(bad: object) -> None:
    with pytest.raises(ProtocolError):
        bad()  # type: ignore[operator]
