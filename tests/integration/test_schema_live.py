"""Live: the catalog from applying DDL equals what a real MariaDB says about the same DDL.

A throwaway MariaDB (server charset latin1, so every level of charset
resolution shows) runs a script of CREATE/ALTER/RENAME/DROP statements that
covers the constructs of binlogkit.schema (and the CREATE TABLE of every
column type of the sandbox workload). binlogkit applies the same script.
The known answers are the server's: information_schema.COLUMNS (names, order,
types, lengths, precision/scale, fsp, unsigned, zerofill, charset/collation,
ENUM/SET members, nullability, invisible, generated, default), STATISTICS (primary
keys), TABLES (table collation) and SCHEMATA. Then each table's SHOW CREATE
TABLE, and ``mariadb-dump --no-data`` of the same server, applied to empty
catalogs, must give the same catalog again.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from dataclasses import replace

import pytest

import binlogkit
from binlogkit.binlog.constants import Flavor
from binlogkit.binlog.context import parse_version
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.sandbox.workload import build_workload
from binlogkit.schema import Catalog, ColumnDef, DatabaseDef, Session, TableDef, apply_script
from binlogkit.schema.tables import SYSTEM_COLUMNS

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

DATABASES = ("s1", "s2", "s3", "s4", "bk")

SCRIPT = r"""
CREATE DATABASE s1;
CREATE DATABASE s2 DEFAULT CHARACTER SET utf8mb4;
CREATE DATABASE s3 COLLATE utf8mb4_unicode_ci;
CREATE DATABASE s4 /*!40100 DEFAULT CHARACTER SET cp1251 */;
ALTER DATABASE s4 CHARACTER SET koi8r;
CREATE SCHEMA IF NOT EXISTS s1 CHARACTER SET utf8mb4;
USE s1;
CREATE TABLE t_res (
  a VARCHAR(5),
  b VARCHAR(5) CHARACTER SET utf8mb4,
  c VARCHAR(5) COLLATE utf8mb4_bin,
  d VARCHAR(5) CHARACTER SET latin2 COLLATE latin2_bin,
  e CHAR(3) BINARY,
  f TEXT CHARACTER SET binary,
  g CHAR(4) CHARACTER SET binary,
  h NATIONAL VARCHAR(7),
  i TEXT(100) CHARACTER SET utf8mb4,
  j VARCHAR(3) ASCII,
  k LONG VARCHAR,
  l CHAR,
  id INT NOT NULL
) DEFAULT CHARSET=utf8mb3;
CREATE TABLE s2.t_db (a CHAR(2), b ENUM('x','y'), c SET('p','q') CHARACTER SET latin1);
CREATE TABLE s3.t_db (a CHAR(2));
CREATE TABLE s4.t_db (a TINYTEXT, b VARCHAR(3) COLLATE koi8r_bin);
CREATE TABLE t_enum (
  e1 ENUM('a''b', 'c\'d', 'tab\there', 'back\\slash', 'trail   ', 'ü', '日本', '😀')
    CHARACTER SET utf8mb4 NOT NULL DEFAULT 'a''b',
  s1 SET('x', 'y''z', 'ß') CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci,
  e2 ENUM('one','two') /*!40100 COLLATE latin1_bin */
);
CREATE TABLE `tä名 x` (`id` INT PRIMARY KEY, `col ü 名` VARCHAR(10), `select` INT, `a``b` INT);
CREATE TABLE t_attr (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  n INT(5) ZEROFILL,
  ts TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  ts2 TIMESTAMP NULL,
  d DATETIME(6) DEFAULT '2000-01-01 00:00:00' COMMENT 'a comment',
  v INT AS (n + 1) VIRTUAL,
  st INT GENERATED ALWAYS AS (n * 2) STORED,
  p INT AS (n) PERSISTENT,
  c BLOB COMPRESSED,
  vc VARCHAR(100) COMPRESSED DEFAULT 'x' COLLATE latin1_bin,
  k INT CHECK (k > 0),
  iv INT INVISIBLE DEFAULT 3,
  r BIGINT UNSIGNED REFERENCES t_attr (id) ON DELETE CASCADE,
  PRIMARY KEY (id),
  KEY (n) USING BTREE,
  UNIQUE KEY uk (d, ts) COMMENT 'uk',
  CONSTRAINT chk CHECK (n < 100),
  k2 BIGINT UNSIGNED,
  FOREIGN KEY fk (k2) REFERENCES t_attr (id)
) ENGINE=InnoDB AUTO_INCREMENT=10 COMMENT='attrs' ROW_FORMAT=DYNAMIC;
CREATE TABLE t_syn (
  s SERIAL, b BOOL, bb BOOLEAN, i1 INT1, i8 INT8 UNSIGNED, mi MIDDLEINT, i3 INT3, i4 INT4,
  r REAL, dp DOUBLE PRECISION, f4 FLOAT4, f8 FLOAT8, fp FLOAT(30), fp2 FLOAT(10), fmd FLOAT(7,3),
  fx FIXED(6,2), nm NUMERIC, dc DEC(8), y YEAR(4), lvb LONG VARBINARY, l LONG,
  cv CHARACTER VARYING(9), nc NCHAR(3), ncv NCHAR VARYING(4), ch CHARACTER(2),
  bl BLOB(300), bl2 BLOB(70000), tb TINYBLOB, j JSON, u UUID, ip4 INET4, ip6 INET6,
  g GEOMETRY, pt POINT, gc GEOMETRYCOLLECTION, b1 BIT, b5 BIT(5), tm TIME, dt DATETIME
);
CREATE TABLE t_ai (a INT AUTO_INCREMENT, KEY (a));
CREATE TABLE t_part (id INT NOT NULL, k INT NOT NULL, PRIMARY KEY (id, k))
  PARTITION BY RANGE (k)
  (PARTITION p0 VALUES LESS THAN (100), PARTITION p1 VALUES LESS THAN MAXVALUE);
