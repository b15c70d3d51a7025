"""binlogkit.schema: known answers per DDL construct, charset resolution, warnings, copy-on-write.

The expected columns are what MariaDB 10.11 / MySQL store for the statements
(as information_schema shows them); tests/integration/test_schema_live.py
checks the same rules against a real server.
"""

from __future__ import annotations

import pytest

from binlogkit.binlog.constants import Flavor
from binlogkit.schema import (
    Action,
    Catalog,
    ColumnDef,
    DatabaseDef,
    Session,
    TableName,
    apply_ddl,
    apply_script,
    split_statements,
)
from binlogkit.schema.tables import SYSTEM_COLUMNS

S = Session(default_db="d", server_collation="latin1_swedish_ci")


def run(*statements: str, session: Session = S, catalog: Catalog | None = None) -> Catalog:
    catalog = catalog or Catalog()
    for sql in statements:
        result = apply_ddl(catalog, sql, session)
        assert result.warning is None, result.warning
        catalog = result.catalog
    return catalog


def cols(catalog: Catalog, name: str = "t", db: str = "d") -> dict[str, ColumnDef]:
    table = catalog.table(db, name)
    assert table is not None, f"{db}.{name} not in catalog"
    return {c.name: c for c in table.columns}


def col(sql: str, session: Session = S) -> ColumnDef:
    """The one column of ``CREATE TABLE t (<sql>)``."""
    (column,) = cols(run(f"CREATE TABLE t ({sql})", session=session)).values()
    return column


# --- types -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("c INT", ColumnDef("c", "int", length=11)),
        ("c INTEGER UNSIGNED", ColumnDef("c", "int", length=10, unsigned=True)),
        ("c INT4(5) ZEROFILL", ColumnDef("c", "int", length=5, unsigned=True, zerofill=True)),
        ("c MIDDLEINT", ColumnDef("c", "mediumint", length=9)),
        ("c BOOL", ColumnDef("c", "tinyint", length=1)),
        (
            "c SERIAL",
            ColumnDef("c", "bigint", length=20, unsigned=True, nullable=False, auto_increment=True),
        ),
        ("c REAL", ColumnDef("c", "double")),
        ("c DOUBLE PRECISION(7,2)", ColumnDef("c", "double", precision=7, scale=2)),
        ("c FLOAT(30)", ColumnDef("c", "double")),
        ("c FLOAT(10)", ColumnDef("c", "float")),
        ("c NUMERIC", ColumnDef("c", "decimal", precision=10, scale=0)),
        ("c DEC(8)", ColumnDef("c", "decimal", precision=8, scale=0)),
        ("c FIXED(6,2) UNSIGNED", ColumnDef("c", "decimal", precision=6, scale=2, unsigned=True)),
        ("c BIT", ColumnDef("c", "bit", length=1)),
        ("c YEAR", ColumnDef("c", "year", length=4)),
        ("c TIME", ColumnDef("c", "time", fsp=0)),
        ("c DATETIME(6)", ColumnDef("c", "datetime", fsp=6)),
        ("c TIMESTAMP(3) NULL", ColumnDef("c", "timestamp", fsp=3)),
        ("c BINARY", ColumnDef("c", "binary", length=1)),
        ("c VARBINARY(9)", ColumnDef("c", "varbinary", length=9)),
        ("c LONG VARBINARY", ColumnDef("c", "mediumblob")),
        ("c BLOB(300)", ColumnDef("c", "blob")),
        ("c BLOB(70000)", ColumnDef("c", "mediumblob")),
        ("c UUID", ColumnDef("c", "uuid")),
        ("c INET4", ColumnDef("c", "inet4")),
        ("c INET6", ColumnDef("c", "inet6")),
        ("c VECTOR(3)", ColumnDef("c", "vector", length=3)),
        ("c GEOMETRYCOLLECTION", ColumnDef("c", "geometrycollection")),
        ("c POINT NOT NULL", ColumnDef("c", "point", nullable=False)),
        ("c DATE", ColumnDef("c", "date")),
    ],
)
def test_types(sql: str, expected: ColumnDef) -> None:
    assert col(sql) == expected


