"""The replication stream against real MySQL 8.x binlog bytes, served by an in-process primary.

:mod:`fake_primary` serves corpus files (MySQL 8.0 with GTIDs, ROWS_QUERY
and rotations; zstd TRANSACTION_PAYLOADs; a 9.6 file with a tagged GTID) as
a MySQL 8.4 source does. The events a stream gives must be the events
``binlogkit.open`` reads from the same files (at the same files and
offsets); the server side decodes what the client sends (the GTID set of
COM_BINLOG_DUMP_GTID, the session variables); and when the primary breaks
dumps at chosen events, the stream resumes after the last complete
transaction with nothing lost or repeated, waiting as its backoff says.
No MariaDB needed.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_primary import Cut, FakePrimary, Key, LogFile, file_keys, keyed, load_binlog
from time_limit import time_limit

from binlogkit.binlog.constants import EventType
from binlogkit.binlog.events import Event
from binlogkit.cli.main import cli
from binlogkit.errors import ConnectionLost, ServerError
from binlogkit.gtid import GtidSet
from binlogkit.io.mysql import MySQLConnection
from binlogkit.io.mysql_async import AsyncMySQLConnection
from binlogkit.protocol.replication import (
    BinlogDump,
    BinlogDumpGtid,
    DumpFlag,
    ResumePoint,
    SemiSyncAck,
)
from binlogkit.services import relay as relay_module
from binlogkit.services.relay import RECONNECT, BinlogRelay
from binlogkit.services.replica_stream import Backoff, BinlogStream, ReplicaStream

pytestmark = pytest.mark.corpus

SAMPLES = "avaitla+mysqlbinlog2parquet/test/samples"
CHAIN = [f"{SAMPLES}/mysql-bin.00000{i}" for i in (4, 5, 6)]
"""MySQL 8.0.46, GTIDs, ROWS_QUERY, three files linked by ROTATE events."""
PAYLOAD = ["apecloud+mysql-binlog-connector-rust/tests/parse_file_tests/mysql-bin.000057"]
"""MySQL 8.0.31, GTIDs, two zstd TRANSACTION_PAYLOAD events."""
TAGGED = ["blackbeam+rust_mysql_common/test-data/binlogs/binlog_transaction_with_GTID_TAG.000001"]
"""MySQL 9.6, a tagged GTID and a tagged PREVIOUS_GTIDS set."""


def paths(corpus_dir: Path, names: list[str]) -> list[Path]:
    return [corpus_dir / name for name in names]


def stream(primary: FakePrimary, **options: object) -> BinlogStream:
    options.setdefault("server_id", 41)
    options.setdefault("blocking", False)
    return BinlogStream(primary.url, **options)  # type: ignore[arg-type]


def streamed(primary: FakePrimary, **options: object) -> list[Event]:
    with time_limit(30), stream(primary, **options) as events:
        return list(events)


def transactions(files: list[LogFile]) -> int:
    return sum(e.gtid is not None for f in files for e in f.events)


@pytest.fixture
def chain(corpus_dir: Path) -> list[Path]:
    return paths(corpus_dir, CHAIN)


def test_primary_answers_as_mysql_8_4(chain: list[Path]) -> None:
    with FakePrimary(chain) as primary, MySQLConnection.connect(primary.spec) as conn:
        assert (conn.server_version, conn.is_mariadb) == ("8.4.3", False)
        assert conn.query("SELECT @@version, @@global.gtid_mode").rows == [("8.4.3", "ON")]
        with pytest.raises(ServerError) as info:
            conn.query("SHOW MASTER STATUS")
        assert (info.value.code, info.value.sql_state) == (1064, "42000")
        conn.ping()  # the connection is still usable


@pytest.mark.parametrize("names", [CHAIN, PAYLOAD, TAGGED], ids=["chain", "payload", "tagged"])
def test_oldest_equals_the_files(corpus_dir: Path, names: list[str]) -> None:
    files = paths(corpus_dir, names)
    expected = file_keys(files)
    with FakePrimary(files) as primary:
        got = keyed(streamed(primary, start="oldest"))
    assert got == expected
    (session,) = [s for s in primary.sessions if s.dump]
    assert session.dump == BinlogDump(files[0].name, 4, 41, DumpFlag.NON_BLOCK)
    assert session.registered is not None and session.registered.server_id == 41
    # the 8.0.26+ name of the checksum variable: without it MySQL refuses to send CRC32 events
    assert session.variables["source_binlog_checksum"] == "CRC32"
    assert session.variables["source_heartbeat_period"] == str(30 * 10**9)
    if names is PAYLOAD:
        types = {k[2].header.type_code for k in got}
        assert EventType.TRANSACTION_PAYLOAD in types and EventType.WRITE_ROWS in types


def test_start_by_position(chain: list[Path]) -> None:
    expected = file_keys(chain)
    second = chain[1].name
    gtids = [k for k in expected if k[0] == second and k[2].header.type_code == EventType.GTID]
    with FakePrimary(chain) as primary:
        got = keyed(streamed(primary, start=(second, gtids[1][1])))
    assert got == expected[expected.index(gtids[1]) :]


def without_fde(keys: list[Key]) -> list[Key]:
    return [k for k in keys if k[2].header.type_code != EventType.FORMAT_DESCRIPTION]


def test_gtid_dump_skips_what_the_replica_has(chain: list[Path]) -> None:
    files = [load_binlog(p) for p in chain]
    first_of_second = files[1].first_gtid
    assert first_of_second is not None
    have = files[1].previous_gtids.add(first_of_second)
    expected = file_keys(chain)
    start = next(
        i
        for i, (_, _, event) in enumerate(expected)
        if event.header.type_code == EventType.GTID and event.gtid == first_of_second  # type: ignore[attr-defined]
    )
    end = next(
        i for i, k in enumerate(expected) if i > start and k[2].header.type_code == EventType.GTID
    )
    wanted = [k for k in expected[:start] if k[0] == chain[1].name] + expected[end:]
    with FakePrimary(chain) as primary, time_limit(30), stream(primary, start=str(have)) as events:
        got = keyed(list(events))
        final = events.resume_point
    (session,) = [s for s in primary.sessions if s.dump]
    # what the server decoded from COM_BINLOG_DUMP_GTID is the set the stream was given
    assert session.dump == BinlogDumpGtid(41, have, flags=DumpFlag.NON_BLOCK, tagged_format=False)
    # the skipped transaction's file restarts past it: the FDE comes with log_pos 0 (stream only)
    assert without_fde(got) == without_fde(wanted)
    assert final is not None and final.complete
    assert final.gtids == GtidSet.parse(primary.variables["gtid_executed"])


def without_structure(keys: list[Key]) -> list[Key]:
    leave_out = (EventType.FORMAT_DESCRIPTION, EventType.ROTATE)
    return [k for k in keys if k[2].header.type_code not in leave_out]


def test_tagged_gtid_set_goes_over_the_wire(corpus_dir: Path) -> None:
    files = paths(corpus_dir, TAGGED)
    log = load_binlog(files[0])
    tagged = log.first_gtid
    assert tagged is not None and tagged.tag
    expected = [
        k
        for k in file_keys(files)
        if k[2].header.type_code in (EventType.PREVIOUS_GTIDS, EventType.ROTATE)
    ]
    have = log.previous_gtids.add(tagged)
    with FakePrimary(files) as primary:
        got = keyed(streamed(primary, start=have))
    (session,) = [s for s in primary.sessions if s.dump]
    assert isinstance(session.dump, BinlogDumpGtid)
    assert session.dump.gtids == have and session.dump.tagged_format is True
    assert without_fde(got) == expected  # its only transaction is skipped


def test_start_now_asks_mysql_8_4_for_binary_log_status(chain: list[Path]) -> None:
    with FakePrimary(chain) as primary:
        got = streamed(primary, start="now", include_stream_only=True)
    (session,) = [s for s in primary.sessions if s.dump]
    assert "SHOW BINARY LOG STATUS" in session.queries
    assert "SHOW MASTER STATUS" not in session.queries  # a syntax error on 8.4
    last = primary.files[-1]
    assert session.dump == BinlogDump(last.name, last.size, 41, DumpFlag.NON_BLOCK)
    assert [e.header.type_code for e in got] == [EventType.ROTATE, EventType.FORMAT_DESCRIPTION]
    assert got[0].position == last.size  # type: ignore[attr-defined]


def test_replica_without_checksum_variable_is_refused(chain: list[Path]) -> None:
    with FakePrimary(chain) as primary, MySQLConnection.connect(primary.spec) as conn:
        conn.send_command(BinlogDump(chain[0].name, 4, 42).encode())
        conn.read_packet()  # the fake ROTATE goes out before the format description is read
        with pytest.raises(ServerError) as info:
            conn.read_packet()
    assert info.value.code == 1236
    assert "can not handle replication events with the checksum" in info.value.server_message


def test_missing_file_is_the_servers_error(chain: list[Path]) -> None:
    sleeps: list[float] = []
    with FakePrimary(chain) as primary, pytest.raises(ServerError) as info:
        streamed(primary, start=("mysql-bin.000099", 4), sleep=sleeps.append)
    assert info.value.code == 1236
    assert (
        info.value.server_message == "Could not find first log file name in binary log index file"
    )
    assert sleeps == []  # not retried


def cuts_for(files: list[LogFile]) -> list[Cut]:
    """Breaks at every kind of place: inside transactions (between events and mid-packet),
    between transactions, on the ROTATE ending a file, at a file's first event."""
    cuts = []
    for file in files:
        events = file.events
        gtid_at = [i for i, e in enumerate(events) if e.gtid is not None]
        inner = events[gtid_at[0] + 2]
        cuts.append(Cut(file.name, inner.offset, "before"))
        cuts.append(Cut(file.name, events[gtid_at[-1] + 1].offset, "mid"))
        if len(gtid_at) > 1:
            cuts.append(Cut(file.name, events[gtid_at[1]].offset, "error"))
        cuts.append(Cut(file.name, events[1].offset, "mid"))
        if events[-1].type_code == EventType.ROTATE:
            cuts.append(Cut(file.name, events[-1].offset, "before"))
    return cuts


