"""Binlog files per batch of SQL on a test server, with the schema history of them all."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from binlogkit.sandbox import MariaDBSandbox
from binlogkit.schema.history import SchemaHistory
from binlogkit.sources import open_binlog


def binlog_batches(server: MariaDBSandbox, sqls: Sequence[str], history: Path) -> list[list[str]]:
    """Run each of ``sqls`` on ``server``, then flush its binlog: per SQL the files it
    wrote (closed). The schema history of all of them is written to ``history``."""
    seen = set(server.flush_binlogs()[:-1])
    batches = []
    for sql in sqls:
        server.execute(sql)
        closed = server.flush_binlogs()[:-1]
        batches.append([str(f) for f in closed if f not in seen])
        seen.update(closed)
    with open_binlog([f for b in batches for f in b], schema=SchemaHistory(path=history)) as ev:
        for _ in ev:
            pass
    return batches
