"""How a table definition's change becomes column changes of its Delta tables (no Spark
session), and the table versions a schema history file gives."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("delta")

from pyspark.sql.types import DecimalType, IntegerType, LongType

from binlogkit.errors import BinlogError
from binlogkit.schema.model import Catalog, TableDef, TableName
from binlogkit.schema.script import apply_script
from binlogkit.schema.store import HistoryStore, Position, Truncation
from binlogkit.spark.lake.batch import _created, _last_change
from binlogkit.spark.lake.evolve import Plan, delta_widens, plan_change, spark_columns
from binlogkit.spark.lake.timeline import Timeline, Version
from binlogkit.spark.lake.truncate import empty_mirror

BASE = "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, a TINYINT, b VARCHAR(5), c DATE)"
AT = Position("b.000001", 100)


def _tables(*scripts: str) -> list[TableDef]:
    catalog = apply_script(Catalog(), BASE).catalog
    out = []
    for script in ("", *scripts):
        if script:
            catalog = apply_script(catalog, script).catalog
        table = catalog.table("d", "t")
        assert table is not None
        out.append(table)
    return out


def test_added_dropped_renamed_widened_and_moved_columns() -> None:
    old, new = _tables(
        "ALTER TABLE d.t ADD COLUMN e INT FIRST, DROP COLUMN c, RENAME COLUMN b TO bb, "
        "MODIFY a BIGINT"
    )
    plan = plan_change(old, new, AT)
    assert plan == Plan(
        drops=("c",),
        renames=(("b", "bb"),),
        retypes=(("a", LongType()),),
        adds=(("e", IntegerType()),),
        order=("e", "id", "a", "bb"),
    )


def test_a_column_replaced_at_its_place_is_taken_as_renamed() -> None:
    old, new = _tables("ALTER TABLE d.t CHANGE b label VARCHAR(9)")
    assert plan_change(old, new, AT).renames == (("b", "label"),)


@pytest.mark.parametrize(
    "change",
    [
        "MODIFY a INT UNSIGNED",  # negative values do not fit
        "MODIFY b VARCHAR(3)",  # shorter
        "MODIFY b VARBINARY(5)",  # text to bytes
        "MODIFY id DECIMAL(5,0)",  # too few digits for INT
        "MODIFY c TIMESTAMP",  # a local date to an instant
    ],
)
def test_a_change_no_table_holds_exactly_is_an_error(change: str) -> None:
    old, new = _tables(f"ALTER TABLE d.t {change}")
    with pytest.raises(BinlogError, match=r"d\.t: column \w+ changed at b\.000001:100") as err:
        plan_change(old, new, AT)
    assert "resnapshot d.t" in str(err.value.hint)


@pytest.mark.parametrize(
    "change",
    ["MODIFY a SMALLINT", "MODIFY b TEXT", "MODIFY c DATETIME", "MODIFY id DECIMAL(12,2)"],
)
def test_exact_widenings_are_kept(change: str) -> None:
    old, new = _tables(f"ALTER TABLE d.t {change}")
    plan = plan_change(old, new, AT)
    assert not plan.drops and not plan.adds and not plan.renames


def test_delta_widens_only_where_values_keep() -> None:
    assert delta_widens(IntegerType(), LongType())
    assert delta_widens(LongType(), DecimalType(20, 0))
    assert not delta_widens(LongType(), DecimalType(18, 0))
    assert not delta_widens(LongType(), IntegerType())


def _timeline(folder: Path, steps: Sequence[str]) -> Timeline:
    """The timeline of a history that records each script of ``steps`` at b.000001:100, 200..."""
    store = HistoryStore(folder / "h.jsonl")
    catalog = Catalog()
    for pos, script in enumerate(steps, 1):
        after = apply_script(catalog, script).catalog
        store.record(Position("b.000001", pos * 100), catalog, after)
        catalog = after
    return Timeline(store.path)


def test_timeline_versions_renames_and_drops(tmp_path: Path) -> None:
    steps = [
        BASE,
        "ALTER TABLE d.t ADD COLUMN x INT",
        "RENAME TABLE d.t TO d.u",
        "DROP TABLE d.u",
    ]
    timeline = _timeline(tmp_path, steps)
    t = timeline.of("d", "t")
    assert [v.at.pos for v in t] == [100, 200, 300]
    assert t[2].definition is None and str(t[2].moved_to) == "d.u"
    u = timeline.of("d", "u")
    assert [(v.at.pos, v.definition is None) for v in u] == [(300, False), (400, True)]
    assert u[1].moved_to is None and not u[1].unknown
    assert str(u[0].moved_from) == "d.t" and t[0].moved_from is None
    assert timeline.first == Position("b.000001", 100)


def test_the_definition_a_batch_ends_with_and_the_tables_it_created(tmp_path: Path) -> None:
    steps = [
        BASE,  # the history's first record (as a seed): t existed before the stream
        "ALTER TABLE d.t ADD COLUMN x INT",
        "CREATE TABLE d.n (id INT PRIMARY KEY)",
        "ALTER TABLE d.n ADD COLUMN y INT",
        "RENAME TABLE d.t TO d.u",
        "DROP TABLE d.n",
        "CREATE TABLE d.n (id INT PRIMARY KEY, z INT)",
    ]
    timeline = _timeline(tmp_path, steps)
    t, n, u = (timeline.of("d", name) for name in "tnu")

    def at(pos: int) -> Position:
        return Position("b.000001", pos)

    def last(versions: Sequence[Version], start: int, end: int) -> int | None:
        found = _last_change(versions, at(start), at(end))
        return None if found is None else found.at.pos

    assert last(t, 100, 450) == 200  # the ALTER, within the batch
    assert last(t, 200, 450) is None  # done by the batch before
    assert last(t, 100, 500) is None  # renamed away: a drop step, not a definition
    assert last(n, 250, 450) == 400  # created and altered within: the last definition
    assert last(n, 250, 650) is None  # dropped
    assert last(n, 250, 700) == 700  # created again

    def created(versions: Sequence[Version], start: int, target: Version) -> bool:
        return _created(timeline, versions, at(start), target)

    assert created(n, 250, n[1]) and not created(n, 300, n[1])
    assert created(n, 600, n[3]) and not created(n, 700, n[3])
    assert not created(t, 0, t[1])  # the seed's table ...
    assert not created(u, 0, u[0])  # ... and a renamed one: rows not known


def test_time_is_kept_as_microseconds() -> None:
    catalog = apply_script(Catalog(), "CREATE DATABASE d; CREATE TABLE d.t (t TIME(6))").catalog
    table = catalog.table("d", "t")
    assert table is not None
    (column,) = spark_columns(table)
    assert column.data_type == LongType()
    assert column.convert(-timedelta(hours=838, minutes=59, seconds=59)) == -3020399 * 10**6
    assert column.convert(-timedelta(seconds=1, microseconds=500000)) == -1500000


def test_added_columns_carry_the_value_existing_rows_got() -> None:
    old, new = _tables(
        "ALTER TABLE d.t ADD COLUMN (n INT NOT NULL,"
        " u BIGINT UNSIGNED DEFAULT 18446744073709551615,"
        " k DECIMAL(5,2) NOT NULL, e ENUM('p','q') NOT NULL, s SET('a','b') DEFAULT 'b,a',"
        " v VARCHAR(3) NOT NULL, z DATE NOT NULL, x INT, f FLOAT DEFAULT 1.1, w BINARY(2) NOT NULL,"
        " ts TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3))"
    )
    at = Position("b.000001", 100, time_us=1_700_000_000_123_456)
    fills = {name: value for name, _, value in plan_change(old, new, at).fills}
    assert fills == {
        "n": 0,
        "u": Decimal("18446744073709551615"),
        "k": Decimal("0.00"),
        "e": "p",
        "s": ["a", "b"],
        "v": "",
        "f": struct.unpack("<f", struct.pack("<f", 1.1))[0],
        "w": b"\0\0",
        "ts": datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC),
    }  # z: the zero date, NULL in the lake; x: NULL


@pytest.mark.parametrize(
    ("added", "why"),
    [
        ("u CHAR(36) DEFAULT (UUID())", r"DEFAULT uuid\(\) is an expression"),
        ("r DOUBLE DEFAULT RAND()", r"DEFAULT rand\(\) is an expression"),
        ("n INT NOT NULL AUTO_INCREMENT, ADD KEY (n)", "AUTO_INCREMENT numbers"),
        ("d DATETIME DEFAULT CURRENT_TIMESTAMP", "session time zone"),
        ("t TIMESTAMP NULL DEFAULT '2020-01-01 00:00:00'", "session time zone"),
        ("ts TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP", "no time of the ALTER"),
    ],
)
def test_an_added_column_of_unknown_value_stops_the_table(added: str, why: str) -> None:
    old, new = _tables(f"ALTER TABLE d.t ADD COLUMN {added}")
    where = r"d\.t: column \w+ added at b\.000001:100 "
    with pytest.raises(BinlogError, match=rf"{where}.*{why}") as err:
        plan_change(old, new, AT)
    assert "resnapshot d.t" in str(err.value.hint)


def test_a_truncate_is_a_version_of_the_same_definition(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.jsonl")
    catalog = apply_script(Catalog(), BASE).catalog
    store.record(Position("b.000001", 100), Catalog(), catalog)
    for pos, name in ((200, "t"), (300, "x")):  # x: a table the history does not know
        at = Position("b.000001", pos)
        store.record(at, catalog, catalog, (Truncation(at, TableName("d", name)),))
    versions = Timeline(store.path).of("d", "t")
    assert [(v.at.pos, v.truncated) for v in versions] == [(100, False), (200, True)]
    assert versions[1].definition == versions[0].definition


def test_a_partition_truncation_stops_the_mirror() -> None:
    (table,) = _tables()
    removed = Version(AT, table, truncated=True, partitions=("p0", "p1"))
    with pytest.raises(BinlogError, match=r"d\.t: the rows of partitions p0, p1 were removed"):
        empty_mirror(None, "LAKE/d/t/mirror", None, removed)  # before any Spark work
