"""What the file commands load: ``events`` and ``dump`` read without the schema history (its
SQL parser is the largest import of all); ``rows`` keeps it, for its columns."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.corpus

RUN = """
import json, sys
from binlogkit.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit as stop:
    assert not stop.code, stop.code
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""

HISTORY = {"binlogkit.schema.history", "sqlglot"}


def loaded_by(*args: str) -> set[str]:
    """The modules ``binlogkit ARGS`` holds at its end."""
    done = subprocess.run(
        [sys.executable, "-c", RUN, *args], capture_output=True, text=True, check=True
    )
    return set(json.loads(done.stderr.splitlines()[-1]))


@pytest.mark.parametrize(
    ("command", "history"), [("events", False), ("dump", False), ("rows", True)]
)
def test_only_rows_keeps_a_schema_history(corpus_dir: Path, command: str, history: bool) -> None:
    binlog = corpus_dir / "local-mariadb-10.11/mariadb-defaults/mysql-bin.000002"  # DDL, NO_LOG
    loaded = loaded_by(command, str(binlog))
    assert loaded >= HISTORY if history else loaded.isdisjoint(HISTORY)
