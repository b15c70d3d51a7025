"""Encrypted binlogs of the corpus read with their keys.

- MariaDB 10.11 (``encrypt_binlog``, AES-CBC): ``binlogkit dump --key-file``
  of the files equals, up to START_ENCRYPTION, ``mariadb-binlog``'s own dump
  of each file and, after it, what ``mariadb-binlog --read-from-remote-server``
  printed of the same files decrypted by the server.
- MariaDB 10.2 (mtr's ``binlog_before_20574.bin``): the rows its test writes.
- MySQL 8.0 (``binlog_encryption``, mtr's ``rpl_nogtid_encryption``): the
  events its ``.result`` lists.
- A wrong key, a key file without the binlog key and a keyring with a damaged
  key stop with an error naming the file, the offset and the key.
"""

from __future__ import annotations

import contextlib
import gzip
import re
import threading
import time
from pathlib import Path

import pytest
from dump_compare import local_time_zone, our_run
from encrypted_corpus import (
    KEYRING,
    MARIADB,
    MARIADB_KEYS,
    MYSQL,
    MYSQL_RESULT,
    OLD_KEYS,
    OLD_MARIADB,
    per_file,
    remote_sections,
)

import binlogkit
from binlogkit.binlog.constants import EventType
from binlogkit.errors import BinlogError, EncryptedBinlogError, TruncatedError
from binlogkit.io.files import BinlogReader


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def test_mariadb_dump_equals_the_servers_view(corpus_dir: Path) -> None:
    folder = corpus_dir / MARIADB
    files = [str(folder / f"mysql-bin.00000{n}") for n in (1, 2, 3)]  # what the server sent
    with local_time_zone("UTC"):
        ours = _text(
            our_run(
                "--base64-output=decode-rows", "-vv", "--key-file", str(folder / "keys.txt"), *files
            )
        )
    remote = remote_sections(
        _text(gzip.decompress((folder / "remote-decoded.txt.gz").read_bytes()))
    )
    got = per_file(ours)
    assert len(got) == len(remote) == 3
    for n, (path, (head, events), want) in enumerate(zip(files, got, remote, strict=True)):
        alone = _text(Path(path + ".decoded.txt").read_bytes()).splitlines()
        if n:  # the dump's opening lines come once, before the first file
            alone = alone[alone.index("DELIMITER /*!*/;") :]
        assert head == alone, path
        assert events == want, path
        assert len(events) > 20


def test_mariadb_10_2_binlog_holds_its_tests_rows(corpus_dir: Path) -> None:
    with binlogkit.open(corpus_dir / OLD_MARIADB, key_file=corpus_dir / OLD_KEYS) as events:
        decoded = list(events)
    rows = [tuple(c.after.values()) for e in decoded for c in getattr(e, "rows", ())]
    assert rows == [(1,), (2,), (3,), (4,)]  # INSERT (1),(2),(3); REPLACE (4)
    assert decoded[-1].header.end == (corpus_dir / OLD_MARIADB).stat().st_size


def test_mysql_binlog_lists_the_events_of_its_test(corpus_dir: Path) -> None:
    listed = re.findall(
        r"^master-bin\.000002\t#\t(\w+)\t", (corpus_dir / MYSQL_RESULT).read_text(), re.M
    )
    names = {
        EventType.PREVIOUS_GTIDS: "Previous_gtids",
        EventType.ANONYMOUS_GTID: "Anonymous_Gtid",
        EventType.QUERY: "Query",
        EventType.TABLE_MAP: "Table_map",
        EventType.WRITE_ROWS: "Write_rows",
        EventType.XID: "Xid",
    }
    got = []
    with (
        pytest.raises(TruncatedError) as cut,  # the test's copy of the file ends mid-event
        binlogkit.open(corpus_dir / MYSQL, key_file=corpus_dir / KEYRING) as events,
    ):
        got.extend(events)
    assert cut.value.offset == 987 and cut.value.file == str(corpus_dir / MYSQL)
    types = [names.get(e.header.type_code) for e in got[1 : len(listed) + 1]]
    assert types == listed and len(listed) == 13
    assert got[0].header.type_code == EventType.FORMAT_DESCRIPTION
    queries = [e.query for e in got if e.header.type_code == EventType.QUERY]
    assert queries == [b"CREATE TABLE t1 (c1 INT PRIMARY KEY)", b"BEGIN", b"BEGIN"]


FIRST = f"{MARIADB}/mysql-bin.000001"


@pytest.mark.parametrize(
    ("binlog", "keys", "offset", "says"),
    [
        (
            f"{MARIADB}/mysql-bin.000001",
            "1;" + "00" * 32,
            296,
            "does not decrypt with key 1 (version 1) of {}",
        ),
        (
            f"{MARIADB}/mysql-bin.000001",
            "2;" + "00" * 16,
            296,
            "key id 1 is not in the key file {}",
        ),
        (f"{MARIADB}/mysql-bin.000001", KEYRING, 296, "needs a file_key_management key file"),
        (MYSQL, MARIADB_KEYS, 0, "needs the server's keyring_file keyring"),
    ],
    ids=["wrong key", "no key 1", "a keyring for MariaDB", "MariaDB keys for MySQL"],
)
def test_key_errors_name_file_offset_and_key(
    corpus_dir: Path, tmp_path: Path, binlog: str, keys: str, offset: int, says: str
) -> None:
    key_file = corpus_dir / keys
    if ";" in keys:
        key_file = tmp_path / "keys.txt"
        key_file.write_text(keys + "\n")
    path = corpus_dir / binlog
    with pytest.raises(BinlogError) as err, binlogkit.open(path, key_file=key_file) as events:
        list(events)
    assert (err.value.file, err.value.offset) == (str(path), offset)
    assert says.format(key_file) in str(err.value)


