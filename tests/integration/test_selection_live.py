"""Selection against mariadb-binlog on binlogs with two GTID domains and two server ids.

The tool shows a header line for each event it keeps; the same options given
to :class:`Selection` must keep the very same events, in the same order.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from selection_tool import our_kept, tool_kept

import binlogkit
from binlogkit.binlog.events.mariadb_gtid import MariaGtidEvent
from binlogkit.dump.selection import Selection, parse_id_list, parse_position
from binlogkit.errors import BinlogError
from binlogkit.gtid import MariaGtidList

_SCRIPT = """
CREATE DATABASE a; CREATE DATABASE b;
CREATE TABLE a.t (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB;
CREATE TABLE b.t (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB;
CREATE TABLE a.m (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=MyISAM;
INSERT INTO a.t VALUES (1,'a1'),(2,'a2');
SET SESSION gtid_domain_id=5; SET SESSION server_id=7;
INSERT INTO b.t VALUES (1,'b1');
USE a; INSERT INTO b.t VALUES (2,'b2 from use a');
BEGIN; INSERT INTO a.t VALUES (3,'x'); INSERT INTO b.t VALUES (3,'y'); COMMIT;
SET SESSION gtid_domain_id=0; SET SESSION server_id=1;
USE b; UPDATE a.t SET v='upd' WHERE id=1; DELETE FROM b.t WHERE id=1;
INSERT INTO a.m VALUES (1,'my');
SET TIMESTAMP=2000000000; INSERT INTO a.t VALUES (10, 'late');
SET TIMESTAMP=2000000100; INSERT INTO a.t VALUES (11, 'later');
"""

CASES = [
    ([], Selection()),
    (["--database=a"], Selection(database="a")),
    (["--database=b"], Selection(database="b")),
    (["--table=t"], Selection(table="t")),
    (["--table=m"], Selection(table="m")),
    (["--do-domain-ids=5"], Selection(do_domain_ids=frozenset({5}))),
    (["--ignore-domain-ids=5"], Selection(ignore_domain_ids=frozenset({5}))),
    (["--server-id=7"], Selection(server_id=7)),
    (["--do-server-ids=1"], Selection(do_server_ids=frozenset({1}))),
    (["--ignore-server-ids=7"], Selection(ignore_server_ids=frozenset({7}))),
    (["--rewrite-db=a->zz", "--database=zz"], Selection(rewrite_db={"a": "zz"}, database="zz")),
    (["--rewrite-db=a->zz", "--database=a"], Selection(rewrite_db={"a": "zz"}, database="a")),
    (
        ["--do-domain-ids=0", "--server-id=1", "--database=b"],
        Selection(do_domain_ids=frozenset({0}), server_id=1, database="b"),
    ),
    (
        ["--start-datetime=2033-05-18 03:33:20", "--stop-datetime=2033-05-18 03:35:00"],
        Selection(
            start_datetime=datetime(2033, 5, 18, 3, 33, 20, tzinfo=UTC),
            stop_datetime=datetime(2033, 5, 18, 3, 35, tzinfo=UTC),
        ),
    ),
]


@pytest.fixture(scope="module")
def binlogs(mariadb_factory) -> list[Path]:  # type: ignore[no-untyped-def]
    server = mariadb_factory("selection")
    server.execute(_SCRIPT)
    files = server.flush_binlogs()[:-1]
    return files


@pytest.mark.parametrize(("options", "selection"), CASES, ids=[" ".join(c[0]) for c in CASES])
def test_same_events_as_mariadb_binlog(binlogs, options, selection) -> None:  # type: ignore[no-untyped-def]
    want = tool_kept(binlogs, options)
    assert want
    assert our_kept(binlogs, selection) == want


def test_positions_as_mariadb_binlog(binlogs) -> None:  # type: ignore[no-untyped-def]
    last = binlogs[-1]
    with binlogkit.open(str(last)) as reader:
        groups = [e.header.offset for e in reader if isinstance(e, MariaGtidEvent)]
    start, stop = groups[len(groups) // 3], groups[2 * len(groups) // 3]
    options = [f"--start-position={start}", f"--stop-position={stop}"]
    want = tool_kept([last], options)
    assert our_kept([last], Selection(start_position=start, stop_position=stop)) == want


# --- MariaDB GTID positions (--start-position / --stop-position as GTID lists) ----------------

_GTID_SCRIPT = """
CREATE DATABASE g; CREATE TABLE g.t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;
INSERT INTO g.t VALUES (1,1);
SET SESSION gtid_domain_id=5; INSERT INTO g.t VALUES (2,1); INSERT INTO g.t VALUES (3,1);
SET SESSION gtid_domain_id=0; INSERT INTO g.t VALUES (4,1);
SET SESSION server_id=7; INSERT INTO g.t VALUES (5,1);
SET SESSION gtid_domain_id=5; INSERT INTO g.t VALUES (6,1);
SET SESSION server_id=1; SET SESSION gtid_domain_id=0; INSERT INTO g.t VALUES (7,1);
FLUSH BINARY LOGS;
SET SESSION gtid_domain_id=5; INSERT INTO g.t VALUES (8,1);
BEGIN; INSERT INTO g.t VALUES (9,1); UPDATE g.t SET v=2; COMMIT;
SET SESSION gtid_domain_id=0; INSERT INTO g.t VALUES (10,1); INSERT INTO g.t VALUES (11,1);
SET SESSION gtid_domain_id=5; INSERT INTO g.t VALUES (12,1);
SET SESSION gtid_domain_id=0; INSERT INTO g.t VALUES (13,1);
FLUSH BINARY LOGS;
SET SESSION gtid_domain_id=9; SET SESSION gtid_seq_no=5; INSERT INTO g.t VALUES (14,1);
SET SESSION gtid_seq_no=2; INSERT INTO g.t VALUES (15,1);
INSERT INTO g.t VALUES (16,1);
"""
"""Domain 0 (server ids 1 and 7) and domain 5 interleaved over two files, then a third file
with domain 9 out of order (9-1-5, 9-1-2, 9-1-3), the case --gtid-strict-mode rejects."""

GTID_CASES = [
    "--start-position=0-1-4",
    "--start-position=0-1-4,5-1-2",
    "--start-position=0-7-5,5-1-0",
    "--start-position=0-1-2,5-1-0 --skip-gtid-strict-mode",
    "--stop-position=0-1-4",
    "--stop-position=5-1-4",
    "--stop-position=0-7-5,5-1-5",
    "--stop-position=0-1-20",
    "--start-position=0-1-3 --stop-position=0-1-7",
    "--start-position=0-1-2 --stop-position=5-7-3,0-1-8",
    "--start-position=5-1-2 --stop-position=5-1-5",
    "--start-position=0-1-0,5-1-0 --stop-position=0-1-0",
    "--start-position=0-1-3 --do-domain-ids=0",
    "--stop-position=0-1-8 --ignore-server-ids=7",
    "--start-position=0-1-3,5-1-1 --stop-position=0-1-7",  # 5-1-1 never reached: an error
    "--start-position=0-1-9 --stop-position=0-1-7",  # start after stop: an error
    "--start-position=0-1-3,0-7-4",  # two GTIDs of one domain: an error
]


def _selection(options: list[str]) -> Selection:
    """The Selection of mariadb-binlog options (those GTID_CASES use)."""
    values: dict[str, Any] = {}
    for option in options:
        name, _, value = option.removeprefix("--").partition("=")
        if name == "skip-gtid-strict-mode":
            values["gtid_strict_mode"] = False
        elif name in ("start-position", "stop-position"):
            position = parse_position(value)
            assert isinstance(position, MariaGtidList)
            values[name.replace("position", "gtids").replace("-", "_")] = position
        else:
            values[name.replace("-", "_")] = parse_id_list(value)
    return Selection(**values)


def _tool(files: list[Path], options: list[str]) -> list[int] | None:
    """What mariadb-binlog shows, or None when it ends in an error."""
    try:
        return tool_kept(files, options)
    except AssertionError:
        return None


def _ours(files: list[Path], selection: Selection) -> list[int] | None:
    try:
        return our_kept(files, selection)
    except BinlogError:
        return None


@pytest.fixture(scope="module")
def gtid_binlogs(mariadb_factory) -> list[Path]:  # type: ignore[no-untyped-def]
    server = mariadb_factory("selection-gtid")
    server.execute(_GTID_SCRIPT)
    files = server.flush_binlogs()[:-1]
    assert len(files) == 3
    return files


@pytest.mark.parametrize("options", GTID_CASES)
def test_gtid_positions_as_mariadb_binlog(gtid_binlogs, options) -> None:  # type: ignore[no-untyped-def]
    files, argv = gtid_binlogs[:2], options.split()
    try:
        selection = _selection(argv)
    except BinlogError:
        assert _tool(files, argv) is None  # the tool refuses the options too
        return
    want = _tool(files, argv)
    assert want != []
    assert _ours(files, selection) == want


@pytest.mark.parametrize(
    "options",
    [
        "--start-position=0-1-7,5-7-3",
        "--start-position=0-1-6,5-7-3",
        "--start-position=0-1-7",  # domain 5 of the file's GTID list is missing: an error
        "--start-position=0-1-5,5-7-3",  # the file starts after 0-1-5: an error
        "--stop-position=0-1-7",
        "--stop-position=0-1-6",  # already in the file's GTID list: an error
    ],
)
def test_gtid_positions_against_the_gtid_list(gtid_binlogs, options) -> None:  # type: ignore[no-untyped-def]
    """Starting from the second file: the start list is checked against its GTID_LIST event."""
    argv = options.split()
    want = _tool(gtid_binlogs[1:2], argv)
    assert _ours(gtid_binlogs[1:2], _selection(argv)) == want


@pytest.mark.parametrize(
    "options",
    [
        "--start-position=9-1-1",  # 9-1-2 after 9-1-5 in a kept group: an error
        "--start-position=9-1-1 --skip-gtid-strict-mode",
        "--stop-position=9-1-3 --skip-gtid-strict-mode",
    ],
)
def test_gtid_strict_mode_as_mariadb_binlog(gtid_binlogs, options) -> None:  # type: ignore[no-untyped-def]
    argv = options.split()
    want = _tool(gtid_binlogs[2:], argv)
    assert _ours(gtid_binlogs[2:], _selection(argv)) == want