LATIN1 = {"charset": "latin1", "collation": "latin1_swedish_ci"}


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("c CHAR", ColumnDef("c", "char", length=1, **LATIN1)),
        ("c CHARACTER VARYING(9)", ColumnDef("c", "varchar", length=9, **LATIN1)),
        ("c LONG VARCHAR", ColumnDef("c", "mediumtext", **LATIN1)),
        ("c LONG", ColumnDef("c", "mediumtext", **LATIN1)),
        ("c TEXT(300)", ColumnDef("c", "text", **LATIN1)),
        ("c TEXT(100) CHARACTER SET utf8mb4",
         ColumnDef("c", "text", charset="utf8mb4", collation="utf8mb4_general_ci")),
        ("c TEXT(60) CHARACTER SET utf8mb4",
         ColumnDef("c", "tinytext", charset="utf8mb4", collation="utf8mb4_general_ci")),
        ("c NATIONAL VARCHAR(7)",
         ColumnDef("c", "varchar", length=7, charset="utf8mb3", collation="utf8mb3_general_ci")),
        ("c NCHAR(3)",
         ColumnDef("c", "char", length=3, charset="utf8mb3", collation="utf8mb3_general_ci")),
        ("c CHAR(4) CHARACTER SET binary", ColumnDef("c", "binary", length=4)),
        ("c VARCHAR(4) CHARSET binary", ColumnDef("c", "varbinary", length=4)),
        ("c TEXT CHARACTER SET binary", ColumnDef("c", "blob")),
        ("c VARCHAR(3) BINARY", ColumnDef("c", "varchar", length=3, charset="latin1",
                                           collation="latin1_bin")),
        ("c VARCHAR(3) ASCII", ColumnDef("c", "varchar", length=3, **LATIN1)),
        ("c CHAR(2) UNICODE", ColumnDef("c", "char", length=2, charset="ucs2",
                                         collation="ucs2_general_ci")),
        ("c VARCHAR(5) CHARACTER SET utf8 COLLATE utf8_bin",
         ColumnDef("c", "varchar", length=5, charset="utf8mb3", collation="utf8mb3_bin")),
        ("c VARCHAR(5) COLLATE utf8mb4_unicode_ci",
         ColumnDef("c", "varchar", length=5, charset="utf8mb4", collation="utf8mb4_unicode_ci")),
        ("c VARCHAR(5) DEFAULT 'x' COLLATE latin1_bin",
         ColumnDef("c", "varchar", length=5, charset="latin1", collation="latin1_bin",
                   default="'x'")),
        ("c JSON", ColumnDef("c", "longtext", charset="utf8mb4", collation="utf8mb4_bin")),
    ],
)  # fmt: skip
def test_text_types_and_charsets(sql: str, expected: ColumnDef) -> None:
    assert col(sql) == expected


def test_mysql_flavour() -> None:
    mysql = Session(default_db="d", flavor=Flavor.MYSQL, version=(8, 0, 40))
    assert col("c JSON", mysql) == ColumnDef("c", "json")
    assert col("c INT", mysql) == ColumnDef("c", "int")
    assert col("c TINYINT(1)", mysql) == ColumnDef("c", "tinyint", length=1)
    assert col("c INT ZEROFILL", mysql).length == 10
    assert col("c VARCHAR(2) CHARACTER SET utf8mb4", mysql).collation == "utf8mb4_0900_ai_ci"
    assert col("c GEOMETRYCOLLECTION", mysql).type == "geomcollection"
    old = Session(default_db="d", flavor=Flavor.MYSQL, version=(5, 7, 44))
    assert col("c INT", old).length == 11


# --- charset resolution order ------------------------------------------------------------


