"""Writing binlogs (WL#3283): new files or existing ones continued, events at their positions.

:class:`BinlogWriter` keeps a series of files and their index (ROTATE, STOP,
the in-use flag); :class:`BinlogFileWriter` writes one file;
:func:`format_description` makes the format description a file starts with;
:class:`Transaction` writes a whole transaction from row changes through a
binlog cache, compressed as the flavour does when asked (:mod:`.compression`);
:func:`table_map_for` writes a table definition's TABLE_MAP;
:func:`insert_events` puts events into an existing binlog;
:func:`write_undo_binlog` writes a flashback as a binlog;
:func:`~binlogkit.writer.import_rows.import_rows` writes rows from JSON lines,
CSV or Parquet as a binlog of inserts (``binlogkit write``).
"""

from binlogkit.writer.binlog import BinlogWriter, default_base_name
from binlogkit.writer.binlog_file import BinlogFileWriter
from binlogkit.writer.format import format_description
from binlogkit.writer.insert import insert_events
from binlogkit.writer.table_maps import table_map_for
from binlogkit.writer.transaction import Transaction
from binlogkit.writer.undo import write_undo_binlog

__all__ = [
    "BinlogFileWriter",
    "BinlogWriter",
    "Transaction",
    "default_base_name",
    "format_description",
    "insert_events",
    "table_map_for",
    "write_undo_binlog",
]
