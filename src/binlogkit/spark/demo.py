"""The demo: a throwaway MariaDB into a Delta lakehouse on a local Spark session, then searched.

Run it as ``python -m binlogkit.spark.demo [--keep DIR]`` (``scripts/demo.sh`` sets it
all up). It starts a MariaDB sandbox with the server's default ``binlog_row_metadata``
(the binlog names no columns: the lake's schema history does), runs the sandbox's small
workload (six tables of many column types), then:

1. ``sync(..., once=True)``: a snapshot of the tables, then their binlog, into Delta
   mirrors and change logs;
2. more changes on the server (:data:`CHANGES`: inserts, updates, a primary-key change,
   deletes, an ADD COLUMN) and ``sync`` again: the binlog alone brings them;
3. the lake's ``status``, each mirror compared with the server's table
   (:func:`~binlogkit.spark.mirror_check.check_mirror`), a few mirror rows;
4. ``index`` of the text table's columns and :data:`QUERIES` answered by ``search``.

What it shows goes to stdout; Spark's and the server's chatter to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from binlogkit.sandbox import MariaDBSandbox, SandboxError
from binlogkit.sandbox.workload import build_workload, run_workload
from binlogkit.search import search
from binlogkit.spark import index, status, sync
from binlogkit.spark.lakehouse import lake_session
from binlogkit.spark.mirror_check import check_mirror
from binlogkit.spark.sync_progress import describe

__all__ = ["CHANGES", "QUERIES", "main", "run"]

CHANGES = """
INSERT INTO bk.t_int (id, int_s, big_u) VALUES (101, -42, 18446744073709551615), (102, 7, 0);
INSERT INTO bk.t_str_utf8mb4 (id, v300) VALUES (101, 'Inserted after the first sync, then synced');
UPDATE bk.t_int SET int_s = int_s + 1 WHERE id BETWEEN 4 AND 8;
UPDATE bk.t_str_utf8mb4 SET tx = 'Grüße from the binlog: updated after the first sync' WHERE id = 1;
UPDATE bk.t_decimal SET id = id + 500 WHERE id = 5;
DELETE FROM bk.t_temporal WHERE id IN (4, 6);
DELETE FROM bk.t_enum_set WHERE id = 1;
ALTER TABLE bk.t_int ADD COLUMN note VARCHAR(40) DEFAULT 'added by ALTER TABLE';
UPDATE bk.t_int SET note = 'set after the ALTER' WHERE id = 101;
"""
"""The changes between the two syncs (the last primary-key change moves t_decimal's row 5)."""

TEXT_TABLE = "bk.t_str_utf8mb4"
"""The table whose text columns are indexed."""

QUERIES = ('"first sync"', '"hello world" OR grüße')
"""Searched in the index: a phrase of the rows changed after the snapshot, then the workload's."""


class _Story:
    """Numbered steps on ``out``, each with how long it took."""

    def __init__(self, out: TextIO) -> None:
        self.out, self.steps = out, 0

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    @contextmanager
    def step(self, title: str) -> Iterator[None]:
        self.steps += 1
        self.say(f"\n== {self.steps}. {title}")
        began = time.monotonic()
        yield
        self.say(f"   ({time.monotonic() - began:.1f} s)")

    def progress(self, note: Any) -> None:
        """A line of ``sync``'s progress."""
        self.say(f"   {describe(note)}")


def run(server: MariaDBSandbox, folder: Path, *, spark: Any, out: TextIO = sys.stdout) -> bool:
    """The demo on the running ``server``, its lake and index in ``folder``; True when every
    mirror equals its table on the server and the first query finds the row inserted by
    :data:`CHANGES`."""
    story = _Story(out)
    url, lake, search_index = server.url, folder / "lake", folder / "index"
    metadata = server.variable("binlog_row_metadata")
    story.say(f"MariaDB {server.variable('version')}, binlog_row_metadata={metadata}: {url}")
    with story.step("the sandbox workload"):
        workload = run_workload(server, build_workload(small=True))
        story.say(f"   {len(workload.statements)} statements on {len(workload.tables)} tables")
    tables = [f"{workload.database}.*"]
    with story.step(f"binlogkit spark sync {url} --to {lake} --once"):
        first = sync(url, lake, tables=tables, once=True, spark=spark, progress=story.progress)
    with story.step("more changes on the server, then sync --once again"):
        for statement in filter(None, (s.strip() for s in CHANGES.split(";"))):
            story.say(f"   {statement}")
        server.execute(CHANGES)
        sync(url, lake, tables=tables, once=True, spark=spark, progress=story.progress)
    with story.step(f"binlogkit spark status {lake}"):
        found = status(lake, spark=spark)
        story.say("\n".join(f"   {line}" for line in found.text().splitlines()))
    with story.step("each mirror against the server's SELECT"):
        checks = [
            check_mirror(spark, url, lake, t.table)
            for t in found.tables
            if t.mirror_rows is not None
        ]
        story.say("\n".join(f"   {check.text()}" for check in checks))
        for name in first.snapshot.no_key:
            story.say(f"   {name}: no primary key, so no mirror (its changes are logged only)")
    with story.step("a few mirror rows: bk.t_int's rows that the second sync changed"):
        mirror = spark.read.format("delta").load(str(lake / "bk" / "t_int" / "mirror"))
        shown = mirror.where("id IN (4, 5, 101, 102)").orderBy("id")
        for row in shown.select("id", "int_s", "big_u", "note").collect():
            values = (
                f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in row.asDict().items()
            )
            story.say("   " + ", ".join(values))
    with story.step(f"binlogkit spark index {lake} --to {search_index} --tables {TEXT_TABLE}"):
        report = index(lake, search_index, tables=[TEXT_TABLE], once=True, spark=spark)
        story.say(f"   {report.docs:,} documents (column values) indexed")
    found_row = False
    for query in QUERIES:
        with story.step(f"binlogkit search {search_index} '{query}' --limit 3"):
            for hit in search(search_index, query, limit=3):
                story.say(f"   {hit.score:6.3f}  {hit.table} {hit.key} {hit.column}: {hit.snippet}")
                found_row |= query == QUERIES[0] and json.loads(hit.key) == {"id": 101}
    return all(check.equal for check in checks) and found_row


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m binlogkit.spark.demo", description=__doc__)
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args(argv)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="binlogkit-demo-"))
    folder.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    try:
        spark = lake_session()
        # The server's own binlog_row_metadata (None: no line in its my.cnf).
        with MariaDBSandbox(folder / "server", options={"binlog_row_metadata": None}) as server:
            good = run(server, folder, spark=spark)
        spark.stop()
    except SandboxError as err:
        print(f"demo: error: {err}", file=sys.stderr)
        return 1
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    print("\nall mirrors equal their tables; search found the new row" if good else "\nFAILED")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
