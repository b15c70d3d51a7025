"""A catalog pickles (to Spark executors), and a history file survives a torn append."""

from __future__ import annotations

import pickle
from pathlib import Path

from binlogkit.schema import Catalog, apply_script
from binlogkit.schema.store import HistoryStore, Position

SCRIPT = """
CREATE DATABASE Shop CHARACTER SET utf8mb4;
USE Shop;
CREATE TABLE Orders (id INT UNSIGNED PRIMARY KEY, state ENUM('new', 'paid'), note TEXT);
CREATE DATABASE other;
"""


def _catalog(lower_case_table_names: int = 2) -> Catalog:
    catalog = apply_script(Catalog(lower_case_table_names=lower_case_table_names), SCRIPT).catalog
    return catalog.with_unknown("Shop", "gone")  # as after a statement that could not be read


def test_a_catalog_pickles_to_an_equal_one_with_the_same_name_rules() -> None:
    catalog = _catalog()
    assert catalog.is_unknown("shop", "GONE")
    copy = pickle.loads(pickle.dumps(catalog))
    assert copy == catalog and copy is not catalog
    assert copy.lower_case_table_names == 2
    orders = copy.table("SHOP", "orders")  # compared in lower case, stored as given
    assert orders is not None and orders.name == "Orders" and orders.primary_key == ("id",)
    assert copy.is_unknown("shop", "gone") and list(copy.unknown_tables()) == [("Shop", "gone")]
    assert {d.name for d in copy.databases()} == {"Shop", "other"}
    assert copy.database("shop") == catalog.database("shop")
    # Still immutable and updatable as before.
    assert copy.without_table("shop", "orders").table("shop", "orders") is None
    assert copy.table("shop", "orders") is not None


def test_catalogs_pickled_together_share_their_tables() -> None:
    catalog = _catalog()
    later = catalog.without_table("shop", "GONE")
    one, two = pickle.loads(pickle.dumps((catalog, later)))
    assert one.table("shop", "orders") is two.table("shop", "orders")


def test_an_append_torn_by_a_crash_is_dropped_before_the_next(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    store = HistoryStore(path)
    catalog = _catalog(0)  # a history file keeps the default name rules
    store.record(Position("mysql-bin.000001", 100), Catalog(), catalog)
    whole = path.read_bytes()
    with path.open("ab") as out:
        out.write(b'{"file": "mysql-bin.000001", "pos": 200, "db": "Sh')  # cut short
    assert HistoryStore(path).catalog_at() == catalog  # the torn line is ignored
    later = catalog.without_table("Shop", "Orders")
    again = HistoryStore(path)
    again.record(Position("mysql-bin.000001", 300), catalog, later)
    assert path.read_bytes().startswith(whole)
    assert b'"pos": 200' not in path.read_bytes()
    assert HistoryStore(path).catalog_at(Position("mysql-bin.000001", 299)) == catalog
    assert HistoryStore(path).catalog_at() == later
