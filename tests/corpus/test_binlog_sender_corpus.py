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

import random
import struct
import zlib
from pathlib import Path

import pytest

import binlogkit
from binlogkit.binlog.constants import EventFlag, EventType
from binlogkit.binlog.framing import EventFramer
from binlogkit.binlog.header import V4_HEADER
from binlogkit.gtid import MariaGtidList
from binlogkit.protocol.binlog_sender import (
    BinlogStart,
    DumpRefused,
    DumpSender,
    Outgoing,
    ReplicaSettings,
    start_state,
)
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


def run(
    request: BinlogDump, files: dict[str, bytes], replica: ReplicaSettings, seed: int = 1
) -> tuple[list[Outgoing], DumpRefused | None]:
    """Drive a sender as the server does, to the end of the last file (chunks of 1-700 bytes)."""
    rng = random.Random(seed)
    sender = DumpSender(request, starts(files), replica, server_id=77, flavor="mariadb")
    out: list[Outgoing] = []
    refused = sender.start()
    names = list(files)
    while refused is None:
        packet = sender.next_packet()
        if isinstance(packet, Outgoing):
            out.append(packet)
            continue
        if isinstance(packet, DumpRefused):
            return out, packet
        name, offset = sender.read_at
        if offset < len(files[name]):
            sender.receive_data(files[name][offset : offset + rng.randint(1, 700)])
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


def test_semi_sync_asks_acks_for_commits(corpus_dir: Path) -> None:
    files = load(corpus_dir, ANNOTATED)
    replica = ReplicaSettings("CRC32", semi_sync=True, mariadb_capability=4)
    out, _ = run(BinlogDump("", 4, 2, DumpFlag.SEND_ANNOTATE_ROWS), files, replica)
    assert all(p.payload[:2] == b"\x00\xef" for p in out)
    assert [p.offset for p in out if p.payload[2]] == [671, 1043]  # the XIDs
