"""The system variables a binlog server shows replicas, from its settings and its binlogs.

:class:`ServerVariables` is the mapping the set-up queries read
(``SELECT @@...``, ``SHOW VARIABLES``): fixed values for what a replica
checks (version, server id, binlog format, GTID mode ...), and values read
from the served files when asked: the checksum (the last file's format
description), MariaDB's ``gtid_binlog_pos``/``gtid_binlog_state``/
``gtid_current_pos``/``gtid_domain_id`` and MySQL's ``gtid_executed``/
``gtid_purged`` (GTID lists and GTID events). ``BINLOG_GTID_POS()`` is here too.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping

from binlogkit.gtid import GtidSet, MariaGtidList
from binlogkit.protocol.binlog_sender import Flavor
from binlogkit.services.binlog_directory import BinlogDirectory

__all__ = ["ServerVariables"]


class ServerVariables(Mapping[str, str]):
    """The server's system variables, each computed when asked (GTID states scan the files)."""

    def __init__(
        self,
        directory: BinlogDirectory,
        *,
        flavor: Flavor,
        version: str,
        server_id: int,
        port: int,
        semi_sync: bool,
    ) -> None:
        self.directory = directory
        fixed = {
            "version": version,
            "version_comment": "binlogkit binlog server",
            "server_id": str(server_id),
            "port": str(port),
            "hostname": "binlogkit",
            "log_bin": "ON",
            "binlog_format": "ROW",
            "max_allowed_packet": str(1 << 30),
            "character_set_server": "utf8mb4",
            "collation_server": "utf8mb4_general_ci",
            "time_zone": "SYSTEM",
            "system_time_zone": "UTC",
            "read_only": "ON",
            "lower_case_table_names": "0",
        }
        if flavor == "mariadb":
            fixed |= {
                "gtid_strict_mode": "OFF",
                "rpl_semi_sync_master_enabled": "ON" if semi_sync else "OFF",
            }
        else:
            fixed |= {
                "server_uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"binlogkit:{server_id}")),
                "gtid_mode": "ON",
                "enforce_gtid_consistency": "ON",
            }
            if semi_sync:
                fixed |= {
                    "rpl_semi_sync_source_enabled": "ON",
                    "rpl_semi_sync_source_timeout": "10000",
                    "rpl_semi_sync_source_wait_point": "AFTER_SYNC",
                }
        self._fixed = fixed
        self._computed = (
            (
                "binlog_checksum",
                "gtid_domain_id",
                "gtid_binlog_pos",
                "gtid_binlog_state",
                "gtid_current_pos",
            )
            if flavor == "mariadb"
            else ("binlog_checksum", "gtid_executed", "gtid_purged")
        )

    def __getitem__(self, name: str) -> str:
        if name in self._fixed:
            return self._fixed[name]
        if name not in self._computed:
            raise KeyError(name)
        directory = self.directory
        if name == "binlog_checksum":
            return directory.checksum()
        if name == "gtid_purged":
            first = directory.first_state()
            return str(first) if isinstance(first, GtidSet) else ""
        state = directory.gtid_state()
        if name == "gtid_executed":
            return str(state) if isinstance(state, GtidSet) else ""
        maria = state if isinstance(state, MariaGtidList) else MariaGtidList()
        if name == "gtid_binlog_state":
            return str(maria)
        if name == "gtid_domain_id":
            return str(maria.gtids[-1].domain_id) if maria.gtids else "0"
        return str(maria.position())

    def __iter__(self) -> Iterator[str]:
        return iter((*self._fixed, *self._computed))

    def __len__(self) -> int:
        return len(self._fixed) + len(self._computed)

    def binlog_gtid_pos(self, name: str | None, position: str | None) -> str | None:
        """MariaDB's BINLOG_GTID_POS(): the GTID position at a place of the binlogs (NULL
        for a file that is not served; '' names the first)."""
        names = self.directory.names()
        name = name or (names[0] if names else None)
        if name not in names or position is None or not position.isdigit():
            return None
        state = self.directory.gtid_state(name, int(position))
        return str(state.position()) if isinstance(state, MariaGtidList) else ""
