"""The errant-transaction rule of a failover and the offsets that carry what it needs."""

from __future__ import annotations

import pytest

from binlogkit.gtid import MariaGtidList
from binlogkit.spark.failover_checks import describe, errant_gtids, same_position


def _errant(new: str, old: str, since: str | None) -> list[str]:
    found = errant_gtids(
        MariaGtidList.parse(new),
        MariaGtidList.parse(old),
        None if since is None else MariaGtidList.parse(since),
    )
    return [str(g) for g in found]


@pytest.mark.parametrize(
    ("new", "old", "since", "errant"),
    [
        # The same history: nothing errant.
        ("0-1-9", "0-1-9", "0-1-3", []),
        # 0-2-6 written on the new server alone between the old one's 0-1-5 and 0-1-6.
        ("0-2-6,0-1-9", "0-1-9", "0-1-3", ["0-2-6"]),
        # The new server was primary in an earlier generation: the old one logged its GTIDs.
        ("0-2-5,0-1-9", "0-2-5,0-1-9", "0-1-3", []),
        # ... and wrote one more after that on its own.
        ("0-2-7,0-1-9", "0-2-5,0-1-9", "0-1-3", ["0-2-7"]),
        # GTIDs of a server the old one never logged, from before the stream began: in the
        # snapshot (the old server got the data from a backup).
        ("0-3-2,0-1-9", "0-1-9", "0-1-3", []),
        # Several domains: each by its own numbers; a domain the stream began without.
        ("0-1-9,1-2-4", "0-1-9,1-1-4", "0-1-3,1-1-2", ["1-2-4"]),
        ("0-1-9,5-2-1", "0-1-9", "0-1-3", ["5-2-1"]),
        # The old server logged more than the new one has (its own older GTIDs): not errant.
        ("0-1-9", "0-3-2,0-1-9", "0-1-3", []),
        # Without the stream's start, a server the old one never logged is errant.
        ("0-3-2,0-1-9", "0-1-9", None, ["0-3-2"]),
    ],
)
def test_errant_gtids_are_those_the_old_server_had_not_written(
    new: str, old: str, since: str | None, errant: list[str]
) -> None:
    assert _errant(new, old, since) == errant


def test_positions_compare_by_domain_in_any_order() -> None:
    assert same_position("1-1-4,0-1-9", "0-1-9,1-1-4")
    assert not same_position("0-1-9", "0-1-9,1-1-4")
    assert not same_position(None, "0-1-9") and not same_position("bad", "0-1-9")


def test_an_identity_names_its_kind() -> None:
    assert describe("2") == "server_id 2"
    assert describe("3e11fa47-71ca-11e1-9e33-c80aa9429562").startswith("server_uuid 3e11")


def test_an_offset_keeps_its_server_state_and_start_and_loads_without_them() -> None:
    from binlogkit.spark.server_stream import ServerOffset

    offset = ServerOffset("mysql-bin.000002", 400, "0-1-9", 1, "2", "0-2-5,0-1-9", "0-1-3")
    dumped = offset.dump()
    assert dumped["server"] == "2" and dumped["state"] == "0-2-5,0-1-9"
    assert ServerOffset.load(dumped) == offset
    older = {"file": "mysql-bin.000002", "pos": 400, "gtid": "0-1-9"}
    assert ServerOffset("mysql-bin.000002", 400, "0-1-9").dump() == older
    assert ServerOffset.load(older).server is None
