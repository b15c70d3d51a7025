"""Does a lake's mirror equal its source table? Row counts and contents, compared on Spark.

:func:`check_mirror` reads the table on the server now (``SELECT`` in a consistent-snapshot
transaction, through the snapshot's reader, :func:`binlogkit.spark.snapshot_source.chunk_frame`,
so each value is typed by the lake's documented mapping, docs/lakehouse.md) and the mirror's
Delta table, and counts the rows each has that the other lacks (as multisets). Meant for a
lake whose source is quiet, as after ``sync --once``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import BinlogError
from binlogkit.schema.model import Catalog, TableName
from binlogkit.schema.seed import reread_tables
from binlogkit.schema.table_map import column_infos
from binlogkit.spark.chunks import chunk_key
from binlogkit.spark.lake.storage import lake_path
from binlogkit.spark.lake.tables import quote
from binlogkit.spark.snapshot_source import chunk_frame, open_snapshot, snapshot_position
from binlogkit.spark.sync_state import LakeLayout, redact_url

__all__ = ["MirrorCheck", "check_mirror"]


@frozen_dataclass
class MirrorCheck:
    """One table: rows on the server and in the mirror, and rows only one side has."""

    table: str
    server_rows: int
    mirror_rows: int
    only_server: int
    only_mirror: int

    @property
    def equal(self) -> bool:
        return self.server_rows == self.mirror_rows and not (self.only_server or self.only_mirror)

    def text(self) -> str:
        verdict = "equal" if self.equal else "NOT equal"
        counts = f"server {self.server_rows:,} rows, mirror {self.mirror_rows:,} rows"
        differ = (
            ""
            if self.equal
            else f" ({self.only_server:,} rows only on the server, "
            f"{self.only_mirror:,} only in the mirror)"
        )
        return f"{self.table}: {counts}, contents {verdict}{differ}"


def check_mirror(spark: Any, url: str, lake: str | Path, table: str) -> MirrorCheck:
    """Compare the mirror of ``table`` (``db.name``) in ``lake`` with the table on the server
    at ``url``."""
    db, _, name = table.partition(".")
    with open_snapshot(url) as conn:
        definition = reread_tables(conn, Catalog(), [TableName(db, name)]).table(db, name)
        if definition is None:
            raise BinlogError(f"table {table} is not on the server {redact_url(url)}")
        key = chunk_key(conn, definition)
        at = snapshot_position(conn)
        conn.execute("COMMIT")
    whole = (None, None)
    server = chunk_frame(spark, url, definition, column_infos(definition), key, [whole], at)
    mirror_path = str(LakeLayout(lake_path(lake)).table(table) / "mirror")
    mirror = spark.read.format("delta").load(mirror_path).select(*map(quote, server.columns))
    return MirrorCheck(table, *_counts(server, mirror))


def _counts(server: Any, mirror: Any) -> tuple[int, int, int, int]:
    """Rows of each frame, and of each the rows the other lacks, counted as multisets (a row
    twice on one side and once on the other is once too many): one Spark job."""
    from pyspark.sql import functions as F

    side, on_server, in_mirror = "_binlogkit_side", "_binlogkit_server", "_binlogkit_mirror"
    both = server.withColumn(side, F.lit(1)).unionByName(mirror.withColumn(side, F.lit(-1)))
    per_row = both.groupBy(*map(quote, server.columns)).agg(
        F.count_if(F.col(side) == 1).alias(on_server),
        F.count_if(F.col(side) == -1).alias(in_mirror),
    )
    s, m = F.col(on_server), F.col(in_mirror)
    found = per_row.agg(
        F.sum(s), F.sum(m), F.sum(F.greatest(s - m, F.lit(0))), F.sum(F.greatest(m - s, F.lit(0)))
    ).first()
    server_rows, mirror_rows, only_server, only_mirror = (int(v or 0) for v in found)
    return server_rows, mirror_rows, only_server, only_mirror
