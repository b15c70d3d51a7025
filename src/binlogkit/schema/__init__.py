"""Schema history building blocks: the table model and DDL statements applied to it.

Pure (no I/O). :func:`apply_ddl` applies one statement (a binlog QUERY
event's, or a seed's) to an immutable :class:`Catalog`; :func:`apply_script`
applies a script such as ``mariadb-dump --no-data`` output.
"""

from binlogkit.schema.ddl import apply_ddl
from binlogkit.schema.model import Catalog, ColumnDef, DatabaseDef, TableDef, TableName
from binlogkit.schema.result import Action, DdlResult, DdlWarning, TableChange
from binlogkit.schema.script import ScriptResult, apply_script, split_statements
from binlogkit.schema.session import Session

__all__ = [
    "Action",
    "Catalog",
    "ColumnDef",
    "DatabaseDef",
    "DdlResult",
    "DdlWarning",
    "ScriptResult",
    "Session",
    "TableChange",
    "TableDef",
    "TableName",
    "apply_ddl",
    "apply_script",
    "split_statements",
]