@pytest.mark.parametrize("names", [CHAIN, PAYLOAD], ids=["chain", "payload"])
@pytest.mark.parametrize("by", ["position", "gtid"])
def test_reconnect_resumes_without_loss_or_duplicates(
    corpus_dir: Path, names: list[str], by: str
) -> None:
    files = paths(corpus_dir, names)
    logs = [load_binlog(p) for p in files]
    cuts = cuts_for(logs)
    expected = file_keys(files)
    sleeps: list[float] = []
    points: list[ResumePoint] = []
    start = "oldest" if by == "position" else logs[0].previous_gtids
    with (
        FakePrimary(files, cuts=cuts) as primary,
        time_limit(30),
        stream(
            primary,
            start=start,
            on_transaction=points.append,
            sleep=sleeps.append,
            reconnect=Backoff(initial=0.25, maximum=1.0),
        ) as events,
    ):
        got = keyed(list(events))
        reconnects = events.reconnects
    assert primary.cuts == [] and len(primary.cuts_done) == len(cuts)
    assert reconnects == len(cuts)
    assert sleeps == [0.25] * len(cuts)  # each new dump delivered events: the backoff restarts
    if by == "gtid":
        # A GTID dump starts in the file holding the next transaction, as the source picks it:
        # a ROTATE ending the file before may not come again, and the FDE comes as log_pos 0.
        expected, got = without_structure(expected), without_structure(got)
    assert got == expected
    assert len(points) == transactions(logs)
    assert len({(p.file, p.position) for p in points}) == len(points)
    resumed = [s.dump for s in primary.sessions if s.dump][1:]
    if by == "gtid":
        assert all(isinstance(d, BinlogDumpGtid) for d in resumed)
    else:
        assert all(isinstance(d, BinlogDump) and d.position >= 4 for d in resumed)


