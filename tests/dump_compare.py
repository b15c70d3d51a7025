"""Run ``mariadb-binlog`` and ``binlogkit dump`` on the same file and compare the texts.

A plain module (not a conftest) so the corpus and live dump tests share it.
The tool's output is the known answer; ours must equal it line for line.
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from click.testing import CliRunner

from binlogkit.cli.main import cli

TOOL = shutil.which("mariadb-binlog")


@contextmanager
def local_time_zone(tz: str) -> Iterator[None]:
    """Local time is ``tz`` (a ``TZ`` value) inside the block: dumps print local times."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = tz
    time.tzset()
    try:
        yield
    finally:
        if old is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = old
        time.tzset()


def tool_dump(path: Path, *args: str) -> bytes:
    """What ``mariadb-binlog ARGS PATH`` prints (its exit status is not checked: it may fail
    midway on values it cannot print, and ours must then stop at the same place)."""
    assert TOOL is not None
    return subprocess.run([TOOL, *args, str(path)], capture_output=True, check=False).stdout


def our_dump(path: Path, *args: str) -> bytes:
    """What ``binlogkit dump ARGS PATH`` prints."""
    result = CliRunner().invoke(cli, ["dump", *args, str(path)], catch_exceptions=False)
    return result.stdout_bytes


def tool_run(*args: str) -> bytes:
    """What ``mariadb-binlog --no-defaults ARGS`` prints (for -R: no option files)."""
    assert TOOL is not None
    return subprocess.run([TOOL, "--no-defaults", *args], capture_output=True, check=False).stdout


def our_run(*args: str) -> bytes:
    """What ``binlogkit dump ARGS`` prints."""
    result = CliRunner().invoke(cli, ["dump", *args], catch_exceptions=False)
    return result.stdout_bytes


def diff_text(want: bytes, got: bytes, label: str, limit: int = 60) -> str:
    """A unified diff of the two dumps (the first ``limit`` lines), for assertion messages."""
    lines = difflib.unified_diff(
        want.decode("utf-8", "replace").splitlines(),
        got.decode("utf-8", "replace").splitlines(),
        f"mariadb-binlog {label}",
        f"binlogkit dump {label}",
        lineterm="",
    )
    return "\n".join(line[:240] for _, line in zip(range(limit), lines, strict=False))


def assert_same_dump(want: bytes, got: bytes, label: str) -> None:
    assert got == want, "dumps differ:\n" + diff_text(want, got, label)