CREATE TABLE t_ver (x INT) WITH SYSTEM VERSIONING;
CREATE TABLE t_ver2 (
  x INT,
  rs TIMESTAMP(6) GENERATED ALWAYS AS ROW START,
  re TIMESTAMP(6) GENERATED ALWAYS AS ROW END,
  PERIOD FOR SYSTEM_TIME(rs, re)
) WITH SYSTEM VERSIONING;
CREATE TABLE t_nover (id INT PRIMARY KEY, y INT);
ALTER TABLE t_nover ADD SYSTEM VERSIONING;
CREATE TABLE t_unver (id INT) WITH SYSTEM VERSIONING;
ALTER TABLE t_unver DROP SYSTEM VERSIONING;
CREATE SEQUENCE seq1 START WITH 5;
CREATE TABLE t_like LIKE t_attr;
CREATE TABLE t_like2 (LIKE t_res);
CREATE OR REPLACE TABLE t_like2 (z INT);
CREATE TABLE IF NOT EXISTS t_like2 (ignored INT);
CREATE TABLE t_vc (a INT /*!50100 , b INT */ /*!99999 , c INT */ /*M!100100 , d INT */
  /*!50699 , e INT */ /*!50700 , f INT */ /*!100100 , g INT */ /*M!999999 , h INT */);
ALTER TABLE t_res ADD COLUMN IF NOT EXISTS a INT, ADD COLUMN z1 INT FIRST,
  ADD COLUMN z2 INT AFTER b, ADD COLUMN (z3 INT, z4 CHAR(2)), ALGORITHM=COPY, LOCK=SHARED;
ALTER TABLE t_res DROP COLUMN IF EXISTS nope, DROP COLUMN z4,
  CHANGE COLUMN c c2 VARCHAR(8) NOT NULL,
  MODIFY d TEXT, MODIFY COLUMN e INT FIRST, RENAME COLUMN j TO jj;
