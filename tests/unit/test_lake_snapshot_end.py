"""Whether a batch starts past a snapshot's end E: by position on E's server, by GTID after a
failover; and where the streaming driver takes a batch's start from (the checkpoint)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from binlogkit.schema.store import Position
from binlogkit.spark.lake.snapshot_end import past_end
from binlogkit.spark.lake.storage import lake_path
from binlogkit.spark.lakehouse import _span

E = Position("mysql-bin.000003", 900, "0-1-40")


@pytest.mark.parametrize(
    ("start", "past"),
    [
        (Position("mysql-bin.000003", 900), True),  # at E
        (Position("mysql-bin.000003", 899), False),
        (Position("mysql-bin.000004", 4), True),
        (Position("mysql-bin.000002", 5000, "0-1-41"), False),  # E's server: positions tell
    ],
)
def test_on_es_server_positions_tell(start: Position, past: bool) -> None:
    assert past_end(start, E) is past


@pytest.mark.parametrize(
    ("gtid", "past"),
    [
        ("0-1-40", True),  # the failover point is E
        ("0-2-57", True),  # the new server went on in the domain
        ("0-1-39", False),  # the old server's last transaction before E comes after it
        ("1-2-100", False),  # domain 0 not reached at all
        ("1-2-100,0-1-45", True),
        ("", False),
        ("not a gtid", False),
        (None, False),  # a checkpoint without GTIDs
    ],
)
def test_after_a_failover_gtid_containment_tells(gtid: str | None, past: bool) -> None:
    # B's names and positions sort before A's: only the generation puts them after
    start = Position("1~mysql-bin.000001", 300, gtid)
    assert past_end(start, E) is past


def test_every_domain_of_e_must_be_reached() -> None:
    end = Position("mysql-bin.000003", 900, "0-1-40,1-1-7")
    assert past_end(Position("2~b.000001", 4, "1-1-7,0-2-41"), end)
    assert not past_end(Position("2~b.000001", 4, "0-2-41,1-1-6"), end)
    assert not past_end(Position("2~b.000001", 4, "0-2-41"), end)


def test_without_e_or_its_gtids_the_batch_is_not_known_to_be_past() -> None:
    assert not past_end(Position("mysql-bin.000009", 4), None)  # no E recorded
    old_lake = Position("mysql-bin.000003", 900)  # E recorded without its GTID position
    assert not past_end(Position("1~mysql-bin.000001", 300, "0-1-99"), old_lake)
    assert past_end(Position("mysql-bin.000004", 4), old_lake)  # on E's server still


def test_a_batchs_span_carries_the_checkpoints_gtid_positions(tmp_path: Path) -> None:
    offsets = tmp_path / "offsets"
    offsets.mkdir()
    ends = [
        {"file": "mysql-bin.000003", "pos": 900, "gtid": "0-1-40"},
        {"file": "mysql-bin.000001", "pos": 300, "gtid": "0-1-41", "generation": 1},
    ]
    for batch, offset in enumerate(ends):
        (offsets / str(batch)).write_text(f'v1\n{{"batchWatermarkMs":0}}\n{json.dumps(offset)}')
    first = Position("mysql-bin.000003", 100)
    checkpoint = lake_path(tmp_path)
    assert _span(checkpoint, 0, first) == (first, Position("mysql-bin.000003", 900, "0-1-40"))
    start, end = _span(checkpoint, 1, first)
    assert start == Position("mysql-bin.000003", 900, "0-1-40")
    assert end == Position("1~mysql-bin.000001", 300, "0-1-41")
    assert end is not None and past_end(end, E)