def test_charset_resolution_order() -> None:
    catalog = run(
        "CREATE DATABASE d2 CHARACTER SET utf8mb4",
        "CREATE DATABASE d3 COLLATE cp1251_bin",
        "CREATE TABLE d2.t (a CHAR(1), b CHAR(1) CHARACTER SET latin2)",
        "CREATE TABLE d2.u (a CHAR(1)) DEFAULT CHARSET = koi8r",
        "CREATE TABLE d2.v (a CHAR(1)) COLLATE = koi8r_bin",
        "CREATE TABLE d3.t (a CHAR(1))",
        "CREATE TABLE nodb.t (a CHAR(1))",  # a database the catalog never saw: the server's
    )
    assert catalog.database("d2") == DatabaseDef("d2", "utf8mb4", "utf8mb4_general_ci")
    assert catalog.database("d3") == DatabaseDef("d3", "cp1251", "cp1251_bin")
    assert cols(catalog, "t", "d2")["a"].collation == "utf8mb4_general_ci"  # database
    assert cols(catalog, "t", "d2")["b"].collation == "latin2_general_ci"  # column
    assert cols(catalog, "u", "d2")["a"].collation == "koi8r_general_ci"  # table charset
    assert cols(catalog, "v", "d2")["a"].collation == "koi8r_bin"  # table collation
    assert cols(catalog, "t", "d3")["a"].collation == "cp1251_bin"
    assert cols(catalog, "t", "nodb")["a"].collation == "latin1_swedish_ci"  # server
    overrides = Session(default_db="d", charset_collations={"utf8mb4": "utf8mb4_uca1400_ai_ci"})
    assert col("c CHAR(1) CHARACTER SET utf8mb4", overrides).collation == "utf8mb4_uca1400_ai_ci"
    assert col("c CHAR(1) COLLATE uca1400_ai_ci", overrides).collation == "latin1_uca1400_ai_ci"


# --- ENUM / SET --------------------------------------------------------------------------


def test_enum_values_quotes_escapes_unicode() -> None:
    column = col(
        r"e ENUM('a''b', 'c\'d', 'tab\there', 'back\\slash', 'trail   ', 'ü', '日本', '😀', "
        r"_utf8mb4'intro', 'con' 'cat') CHARACTER SET utf8mb4 NOT NULL"
    )
    assert column.values == (
        "a'b", "c'd", "tab\there", "back\\slash", "trail", "ü", "日本", "😀", "intro", "concat"
    )  # fmt: skip
    assert (column.charset, column.nullable) == ("utf8mb4", False)


