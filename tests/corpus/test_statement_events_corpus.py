"""Statement and informational events of the corpus against what the servers' tools print.

Known answers come from outside binlogkit: the ``mariadb-binlog -vv`` dumps
shipped with the local MariaDB 10.11 files, MySQL's mysqlbinlog_hexdump.result
and binlog_old_versions.result, and (when installed) ``mariadb-binlog`` run
here on the MySQL and MariaDB files of the corpus. For every QUERY the tool
printed, its thread id, exec time, error code, xid, timestamp (with the
fraction), default database, the ``SET @@session`` values it derived from the
status variables, and the statement text must equal what binlogkit decoded;
likewise the values of USER_VAR, INTVAR and RAND, the LOAD DATA blocks, the
ANNOTATE_ROWS text, BINLOG_CHECKPOINT and START_ENCRYPTION.
"""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from corpus_files import corpus_manifest
from corpus_walk import corpus_files, reference_dump, reference_dump_path
from mysqlbinlog_dump import Checker, decode_all, parse_dump

from binlogkit.binlog.events.informational import RowsQueryEvent
from binlogkit.binlog.events.load import AppendBlockEvent, CreateFileEvent
from binlogkit.binlog.events.statement_context import (
    IntvarEvent,
    IntvarType,
    RandEvent,
    UserVarEvent,
)
from binlogkit.errors import DecodeError

pytestmark = pytest.mark.corpus


def local_dumps() -> list[str]:
    """The local MariaDB files that come with a ``mariadb-binlog -vv`` dump."""
    return [name for name in corpus_files() if reference_dump_path(name) is not None]


@pytest.mark.parametrize("name", local_dumps())
def test_local_mariadb_dumps(corpus_dir: Path, name: str) -> None:
    dump = parse_dump(reference_dump(name))
    events, _ = decode_all(corpus_dir / name)
    checker = Checker(name)
    checker.compare(dump, events)
    assert not checker.failed, checker.failed[:10]
    printed_queries = sum(1 for e in dump.values() if e.kind.startswith("Query"))
    assert checker.done["statement"] == printed_queries


def test_mysql_hexdump_result(corpus_dir: Path) -> None:
    """MySQL 5.6.4's binlog against mysqlbinlog --hexdump output (mysqlbinlog_hexdump.result)."""
    binlog = (
        corpus_dir
        / "enhancedformysql+mysql-8.0.40/mysql-test/suite/binlog/std_data/bug11747887-bin.000003"
    )
    result = (
        corpus_dir
        / "expected/enhancedformysql+mysql-8.0.40/mysql-test/r/mysqlbinlog_hexdump.result"
    )
    dump = parse_dump(result.read_bytes())
    events, error = decode_all(binlog)
    assert error is None
    checker = Checker(binlog.name)
    checker.compare(dump, events)
    assert not checker.failed, checker.failed
    assert checker.done["statement"] == 5
    assert checker.done["user_var value"] == 1  # SET @`2`:=NULL
    assert checker.done["sql_mode"] == checker.done["charset"] == 1


# binlog_old_versions.result: table contents after replaying each old binlog.
# Section title -> the corpus file the test replays in it.
_ENH = "enhancedformysql+mysql-8.0.40/mysql-test/suite/binlog/std_data/"
_NH = "northhurricane+mysql-5.6.21/mysql-test/suite/binlog/std_data/"
_ADO = "adofsauron+mysql-5.7.41-dev/origin/mysql-5.7.41/mysql-test/suite/binlog/std_data/"
OLD_VERSIONS = {
    "Read binlog with v2 row events": _ENH + "ver_trunk_row_v2.001",
    "Read modern binlog (version 5.1.23)": _ENH + "ver_5_1_23.001",
    "Read binlog from version 5.1.17": _NH + "ver_5_1_17.001",
    "Read binlog from version 4.1": _ADO + "binlog_old_version_4_1.000001",
    "Read binlog from ndb tree (mysql-5.1-telco-6.1)": _NH + "ver_5_1-telco.001",
}
OLD_RESULT = (
    "expected/northhurricane+mysql-5.6.21/mysql-test/suite/binlog/r/binlog_old_versions.result"
)


