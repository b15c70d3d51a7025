"""Schema history pieces: the history file, completion of table maps, CREATE TABLE output."""

from __future__ import annotations

from pathlib import Path

import pytest

from binlogkit.binlog.constants import ColumnType as CT
from binlogkit.binlog.constants import EventType
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.events.query import QueryEvent, QueryStatus
from binlogkit.binlog.events.table_map import OptionalMetadataType as OM
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.binlog.header import EventHeader
from binlogkit.binlog.rows.charsets import collation_id
from binlogkit.binlog.rows.columns import ColumnInfo
from binlogkit.binlog.tables import Table
from binlogkit.errors import BinlogError
from binlogkit.schema import Catalog, Session, TableName, apply_ddl, apply_script
from binlogkit.schema.completion import DefinedTable
from binlogkit.schema.history import SchemaHistory
from binlogkit.schema.render import create_table_sql
from binlogkit.schema.store import HistoryStore, Position

SCRIPT = """CREATE DATABASE d CHARACTER SET latin1; USE d;
CREATE TABLE t (
  id BIGINT UNSIGNED NOT NULL, a DECIMAL(10,2), b VARCHAR(20) CHARACTER SET utf8mb4 COLLATE
  utf8mb4_bin, e ENUM('x','y''s','ü'), s SET('a','b') CHARACTER SET utf8mb4, ts TIMESTAMP(3) NULL,
  bin BINARY(16), j JSON, f FLOAT, d2 DOUBLE(10,3), y YEAR, bt BIT(5), tx TEXT, u UUID,
  g POINT, inv INT INVISIBLE, PRIMARY KEY (id, a)
);
CREATE TABLE k (id INT PRIMARY KEY, name CHAR(3))"""


def catalog() -> Catalog:
    return apply_script(Catalog(), SCRIPT).catalog


def test_create_table_output_gives_the_same_definition_back() -> None:
    for table in catalog().tables():
        again = apply_ddl(Catalog(), create_table_sql(table), Session()).catalog
        assert again.table(table.db, table.name) == table