def test_set_with_charset_and_no_backslash_escapes() -> None:
    column = col("s SET('x','y') CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
    assert (column.type, column.values, column.collation) == ("set", ("x", "y"), "utf8mb4_bin")
    plain = Session(default_db="d", sql_mode=1 << 20)
    assert col(r"e ENUM('a\b')", plain).values == ("a\\b",)


def test_ansi_quotes() -> None:
    ansi = Session(default_db="d", sql_mode=1 << 2)
    assert col('"my col" INT', ansi).name == "my col"


# --- attributes --------------------------------------------------------------------------


def test_attributes_skipped_and_read() -> None:
    c = cols(
        run(
            "CREATE TABLE t (id INT KEY, ts TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)"
            " ON UPDATE CURRENT_TIMESTAMP(3) COMMENT 'x', v INT AS (id + 1) VIRTUAL,"
            " s INT GENERATED ALWAYS AS (id * 2) STORED, p INT AS (id) PERSISTENT,"
            " b BLOB COMPRESSED, k INT CHECK (k > 0), r INT REFERENCES x (y) ON DELETE SET NULL,"
            " iv INT INVISIBLE, ai BIGINT AUTO_INCREMENT UNIQUE, sv INT SERIAL DEFAULT VALUE,"
            " g POINT SRID 4326, g2 POINT REF_SYSTEM_ID=4326, w INT WITHOUT SYSTEM VERSIONING,"
            " cf INT COLUMN_FORMAT FIXED STORAGE DISK)"
        )
    )
    assert not c["id"].nullable and not c["ts"].nullable
    assert (c["v"].generated, c["s"].generated, c["p"].generated) == ("VIRTUAL", "STORED", "STORED")
    assert c["iv"].invisible and not c["k"].invisible
    assert not c["ai"].nullable and not c["sv"].nullable
    assert c["b"].type == "blob"


def test_timestamps_without_explicit_defaults_are_not_null() -> None:
    old = Session(default_db="d", explicit_defaults_for_timestamp=False)
    assert not col("ts TIMESTAMP", old).nullable
    assert col("ts TIMESTAMP NULL", old).nullable
    assert col("ts TIMESTAMP", S).nullable


def test_primary_keys() -> None:
    catalog = run(
        "CREATE TABLE t (a INT, b VARCHAR(9),"
        " CONSTRAINT pk PRIMARY KEY USING BTREE (b(3), A DESC))",
        "CREATE TABLE u (a INT, UNIQUE KEY (a), KEY k (a))",
    )
    table = catalog.table("d", "t")
    assert table is not None and table.primary_key == ("b", "a")
    assert not any(c.nullable for c in table.columns)
    assert catalog.table("d", "u").primary_key == ()  # type: ignore[union-attr]


# --- CREATE forms ------------------------------------------------------------------------


def test_create_like_replace_if_not_exists_temporary() -> None:
    catalog = run(
        "CREATE TABLE t (a INT PRIMARY KEY)",
        "CREATE TABLE t2 LIKE t",
        "CREATE TABLE t3 (LIKE t)",
        "CREATE OR REPLACE TABLE t3 (z INT)",
        "CREATE TABLE IF NOT EXISTS t3 (ignored INT)",
        "CREATE TEMPORARY TABLE t (x INT)",
    )
    assert catalog.table("d", "t2").primary_key == ("a",)  # type: ignore[union-attr]
    assert list(cols(catalog, "t3")) == ["z"]
    assert list(cols(catalog, "t")) == ["a"]


def test_versioned_comments() -> None:
    sql = (
        "CREATE TABLE t (a INT /*!50100 , b INT */ /*!99999 , c INT */ /*M!100100 , d INT */"
        " /*!50700 , e INT */ /*M!999999 , f INT */) /*!40100 DEFAULT CHARSET=utf8mb4 */"
    )
    mariadb = Session(default_db="d", version=(10, 11, 6))
    assert list(cols(run(sql, session=mariadb))) == ["a", "b", "d"]
    mysql = Session(default_db="d", flavor=Flavor.MYSQL, version=(8, 0, 40))
    assert list(cols(run(sql, session=mysql))) == ["a", "b", "e"]
    assert run(sql).table("d", "t").charset == "utf8mb4"  # type: ignore[union-attr]


def test_comments_quoted_and_unicode_names() -> None:
    catalog = run(
        "/* lead */ CREATE TABLE `d`.`tä名 x` ( -- line\n `col ü` INT, # hash\n `a``b` INT,"
        " `select` INT, date DATE, Status INT)"
    )
    assert list(cols(catalog, "tä名 x")) == ["col ü", "a`b", "select", "date", "Status"]


def test_create_sequence() -> None:
    table = run("CREATE SEQUENCE s START WITH 5").table("d", "s")
    assert table is not None and len(table.columns) == 8
    assert table.columns[5] == ColumnDef("cache_size", "bigint", 21, unsigned=True, nullable=False)


def test_system_versioning_columns() -> None:
    catalog = run(
        "CREATE TABLE t (id INT PRIMARY KEY) WITH SYSTEM VERSIONING",
        "CREATE TABLE u (id INT)",
        "ALTER TABLE u ADD SYSTEM VERSIONING",
    )
    assert cols(catalog)["row_end"] == SYSTEM_COLUMNS[1]
    assert tuple(cols(catalog, "u").values())[1:] == SYSTEM_COLUMNS
    catalog = run("ALTER TABLE u DROP SYSTEM VERSIONING", catalog=catalog)
    assert list(cols(catalog, "u")) == ["id"]


# --- ALTER TABLE -------------------------------------------------------------------------


def test_alter_several_clauses() -> None:
    catalog = run(
        "CREATE TABLE t (a INT, b VARCHAR(5), c CHAR(2), d INT)",
        "ALTER TABLE t ADD COLUMN IF NOT EXISTS a INT, ADD x INT FIRST, ADD y INT AFTER b,"
        " ADD COLUMN (p INT, q INT), DROP COLUMN IF EXISTS nope, DROP d,"
        " CHANGE COLUMN b bb TEXT NOT NULL, MODIFY c ENUM('k') AFTER x, RENAME COLUMN q TO qq,"
        " ALGORITHM=INPLACE, LOCK=NONE, ENGINE=InnoDB",
    )
    c = cols(catalog)
    assert list(c) == ["x", "c", "a", "bb", "y", "p", "qq"]
    assert (c["bb"].type, c["bb"].nullable, c["c"].values) == ("text", False, ("k",))


def test_alter_type_charset_and_members() -> None:
    catalog = run(
        "CREATE TABLE t (e ENUM('a','b'), s VARCHAR(3) CHARACTER SET utf8mb4) CHARSET=latin1",
        "ALTER TABLE t MODIFY e ENUM('a','b','c') CHARACTER SET utf8mb4, MODIFY s VARCHAR(3)",
    )
    c = cols(catalog)
    assert c["e"].values == ("a", "b", "c") and c["e"].charset == "utf8mb4"
    assert c["s"].charset == "latin1"  # MODIFY without a charset takes the table's
    catalog = run("ALTER TABLE t DEFAULT CHARSET utf8mb4, ADD n CHAR(1)", catalog=catalog)
    assert cols(catalog)["n"].charset == "utf8mb4" and cols(catalog)["s"].charset == "latin1"


def test_convert_to_character_set_widens_text() -> None:
    catalog = run(
        "CREATE TABLE t (a TINYTEXT, b TEXT, c VARCHAR(20000), d INT, e BLOB) CHARSET latin1",
        "ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4",
    )
    c = cols(catalog)
    assert [c[k].type for k in "abcde"] == ["text", "mediumtext", "mediumtext", "int", "blob"]
    assert c["a"].collation == "utf8mb4_general_ci" and c["d"].charset is None
    assert catalog.table("d", "t").collation == "utf8mb4_general_ci"  # type: ignore[union-attr]


def test_primary_key_changes() -> None:
    catalog = run(
        "CREATE TABLE t (a INT, b INT, c INT, PRIMARY KEY (a))",
        "ALTER TABLE t DROP PRIMARY KEY, ADD CONSTRAINT pk PRIMARY KEY (b, c)",
    )
    assert catalog.table("d", "t").primary_key == ("b", "c")  # type: ignore[union-attr]
    assert not cols(catalog)["c"].nullable and cols(catalog)["a"].nullable is False
    catalog = run(
        "CREATE UNIQUE INDEX u ON t (a)",
        "ALTER TABLE t ADD UNIQUE KEY (c), CHANGE b bee INT",
        catalog=catalog,
    )
    assert catalog.table("d", "t").primary_key == ("bee", "c")  # type: ignore[union-attr]
    catalog = run("ALTER TABLE t DROP COLUMN bee", catalog=catalog)
    assert catalog.table("d", "t").primary_key == ("c",)  # type: ignore[union-attr]
    catalog = run("DROP INDEX `PRIMARY` ON t", catalog=catalog)
    assert catalog.table("d", "t").primary_key == ()  # type: ignore[union-attr]


def test_renames() -> None:
    catalog = run(
        "CREATE TABLE a (x INT)",
        "CREATE TABLE c (y INT)",
        "RENAME TABLE a TO b, c TO d2.e",
        "ALTER TABLE b RENAME TO f, ADD z INT",
    )
    result = apply_ddl(catalog, "ALTER TABLE f RENAME AS g", S)
    assert result.renamed == ((TableName("d", "f"), TableName("d", "g")),)
    assert list(cols(result.catalog, "g")) == ["x", "z"]
    assert list(cols(catalog, "e", "d2")) == ["y"]
    assert catalog.table("d", "a") is None


def test_drop_truncate_and_databases() -> None:
    catalog = run("CREATE TABLE a (x INT)", "CREATE TABLE b (x INT)", "CREATE TABLE e.c (x INT)")
    result = apply_ddl(catalog, "DROP TABLE IF EXISTS a, b, nope /* generated by server */", S)
    assert result.dropped == (TableName("d", "a"), TableName("d", "b"))
    assert apply_ddl(catalog, "TRUNCATE TABLE a", S).catalog is catalog
    result = apply_ddl(catalog, "DROP SCHEMA e", S)
    assert result.dropped == (TableName("e", "c"),) and result.catalog.database("e") is None
    result = apply_ddl(catalog, "ALTER DATABASE e COLLATE utf8mb4_bin", S)
    assert result.catalog.database("e") == DatabaseDef("e", "utf8mb4", "utf8mb4_bin")
    assert result.databases == ("e",)


# --- not DDL, other DDL, warnings, unknown tables ----------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "BEGIN",
        "COMMIT",
        "SAVEPOINT `a`",
        "SET @@session.sql_mode=0",
        "GRANT ALL ON *.* TO 'x'@'%'",
        "INSERT INTO t VALUES (1)",
        "XA START X'78',X'',1",
        "/*!40101 SET NAMES utf8 */",
        "FLUSH PRIVILEGES",
    ],
)
def test_not_ddl(sql: str) -> None:
    catalog = run("CREATE TABLE t (a INT)")
    result = apply_ddl(catalog, sql, S)
    assert (result.is_ddl, result.warning, result.catalog) == (False, None, catalog)


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`%` SQL SECURITY DEFINER VIEW v AS SELECT 1",
         "CREATE VIEW"),
        ("CREATE DEFINER=`root`@`localhost` PROCEDURE p() BEGIN SELECT 1; SELECT 2; END",
         "CREATE PROCEDURE"),
        ("CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1", "CREATE TRIGGER"),
        ("CREATE UNIQUE INDEX i ON t (a)", "CREATE INDEX"),
        ("CREATE USER 'u'@'%' IDENTIFIED BY 'x'", "CREATE USER"),
        ("DROP EVENT IF EXISTS e", "DROP EVENT"),
        ("ALTER USER 'u'@'%' IDENTIFIED BY 'y'", "ALTER USER"),
        ("DROP VIEW v1, v2", "DROP VIEW"),
    ],
)  # fmt: skip
def test_ddl_that_holds_no_columns(sql: str, kind: str) -> None:
    catalog = run("CREATE TABLE t (a INT)")
    result = apply_ddl(catalog, sql, S)
    assert (result.kind, result.is_ddl, result.warning) == (kind, True, None)
    assert result.catalog is catalog


