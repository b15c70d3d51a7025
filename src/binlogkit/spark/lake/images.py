"""JSON row images → typed structs, one Arrow record batch at a time (``mapInArrow``).

The ``before``/``after`` JSON text is binlogkit's lossless encoding, so
:func:`binlogkit.jsonenc.loads` gives back the decoder's values and the
converters of :func:`binlogkit.spark.schema.typed_columns` build the very rows
the source's ``table`` option builds. The other columns pass through as Arrow
arrays, untouched. An image that lacks a column (one read without the table's
definition has positional names ``@1``, ``@2`` ... and raw values) is an error.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.pandas.types import to_arrow_schema

from binlogkit import jsonenc
from binlogkit.errors import BinlogError
from binlogkit.spark.schema import TypedColumn, typed_schema

__all__ = ["typed_images"]

IMAGES = ("before", "after")


def typed_images(changes: Any, columns: Sequence[TypedColumn], table: str) -> Any:
    """The row changes of one version of ``table`` (a DataFrame of ``CHANGE_SCHEMA`` rows) with
    ``before`` and ``after`` as structs of ``columns``."""
    schema = typed_schema(columns)
    arrow = to_arrow_schema(schema, timezone="UTC")
    names = schema.fieldNames()
    plan = tuple((c.name, c.convert) for c in columns)

    def image(text: str | None) -> dict[str, Any] | None:
        if text is None:
            return None
        values = jsonenc.loads(text)
        try:
            return {n: None if (v := values[n]) is None else convert(v) for n, convert in plan}
        except KeyError as err:
            raise BinlogError(
                f"a row image of {table} has no column {err}, its columns: {list(values)}",
                hint="read the binlog with the table's definitions: the stream's option "
                "schemaHistory (or schema) with the history file the apply is given",
            ) from None

    def convert(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            arrays = []
            for name, field in zip(names, arrow, strict=True):
                column = batch.column(name)
                if name in IMAGES:
                    column = pa.array([image(t) for t in column.to_pylist()], type=field.type)
                elif column.type != field.type:
                    column = column.cast(field.type)
                arrays.append(column)
            yield pa.RecordBatch.from_arrays(arrays, schema=arrow)

    return changes.mapInArrow(convert, schema)
