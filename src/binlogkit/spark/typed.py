"""Row changes with JSON images (the ``binlog`` source's default) → typed images of one table.

The JSON text is binlogkit's lossless encoding (``docs/json-encoding.md``), so
:func:`binlogkit.jsonenc.loads` gives back the decoder's own values, and the
converters of :func:`binlogkit.spark.schema.typed_columns` build the same typed
rows as the source's ``table`` option does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from binlogkit import jsonenc
from binlogkit.spark.schema import TypedColumn, typed_schema

__all__ = ["typed_changes"]


def _image(text: str | None, columns: Sequence[TypedColumn]) -> dict[str, Any] | None:
    if text is None:
        return None
    values = jsonenc.loads(text)
    return {
        c.name: None if values.get(c.name) is None else c.convert(values[c.name]) for c in columns
    }


def typed_changes(changes: Any, columns: Sequence[TypedColumn]) -> Any:
    """The row changes of one table (a DataFrame of ``CHANGE_SCHEMA`` rows) with ``before`` and
    ``after`` as structs of ``columns``."""
    schema = typed_schema(columns)
    names = schema.fieldNames()

    def typed(row: Any) -> tuple[Any, ...]:
        values = row.asDict()
        values["before"] = _image(values["before"], columns)
        values["after"] = _image(values["after"], columns)
        return tuple(values[name] for name in names)

    return changes.sparkSession.createDataFrame(changes.rdd.map(typed), schema)