@pytest.mark.parametrize(
    ("sql", "unknown"),
    [
        ("ALTER TABLE t ADD COLUMN q GARBAGE TYPE", ["t"]),
        ("CREATE TABLE u (((", ["u"]),
        ("ALTER TABLE t DROP COLUMN nope", ["t"]),
        ("ALTER TABLE t CHANGE nope x INT", ["t"]),
        ("ALTER TABLE t ADD COLUMN a INT", ["t"]),
        ("CREATE TABLE u SELECT * FROM t", ["u"]),
        ("CREATE TABLE u (a INT, A INT)", ["u"]),
        ("RENAME TABLE t TO", ["t"]),
        ("CREATE TABLE", []),
        ("ALTER TABLE t ADD PRIMARY KEY (nope)", ["t"]),
    ],
)
def test_warnings_mark_tables_unknown(sql: str, unknown: list[str]) -> None:
    catalog = run("CREATE TABLE t (a INT)")
    result = apply_ddl(catalog, sql, S)
    assert result.warning is not None and result.warning.reason
    assert result.warning.statement == " ".join(sql.split())
    assert result.unknown == tuple(TableName("d", n) for n in unknown)
    for name in unknown:
        assert result.catalog.is_unknown("d", name) and result.catalog.table("d", name) is None
    if unknown:  # a later CREATE TABLE makes it known again
        known = run(f"CREATE OR REPLACE TABLE {unknown[0]} (z INT)", catalog=result.catalog)
        assert not known.is_unknown("d", unknown[0]) and cols(known, unknown[0])


