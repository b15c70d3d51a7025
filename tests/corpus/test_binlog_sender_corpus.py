"""The dump sender on real MariaDB binlogs, fed as a server feeds it (in random chunks).

Files of a MariaDB 11.8 primary (GTIDs of domain 0; transactions in
000004-000007, standalone statements in 000010) and a 10.5 file with
ANNOTATE_ROWS events. A GTID start must begin in the file whose GTID_LIST the
replica's position covers, leave out every group up to the replica's GTID
(ends included, as MariaDB finds them) and then send a fake GTID_LIST; a
position start sends the FDE with log_pos and create time zeroed; the
refusals are MariaDB's.
"""

from __future__ import annotations

import dataclasses
import random
import struct
import zlib
from pathlib import Path

import pytest

import binlogkit
from binlogkit.binlog.constants import EventFlag, EventType
from binlogkit.binlog.context import DecodeContext
from binlogkit.binlog.decoder import decode_frame, encode_event
from binlogkit.binlog.framing import EventFramer, Signal
from binlogkit.binlog.header import V4_HEADER
from binlogkit.gtid import MariaGtidList
from binlogkit.protocol.binlog_sender import (
    UNTIL_REACHED,
    BinlogStart,
    DumpRefused,
    DumpSender,
    EventRun,
    Outgoing,
    ReplicaSettings,
    _ends_transaction,
    start_state,
)
from binlogkit.protocol.packets import NeedData
from binlogkit.protocol.replication import BinlogDump, DumpFlag

pytestmark = pytest.mark.corpus

CHAIN = "mariadb-operator+mariadb-poc/mariadb-binlog/binlogs/domain_id_0/mariadb-repl-bin.0000"
TRANSACTIONS = [f"{CHAIN}0{n}" for n in (4, 5, 6, 7)]
STANDALONE = [f"{CHAIN}10"]
ANNOTATED = ["blackbeam+rust_mysql_common/test-data/binlogs/mariadb-bin.000001"]
GTID_CAPABLE = ReplicaSettings(checksum="CRC32", mariadb_capability=4)


def load(corpus_dir: Path, names: list[str]) -> dict[str, bytes]:
    return {Path(n).name: (corpus_dir / n).read_bytes() for n in names}


def starts(files: dict[str, bytes]) -> list[BinlogStart]:
    """Each file's name, size and starting GTID state, from its first events."""
    out = []
    for name, data in files.items():
        framer = EventFramer(file=name)
        framer.receive_data(data[:4096])
        frames = [framer.next_frame() for _ in range(3)]
        out.append(BinlogStart(name, len(data), start_state(frames)))  # type: ignore[arg-type]
    return out


def binlog_state(files: dict[str, bytes]) -> MariaGtidList:
    """The binlog state of the files: the last one's GTID_LIST and the GTIDs after it."""
    name, data = list(files.items())[-1]
    framer = EventFramer(file=name)
    framer.receive_data(data)
    state = MariaGtidList()
    while not isinstance(frame := framer.next_frame(), Signal):
        if frame.header.type_code == EventType.MARIADB_GTID_LIST:
            state = decode_frame(frame, DecodeContext(frame.fmt)).gtids  # type: ignore[attr-defined]
        elif frame.header.type_code == EventType.MARIADB_GTID:
            state = state.add(decode_frame(frame, DecodeContext(frame.fmt)).gtid)  # type: ignore[attr-defined]
    return state


def run(
    request: BinlogDump, files: dict[str, bytes], replica: ReplicaSettings, seed: int = 1
) -> tuple[list[Outgoing], DumpRefused | None]:
    """Drive a sender as the server does, to the end of the last file (chunks of 1-700 bytes)."""
    rng = random.Random(seed)
    state = binlog_state(files)
    sender = DumpSender(
        request, starts(files), replica, server_id=77, flavor="mariadb", binlog_state=lambda: state
    )
    out: list[Outgoing] = []
    refused = sender.start()
    names = list(files)
    while refused is None:
        packet = sender.next_packet()
        if isinstance(packet, EventRun):
            out += packet.packets()
            continue
        if isinstance(packet, Outgoing):
            out.append(packet)
            continue
        if isinstance(packet, DumpRefused):
            return out, packet
        name, offset = sender.read_at
        if offset < len(files[name]):
            chunk = files[name][offset : offset + rng.randint(1, 700)]
            sender.receive_data(chunk, at_end=offset + len(chunk) == len(files[name]))
        elif names.index(name) + 1 < len(names):
            sender.file_complete(names[names.index(name) + 1])
        else:
            assert (sender.file, sender.position) == (name, len(files[name]))
            break
    return out, refused


