"""The ``binlogkit`` command line on real binlogs, against what the servers' own tools print.

Known answers come from the corpus's ``mariadb-binlog -vv`` dumps of the
MariaDB 10.11 files and from a ``mysqlbinlog --hexdump`` dump that MySQL's test
suite expects: event positions, end positions, server ids, the values the
tool shows for each event (which SHOW BINLOG EVENTS shows in its own words),
and the row changes of the ``-vv`` listings.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from corpus_files import CORPUS
from corpus_walk import LOCAL_MARIADB, corpus_files, reference_dump
from mysqlbinlog_dump import DumpEvent, parse_dump
from mysqlbinlog_dump import dump_rows as dump_row_statements

from binlogkit import jsonenc
from binlogkit.cli.main import cli

LOCAL = LOCAL_MARIADB
HEXDUMP_FILE = (
    "enhancedformysql+mysql-8.0.40/mysql-test/suite/binlog/std_data/bug11747887-bin.000003"
)
HEXDUMP_RESULT = "expected/enhancedformysql+mysql-8.0.40/mysql-test/r/mysqlbinlog_hexdump.result"
SHOW_BINLOG_EVENTS_COLUMNS = "Log_name\tPos\tEvent_type\tServer_id\tEnd_log_pos\tInfo"


def _local_files(max_size: int) -> list[str]:
    """The MariaDB 10.11 binlogs that have a dump and decode (not the encrypted ones)."""
    return [
        name
        for name in corpus_files()
        if name.startswith(f"{LOCAL}/")
        and "/encrypted/" not in name
        and (CORPUS / name).stat().st_size <= max_size
    ]


def _dump_of(name: str) -> dict[int, DumpEvent]:
    return parse_dump(reference_dump(name))


def run(*args: str) -> bytes:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout_bytes


def events_jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in run("events", "--format", "jsonl", str(path)).splitlines()]


# -- what the dumps say each event's Info is ------------------------------------------


def _statement(event: DumpEvent) -> str:
    """The statement a dump prints for a QUERY: the lines before its closing ``/*!*/;``."""
    lines = event.statement_lines()
    end = max(i for i, line in enumerate(lines) if line == b"/*!*/;")
    start = max(i for i, line in enumerate(lines[:end]) if line.endswith(b"/*!*/;")) + 1
    return b"\n".join(lines[start:end]).decode("utf-8", "surrogateescape")


_EXPECTED_INFO: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(r"Start: binlog v (\d+), server v (\S+) created .*"),
        r"Server ver: \2, Binlog ver: \1",
    ),
    (re.compile(r"Gtid list (\[.*\])"), r"\1"),
    (re.compile(r"Binlog checkpoint (\S+)"), r"\1"),
    (re.compile(r"Table_map: `(.*)`\.`(.*)` mapped to number (\d+)"), r"table_id: \3 (\1.\2)"),
    (re.compile(r"\w+_rows: table id (\d+)(.*)"), r"table_id: \1\2"),
    (re.compile(r"Xid = (\d+)"), r"COMMIT /* xid=\1 */"),
    (re.compile(r"Rotate to (\S+)  pos: (\d+)"), r"\1;pos=\2"),
    (re.compile(r"Stop"), ""),
]


def expected_infos(dump: dict[int, DumpEvent], binlog: bytes) -> dict[int, str]:
    """Info texts implied by the dump, for the events whose Info it fully determines.

    The dump does not show whether a QUERY was logged with LOG_EVENT_SUPPRESS_USE_F
    (0x0008), so that flag is read from the event's common header (bytes 17-18).
    """
    out: dict[int, str] = {}
    db = ""
    for offset, event in sorted(dump.items()):
        suppress_use = int.from_bytes(binlog[offset + 17 : offset + 19], "little") & 0x0008
        info = event.info.decode("utf-8", "surrogateescape")
        lines = event.statement_lines()
        for line in lines:
            if m := re.fullmatch(rb"use `(.*)`/\*!\*/;", line):
                db = m[1].decode()
        if info.startswith(("Query", "Query_compressed")):
            if not any(b"foreign_key_checks=0" in line for line in lines):
                use = f"use `{db}`; " if db and not suppress_use else ""
                out[offset] = use + _statement(event)
        elif info.startswith("Annotate_rows"):
            out[offset] = "\n".join(
                line[4:].decode("utf-8", "surrogateescape")
                for line in event.lines
                if line.startswith(b"#Q> ")
            )
        elif m := re.match(r"GTID (\d+-\d+-\d+)( cid=\d+)?", info):
            xa = [line[: -len(b"/*!*/;")] for line in lines if line.startswith(b"XA START ")]
            if xa:
                prefix = xa[0].decode() + " GTID "
            elif b"START TRANSACTION" in lines or b"BEGIN" in lines:
                prefix = "BEGIN GTID "
            else:
                prefix = "GTID "
            out[offset] = prefix + m[1] + (m[2] or "")
        else:
            for pattern, template in _EXPECTED_INFO:
                if m := pattern.fullmatch(info.strip()):
                    out[offset] = m.expand(template)
    return out


# -- events -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", _local_files(max_size=200_000))
def test_events_match_mariadb_binlog_dump(corpus_dir: Path, name: str) -> None:
    binlog = corpus_dir / name
    dump = _dump_of(name)
    listed = events_jsonl(binlog)
    # Where mariadb-binlog gave up (rc=1 in NOTE.txt), its dump is a prefix of the file.
    assert len(listed) >= len(dump)
    assert [(e["pos"], e["end_log_pos"], e["server_id"]) for e in listed[: len(dump)]] == [
        (offset, event.end_log_pos, event.server_id) for offset, event in sorted(dump.items())
    ]
    assert listed[-1]["next_pos"] == binlog.stat().st_size
    assert {e["file"] for e in listed} == {binlog.name}
    infos = {e["pos"]: e["info"] for e in listed}
    expected = expected_infos(dump, binlog.read_bytes())
    assert len(expected) >= len(dump) // 2  # the dump determines most Info texts
    assert {pos: infos[pos] for pos in expected} == expected


def test_events_match_mysqlbinlog_hexdump(corpus_dir: Path) -> None:
    dump = parse_dump((corpus_dir / HEXDUMP_RESULT).read_bytes())
    listed = events_jsonl(corpus_dir / HEXDUMP_FILE)
    assert [(e["pos"], e["end_log_pos"], e["server_id"]) for e in listed] == [
        (offset, event.end_log_pos, event.server_id) for offset, event in sorted(dump.items())
    ]
    # The hexdump shows each header's type byte and timestamp.
    for event in listed:
        header = dump[int(str(event["pos"]))].lines[1].decode().split()
        assert int(header[6], 16) == event["type_code"]
        assert int.from_bytes(bytes.fromhex("".join(header[2:6])), "little") == event["timestamp"]
    infos = {e["pos"]: e["info"] for e in listed}
    assert infos[4] == "Server ver: 5.6.4-m7-debug-log, Binlog ver: 4"
    assert infos[114] == "use `test`; DROP TABLE IF EXISTS `t10123456789` /* generated by server */"
    assert infos[245] == "use `test`; create table t10123456789(i int)"
    assert infos[422] == "@`2`=NULL"  # the dump: SET @`2`:=NULL
    assert infos[447] == "use `test`; insert into t10123456789 values(@2)"
    assert infos[710] == ""  # Stop


def test_events_text_is_show_binlog_events_batch_output(corpus_dir: Path) -> None:
    name = f"{LOCAL}/full/mysql-bin.000003"
    binlog = corpus_dir / name
    dump = _dump_of(name)
    lines = run("events", str(binlog)).decode("utf-8", "surrogateescape").split("\n")
    assert lines[0] == SHOW_BINLOG_EVENTS_COLUMNS
    assert lines[-1] == ""
    rows = [line.split("\t") for line in lines[1:-1]]
    assert all(len(row) == 6 for row in rows)
    assert [(int(r[1]), int(r[4])) for r in rows][: len(dump)] == [
        (offset, event.end_log_pos) for offset, event in sorted(dump.items())
    ]
    assert {r[0] for r in rows} == {"mysql-bin.000003"}
    # A multi-line statement stays on one line, escaped as `mariadb --batch` does.
    expected = expected_infos(dump, binlog.read_bytes())
    assert "\n" in expected[384]
    escaped = {
        pos: info.replace("\\", "\\\\").replace("\n", "\\n") for pos, info in expected.items()
    }
    assert {int(r[1]): r[5] for r in rows if int(r[1]) in escaped} == escaped


def test_events_of_several_files_in_order(corpus_dir: Path) -> None:
    folder = corpus_dir / LOCAL / "full"
    listed = events_jsonl(folder / "mysql-bin.000003") + events_jsonl(folder / "mysql-bin.000004")
    files = [str(folder / "mysql-bin.000003"), str(folder / "mysql-bin.000004")]
    together = [
        json.loads(line) for line in run("events", "--format", "jsonl", *files).splitlines()
    ]
    assert together == listed


def test_errors_name_file_and_offset(corpus_dir: Path) -> None:
    encrypted = corpus_dir / LOCAL / "encrypted" / "mysql-bin.000001"
    result = CliRunner().invoke(cli, ["events", str(encrypted)])
    assert result.exit_code == 1
    assert str(encrypted) in result.output
    assert "offset" in result.output


# -- rows -------------------------------------------------------------------------------

_GTID = re.compile(rb"GTID (\d+-\d+-\d+)")
_TABLE = re.compile(rb"`(.*)`\.`(.*)`")
_OPS = {"INSERT": "c", "UPDATE": "u", "DELETE": "d"}
_INT_TEXT = re.compile(rb"(-?\d+|NULL)(?: \((\d+)\))?")
_INT_TYPES = (b"TINYINT ", b"SHORTINT ", b"MEDIUMINT ", b"INT ", b"LONGINT ")


def dump_rows(dump: dict[int, DumpEvent]) -> list[dict[str, object]]:
    """Each row change of a ``-vv`` dump: op, db, table, gtid and its integer values.

    ``group`` holds the offsets of the row's statement's rows events (see
    :func:`mysqlbinlog_dump.dump_rows`); the gtid is the last one before them.
    """
    gtids = [(offset, m[1].decode()) for offset, e in dump.items() if (m := _GTID.match(e.info))]
    rows: list[dict[str, object]] = []
    for row in dump_row_statements(dump):
        table = _TABLE.fullmatch(row.table)
        assert table is not None, row.table
        at = row.group[-1]
        gtid = max(((o, g) for o, g in gtids if o < at), default=(0, None))[1]
        images: dict[str, dict[int, set[int | None]]] = {"before": {}, "after": {}}
        for image, values in (("before", row.before), ("after", row.after)):
            for column, printed in (values or {}).items():
                m = _INT_TEXT.fullmatch(printed.text)
                if m is None or not printed.comment.startswith(_INT_TYPES):
                    continue
                both = {None} if m[1] == b"NULL" else {int(m[1])} | ({int(m[2])} if m[2] else set())
                images[image][column] = both
        rows.append(
            {
                "group": row.group,
                "op": _OPS[row.verb],
                "db": table[1].decode(),
                "table": table[2].decode(),
                "gtid": gtid,
                **images,
            }
        )
    return rows


@pytest.mark.parametrize(
    "name",
    [
        f"{LOCAL}/compressed/mysql-bin.000002",
        f"{LOCAL}/mariadb-defaults/mysql-bin.000002",
        f"{LOCAL}/minimal/mysql-bin.000002",
        f"{LOCAL}/gtid/mysql-bin.000005",
    ],
)
def test_rows_match_mariadb_binlog_dump(corpus_dir: Path, name: str) -> None:
    binlog = corpus_dir / name
    expected = dump_rows(_dump_of(name))
    changes = [jsonenc.loads(line) for line in run("rows", str(binlog)).splitlines()]
    assert len(changes) == len(expected) > 0
    full_image = "minimal" not in name
    for change, want in zip(changes, expected, strict=True):
        source = change["source"]
        assert (change["op"], source["db"], source["table"], source["gtid"]) == (
            want["op"],
            want["db"],
            want["table"],
            want["gtid"],
        )
        assert source["pos"] in want["group"]
        assert source["file"] == binlog.name
        assert (change["before"] is None) == (want["op"] == "c")
        assert (change["after"] is None) == (want["op"] == "d")
        for image in ("before", "after"):
            got, ints = change[image], want[image]
            assert isinstance(ints, dict)
            if got is None or not full_image:
                continue
            values = list(got.values())
            for column, allowed in ints.items():
                assert values[column - 1] in allowed, (image, column, values[column - 1], allowed)


def test_rows_text_format(corpus_dir: Path) -> None:
    name = f"{LOCAL}/gtid/mysql-bin.000005"
    binlog = corpus_dir / name
    expected = dump_rows(_dump_of(name))
    text = run("rows", "--format", "text", str(binlog)).decode()
    heads = [line for line in text.splitlines() if not line.startswith("  ")]
    assert len(heads) == len(expected)
    words = {"c": "INSERT", "u": "UPDATE", "d": "DELETE"}
    for head, want in zip(heads, expected, strict=True):
        assert head.startswith(f"{words[str(want['op'])]} {want['db']}.{want['table']} at ")
        assert f" gtid {want['gtid']} " in head


def test_rows_table_filter(corpus_dir: Path) -> None:
    name = f"{LOCAL}/full/mysql-bin.000002"
    binlog = corpus_dir / name
    expected = dump_rows(_dump_of(name))
    tables = sorted({(str(w["db"]), str(w["table"])) for w in expected})
    assert len(tables) > 2
    picked = tables[:2]
    args = [arg for db, table in picked for arg in ("--table", f"{db}.{table}")]
    changes = [jsonenc.loads(line) for line in run("rows", *args, str(binlog)).splitlines()]
    want = [w for w in expected if (w["db"], w["table"]) in picked]
    assert len(changes) == len(want) > 0
    for change, w in zip(changes, want, strict=True):
        assert (change["op"], change["source"]["table"]) == (w["op"], w["table"])


def test_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0 and re.fullmatch(r"binlogkit \d+\.\d+\.\d+\S*\n", result.output)
    assert result.output == f"binlogkit {importlib.metadata.version('binlogkit')}\n"  # one version