ALTER TABLE t_res ADD PRIMARY KEY (id);
ALTER TABLE t_res DROP PRIMARY KEY, ADD PRIMARY KEY (id, z1);
ALTER TABLE t_res CHANGE IF EXISTS k k2 MEDIUMTEXT, CHANGE IF EXISTS nope nope2 INT;
ALTER TABLE t_res ALTER COLUMN z2 SET DEFAULT 5, ALTER z3 DROP DEFAULT;
ALTER TABLE t_res DEFAULT CHARACTER SET latin1;
ALTER TABLE t_res ADD COLUMN after_default VARCHAR(3), MODIFY l INT INVISIBLE;
CREATE TABLE t_conv (a TINYTEXT, b TEXT, c VARCHAR(10), d ENUM('x'),
  e CHAR(3) CHARACTER SET utf8mb4,
  f MEDIUMTEXT, g BLOB, h INT) CHARACTER SET latin1;
ALTER TABLE t_conv CONVERT TO CHARACTER SET utf8mb4;
CREATE TABLE t_conv2 (a TEXT, b VARCHAR(10)) CHARACTER SET utf8mb4;
ALTER TABLE t_conv2 CONVERT TO CHARACTER SET latin1 COLLATE latin1_bin, ENGINE=InnoDB;
ALTER TABLE t_enum MODIFY e2 ENUM('new', 'values''q') NOT NULL, COLLATE utf8mb4_bin;
ALTER TABLE t_like RENAME TO t_like_renamed;
ALTER TABLE t_like_renamed RENAME TO s2.t_moved, ADD COLUMN moved INT;
RENAME TABLE t_like2 TO t_l2, s2.t_db TO s2.t_db2;
CREATE TABLE t_pk (a INT NOT NULL, b INT NOT NULL, c INT, PRIMARY KEY (a));
DROP INDEX `PRIMARY` ON t_pk;
CREATE UNIQUE INDEX u ON t_pk (b);
ALTER TABLE t_pk ADD CONSTRAINT pkc PRIMARY KEY (c, a), ADD INDEX ix (a), ADD UNIQUE (b, c);
ALTER TABLE t_pk DROP INDEX ix, RENAME INDEX u TO u2;
CREATE TABLE t_defaults (id INT PRIMARY KEY,
  a INT DEFAULT 5, b INT DEFAULT '7', c BIGINT UNSIGNED DEFAULT 18446744073709551615,
  d DECIMAL(6,2) DEFAULT 1.5, e VARCHAR(10) DEFAULT 'a''b\\c\n', e2 VARCHAR(10) DEFAULT 'q\'\0\r\Z',
  f ENUM('x','y') DEFAULT 'Y', g DATE DEFAULT '2020-1-2', h DATETIME(6) DEFAULT '2000-01-01',
  i TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), j INT NOT NULL, k VARCHAR(3) NOT NULL,
  l BIT(5) DEFAULT b'101', m VARBINARY(4) DEFAULT 0x4142, n FLOAT DEFAULT 1.1,
  o DOUBLE DEFAULT 1e10, p INT DEFAULT NULL, r CHAR(36) DEFAULT (UUID()), s INT DEFAULT (1+2),
  u TIME(2) DEFAULT '1:2:3', v YEAR DEFAULT 99, w SET('a','b') DEFAULT 'b,a',
  y DATETIME DEFAULT NOW(), z TEXT DEFAULT 'tx', aa BINARY(3) DEFAULT 'ab',
  ab DOUBLE DEFAULT RAND(),
  ac DECIMAL(40,5) DEFAULT -12.3, ae BIT(8) DEFAULT 65, af VARCHAR(5) DEFAULT _utf8mb4'é',
  ag INT DEFAULT 0x10, aj FLOAT NOT NULL DEFAULT 3,
  ak TIMESTAMP NULL DEFAULT '2001-02-03 04:05:06',
  am INT DEFAULT TRUE, an VARCHAR(8) DEFAULT CONCAT('a','b'), ao INT DEFAULT (5),
  ap DATETIME(6) DEFAULT NOW(6), aq DATE DEFAULT 20200102);
ALTER TABLE t_defaults ALTER a SET DEFAULT '42', ALTER COLUMN i DROP DEFAULT,
  MODIFY j INT NOT NULL DEFAULT 1;