def test_blocking_dump_ended_by_eof_resumes(chain: list[Path]) -> None:
    """MariaDB ends a blocking dump with a plain EOF when it shuts down: that is a lost
    connection to resume from, not the end of the stream."""
    logs = [load_binlog(p) for p in chain]
    events = logs[0].events
    middle = [i for i, e in enumerate(events) if e.gtid is not None][1]
    expected = file_keys(chain)
    with (
        FakePrimary(chain, cuts=[Cut(logs[0].name, events[middle + 1].offset, "eof")]) as primary,
        time_limit(30),
        stream(primary, start="oldest", blocking=True, sleep=lambda _: None) as stream_events,
    ):
        got = []
        for event in stream_events:
            got.append(event)
            if len(got) == len(expected):
                break
        reconnects = stream_events.reconnects
    assert primary.cuts == [] and reconnects == 1
    assert keyed(got) == expected


def test_backoff_doubles_while_the_primary_is_away(chain: list[Path]) -> None:
    sleeps: list[float] = []
    expected = file_keys(chain)
    with FakePrimary(chain) as primary:
        primary.refuse(4)
        got = keyed(
            streamed(
                primary,
                start="oldest",
                sleep=sleeps.append,
                reconnect=Backoff(0.1, 0.5, first_attempts=None),
            )
        )
    assert sleeps == [0.1, 0.2, 0.4, 0.5]
    assert got == expected


