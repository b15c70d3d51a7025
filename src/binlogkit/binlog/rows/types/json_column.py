"""JSON (MySQL 5.7+): MySQL's binary JSON, stored like a BLOB.

The metadata byte is the size of the length (4). Values are what
:func:`~binlogkit.binlog.jsonb.decode_jsonb` gives (``dict``, ``list``, ``str``,
numbers, ``True``/``False``/``None``; an empty stored value is
:data:`~binlogkit.binlog.jsonb.EMPTY_JSON`). A document that is just the JSON
``null`` literal is :data:`~binlogkit.binlog.rows.types.values.JSON_NULL`, since
``None`` in a row means SQL NULL; inside a document JSON null is ``None``. Raw
mode gives the stored bytes.
MariaDB's JSON is an alias of LONGTEXT and is logged, and decoded, as one.
"""

from __future__ import annotations

from typing import Any, ClassVar

from binlogkit.binlog import jsonb  # the module: jsonb imports this package's helpers
from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.rows.columns import (
    ColumnCodec,
    ColumnInfo,
    ValueDecoder,
    ValueEncoder,
    column_codec,
)
from binlogkit.binlog.rows.types._base import as_bytes, prefixed_decoder, prefixed_encoder
from binlogkit.binlog.rows.types.values import JSON_NULL
from binlogkit.errors import DecodeError, EncodeError


@column_codec(ColumnType.JSON)
class JsonCodec(ColumnCodec):
    meta_length: ClassVar[int] = 1

    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        if options.raw_values:
            return prefixed_decoder(col, col.meta, "JSON")

        def convert(data: bytes) -> Any:
            try:
                value = jsonb.decode_jsonb(data)
            except DecodeError as exc:
                raise DecodeError(f"column {col.key}: {exc.message}") from None
            return JSON_NULL if value is None else value

        return prefixed_decoder(col, col.meta, "JSON", convert)

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        if options.raw_values:
            return prefixed_encoder(col, col.meta, "JSON", as_bytes(col, "raw JSON"))

        def to_bytes(value: Any) -> bytes:
            try:
                return jsonb.encode_jsonb(None if value is JSON_NULL else value)
            except EncodeError as exc:
                raise EncodeError(f"column {col.key}: {exc.message}") from None

        return prefixed_encoder(col, col.meta, "JSON", to_bytes)
