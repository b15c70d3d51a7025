"""The decode demo (``scripts/demo.sh decode``): start a throwaway MariaDB, run a small workload,
print the decoded row changes.

Run it as ``python -m binlogkit.sandbox.demo [--keep DIR] [--full]``. The row
changes go to stdout, one JSON object per line, exactly as ``binlogkit rows
--format jsonl`` prints them; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from binlogkit.sandbox.server import MariaDBSandbox, SandboxError
from binlogkit.sandbox.workload import build_workload, run_workload


def _say(text: str) -> None:
    print(f"demo: {text}", file=sys.stderr, flush=True)


def produce_binlogs(folder: Path, *, small: bool = True) -> list[Path]:
    """Run the workload on a throwaway server in ``folder``; the binlog files it wrote."""
    with MariaDBSandbox(folder / "server") as server:
        _say(f"MariaDB {server.variable('version')} up on port {server.port} (pid {server.pid})")
        run_workload(server, build_workload(small=small), progress=_say)
        files = server.flush_binlogs()
    _say(f"server stopped; binlogs: {', '.join(p.name for p in files)}")
    return files


def print_rows(files: Sequence[Path]) -> None:
    """Print every row change of ``files`` as JSON lines, as ``binlogkit rows`` does."""
    from binlogkit.cli.main import main as cli_main

    cli_main(["rows", "--format", "jsonl", *map(str, files)])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m binlogkit.sandbox.demo", description=__doc__)
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument("--full", action="store_true", help="run the full workload (all types)")
    args = parser.parse_args(argv)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="binlogkit-demo-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        files = produce_binlogs(folder, small=not args.full)
        print_rows(files)
    except SandboxError as err:
        _say(f"error: {err}")
        return 1
    except BrokenPipeError:  # stdout closed early, e.g. piped into head
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