def test_damaged_keyring_key_is_reported(corpus_dir: Path, tmp_path: Path) -> None:
    keyring = bytearray((corpus_dir / KEYRING).read_bytes())
    keyring[0xF5] ^= 1  # the first byte of the binlog key (record 2: 40 + 58 + 3 bytes in)
    damaged = tmp_path / "keyring"
    damaged.write_bytes(keyring)
    with pytest.raises(EncryptedBinlogError) as err:
        binlogkit.open(corpus_dir / MYSQL, key_file=damaged).__next__()
    assert err.value.file == str(corpus_dir / MYSQL) and err.value.offset == 0
    assert "MySQLReplicationKey_00508583-b5ce-11e8-a6a5-0010e0734796_1" in str(err.value)


def test_cli_reads_with_key_file(corpus_dir: Path) -> None:
    from click.testing import CliRunner

    from binlogkit.cli.main import cli

    keys = str(corpus_dir / MARIADB / "keys.txt")
    last = str(corpus_dir / MARIADB / "mysql-bin.000004")
    plain = CliRunner().invoke(cli, ["events", last])
    assert plain.exit_code == 1 and "--key-file" in plain.output
    listed = CliRunner().invoke(cli, ["events", "--key-file", keys, last])
    assert [line.split("\t")[1:3] for line in listed.output.splitlines()[1:]] == [
        ["4", "Format_desc"],
        ["256", "Start_encryption"],
        ["296", "Gtid_list"],
        ["339", "Binlog_checkpoint"],
        ["382", "Binlog_checkpoint"],
        ["425", "Stop"],
    ]
    rows_file = corpus_dir / MARIADB / "mysql-bin.000002"
    printed = CliRunner().invoke(
        cli, ["rows", "--format", "jsonl", "--key-file", keys, str(rows_file)]
    )
    assert printed.exit_code == 0, printed.output
    with binlogkit.open(rows_file, key_file=keys) as events:
        changes = [c for e in events for c in getattr(e, "rows", ())]
    assert len(printed.output.splitlines()) == len(changes) > 1000
    says = {"flashback": "BINLOG '", "schema": "CREATE TABLE `typesdb`.`t_int`"}
    for command, output in says.items():  # binlog files are read there too
        refused = CliRunner().invoke(cli, [command, str(rows_file)])
        assert refused.exit_code == 1 and "--key-file" in refused.output
        done = CliRunner().invoke(cli, [command, "--key-file", keys, str(rows_file)])
        assert done.exit_code == 0 and output in done.output, done.output


@pytest.mark.parametrize("which", ["mariadb", "mysql"])
def test_start_position_inside_encrypted_events(corpus_dir: Path, which: str) -> None:
    """Starting mid-file seeks the decrypting stage: the events from there are those of a
    read from the start."""
    if which == "mariadb":
        path, keys = corpus_dir / MARIADB / "mysql-bin.000002", corpus_dir / MARIADB / "keys.txt"
    else:
        path, keys = corpus_dir / MYSQL, corpus_dir / KEYRING

    def read(**options: int) -> list[tuple[int, int]]:
        seen: list[tuple[int, int]] = []
        with (
            contextlib.suppress(TruncatedError),
            binlogkit.open(path, key_file=keys, schema=None, **options) as events,
        ):
            seen.extend((e.header.offset, e.header.type_code) for e in events)
        return seen

    everything = read()
    middle = len(everything) // 2
    assert read(start_position=everything[middle][0]) == everything[middle:]


def test_follow_a_growing_encrypted_file(corpus_dir: Path, tmp_path: Path) -> None:
    """A file cut inside an encrypted event is followed: the partial event waits for its end."""
    whole = (corpus_dir / MARIADB / "mysql-bin.000003").read_bytes()
    keys = corpus_dir / MARIADB / "keys.txt"
    with binlogkit.open(corpus_dir / MARIADB / "mysql-bin.000003", key_file=keys) as events:
        want = [(e.header.offset, e.header.type_code) for e in events]
    growing = tmp_path / "mysql-bin.000003"
    growing.write_bytes(whole[:1000])
    seen: list[tuple[int, int]] = []
    reader = BinlogReader(str(growing), key_file=keys, follow=True, poll_interval=0.02)

    def follow() -> None:
        with reader:
            seen.extend((e.header.offset, e.header.type_code) for e in reader)

    thread = threading.Thread(target=follow)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while len(seen) < 5 and time.monotonic() < deadline:
            time.sleep(0.02)
        with growing.open("ab") as out:
            out.write(whole[1000:])
        while len(seen) < len(want) and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        reader.abort()
        thread.join(30)
    assert seen == want


MYSQL_PLAIN = "avaitla+mysqlbinlog2parquet/test/samples/01-basic-crud.binlog"


@pytest.mark.parametrize("name", ["local-mariadb-10.11/gtid/mysql-bin.000002", MYSQL_PLAIN])
def test_plain_binlog_with_a_key_file_reads_as_without(corpus_dir: Path, name: str) -> None:
    def read(**options: Path) -> list[tuple[int, int, int]]:
        with binlogkit.open(corpus_dir / name, schema=None, **options) as events:
            return [(e.header.offset, e.header.type_code, e.header.end) for e in events]

    plain = read()
    assert read(key_file=corpus_dir / MARIADB / "keys.txt") == plain and len(plain) > 10
