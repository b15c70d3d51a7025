"""Option types of the event selection of ``dump`` and ``flashback``, parsed as usage errors."""

from __future__ import annotations

from binlogkit.cli.main import Parsed, lazy

__all__ = ["GTID_SET", "ID_LIST", "REWRITE_DB"]

GTID_SET = Parsed("GTIDS", lazy("binlogkit.gtid:GtidSet.parse"))
ID_LIST = Parsed("IDS", lazy("binlogkit.dump.selection:parse_id_list"))
REWRITE_DB = Parsed("FROM->TO", lazy("binlogkit.dump.selection:parse_rewrite_db"))
