"""Option types of the event selection of ``dump`` and ``flashback``, parsed as usage errors."""

from __future__ import annotations

from binlogkit.cli.main import Parsed
from binlogkit.dump.selection import parse_id_list, parse_rewrite_db
from binlogkit.gtid import GtidSet

__all__ = ["GTID_SET", "ID_LIST", "REWRITE_DB"]

GTID_SET = Parsed("GTIDS", GtidSet.parse)
ID_LIST = Parsed("IDS", parse_id_list)
REWRITE_DB = Parsed("FROM->TO", parse_rewrite_db)