def fields(packet: Outgoing) -> tuple[int, int, int, int, int, int]:
    raw = packet.payload[1:]
    assert zlib.crc32(raw[:-4]) == struct.unpack_from("<I", raw, len(raw) - 4)[0]
    return V4_HEADER.unpack_from(raw)  # type: ignore[no-any-return]


def file_events(corpus_dir: Path, names: list[str]) -> list[tuple[str, int, int, object]]:
    with binlogkit.open([str(corpus_dir / n) for n in names]) as events:
        return [
            (
                Path(e.header.file or "").name,
                e.header.offset,
                e.header.type_code,
                getattr(e, "gtid", None),
            )
            for e in events
        ]


def test_gtid_start_skips_up_to_the_replicas_gtid(corpus_dir: Path) -> None:
    files = load(corpus_dir, TRANSACTIONS)
    events = file_events(corpus_dir, TRANSACTIONS)
    second = list(files)[1]
    gtid_at = [i for i, e in enumerate(events) if e[0] == second and e[2] == EventType.MARIADB_GTID]
    target = events[gtid_at[9]][3]
    replica = ReplicaSettings("CRC32", mariadb_capability=4, connect_state=MariaGtidList((target,)))  # type: ignore[arg-type]
    out, refused = run(BinlogDump("", 4, 2), files, replica)
    assert refused is None
    assert fields(out[0])[1] == EventType.ROTATE
    assert out[0].payload[1 + 19 : -4] == struct.pack("<Q", 4) + second.encode()
    # what was read: from the second file on, leaving out the groups up to the target
    end_of_target = next(i for i in range(gtid_at[9], len(events)) if events[i][2] == EventType.XID)
    skipped = {
        (f, o)
        for f, o, code, _ in events[gtid_at[0] : end_of_target + 1]
        if code not in (EventType.MARIADB_BINLOG_CHECKPOINT,)
    }
    first = next(iter(files))
    expected = [(f, o) for f, o, _, _ in events if f != first and (f, o) not in skipped]
    sent = [(p.file, p.offset) for p in out if p.offset >= 0]
    assert sent == expected
    # one fake GTID_LIST where the target group ended (its XID is left out), naming it
    fake = [
        i for i, p in enumerate(out) if p.offset < 0 and p.type_code == EventType.MARIADB_GTID_LIST
    ]
    assert len(fake) == 1
    xid_file, xid_offset, _, _ = events[end_of_target]
    xid_end = xid_offset + V4_HEADER.unpack_from(files[xid_file], xid_offset)[3]
    assert (out[fake[0] + 1].file, out[fake[0] + 1].offset) == (xid_file, xid_end)
    _, _, server_id, _, log_pos, flags = fields(out[fake[0]])
    assert (server_id, log_pos, flags) == (77, xid_end, EventFlag.ARTIFICIAL)
    body = out[fake[0]].payload[1 + 19 : -4]
    assert body == struct.pack("<IIIQ", 1, target.domain_id, target.server_id, target.seq_no)  # type: ignore[attr-defined]
    # the FDE of the start file keeps its log_pos but not its create time (temporary tables)
    fde = out[1].payload[1:]
    assert fields(out[1])[4] != 0 and struct.unpack_from("<I", fde, 19 + 2 + 50)[0] == 0


