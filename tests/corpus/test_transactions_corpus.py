"""Transactions of every corpus binlog (binlogkit.pipeline.transactions): invariants.

- Every event is in exactly one transaction or between transactions, in
  stream order; row events (TABLE_MAP, rows) are never between.
- Positions are contiguous: each transaction starts where the event or
  transaction before it ends (from the file's first event to its last),
  the events inside a TRANSACTION_PAYLOAD taking no room.
- The row changes of a transaction are as many as the rows of its events.
- A transaction ended by an event has it as its last event and a commit
  time (MySQL 8: its GTID event's immediate commit timestamp); a GTID
  event is always the first event of its transaction.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from corpus_walk import corpus_files, damage_of, decode_up_to_damage, walk_file

from binlogkit import BinlogDecoder
from binlogkit.binlog.events import Event
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.binlog.transactions import GTID_EVENTS
from binlogkit.errors import DecodeError, EncryptedBinlogError
from binlogkit.pipeline.transactions import Outcome, Transaction, grouped, transactions

pytestmark = pytest.mark.corpus

FILES = corpus_files()


def decoded(name: str) -> tuple[list[Event], set[int]]:
    """The file's events up to its damage, and the ids of those a TRANSACTION_PAYLOAD holds."""
    events, inner = [], set()
    try:
        for event, frame in decode_up_to_damage(name, BinlogDecoder(file=name)):
            events.append(event)
            if frame is None:
                inner.add(id(event))
    except EncryptedBinlogError:
        pytest.skip("an encrypted binlog")
    return events, inner


def rows_of(events: list[Event]) -> int:
    return sum(len(e.rows) for e in events if isinstance(e, RowsEvent))


@pytest.mark.parametrize("name", FILES or ["<no corpus>"])
def test_transactions_partition_the_stream(corpus_dir: Path, name: str) -> None:
    events, inner = decoded(name)
    if not events:
        pytest.skip("no event before the file's damage")
    seen: list[Event] = []
    spans: list[tuple[int, int]] = []  # the file range of each transaction or framed event
    transactions = 0
    for item in grouped(iter(events)):
        if not isinstance(item, Transaction):
            seen.append(item)
            assert not isinstance(item, TableMapEvent | RowsEvent), "row event between"
            if id(item) not in inner:
                spans.append((item.header.offset, item.header.end))
            continue
        transactions += 1
        own = list(item.events())
        seen += own
        framed = [e for e in own if id(e) not in inner]
        assert (item.start.offset, item.end.offset) == (
            framed[0].header.offset,
            framed[-1].header.end,
        )
        spans.append((item.start.offset, item.end.offset))
        assert item.first is own[0]
        assert all(not isinstance(e, GTID_EVENTS) for e in own[1:])
        if item.outcome is Outcome.INCOMPLETE:
            assert item.last is None and item.commit_timestamp is None
        else:
            assert item.last is own[-1]
            assert item.commit_timestamp is not None
            immediate = getattr(item.first, "immediate_commit_timestamp", None)
            if immediate is not None:
                assert item.commit_timestamp == immediate
    assert seen == events and all(a is b for a, b in zip(seen, events, strict=True))
    assert spans[0][0] == events[0].header.offset
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert start == end
    walked = walk_file(name)
    if walked.stop is None and damage_of(name) is None:  # the whole file was decoded
        assert spans[-1][1] == walked.events[-1].end
    if any(isinstance(e, GTID_EVENTS) for e in events):
        assert transactions


@pytest.mark.parametrize("name", FILES or ["<no corpus>"])
def test_row_changes_count_the_rows(corpus_dir: Path, name: str) -> None:
    events, _ = decoded(name)
    try:
        rows_of(events)
    except DecodeError as err:
        pytest.skip(f"rows binlogkit cannot decode: {err}")
    by_events = [rows_of(list(tx.events())) for tx in transactions(iter(events))]
    by_changes = [sum(1 for _ in tx.changes()) for tx in transactions(iter(events))]
    assert by_changes == by_events
