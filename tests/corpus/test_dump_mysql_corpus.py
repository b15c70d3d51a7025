"""``binlogkit dump`` of MySQL binlogs against MySQL 8.0.40 mysqlbinlog, as mysql-test saw it.

The known answers are mysql-test ``.result`` files of the corpus (``expected/``):

- ``mysqlbinlog_hexdump.result``: the whole ``--hexdump`` dump of
  bug11747887-bin.000003, printed with mysql-test's TZ=GMT-3; the test masks
  the XID (``Xid = <number>``), so ours is masked the same way.
- ``mysqlbinlog.result`` (Bug#12688860): the whole dump of master-bin.000001
  through mysql-test's ``mysqlbinlog.inc``, which masks positions, times,
  versions and GTIDs; ours goes through the same masks.
- ``mysqlbinlog_base64_flag.result``: ``--base64-output=never`` on
  bug32407.001, which mysqlbinlog refuses at the first row event (the output is
  still closed); the test masks header lines and the thread id as ``<#>``.
- ``binlog_row_mysqlbinlog_verbose.result``: the ``###`` lines of ``-v`` for
  four NDB binlogs of MySQL 5.1.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from dump_compare import assert_same_dump, local_time_zone, our_dump

pytestmark = pytest.mark.corpus

MTR = "enhancedformysql+mysql-8.0.40/mysql-test"
RESULTS = f"expected/{MTR}"


@pytest.fixture
def mtr_time_zone() -> Iterator[None]:
    """Local time is mysql-test's default TZ (GMT-3, i.e. UTC+3) while the test runs."""
    with local_time_zone("GMT-3"):
        yield


def _section(text: str, start: str, end: str) -> str:
    """The lines of ``text`` after the line ``start`` up to and including the line ``end``."""
    lines = text.split("\n")
    first = lines.index(start) + 1
    last = lines.index(end, first)
    return "\n".join(lines[first : last + 1]) + "\n"


_TRAILER = "/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=0*/;"


def test_hexdump_dump(corpus_dir: Path, mtr_time_zone: None) -> None:
    want = (corpus_dir / RESULTS / "r/mysqlbinlog_hexdump.result").read_bytes()
    binlog = corpus_dir / MTR / "suite/binlog/std_data/bug11747887-bin.000003"
    got = re.sub(rb"\tXid = \d+", b"\tXid = <number>", our_dump(binlog, "--hexdump"))
    assert_same_dump(want, got, binlog.name)


def _mysqlbinlog_inc(dump: str) -> str:
    """mysql-test's include/mysqlbinlog.inc masks."""
    dump = re.sub(r"^# at \d+$", "# at #", dump, flags=re.M)
    dump = re.sub(
        r"^#\d{6} [ \d]\d:\d\d:\d\d server id \d+  end_log_pos \d+ CRC32 0x[0-9a-f]+ ",
        "# # server id #  end_log_pos # CRC32 # ",
        dump,
        flags=re.M,
    )
    dump = re.sub(r"binlog v \d+, server v \S+ created \d{6} [ \d]\d:\d\d:\d\d", "", dump)
    dump = dump.replace(
        "\tStart:  at startup", "\tStart: binlog v #, server v # created # at startup"
    )
    return re.sub(r"GTID_NEXT= '[^']*'", "GTID_NEXT= '#'", dump)


def test_masked_dump(corpus_dir: Path) -> None:
    result = (corpus_dir / RESULTS / "r/mysqlbinlog.result").read_text()
    start = "mysqlbinlog: [Warning] Using a password on the command line interface can be insecure."
    want = _section(result, start, _TRAILER)
    binlog = corpus_dir / MTR / "std_data/master-bin.000001"
    assert_same_dump(want.encode(), _mysqlbinlog_inc(our_dump(binlog).decode()).encode(), "mb")


def test_base64_never_refuses_row_events(corpus_dir: Path) -> None:
    result = (corpus_dir / RESULTS / "r/mysqlbinlog_base64_flag.result").read_text()
    start = "==== Test --base64-output=never on a binlog with row events ===="
    want = _section(result, start, _TRAILER)
    binlog = corpus_dir / MTR / "suite/binlog/std_data/bug32407.001"
    got = our_dump(binlog, "--base64-output=never").decode()
    got = re.sub(r"^(#\d{6} .*|SET @@session.pseudo_thread_id=.*)$", "<#>", got, flags=re.M)
    assert_same_dump(want.encode(), got.encode(), binlog.name)


NDB = ("write-partial-row", "write-full-row", "update-partial-row", "update-full-row")


@pytest.mark.parametrize("name", NDB)
def test_verbose_rows(corpus_dir: Path, name: str) -> None:
    result = corpus_dir / RESULTS / "suite/binlog/r/binlog_row_mysqlbinlog_verbose.result"
    sections = re.split(r"^Verbose statements from : ", result.read_text(), flags=re.M)
    section = next(s for s in sections if s.startswith(f"{name}.binlog\n"))
    want = [line for line in section.split("\n") if line.startswith("###")]
    binlog = corpus_dir / MTR / f"suite/binlog/std_data/{name}.binlog"
    got = [line for line in our_dump(binlog, "-v").decode().split("\n") if line.startswith("###")]
    assert got == want


OLD_ROWS = (
    f"{MTR}/suite/binlog/std_data/ver_5_1-wl2325_r.001",
    "northhurricane+mysql-5.6.21/mysql-test/suite/binlog/std_data/ver_5_1-telco.001",
    "northhurricane+mysql-5.6.21/mysql-test/suite/binlog/std_data/ver_5_1_17.001",
)


@pytest.mark.parametrize("name", OLD_ROWS)
def test_pre_ga_rows_print_no_statements(corpus_dir: Path, name: str) -> None:
    """Pre-GA rows events (types 20-22): the tools print them as ``*_rows_old`` without ``###``.

    Their images start with record NULL bytes; the tools' Old_rows_log_event
    prints only the header and the base64 (mariadb-binlog shows the same).
    """
    dump = our_dump(corpus_dir / name, "-vv").decode()
    assert dump.endswith(_TRAILER + "\n")
    assert "###" not in dump
    assert re.search(r"\t(Write|Update|Delete)_rows_old: table id \d+", dump)