def test_long_statements_are_shortened_in_warnings() -> None:
    sql = "ALTER TABLE t ADD COLUMN q GARBAGE " + "x " * 300
    warning = apply_ddl(run("CREATE TABLE t (a INT)"), sql, S).warning
    assert warning is not None and len(warning.statement) == 200
    assert warning.statement.endswith("...")


def test_alter_of_a_table_never_seen_marks_it_unknown() -> None:
    result = apply_ddl(Catalog(), "ALTER TABLE t ADD COLUMN b INT", S)
    assert result.warning is None and result.unknown == (TableName("d", "t"),)
    result = apply_ddl(result.catalog, "ALTER TABLE t RENAME TO u", S)
    assert result.catalog.is_unknown("d", "u") and not result.catalog.is_unknown("d", "t")
    assert apply_ddl(Catalog(), "ALTER TABLE IF EXISTS t ENGINE=x", S).changes == ()


def test_no_default_database() -> None:
    result = apply_ddl(Catalog(), "CREATE TABLE t (a INT)", Session())
    assert result.warning is not None and "no database" in result.warning.reason


# --- the catalog -------------------------------------------------------------------------


def test_copy_on_write() -> None:
    before = run("CREATE TABLE t (a INT)", "CREATE TABLE e.u (b INT)")
    untouched = before.table("e", "u")
    after = run("ALTER TABLE t ADD c INT", "DROP TABLE e.u", catalog=before)
    assert list(cols(before)) == ["a"] and before.table("e", "u") is untouched
    assert list(cols(after)) == ["a", "c"] and after.table("e", "u") is None
    assert run("CREATE TABLE x (a INT)", catalog=before).table("e", "u") is untouched


