"""Runs a snapshot of ``crash.*`` in a process of its own (for the SIGKILL test): prints a
line per group committed. Usage: ``python snapshot_tool.py URL LAKE``."""

from __future__ import annotations

import sys
from pathlib import Path

from binlogkit.spark.delta import delta_session
from binlogkit.spark.snapshot import SnapshotProgress, run_snapshot


def _print(step: SnapshotProgress) -> None:
    print(f"progress {step.table} {step.rows}", flush=True)


def main() -> None:
    url, lake = sys.argv[1:3]
    spark = delta_session(Path(__file__).parents[2] / ".cache" / "jars", master="local[1]")
    spark.sparkContext.setLogLevel("ERROR")
    run_snapshot(
        spark, url, lake, tables=["crash.*"], chunk_rows=5, group_chunks=2, progress=_print
    )


if __name__ == "__main__":
    main()
