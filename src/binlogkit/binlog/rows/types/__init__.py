"""The value codecs of every column type, one module per family.

Importing this package registers them all in
:data:`~binlogkit.binlog.rows.columns.COLUMN_CODECS`; a new column type is one
new module here with a class decorated by
:func:`~binlogkit.binlog.rows.columns.column_codec`.
"""

import importlib
import pkgutil

from binlogkit.binlog.rows.types.values import (
    JSON_NULL,
    ZERO_DATE,
    ZERO_DATETIME,
    Compressed,
    Geometry,
    InvalidDate,
    InvalidDateTime,
)

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = [
    "JSON_NULL",
    "ZERO_DATE",
    "ZERO_DATETIME",
    "Compressed",
    "Geometry",
    "InvalidDate",
    "InvalidDateTime",
]
