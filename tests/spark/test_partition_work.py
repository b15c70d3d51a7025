"""Partitions of equal work: a binlog that is bulk inserts first, then small transactions.

Bulk inserts are many bytes in few events, small transactions few bytes in many;
reading costs per byte and per event, so equal bytes are unequal work. The work
of each partition is counted with the independent header walk of ``corpus_walk``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest
from corpus_walk import walk

from binlogkit.io.splits import Split, plan_partitions
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.spark.source import EVENT_COST

pytestmark = pytest.mark.mariadb

BULK = """
DELIMITER //
CREATE PROCEDURE bulk()
BEGIN
  DECLARE i INT DEFAULT 0;
  WHILE i < 40 DO
    INSERT INTO t (v) SELECT REPEAT('x', 200) FROM seq_1_to_500;
    SET i = i + 1;
  END WHILE;
END //
"""
SMALL = """
DELIMITER //
CREATE PROCEDURE small()
BEGIN
  DECLARE i INT DEFAULT 0;
  WHILE i < 12000 DO
    UPDATE t SET v = CONCAT('y', i) WHERE id = i % 20000 + 1;
    SET i = i + 1;
  END WHILE;
END //
"""


@pytest.fixture(scope="module")
def bulk_then_small(mariadb_factory: Callable[..., MariaDBSandbox]) -> Path:
    server = mariadb_factory("partition-work")
    try:
        server.execute("CREATE DATABASE w")
        server.execute("CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v TEXT)", database="w")
        for procedure in (BULK, SMALL):
            server.execute(procedure, database="w")
        server.execute("CALL bulk(); CALL small()", database="w")
        files = server.flush_binlogs()
    finally:
        server.stop()
    return max(files, key=lambda p: p.stat().st_size)


def _work(parts: list[list[Split]], starts: list[int]) -> list[int]:
    return [
        sum(s.length + EVENT_COST * sum(s.start <= o < s.end for o in starts) for s in part)
        for part in parts
    ]


def test_partitions_of_equal_work(bulk_then_small: Path) -> None:
    path = bulk_then_small
    starts = [e.offset for e in walk(path.read_bytes()).events]
    assert len(starts) > 40_000
    by_bytes = plan_partitions([(str(path), 0, None)], 4)
    by_work = plan_partitions([(str(path), 0, None)], 4, event_cost=EVENT_COST)
    assert len(by_bytes) == len(by_work) == 4
    spread = [max(w) / min(w) for w in (_work(by_bytes, starts), _work(by_work, starts))]
    assert spread[0] > 1.5  # the file is uneven enough for equal bytes to be unequal work
    assert spread[1] < 1.1
    splits = [s for part in by_work for s in part]  # every byte once, in order
    assert splits[0].start == 0 and splits[-1].end == path.stat().st_size
    assert all(a.end == b.start for a, b in itertools.pairwise(splits))
