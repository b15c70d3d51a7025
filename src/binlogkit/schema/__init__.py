"""Schema history building blocks: the table model and DDL statements applied to it.

Pure (no I/O). :func:`apply_ddl` applies one statement (a binlog QUERY
event's, or a seed's) to an immutable :class:`Catalog`; :func:`apply_script`
applies a script such as ``mariadb-dump --no-data`` output.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from binlogkit.schema.model import Catalog, ColumnDef, DatabaseDef, TableDef, TableName
from binlogkit.schema.result import Action, DdlResult, DdlWarning, TableChange

if TYPE_CHECKING:
    from binlogkit.schema.create import table_from_create
    from binlogkit.schema.ddl import apply_ddl
    from binlogkit.schema.script import ScriptResult, apply_script, split_statements
    from binlogkit.schema.session import Session

_PARSER_NAMES = {
    "apply_ddl": "ddl",
    "ScriptResult": "script",
    "apply_script": "script",
    "split_statements": "script",
    "Session": "session",
    "table_from_create": "create",
}
"""What the SQL parser (sqlglot) stands behind, imported on first use: reading binlogs with
a schema history imports it only once a statement that may be DDL comes."""


def __getattr__(name: str) -> Any:
    module = _PARSER_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


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
    "table_from_create",
]
