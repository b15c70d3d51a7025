"""binlogkit's binlog server, read by binlogkit's own clients, on real MariaDB binlogs.

Two files of a MariaDB 11.8 primary (GTIDs, transactions) are served from a
folder. The stream must equal the files when the second file appears while
the stream waits at the end of the first (in two halves, the cut inside an
event); a client can end its own other connection with KILL, as a stopping
replica does; queries and commands the server does not know, wrong
passwords and names outside the folder get the errors a primary gives, and
the connection stays usable after a query error; TLS works.
"""

from __future__ import annotations

import random
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_primary import file_keys, keyed
from time_limit import time_limit
from tls_certs import TlsFiles

import binlogkit
from binlogkit.binlog.constants import EventType
from binlogkit.binlog.events import Event
from binlogkit.errors import AuthError, BinlogError, ConnectionLost, ServerError
from binlogkit.io.binlog_index import write_index
from binlogkit.io.mysql import MySQLConnection
from binlogkit.protocol.auth.base import Secret
from binlogkit.protocol.replication import BinlogDump, RegisterSlave
from binlogkit.protocol.spec import ConnectionSpec
from binlogkit.services.binlog_directory import BinlogDirectory
from binlogkit.services.binlog_server import BinlogServer, BinlogServerThread, User
from binlogkit.services.replica_stream import BinlogStream

pytestmark = pytest.mark.corpus

CHAIN = "mariadb-operator+mariadb-poc/mariadb-binlog/binlogs/domain_id_0/mariadb-repl-bin.0000"
FILES = [f"{CHAIN}04", f"{CHAIN}05"]
USERS = [
    User("repl", Secret("pw")),
    User("other", Secret("pw2"), "client_ed25519"),
    User("mysql8", Secret("pw4"), "caching_sha2_password"),
]


@pytest.fixture
def folder(corpus_dir: Path, tmp_path: Path) -> Path:
    """The first file alone, with its index."""
    folder = tmp_path / "served"
    folder.mkdir()
    first = corpus_dir / FILES[0]
    (folder / first.name).write_bytes(first.read_bytes())
    write_index(folder / "mariadb-repl-bin.index", [first.name])
    return folder


def add_second(corpus_dir: Path, folder: Path, at: int | None = None) -> None:
    """Write the second file (its first ``at`` bytes only, if given) and list it."""
    second = corpus_dir / FILES[1]
    data = second.read_bytes()
    (folder / second.name).write_bytes(data if at is None else data[:at])
    write_index(folder / "mariadb-repl-bin.index", [Path(FILES[0]).name, second.name])


@pytest.fixture
def served(folder: Path) -> Iterator[BinlogServer]:
    server = BinlogServer(folder, USERS, server_id=77)
    with BinlogServerThread(server), time_limit(30):
        yield server


def url(server: BinlogServer, user: str = "repl", password: str = "pw") -> str:
    return f"mariadb://{user}:{password}@127.0.0.1:{server.port}"


@pytest.mark.parametrize(("user", "password"), [("other", "pw2"), ("mysql8", "pw4")])
def test_each_users_plugin(served: BinlogServer, user: str, password: str) -> None:
    spec = ConnectionSpec.from_url(url(served, user, password))
    with MySQLConnection.connect(spec) as conn:
        assert conn.query("SELECT 1").rows == [("1",)]
    with pytest.raises(AuthError):
        MySQLConnection.connect(ConnectionSpec.from_url(url(served, user, "wrong")))


def test_greets_as_the_binlogs_server(served: BinlogServer) -> None:
    with MySQLConnection.connect(ConnectionSpec.from_url(url(served))) as conn:
        assert conn.is_mariadb and conn.server_version == "5.5.5-11.8.5-MariaDB-ubu2404-log"
        rows = conn.query("SELECT @@server_id, @@gtid_binlog_pos, @@binlog_checksum").rows
        assert rows == [("77", "0-10-262580", "CRC32")]  # the last GTID of the served file


