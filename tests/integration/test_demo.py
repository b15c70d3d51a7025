"""The README's decode demo (scripts/demo.sh decode): it starts its own server and prints every
row change the server logged."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from binlogkit.sandbox import mariadbd_path

pytestmark = pytest.mark.mariadb

_STATEMENT = re.compile(rb"^### (INSERT INTO|UPDATE|DELETE FROM) ", re.M)
_OPS = {b"INSERT INTO": "c", b"UPDATE": "u", b"DELETE FROM": "d"}


def test_demo_prints_each_row_change_mariadb_binlog_sees(tmp_path: Path) -> None:
    if mariadbd_path() is None and not os.environ.get("CI"):
        pytest.skip("MariaDB server not installed (CI must have it: there this test fails)")
    keep = tmp_path / "demo"
    done = subprocess.run(
        [sys.executable, "-m", "binlogkit.sandbox.demo", "--keep", str(keep)],
        capture_output=True,
        check=True,
        timeout=300,
    )
    ours = Counter(json.loads(line)["op"] for line in done.stdout.splitlines())
    theirs: Counter[str] = Counter()
    binlogs = sorted(p for p in (keep / "server" / "binlog").glob("mysql-bin.[0-9]*"))
    for path in binlogs:
        dump = subprocess.run(
            ["mariadb-binlog", "--base64-output=decode-rows", "-v", str(path)],
            capture_output=True,
            check=True,
        ).stdout
        theirs.update(_OPS[m[1]] for m in _STATEMENT.finditer(dump))
    assert sum(theirs.values()) > 0, "the demo workload logged no row changes"
    assert ours == theirs