CREATE TABLE t_drop (a INT);
CREATE TABLE t_drop2 (a INT);
DROP TABLE t_drop, t_drop2;
DROP TABLE IF EXISTS nope;
TRUNCATE TABLE t_pk;
CREATE TEMPORARY TABLE t_pk (x INT);
DROP TEMPORARY TABLE t_pk;
CREATE VIEW v AS SELECT 1 AS one;
DROP VIEW v;
DELIMITER ;;
CREATE TRIGGER tr BEFORE INSERT ON t_pk FOR EACH ROW BEGIN SET NEW.c = 1; SET NEW.b = 2; END ;;
CREATE PROCEDURE pr() BEGIN SELECT 1; SELECT 2; END ;;
DELIMITER ;
CREATE DATABASE s5;
CREATE TABLE s5.x (a INT);
DROP DATABASE s5;
CREATE TABLE t_ctas AS SELECT 1 AS a;
"""


def _workload_script() -> str:
    workload = build_workload()
    creates = "".join(f"{t.create_sql()};\n" for t in workload.tables)
    return f"CREATE DATABASE bk;\nUSE bk;\n{creates}"


def _session(server: MariaDBSandbox) -> Session:
    version = server.query("SELECT VERSION()")[0][0] or ""
    return Session(
        server_collation=server.variable("collation_server"),
        flavor=Flavor.MARIADB,
        version=parse_version(version),
        explicit_defaults_for_timestamp=server.variable("explicit_defaults_for_timestamp") == "ON",
    )


def _members(column_type: str) -> tuple[str, ...]:
    """ENUM/SET members from information_schema's COLUMN_TYPE: ``enum('a''b','c\\\\d')``."""
    body = column_type[column_type.index("(") + 1 : column_type.rindex(")")]
    members, current, i = [], "", 1
    while i < len(body):
        ch = body[i]
        if ch == "'" and body[i + 1 : i + 2] == "'":
            current, i = current + "'", i + 2
        elif ch == "\\":
            current, i = current + body[i + 1], i + 2
        elif ch == "'":
            members.append(current)
            current, i = "", i + 3  # past "','"
        else:
            current, i = current + ch, i + 1
    return tuple(members)


def _int(value: str | None) -> int | None:
    return None if value is None else int(value)


def _expected_column(row: tuple[str | None, ...]) -> ColumnDef:
    (name, column_type, data_type, nullable, extra, charset, collation, char_len,
     precision, scale, fsp, default) = row  # fmt: skip
    assert name and column_type and data_type is not None
    args = ""
    if "(" in column_type:
        args = column_type[column_type.index("(") + 1 : column_type.index(")")]
    numbers = [int(a) for a in args.split(",")] if args and data_type not in ("enum", "set") else []
    length: int | None = None
    if data_type in ("char", "varchar"):
        length = _int(char_len)
    elif data_type in ("binary", "varbinary", "bit", "year", "tinyint", "smallint", "mediumint",
                       "int", "bigint"):  # fmt: skip
        length = numbers[0] if numbers else None
    exact = data_type == "decimal" or (data_type in ("float", "double") and len(numbers) == 2)
    return ColumnDef(
        name=name,
        type=data_type,
        length=length,
        precision=_int(precision) if exact else None,
        scale=_int(scale) if exact else None,
        fsp=_int(fsp) if data_type in ("time", "datetime", "timestamp") else None,
        unsigned=" unsigned" in column_type,
        zerofill=" zerofill" in column_type,
        charset=charset,
        collation=collation,
        values=_members(column_type) if data_type in ("enum", "set") else None,
        nullable=nullable == "YES",
        invisible="INVISIBLE" in (extra or ""),
        generated=next(
            (g for g in ("VIRTUAL", "STORED") if f"{g} GENERATED" in (extra or "")), None
        ),
        default=None if default == "NULL" else default,
        auto_increment="auto_increment" in (extra or ""),
        compressed="/*M!100301 COMPRESSED*/" in column_type,
    )


