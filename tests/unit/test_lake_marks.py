"""Which batch writes a Delta table holds, read from its commit files as Delta writes them
(``binlogkit.spark.lake.marks``; the live tests replay batches against real Delta tables)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from binlogkit.spark.lake.marks import Mark, holds, holds_earlier

APP = "binlogkit-sync-1"


def _table(tmp_path: Path, *commits: list[dict[str, Any]]) -> str:
    """A table folder whose log holds ``commits`` (each a list of actions) as versions 0, 1..."""
    log = tmp_path / "t" / "_delta_log"
    log.mkdir(parents=True)
    for version, actions in enumerate(commits):
        lines = [json.dumps(action, separators=(",", ":")) for action in actions]
        (log / f"{version:020d}.json").write_text("\n".join(lines) + "\n")
    (log / "00000000000000000000.crc").write_text("{}")  # not a commit: left alone
    return str(log.parent)


def _commit(mark: Mark | None = None, *more: dict[str, Any]) -> list[dict[str, Any]]:
    info: dict[str, Any] = {"timestamp": 1, "operation": "WRITE"}
    if mark is not None:
        info["userMetadata"] = mark.text()
    return [{"commitInfo": info}, *more, {"add": {"path": "part-0.parquet", "size": 10}}]


def test_a_table_holds_its_writes_and_every_write_of_earlier_batches(tmp_path: Path) -> None:
    path = _table(
        tmp_path,
        _commit(),  # created
        _commit(Mark(APP, 6)),
        _commit(Mark(APP, 7)),
        _commit(Mark(APP, 7, "1")),
        _commit(None, {"metaData": {"id": "x"}}),  # a DDL step, no mark
    )
    assert holds(path, Mark(APP, 7))
    assert holds(path, Mark(APP, 7, "1"))
    assert holds(path, Mark(APP, 3, "2"))  # an earlier batch
    assert not holds(path, Mark(APP, 7, "2"))
    assert not holds(path, Mark(APP, 8))
    assert not holds(path, Mark("binlogkit-sync-2", 7))


def test_the_search_stops_at_an_earlier_batch(tmp_path: Path) -> None:
    # batch 6 wrote its first step, not its step "1": batch 5's step "1" is not taken for it
    path = _table(tmp_path, _commit(Mark(APP, 5, "1")), _commit(Mark(APP, 6)))
    assert holds(path, Mark(APP, 6))
    assert holds(path, Mark(APP, 5, "1"))
    assert not holds(path, Mark(APP, 6, "1"))


def test_a_missing_table_and_foreign_user_metadata_hold_nothing(tmp_path: Path) -> None:
    assert not holds(str(tmp_path / "none"), Mark(APP, 0))
    other = {"commitInfo": {"operation": "WRITE", "userMetadata": "nightly load {x"}}
    listed = {"commitInfo": {"operation": "WRITE", "userMetadata": json.dumps([1])}}
    path = _table(tmp_path, [other], [listed])
    assert not holds(path, Mark(APP, 0))


def test_delta_transaction_ids_of_earlier_releases_count_as_marks(tmp_path: Path) -> None:
    def txn(app_id: str, version: int) -> list[dict[str, Any]]:
        return _commit(None, {"txn": {"appId": app_id, "version": version}})

    path = _table(
        tmp_path,
        txn(f"{APP}:truncate:b.000001:300", 0),
        txn(APP, 4),
        txn(f"{APP}+1", 4),
        txn(f"{APP}x", 9),  # another app's id
        txn("binlogkit-snapshot", 9),
    )
    assert holds(path, Mark(APP, 4))
    assert holds(path, Mark(APP, 4, "1"))
    assert not holds(path, Mark(APP, 4, "2"))
    assert not holds(path, Mark(APP, 5))
    # a TRUNCATE's id had no batch: any batch's step of that statement holds it
    assert holds(path, Mark(APP, 3, "truncate:b.000001:300"))
    path = _table(tmp_path / "2", txn(f"{APP}:truncate:b.000001:300", 0))
    assert holds(path, Mark(APP, 9, "truncate:b.000001:300"))
    assert not holds(path, Mark(APP, 9, "truncate:b.000001:400"))


def test_an_earlier_batch_is_told_by_the_oldest_marked_commit(tmp_path: Path) -> None:
    # the change log of a table whose mirror an earlier batch made: the apply then refuses to
    # make the mirror again from a later batch's change
    path = _table(tmp_path, _commit(), _commit(Mark(APP, 4)), _commit(Mark(APP, 9)))
    assert holds_earlier(path, Mark(APP, 9))
    assert holds_earlier(path, Mark(APP, 5))
    assert not holds_earlier(path, Mark(APP, 4))  # its own write: a batch applied again
    assert not holds_earlier(path, Mark("binlogkit-sync-2", 9))
    assert not holds_earlier(str(tmp_path / "none"), Mark(APP, 9))