def mysql_rand(seed1: int, seed2: int) -> float:
    """MySQL's my_rnd(): the first RAND() value after the seeds of a RAND event."""
    max_value = 0x3FFFFFFF
    seed1 = (seed1 * 3 + seed2) % max_value
    return seed1 / max_value


def old_version_sections(text: str) -> dict[str, str]:
    parts = re.split(r"^==== (.*) ====$", text, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


@pytest.mark.parametrize("section", sorted(OLD_VERSIONS))
def test_old_versions_replay(corpus_dir: Path, section: str) -> None:
    """RAND seeds, @x, LAST_INSERT_ID and the LOAD DATA file give the rows the replay produced.

    Each binlog runs ``INSERT INTO t1 VALUES (@x, 'four')``, ``(RAND() * 1000000,
    'random')``, ``(LAST_INSERT_ID(), 'last_insert_id')`` and a LOAD DATA into t3.
    """
    expected = old_version_sections((corpus_dir / OLD_RESULT).read_text())[section]
    rows = dict(re.findall(r"^(\d+)\t(\w[\w ]*)$", expected, flags=re.M))
    rows = {label: int(a) for a, label in rows.items()}
    count = int(re.search(r"COUNT\(\*\)\n(\d+)", expected)[1])  # type: ignore[index]
    events, error = decode_all(corpus_dir / OLD_VERSIONS[section])
    assert error is None
    ordered = [events[k] for k in sorted(events)]
    followed = {id(a): b for a, b in itertools.pairwise(ordered)}
    rand = next(e for e in ordered if isinstance(e, RandEvent))
    assert b"RAND() * 1000000" in followed[id(rand)].query  # type: ignore[attr-defined]
    assert round(mysql_rand(rand.seed1, rand.seed2) * 1_000_000) == rows["random"]
    x = next(e for e in ordered if isinstance(e, UserVarEvent))
    assert (x.name, x.value) == ("x", rows["four"])
    last = next(e for e in ordered if isinstance(e, IntvarEvent))
    assert (last.var_type, last.value) == (IntvarType.LAST_INSERT_ID, rows["last_insert_id"])
    data = b"".join(e.block for e in ordered if isinstance(e, AppendBlockEvent | CreateFileEvent))
    assert data.count(b"\n") == count


def test_invalid_incident_is_rejected(corpus_dir: Path) -> None:
    """bug40482-bin: INCIDENT number 66; MySQL's rpl_binlog_corruption expects a read failure."""
    _, error = decode_all(
        corpus_dir / "enhancedformysql+mysql-8.0.40/mysql-test/std_data/bug40482-bin.000001"
    )
    assert isinstance(error, DecodeError)
    assert (error.offset, error.event_type) == (106, "INCIDENT")
    assert "incident number 66" in str(error)


def test_rows_query_length_byte_is_the_length(corpus_dir: Path) -> None:
    """Every ROWS_QUERY of the corpus stores its length modulo 256, as the server writes it."""
    seen = 0
    for row in corpus_manifest():
        if "ROWS_QUERY" not in row["events"]:
            continue
        events, _ = decode_all(corpus_dir / row["file"])
        for event in events.values():
            if isinstance(event, RowsQueryEvent):
                seen += 1
                assert event.length_byte is None
                assert event.query
    assert seen >= 1000


MY_TYPES = (
    "QUERY",
    "USER_VAR",
    "INTVAR",
    "RAND",
    "CREATE_FILE",
    "APPEND_BLOCK",
    "ANNOTATE",
    "CHECKPOINT",
)


def oracle_files() -> list[str]:
    return [row["file"] for row in corpus_manifest() if any(t in row["events"] for t in MY_TYPES)]


@pytest.mark.parametrize("name", oracle_files())
def test_mariadb_binlog_oracle(corpus_dir: Path, name: str) -> None:
    """``mariadb-binlog -vv`` on a corpus file (MySQL 4.1-9.x, MariaDB) agrees with binlogkit."""
    tool = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
    if tool is None:
        pytest.skip("mariadb-binlog is not installed (apt-get install mariadb-client)")
    path = corpus_dir / name
    done = subprocess.run([tool, "-vv", str(path)], capture_output=True, timeout=120, check=False)
    dump = parse_dump(done.stdout)
    events, _ = decode_all(path)
    checker = Checker(name)
    checker.compare(dump, events)
    assert not checker.failed, checker.failed[:10]
