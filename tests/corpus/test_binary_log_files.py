"""The binary log object over real binlog files: the events binlogkit.open gives, positions that
reopen exactly where they say, starting at a GTID set, errors in order, following a file and
stopping while it waits."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from corpus_files import CORPUS
from receiver_threads import receiver_threads

import binlogkit
from binlogkit.binlog.constants import EventType
from binlogkit.binlog.events import Event
from binlogkit.errors import TruncatedError
from binlogkit.gtid import MariaGtid, MariaGtidList
from binlogkit.pipeline.transactions import Transaction, grouped
from binlogkit.services.binary_log import BinaryLog

pytestmark = pytest.mark.corpus

GTID_DIR = CORPUS / "local-mariadb-10.11" / "gtid"
BINLOG_POS = "7-42-96,9-1-1000"  # its server's @@gtid_binlog_pos (server-vars.txt)


@pytest.fixture(autouse=True)
def _needs_corpus(corpus_dir: Path) -> None:
    """Every test here reads real binlogs."""


def key(event: Event) -> tuple[str, int, int]:
    header = event.header
    return (Path(header.file or "").name, header.offset, header.type_code)


def expected() -> list[tuple[str, int, int]]:
    with binlogkit.open(str(GTID_DIR)) as events:
        return [key(e) for e in events]


def test_the_events_of_binlogkit_open_and_the_final_position() -> None:
    with BinaryLog(str(GTID_DIR)) as binlog:
        got = [key(e) for e in binlog]
        final = binlog.position
    assert got == expected()
    assert final is not None
    assert (final.file, final.position, final.complete) == ("mysql-bin.000006", 710, True)
    assert final.gtids == MariaGtidList.parse(BINLOG_POS)
    with BinaryLog(f"file://{GTID_DIR}") as binlog:
        assert [key(e) for e in binlog] == got


def test_each_complete_position_reopens_exactly_after_its_event() -> None:
    with BinaryLog(str(GTID_DIR)) as binlog:
        points = []
        for event in binlog:
            point = binlog.position
            assert point is not None
            if point.complete and event.header.type_code == EventType.XID:
                points.append((key(event), point))
    everything = expected()
    assert len(points) > 50
    for after, point in points[:: len(points) // 12]:
        with BinaryLog(str(GTID_DIR), start=point) as binlog:
            rest = [key(e) for e in binlog]
        assert rest == everything[everything.index(after) + 1 :], point


def test_a_gtid_set_start_leaves_out_the_transactions_it_holds() -> None:
    start = MariaGtidList.parse("7-1-50")  # domain 9 not in it: all of its transactions come
    with BinaryLog(str(GTID_DIR), start=start) as binlog:
        got = list(binlog)
    given = [e.gtid for e in got if isinstance(getattr(e, "gtid", None), MariaGtid)]
    with binlogkit.open(str(GTID_DIR)) as events:
        every = [tx.gtid for tx in (t for t in grouped(events) if isinstance(t, Transaction))]
    assert given == [g for g in every if g is not None and not start.includes(g)]
    assert min(g.seq_no for g in given if g.domain_id == 7) == 51
    assert {g.domain_id for g in given} == {7, 9}
    # the same through set_position, from a string
    with BinaryLog(str(GTID_DIR)) as binlog:
        binlog.set_position("7-1-50")
        assert [key(e) for e in binlog] == [key(e) for e in got]


def test_a_truncated_file_gives_its_events_then_the_error_once(tmp_path: Path) -> None:
    source = GTID_DIR / "mysql-bin.000003"
    data = source.read_bytes()
    broken = tmp_path / "mysql-bin.000003"
    broken.write_bytes(data[:-30])
    with binlogkit.open(str(source)) as events:
        whole = [key(e) for e in events]
    binlog = BinaryLog(str(broken))
    got = []
    with pytest.raises(TruncatedError):
        for event in binlog:
            got.append(key(event))
    assert got == [k for k in whole if k[1] < len(data) - 30][: len(got)]
    assert len(got) == len(whole) - 1
    assert binlog.wait_for_next_event(0.1) is None and not binlog.connected


def test_following_a_file_waits_for_more_and_stops_at_once(tmp_path: Path) -> None:
    source = GTID_DIR / "mysql-bin.000005"
    data = source.read_bytes()
    growing = tmp_path / "mysql-bin.000005"
    cut = 600
    growing.write_bytes(data[:cut])
    binlog = BinaryLog(str(growing), follow=True)
    binlog.connect()
    first = []
    while (event := binlog.wait_for_next_event(0.5)) is not None:
        first.append(event)
    assert binlog.connected  # waiting for more, not ended
    with growing.open("ab") as out:
        out.write(data[cut:])
    rest = []
    while (event := binlog.wait_for_next_event(2)) is not None:
        rest.append(event)
        if event.header.type_code == EventType.ROTATE:
            break
    with binlogkit.open(str(source)) as events:
        assert [key(e) for e in first + rest] == [key(e) for e in events]
    # it now waits for the next file, which never comes: disconnect ends that wait at once
    start = time.monotonic()
    binlog.disconnect()
    assert time.monotonic() - start < 2
    assert not receiver_threads()


def test_now_starts_at_the_end_of_the_last_file(tmp_path: Path) -> None:
    source = GTID_DIR / "mysql-bin.000005"
    with binlogkit.open(str(source)) as events:
        every = [key(e) for e in events]
    cut = every[len(every) // 2][1]
    data = source.read_bytes()
    shutil.copy(GTID_DIR / "mysql-bin.000004", tmp_path)
    growing = tmp_path / "mysql-bin.000005"
    growing.write_bytes(data[:cut])
    with BinaryLog(str(tmp_path), start="now", follow=True) as binlog:
        assert binlog.wait_for_next_event(0.3) is None and binlog.connected
        with growing.open("ab") as out:
            out.write(data[cut:])
        got = []
        while (event := binlog.wait_for_next_event(3)) is not None:
            got.append(key(event))
            if event.header.type_code == EventType.ROTATE:
                break
    assert got == every[len(every) // 2 :]
