"""MySQL/MariaDB data type spellings: every synonym, the canonical name, its parameters.

The servers' grammars (sql_yacc.yy, ``type`` / ``field_type``) accept many
spellings for one stored type: ``INTEGER`` and ``INT4`` are ``int``, ``REAL``
and ``DOUBLE PRECISION`` are ``double``, ``LONG VARCHAR`` is ``mediumtext``,
``NATIONAL CHAR`` is ``char`` in utf8mb3. :data:`SPELLINGS` maps each to the
name information_schema reports and to the shape of what may follow.
"""

from __future__ import annotations

from enum import Enum, auto
from typing import Final, NamedTuple


class Shape(Enum):
    """What a type takes after its name."""

    INTEGER = auto()  # [(width)] [SIGNED|UNSIGNED] [ZEROFILL]
    FLOAT = auto()  # [(M,D)] or FLOAT(p); [UNSIGNED] [ZEROFILL]
    DECIMAL = auto()  # [(M[,D])] [UNSIGNED] [ZEROFILL]
    LENGTH = auto()  # [(M)]: char, binary, bit, year, text, blob, varchar, vector
    VALUES = auto()  # ('a', 'b', ...): enum, set
    FSP = auto()  # [(fsp)]: time, datetime, timestamp
    PLAIN = auto()  # nothing: date, json, geometry, uuid ...


class Spelling(NamedTuple):
    name: str
    shape: Shape
    national: bool = False
    boolean: bool = False
    serial: bool = False


def _same(shape: Shape, names: str) -> dict[tuple[str, ...], Spelling]:
    return {(name.upper(),): Spelling(name, shape) for name in names.split()}


def _alias(
    name: str, shape: Shape, spellings: str, **flags: bool
) -> dict[tuple[str, ...], Spelling]:
    return {tuple(words.split()): Spelling(name, shape, **flags) for words in spellings.split(",")}


SPELLINGS: Final[dict[tuple[str, ...], Spelling]] = {
    **_same(Shape.INTEGER, "tinyint smallint mediumint int bigint"),
    **_alias("tinyint", Shape.INTEGER, "INT1"),
    **_alias("smallint", Shape.INTEGER, "INT2"),
    **_alias("mediumint", Shape.INTEGER, "INT3,MIDDLEINT"),
    **_alias("int", Shape.INTEGER, "INT4,INTEGER"),
    **_alias("bigint", Shape.INTEGER, "INT8"),
    **_alias("tinyint", Shape.PLAIN, "BOOL,BOOLEAN", boolean=True),
    **_alias("bigint", Shape.PLAIN, "SERIAL", serial=True),
    **_same(Shape.FLOAT, "float double"),
    **_alias("float", Shape.FLOAT, "FLOAT4"),
    **_alias("double", Shape.FLOAT, "FLOAT8,REAL,DOUBLE PRECISION"),
    **_alias("decimal", Shape.DECIMAL, "DECIMAL,DEC,NUMERIC,FIXED"),
    **_same(Shape.LENGTH, "bit char binary varchar varbinary year text blob vector"),
    **_alias("char", Shape.LENGTH, "CHARACTER"),
    **_alias("char", Shape.LENGTH, "NCHAR,NATIONAL CHAR,NATIONAL CHARACTER", national=True),
    **_alias("varchar", Shape.LENGTH, "VARCHARACTER,CHAR VARYING,CHARACTER VARYING"),
    **_alias(
        "varchar",
        Shape.LENGTH,
        "NVARCHAR,NATIONAL VARCHAR,NCHAR VARCHAR,NCHAR VARYING,NATIONAL CHAR VARYING,"
        "NATIONAL CHARACTER VARYING",
        national=True,
    ),
    **_alias("mediumtext", Shape.PLAIN, "LONG,LONG VARCHAR,LONG CHAR VARYING"),
    **_alias("mediumblob", Shape.PLAIN, "LONG VARBINARY"),
    **_same(Shape.PLAIN, "tinytext mediumtext longtext tinyblob mediumblob longblob"),
    **_same(Shape.VALUES, "enum set"),
    **_same(Shape.FSP, "time datetime timestamp"),
    **_same(
        Shape.PLAIN,
        "date json geometry point linestring polygon multipoint multilinestring multipolygon "
        "geometrycollection geomcollection uuid inet4 inet6",
    ),
}
"""Upper-case word sequence → spelling; the longest sequence that matches wins."""

LONGEST_SPELLING: Final = max(len(words) for words in SPELLINGS)

CHAR_TYPES: Final = frozenset(
    ["char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set"]
)
"""Types that hold text in a charset (the others have no charset)."""

BINARY_FORM: Final = {
    "char": "binary",
    "varchar": "varbinary",
    "tinytext": "tinyblob",
    "text": "blob",
    "mediumtext": "mediumblob",
    "longtext": "longblob",
}
"""What a text type becomes in CHARACTER SET binary."""

TEXT_SIZES: Final = (("tiny", 255), ("", 65535), ("medium", 16777215), ("long", 4294967295))
"""The text/blob families' prefixes and their maximum bytes."""

INT_WIDTHS: Final = {
    "tinyint": (4, 3),
    "smallint": (6, 5),
    "mediumint": (9, 8),
    "int": (11, 10),
    "bigint": (20, 20),
}
"""Display width the server gives an integer type declared without one: (signed, unsigned)."""


def sized_type(family: str, size: int) -> str:
    """The smallest of ``text``/``blob``'s four sizes that holds ``size`` bytes."""
    for prefix, limit in TEXT_SIZES:
        if size <= limit:
            return prefix + family
    return "long" + family


def text_family(name: str) -> str | None:
    """``text`` or ``blob`` for the four sizes of either, else None."""
    for prefix, _ in TEXT_SIZES:
        for family in ("text", "blob"):
            if name == prefix + family:
                return family
    return None


def max_bytes(name: str) -> int:
    """The largest value of a text or blob type, in bytes."""
    family = text_family(name)
    prefix = name[: -len(family)] if family else ""
    return dict(TEXT_SIZES)[prefix]
