"""Live: the replication stream of a real MariaDB 10.11 against its own binlog files.

The events a stream gives must be the events ``binlogkit.open`` reads from
the server's files: same types, same files and offsets, same row values
(the only difference allowed: the active file's format description carries
BINLOG_IN_USE in the file, which the server clears when it sends it).
"""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest
from time_limit import time_limit

import binlogkit
from binlogkit.binlog.constants import EventFlag, EventType
from binlogkit.binlog.events import Event
from binlogkit.errors import ProtocolError, ServerError
from binlogkit.gtid import MariaGtidList
from binlogkit.io.mysql import MySQLConnection
from binlogkit.protocol.replication import DumpFlag, ResumePoint
from binlogkit.protocol.spec import ConnectionSpec
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.services.replica_stream import BinlogStream, ReplicaStream, StreamStateError

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

Key = tuple[str, int, Event]


def url(server: MariaDBSandbox) -> str:
    return f"mariadb://root@127.0.0.1:{server.port}"


def normal(event: Event) -> Event:
    """The event with the FDE's BINLOG_IN_USE flag cleared (the server sends it cleared)."""
    header = event.header
    if header.type_code == EventType.FORMAT_DESCRIPTION and header.flags & EventFlag.BINLOG_IN_USE:
        flags = header.flags & ~EventFlag.BINLOG_IN_USE
        return replace(event, header=replace(header, flags=flags))  # type: ignore[call-arg]
    return event


def keyed(events: list[Event]) -> list[Key]:
    return [(Path(e.header.file or "").name, e.header.offset, normal(e)) for e in events]


def file_events(server: MariaDBSandbox) -> list[Key]:
    with binlogkit.open([str(p) for p in server.binlog_files()]) as reader:
        return keyed(list(reader))


def stream_events(server: MariaDBSandbox, **options: object) -> list[Event]:
    options.setdefault("server_id", 101)
    with time_limit(60), binlogkit.open(url(server), blocking=False, **options) as stream:
        return list(stream)


def test_oldest_equals_the_files(stream_server: MariaDBSandbox) -> None:
    streamed = keyed(stream_events(stream_server, start="oldest"))
    expected = file_events(stream_server)
    assert len({name for name, _, _ in expected}) == 3
    assert any(e.header.type_name.startswith("WRITE_ROWS") for _, _, e in expected)
    assert streamed == expected


def test_without_annotate_rows_equals_the_files_without_them(
    stream_server: MariaDBSandbox,
) -> None:
    streamed = keyed(stream_events(stream_server, start="oldest", annotate_rows=False))
    expected = file_events(stream_server)
    annotate = [k for k in expected if k[2].header.type_code == EventType.MARIADB_ANNOTATE_ROWS]
    assert annotate  # the server logs them: the stream leaves them out
    assert streamed == [k for k in expected if k not in annotate]


def test_start_by_position(stream_server: MariaDBSandbox) -> None:
    expected = file_events(stream_server)
    second = sorted({name for name, _, _ in expected})[1]
    gtids = [
        k for k in expected if k[0] == second and k[2].header.type_code == EventType.MARIADB_GTID
    ]
    name, offset, _ = gtids[1]
    streamed = keyed(stream_events(stream_server, start=(name, offset)))
    assert streamed == expected[expected.index(gtids[1]) :]


def test_start_by_gtid(stream_server: MariaDBSandbox) -> None:
    expected = file_events(stream_server)
    groups = [k for k in expected if k[2].header.type_code == EventType.MARIADB_GTID]
    after = groups[-3][2].gtid  # type: ignore[attr-defined]
    streamed = keyed(stream_events(stream_server, start=str(after)))
    delivered = [k[2].gtid for k in streamed if k[2].header.type_code == EventType.MARIADB_GTID]  # type: ignore[attr-defined]
    assert delivered == [k[2].gtid for k in groups[-2:]]  # type: ignore[attr-defined]
    # every event given is the file's event at that place; the two groups come whole
    assert all(k in expected for k in streamed)
    assert streamed[-1] == expected[-1]
    start = expected.index(groups[-2])
    assert streamed[-(len(expected) - start) :] == expected[start:]


