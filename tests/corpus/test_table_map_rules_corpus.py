"""The table map's signedness and charsets land on the columns the CREATE TABLE says.

For every table map with optional metadata whose table was created earlier in
the same binlog (and not altered since), the column definitions of that
CREATE TABLE text give the expectations: a numeric column is unsigned exactly
when it says UNSIGNED or ZEROFILL (YEAR and SERIAL always are), a column with
an explicit CHARACTER SET / CHARSET / COLLATE, or a BINARY / VARBINARY / BLOB
one, has a collation of that character set, and a geometry column has the
binary charset in MariaDB binlogs and none in MySQL's. A flavour rule that
counts one column too many or too few shifts these onto the wrong columns.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

import pytest
from corpus_walk import corpus_files, decode_up_to_damage

from binlogkit import BinlogDecoder
from binlogkit.binlog.constants import Flavor
from binlogkit.binlog.context import DecodeOptions, flavor_of
from binlogkit.binlog.events import SkippedEvent
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.binlog.rows.charsets import BINARY_COLLATION, charset_name

pytestmark = pytest.mark.corpus

_CREATE = re.compile(
    r"^\s*create\s+(?:or\s+replace\s+)?table\s+(?:if\s+not\s+exists\s+)?"
    r"(?:`?(\w+)`?\s*\.\s*)?`?(\w+)`?\s*\(",
    re.I,
)
_ALTER_OR_DROP = re.compile(
    r"^\s*(?:alter|drop|rename)\s+table\s+(?:if\s+exists\s+)?(?:`?\w+`?\s*\.\s*)?`?(\w+)`?", re.I
)
_NOT_COLUMNS = {
    "primary",
    "key",
    "index",
    "unique",
    "constraint",
    "foreign",
    "fulltext",
    "spatial",
    "check",
    "period",
    "system",
}
_NUMERIC = {
    "tinyint",
    "smallint",
    "mediumint",
    "int",
    "integer",
    "bigint",
    "decimal",
    "dec",
    "numeric",
    "fixed",
    "float",
    "double",
    "real",
}
_ALWAYS_UNSIGNED = {"year", "serial"}
_TEXT = {"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "national", "nchar"}
_BINARY = {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"}
_GEOMETRY = {
    "geometry",
    "point",
    "linestring",
    "polygon",
    "multipoint",
    "multilinestring",
    "multipolygon",
    "geometrycollection",
    "geomcollection",
}
_CHARSET = re.compile(r"\b(?:character\s+set|charset)\s+['`\"]?(\w+)", re.I)
_COLLATE = re.compile(r"\bcollate\s+['`\"]?([a-z0-9]+)_", re.I)


class Column(NamedTuple):
    name: str
    type: str
    rest: str


def _split_top(text: str) -> list[str]:
    """The comma-separated items of a parenthesised list, quotes and nesting respected."""
    items, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"`":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                items.append(text[start:i])
                return items
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    return items


def create_columns(sql: str) -> tuple[str, list[Column]] | None:
    """(table name, column definitions) of a CREATE TABLE statement, or None."""
    m = _CREATE.match(sql)
    if m is None:
        return None
    columns = []
    for item in _split_top(sql[m.end() :]):
        words = re.match(r"\s*(`[^`]+`|\w+)\s+(\w+)(.*)", item, re.S)
        if words is None or words[1].lower() in _NOT_COLUMNS:
            continue
        columns.append(Column(words[1].strip("`"), words[2].lower(), words[3]))
    return m[2].lower(), columns


def expected_unsigned(col: Column) -> bool | None:
    if col.type in _ALWAYS_UNSIGNED:
        return True
    if col.type in _NUMERIC:
        return bool(re.search(r"\b(unsigned|zerofill)\b", col.rest, re.I))
    return None


def expected_charset(col: Column, flavor: Flavor) -> str | bool | None:
    """The charset name the column's collation must have; None for none; False: no claim."""
    if col.type in _GEOMETRY:
        return "binary" if flavor is Flavor.MARIADB else None
    if col.type in _BINARY:
        return "binary"
    if col.type in _TEXT:
        m = _CHARSET.search(col.rest) or _COLLATE.search(col.rest)
        if m is not None:
            return _plain(m[1])
    return False


