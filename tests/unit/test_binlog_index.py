"""Binlog names and index files: the one reader and the one writer, and the sources they resolve."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from binlogkit import BinlogError
from binlogkit.binlog.constants import Flavor
from binlogkit.io.binlog_index import (
    add_to_index,
    binlog_name,
    binlog_order,
    find_index,
    generation_name,
    index_name,
    next_binlog_name,
    read_index,
    resolve_sources,
    split_binlog_name,
    split_generation,
    write_index,
)
from binlogkit.schema.store import Position
from binlogkit.writer import default_base_name

NAMES = ["mysql-bin.000001", "mysql-bin.000002", "mysql-bin.1000000"]


def test_names_split_and_order() -> None:
    assert split_binlog_name("mysql-bin.000012") == ("mysql-bin", 12)
    assert split_binlog_name("/x/relay.bin.1000000") == ("/x/relay.bin", 1_000_000)
    assert split_binlog_name("mysql-bin.12") is None
    assert split_binlog_name("mysql-bin.index") is None
    assert sorted(["b.000001", "a.1000000", "a.999999"], key=binlog_order) == [
        "a.999999",
        "a.1000000",
        "b.000001",
    ]
    assert index_name("mysql-bin.000012") == "mysql-bin.index"
    assert index_name("odd") == "odd.index"


def test_names_of_later_servers_order_after_the_first_ones() -> None:
    assert generation_name("mysql-bin.000002", 0) == "mysql-bin.000002"
    assert generation_name("mysql-bin.000002", 1) == "1~mysql-bin.000002"
    assert split_generation("12~mysql-bin.000002") == (12, "mysql-bin.000002")
    assert split_generation("mysql-bin.000002") == (0, "mysql-bin.000002")
    positions = [
        Position("10~a.000001", 4),
        Position("2~a.000001", 500),
        Position("2~a.000001", 4),
        Position("z.000009", 900),
        Position("1~a.000001", 4),
        Position("/data/z.000010", 4),
    ]
    assert [str(p) for p in sorted(positions, key=Position.key)] == [
        "z.000009:900",
        "/data/z.000010:4",
        "1~a.000001:4",
        "2~a.000001:4",
        "2~a.000001:500",
        "10~a.000001:4",
    ]


def test_write_then_read_gives_the_names_back(tmp_path: Path) -> None:
    index = tmp_path / "mysql-bin.index"
    write_index(index, NAMES)
    assert index.read_text() == "".join(f"./{name}\n" for name in NAMES)  # as the server writes
    assert read_index(index) == NAMES
    write_index(index, NAMES[:1])
    assert read_index(index) == NAMES[:1]
    assert [p.name for p in tmp_path.iterdir()] == ["mysql-bin.index"]


def test_read_takes_the_file_name_of_each_line(tmp_path: Path) -> None:
    """Relative (``./``, a subfolder) and absolute lines, blank lines, spaces and CRLF."""
    index = tmp_path / "mysql-bin.index"
    index.write_text(
        "./mysql-bin.000001\r\n\n  binlog/mysql-bin.000002  \n\t\n/var/lib/mysql/mysql-bin.1000000"
    )
    assert read_index(index) == NAMES


def test_write_is_all_or_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crash before the new list is complete leaves the old one; ``sync`` fsyncs the new list
    and then its folder (the rename)."""
    index = tmp_path / "mysql-bin.index"
    write_index(index, NAMES[:1])
    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", synced.append)
    write_index(index, NAMES, sync=True)
    assert len(synced) == 2 and read_index(index) == NAMES

    def crash(fd: int) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(os, "fsync", crash)
    with pytest.raises(OSError, match="disk gone"):
        write_index(index, NAMES[:2], sync=True)
    assert read_index(index) == NAMES
    write_index(index, NAMES[:2])  # the leftover temporary file is no obstacle
    assert read_index(index) == NAMES[:2]


def test_an_index_names_files_in_its_own_folder(tmp_path: Path) -> None:
    for name in NAMES:
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "mysql-bin.index").write_text(
        "".join(f"/elsewhere/{name}\n\n" for name in reversed(NAMES))
    )
    want = [str(tmp_path / name) for name in reversed(NAMES)]
    assert resolve_sources(tmp_path / "mysql-bin.index") == want
    assert find_index(tmp_path) == tmp_path / "mysql-bin.index"
    assert resolve_sources(tmp_path) == want  # the directory's index, in its order


def test_a_file_missing_from_an_index_is_named(tmp_path: Path) -> None:
    index = tmp_path / "mysql-bin.index"
    write_index(index, NAMES[:2])
    (tmp_path / NAMES[0]).write_bytes(b"")
    for source in (index, tmp_path):
        with pytest.raises(BinlogError) as caught:
            resolve_sources(source)
        assert str(index) in str(caught.value) and NAMES[1] in str(caught.value)


def test_a_uri_is_not_taken_for_a_missing_local_file() -> None:
    with pytest.raises(BinlogError, match=r"s3a://bucket/binlogs: binlog files are read .* local"):
        resolve_sources("s3a://bucket/binlogs")


def test_a_folder_without_index_has_no_index(tmp_path: Path) -> None:
    assert find_index(tmp_path) is None


def test_names_of_new_files(tmp_path: Path) -> None:
    assert binlog_name("relay-bin", 7) == "relay-bin.000007"
    assert next_binlog_name("mysql-bin.999999") == "mysql-bin.1000000"
    with pytest.raises(BinlogError, match="has no sequence number"):
        next_binlog_name("mysql-bin.index")
    host = default_base_name("relay", Flavor.MARIADB).removesuffix("-relay-bin")
    assert host and default_base_name("relay", Flavor.MYSQL) == f"{host}-relay-bin"
    assert default_base_name("binlog", Flavor.MARIADB) == f"{host}-bin"
    assert default_base_name("binlog", Flavor.MYSQL) == "binlog"
    add_to_index(tmp_path, "x.000001")
    add_to_index(tmp_path, "x.000002")
    add_to_index(tmp_path, "x.000002")
    assert (tmp_path / "x.index").read_text() == "./x.000001\n./x.000002\n"