def test_resume_points_and_transaction_callback(stream_server: MariaDBSandbox) -> None:
    points: list[ResumePoint] = []
    with time_limit(60):
        stream = BinlogStream(
            url(stream_server),
            server_id=102,
            start="oldest",
            blocking=False,
            on_transaction=points.append,
        )
        pairs = list(stream.pairs())
    expected = file_events(stream_server)
    groups = [k for k in expected if k[2].header.type_code == EventType.MARIADB_GTID]
    assert len(points) == len(groups)
    for event, point in pairs:
        if event.header.type_code != EventType.ROTATE:
            assert (point.file, point.position) == (event.header.file, event.header.end)
    final = points[-1]
    binlog_pos = stream_server.query("SELECT @@gtid_binlog_pos")[0][0]
    assert str(final.gtids) == binlog_pos
    last_xid = [k for k in expected if k[2].header.type_code == EventType.XID][-1]
    assert (final.file, final.position) == (last_xid[0], last_xid[2].header.end)
    end = stream.resume_point
    assert end is not None and end.complete and end.gtids == final.gtids
    assert (end.file, end.position) == (expected[-1][0], expected[-1][2].header.end)


def test_low_level_fetch_gives_the_file_bytes(stream_server: MariaDBSandbox) -> None:
    files = stream_server.binlog_files()
    data = files[0].read_bytes()
    with time_limit(60), ReplicaStream(url(stream_server), server_id=103, heartbeat=None) as rpl:
        with pytest.raises(StreamStateError):
            rpl.fetch()
        request = rpl.open(file=files[0].name, flags=DumpFlag.NON_BLOCK)
        assert (request.file, request.position) == (files[0].name, 4)
        with pytest.raises(StreamStateError):
            rpl.open()
        conn = rpl.connection
        assert conn is not None
        with pytest.raises(ProtocolError):
            conn.query("SELECT 1")  # a query while streaming: refused, stream unharmed
        raws = []
        while (raw := rpl.fetch()) is not None:
            assert rpl.size == len(raw) and rpl.buffer == raw
            raws.append(raw)
        assert rpl.size == 0
        assert rpl.fetch() is None
    # past the fake ROTATE, the first file comes byte for byte, then the next file's FDE
    body = b"".join(raws[1:])
    assert body.startswith(data[4:])
    assert raws[0][4] == EventType.ROTATE and raws[0][17] & EventFlag.ARTIFICIAL


@pytest.mark.parametrize(
    ("start", "message"),
    [
        (("mysql-bin.999999", 4), "Could not find first log file name in binary log index file"),
        (("mysql-bin.000001", 5), "bogus data in log event"),
    ],
)
def test_server_refusals_carry_its_message(
    stream_server: MariaDBSandbox, start: tuple[str, int], message: str
) -> None:
    with time_limit(60), pytest.raises(ServerError) as info:
        stream_events(stream_server, start=start, reconnect=None)
    assert info.value.code == 1236
    assert message.lower() in info.value.server_message.lower()


def test_parameters_checked_before_anything_is_sent(stream_server: MariaDBSandbox) -> None:
    def no_connection(spec: ConnectionSpec) -> MySQLConnection:
        raise AssertionError("connected despite bad parameters")

    bad: list[dict[str, object]] = [
        {"server_id": 0},
        {"server_id": 1 << 32},
        {"start": ("mysql-bin.000001", 2)},
        {"start": ("../etc/passwd", 4)},
        {"start": ("mysql-bin.000001", 1 << 32)},
        {"start": "not-a-gtid"},
    ]
    for options in bad:
        options = {"server_id": 104, **options}
        with pytest.raises(ValueError):
            BinlogStream(url(stream_server), connect=no_connection, **options)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        ReplicaStream(url(stream_server), server_id=104, connect=no_connection).open(
            file="a/b", position=4
        )
    # MySQL GTIDs on a MariaDB server: refused before the dump is sent
    with time_limit(30), pytest.raises(ValueError, match="MariaDB"):
        stream_events(stream_server, start="3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5")