def test_standalone_groups_end_at_their_statement(corpus_dir: Path) -> None:
    files = load(corpus_dir, STANDALONE)
    events = file_events(corpus_dir, STANDALONE)
    gtids = [e for e in events if e[2] == EventType.MARIADB_GTID]
    replica = ReplicaSettings(
        "CRC32", mariadb_capability=4, connect_state=MariaGtidList((gtids[1][3],))
    )  # type: ignore[arg-type]
    out, _ = run(BinlogDump("", 4, 2), files, replica)
    sent = [(p.offset, p.type_code) for p in out]
    third = events.index(gtids[2])
    # GTID, QUERY, GTID, QUERY left out; the fake GTID_LIST before the third group
    assert sent[:3] == [
        (-1, EventType.ROTATE),
        (4, EventType.FORMAT_DESCRIPTION),
        (256, EventType.MARIADB_GTID_LIST),
    ]
    assert sent[3:6] == [
        (299, EventType.MARIADB_BINLOG_CHECKPOINT),
        (-1, EventType.MARIADB_GTID_LIST),
        (gtids[2][1], EventType.MARIADB_GTID),
    ]
    assert [(o, c) for _, o, c, _ in events[third:]] == [s for s in sent[5:] if s[0] >= 0]


def test_a_purged_position_is_refused(corpus_dir: Path) -> None:
    files = load(corpus_dir, TRANSACTIONS)
    replica = ReplicaSettings(
        "CRC32", mariadb_capability=4, connect_state=MariaGtidList.parse("0-10-100")
    )
    out, refused = run(BinlogDump("", 4, 2), files, replica)
    assert out == [] and refused is not None and refused.code == 1236
    assert refused.message.startswith("Could not find GTID state requested by slave")


@pytest.mark.parametrize("flags", [0, DumpFlag.SEND_ANNOTATE_ROWS])
def test_annotate_rows_only_when_asked(corpus_dir: Path, flags: int) -> None:
    files = load(corpus_dir, ANNOTATED)
    out, _ = run(BinlogDump("", 4, 2, flags), files, GTID_CAPABLE)
    annotate = [p for p in out if p.type_code == EventType.MARIADB_ANNOTATE_ROWS]
    assert len(annotate) == (2 if flags else 0)
    assert len([p for p in out if p.offset >= 0]) == 13 - (0 if flags else 2)


def test_position_start_zeroes_the_fde_log_pos(corpus_dir: Path) -> None:
    files = load(corpus_dir, TRANSACTIONS)
    events = file_events(corpus_dir, TRANSACTIONS)
    name = list(files)[1]
    start = [o for f, o, c, _ in events if f == name and c == EventType.MARIADB_GTID][3]
    out, _ = run(BinlogDump(name, start, 2), files, GTID_CAPABLE, seed=7)
    rotate = out[0].payload[1:]
    assert struct.unpack_from("<Q", rotate, 19)[0] == start
    assert fields(out[1])[1] == EventType.FORMAT_DESCRIPTION and fields(out[1])[4] == 0
    assert (out[2].file, out[2].offset) == (name, start)


def test_replica_without_checksum_support_is_refused(corpus_dir: Path) -> None:
    files = load(corpus_dir, ANNOTATED)
    out, refused = run(BinlogDump("", 4, 2), files, ReplicaSettings(None, mariadb_capability=4))
    assert [p.type_code for p in out] == [EventType.ROTATE]
    assert len(out[0].payload) == 1 + 19 + 8 + len(next(iter(files)))  # no CRC: it cannot check one
    assert refused is not None and refused.message == (
        "Slave can not handle replication events with the checksum that master is configured to log"
    )


def test_semi_sync_asks_an_ack_at_the_tail(corpus_dir: Path) -> None:
    """The last event of what the file holds when it is read asks for an ACK: the first XID
    while the file ends there, then the file's last event once the rest is there."""
    ((name, data),) = load(corpus_dir, ANNOTATED).items()
    replica = ReplicaSettings("CRC32", semi_sync=True, mariadb_capability=4)
    sender = DumpSender(
        BinlogDump("", 4, 2, DumpFlag.SEND_ANNOTATE_ROWS),
        [BinlogStart(name, len(data))],
        replica,
        server_id=77,
        flavor="mariadb",
    )
    assert sender.start() is None
    first_xid_end = 671 + V4_HEADER.unpack_from(data, 671)[3]
    out: list[Outgoing] = []
    for part in (data[:first_xid_end], data[first_xid_end:]):
        sender.receive_data(part, at_end=True)
        while isinstance(packet := sender.next_packet(), Outgoing | EventRun):
            out += packet.packets() if isinstance(packet, EventRun) else [packet]
    assert all(p.payload[:2] == b"\x00\xef" for p in out)
    assert [p.offset for p in out if p.ack] == [671, out[-1].offset] != [671, 671]


