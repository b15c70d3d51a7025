"""TABLE_MAP: the column layout that every rows event of a table refers to.

The event names a table, lists its column types, their per-type metadata and
nullability, and (MySQL 8.0.1+, MariaDB 10.5+) optional metadata in TLV form:
signedness, charsets, names, ENUM/SET strings, geometry types, the primary
key, column visibility, vector dimensions.

The event keeps the metadata block and the optional-metadata bytes exactly as
read, so re-encoding is exact by construction; both are parsed on first use
(:attr:`TableMapEvent.columns`, :attr:`TableMapEvent.metadata`). A filtered-out
table never pays for that parse.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import field
from enum import IntEnum
from typing import Any, ClassVar

import binlogkit.binlog.rows.types  # noqa: F401  (registers the column codecs)
from binlogkit.binlog import utf8
from binlogkit.binlog.constants import ColumnType, EventType, Flavor
from binlogkit.binlog.context import (
    DecodeContext,
    FormatContext,
    flavor_of,
    parse_version,
)
from binlogkit.binlog.events.base import Body, Event, TransactionRole, register
from binlogkit.binlog.frozen import fast_constructor, frozen_dataclass
from binlogkit.binlog.header import EventHeader
from binlogkit.binlog.rows.columns import COLUMN_CODECS, ColumnInfo, real_type
from binlogkit.errors import BinlogError, DecodeError, EncodeError
from binlogkit.wire import ByteReader, ByteWriter

__all__ = [
    "MARIADB_RULES",
    "MYSQL_8_0_20_RULES",
    "MYSQL_RULES",
    "MetadataRules",
    "OptionalMetadata",
    "OptionalMetadataType",
    "TableMapEvent",
    "column_metadata",
    "decode_optional_field",
    "encode_optional_field",
    "encode_optional_metadata",
    "metadata_rules",
    "split_optional_metadata",
]

TABLE_MAP_HEADER_LENGTH = 8
"""Post-header of TABLE_MAP: 6-byte table id and 2-byte flags (6 = 4-byte id, before 5.1.4)."""


class OptionalMetadataType(IntEnum):
    """Type codes of the optional metadata TLV fields (MySQL's Optional_metadata_field_type)."""

    SIGNEDNESS = 1
    DEFAULT_CHARSET = 2
    COLUMN_CHARSET = 3
    COLUMN_NAME = 4
    SET_STR_VALUE = 5
    ENUM_STR_VALUE = 6
    GEOMETRY_TYPE = 7
    SIMPLE_PRIMARY_KEY = 8
    PRIMARY_KEY_WITH_PREFIX = 9
    ENUM_AND_SET_DEFAULT_CHARSET = 10
    ENUM_AND_SET_COLUMN_CHARSET = 11
    COLUMN_VISIBILITY = 12
    VECTOR_DIMENSIONALITY = 13


_CT = ColumnType
_SIGNED = frozenset(
    {_CT.TINY, _CT.SHORT, _CT.INT24, _CT.LONG, _CT.LONGLONG, _CT.FLOAT, _CT.DOUBLE}
    | {_CT.DECIMAL, _CT.NEWDECIMAL}
)
_CHARACTER = frozenset({_CT.STRING, _CT.VAR_STRING, _CT.VARCHAR, _CT.BLOB})


@frozen_dataclass
class MetadataRules:
    """Which columns a server gives a SIGNEDNESS bit and a charset entry (in column order).

    ``numeric`` holds binlog type codes (the table map's column types),
    ``character`` real types; ENUM and SET columns have their own
    ENUM_AND_SET_* charset fields and are in neither.
    """

    numeric: frozenset[int]
    character: frozenset[int]


MYSQL_RULES = MetadataRules(_SIGNED | {_CT.YEAR}, _CHARACTER | {_CT.VECTOR})
"""MySQL 8.0.21 on: ``has_signedess_information_type`` (YEAR included); VECTOR (9.0) has a
charset, GEOMETRY has none."""

MYSQL_8_0_20_RULES = MetadataRules(_SIGNED, MYSQL_RULES.character)
"""MySQL 8.0.1-8.0.20: the ``is_numeric_type`` of sql/field.h, without YEAR."""

MARIADB_RULES = MetadataRules(
    _SIGNED | {_CT.YEAR},
    _CHARACTER | {_CT.GEOMETRY, _CT.VARCHAR_COMPRESSED, _CT.BLOB_COMPRESSED},
)
"""MariaDB 10.5 on: every numeric field (YEAR too) has a sign; GEOMETRY a charset, as a BLOB;
COMPRESSED VARCHAR and BLOB/TEXT columns a charset too (seen in 10.11's FULL table maps)."""

_MYSQL_YEAR_SIGNED = (8, 0, 21)
"""The first MySQL taken to count YEAR. 8.0.20's source leaves it out and 8.0.40's counts it;
the helper that counts it (sql/field_common_properties.h) first appeared after 8.0.20."""


def metadata_rules(server_version: str) -> MetadataRules:
    """The optional-metadata column rules of the server that wrote a binlog."""
    if flavor_of(server_version) is Flavor.MARIADB:
        return MARIADB_RULES
    if (0, 0, 0) < parse_version(server_version) < _MYSQL_YEAR_SIGNED:
        return MYSQL_8_0_20_RULES
    return MYSQL_RULES


ENUM_SET_TYPES = frozenset({ColumnType.ENUM, ColumnType.SET})


# --- optional metadata: one parser and one writer per field type -----------------------------


def _read_ints(data: bytes) -> tuple[int, ...]:
    r = ByteReader(data)
    out = []
    while not r.at_end():
        out.append(r.packed_length("optional metadata integer"))
    return tuple(out)


def _write_ints(values: Iterable[int]) -> bytes:
    w = ByteWriter()
    for value in values:
        w.packed_int(value)
    return w.getvalue()


def _read_pairs(data: bytes) -> tuple[tuple[int, int], ...]:
    values = _read_ints(data)
    if len(values) % 2:
        raise DecodeError("optional metadata pair list has an odd number of integers")
    return tuple(zip(values[::2], values[1::2], strict=True))


def _write_pairs(pairs: Iterable[tuple[int, int]]) -> bytes:
    return _write_ints(v for pair in pairs for v in pair)


def _read_bits(data: bytes) -> tuple[bool, ...]:
    """A bitmap with the first bit in the high bit of the first byte (padding bits kept)."""
    return tuple(bool(byte & (0x80 >> bit)) for byte in data for bit in range(8))


def _write_bits(bits: Sequence[bool]) -> bytes:
    out = bytearray((len(bits) + 7) // 8)
    for i, bit in enumerate(bits):
        if bit:
            out[i >> 3] |= 0x80 >> (i & 7)
    return bytes(out)


def _read_default_charset(data: bytes) -> tuple[int, tuple[tuple[int, int], ...]]:
    values = _read_ints(data)
    if not values or len(values) % 2 == 0:
        raise DecodeError("default charset field needs a default and (index, collation) pairs")
    rest = values[1:]
    return values[0], tuple(zip(rest[::2], rest[1::2], strict=True))


def _write_default_charset(value: tuple[int, Sequence[tuple[int, int]]]) -> bytes:
    default, pairs = value
    return _write_ints([default]) + _write_pairs(pairs)


def _read_strings(data: bytes) -> tuple[bytes, ...]:
    r = ByteReader(data)
    out = []
    while not r.at_end():
        out.append(r.packed_bytes("column name"))
    return tuple(out)


def _write_strings(values: Iterable[bytes]) -> bytes:
    w = ByteWriter()
    for value in values:
        w.packed_bytes(value)
    return w.getvalue()


def _read_names(data: bytes) -> tuple[str, ...]:
    return tuple(utf8.decode(name) for name in _read_strings(data))


def _write_names(names: Iterable[str]) -> bytes:
    return _write_strings(utf8.encode(name) for name in names)


def _read_str_values(data: bytes) -> tuple[tuple[bytes, ...], ...]:
    r = ByteReader(data)
    out = []
    while not r.at_end():
        count = r.packed_length("value count")
        out.append(tuple(r.packed_bytes("ENUM/SET value") for _ in range(count)))
    return tuple(out)


def _write_str_values(columns: Iterable[Sequence[bytes]]) -> bytes:
    w = ByteWriter()
    for values in columns:
        w.packed_int(len(values))
        for value in values:
            w.packed_bytes(value)
    return w.getvalue()


_T = OptionalMetadataType
_FIELD_CODECS: dict[int, tuple[Callable[[bytes], Any], Callable[[Any], bytes]]] = {
    _T.SIGNEDNESS: (_read_bits, _write_bits),
    _T.DEFAULT_CHARSET: (_read_default_charset, _write_default_charset),
    _T.COLUMN_CHARSET: (_read_ints, _write_ints),
    _T.COLUMN_NAME: (_read_names, _write_names),
    _T.SET_STR_VALUE: (_read_str_values, _write_str_values),
    _T.ENUM_STR_VALUE: (_read_str_values, _write_str_values),
    _T.GEOMETRY_TYPE: (_read_ints, _write_ints),
    _T.SIMPLE_PRIMARY_KEY: (_read_ints, _write_ints),
    _T.PRIMARY_KEY_WITH_PREFIX: (_read_pairs, _write_pairs),
    _T.ENUM_AND_SET_DEFAULT_CHARSET: (_read_default_charset, _write_default_charset),
    _T.ENUM_AND_SET_COLUMN_CHARSET: (_read_ints, _write_ints),
    _T.COLUMN_VISIBILITY: (_read_bits, _write_bits),
    _T.VECTOR_DIMENSIONALITY: (_read_ints, _write_ints),
}


def decode_optional_field(field_type: int, data: bytes) -> Any:
    """The value of one optional metadata field; unknown types give their bytes back."""
    codec = _FIELD_CODECS.get(field_type)
    return data if codec is None else codec[0](data)


def encode_optional_field(field_type: int, value: Any) -> bytes:
    """The mirror of :func:`decode_optional_field`."""
    codec = _FIELD_CODECS.get(field_type)
    return bytes(value) if codec is None else codec[1](value)


def split_optional_metadata(raw: bytes) -> tuple[tuple[int, bytes], ...]:
    """The (type, value bytes) TLV fields of an optional metadata block, in order."""
    r = ByteReader(raw)
    fields = []
    while not r.at_end():
        field_type = r.u8("optional metadata type")
        fields.append((field_type, r.packed_bytes("optional metadata field")))
    return tuple(fields)


def encode_optional_metadata(fields: Iterable[tuple[int, Any]]) -> bytes:
    """TLV bytes for (type, value) pairs, values as :func:`decode_optional_field` gives them."""
    w = ByteWriter()
    for field_type, value in fields:
        w.u8(field_type)
        w.packed_bytes(encode_optional_field(field_type, value))
    return w.getvalue()


@frozen_dataclass
class OptionalMetadata:
    """The parsed optional metadata of a table map; None where the binlog did not carry a field.

    Per-column lists follow the servers' rules: ``signedness`` has one bit per
    numeric column, the charset fields one entry per character column (or per
    ENUM/SET column for the ``enum_set_*`` ones), which columns those are
    depending on the server (:func:`metadata_rules`), ``set_values`` and
    ``enum_values`` one tuple per SET / ENUM column, ``geometry_types`` one per
    GEOMETRY column and ``vector_dimensions`` one per VECTOR column, all in
    column order. ``default_charset`` is (default collation, ((index among
    those columns, collation), ...)). ``unknown`` keeps fields of types this
    library does not know.
    """

    signedness: tuple[bool, ...] | None = None
    default_charset: tuple[int, tuple[tuple[int, int], ...]] | None = None
    column_charsets: tuple[int, ...] | None = None
    column_names: tuple[str, ...] | None = None
    set_values: tuple[tuple[bytes, ...], ...] | None = None
    enum_values: tuple[tuple[bytes, ...], ...] | None = None
    geometry_types: tuple[int, ...] | None = None
    simple_primary_key: tuple[int, ...] | None = None
    primary_key_with_prefix: tuple[tuple[int, int], ...] | None = None
    enum_set_default_charset: tuple[int, tuple[tuple[int, int], ...]] | None = None
    enum_set_column_charsets: tuple[int, ...] | None = None
    column_visibility: tuple[bool, ...] | None = None
    vector_dimensions: tuple[int, ...] | None = None
    unknown: tuple[tuple[int, bytes], ...] = ()

    @classmethod
    def parse(cls, raw: bytes) -> OptionalMetadata:
        values: dict[str, Any] = {}
        unknown = []
        for field_type, data in split_optional_metadata(raw):
            name = _FIELD_NAMES.get(field_type)
            if name is None:
                unknown.append((field_type, data))
            elif name not in values:  # the servers use the first of a repeated type
                values[name] = decode_optional_field(field_type, data)
        return cls(**values, unknown=tuple(unknown))

    @property
    def primary_key(self) -> tuple[tuple[int, int], ...]:
        """(column index, prefix length) of each primary key part; prefix 0 is the whole column."""
        if self.primary_key_with_prefix is not None:
            return self.primary_key_with_prefix
        return tuple((index, 0) for index in self.simple_primary_key or ())


_FIELD_NAMES: dict[int, str] = {
    _T.SIGNEDNESS: "signedness",
    _T.DEFAULT_CHARSET: "default_charset",
    _T.COLUMN_CHARSET: "column_charsets",
    _T.COLUMN_NAME: "column_names",
    _T.SET_STR_VALUE: "set_values",
    _T.ENUM_STR_VALUE: "enum_values",
    _T.GEOMETRY_TYPE: "geometry_types",
    _T.SIMPLE_PRIMARY_KEY: "simple_primary_key",
    _T.PRIMARY_KEY_WITH_PREFIX: "primary_key_with_prefix",
    _T.ENUM_AND_SET_DEFAULT_CHARSET: "enum_set_default_charset",
    _T.ENUM_AND_SET_COLUMN_CHARSET: "enum_set_column_charsets",
    _T.COLUMN_VISIBILITY: "column_visibility",
    _T.VECTOR_DIMENSIONALITY: "vector_dimensions",
}


def _charsets(
    indexes: Sequence[int],
    per_column: tuple[int, ...] | None,
    default: tuple[int, tuple[tuple[int, int], ...]] | None,
) -> dict[int, int]:
    """Column index → collation for the columns ``indexes`` (counted among themselves)."""
    if per_column is not None:
        return dict(zip(indexes, per_column, strict=False))
    if default is None:
        return {}
    collation, exceptions = default
    out = dict.fromkeys(indexes, collation)
    for k, coll in exceptions:
        if k < len(indexes):
            out[indexes[k]] = coll
    return out


def _nth(values: Sequence[Any] | None, n: int) -> Any:
    return values[n] if values is not None and n < len(values) else None


# --- optional metadata from columns: the mirror of TableMapEvent.columns ----------------------

_MYSQL_VISIBILITY = (8, 0, 23)
"""The first MySQL that logs COLUMN_VISIBILITY (MariaDB never does)."""


def column_metadata(
    columns: Sequence[ColumnInfo],
    server_version: str,
    *,
    full: bool = True,
    primary_key: Sequence[int] | None = None,
) -> list[tuple[int, Any]]:
    """The optional metadata fields a server of ``server_version`` writes for ``columns``, in
    its order, as (:class:`OptionalMetadataType`, value) pairs for :meth:`TableMapEvent.build`.

    ``full``: ``binlog_row_metadata=FULL`` (else MINIMAL: signedness, charsets,
    geometry types, vector dimensions). ``primary_key``: the key's column indexes in key order (by
    default the columns flagged ``primary_key``, in column order). A field is left
    out when a column it covers does not say (``unsigned`` None ...).
    """
    rules = metadata_rules(server_version)
    fields: list[tuple[int, Any]] = []

    def add(field_type: int, values: Sequence[Any]) -> None:
        if values and all(value is not None for value in values):
            fields.append((field_type, tuple(values)))

    add(_T.SIGNEDNESS, [c.unsigned for c in columns if c.binlog_type in rules.numeric])
    character = [c.charset for c in columns if c.type in rules.character]
    fields += _charset_field(character, _T.DEFAULT_CHARSET, _T.COLUMN_CHARSET)
    add(_T.GEOMETRY_TYPE, [c.geometry_type for c in columns if c.type == ColumnType.GEOMETRY])
    add(
        _T.VECTOR_DIMENSIONALITY,
        [c.vector_dimensions for c in columns if c.type == ColumnType.VECTOR],
    )
    if not full:
        return fields
    add(_T.COLUMN_NAME, [c.name for c in columns])
    enum_set = [c.charset for c in columns if c.type in ENUM_SET_TYPES]
    fields += _charset_field(
        enum_set, _T.ENUM_AND_SET_DEFAULT_CHARSET, _T.ENUM_AND_SET_COLUMN_CHARSET
    )
    add(_T.SET_STR_VALUE, [c.set_values for c in columns if c.type == ColumnType.SET])
    add(_T.ENUM_STR_VALUE, [c.enum_values for c in columns if c.type == ColumnType.ENUM])
    key = [c.index for c in columns if c.primary_key] if primary_key is None else primary_key
    add(_T.SIMPLE_PRIMARY_KEY, key)
    mysql_visibility = flavor_of(server_version) is Flavor.MYSQL and (
        parse_version(server_version) >= _MYSQL_VISIBILITY
    )
    if mysql_visibility:
        add(_T.COLUMN_VISIBILITY, [c.visible for c in columns])
    return fields


def _charset_field(
    collations: Sequence[int | None], default_type: int, column_type: int
) -> list[tuple[int, Any]]:
    """One charset field for these columns, the shorter form as the servers choose it
    (Table_map_log_event::init_charset_field): the most used collation (the lowest id
    among equals) as a default with exceptions, or one collation per column."""
    if not collations or any(c is None for c in collations):
        return []
    counts: dict[int, int] = {}
    for collation in collations:
        assert collation is not None
        counts[collation] = counts.get(collation, 0) + 1
    default = min(counts, key=lambda c: (-counts[c], c))
    if len(collations) < 1 + (len(collations) - counts[default]) * 2:
        return [(column_type, tuple(collations))]
    exceptions = tuple((n, c) for n, c in enumerate(collations) if c != default)
    return [(default_type, (default, exceptions))]


# --- the event ---------------------------------------------------------------------------------


@register(EventType.TABLE_MAP)
@frozen_dataclass
class TableMapEvent(Event):
    """Maps a table id to a table and its columns, for the rows events that follow.

    ``column_types`` has one type code per column, ``metadata`` is the raw
    per-column metadata block (None in table maps of MySQL 5.1 before it
    existed), ``null_bitmap`` has bit *i* (low bit first) set when column *i*
    may be NULL, and ``optional_metadata`` is the raw TLV block. Use
    :attr:`columns` for everything resolved per column.
    """

    transaction_role: ClassVar[TransactionRole] = TransactionRole.ROWS

    table_id: int
    flags: int
    schema: str
    table_name: str
    column_types: bytes
    metadata: bytes | None
    null_bitmap: bytes
    optional_metadata: bytes = b""
    server_version: str = field(default="", repr=False, compare=False)
    """The version of the server that wrote the map (from the format description): the
    optional metadata's column rules depend on it. Not part of the event's bytes."""

    @property
    def column_count(self) -> int:
        return len(self.column_types)

    @classmethod
    def decode(cls, header: EventHeader, body: Body, ctx: DecodeContext) -> TableMapEvent:
        raw = body if type(body) is bytes else bytes(body)
        id_length = _table_id_length(ctx.fmt)
        server = ctx.fmt.server_version
        known = ctx.tables.get(int.from_bytes(raw[:id_length], "little"))
        if known is not None and known.body == raw and known.map.server_version == server:
            # Servers log the same table map again in every transaction: skip parsing it.
            return known.map.with_header(header)
        return cls._parse(header, raw, id_length, server)

    def with_header(self, header: EventHeader) -> TableMapEvent:
        """The same table map under another header."""
        return _new_table_map(
            header,
            self.table_id,
            self.flags,
            self.schema,
            self.table_name,
            self.column_types,
            self.metadata,
            self.null_bitmap,
            self.optional_metadata,
            self.server_version,
        )

    @classmethod
    def _parse(cls, header: EventHeader, body: bytes, id_length: int, server: str) -> TableMapEvent:
        r = ByteReader(body)
        table_id = r.uint(id_length, "table id")
        flags = r.u16("flags")
        schema = _read_name(r, "schema name")
        table = _read_name(r, "table name")
        count = r.packed_length("column count")
        types = r.take(count, "column types")
        if r.at_end():
            return cls(header, table_id, flags, schema, table, types, None, b"", b"", server)
        metadata = r.packed_bytes("column metadata")
        null_bitmap = r.take((count + 7) // 8, "null bitmap")
        return cls(
            header, table_id, flags, schema, table, types, metadata, null_bitmap, r.rest(), server
        )

    def encode_body(self, fmt: FormatContext) -> bytes:
        w = ByteWriter()
        w.uint(self.table_id, _table_id_length(fmt))
        w.u16(self.flags)
        _write_name(w, self.schema)
        _write_name(w, self.table_name)
        w.packed_int(len(self.column_types))
        w.write(self.column_types)
        if self.metadata is not None:
            w.packed_bytes(self.metadata)
            w.write(self.null_bitmap)
            w.write(self.optional_metadata)
        elif self.null_bitmap or self.optional_metadata:
            raise EncodeError("a table map without a metadata block has no null bitmap either")
        return w.getvalue()

    @classmethod
    def build(
        cls,
        header: EventHeader,
        table_id: int,
        schema: str,
        table_name: str,
        columns: Sequence[ColumnInfo],
        *,
        flags: int = 1,
        optional_fields: Iterable[tuple[int, Any]] = (),
        server_version: str = "",
    ) -> TableMapEvent:
        """A table map from column descriptions (metadata written by the column codecs).

        ``optional_fields`` are (:class:`OptionalMetadataType`, value) pairs in
        the order to write them, values in the form :class:`OptionalMetadata` has;
        ``server_version`` picks the :func:`metadata_rules` that read them back.
        """
        w = ByteWriter()
        nulls = bytearray((len(columns) + 7) // 8)
        for i, col in enumerate(columns):
            COLUMN_CODECS[col.binlog_type].write_meta(col.meta, w)
            if col.nullable:
                nulls[i >> 3] |= 1 << (i & 7)
        return cls(
            header,
            table_id,
            flags,
            schema,
            table_name,
            bytes(col.binlog_type for col in columns),
            w.getvalue(),
            bytes(nulls),
            encode_optional_metadata(optional_fields),
            server_version,
        )

    # --- parsed views (computed on each call; the decoder's Table keeps its columns) ---------

    @property
    def column_metas(self) -> tuple[int, ...]:
        """Each column's metadata as its column codec reads it (0 without a metadata block)."""
        return self._parse_metas()

    def _parse_metas(self) -> tuple[int, ...]:
        if self.metadata is None:
            return (0,) * len(self.column_types)
        r = ByteReader(self.metadata)
        metas = []
        for i, code in enumerate(self.column_types):
            codec = COLUMN_CODECS.get(code)
            if codec is None:
                raise DecodeError(
                    f"table {self.qualified_name}: column {i + 1} has unknown type {code}"
                )
            metas.append(codec.read_meta(r))
        if not r.at_end():
            raise DecodeError(
                f"table {self.qualified_name}: {r.remaining} bytes of column metadata left over"
            )
        return tuple(metas)

    @property
    def metadata_fields(self) -> OptionalMetadata:
        """The optional metadata, parsed."""
        return OptionalMetadata.parse(self.optional_metadata)

    @property
    def metadata_rules(self) -> MetadataRules:
        """The column rules of the server that wrote this map (MySQL's when not decoded)."""
        return metadata_rules(self.server_version)

    @property
    def qualified_name(self) -> str:
        return f"`{self.schema}`.`{self.table_name}`"

    @property
    def columns(self) -> tuple[ColumnInfo, ...]:
        """Every column with its type, metadata and what the optional metadata says of it."""
        try:
            return self._resolve_columns()
        except BinlogError as err:
            header = self.header
            err.locate(file=header.file, offset=header.offset, event_type=header.type_name)
            raise

    def _resolve_columns(self) -> tuple[ColumnInfo, ...]:
        metas = self.column_metas
        opt = self.metadata_fields
        types = [real_type(code, meta) for code, meta in zip(self.column_types, metas, strict=True)]
        rules = self.metadata_rules
        numeric = [i for i, code in enumerate(self.column_types) if code in rules.numeric]
        character = [i for i, t in enumerate(types) if t in rules.character]
        enum_set = [i for i, t in enumerate(types) if t in ENUM_SET_TYPES]
        charsets = _charsets(character, opt.column_charsets, opt.default_charset)
        charsets.update(
            _charsets(enum_set, opt.enum_set_column_charsets, opt.enum_set_default_charset)
        )
        unsigned = (
            dict(zip(numeric, opt.signedness, strict=False)) if opt.signedness is not None else {}
        )
        ordinal = _ordinals(types)
        primary = {index for index, _ in opt.primary_key}
        columns = []
        for i, (code, meta, typ) in enumerate(zip(self.column_types, metas, types, strict=True)):
            nullable = bool(self.null_bitmap[i >> 3] >> (i & 7) & 1) if self.null_bitmap else True
            nth = ordinal[i]
            columns.append(
                ColumnInfo(
                    index=i,
                    type=typ,
                    binlog_type=code,
                    meta=meta,
                    nullable=nullable,
                    name=_nth(opt.column_names, i),
                    unsigned=unsigned.get(i),
                    charset=charsets.get(i),
                    enum_values=_nth(opt.enum_values, nth) if typ == ColumnType.ENUM else None,
                    set_values=_nth(opt.set_values, nth) if typ == ColumnType.SET else None,
                    geometry_type=(
                        _nth(opt.geometry_types, nth) if typ == ColumnType.GEOMETRY else None
                    ),
                    visible=_nth(opt.column_visibility, i),
                    primary_key=i in primary,
                    vector_dimensions=(
                        _nth(opt.vector_dimensions, nth) if typ == ColumnType.VECTOR else None
                    ),
                )
            )
        return tuple(columns)


def _ordinals(types: Sequence[int]) -> list[int]:
    """For each column, how many columns of its real type come before it."""
    seen: dict[int, int] = {}
    out = []
    for t in types:
        out.append(seen.get(t, 0))
        seen[t] = out[-1] + 1
    return out


_new_table_map = fast_constructor(TableMapEvent)
"""``TableMapEvent(...)`` with every field given positionally, built faster."""


def _table_id_length(fmt: FormatContext) -> int:
    lengths = fmt.post_header_lengths
    if len(lengths) >= _TABLE_MAP and not fmt.permuted_types:  # fmt.post_header_length, inline
        return 4 if lengths[_TABLE_MAP - 1] == 6 else 6
    return 4 if fmt.post_header_length(_TABLE_MAP, TABLE_MAP_HEADER_LENGTH) == 6 else 6


_TABLE_MAP = EventType.TABLE_MAP.value  # an int: cheaper than the enum member per event


def _read_name(r: ByteReader, what: str) -> str:
    raw = r.take(r.u8(what), what)
    if r.u8(what) != 0:
        raise DecodeError(f"{what} is not NUL-terminated")
    return utf8.decode(raw)


def _write_name(w: ByteWriter, name: str) -> None:
    """The mirror of :func:`_read_name`: length-prefixed, so a NUL inside is kept too."""
    raw = utf8.encode(name)
    if len(raw) > 255:
        raise EncodeError(f"name longer than 255 bytes: {name!r}")
    w.u8(len(raw))
    w.write(raw)
    w.u8(0)