def test_now_blocking_and_heartbeats(stream_server: MariaDBSandbox) -> None:
    with time_limit(60):
        stream = BinlogStream(
            url(stream_server), server_id=105, start="now", heartbeat=0.2, include_stream_only=True
        )
        with stream:
            events = stream.pairs()
            first, point = next(events)  # the fake ROTATE: the dump is open
            assert first.header.type_code == EventType.ROTATE
            file, position = stream_server.query("SHOW MASTER STATUS")[0][:2]
            assert (point.file, point.position) == (file, int(position))
            beats = []
            for event, point in events:
                if event.header.type_code == EventType.HEARTBEAT:
                    beats.append((event, point))
                    if len(beats) == 2:
                        break
            for beat, point in beats:
                assert (beat.log_file, beat.position) == (file, int(position))  # type: ignore[attr-defined]
                assert (point.file, point.position) == (file, int(position))
            stream_server.execute("INSERT INTO s.k VALUES (10, 'now')")
            rows = []
            for event, point in events:  # noqa: B007 - the point after the XID is checked
                if event.header.type_name.startswith("WRITE_ROWS"):
                    rows.extend(r.after for r in event.rows)  # type: ignore[attr-defined]
                if event.header.type_code == EventType.XID:
                    break
            assert rows == [{"id": 10, "v": "now"}]
            assert point.complete and point.file == file and point.position > int(position)


def test_abort_from_another_thread_ends_a_blocked_iteration(
    stream_server: MariaDBSandbox,
) -> None:
    stream = BinlogStream(
        url(stream_server), server_id=110, start="now", heartbeat=None, include_stream_only=True
    )
    given: list[Event] = []
    errors: list[BaseException] = []

    def follow() -> None:
        try:
            given.extend(stream)
        except BaseException as err:  # handed to the test thread
            errors.append(err)

    with time_limit(60):
        reader = threading.Thread(target=follow)
        reader.start()
        while not given:  # the fake ROTATE: the dump is open
            reader.join(0.05)
            assert reader.is_alive(), errors
        stream_server.execute("INSERT INTO s.k VALUES (11, 'before abort')")
        while not any(e.header.type_code == EventType.XID for e in given):
            reader.join(0.05)
            assert reader.is_alive(), errors
        reader.join(0.5)
        assert reader.is_alive()  # blocked on the server: nothing more to read
        stream.abort()
        reader.join(10)
        assert not reader.is_alive()
    assert errors == []
    assert stream.reconnects == 0
    assert given[-1].header.type_code == EventType.XID


