"""The session state a DDL statement is read in: default database, server, charsets, sql_mode.

:meth:`Session.for_query` derives it from a binlog QUERY event: the event's
database, the server's collation and sql_mode from its status variables, and
the server flavour and version from the binlog's format description.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType

from binlogkit.binlog.constants import Flavor
from binlogkit.binlog.context import flavor_of, parse_version
from binlogkit.binlog.events.query import QueryEvent
from binlogkit.binlog.rows import charsets as ids
from binlogkit.schema import charsets
from binlogkit.schema.dialect import BinlogDialect

ANSI_QUOTES = 1 << 2
"""sql_mode bit: double quotes delimit identifiers."""

NO_BACKSLASH_ESCAPES = 1 << 20
"""sql_mode bit: backslash is an ordinary character in strings."""


@dataclass(frozen=True)
class Session:
    """What a statement's meaning depends on besides its text.

    - ``default_db``: the current database (``USE``), for unqualified names.
    - ``server_collation``: collation_server, the default of databases created
      without one (None: the flavour's default, ``latin1_swedish_ci`` or MySQL
      8's ``utf8mb4_0900_ai_ci``).
    - ``flavor``, ``version``: the server; the version gates versioned comments
      (None: newest, all are read) and some defaults.
    - ``charset_collations``: charset → collation overriding its default
      (MariaDB's character_set_collations, MySQL's default_collation_for_utf8mb4).
    - ``explicit_defaults_for_timestamp``: when off, TIMESTAMP columns are NOT
      NULL unless declared NULL.
    - ``sql_mode``: only ANSI_QUOTES and NO_BACKSLASH_ESCAPES matter.
    """

    default_db: str | None = None
    server_collation: str | None = None
    flavor: Flavor = Flavor.MARIADB
    version: tuple[int, int, int] | None = None
    charset_collations: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    explicit_defaults_for_timestamp: bool = True
    sql_mode: int = 0

    def default_collation(self, charset: str) -> str:
        return charsets.default_collation(
            charset, self.flavor, self.version, self.charset_collations
        )

    @cached_property
    def server_default(self) -> charsets.Charset:
        """The server's charset and collation."""
        if self.server_collation is not None:
            collation = charsets.collation_name(self.server_collation)
            return charsets.Charset(charsets.charset_of(collation), collation)
        mysql8 = self.flavor is Flavor.MYSQL and (self.version or (99, 0, 0)) >= (8, 0, 0)
        charset = "utf8mb4" if mysql8 else "latin1"
        return charsets.Charset(charset, self.default_collation(charset))

    @cached_property
    def dialect(self) -> BinlogDialect:
        settings: dict[str, object] = {
            "mariadb": self.flavor is Flavor.MARIADB,
            "ansi_quotes": bool(self.sql_mode & ANSI_QUOTES),
            "no_backslash_escapes": bool(self.sql_mode & NO_BACKSLASH_ESCAPES),
        }
        if self.version is not None:
            settings["version"] = ".".join(map(str, self.version))
        return BinlogDialect(**settings)

    @property
    def mysql_8019(self) -> bool:
        """MySQL 8.0.19 or later, which keeps no display width for most integer types."""
        return self.flavor is Flavor.MYSQL and (self.version or (99, 0, 0)) >= (8, 0, 19)

    @classmethod
    def for_query(cls, event: QueryEvent, server_version: str) -> Session:
        """The session a binlog QUERY event was executed in."""
        flavor = flavor_of(server_version)
        version = parse_version(server_version)
        status = event.status
        mysql = flavor is Flavor.MYSQL
        server = None
        if status.collation_server is not None:
            server = ids.collation_name(status.collation_server, mysql=mysql)
        overrides = {}
        for charset_id, collation_id in status.character_set_collations or ():
            charset = ids.charset_name(charset_id)
            collation = ids.collation_name(collation_id, mysql=mysql)
            if charset and collation:
                overrides[charset] = collation
        if status.default_collation_for_utf8mb4 is not None:
            collation = ids.collation_name(status.default_collation_for_utf8mb4, mysql=mysql)
            if collation:
                overrides["utf8mb4"] = collation
        explicit = status.explicit_defaults_for_timestamp
        if explicit is None:
            explicit = version >= ((8, 0, 2) if mysql else (10, 10, 0))
        return cls(
            default_db=event.db or None,
            server_collation=server,
            flavor=flavor,
            version=version,
            charset_collations=MappingProxyType(overrides),
            explicit_defaults_for_timestamp=bool(explicit),
            sql_mode=status.sql_mode or 0,
        )