def server_catalog(server: MariaDBSandbox) -> Catalog:
    """The catalog information_schema describes (see :func:`_in_utf8mb3`)."""
    names = ", ".join(f"'{d}'" for d in DATABASES)
    catalog = Catalog()
    for db, charset, collation in server.query(
        "SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME"
        f" FROM information_schema.SCHEMATA WHERE SCHEMA_NAME IN ({names})"
    ):
        assert db is not None
        catalog = catalog.with_database(DatabaseDef(db, charset, collation))
    columns: dict[tuple[str, str], list[ColumnDef]] = {}
    for row in server.query(
        "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, DATA_TYPE, IS_NULLABLE,"
        " EXTRA, CHARACTER_SET_NAME, COLLATION_NAME, CHARACTER_MAXIMUM_LENGTH,"
        " NUMERIC_PRECISION, NUMERIC_SCALE, DATETIME_PRECISION, COLUMN_DEFAULT"
        " FROM information_schema.COLUMNS"
        f" WHERE TABLE_SCHEMA IN ({names}) ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION"
    ):
        columns.setdefault((str(row[0]), str(row[1])), []).append(_expected_column(row[2:]))
    keys: dict[tuple[str, str], list[str]] = {}
    for db, table, column in server.query(
        "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME FROM information_schema.STATISTICS"
        f" WHERE TABLE_SCHEMA IN ({names}) AND INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX"
    ):
        keys.setdefault((str(db), str(table)), []).append(str(column))
    for db, table, collation in server.query(
        "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_COLLATION FROM information_schema.TABLES"
        f" WHERE TABLE_SCHEMA IN ({names}) AND TABLE_TYPE != 'VIEW'"
    ):
        assert db is not None and table is not None and collation is not None
        catalog = catalog.with_table(
            TableDef(
                db,
                table,
                tuple(columns[db, table]),
                tuple(keys.get((db, table), ())),
                collation.partition("_")[0],
                collation,
            )
        )
    return catalog