def test_kill_dump_thread_resumes_without_loss_or_duplicates(
    stream_server: MariaDBSandbox,
) -> None:
    """The dump thread is killed in the middle of big transactions; the stream goes on exactly.

    Each transaction holds megabytes of rows and is committed only once the
    stream has given the one before. The dump thread of the stream's live
    connection is killed at the first row event of each, so every kill
    breaks the stream before it has the next transaction: when the break is
    noticed mid-transaction, the stream resumes before that transaction and
    skips the events it already gave; when the socket buffers held the whole
    transaction, it resumes after it. Either way nothing is lost or repeated,
    and there is one reconnect per kill.

    Only the live connection's thread is killed, once: a KILL returns before
    the thread is gone and the stream goes on giving what it received before
    the kill, so killing whatever SHOW PROCESSLIST lists as "Binlog Dump"
    would hit the dying thread again (no effect, or "Unknown thread id" once
    it has gone), and under load fewer kills than counted would break the stream.
    """
    stream_server.execute("CREATE TABLE s.big (id INT PRIMARY KEY, v MEDIUMTEXT)")
    big = [
        "BEGIN;"
        + "".join(
            f"INSERT INTO s.big VALUES ({t * 100 + r}, REPEAT('{t}', 200000));" for r in range(20)
        )
        + "COMMIT"
        for t in range(5)
    ]
    # a small transaction after the big ones: the stream must notice the last kill to get it
    workload = [*big, "INSERT INTO s.k VALUES (30, 'marker')"]

    committed: list[str] = []

    def commit_next() -> MariaGtidList:
        committed.append(workload.pop(0))
        stream_server.execute(committed[-1])
        return MariaGtidList.parse(stream_server.query("SELECT @@gtid_binlog_pos")[0][0] or "")

    points: list[ResumePoint] = []
    got: list[Event] = []
    connections: list[MySQLConnection] = []
    killed: list[int] = []

    def connect(spec: ConnectionSpec) -> MySQLConnection:
        connections.append(MySQLConnection.connect(spec))
        return connections[-1]

    admin = MySQLConnection.connect(ConnectionSpec.from_url(url(stream_server)))
    with time_limit(120), admin:
        stream = BinlogStream(
            url(stream_server),
            server_id=106,
            start="oldest",
            on_transaction=points.append,
            sleep=lambda seconds: None,
            connect=connect,
        )
        target = commit_next()
        with stream:
            for event, point in stream.pairs():
                got.append(event)
                live = connections[-1].connection_id
                if (
                    event.header.type_code == EventType.TABLE_MAP
                    and event.table_name == "big"  # type: ignore[attr-defined]
                    and got[-2].header.type_code == EventType.MARIADB_ANNOTATE_ROWS
                    and len(killed) < len(committed)  # one kill per transaction
                ):
                    assert live not in killed
                    admin.execute(f"KILL {live}")
                    killed.append(live)
                if point.complete and point.gtids == target:
                    if not workload:
                        break
                    target = commit_next()
    stream_server.wait_for_checkpoint()  # no rotation since the fixture's: returns at once
    assert len(killed) == len(big)
    assert stream.reconnects == len(killed)
    assert keyed(got) == file_events(stream_server)
    assert len(points) == len({(p.file, p.position) for p in points})


def test_semi_sync_acknowledges(stream_server: MariaDBSandbox) -> None:
    stream_server.execute(
        "SET GLOBAL rpl_semi_sync_master_wait_no_slave = OFF,"
        " rpl_semi_sync_master_timeout = 30000, rpl_semi_sync_master_enabled = ON"
    )

    def status(name: str) -> int:
        return int(stream_server.query(f"SHOW GLOBAL STATUS LIKE '{name}'")[0][1] or 0)

    try:
        yes, no = status("Rpl_semi_sync_master_yes_tx"), status("Rpl_semi_sync_master_no_tx")
        with time_limit(60):
            stream = BinlogStream(
                url(stream_server),
                server_id=107,
                start="now",
                semi_sync=True,
                heartbeat=0.5,
                include_stream_only=True,
            )
            with stream:
                events = stream.pairs()
                next(events)  # the dump is open
                writer = threading.Thread(
                    target=stream_server.execute, args=("INSERT INTO s.k VALUES (20, 'semi')",)
                )
                writer.start()
                for event, _point in events:
                    if event.header.type_code == EventType.XID:
                        break
                next(events)  # hand the XID back: its ACK goes out before the next read
                writer.join(30)
                assert not writer.is_alive()
        assert status("Rpl_semi_sync_master_yes_tx") == yes + 1
        assert status("Rpl_semi_sync_master_no_tx") == no
    finally:
        stream_server.execute("SET GLOBAL rpl_semi_sync_master_enabled = OFF")


def test_tail_prints_what_rows_prints_for_the_files(stream_server: MariaDBSandbox) -> None:
    from click.testing import CliRunner

    from binlogkit.cli.main import cli

    runner = CliRunner()
    files = [str(p) for p in stream_server.binlog_files()]
    expected = runner.invoke(cli, ["rows", *files])
    assert expected.exit_code == 0, expected.output
    with time_limit(60):
        got = runner.invoke(
            cli, ["tail", url(stream_server), "--oldest", "--non-blocking", "--server-id", "108"]
        )
    assert got.exit_code == 0, got.output
    assert got.output == expected.output
    assert got.output.count("\n") > 20
    with time_limit(60):
        missing = runner.invoke(
            cli, ["tail", url(stream_server), "--start-file", "mysql-bin.999999", "--non-blocking"]
        )
    assert missing.exit_code == 1
    assert "Could not find first log file name" in missing.output
