"""The newest commit of each Delta table of a lake, read from its ``_delta_log`` folder (no
Spark job): what a test compares to see that a batch applied again committed nothing."""

from __future__ import annotations

from pathlib import Path


def newest_commit(table: Path) -> int:
    """The version of the newest commit of the Delta table at ``table``."""
    return max(int(entry.name.split(".")[0]) for entry in table.glob("_delta_log/*.json"))


def newest_commits(lake: Path, tables: str = "shop/*/*") -> dict[str, int]:
    """:func:`newest_commit` of each table under ``lake`` whose path matches ``tables``."""
    return {str(path): newest_commit(path) for path in sorted(lake.glob(tables))}