def test_stream_follows_a_file_that_appears(
    served: BinlogServer, corpus_dir: Path, folder: Path
) -> None:
    expected = file_keys([corpus_dir / f for f in FILES])
    second_size = (corpus_dir / FILES[1]).stat().st_size
    got = []
    with BinlogStream(url(served), start="oldest", server_id=41, blocking=True) as events:
        for event in events:
            got.append(event)
            if event.header.type_code == EventType.ROTATE and len(got) > 2:
                # the stream waits at the end of the first file: the second comes in two parts
                add_second(corpus_dir, folder, at=second_size // 2 + 5)
                rest = threading.Timer(0.3, add_second, (corpus_dir, folder))
                rest.start()
            if len(got) == len(expected):
                break
    rest.join()
    assert keyed(got) == expected


def test_kill_ends_the_users_other_connection(served: BinlogServer) -> None:
    spec = ConnectionSpec.from_url(url(served))
    with MySQLConnection.connect(spec) as dumping, MySQLConnection.connect(spec) as killer:
        dumping.execute("SET @master_binlog_checksum = 'CRC32'")
        name = Path(FILES[0]).name
        dumping.send_command(BinlogDump(name, 4, 44).encode())
        dumping.read_packet()  # fake ROTATE
        with pytest.raises(ServerError) as info:
            killer.execute("KILL 9999")
        assert (info.value.code, info.value.server_message) == (1094, "Unknown thread id: 9999")
        killer.execute(f"KILL {dumping.connection_id}")
        with pytest.raises(ConnectionLost):
            while True:
                dumping.read_packet()
        other = ConnectionSpec.from_url(url(served, "other", "pw2"))
        with MySQLConnection.connect(other) as stranger:
            with pytest.raises(ServerError) as info:
                stranger.execute(f"KILL {killer.connection_id}")
            assert info.value.code == 1095
        killer.ping()


def test_unknown_queries_and_commands_are_errors(served: BinlogServer) -> None:
    with MySQLConnection.connect(ConnectionSpec.from_url(url(served))) as conn:
        with pytest.raises(ServerError) as info:
            conn.query("SELECT * FROM mysql.user")
        assert (info.value.code, info.value.sql_state) == (1064, "42000")
        conn.send_command(bytes([0x04]) + b"t\0")  # COM_FIELD_LIST
        with pytest.raises(ServerError) as info:
            conn.read_packet()
        assert (info.value.code, info.value.server_message) == (1047, "Unknown command")
        assert conn.query("SELECT 1").rows == [("1",)]  # still usable


def test_binlog_gtid_pos(served: BinlogServer, corpus_dir: Path) -> None:
    with binlogkit.open(str(corpus_dir / FILES[0])) as events:
        gtids = [e for e in events if e.header.type_code == EventType.MARIADB_GTID]
    third = gtids[2]
    with MySQLConnection.connect(ConnectionSpec.from_url(url(served))) as conn:
        name = Path(FILES[0]).name
        asked = f"SELECT BINLOG_GTID_POS('{name}', {third.header.offset}), "
        asked += "BINLOG_GTID_POS('nope.000001', 4)"
        assert conn.query(asked).rows == [(str(gtids[1].gtid), None)]  # type: ignore[attr-defined]


def test_wrong_password_and_names_outside_the_folder(
    served: BinlogServer, folder: Path, tmp_path: Path
) -> None:
    with pytest.raises(AuthError) as refused:
        MySQLConnection.connect(ConnectionSpec.from_url(url(served, password="wrong")))
    assert "Access denied for user 'repl'@'127.0.0.1' (using password: YES)" in str(refused.value)
    assert "wrong" not in str(refused.value)
    (tmp_path / "secret.000001").write_bytes(b"\xfebin")
    (folder / "link.000001").symlink_to(tmp_path / "secret.000001")
    write_index(folder / "mariadb-repl-bin.index", [Path(FILES[0]).name, "link.000001"])
    assert served.directory.names() == [Path(FILES[0]).name]
    for name in ("../secret.000001", "link.000001"):
        with MySQLConnection.connect(ConnectionSpec.from_url(url(served))) as conn:
            conn.execute("SET @master_binlog_checksum = 'CRC32'")
            conn.send_command(BinlogDump(name, 4, 45).encode())
            with pytest.raises(ServerError) as info:
                conn.read_packet()
        assert info.value.code == 1236
        assert "Could not find first log file name" in info.value.server_message


def test_tls(folder: Path, tls_files: TlsFiles, corpus_dir: Path) -> None:
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tls_files.server_cert, tls_files.server_key)
    users = [*USERS, User("secure", Secret("pw3"), require_tls=True)]
    server = BinlogServer(folder, users, tls=context)
    tls = f"?ssl-mode=verify-identity&ssl-ca={tls_files.ca}"
    with BinlogServerThread(server), time_limit(30):
        with MySQLConnection.connect(ConnectionSpec.from_url(url(server) + tls)) as conn:
            assert conn.tls_active
        secure = url(server, "secure", "pw3")
        with MySQLConnection.connect(ConnectionSpec.from_url(secure + tls)) as conn:
            assert conn.tls_active
        plain = ConnectionSpec.from_url(secure + "?ssl-mode=disabled")
        with pytest.raises(AuthError) as refused:
            MySQLConnection.connect(plain)
        message = "Access denied for user 'secure'@'127.0.0.1' (using password: YES)"
        assert message in str(refused.value)
        with BinlogStream(
            url(server) + tls, start="oldest", server_id=46, blocking=False
        ) as events:
            got = list(events)
    assert keyed(got) == file_keys([corpus_dir / FILES[0]])


