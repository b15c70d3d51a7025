"""The contents of a workload's tables on a server, to compare two servers."""

from __future__ import annotations

from binlogkit.sandbox import MariaDBSandbox
from binlogkit.sandbox.workload import Workload

Snapshot = dict[str, tuple[str | None, list[tuple[str | None, ...]]]]


def snapshot(server: MariaDBSandbox, workload: Workload) -> Snapshot:
    """CHECKSUM TABLE and the sorted rows of every workload table."""
    out: Snapshot = {}
    for table in workload.tables:
        name = f"`{workload.database}`.`{table.name}`"
        checksum = server.query(f"CHECKSUM TABLE {name}")[0][1]
        rows = server.query(f"SELECT * FROM {name}")
        out[table.name] = (checksum, sorted(rows, key=lambda r: [(v is None, v or "") for v in r]))
    return out