def test_backoff_gives_up_after_its_attempts(chain: list[Path]) -> None:
    sleeps: list[float] = []
    with FakePrimary(chain) as primary:
        primary.refuse(10)
        with pytest.raises(ConnectionLost):
            streamed(
                primary,
                start="oldest",
                sleep=sleeps.append,
                reconnect=Backoff(attempts=2, first_attempts=None),
            )
    assert sleeps == [0.1, 0.2]
    assert primary.connections == 3


def test_heartbeats_while_idle(chain: list[Path]) -> None:
    with (
        FakePrimary(chain) as primary,
        time_limit(30),
        stream(
            primary, start="now", blocking=True, heartbeat=0.05, include_stream_only=True
        ) as events,
    ):
        beats: list[tuple[Event, ResumePoint]] = []
        for event, point in events.pairs():
            if event.header.type_code == EventType.HEARTBEAT:
                beats.append((event, point))
                if len(beats) == 3:
                    break
    last = primary.files[-1]
    for beat, point in beats:
        assert (beat.log_file, beat.position) == (last.name, last.size)  # type: ignore[attr-defined]
        assert (point.file, point.position) == (last.name, last.size)


def test_semi_sync_acknowledges_the_tail_of_each_file(chain: list[Path]) -> None:
    """The server asks for an ACK at the last event of what each file holds (here each
    file's ROTATE, which the stream acknowledges as the start of the next file)."""
    expected = file_keys(chain)
    got: list[Event] = []
    with (
        FakePrimary(chain, semi_sync=True) as primary,
        time_limit(30),
        stream(primary, start="oldest", blocking=True, semi_sync=True) as events,
    ):
        for event, point in events.pairs():
            got.append(event)
            if len(got) == len(expected):
                assert point.complete
                break
    assert keyed(got) == expected
    (session,) = [s for s in primary.sessions if s.dump]
    assert session.variables["rpl_semi_sync_replica"] == "1"
    acks = [(a.file, a.position) for a in primary.acks]
    assert acks[:2] == [(chain[1].name, 4), (chain[2].name, 4)]
    assert all(isinstance(a, SemiSyncAck) for a in primary.acks)


# -- shutting a connection down from another thread ----------------------------------------


def blocked_fetch(rpl: ReplicaStream) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            while rpl.fetch() is not None:
                pass
        except BaseException as err:
            errors.append(err)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, errors


def test_abort_wakes_a_blocked_fetch(chain: list[Path]) -> None:
    with FakePrimary(chain) as primary, time_limit(30):
        rpl = ReplicaStream(primary.url, server_id=43, heartbeat=None)
        rpl.open("now")
        assert rpl.fetch() is not None and rpl.fetch() is not None  # fake ROTATE, FDE
        thread, errors = blocked_fetch(rpl)
        thread.join(0.2)
        assert thread.is_alive()  # nothing more to send: the fetch waits
        rpl.abort()
        thread.join(10)
        assert not thread.is_alive()
        assert len(errors) == 1 and isinstance(errors[0], ConnectionLost)
        rpl.abort()  # twice: nothing happens
        assert rpl.state == "closed"


def test_shutdown_is_safe_on_a_dead_connection(chain: list[Path]) -> None:
    with FakePrimary(chain) as primary, time_limit(30):
        conn = MySQLConnection.connect(primary.spec)
        conn.shutdown()
        conn.shutdown()
        with pytest.raises(ConnectionLost):
            conn.ping()
        conn.close()
        conn.shutdown()
        assert conn.closed