def test_silent_and_oversized_logins_are_dropped(served: BinlogServer) -> None:
    served.login_timeout = 0.3
    silent = socket.create_connection(("127.0.0.1", served.port))
    huge = socket.create_connection(("127.0.0.1", served.port))
    try:
        for sock in (silent, huge):
            sock.settimeout(5)
            assert sock.recv(1 << 16)[4] == 10  # the greeting, protocol version 10
        huge.sendall(b"\xff\xff\xff\x01")  # announces a 16 MiB handshake response
        assert huge.recv(1 << 16) == b""  # closed at once
        with MySQLConnection.connect(ConnectionSpec.from_url(url(served))) as conn:
            assert conn.query("SELECT 1").rows == [("1",)]
        assert silent.recv(1 << 16) == b""  # closed after the login timeout
    finally:
        silent.close()
        huge.close()


def test_processlist_and_replicas_show_each_dump(served: BinlogServer, corpus_dir: Path) -> None:
    spec = ConnectionSpec.from_url(url(served))
    name = Path(FILES[0]).name
    size = (corpus_dir / FILES[0]).stat().st_size
    with MySQLConnection.connect(spec) as dumping, MySQLConnection.connect(spec) as watcher:
        dumping.execute("SET @master_binlog_checksum = 'CRC32'")
        dumping.send_command(RegisterSlave(41, "replica-a", port=3310).encode())
        dumping.read_packet()
        dumping.end_command()
        dumping.send_command(BinlogDump(name, 4, 41).encode())
        deadline = time.monotonic() + 20
        while True:
            rows = watcher.query("SHOW PROCESSLIST").rows
            states = {r[0]: (r[1], r[4], r[6]) for r in rows}
            if states[str(dumping.connection_id)][2].startswith("waiting"):
                break
            assert time.monotonic() < deadline, states
            time.sleep(0.05)  # the file fits in the socket buffers: no need to read it
        assert states[str(dumping.connection_id)] == (
            "repl",
            "Binlog Dump",
            f"waiting for more at {name}:{size}",
        )
        assert states[str(watcher.connection_id)] == ("repl", "Sleep", "")
        replicas = watcher.query("SHOW SLAVE HOSTS")
        assert replicas.rows == [("41", "replica-a", "3310", "77")]


def test_an_oversized_packet_ends_the_connection(served: BinlogServer) -> None:
    spec = ConnectionSpec.from_url(url(served))
    with MySQLConnection.connect(spec) as hostile, MySQLConnection.connect(spec) as other:
        hostile.send_command(b"\x03" + b"x" * (2 << 20))  # a 2 MiB query: over the limit
        with pytest.raises(ConnectionLost):
            hostile.read_packet()
        assert other.query("SELECT 1").rows == [("1",)]
        assert list(served.sessions) == [other.connection_id]


def test_hostile_clients_do_not_stop_a_replica(
    served: BinlogServer, corpus_dir: Path, folder: Path
) -> None:
    """200 idle connections, random bytes, bad logins, names outside the folder and oversized
    packets while a stream follows the folder: it gets every event, those of the second
    file too, which appears after them."""
    expected = file_keys([corpus_dir / f for f in FILES])
    rng = random.Random(5)
    idle = [socket.create_connection(("127.0.0.1", served.port)) for _ in range(200)]
    got: list[Event] = []
    reading = threading.Thread(target=lambda: got.extend(read_all(served, len(expected))))
    reading.start()
    try:
        for round_ in range(20):
            with socket.create_connection(("127.0.0.1", served.port)) as garbage:
                garbage.recv(1 << 16)
                garbage.sendall(rng.randbytes(rng.randint(1, 3000)))
            with pytest.raises(AuthError):
                MySQLConnection.connect(ConnectionSpec.from_url(url(served, password=f"x{round_}")))
            with MySQLConnection.connect(ConnectionSpec.from_url(url(served))) as conn:
                conn.execute("SET @master_binlog_checksum = 'CRC32'")
                conn.send_command(BinlogDump(f"../{Path(FILES[0]).name}", 4, 50 + round_).encode())
                with pytest.raises(ServerError):
                    conn.read_packet()
            with MySQLConnection.connect(ConnectionSpec.from_url(url(served))) as conn:
                conn.send_command(b"\x03" + b"x" * (2 << 20))
                with pytest.raises(ConnectionLost):
                    conn.read_packet()
        assert reading.is_alive()  # waiting for more
        add_second(corpus_dir, folder)
        reading.join(30)
    finally:
        for sock in idle:
            sock.close()
    assert not reading.is_alive()
    assert keyed(got) == expected