def test_name_rules() -> None:
    catalog = run("CREATE TABLE T (Col INT)", "ALTER TABLE T MODIFY COL BIGINT")
    assert catalog.table("d", "t") is None
    assert catalog.table("d", "T").column("cOL").type == "bigint"  # type: ignore[union-attr]
    lower = run("CREATE TABLE T (a INT)", catalog=Catalog(lower_case_table_names=1))
    assert lower.table("D", "t") is not None and lower.table("d", "T").name == "t"  # type: ignore[union-attr]
    mixed = run("CREATE TABLE T (a INT)", catalog=Catalog(lower_case_table_names=2))
    assert mixed.table("d", "t").name == "T"  # type: ignore[union-attr]


def test_result_lists_changes() -> None:
    result = apply_ddl(Catalog(), "CREATE TABLE t (a INT)", S)
    assert [c.action for c in result.changes] == [Action.CREATED]
    assert result.created == (result.catalog.table("d", "t"),)


# --- scripts -----------------------------------------------------------------------------

DUMP = r"""
/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET NAMES utf8mb4 */;
-- comment; with a semicolon
CREATE DATABASE /*!32312 IF NOT EXISTS*/ `db` /*!40100 DEFAULT CHARACTER SET latin1 */;
USE `db`;
DROP TABLE IF EXISTS `t`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
CREATE TABLE `t` (
  `a` int(11) NOT NULL,
  `s` varchar(10) DEFAULT 'x;y',
  PRIMARY KEY (`a`)
) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci;
DELIMITER ;;
/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`localhost`*/ /*!50003 TRIGGER tr BEFORE INSERT ON t
FOR EACH ROW BEGIN SET NEW.a = 1; SET NEW.s = 'q'; END */;;
DELIMITER ;
/*!40101 SET character_set_client = @saved_cs_client */;
"""


def test_split_statements() -> None:
    statements = list(split_statements(DUMP))
    assert statements[2].endswith(
        "\nCREATE DATABASE /*!32312 IF NOT EXISTS*/ `db` /*!40100 DEFAULT CHARACTER SET latin1 */"
    )
    assert statements[7].startswith("/*!50003 CREATE*/") and statements[7].endswith("END */")
    assert len(statements) == 9


def test_apply_script() -> None:
    result = apply_script(Catalog(), DUMP, Session(server_collation="utf8mb4_general_ci"))
    assert not result.warnings and result.session.default_db == "db"
    table = result.catalog.table("db", "t")
    assert table is not None and table.primary_key == ("a",)
    assert cols(result.catalog, "t", "db")["s"].charset == "latin1"
    assert [r.kind for r in result.results if r.is_ddl] == [
        "CREATE DATABASE", "DROP TABLE", "CREATE TABLE", "CREATE TRIGGER"
    ]  # fmt: skip


def test_partitioning_is_skipped_and_use_selects() -> None:
    catalog = run(
        "CREATE TABLE p (id INT NOT NULL, k INT, PRIMARY KEY (id)) PARTITION BY RANGE (id)"
        " (PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN MAXVALUE)",
        "ALTER TABLE p ADD COLUMN z INT PARTITION BY HASH (id) PARTITIONS 2",
        "ALTER TABLE p ADD PARTITION (PARTITION p9 VALUES LESS THAN (99)), REMOVE PARTITIONING",
    )
    assert list(cols(catalog, "p")) == ["id", "k", "z"]
    assert apply_ddl(catalog, "USE `other db`", S).default_db == "other db"


# --- defaults (as MariaDB 10.11's information_schema.COLUMNS.COLUMN_DEFAULT shows them) ----