def _plain(charset: str) -> str:
    """A charset name with MySQL's utf8 alias spelled out."""
    charset = charset.lower()
    return "utf8mb3" if charset == "utf8" else charset


def _same_charset(collation: int | None, expected: str) -> bool:
    if collation is None:
        return False
    if collation == BINARY_COLLATION:
        return expected == "binary"
    name = charset_name(collation)
    return name is not None and _plain(name) == expected


def checked_table_maps(name: str) -> list[tuple[TableMapEvent, list[Column], Flavor]]:
    """Each table map with optional metadata of a table created earlier in the file."""
    options = DecodeOptions(verify_checksum=False, on_corrupt="skip", on_unknown="pass")
    dec = BinlogDecoder(file=name, options=options)
    creates: dict[str, list[Column]] = {}
    out = []
    for event, _frame in decode_up_to_damage(name, dec):
        if isinstance(event, SkippedEvent):
            continue
        query = getattr(event, "query", None)
        if isinstance(query, bytes):
            query = query.decode("utf-8", "replace")
        if isinstance(query, str):
            parsed = create_columns(query)
            if parsed is not None:
                creates[parsed[0]] = parsed[1]
            elif (m := _ALTER_OR_DROP.match(query)) is not None:
                creates.pop(m[1].lower(), None)
        if isinstance(event, TableMapEvent) and event.optional_metadata:
            columns = creates.get(event.table_name.lower())
            if columns is None or len(columns) != event.column_count:
                continue
            names = event.metadata_fields.column_names
            if names is not None and [n.lower() for n in names] != [
                c.name.lower() for c in columns
            ]:
                continue
            out.append((event, columns, flavor_of(dec.fmt.server_version)))
    return out


FILES = corpus_files()


@pytest.mark.parametrize("name", FILES)
def test_signedness_and_charsets_match_the_create_table(corpus_dir: Path, name: str) -> None:
    for event, columns, flavor in checked_table_maps(name):
        meta = event.metadata_fields
        for col, info in zip(columns, event.columns, strict=True):
            where = f"{name}: {event.qualified_name}.{col.name} ({col.type}{col.rest[:40]})"
            unsigned = expected_unsigned(col)
            if meta.signedness is not None and unsigned is not None:
                assert info.unsigned is unsigned, where
            has_charsets = meta.default_charset is not None or meta.column_charsets is not None
            charset = expected_charset(col, flavor)
            if not has_charsets or charset is False:
                continue
            if charset is None:
                assert info.charset is None, where
            else:
                assert _same_charset(info.charset, charset), f"{where}: {info.charset}"


def test_the_corpus_has_the_cases_that_tell_the_rules_apart(corpus_dir: Path) -> None:
    """MariaDB tables with YEAR and with only geometry columns, a MySQL 9 one with VECTOR."""
    local = "local-mariadb-10.11/full/mysql-bin.000002"
    seen = {e.table_name: (e, cols) for e, cols, _ in checked_table_maps(local)}
    t_time, t_time_cols = seen["t_time"]
    year = next(i for i, c in enumerate(t_time_cols) if c.type == "year")
    assert t_time.columns[year].unsigned is True  # MariaDB gives YEAR a signedness bit
    t_geo, geo_cols = seen["t_geo"]
    assert [c.charset for c, d in zip(t_geo.columns, geo_cols, strict=True) if d.type != "int"] == [
        BINARY_COLLATION
    ] * 9
    vector = "blackbeam+rust_mysql_common/test-data/binlogs/vector.binlog"
    maps = {e.table_name: e for e, _, _ in checked_table_maps(vector)}
    # `foo` (BIGINT, VECTOR) has a charset field only because MySQL 9 counts VECTOR.
    assert [c.charset for c in maps["foo"].columns] == [None, BINARY_COLLATION]