GAP = [f"{CHAIN}07", f"{CHAIN}09"]
"""Two files with 000008 left out: GTIDs 0-10-262797 to 0-10-292193 are missing."""


@pytest.mark.parametrize(
    ("start", "message"),
    [
        (
            "0-10-999999",
            "Error: connecting slave requested to start from GTID 0-10-999999, which is not in"
            " the master's binlog",
        ),
        (
            "0-99-5",
            "Error: connecting slave requested to start from GTID 0-99-5, which is not in the"
            " master's binlog. Since the master's binlog contains GTIDs with higher sequence"
            " numbers, it probably means that the slave has diverged due to executing extra"
            " erroneous transactions",
        ),
    ],
)
def test_a_start_the_binlogs_do_not_hold_is_refused(
    corpus_dir: Path, start: str, message: str
) -> None:
    files = load(corpus_dir, TRANSACTIONS)
    replica = ReplicaSettings(
        "CRC32", mariadb_capability=4, connect_state=MariaGtidList.parse(start)
    )
    out, refused = run(BinlogDump("", 4, 2), files, replica)
    assert out == [] and refused == DumpRefused(1236, message)


@pytest.mark.parametrize("strict", [False, True])
def test_strict_mode_refuses_a_start_in_a_hole(corpus_dir: Path, strict: bool) -> None:
    files = load(corpus_dir, GAP)
    replica = ReplicaSettings(
        "CRC32",
        mariadb_capability=4,
        connect_state=MariaGtidList.parse("0-10-262800"),
        gtid_strict_mode=strict,
    )
    out, refused = run(BinlogDump("", 4, 2), files, replica)
    assert out[0].payload.endswith(Path(GAP[0]).name.encode() + out[0].payload[-4:])  # from 000007
    if strict:
        assert refused == DumpRefused(
            1236,
            "The binlog on the master is missing the GTID 0-10-262800 requested by the slave"
            " (even though both a prior and a subsequent sequence number does exist), and GTID"
            " strict mode is enabled",
        )
    else:
        assert refused is None
        gtids = [p for p in out if p.type_code == EventType.MARIADB_GTID]
        assert struct.unpack_from("<Q", gtids[0].payload, 1 + 19)[0] == 292194


def test_until_gtid_ends_the_dump_after_its_group(corpus_dir: Path) -> None:
    files = load(corpus_dir, TRANSACTIONS)
    events = file_events(corpus_dir, TRANSACTIONS)
    gtids = [e for e in events if e[2] == EventType.MARIADB_GTID]
    start, until = gtids[420][3], gtids[430][3]
    replica = ReplicaSettings(
        "CRC32",
        mariadb_capability=4,
        connect_state=MariaGtidList((start,)),  # type: ignore[arg-type]
        until_gtid=MariaGtidList((until,)),  # type: ignore[arg-type]
    )
    sender = DumpSender(
        BinlogDump("", 4, 2),
        starts(files),
        replica,
        server_id=77,
        flavor="mariadb",
        binlog_state=lambda: binlog_state(files),
    )
    assert sender.start() is None
    out: list[Outgoing] = []
    while isinstance(packet := sender.next_packet(), Outgoing | EventRun | NeedData):
        if isinstance(packet, EventRun):
            out += packet.packets()
        elif isinstance(packet, Outgoing):
            out.append(packet)
        else:
            name, offset = sender.read_at
            sender.receive_data(files[name][offset : offset + 5000])
    assert packet is UNTIL_REACHED
    sent = [
        struct.unpack_from("<Q", p.payload, 1 + 19)[0]
        for p in out
        if p.type_code == EventType.MARIADB_GTID
    ]
    assert sent == [g.seq_no for _, _, _, g in gtids[421:431]]  # type: ignore[attr-defined]
    # the last group's XID, then the fake GTID_LIST flagged UNTIL_REACHED (1 << 28)
    assert out[-2].type_code == EventType.XID
    last = out[-1].payload[1:]
    assert fields(out[-1])[1] == EventType.MARIADB_GTID_LIST and fields(out[-1])[4] == out[
        -2
    ].offset + len(out[-2].event)
    assert struct.unpack_from("<IIIQ", last, 19) == (1 | 1 << 28, 0, 10, until.seq_no)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("query", "ends"),
    [
        (b"COMMIT", True),
        (b"ROLLBACK", True),
        (b"commit", False),
        (b" COMMIT", False),
        (b"COMMIT ", False),
        (b"ROLLBACK TO s", False),
    ],
)
def test_transaction_end_is_mariadbs_exact_rule(corpus_dir: Path, query: bytes, ends: bool) -> None:
    """Query_log_event::peek_is_commit_rollback: the query is exactly COMMIT or ROLLBACK."""
    data = (corpus_dir / STANDALONE[0]).read_bytes()
    framer = EventFramer()
    framer.receive_data(data)
    while (frame := framer.next_frame()).header.type_code != EventType.QUERY:  # type: ignore[union-attr]
        pass
    event = decode_frame(frame, DecodeContext(frame.fmt))  # type: ignore[arg-type]
    raw = encode_event(dataclasses.replace(event, query=query), frame.fmt)  # type: ignore[union-attr]
    assert _ends_transaction(raw, 4) is ends


