"""A deterministic SQL workload that touches every column type MariaDB 10.11 has.

:func:`build_workload` returns the tables and one SQL script: CREATE TABLE for
each table, multi-row INSERTs with edge values (NULL in every nullable column,
minimum and maximum integers, zero dates, negative and fractional times, empty
and long strings, multi-byte text in many charsets), UPDATEs (one column, many
columns, to and from NULL, of the primary key itself, many rows at once) and
DELETEs, plus a few special shapes: a table without a primary key holding
duplicate rows, a composite key, a 300-column table, MyISAM and Aria tables,
REPLACE, INSERT ... ON DUPLICATE KEY UPDATE, a multi-table transaction and an
XA transaction. Every value comes from fixed lists or a seeded generator, so
the same call always gives the same script.

The script sets ``sql_mode=''`` (zero dates, silent truncation) and
``time_zone='+00:00'`` (TIMESTAMP values are shown in UTC) for its session; it
must run in one client session (:func:`run_workload` does that).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable
from dataclasses import field

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.sandbox.server import MariaDBSandbox

DATABASE = "bk"
SEED = 20240229

Literal = str
"""An SQL literal or expression, ready to paste into a statement."""


@frozen_dataclass
class Column:
    """One column: its name, its SQL type clause, and the values it takes.

    ``values`` are SQL literals; row ``i`` (1-based among the generated rows)
    takes ``values[(i - 1) % len(values)]``, and row 0 is NULL in every
    nullable column.
    """

    name: str
    sql_type: str
    values: tuple[Literal, ...]
    nullable: bool = True


@frozen_dataclass
class Table:
    """A workload table: columns in order, the primary key (maybe none), the engine."""

    name: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ("id",)
    engine: str = "InnoDB"
    rows: int = 8

    def create_sql(self) -> str:
        defs = [f"`{c.name}` {c.sql_type}{'' if c.nullable else ' NOT NULL'}" for c in self.columns]
        if self.primary_key:
            defs.append("PRIMARY KEY (" + ", ".join(f"`{k}`" for k in self.primary_key) + ")")
        return (
            f"CREATE TABLE `{self.name}` (\n  " + ",\n  ".join(defs) + f"\n) ENGINE={self.engine}"
        )

    def value(self, column: Column, row: int) -> Literal:
        """The literal of ``column`` in generated row ``row`` (0 is the all-NULL row)."""
        if column.name == "id":
            return str(row + 1)
        if row == 0 and column.nullable:
            return "NULL"
        return column.values[(row - 1) % len(column.values)]

    def insert_sql(self, rows: Iterable[int]) -> str:
        names = ", ".join(f"`{c.name}`" for c in self.columns)
        tuples = ",\n  ".join(
            "(" + ", ".join(self.value(c, r) for c in self.columns) + ")" for r in rows
        )
        return f"INSERT INTO `{self.name}` ({names}) VALUES\n  {tuples}"


@frozen_dataclass
class Workload:
    """The tables of a workload and the script that creates and changes them."""

    database: str
    tables: tuple[Table, ...]
    statements: tuple[str, ...] = field(repr=False)

    @property
    def script(self) -> str:
        """The whole workload as one SQL script (one statement per ``;``)."""
        return self.script_of(self.statements)

    def script_of(self, statements: Iterable[str]) -> str:
        """``statements`` as one SQL script run in the workload's database and session settings."""
        header = [
            f"CREATE DATABASE IF NOT EXISTS `{self.database}`",
            f"USE `{self.database}`",
            "SET SESSION sql_mode = ''",
            "SET SESSION time_zone = '+00:00'",
        ]
        return "".join(f"{s};\n" for s in (*header, *statements))


# -- literals ------------------------------------------------------------------


def sql_string(text: str) -> Literal:
    """A quoted SQL string literal (the client sends the script as utf8mb4)."""
    escaped = text.replace("\\", "\\\\").replace("'", "\\'").replace("\0", "\\0")
    return f"'{escaped}'"


def sql_bytes(data: bytes) -> Literal:
    return f"X'{data.hex()}'" if data else "''"