def _bmp(values: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """Members as information_schema (utf8mb3) shows them: '?' for characters past U+FFFF."""
    if values is None:
        return None
    return tuple("".join(ch if ord(ch) <= 0xFFFF else "?" for ch in v) for v in values)


def _in_utf8mb3(catalog: Catalog, *, hidden: bool = True) -> Catalog:
    """The catalog as the server can show it: ENUM/SET members in utf8mb3 (information_schema,
    SHOW CREATE TABLE), without MariaDB's implicit system-versioning columns unless ``hidden``
    (information_schema does not list them)."""
    for table in list(catalog.tables()):
        columns = tuple(
            replace(c, values=_bmp(c.values))
            for c in table.columns
            if hidden or c not in SYSTEM_COLUMNS
        )
        catalog = catalog.with_table(replace(table, columns=columns))
    return catalog


def _assert_same(ours: Catalog, theirs: Catalog) -> None:
    assert sorted(d.name for d in ours.databases()) == sorted(d.name for d in theirs.databases())
    for database in theirs.databases():
        assert ours.database(database.name) == database
    ours_names = sorted((t.db, t.name) for t in ours.tables())
    assert ours_names == sorted((t.db, t.name) for t in theirs.tables())
    for table in theirs.tables():
        mine = ours.table(table.db, table.name)
        assert mine is not None
        for a, b in zip(mine.columns, table.columns, strict=False):
            assert a == b, f"{table.db}.{table.name}"
        assert mine == table


@pytest.fixture(scope="module")
def server(mariadb_factory: Callable[..., MariaDBSandbox]) -> MariaDBSandbox:
    server = mariadb_factory(
        "schema-live", character_set_server="latin1", collation_server="latin1_swedish_ci"
    )
    server.execute(SCRIPT + _workload_script())
    return server


@pytest.fixture(scope="module")
def applied(server: MariaDBSandbox) -> Catalog:
    result = apply_script(Catalog(), SCRIPT + _workload_script(), _session(server))
    assert [str(w) for w in result.warnings] == [
        "CREATE TABLE ... SELECT: the columns come from a query:"
        " CREATE TABLE t_ctas AS SELECT 1 AS a"
    ]
    assert list(result.catalog.unknown_tables()) == [("s1", "t_ctas")]
    return result.catalog.without_table("s1", "t_ctas")


def test_catalog_equals_information_schema(server: MariaDBSandbox, applied: Catalog) -> None:
    theirs = server_catalog(server).without_table("s1", "t_ctas")
    _assert_same(_in_utf8mb3(applied, hidden=False), theirs)
    versioned = applied.table("s1", "t_ver")
    assert versioned is not None and versioned.columns[1:] == SYSTEM_COLUMNS


def test_hidden_versioning_columns_are_in_the_table_map(
    server: MariaDBSandbox, applied: Catalog
) -> None:
    """information_schema hides MariaDB's row_start/row_end; the binlog's table map has them."""
    server.execute("INSERT INTO s1.t_ver VALUES (1); INSERT INTO s1.t_nover VALUES (1, 2)")
    files = server.flush_binlogs()
    maps = {}
    with binlogkit.open([str(f) for f in files[:-1]]) as events:
        for event in events:
            if event.type_name == "TABLE_MAP":
                maps[event.table_name] = len(event.column_types)
    for name in ("t_ver", "t_nover"):
        table = applied.table("s1", name)
        assert table is not None and maps[name] == len(table.columns)


def test_show_create_table_gives_the_same_catalog(server: MariaDBSandbox, applied: Catalog) -> None:
    script = []
    for database in DATABASES:
        script.append(str(server.query(f"SHOW CREATE DATABASE `{database}`")[0][1]) + ";")
        for (table,) in server.query(
            "SELECT TABLE_NAME FROM information_schema.TABLES"
            f" WHERE TABLE_SCHEMA = '{database}' AND TABLE_TYPE != 'VIEW'"
            " AND TABLE_NAME != 't_ctas'"
        ):
            shown = server.query(
                f"SHOW CREATE TABLE `{database}`.`{str(table).replace('`', '``')}`"
            )
            script.append(f"USE `{database}`;\n{shown[0][1]};")
    result = apply_script(Catalog(), "\n".join(script), _session(server))
    assert not result.warnings
    _assert_same(result.catalog, _in_utf8mb3(applied))
    assert result.catalog == _in_utf8mb3(applied)


@pytest.mark.skipif(shutil.which("mariadb-dump") is None, reason="mariadb-dump not installed")
def test_mariadb_dump_gives_the_same_catalog(server: MariaDBSandbox, applied: Catalog) -> None:
    dump = subprocess.run(
        [
            "mariadb-dump",
            "--no-defaults",
            f"--socket={server.socket}",
            "--user=root",
            "--no-data",
            "--routines",
            "--triggers",
            "--databases",
            *DATABASES,
        ],
        capture_output=True,
        check=True,
    ).stdout.decode()
    assert "DELIMITER ;;" in dump
    result = apply_script(Catalog(), dump, _session(server))
    assert not result.warnings
    _assert_same(result.catalog.without_table("s1", "t_ctas"), _in_utf8mb3(applied))


IMPLICIT_TIMESTAMPS = """CREATE DATABASE s1; USE s1;
CREATE TABLE t (id INT PRIMARY KEY, a TIMESTAMP(3), b TIMESTAMP, c TIMESTAMP NULL);
CREATE TABLE u (id INT PRIMARY KEY, c TIMESTAMP NULL, a TIMESTAMP DEFAULT '2000-01-01',
  b TIMESTAMP);
CREATE TABLE v (id INT PRIMARY KEY);
ALTER TABLE v ADD COLUMN a TIMESTAMP(2), ADD COLUMN b TIMESTAMP(1);
CREATE TABLE w (id INT PRIMARY KEY, x TIMESTAMP NULL);
ALTER TABLE w ADD COLUMN a TIMESTAMP;
"""


def test_timestamps_without_explicit_defaults_get_the_servers_defaults(
    mariadb_factory: Callable[..., MariaDBSandbox],
) -> None:
    """explicit_defaults_for_timestamp=OFF: the first TIMESTAMP column, NOT NULL without
    DEFAULT, defaults to CURRENT_TIMESTAMP; the others to the zero timestamp."""
    server = mariadb_factory("implicit-ts", explicit_defaults_for_timestamp="OFF")
    server.execute(IMPLICIT_TIMESTAMPS)
    applied = apply_script(Catalog(), IMPLICIT_TIMESTAMPS, _session(server)).catalog
    _assert_same(applied, server_catalog(server))
    t = applied.table("s1", "t")
    assert t is not None and [c.default for c in t.columns[1:]] == [
        "current_timestamp(3)", "'0000-00-00 00:00:00'", None
    ]  # fmt: skip