@pytest.mark.parametrize("keyed", [True, False], ids=["key file", "no key file"])
def test_encrypted_binlog_served_decrypted(corpus_dir: Path, tmp_path: Path, keyed: bool) -> None:
    """The corpus' encrypted MariaDB 10.11 binlog read from a BinlogDirectory with its key
    file, in reads of random sizes, from a position past START_ENCRYPTION: the FDE and
    then START_ENCRYPTION, flagged IGNORABLE, both with log_pos 0, then the file's events
    from the position, decrypted. Without the key file the dump is refused."""
    from encrypted_corpus import MARIADB, MARIADB_KEYS

    from binlogkit.io.key_files import read_key_file
    from binlogkit.services.binlog_directory import BinlogDirectory

    name = "mysql-bin.000002"
    (tmp_path / name).write_bytes((corpus_dir / MARIADB / name).read_bytes())
    keys = corpus_dir / MARIADB_KEYS
    directory = BinlogDirectory(tmp_path, read_key_file(keys) if keyed else None)
    with binlogkit.open(str(tmp_path / name), key_file=keys) as events:
        listed = [(e.header.offset, e.header.type_code) for e in events]
    start = listed[5][0]
    sender = DumpSender(
        BinlogDump(name, start, 9),
        directory.starts(),
        GTID_CAPABLE,
        server_id=77,
        flavor="mariadb",
        decrypted=keyed,
    )
    assert sender.start() is None
    rng = random.Random(3)
    out: list[Outgoing] = []
    while True:
        packet = sender.next_packet()
        if isinstance(packet, DumpRefused):
            assert not keyed and "serve it with its key file" in packet.message
            return
        if isinstance(packet, (EventRun, Outgoing)):
            out += packet.packets() if isinstance(packet, EventRun) else [packet]
            continue
        name_at, offset = sender.read_at
        data = directory.read(name_at, offset, rng.randint(1, 3000))
        if not data:
            break
        sender.receive_data(data, at_end=offset + len(data) == directory.size(name_at))
    assert keyed
    heads = [fields(p) for p in out]  # every CRC32 right
    start_encryption = heads[2]
    assert [h[1] for h in heads[:3]] == [
        EventType.ROTATE,
        EventType.FORMAT_DESCRIPTION,
        EventType.MARIADB_START_ENCRYPTION,
    ]
    assert heads[1][4] == start_encryption[4] == 0  # log_pos
    assert start_encryption[5] & EventFlag.IGNORABLE
    sent = [(h[4] - h[3], h[1]) for h in heads[3:]]  # (offset, type) from log_pos and size
    annotate = EventType.MARIADB_ANNOTATE_ROWS  # left out: the replica did not ask for them
    assert sent == [e for e in listed[5:] if e[1] != annotate]
