"""GEOMETRY and its subtypes (POINT, POLYGON ...; all logged as type 255).

Like a BLOB: the metadata byte is the size of the length (4). The bytes are
MySQL's internal spatial form: the SRID, 4 bytes little-endian, then the shape
as WKB. Values are :class:`~binlogkit.binlog.rows.types.values.Geometry`;
raw mode gives the stored bytes.
"""

from __future__ import annotations

from typing import Any, ClassVar

from binlogkit.binlog.constants import ColumnType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.rows.columns import (
    ColumnCodec,
    ColumnInfo,
    ValueDecoder,
    ValueEncoder,
    column_codec,
)
from binlogkit.binlog.rows.types._base import (
    as_bytes,
    prefixed_decoder,
    prefixed_encoder,
    unencodable,
)
from binlogkit.binlog.rows.types.values import Geometry
from binlogkit.errors import DecodeError


@column_codec(ColumnType.GEOMETRY)
class GeometryCodec(ColumnCodec):
    meta_length: ClassVar[int] = 1

    @classmethod
    def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
        if options.raw_values:
            return prefixed_decoder(col, col.meta, "GEOMETRY")

        def convert(data: bytes) -> Geometry:
            if len(data) < 4:
                raise DecodeError(f"column {col.key}: {len(data)} bytes are too short a GEOMETRY")
            return Geometry(int.from_bytes(data[:4], "little"), bytes(data[4:]))

        return prefixed_decoder(col, col.meta, "GEOMETRY", convert)

    @classmethod
    def encoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueEncoder:
        if options.raw_values:
            return prefixed_encoder(col, col.meta, "GEOMETRY", as_bytes(col, "raw GEOMETRY"))

        def to_bytes(value: Any) -> bytes:
            if not isinstance(value, Geometry):
                raise unencodable(col, value, "GEOMETRY takes a Geometry")
            try:
                return value.to_bytes()
            except (OverflowError, TypeError):
                raise unencodable(col, value, "the SRID must fit 4 unsigned bytes") from None

        return prefixed_encoder(col, col.meta, "GEOMETRY", to_bytes)