@pytest.mark.parametrize(
    ("sql", "stored"),
    [
        ("c INT DEFAULT 5", "5"),
        ("c INT DEFAULT '7'", "7"),
        ("c INT DEFAULT -0", "0"),
        ("c INT DEFAULT 0x10", "16"),
        ("c INT DEFAULT TRUE", "1"),
        ("c INT DEFAULT (5)", "5"),
        ("c INT DEFAULT NULL", None),
        ("c INT", None),
        ("c INT NOT NULL", None),
        ("c INT NOT NULL AUTO_INCREMENT KEY", None),
        ("c BIGINT UNSIGNED DEFAULT 18446744073709551615", "18446744073709551615"),
        ("c DECIMAL(6,2) DEFAULT 1.5", "1.50"),
        ("c DECIMAL(40,5) DEFAULT -12.3", "-12.30000"),
        ("c FLOAT DEFAULT 1.1", "1.1"),
        ("c DOUBLE DEFAULT 1e10", "10000000000"),
        ("c FLOAT NOT NULL DEFAULT 3", "3"),
        ("c YEAR DEFAULT 99", "1999"),
        ("c BIT(5) DEFAULT b'101'", "b'101'"),
        ("c BIT(8) DEFAULT 65", "b'1000001'"),
        (r"c VARCHAR(10) DEFAULT 'a''b\\c\n'", r"'a''b\\c\n'"),
        (r"c VARCHAR(10) DEFAULT 'a\'b\0\r\Z'", "'a''b\\0\\r\x1a'"),
        ("c VARCHAR(5) DEFAULT 'tab\t'", "'tab\t'"),
        ("c VARCHAR(5) DEFAULT _utf8mb4'é'", "'é'"),
        ("c TEXT DEFAULT 'tx'", "'tx'"),
        ("c VARBINARY(4) DEFAULT 0x4142", "'AB'"),
        ("c BINARY(3) DEFAULT 'ab'", r"'ab\0'"),
        ("c ENUM('x','y') DEFAULT 'y'", "'y'"),
        ("c ENUM('x','y') DEFAULT 'Y'", "'y'"),
        ("c SET('a','b') DEFAULT 'b,a'", "'a,b'"),
        ("c DATE DEFAULT '2020-1-2'", "'2020-01-02'"),
        ("c DATE DEFAULT 20200102", "'2020-01-02'"),
        ("c DATETIME(6) DEFAULT '2000-01-01'", "'2000-01-01 00:00:00.000000'"),
        ("c TIMESTAMP NULL DEFAULT '2001-02-03 04:05:06'", "'2001-02-03 04:05:06'"),
        ("c TIME(2) DEFAULT '1:2:3'", "'01:02:03.00'"),
        ("c TIME DEFAULT '-838:59:59'", "'-838:59:59'"),
        ("c TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)", "current_timestamp(3)"),
        ("c TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP", "current_timestamp()"),
        ("c DATETIME DEFAULT NOW()", "current_timestamp()"),
        ("c DATETIME(6) DEFAULT NOW(6)", "current_timestamp(6)"),
        ("c DATETIME DEFAULT LOCALTIMESTAMP", "current_timestamp()"),
        ("c CHAR(36) DEFAULT (UUID())", "uuid()"),
        ("c DOUBLE DEFAULT RAND()", "rand()"),
        ("c INT DEFAULT (1+2)", "(1 + 2)"),
        ("c VARCHAR(8) DEFAULT CONCAT('a','b')", "concat('a','b')"),
        ("c INT AS (1) VIRTUAL", None),
    ],
)
def test_defaults_are_kept_as_the_server_stores_them(sql: str, stored: str | None) -> None:
    column = col(sql)
    assert column.default == stored
    # what SHOW CREATE TABLE shows (the stored form) reads back the same
    shown = col(f"c {sql.split(' ', 1)[1].split(' DEFAULT')[0]} DEFAULT {stored}")
    assert stored is None or shown.default == stored


def test_alter_column_sets_and_drops_a_default() -> None:
    catalog = run("CREATE TABLE t (a INT, b DATETIME(3) NOT NULL DEFAULT '2020-01-01')")
    catalog = run("ALTER TABLE t ALTER a SET DEFAULT '42', ALTER COLUMN b DROP DEFAULT",
                  catalog=catalog)  # fmt: skip
    assert cols(catalog)["a"].default == "42" and cols(catalog)["b"].default is None
    catalog = run("ALTER TABLE t MODIFY a INT NOT NULL DEFAULT 1", catalog=catalog)
    assert cols(catalog)["a"].default == "1"
