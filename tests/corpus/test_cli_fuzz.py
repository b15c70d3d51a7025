"""The command-line fuzz run (tests/cli_fuzz.py) in a child process with a memory limit.

``BINLOGKIT_CLI_FUZZ_CASES`` sets how many cases run (default 400, a few
seconds); a failure names its case number, which reproduces with
``python tests/cli_fuzz.py 1 NUMBER``.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

CASES = int(os.environ.get("BINLOGKIT_CLI_FUZZ_CASES", "400"))
MEMORY = 2 << 30
"""The child's address-space limit: a decompression bomb or a runaway printer hits it."""
SCRIPT = Path(__file__).resolve().parent.parent / "cli_fuzz.py"


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def test_cli_fuzz(corpus_dir: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(CASES)],
        env=os.environ | {"BINLOGKIT_CORPUS": str(corpus_dir)},
        preexec_fn=_limit_memory,
        capture_output=True,
        text=True,
        timeout=60 + CASES,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert " 0 failed" in done.stdout
