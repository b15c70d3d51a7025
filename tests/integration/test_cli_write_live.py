"""Live: ``binlogkit write`` output applied by MariaDB gives the rows of the input.

Rows of many column types, as JSON lines in plain JSON and in binlogkit's
tagged encoding, become a binlog with ``binlogkit write`` (once plain, once
``--compress``); ``mariadb-binlog FILE | mariadb`` applies each to an empty
copy of the table. SELECT then shows exactly the values binlogkit reads back
from the file (:mod:`live_replay`'s lossless comparison), and the text forms
given in the input (UUID, INET6, DECIMAL, TIME, DATETIME, SET, JSON) come
back from the server as written. ``mariadb-binlog -vv`` reads each file as
``binlogkit dump -vv`` does.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from dump_compare import assert_same_dump, our_dump, tool_dump
from live_replay import compare, snapshot

import binlogkit
from binlogkit.cli.main import cli
from binlogkit.sandbox import MariaDBSandbox

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

TABLE = (
    "CREATE TABLE t (id BIGINT UNSIGNED NOT NULL PRIMARY KEY, i TINYINT, m MEDIUMINT UNSIGNED,"
    " amount DECIMAL(65,30), f FLOAT, g DOUBLE, d DATE, at DATETIME(6), ts TIMESTAMP(3) NULL,"
    " span TIME(2), y YEAR, b BIT(10), c CHAR(4) CHARACTER SET latin1, v VARCHAR(10),"
    " tx TEXT, bn BINARY(3), bl BLOB, e ENUM('x','yé'), s SET('p','q','r'), doc JSON,"
    " ip INET6, u UUID, pt POINT NULL) DEFAULT CHARSET=utf8mb4"
)
ROWS = [
    {
        "id": 18446744073709551615,
        "i": -128,
        "m": 16777215,
        "amount": "-12345678901234567890123456789012345.123456789012345678901234567890",
        "f": 1.5,
        "g": -2.25e-300,
        "d": "2024-02-29",
        "at": "9999-12-31 23:59:59.999999",
        "ts": "2038-01-19 03:14:07.499",
        "span": "-838:59:59.99",
        "y": 2155,
        "b": 1023,
        "c": "àb",
        "v": "név 😀",
        "tx": "long " * 100,
        "bn": {"$binary": "AAE="},
        "bl": {"$binary": "/wD+"},
        "e": "yé",
        "s": "p,r",
        "doc": {"k": [1, "two", None, True]},
        "ip": "2001:db8::ff",
        "u": "01890f3c-1a2b-7c3d-8e4f-0123456789ab",
        "pt": {"$geometry": {"srid": 0, "wkb": "AQEAAAAAAAAAAADwPwAAAAAAAABA"}},
    },
    {"id": 2, "d": "0000-00-00", "at": "0000-00-00 00:00:00", "span": "25:00:00", "y": 0},
]
ROWS[1] = {key: ROWS[1].get(key) for key in ROWS[0]}
SHOWN = (
    "-12345678901234567890123456789012345.123456789012345678901234567890",
    "2024-02-29",
    "9999-12-31 23:59:59.999999",
    "-838:59:59.99",
    "p,r",
    "2001:db8::ff",
    "01890f3c-1a2b-7c3d-8e4f-0123456789ab",
)


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "compressed"])
def test_written_rows_apply_on_mariadb(
    mariadb_factory: Callable[..., MariaDBSandbox], tmp_path: Path, compress: bool
) -> None:
    server = mariadb_factory(f"cli-write-{compress}")
    server.execute(f"CREATE DATABASE w; USE w; {TABLE}")
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    target = tmp_path / "w-bin.000001"
    args = ["write", "--table", "w.t", "--schema", TABLE, str(source), "--to", str(target)]
    result = CliRunner().invoke(cli, [*args, *(["--compress"] if compress else [])])
    assert result.exit_code == 0, result.output
    tool = subprocess.run(["mariadb-binlog", str(target)], capture_output=True, check=False)
    assert (tool.returncode, tool.stderr) == (0, b"")
    applied = subprocess.run(
        server.client_command(), input=tool.stdout, capture_output=True, check=False
    )
    assert applied.returncode == 0, applied.stderr.decode(errors="replace")
    with binlogkit.open(target, schema=None) as events:
        kinds = []
        written = []
        for event in events:
            kinds.append(event.type_name)
            written += [change.after for change in getattr(event, "rows", ())]
    assert ("MARIADB_WRITE_ROWS_COMPRESSED_V1" in kinds) is compress
    assert len(written) == len(ROWS)
    problems = compare(snapshot(server, "w", "t"), written, lenient=False)
    assert not problems, "\n".join(problems)
    shown = server.query(
        "SELECT amount, d, at, span, s, ip, u, JSON_EXTRACT(doc, '$.k[1]') FROM w.t WHERE id > 2"
    )
    assert shown == [(*SHOWN, '"two"')]
    assert_same_dump(tool_dump(target, "-vv"), our_dump(target, "-vv"), target.name)
