"""The format description a new binlog starts with, for a MySQL or a MariaDB flavour."""

from __future__ import annotations

from binlogkit.binlog.constants import V4_HEADER_LENGTH, ChecksumAlg, EventType, Flavor
from binlogkit.binlog.context import checksum_capable, flavor_of
from binlogkit.binlog.events.format_description import FormatDescriptionEvent
from binlogkit.binlog.header import EventHeader
from binlogkit.errors import BinlogError

__all__ = ["DEFAULT_SERVER_VERSIONS", "POST_HEADER_LENGTHS", "format_description"]

POST_HEADER_LENGTHS = {
    Flavor.MYSQL: bytes.fromhex(
        "000d0008000000000400040000006200041a08000000080808020000000a0a0a2a2a001234000a2800"
    ),
    Flavor.MARIADB: bytes.fromhex(
        "380d000800120004040404120000e400041a08000000080808020000000a0a0a0000000000000a0a0a"
        + "00" * 119
        + "041304000d0808080a0a0a"
    ),
}
"""The post-header length of each event type, as MySQL 8.0 (41 types) and MariaDB 10.11
(171 types) announce them in their format descriptions."""

DEFAULT_SERVER_VERSIONS = {Flavor.MYSQL: "8.0.46", Flavor.MARIADB: "10.11.19-MariaDB-log"}


def format_description(
    flavor: Flavor = Flavor.MARIADB,
    *,
    server_version: str | None = None,
    checksum: ChecksumAlg = ChecksumAlg.CRC32,
    server_id: int = 1,
    timestamp: int = 0,
    created: int = 0,
) -> FormatDescriptionEvent:
    """A format description for a binlog written as the server ``server_version`` would.

    ``created`` non-zero tells readers the server started with this file (they
    then roll back what a crash left open); servers write 0 for a rotated file.
    """
    version = server_version or DEFAULT_SERVER_VERSIONS[flavor]
    if flavor_of(version) is not flavor:
        raise BinlogError(
            f"server version {version!r} does not name a {flavor.name} server",
            hint="MariaDB versions contain 'MariaDB'; MySQL versions do not",
        )
    if not checksum_capable(version):
        raise BinlogError(f"server version {version!r} is older than binlog checksums")
    header = EventHeader(timestamp, EventType.FORMAT_DESCRIPTION, server_id, 0)
    return FormatDescriptionEvent(
        header, 4, version, created, V4_HEADER_LENGTH, POST_HEADER_LENGTHS[flavor], checksum
    )