def test_async_shutdown_from_another_thread(chain: list[Path]) -> None:
    async def run(primary: FakePrimary) -> BaseException | None:
        conn = await AsyncMySQLConnection.connect(primary.spec)
        await conn.execute("SET @source_binlog_checksum = 'CRC32'")
        last = primary.files[-1]
        await conn.send_command(BinlogDump(last.name, last.size, 44).encode())
        await conn.read_packet()  # fake ROTATE
        await conn.read_packet()  # FDE
        reading = asyncio.create_task(conn.read_packet())
        await asyncio.sleep(0.1)
        assert not reading.done()
        await asyncio.to_thread(conn.shutdown)
        done, _ = await asyncio.wait([reading], timeout=10)
        conn.shutdown()
        await conn.close()
        conn.shutdown()
        return reading.exception() if done else None

    with FakePrimary(chain) as primary, time_limit(30):
        error = asyncio.run(run(primary))
    assert isinstance(error, ConnectionLost)


@pytest.mark.parametrize(
    ("command", "tail_format"),
    [
        (["events"], "events"),
        (["events", "--format", "jsonl"], "events-jsonl"),
        (["rows", "--format", "text"], "text"),
        (["rows"], "jsonl"),
    ],
)
def test_tail_prints_what_the_file_commands_print(
    chain: list[Path], command: list[str], tail_format: str
) -> None:
    from click.testing import CliRunner

    from binlogkit.cli.main import cli

    runner = CliRunner()
    expected = runner.invoke(cli, [*command, *map(str, chain)])
    assert expected.exit_code == 0, expected.output
    assert expected.output.count("\n") >= 10
    with FakePrimary(chain) as primary, time_limit(30):
        args = ["tail", primary.url, "--oldest", "--non-blocking", "--server-id", "45"]
        got = runner.invoke(cli, [*args, "--format", tail_format])
    assert got.exit_code == 0, got.output
    assert got.output == expected.output


def test_a_first_connection_that_fails_is_final(chain: list[Path]) -> None:
    sleeps: list[float] = []
    with FakePrimary(chain) as primary:
        primary.refuse(1)
        with pytest.raises(ConnectionLost):
            streamed(primary, start="oldest", sleep=sleeps.append)
        assert primary.connections == 1 and sleeps == []
        primary.refuse(2)
        got = streamed(
            primary, start="oldest", sleep=sleeps.append, reconnect=Backoff(first_attempts=2)
        )
    assert keyed(got) == file_keys(chain) and sleeps == [0.1, 0.2]


def test_relay_backoff_restarts_after_each_working_connection(
    chain: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cuts = cuts_for([load_binlog(p) for p in chain])
    waits: list[float] = []
    with FakePrimary(chain, cuts=cuts) as primary, time_limit(30):
        relay = BinlogRelay(primary.url, tmp_path, blocking=False, server_id=43)
        monkeypatch.setattr(relay._stop, "wait", waits.append)
        relay.run()
    assert len(cuts) > 1 and waits == [RECONNECT.initial] * len(cuts)


def test_relay_gives_up_on_a_first_connection(chain: list[Path], tmp_path: Path) -> None:
    with FakePrimary(chain) as primary, time_limit(30):
        primary.refuse(1)
        with pytest.raises(ConnectionLost):
            BinlogRelay(primary.url, tmp_path, blocking=False, server_id=43).run()
        assert primary.connections == 1


def test_tail_and_relay_say_where_they_stream_from(
    chain: list[Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first = load_binlog(chain[0]).name
    with FakePrimary(chain) as primary, time_limit(30):
        for args in (["tail", "--oldest", "--non-blocking"], ["relay", "--non-blocking", "--to"]):
            if args[0] == "relay":
                args.append(str(tmp_path / "copy"))
            result = CliRunner().invoke(cli, [args[0], primary.url, *args[1:]])
            assert result.exit_code == 0, result.output
            connected = f"connected to 127.0.0.1:{primary.port} (8.4.3), streaming from {first}:4"
            assert connected in caplog.text
            caplog.clear()


def test_relay_reports_progress_and_lag(
    chain: list[Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(relay_module, "PROGRESS_EVERY", 0.0)
    caplog.set_level(logging.INFO, logger="binlogkit.progress")
    with FakePrimary(chain) as primary, time_limit(30):
        BinlogRelay(primary.url, tmp_path, blocking=False, server_id=43).run()
    assert re.search(r"relay: copied at mysql-bin\.\d+:\d+, \d+ s behind", caplog.text)
