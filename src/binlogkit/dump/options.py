"""What a dump prints: the options of ``mysqlbinlog`` / ``mariadb-binlog`` that shape the text."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from enum import Enum

from binlogkit.binlog.constants import Flavor
from binlogkit.binlog.frozen import frozen_dataclass

__all__ = ["Base64Output", "DumpOptions"]


class Base64Output(Enum):
    """``--base64-output``: when events are printed as ``BINLOG '...'`` blocks."""

    AUTO = "auto"
    """Row events and the format description as base64 (the default)."""
    NEVER = "never"
    """No base64 at all; a binlog with row events cannot be printed."""
    DECODE_ROWS = "decode-rows"
    """No base64; row events only as ``###`` pseudo-SQL with ``-v``."""


@frozen_dataclass
class DumpOptions:
    """The dump's settings.

    - ``verbose``: 1 prints row events as ``###`` pseudo-SQL, 2 adds each
      value's type comment (``-v`` / ``-vv``).
    - ``hexdump``: each event's bytes as a hex dump comment (``--hexdump``).
    - ``short_form``: only the statements (``--short-form``).
    - ``flavor``: mimic ``mariadb-binlog`` (MARIADB) or ``mysqlbinlog``
      (MYSQL); None follows each file's format description.
    - ``print_row_count``: ``# Number of rows`` after row statements (mariadb-binlog).
    - ``skip_annotate_row_events``: leave Annotate_rows events out.
    - ``database`` / ``table``: print only this database's statements and row
      events (``--database``), only this table's row events (``--table``). The
      tools apply these while printing, after ``# at N`` (which stays); the
      other selections belong to :class:`~binlogkit.dump.selection.Selection`.
    - ``skip_gtids``: leave GTID events and ``SET @@SESSION.GTID_NEXT`` out (mysqlbinlog
      ``--skip-gtids``).
    - ``rewrite_db``: the ``--rewrite-db`` renames the events went through, so
      that ``database`` is matched against the original name as mariadb-binlog does.
    - ``print_table_metadata``: ``# Columns(...)`` and ``# Primary Key(...)``
      after each table map (``--print-table-metadata``).
    """

    base64_output: Base64Output = Base64Output.AUTO
    verbose: int = 0
    hexdump: bool = False
    short_form: bool = False
    flavor: Flavor | None = None
    print_row_count: bool = True
    skip_annotate_row_events: bool = False
    database: str | None = None
    table: str | None = None
    rewrite_db: Mapping[str, str] = field(default_factory=dict)
    id_filters: bool = False
    skip_gtids: bool = False
    print_table_metadata: bool = False


def skips_database(
    db: str, wanted: str | None, rewrite_db: Mapping[str, str], flavor: Flavor
) -> bool:
    """Whether ``--database wanted`` leaves out ``db``: MariaDB's tool compares the name the
    binlog holds, MySQL's the ``--rewrite-db`` one."""
    if wanted is None:
        return False
    if flavor is Flavor.MYSQL:
        db = rewrite_db.get(db, db)
    return db != wanted