def _int_values(bits: int, unsigned: bool, rng: random.Random) -> tuple[Literal, ...]:
    lo, hi = (0, (1 << bits) - 1) if unsigned else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    picks = [lo, hi, 0, 1, hi - 1, lo + 1, (hi + lo) // 2]
    if not unsigned:
        picks += [-1, -(1 << (bits - 2))]
    picks += [rng.randint(lo, hi) for _ in range(3)]
    return tuple(str(v) for v in picks)


def _decimal_values(
    precision: int, scale: int, unsigned: bool, rng: random.Random
) -> tuple[str, ...]:
    def number(int_digits: str, frac_digits: str, negative: bool) -> str:
        text = (int_digits or "0") + (f".{frac_digits}" if scale else "")
        return f"-{text}" if negative else text

    whole = precision - scale
    top = number("9" * whole, "9" * scale, False)
    tiny = number("", "0" * (scale - 1) + "1", False) if scale else "1"
    picks = [top, "0", tiny, number("1", "5" * scale, False)]
    for _ in range(3):
        picks.append(
            number(
                str(rng.randrange(10**whole)) if whole else "",
                "".join(rng.choice("0123456789") for _ in range(scale)),
                False,
            )
        )
    if not unsigned:
        picks += ["-" + top, "-" + tiny, "-" + picks[-1]]
    return tuple(picks)


_FLOATS = (
    "0",
    "1.5",
    "-3.25",
    "3.40282e38",
    "-3.40282e38",
    "1.17549e-38",
    "1.4e-45",
    "16777217",
    "0.1",
    "-123456.789",
)
_DOUBLES = (
    "0e0",
    "1.7976931348623157e308",
    "-1.7976931348623157e308",
    "2.2250738585072014e-308",
    "5e-324",
    "0.1e0",
    "-2.5e0",
    "3.141592653589793e0",
    "1e100",
    "-0.30000000000000004e0",
)

_TIMES = (
    "'00:00:00'",
    "'-838:59:59'",
    "'838:59:59'",
    "'-00:00:01'",
    "'12:34:56.789012'",
    "'-12:34:56.5'",
    "'-00:00:00.000001'",
    "'100:00:00.999999'",
    "'23:59:59.999999'",
)
_DATES = (
    "'0000-00-00'",
    "'1000-01-01'",
    "'9999-12-31'",
    "'2024-02-29'",
    "'1970-01-01'",
    "'2024-05-00'",
    "'2000-00-00'",
)
_DATETIMES = (
    "'0000-00-00 00:00:00'",
    "'1000-01-01 00:00:00'",
    "'9999-12-31 23:59:59.999999'",
    "'2024-02-29 12:34:56.123456'",
    "'1970-01-01 00:00:00'",
    "'2024-00-00 00:00:00'",
    "'2000-01-01 00:00:00.5'",
)
_TIMESTAMPS = (
    "'0000-00-00 00:00:00'",
    "'1970-01-01 00:00:01'",
    "'2038-01-19 03:14:07.999999'",
    "'2000-02-29 23:59:59.5'",
    "'2024-06-01 12:00:00.000001'",
    "'2009-02-13 23:31:30.123'",
)

_ASCII_TEXTS = (
    "",
    "a",
    "hello, world",
    "trailing spaces   ",
    "  leading spaces",
    "quote ' and \\ backslash",
    "tab\tnew\nline",
    "NULL",
)
_CHARSET_TEXTS: dict[str, tuple[str, ...]] = {
    "latin1": ("Grüße, Ça va? € Œ ‰", "ÿ\u00d7÷ ©®°±", "àáâãäåæçèéêë"),
    "utf8mb3": ("Grüße, Ça va? €", "日本語のテキスト", "Ωμέγα Ελληνικά", "שָׁלוֹם"),
    "utf8mb4": ("Grüße €", "日本語のテキスト", "emoji 😀🎉 and 𝄞", "🏳️‍🌈 zwj"),
    "ucs2": ("Grüße €", "日本語のテキスト", "Ωμέγα"),
    "utf16": ("Grüße €", "日本語", "emoji 😀 𝄞"),
    "utf16le": ("Grüße €", "日本語", "emoji 😀 𝄞"),
    "utf32": ("Grüße €", "日本語", "emoji 😀 𝄞"),
    "gbk": ("中文字符", "汉字和拼音 hanzi", "简体"),
}
STRING_CHARSETS: tuple[str, ...] = tuple(_CHARSET_TEXTS)


def _long_text(charset: str, chars: int) -> str:
    sample = _CHARSET_TEXTS[charset][1]
    return (sample * (chars // len(sample) + 1))[:chars]


def _string_table(charset: str, long_chars: int) -> Table:
    texts = _ASCII_TEXTS + _CHARSET_TEXTS[charset]
    long_texts = (_long_text(charset, 300), _long_text(charset, 100), "x" * 256)
    pool = tuple(sql_string(t) for t in texts)
    long_pool = tuple(sql_string(t) for t in (*long_texts, *texts))
    huge = (sql_string(_long_text(charset, long_chars)), *long_pool)
    cs = f"CHARACTER SET {charset}"

    def rotated(values: tuple[Literal, ...], by: int) -> tuple[Literal, ...]:
        return values[by:] + values[:by]

    return Table(
        f"t_str_{charset}",
        (
            Column("id", "INT", (), nullable=False),
            Column("c0", f"CHAR(0) {cs}", ("''",)),
            Column("c1", f"CHAR(1) {cs}", rotated(pool, 1)),
            Column("c10", f"CHAR(10) {cs}", rotated(pool, 2)),
            Column("c255", f"CHAR(255) {cs}", rotated(long_pool, 3)),
            Column("v10", f"VARCHAR(10) {cs}", rotated(pool, 4)),
            Column("v300", f"VARCHAR(300) {cs}", long_pool),
            Column("tt", f"TINYTEXT {cs}", rotated(pool, 5)),
            Column("tx", f"TEXT {cs}", rotated(long_pool, 1)),
            Column("mt", f"MEDIUMTEXT {cs}", huge),
            Column("lt", f"LONGTEXT {cs}", rotated(huge, 2)),
        ),
        rows=len(long_pool) + 1,
    )


def _binary_table(rng: random.Random, huge: int) -> Table:
    blobs = (
        b"",
        b"\x00",
        b"a\x00",
        b"\x00\x00\x00\x00",
        b"ends with spaces  ",
        bytes(range(256)),
        b"\xff" * 17,
        rng.randbytes(40),
        "utf8 text é".encode(),
    )
    pool = tuple(sql_bytes(b) for b in blobs)
    big = (sql_bytes(rng.randbytes(huge)), sql_bytes(rng.randbytes(300)), *pool)
    return Table(
        "t_bin",
        (
            Column("id", "INT", (), nullable=False),
            Column("b1", "BINARY(1)", pool),
            Column("b16", "BINARY(16)", pool[1:] + pool[:1]),
            Column("b255", "BINARY(255)", pool[2:] + pool[:2]),
            Column("cb", "CHAR(20) CHARACTER SET binary", pool[3:] + pool[:3]),
            Column("vb300", "VARBINARY(300)", big[1:]),
            Column("vb", "VARCHAR(20) CHARACTER SET binary", pool[4:] + pool[:4]),
            Column("tb", "TINYBLOB", pool[5:] + pool[:5]),
            Column("bl", "BLOB", big[1:]),
            Column("mb", "MEDIUMBLOB", big),
            Column("lb", "LONGBLOB", big[2:] + big[:2]),
        ),
        rows=len(big) + 1,
    )


def _json_values(huge: int) -> tuple[Literal, ...]:
    docs: list[object] = [
        {},
        [],
        None,
        "plain string",
        1,
        -1.5e10,
        True,
        {"a": [1, 2, {"b": None}], "ü": "日本", "emoji": "😀", "n": 1.25},
        {"deep": [[[[[[[[[[["down"]]]]]]]]]]]},
        [{"k": i, "v": "x" * i} for i in range(0, 600, 60)],
    ]
    texts = [json.dumps(d, ensure_ascii=False) for d in docs]
    texts.append(json.dumps({"big": "y" * huge}))
    texts.append('{"spacing" :  [1 ,2],"kept":"as written"}')
    return tuple(sql_string(t) for t in texts)


def _geo(text: str, srid: int = 0) -> Literal:
    return f"ST_GeomFromText('{text}', {srid})"


def _tables(small: bool, max_fsp: int) -> tuple[Table, ...]:
    rng = random.Random(SEED)
    huge = 2000 if small else 70_000
    ints = []
    for type_name, bits in (
        ("TINYINT", 8),
        ("SMALLINT", 16),
        ("MEDIUMINT", 24),
        ("INT", 32),
        ("BIGINT", 64),
    ):
        short = type_name[:-3].lower() or "int"
        ints.append(Column(f"{short}_s", type_name, _int_values(bits, False, rng)))
        ints.append(Column(f"{short}_u", f"{type_name} UNSIGNED", _int_values(bits, True, rng)))
    ints.append(Column("flag", "BOOL", ("0", "1", "-1", "127")))
    ints.append(Column("zf", "INT(8) UNSIGNED ZEROFILL", ("0", "42", "4294967295")))
    t_int = Table("t_int", (Column("id", "INT", (), nullable=False), *ints), rows=13)

    decimals = [
        Column(
            f"d_{p}_{s}{'_u' if u else ''}",
            f"DECIMAL({p},{s}){' UNSIGNED' if u else ''}",
            tuple(_decimal_values(p, s, u, rng)),
        )
        for p, s, u in (
            (1, 0, False),
            (4, 2, False),
            (9, 9, False),
            (10, 0, False),
            (10, 5, True),
            (18, 9, False),
            (20, 10, False),
            (38, 0, False),
            (65, 0, False),
            (65, 30, False),
        )
    ]
    t_decimal = Table("t_decimal", (Column("id", "INT", (), nullable=False), *decimals), rows=11)

    t_float = Table(
        "t_float",
        (
            Column("id", "INT", (), nullable=False),
            Column("f", "FLOAT", _FLOATS),
            Column("d", "DOUBLE", _DOUBLES),
            Column("f73", "FLOAT(7,3)", ("0", "1.2345", "-9999.999", "0.0005")),
            Column("d164", "DOUBLE(16,4)", ("0", "123456789012.3456", "-1.5", "0.00005")),
            Column("r", "REAL", _DOUBLES[3:] + _DOUBLES[:3]),
        ),
        rows=11,
    )

    bit_columns = [
        Column(
            f"b{n}",
            f"BIT({n})",
            tuple(str(v) for v in (0, (1 << n) - 1, 1, 1 << (n - 1), rng.getrandbits(n))),
        )
        for n in (1, 2, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64)
    ]
    t_bit = Table("t_bit", (Column("id", "INT", (), nullable=False), *bit_columns), rows=6)

    temporal: list[Column] = [
        Column("y", "YEAR", ("0", "1901", "2155", "2000", "1970", "2024")),
        Column("dt_date", "DATE", _DATES),
    ]
    for fsp in range(max_fsp + 1):
        temporal.append(Column(f"tm{fsp}", f"TIME({fsp})", _TIMES[fsp:] + _TIMES[:fsp]))
        temporal.append(Column(f"dt{fsp}", f"DATETIME({fsp})", _DATETIMES[fsp:] + _DATETIMES[:fsp]))
        temporal.append(
            Column(
                f"ts{fsp}",
                f"TIMESTAMP({fsp}) NULL DEFAULT NULL",
                _TIMESTAMPS[fsp % 6 :] + _TIMESTAMPS[: fsp % 6],
            )
        )
    t_temporal = Table("t_temporal", (Column("id", "INT", (), nullable=False), *temporal), rows=10)

    big_enum = ",".join(f"'v{i:03d}'" for i in range(300))
    set64 = ",".join(f"'m{i:02d}'" for i in range(64))
    set9 = ",".join(f"'n{i}'" for i in range(9))
    t_enum_set = Table(
        "t_enum_set",
        (
            Column("id", "INT", (), nullable=False),
            Column("e", "ENUM('a','b','c')", ("'a'", "'c'", "'not a member'", "'b'")),
            Column("e300", f"ENUM({big_enum})", ("'v000'", "'v299'", "'v255'", "'v256'")),
            Column(
                "e_mb",
                "ENUM('ä','日本','😀','') CHARACTER SET utf8mb4",
                ("'日本'", "'😀'", "''", "'ä'"),
            ),
            Column("e_l1", "ENUM('é','ß','x') CHARACTER SET latin1", ("'é'", "'ß'", "'x'")),
            Column("s", "SET('x','y','z')", ("''", "'x'", "'x,z'", "'x,y,z'", "'z,y'")),
            Column("s9", f"SET({set9})", ("'n0,n8'", "'n8'", "''", "'n1,n2,n3'")),
            Column(
                "s64",
                f"SET({set64})",
                (
                    "'m00,m63'",
                    "'" + ",".join(f"m{i:02d}" for i in range(64)) + "'",
                    "'m07,m08'",
                    "''",
                ),
            ),
            Column("s_l1", "SET('é','ß','ü') CHARACTER SET latin1", ("'é,ü'", "'ß'", "''")),
        ),
        rows=7,
    )

    t_json = Table(
        "t_json",
        (Column("id", "INT", (), nullable=False), Column("j", "JSON", _json_values(huge))),
        rows=13,
    )

    polygon = "POLYGON((0 0,10 0,10 10,0 10,0 0),(2 2,3 2,3 3,2 2))"
    t_geo = Table(
        "t_geo",
        (
            Column("id", "INT", (), nullable=False),
            Column(
                "g",
                "GEOMETRY",
                (
                    _geo("POINT(1 2)"),
                    _geo("LINESTRING(0 0,1 1,2 0)", 4326),
                    _geo(polygon),
                    _geo("GEOMETRYCOLLECTION(POINT(1 1),LINESTRING(0 0,5 5))"),
                ),
            ),
            Column("p", "POINT", (_geo("POINT(-1.5 1e300)"), _geo("POINT(0 0)", 4326))),
            Column("l", "LINESTRING", (_geo("LINESTRING(0 0,1 1)"),)),
            Column("pg", "POLYGON", (_geo(polygon),)),
            Column("mp", "MULTIPOINT", (_geo("MULTIPOINT(1 1,2 2,3 3)"),)),
            Column("ml", "MULTILINESTRING", (_geo("MULTILINESTRING((0 0,1 1),(2 2,3 3))"),)),
            Column("mpg", "MULTIPOLYGON", (_geo("MULTIPOLYGON(((0 0,1 0,1 1,0 0)))"),)),
            Column(
                "gc",
                "GEOMETRYCOLLECTION",
                (_geo("GEOMETRYCOLLECTION(POINT(1 1))"), _geo("GEOMETRYCOLLECTION EMPTY")),
            ),
        ),
        rows=5,
    )

    t_mariadb = Table(
        "t_mariadb",
        (
            Column("id", "INT", (), nullable=False),
            Column(
                "ip6",
                "INET6",
                (
                    "'::'",
                    "'::1'",
                    "'2001:db8::ff00:42:8329'",
                    "'::ffff:192.0.2.1'",
                    "'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'",
                    "'fe80::1:0:0:0'",
                ),
            ),
            Column(
                "u",
                "UUID",
                (
                    "'00000000-0000-0000-0000-000000000000'",
                    "'123e4567-e89b-12d3-a456-426614174000'",
                    "'ffffffff-ffff-ffff-ffff-ffffffffffff'",
                    "'6ccd780c-baba-1026-9564-5b8c656024db'",
                    "'01890c4e-8d3a-7a4f-b2d1-0242ac120002'",
                ),
            ),
            Column(
                "ip4", "INET4", ("'0.0.0.0'", "'255.255.255.255'", "'192.168.0.1'", "'10.0.0.0'")
            ),
        ),
        rows=7,
    )

    t_nopk = Table(
        "t_nopk",
        (
            Column("a", "INT", ("1", "1", "2", "3")),
            Column("b", "VARCHAR(20)", ("'dup'", "'dup'", "'two'", "'three'")),
            Column("c", "BLOB", ("X'00ff'", "X'00ff'", "''", "X'01'")),
            Column("d", "DOUBLE", ("0.5e0", "0.5e0", "-1e0", "2e0")),
        ),
        primary_key=(),
        rows=5,
    )

    t_cpk = Table(
        "t_cpk",
        (
            Column(
                "k1",
                "VARCHAR(20) CHARACTER SET latin1",
                ("'alpha'", "'beta'", "'gämma'"),
                nullable=False,
            ),
            Column("k2", "INT", ("1", "2", "-3", "4"), nullable=False),
            Column("v", "TEXT", ("'one'", "''", "'three'")),
        ),
        primary_key=("k1", "k2"),
        rows=7,
    )

    t_pk_last = Table(
        "t_pk_last",
        (
            Column("v", "VARCHAR(50)", ("'first column'", "''", "'ß'")),
            Column("n", "BIGINT UNSIGNED", ("18446744073709551615", "0")),
            Column("id", "INT", (), nullable=False),
        ),
        rows=4,
    )

    wide = tuple(Column(f"c{i:03d}", "SMALLINT", (str(i), str(-i), "0")) for i in range(300))
    t_wide = Table("t_wide", (Column("id", "INT", (), nullable=False), *wide), rows=4)

    t_myisam = Table(
        "t_myisam",
        (Column("id", "INT", (), nullable=False), Column("v", "VARCHAR(100)", ("'my'", "'isam'"))),
        engine="MyISAM",
        rows=4,
    )
    t_aria = Table(
        "t_aria",
        (Column("id", "INT", (), nullable=False), Column("v", "MEDIUMTEXT", ("'aria'", "''"))),
        engine="Aria",
        rows=4,
    )

    t_bulk = Table(
        "t_bulk",
        (
            Column("id", "INT", (), nullable=False),
            Column("n", "INT", tuple(str(rng.randint(-(10**6), 10**6)) for _ in range(50))),
            Column("s", "VARCHAR(64)", tuple(sql_string(f"row text {i:04d}") for i in range(37))),
        ),
        rows=60 if small else 600,
    )

    if small:
        return (t_int, t_decimal, t_temporal, _string_table("utf8mb4", 300), t_enum_set, t_nopk)
    return (
        t_int,
        t_decimal,
        t_float,
        t_bit,
        t_temporal,
        *(
            _string_table(cs, 70_000 if cs in ("utf8mb4", "latin1") else 1000)
            for cs in STRING_CHARSETS
        ),
        _binary_table(rng, huge),
        t_enum_set,
        t_json,
        t_geo,
        t_mariadb,
        t_nopk,
        t_cpk,
        t_pk_last,
        t_wide,
        t_myisam,
        t_aria,
        t_bulk,
    )


# -- changes ---------------------------------------------------------------------


def _where(table: Table, row: int) -> str:
    """A condition that selects generated row ``row`` by its primary key (else every column)."""
    if table.primary_key == ("id",):
        return f"`id` = {row + 1}"
    by_name = {c.name: c for c in table.columns}
    return " AND ".join(
        f"`{k}` = {table.value(by_name[k], row)}"
        if table.value(by_name[k], row) != "NULL"
        else f"`{k}` IS NULL"
        for k in (table.primary_key or tuple(by_name))
    )


def _changes(table: Table) -> list[str]:
    """UPDATEs and DELETEs for a generated table, and a last INSERT that reuses a key."""
    name = f"`{table.name}`"
    data = [c for c in table.columns if c.name not in table.primary_key]
    out: list[str] = []
    n = table.rows
    if table.primary_key == ("id",):
        # Columns changed alone (row images MINIMAL and NOBLOB log only them).
        alone = data if len(data) <= 40 else data[:3] + data[-3:]
        for k, column in enumerate(alone):
            row = 1 + k % (n - 1)
            new = table.value(column, row + 3)
            out.append(f"UPDATE {name} SET `{column.name}` = {new} WHERE {_where(table, row)}")
        # Everything from NULL to values and back.
        sets = ", ".join(f"`{c.name}` = {table.value(c, 2)}" for c in data)
        out.append(f"UPDATE {name} SET {sets} WHERE `id` = 1")
        nulls = ", ".join(f"`{c.name}` = NULL" for c in data if c.nullable)
        if nulls:
            out.append(f"UPDATE {name} SET {nulls} WHERE `id` = {n - 2}")
        # Many rows in one statement, and a change of the primary key itself.
        if data:
            first = data[0]
            out.append(
                f"UPDATE {name} SET `{first.name}` = {table.value(first, 5)} "
                f"WHERE `id` BETWEEN 2 AND {n - 1}"
            )
        out.append(f"UPDATE {name} SET `id` = `id` + 1000 WHERE `id` = 2")
        out.append(f"DELETE FROM {name} WHERE `id` = 3")
        out.append(f"DELETE FROM {name} WHERE `id` > {n - 2} AND `id` < 1000")
        out.append(table.insert_sql([2]))
    else:
        # Composite keys or none: change by the whole match, one row at a time.
        if data:
            column = data[-1]
            out.append(
                f"UPDATE {name} SET `{column.name}` = {table.value(column, 3)} "
                f"WHERE {_where(table, 1)} LIMIT 1"
            )
        key = table.primary_key[-1] if table.primary_key else table.columns[0].name
        out.append(f"UPDATE {name} SET `{key}` = 77 WHERE {_where(table, 2)} LIMIT 1")
        out.append(f"DELETE FROM {name} WHERE {_where(table, 4)} LIMIT 1")
        out.append(f"DELETE FROM {name} WHERE {_where(table, 0)} LIMIT 1")
    return out


def _special(tables: dict[str, Table], small: bool) -> list[str]:
    out: list[str] = []
    if "t_int" in tables:
        t = tables["t_int"]
        cols = ", ".join(f"`{c.name}`" for c in t.columns)
        values = ["5000"] + [t.value(c, 3) for c in t.columns[1:]]
        row = ", ".join(values)
        changed = ", ".join([values[0], "-5", *values[2:]])
        out += [
            f"REPLACE INTO `t_int` ({cols}) VALUES ({row})",
            f"REPLACE INTO `t_int` ({cols}) VALUES ({changed})",
            f"INSERT INTO `t_int` ({cols}) VALUES ({row}) "
            "ON DUPLICATE KEY UPDATE `int_s` = -7, `flag` = NULL",
        ]
    if not small and {"t_int", "t_str_utf8mb4", "t_bin", "t_myisam"} <= tables.keys():
        out += [
            "BEGIN",
            "UPDATE `t_int` SET `tiny_s` = 5 WHERE `id` = 4",
            "UPDATE `t_str_utf8mb4` SET `v10` = 'in a trx' WHERE `id` = 5",
            "DELETE FROM `t_bin` WHERE `id` = 6",
            "UPDATE `t_myisam` SET `v` = 'mixed' WHERE `id` = 2",
            "COMMIT",
            "XA START 'bk-xa'",
            "INSERT INTO `t_cpk` (`k1`, `k2`, `v`) VALUES ('xa', 1, 'prepared, then committed')",
            "UPDATE `t_cpk` SET `v` = 'xa update' WHERE `k1` = 'beta'",
            "XA END 'bk-xa'",
            "XA PREPARE 'bk-xa'",
            "XA COMMIT 'bk-xa'",
        ]
    if "t_nopk" in tables:
        out.append("UPDATE `t_nopk` SET `d` = 9e0 WHERE `b` = 'dup' LIMIT 1")
    return out


def build_workload(*, small: bool = False, max_fsp: int = 6, database: str = DATABASE) -> Workload:
    """The workload; ``small`` gives a few tables and rows (for the demo).

    ``max_fsp`` limits the fractional-second precision of the TIME, DATETIME
    and TIMESTAMP columns: MariaDB's old temporal formats
    (``mysql56_temporal_format=OFF``) log fractional columns without their
    precision, so no binlog reader can decode them.
    """
    tables = _tables(small, max_fsp)
    statements: list[str] = []
    for table in tables:
        statements.append(table.create_sql())
        statements.append(table.insert_sql(range(table.rows)))
    for table in tables:
        statements += _changes(table)
    statements += _special({t.name: t for t in tables}, small)
    return Workload(database, tables, tuple(statements))


def run_workload(
    server: MariaDBSandbox,
    workload: Workload | None = None,
    *,
    progress: Callable[[str], None] | None = None,
) -> Workload:
    """Run a workload (the full one by default) on ``server`` in one client session."""
    workload = workload or build_workload()
    if progress:
        progress(f"running {len(workload.statements)} statements on {len(workload.tables)} tables")
    server.execute(workload.script)
    return workload