def test_history_file_replays_versions_by_position(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.jsonl")
    first = catalog()
    store.record(Position("bin.000009", 400), Catalog(), first)
    altered = apply_ddl(first, "ALTER TABLE d.k ADD c INT", Session()).catalog
    store.record(Position("bin.000010", 120, "0-1-7"), first, altered)
    dropped = apply_ddl(altered, "DROP TABLE d.t", Session()).catalog
    store.record(Position("bin.000010", 900), altered, dropped)
    assert store.catalog_at(Position("bin.000009", 399)).table("d", "t") is None
    assert store.catalog_at(Position("bin.000009", 400)).table("d", "k") == first.table("d", "k")
    # .000010 sorts after .000009 by number, not by text
    assert store.catalog_at(Position("bin.000010", 500)).table("d", "k") == altered.table("d", "k")
    end = store.catalog_at()
    assert end.table("d", "t") is None and end.table("d", "k") == altered.table("d", "k")
    assert end.database("d") == first.database("d")


def test_history_file_is_appended_once_and_survives_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    store = HistoryStore(path)
    store.record(Position("bin.000001", 500), Catalog(), catalog())
    size = path.stat().st_size
    again = HistoryStore(path)  # a later run reading the same binlog again
    again.record(Position("bin.000001", 500), Catalog(), catalog())
    assert path.stat().st_size == size
    with path.open("a") as f:
        f.write('{"file": "bin.000002", "pos": 4')  # a crash mid-line
    assert HistoryStore(path).catalog_at().table("d", "t") == catalog().table("d", "t")
    path.write_text("not json\n" + path.read_text())
    with pytest.raises(BinlogError, match="line 1"):
        HistoryStore(path).catalog_at()


def _table_map(columns: list[ColumnInfo], optional: list[tuple[int, object]] = ()) -> TableMapEvent:  # type: ignore[assignment]
    header = EventHeader(0, EventType.TABLE_MAP, 1, 0, offset=77, file="bin.000003")
    return TableMapEvent.build(
        header, 5, "d", "k", columns, optional_fields=optional, server_version="10.11.6-MariaDB"
    )


def test_definitions_complete_what_the_map_leaves_out() -> None:
    reports: list[str] = []
    bare = [
        ColumnInfo(0, CT.LONGLONG, CT.LONGLONG, 0, False),
        ColumnInfo(1, CT.STRING, CT.STRING, 0xFE03, True),
    ]
    k = catalog().table("d", "k")
    assert k is not None
    defined = DefinedTable(k, lambda _t, message: reports.append(message))
    tm = _table_map(bare)
    # Two columns in the map, two in the definition, but BIGINT is not INT: not applied.
    assert defined.complete(tm, tm.columns) == tm.columns and "LONGLONG" in reports[0]
    fits = [ColumnInfo(0, CT.LONG, CT.LONG, 0, False), bare[1]]
    tm = _table_map(fits)
    done = defined.complete(tm, tm.columns)
    assert [c.name for c in done] == ["id", "name"] and done[0].primary_key
    assert done[0].unsigned is False and done[1].charset == collation_id("latin1_swedish_ci")
    # A map that names its columns itself wins, and a differing name is reported.
    named = _table_map(fits, [(OM.COLUMN_NAME, ["id", "label"])])
    assert [c.name for c in defined.complete(named, named.columns)] == ["id", "label"]
    assert "name" in reports[-1] and "table map" in reports[-1]


def test_a_completed_map_decodes_names_signedness_members_and_padding() -> None:
    z = apply_ddl(
        Catalog(),
        "CREATE TABLE d.z (u INT UNSIGNED, e ENUM('x', 'ü') CHARACTER SET utf8mb4, b BINARY(4))",
        Session(),
    ).catalog.table("d", "z")
    assert z is not None
    tm = _table_map(
        [
            ColumnInfo(0, CT.LONG, CT.LONG, 0, True),
            ColumnInfo(1, CT.ENUM, CT.STRING, (CT.ENUM << 8) | 1, True),
            ColumnInfo(2, CT.STRING, CT.STRING, (CT.STRING << 8) | 4, True),
        ]
    )
    table = Table(tm, b"", DefinedTable(z, lambda _t, m: pytest.fail(m)))
    row = b"\x00" + b"\xff\xff\xff\xff" + b"\x02" + b"\x02ab"  # NULL bitmap, u, e, b
    changes = table.plan(DecodeOptions()).decode_rows(row, 3, None, b"\x07", False, False)
    assert changes[0].after == {"u": 4294967295, "e": "ü", "b": b"ab\0\0"}
    bare = Table(tm).plan(DecodeOptions()).decode_rows(row, 3, None, b"\x07", False, False)
    assert bare[0].after == {"@1": -1, "@2": 2, "@3": b"ab"}  # what NO_LOG gives alone


def _query(sql: str, db: str = "d", offset: int = 500) -> QueryEvent:
    header = EventHeader(0, EventType.QUERY, 1, 100, offset=offset, file="bin.000004")
    return QueryEvent(header, 1, 0, 0, QueryStatus(), db, sql.encode())


def test_ddl_moves_the_history_on_and_unreadable_ddl_is_warned() -> None:
    history = SchemaHistory(catalog())
    version = history.version
    history.observe(_query("BEGIN"))
    assert history.version == version and not history.warnings
    history.observe(_query("ALTER TABLE k ADD COLUMN c INT FIRST"))
    k = history.catalog.table("d", "k")
    assert history.version == version + 1 and k is not None and k.columns[0].name == "c"
    history.observe(_query("ALTER TABLE k ADD COLUMN x INT GARBAGE ((", offset=700))
    assert history.catalog.is_unknown("d", "k")
    warning = history.warnings[-1]
    assert warning.position == Position("bin.000004", 800) and "GARBAGE" in warning.message


def test_a_live_history_reads_unknown_tables_again() -> None:
    asked = []

    def reread(catalog: Catalog, names: tuple[TableName, ...]) -> Catalog:
        asked.append(names)
        return apply_ddl(catalog, "CREATE TABLE d.k (id INT, x INT)", Session()).catalog

    history = SchemaHistory(catalog(), reread=reread)
    history.observe(_query("ALTER TABLE k ADD COLUMN x INT GARBAGE (("))
    k = history.catalog.table("d", "k")
    assert asked == [(TableName("d", "k"),)] and k is not None
    assert [c.name for c in k.columns] == ["id", "x"]
    assert "again from the server" in history.warnings[-1].message


def test_truncations_are_recorded_and_old_files_still_load(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    old = '{"file": "bin.000001", "pos": 4, "gtid": null, "db": "x", "database": null}\n'
    path.write_text(old)  # a file written before truncations and times were recorded
    history = SchemaHistory(catalog(), path=path, at=Position("bin.000001", 100))
    statements = ["TRUNCATE TABLE d.k", "TRUNCATE no.x", "ALTER TABLE k TRUNCATE PARTITION p1, p2"]
    for i, sql in enumerate(statements):
        header = EventHeader(
            1_700_000_000, EventType.QUERY, 1, 100, offset=200 + i * 100, file="bin.000001"
        )
        query = QueryEvent(header, 1, 0, 0, QueryStatus(hrnow=i), "d", sql.encode())
        history.observe(query)
    store = HistoryStore(path)
    truncations = store.truncations()
    assert [(t.at.pos, t.table, t.partitions) for t in truncations] == [
        (300, TableName("d", "k"), None),
        (500, TableName("d", "k"), ("p1", "p2")),
    ]
    assert truncations[0].at.time_us == 1_700_000_000 * 1_000_000
    assert truncations[1].at.time_us == 1_700_000_000 * 1_000_000 + 2
    assert str(truncations[1].at.time()) == "2023-11-14 22:13:20.000002+00:00"
    assert store.catalog_at() == catalog()  # a truncation changes no definition
    history.observe(query)  # read again (the same files once more): not recorded twice
    assert len(HistoryStore(path).truncations()) == 2
