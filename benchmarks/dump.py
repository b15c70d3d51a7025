"""Dump throughput: ``binlogkit dump`` next to ``mariadb-binlog`` on the same files, in one run.

Generates the binlogs of ``benchmarks/decode.py`` (a sysbench ``oltp_read_write``
run and bulk inserts) with a throwaway MariaDB, or takes ``--files``; then for
each file and each output mode runs both tools into /dev/null, each in its own
process pinned to one core, and prints wall and CPU time (user + system of the
child, which stays comparable on a loaded machine), MB/s and the speed ratios
(mariadb-binlog's time / ours; the target is at least 0.20, judged on CPU
time). Our time includes the interpreter's start-up, which weighs on small
files: each tool's start-up is measured on a binlog holding only a format
description, and the ``net`` column gives the CPU ratio without it (the speed
of the dumping itself).

    .venv/bin/python benchmarks/dump.py [--scale 1.0] [--files F ...] [--keep DIR] [--repeat N]

With ``--repeat N`` each command runs N times (alternating) and the lowest
times count, which steadies the numbers on a busy machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from decode import generate

MODES: dict[str, tuple[str, ...]] = {
    "default": (),
    "-v": ("-v",),
    "-vv": ("-vv",),
    "decode-rows -v": ("--base64-output=decode-rows", "-v"),
    "hexdump": ("--hexdump",),
}
OURS = [sys.executable, "-c", "from binlogkit.cli.main import main; main()", "dump"]


def run_child(args: list[str]) -> tuple[float, float]:
    """Run a command pinned to one core, output to /dev/null: its wall and CPU seconds."""
    pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
    start = time.perf_counter()
    child = subprocess.Popen(pin + args, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status):
        raise subprocess.CalledProcessError(os.waitstatus_to_exitcode(status), args)
    return wall, usage.ru_utime + usage.ru_stime


def startup_file(path: Path, folder: Path) -> Path:
    """A binlog of ``path``'s magic and format description alone (what a start costs)."""
    data = path.read_bytes()
    size = int.from_bytes(data[13:17], "little")  # the first event's size
    out = folder / "startup.000001"
    out.write_bytes(data[: 4 + size])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="workload size factor")
    parser.add_argument("--files", type=Path, nargs="*", help="dump these binlogs instead")
    parser.add_argument("--keep", type=Path, help="keep the generated binlogs in this folder")
    parser.add_argument("--modes", nargs="*", default=list(MODES), choices=list(MODES))
    parser.add_argument("--repeat", type=int, default=1, help="runs of each command (lowest)")
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
        run_child([sys.executable, "-c", "import binlogkit.cli.dump"])
        empty = str(startup_file(files[0], base))
        starts = [
            (run_child([*OURS, empty])[1], run_child(["mariadb-binlog", empty])[1])
            for _ in range(max(args.repeat, 3))
        ]
        our_start = min(ours for ours, _ in starts)
        tool_start = min(theirs for _, theirs in starts)
        print(
            f"start-up CPU (a binlog of one event): ours {our_start:.3f} s, tool {tool_start:.3f} s"
        )
        header = (
            f"{'file':<22}{'MB':>7}  {'mode':<16}{'ours s':>8}{'tool s':>8}{'ratio':>7}"
            f"{'ours cpu':>9}{'tool cpu':>9}{'MB/s':>7}{'cpu ratio':>10}{'net':>6}"
        )
        print(header)
        print("-" * len(header))
        worst = worst_net = 1e9
        for path in files:
            mb = path.stat().st_size / 1e6
            for mode in args.modes:
                flags = MODES[mode]
                runs = [
                    (
                        run_child([*OURS, *flags, str(path)]),
                        run_child(["mariadb-binlog", *flags, str(path)]),
                    )
                    for _ in range(max(args.repeat, 1))
                ]
                ours = min(run[0][0] for run in runs)
                ours_cpu = min(run[0][1] for run in runs)
                theirs = min(run[1][0] for run in runs)
                theirs_cpu = min(run[1][1] for run in runs)
                cpu_ratio = theirs_cpu / max(ours_cpu, 1e-3)
                net = max(theirs_cpu - tool_start, 0) / max(ours_cpu - our_start, 1e-3)
                worst, worst_net = min(worst, cpu_ratio), min(worst_net, net)
                print(
                    f"{path.name[:22]:<22}{mb:>7.1f}  {mode:<16}{ours:>8.2f}{theirs:>8.2f}"
                    f"{theirs / ours:>7.2f}{ours_cpu:>9.2f}{theirs_cpu:>9.2f}"
                    f"{mb / ours_cpu:>7.1f}{cpu_ratio:>10.2f}{net:>6.2f}",
                    flush=True,
                )
        print(f"lowest CPU ratio: {worst:.2f} x mariadb-binlog's speed (target 0.20)")
        print(f"lowest CPU ratio without each tool's start-up: {worst_net:.2f}")
        if args.keep and not args.files:
            args.keep.mkdir(parents=True, exist_ok=True)
            for path in files:
                shutil.copy2(path, args.keep / path.name)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
