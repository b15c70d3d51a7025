"""Encrypted binlogs both ways with a MariaDB using ``encrypt_binlog`` and ``file_key_management``.

- Read: the binlogs the server writes, decrypted by binlogkit with the
  server's key file, hold the row changes that leave the rows SELECT shows,
  and ``binlogkit dump --key-file`` prints the events after START_ENCRYPTION
  exactly as ``mariadb-binlog --read-from-remote-server`` (the server
  decrypting) does.
- Write: a binlog binlogkit writes encrypted with the same key file (left in
  use, continued by ``BinlogWriter.open`` and a transaction inserted into it
  by ``insert_events``), put into the server's binlog folder and index while
  it is stopped, is read by the server (``SHOW BINLOG EVENTS`` and
  ``mariadb-binlog --read-from-remote-server`` through it) and its rows,
  applied with ``| mariadb``, are the rows written.

Both for the key plugin's AES_CBC (a plain key file) and AES_CTR (the key
file encrypted by ``openssl enc``, the server given its secret as
``file_key_management_filekey``, and its events compressed too:
``log_bin_compress``, compressed before they are encrypted).

- Relayed and served: ``binlogkit relay --encrypt-key-file`` copies the
  server's encrypted binlogs byte for byte; ``binlogkit serve --key-file``
  over the copy sends them as the server does (``mariadb-binlog -R`` prints
  the same through both), and a real replica of it ends with the primary's
  tables.

- Old files: the corpus' MariaDB 10.2 encrypted binlog, put into a server
  started with its test's key file, is listed and dumped by the server as
  binlogkit lists and dumps it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from dump_compare import local_time_zone, our_run
from encrypted_corpus import OLD_KEYS, OLD_MARIADB, per_file, remote_sections
from encrypted_writes import transaction_events, w_row, write_rows
from test_binlog_server_replica_live import PASSWORD, change_master, wait_applied
from workload_tables import snapshot

import binlogkit
from binlogkit.binlog.constants import MAGIC, EventFlag
from binlogkit.binlog.header import FLAGS_OFFSET
from binlogkit.binlog.info import list_events
from binlogkit.binlog.rows.plan import RowChange
from binlogkit.io.binlog_index import read_index
from binlogkit.io.key_files import BinlogEncryption, read_key_file
from binlogkit.protocol.auth.base import Secret
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.sandbox.workload import build_workload
from binlogkit.services.binlog_directory import BinlogDirectory
from binlogkit.services.binlog_server import BinlogServer, BinlogServerThread, User
from binlogkit.services.relay import BinlogRelay, RelayError
from binlogkit.writer import BinlogWriter, insert_events

KEYS = "# the binlog key is 1\n1;" + "a7" * 32 + "\n2;" + "49" * 16 + "\n"
WORKLOAD = """
CREATE DATABASE e;
CREATE TABLE e.t (id INT PRIMARY KEY, name VARCHAR(40), amount DECIMAL(10,2)) ENGINE=InnoDB;
INSERT INTO e.t VALUES (1, 'one', 1.50), (2, 'two', 2.25), (3, NULL, NULL);
UPDATE e.t SET name = CONCAT(name, '!') WHERE id < 3;
DELETE FROM e.t WHERE id = 2;
INSERT INTO e.t SELECT seq, REPEAT('x', seq % 40), seq / 7 FROM seq_10_to_300;
CREATE TABLE e.w (id INT NOT NULL PRIMARY KEY, name VARCHAR(20)) ENGINE=InnoDB;
"""


def _remote(server: MariaDBSandbox, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [
            "mariadb-binlog",
            "--no-defaults",
            "-R",
            f"--socket={server.socket}",
            "--user=root",
            *args,
        ],
        capture_output=True,
        check=False,
    )


def _table(changes: list[RowChange]) -> list[tuple[str | None, ...]]:
    """The rows the changes leave, as the client prints them, by id."""
    rows: dict[int, tuple[str | None, ...]] = {}
    for change in changes:
        if change.before is not None:
            del rows[change.before["id"]]
        if change.after is not None:
            values = change.after.values()
            rows[change.after["id"]] = tuple(None if v is None else str(v) for v in values)
    return [rows[i] for i in sorted(rows)]


@pytest.mark.parametrize("algorithm", ["AES_CBC", "AES_CTR"])
def test_encrypted_binlogs_both_ways(
    mariadb_factory: Callable[..., MariaDBSandbox], tmp_path: Path, algorithm: str
) -> None:
    keys = tmp_path / "keys.txt"
    keys.write_text(KEYS)
    filekey = None
    compress = algorithm == "AES_CTR"
    if compress:
        filekey = "s3cret phrase"
        plain, keys = keys, tmp_path / "keys.enc"
        openssl = ["openssl", "enc", "-aes-256-cbc", "-md", "sha1", "-pass", f"pass:{filekey}"]
        subprocess.run([*openssl, "-in", str(plain), "-out", str(keys)], check=True)
    server = mariadb_factory(
        f"encrypted-{algorithm}",
        plugin_load_add="file_key_management",
        file_key_management_filename=str(keys),
        file_key_management_filekey=filekey,
        file_key_management_encryption_algorithm=algorithm,
        encrypt_binlog="ON",
        log_bin_compress=compress,
        log_bin_compress_min_len=10,
    )
    server.execute(WORKLOAD, database="mysql")
    files = server.flush_binlogs()[:-1]

    paths = [str(f) for f in files]
    with binlogkit.open(paths, key_file=keys, filekey=filekey) as events:
        read = list(events)
    changes = [c for e in read if hasattr(e, "rows") and e.table_name == "t" for c in e.rows]
    assert len(changes) > 290
    assert compress == any("COMPRESSED" in e.type_name for e in read)
    assert _table(changes) == server.query("SELECT id, name, amount FROM e.t ORDER BY id")

    names = [f.name for f in files]
    remote = _remote(server, "--base64-output=decode-rows", "-vv", *names)
    assert remote.returncode == 0, remote.stderr
    with local_time_zone("UTC"):
        key_args = ["--key-file", str(keys)] + (["--filekey", filekey] if filekey else [])
        ours = our_run("-vv", "--base64-output=decode-rows", *key_args, *paths)
    text = ours.decode("utf-8", "surrogateescape")
    want = remote_sections(remote.stdout.decode("utf-8", "surrogateescape"))
    assert [events for _, events in per_file(text)] == want

    written = _write_encrypted(tmp_path / "ours", keys, filekey, algorithm)
    server.stop()
    target = server.binlog_dir / f"mysql-bin.{int(files[-1].name.split('.')[1]) + 2:06d}"
    target.write_bytes(written.read_bytes())
    with (server.binlog_dir / "mysql-bin.index").open("a") as index:
        index.write(f"{target}\n")
    server.start()
    assert target.name in [row[0] for row in server.query("SHOW BINARY LOGS")]
    listed = server.query(f"SHOW BINLOG EVENTS IN '{target.name}'")
    with binlogkit.open(str(target), key_file=keys, filekey=filekey) as events:
        ours_listed = [
            (r.log_name, str(r.pos), r.event_type, str(r.server_id), str(r.end_log_pos))
            for r in list_events(events)
        ]
    assert [row[:5] for row in listed] == ours_listed
    assert [row[2] for row in ours_listed][:3] == ["Format_desc", "Start_encryption", "Gtid"]
    sent = _remote(server, target.name)
    assert sent.returncode == 0, sent.stderr
    applied = subprocess.run(server.client_command(), input=sent.stdout, capture_output=True)
    assert applied.returncode == 0, applied.stderr
    assert server.query("SELECT id, name FROM e.w ORDER BY id") == [
        (str(i), None if (v := w_row(i)["name"]) is None else str(v)) for i in range(1, 201)
    ]
    with binlogkit.open(str(target), key_file=keys, filekey=filekey) as events:
        assert sum(len(getattr(e, "rows", ())) for e in events) == 200


def _write_encrypted(folder: Path, keys: Path, filekey: str | None, algorithm: str) -> Path:
    """A binlog of 200 rows into e.w, encrypted with the binlog key of ``keys``: rows 1-100
    written, the file left in use and continued with rows 151-200, then rows 101-150
    inserted between the two transactions."""
    cipher = "ctr" if algorithm == "AES_CTR" else "cbc"
    encryption = BinlogEncryption.from_key_file(keys, filekey=filekey, algorithm=cipher)
    writer = BinlogWriter.create(folder, "w-bin", encryption=encryption)
    write_rows(writer, 1, range(1, 101))
    between = writer.position
    writer.abandon()
    with BinlogWriter.open(folder, "w-bin", encryption=encryption) as again:
        write_rows(again, 3, range(151, 201))
    path = folder / "w-bin.000001"
    inserted = transaction_events(folder / "tx", 2, range(101, 151))
    insert_events(path, between, inserted, encryption=encryption)
    return path


def test_mariadb_10_2_encrypted_binlog_as_the_server_reads_it(
    mariadb_factory: Callable[..., MariaDBSandbox], corpus_dir: Path
) -> None:
    """The corpus' 10.2 encrypted binlog (mtr's binlog_mdev_20574_old_binlog), put into a
    server started with its test's key file: SHOW BINLOG EVENTS and mariadb-binlog -R
    say what binlogkit says."""
    keys = corpus_dir / OLD_KEYS
    server = mariadb_factory(
        "old-encrypted",
        plugin_load_add="file_key_management",
        file_key_management_filename=str(keys),
        encrypt_binlog="ON",
    )
    last = server.flush_binlogs()[-1]
    server.stop()
    target = server.binlog_dir / f"mysql-bin.{int(last.name.split('.')[1]) + 1:06d}"
    old = bytearray((corpus_dir / OLD_MARIADB).read_bytes())
    old[len(MAGIC) + FLAGS_OFFSET] &= ~EventFlag.BINLOG_IN_USE  # crashed: no recovery from it
    target.write_bytes(old)
    with (server.binlog_dir / "mysql-bin.index").open("a") as index:
        index.write(f"{target}\n")
    server.start()
    listed = server.query(f"SHOW BINLOG EVENTS IN '{target.name}'")
    with binlogkit.open(str(target), key_file=keys) as events:
        ours = [
            (r.log_name, str(r.pos), r.event_type, str(r.server_id), str(r.end_log_pos))
            for r in list_events(events)
        ]
    assert [row[:5] for row in listed] == ours and len(ours) == 16
    remote = _remote(server, "--base64-output=decode-rows", "-vv", target.name)
    assert remote.returncode == 0, remote.stderr
    with local_time_zone("UTC"):
        dump = our_run("-vv", "--base64-output=decode-rows", "--key-file", str(keys), str(target))
    want = remote_sections(remote.stdout.decode("utf-8", "surrogateescape"))
    assert [events for _, events in per_file(dump.decode("utf-8", "surrogateescape"))] == want


def test_relay_and_serve_encrypted_binlogs_to_a_replica(
    mariadb_factory: Callable[..., MariaDBSandbox], tmp_path: Path
) -> None:
    """A primary with ``encrypt_binlog`` -> ``binlogkit relay --encrypt-key-file`` (run twice:
    the second run resumes mid-file) -> ``binlogkit serve --key-file`` -> a real replica.
    The relay's copy is the primary's files byte for byte (refused without the key); what
    binlogkit serves reaches ``mariadb-binlog -R`` exactly as the primary sends it
    (decrypted, START_ENCRYPTION flagged ignorable); the replica ends with the primary's
    tables."""
    keys = tmp_path / "keys.txt"
    keys.write_text(KEYS)
    primary = mariadb_factory(
        "relay-encrypted",
        plugin_load_add="file_key_management",
        file_key_management_filename=str(keys),
        encrypt_binlog="ON",
    )
    replica = mariadb_factory("relay-encrypted-replica", server_id=5)
    primary.execute(
        "SET sql_log_bin = 0; CREATE USER 'relay'@'127.0.0.1'; "
        "GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'relay'@'127.0.0.1'"
    )
    url = f"mariadb://relay@127.0.0.1:{primary.port}"
    with pytest.raises(RelayError, match="the copy needs its binlog key") as err:
        BinlogRelay(url, tmp_path / "no-key", blocking=False).run()
    assert err.value.event_type == "START_ENCRYPTION"
    workload = build_workload()
    half = len(workload.statements) // 2
    folder = tmp_path / "relayed"
    encryption = BinlogEncryption.from_key_file(keys)
    for statements in (workload.statements[:half], workload.statements[half:]):
        primary.execute(workload.script_of(statements))
        primary.flush_binlogs()
        BinlogRelay(url, folder, blocking=False, encryption=encryption).run()
    files = primary.binlog_files()
    copies = read_index(folder / "mysql-bin.index")
    assert copies == [f.name for f in files]
    for path in files[:-1]:
        assert (folder / path.name).read_bytes() == path.read_bytes(), path.name
    assert files[-1].read_bytes().startswith((folder / files[-1].name).read_bytes())

    directory = BinlogDirectory(folder, read_key_file(keys))
    server = BinlogServer(directory, [User("repl", Secret(PASSWORD))], server_id=1)
    with BinlogServerThread(server):
        for path in files[:2]:
            args = ["--base64-output=decode-rows", "-vv", path.name]
            ours = _remote_tcp(server.port, *args)
            theirs = _remote(primary, *args)
            assert ours.returncode == theirs.returncode == 0, ours.stderr
            assert ours.stdout == theirs.stdout and b"Start_encryption" in ours.stdout
        replica.execute(f"{change_master(server.port)}; START SLAVE")
        wait_applied(replica, primary.gtid_binlog_pos)
        replica.execute("STOP SLAVE")
    assert snapshot(replica, workload) == snapshot(primary, workload)


def _remote_tcp(port: int, *args: str) -> subprocess.CompletedProcess[bytes]:
    """``mariadb-binlog -R`` from binlogkit's server on ``port``."""
    command = ["mariadb-binlog", "--no-defaults", "-R", "--host=127.0.0.1", f"--port={port}"]
    credentials = ["--user=repl", f"--password={PASSWORD}"]
    return subprocess.run([*command, *credentials, *args], capture_output=True, check=False)
