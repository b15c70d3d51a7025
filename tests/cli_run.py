"""Running ``binlogkit`` in the test process under a time limit, and what a clean failure is.

A plain module, not a conftest, so tests in any folder can import it by name.
"""

from __future__ import annotations

from dataclasses import dataclass

from click.testing import CliRunner
from time_limit import time_limit

from binlogkit.cli.main import cli


@dataclass(frozen=True)
class Run:
    """How one command ended: its exit code, output and error text."""

    exit_code: int
    stdout: bytes
    stderr: str
    exception: BaseException | None

    def failed_cleanly(self) -> str | None:
        """None when the command failed with one error line and no traceback; else why not.

        (A usage error comes after click's usage lines.)
        """
        if self.exception is not None and not isinstance(self.exception, SystemExit):
            return f"{type(self.exception).__name__}: {self.exception}"
        if self.exit_code == 0:
            return "exit code 0"
        errors = [line for line in self.stderr.splitlines() if line.startswith("Error: ")]
        if len(errors) != 1 or "Traceback" in self.stderr:
            return f"not one error line: {self.stderr!r}"
        return None


def invoke(*args: str, seconds: float = 10.0, stdin: bytes | str | None = None) -> Run:
    """Run ``binlogkit ARGS`` in this process; a hang fails after ``seconds``."""
    with time_limit(seconds):
        result = CliRunner().invoke(cli, list(args), input=stdin)
    return Run(result.exit_code, result.stdout_bytes, result.stderr, result.exception)
