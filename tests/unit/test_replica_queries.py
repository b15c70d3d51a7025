"""The set-up queries replicas send, answered as a primary answers them."""

from __future__ import annotations

import pytest

from binlogkit.protocol.replica_queries import (
    QueryError,
    QueryOk,
    ResultSet,
    ServedBinlog,
    answer_query,
)

MARIADB = {
    "version": "5.5.5-10.11.19-MariaDB-log",
    "server_id": "77",
    "binlog_checksum": "CRC32",
    "gtid_domain_id": "0",
    "gtid_binlog_pos": "0-1-114",
}
BINLOGS = [ServedBinlog("mysql-bin.000001", 147308), ServedBinlog("mysql-bin.000002", 342)]


def ask(sql: str, session: dict[str, str | None] | None = None, **options: object) -> object:
    settings: dict[str, object] = {
        "variables": MARIADB,
        "session": {} if session is None else session,
        "binlogs": BINLOGS,
        "now": 1_800_000_000.5,
        "flavor": "mariadb",
    }
    return answer_query(sql, **(settings | options))  # type: ignore[arg-type]


def test_what_a_mariadb_replica_asks_in_order() -> None:
    """The queries a MariaDB 10.11 replica sent (logged from a real one), answered."""
    session: dict[str, str | None] = {}
    assert ask("SELECT UNIX_TIMESTAMP()", session) == ResultSet(
        ("UNIX_TIMESTAMP()",), (("1800000000",),)
    )
    assert ask("SHOW VARIABLES LIKE 'SERVER_ID'", session) == ResultSet(
        ("Variable_name", "Value"), (("server_id", "77"),)
    )
    assert ask("SET @master_heartbeat_period= 30000001024", session) == QueryOk()
    assert ask("SET @master_binlog_checksum= @@global.binlog_checksum", session) == QueryOk()
    assert ask("SELECT @master_binlog_checksum", session) == ResultSet(
        ("@master_binlog_checksum",), (("CRC32",),)
    )
    assert ask("SET @mariadb_slave_capability=4", session) == QueryOk()
    assert ask("SELECT @@GLOBAL.gtid_domain_id", session) == ResultSet(
        ("@@GLOBAL.gtid_domain_id",), (("0",),)
    )
    assert ask("SET @slave_connect_state='0-1-100'", session) == QueryOk()
    assert session == {
        "master_heartbeat_period": "30000001024",
        "master_binlog_checksum": "CRC32",
        "mariadb_slave_capability": "4",
        "slave_connect_state": "0-1-100",
    }


def test_several_assignments_and_quotes() -> None:
    session: dict[str, str | None] = {}
    ok = ask("SET @a = 'x,''y''', @b := 12, @@session.sql_mode = '', NAMES_OK = 1", session)
    assert ok == QueryOk() and session == {"a": "x,'y'", "b": "12"}
    got = ask("SELECT @a AS first, @missing, 'lit', 3.5, NULL", session)
    assert got == ResultSet(
        ("first", "@missing", "'lit'", "3.5", "NULL"), (("x,'y'", None, "lit", "3.5", None),)
    )


def test_functions_get_their_evaluated_arguments() -> None:
    calls = []

    def gtid_pos(name: str | None, pos: str | None) -> str:
        calls.append((name, pos))
        return "0-1-7"

    got = ask(
        "SELECT binlog_gtid_pos('mysql-bin.000001', 4)", functions={"BINLOG_GTID_POS": gtid_pos}
    )
    assert got == ResultSet(("binlog_gtid_pos('mysql-bin.000001', 4)",), (("0-1-7",),))
    assert calls == [("mysql-bin.000001", "4")]


def test_show_binary_logs_and_status() -> None:
    assert ask("SHOW BINARY LOGS") == ResultSet(
        ("Log_name", "File_size"), (("mysql-bin.000001", "147308"), ("mysql-bin.000002", "342"))
    )
    status = ask("show master status")
    assert isinstance(status, ResultSet) and status.rows == (("mysql-bin.000002", "342", "", ""),)


def test_mysql_8_4_knows_only_binary_log_status() -> None:
    mysql = {"version": "8.4.3", "gtid_executed": "uuid:1-5"}
    error = ask("SHOW MASTER STATUS", variables=mysql, flavor="mysql")
    assert isinstance(error, QueryError) and (error.code, error.sql_state) == (1064, "42000")
    assert "MySQL server version" in error.message
    status = ask("SHOW BINARY LOG STATUS", variables=mysql, flavor="mysql")
    assert isinstance(status, ResultSet) and status.columns[-1] == "Executed_Gtid_Set"
    assert status.rows[0][-1] == "uuid:1-5"
    binlogs = ask("SHOW BINARY LOGS", variables=mysql, flavor="mysql")
    assert isinstance(binlogs, ResultSet) and binlogs.columns[-1] == "Encrypted"


@pytest.mark.parametrize(
    ("sql", "code"),
    [
        ("SELECT @@no_such_variable", 1193),
        ("SELECT @@global.no_such", 1193),
        ("SELECT some_function(1)", 1064),
        ("DROP TABLE t", 1064),
        ("SET @x", 1064),
        ("", 1064),
    ],
)
def test_what_it_does_not_know_is_a_server_error(sql: str, code: int) -> None:
    error = ask(sql)
    assert isinstance(error, QueryError) and error.code == code
    if code == 1193:
        assert error.message.startswith("Unknown system variable 'no_such")
    else:
        assert "MariaDB server version" in error.message


def test_show_variables_like_is_a_like_pattern() -> None:
    got = ask("SHOW GLOBAL VARIABLES LIKE 'gtid\\_%'")
    assert isinstance(got, ResultSet)
    assert [r[0] for r in got.rows] == ["gtid_binlog_pos", "gtid_domain_id"]
    every = ask("SHOW VARIABLES")
    assert isinstance(every, ResultSet) and len(every.rows) == len(MARIADB)
