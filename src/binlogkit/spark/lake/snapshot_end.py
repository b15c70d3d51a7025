"""Whether a batch starts past the end E of a snapshot's reads (docs/lakehouse.md, Mirror).

A snapshot's chunks were each read at a position at or before E, so a batch that
starts at E or later holds no change a chunk read, and may append a table's
inserts to its mirror. On the server the snapshot was read from (the stream's
generation of E) positions tell. After a failover the batch's start names
another server's binlog, and only GTIDs name the same point on both: E's GTID
position (``BINLOG_GTID_POS`` at E, recorded with it) is contained in the
batch's start (each domain of E at a sequence number at or past E's) when every
transaction before E is before the start. A replica logs a domain's
transactions in its primary's order (what a failover by GTID rests on too), so
all of a domain's transactions up to E's last come before the start.
"""

from __future__ import annotations

import os

from binlogkit.gtid import MariaGtidList
from binlogkit.io.binlog_index import split_generation
from binlogkit.schema.store import Position

__all__ = ["past_end"]


def past_end(start: Position, end: Position | None) -> bool:
    """Whether a batch that starts at ``start`` (its offset: file named with its generation,
    and GTID position) holds no change before ``end``, E. False when not known: no E (a
    snapshot that did not record it), or a start on a later generation without GTIDs on
    either side (MySQL, a lake whose E was recorded without its GTID position)."""
    if end is None:
        return False
    if _generation(start) == _generation(end):
        return start.key() >= end.key()
    if start.gtid is None or end.gtid is None:
        return False
    try:
        have, reads = MariaGtidList.parse(start.gtid), MariaGtidList.parse(end.gtid)
    except ValueError:
        return False
    return all(have.includes(gtid) for gtid in reads.position())


def _generation(at: Position) -> int:
    return split_generation(os.path.basename(at.file or ""))[0]
