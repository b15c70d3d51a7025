"""Dump throughput: ``binlogkit dump`` next to ``mariadb-binlog`` on the same files, in one run.

Generates the binlogs of ``benchmarks/decode.py`` (a sysbench ``oltp_read_write``
run and bulk inserts) with a throwaway MariaDB, or takes ``--files``; then for
each file and each output mode runs both tools into /dev/null, each in its own
process pinned to one core, and prints wall time, MB/s and the speed ratio
(mariadb-binlog's time / ours; the target is at least 0.20). Our time includes
the interpreter's start-up.

    .venv/bin/python benchmarks/dump.py [--scale 1.0] [--files F ...] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from decode import generate, run_child

MODES: dict[str, tuple[str, ...]] = {
    "default": (),
    "-v": ("-v",),
    "-vv": ("-vv",),
    "decode-rows -v": ("--base64-output=decode-rows", "-v"),
    "hexdump": ("--hexdump",),
}
OURS = [sys.executable, "-c", "from binlogkit.cli.main import main; main()", "dump"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="workload size factor")
    parser.add_argument("--files", type=Path, nargs="*", help="dump these binlogs instead")
    parser.add_argument("--keep", type=Path, help="keep the generated binlogs in this folder")
    parser.add_argument("--modes", nargs="*", default=list(MODES), choices=list(MODES))
    args = parser.parse_args()

    base = Path(tempfile.mkdtemp(prefix="bk-dump-bench-"))
    try:
        if args.files:
            files = args.files
        else:
            print(f"generating binlogs (scale {args.scale}) ...", file=sys.stderr)
            files = generate(base, args.scale)
        # Time an installed program: its modules compiled once (not on every run, as
        # PYTHONDONTWRITEBYTECODE would have it), in a cache of our own.
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = str(base / "pycache")
        run_child([sys.executable, "-c", "import binlogkit.cli.dump"], capture=False)
        header = (
            f"{'file':<22}{'MB':>7}  {'mode':<16}{'ours s':>8}{'tool s':>8}{'MB/s':>7}{'ratio':>7}"
        )
        print(header)
        print("-" * len(header))
        worst = 1e9
        for path in files:
            mb = path.stat().st_size / 1e6
            for mode in args.modes:
                flags = MODES[mode]
                ours, _, _ = run_child([*OURS, *flags, str(path)], capture=False)
                theirs, _, _ = run_child(["mariadb-binlog", *flags, str(path)], capture=False)
                ratio = theirs / ours
                worst = min(worst, ratio)
                print(
                    f"{path.name[:22]:<22}{mb:>7.1f}  {mode:<16}{ours:>8.2f}{theirs:>8.2f}"
                    f"{mb / ours:>7.1f}{ratio:>7.2f}"
                )
        print(f"lowest ratio: {worst:.2f} x mariadb-binlog's speed (target 0.20)")
        if args.keep and not args.files:
            args.keep.mkdir(parents=True, exist_ok=True)
            for path in files:
                shutil.copy2(path, args.keep / path.name)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