def read_all(server: BinlogServer, count: int) -> list[Event]:
    """The first ``count`` events of a blocking stream from the oldest binlog."""
    got = []
    with BinlogStream(url(server), start="oldest", server_id=41, blocking=True) as events:
        for event in events:
            got.append(event)
            if len(got) == count:
                break
    return got


def test_directory_without_index_and_its_gtid_states(corpus_dir: Path, tmp_path: Path) -> None:
    for name in reversed(FILES):
        (tmp_path / Path(name).name).write_bytes((corpus_dir / name).read_bytes())
    (tmp_path / "notes.txt").write_text("not a binlog")
    directory = BinlogDirectory(tmp_path)
    first, second = (Path(n).name for n in FILES)
    assert directory.names() == [first, second]  # number order, without an index
    assert directory.flavor() == "mariadb" and directory.checksum() == "CRC32"
    assert str(directory.first_state()) == "0-10-262175"  # the first file's GTID_LIST
    with binlogkit.open(str(tmp_path / second)) as events:
        gtids = [e for e in events if e.header.type_code == EventType.MARIADB_GTID]
    assert str(directory.gtid_state()) == str(gtids[-1].gtid)  # type: ignore[attr-defined]
    at = gtids[3].header.offset
    assert str(directory.gtid_state(second, at)) == str(gtids[2].gtid)  # type: ignore[attr-defined]
    assert directory.next_name(first) == second and directory.next_name(second) is None
    with pytest.raises(BinlogError, match="is not a binlog of"):
        directory.file("notes.txt")


def test_idle_clients_time_out_but_waiting_dumps_do_not(
    served: BinlogServer, corpus_dir: Path, folder: Path
) -> None:
    """A logged-in client silent for longer than the idle timeout is closed; a stream whose
    dump waits (idle by nature) for as long still gets the file that appears after."""
    served.idle_timeout = 0.5
    expected = file_keys([corpus_dir / f for f in FILES])
    got: list[Event] = []
    reading = threading.Thread(target=lambda: got.extend(read_all(served, len(expected))))
    with MySQLConnection.connect(ConnectionSpec.from_url(url(served))) as idle:
        reading.start()
        time.sleep(1.5)
        with pytest.raises(ConnectionLost):
            idle.query("SELECT 1")
    assert reading.is_alive()  # waiting for more at the end of the first file
    add_second(corpus_dir, folder)
    reading.join(30)
    assert keyed(got) == expected


def test_a_dump_whose_replica_takes_nothing_ends(corpus_dir: Path, tmp_path: Path) -> None:
    """net_write_timeout: a dump client that stops reading (or a half-open one) is closed
    once the socket buffers are full and nothing moves for the write timeout."""
    big = (corpus_dir / Path(CHAIN).parent / "mariadb-repl-bin.000002").read_bytes()
    names = [f"big-bin.00000{i}" for i in range(1, 5)]
    for name in names:
        (tmp_path / name).write_bytes(big)
    write_index(tmp_path / "big-bin.index", names)
    server = BinlogServer(tmp_path, USERS)
    server.write_timeout = 0.5
    with BinlogServerThread(server), time_limit(30):
        spec = ConnectionSpec.from_url(url(server))
        with MySQLConnection.connect(spec) as stalled:
            stalled.execute("SET @master_binlog_checksum = 'CRC32'")
            stalled.send_command(BinlogDump(names[0], 4, 47).encode())
            deadline = time.monotonic() + 20
            while stalled.connection_id in server.sessions:
                assert time.monotonic() < deadline, server.sessions
                time.sleep(0.1)
            with MySQLConnection.connect(spec) as other:
                assert other.query("SELECT 1").rows == [("1",)]


@pytest.mark.parametrize(
    ("variable", "what"),
    [
        ("slave_connect_state", "start position from GTID state"),
        ("slave_until_gtid", "UNTIL position sent from slave"),
    ],
)
def test_a_malformed_gtid_position_is_mariadbs_error(
    served: BinlogServer, variable: str, what: str
) -> None:
    with MySQLConnection.connect(ConnectionSpec.from_url(url(served))) as conn:
        conn.execute(
            "SET @master_binlog_checksum = 'CRC32', @slave_connect_state = '0-10-262300', "
            f"@{variable} = '0-10-x'"
        )
        conn.send_command(BinlogDump("", 4, 48).encode())
        with pytest.raises(ServerError) as info:
            conn.read_packet()
    assert (info.value.code, info.value.server_message) == (
        1105,
        f"Out of memory or malformed slave request when obtaining {what}",
    )
