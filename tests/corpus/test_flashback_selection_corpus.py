"""Selection and flashback on the real binlogs of the corpus.

Where ``mariadb-binlog`` is installed its answers are the known answers: the
events it keeps for a set of options, and the rows events of its
``--flashback`` (byte for byte, but the checksum it leaves stale). MySQL files
(compressed transactions, a partial JSON update) are checked against the
format's definition of an undo.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from flashback_tool import tool_flashback_rows
from selection_tool import our_kept, tool_kept

import binlogkit
from binlogkit.binlog.decoder import encode_event
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.dump.selection import Selection
from binlogkit.pipeline.flashback import FlashbackError, flashback

needs_tool = pytest.mark.skipif(
    shutil.which("mariadb-binlog") is None, reason="mariadb-binlog is not installed"
)

SELECTIONS = [
    ([], Selection()),
    (["--database=typesdb"], Selection(database="typesdb")),
    (["--database=other"], Selection(database="other")),
    (["--table=t_int"], Selection(table="t_int")),
    (
        ["--rewrite-db=typesdb->x", "--database=typesdb"],
        Selection(rewrite_db={"typesdb": "x"}, database="typesdb"),
    ),
]


def _local(corpus_dir: Path, variant: str) -> list[Path]:
    return sorted((corpus_dir / "local-mariadb-10.11" / variant).glob("mysql-bin.0000??"))


@needs_tool
@pytest.mark.parametrize("variant", ["full", "gtid", "compressed"])
@pytest.mark.parametrize(
    ("options", "selection"), SELECTIONS, ids=[" ".join(s[0]) for s in SELECTIONS]
)
def test_selection_as_mariadb_binlog(corpus_dir, variant, options, selection) -> None:  # type: ignore[no-untyped-def]
    files = _local(corpus_dir, variant)
    assert our_kept(files, selection) == tool_kept(files, options)


@needs_tool
def test_positions_as_mariadb_binlog(corpus_dir) -> None:  # type: ignore[no-untyped-def]
    file = _local(corpus_dir, "full")[1]
    options = ["--start-position=1998", "--stop-position=18429"]
    want = tool_kept([file], options)
    assert our_kept([file], Selection(start_position=1998, stop_position=18429)) == want


@needs_tool
@pytest.mark.parametrize("variant", ["full", "compressed", "gtid"])
def test_flashback_as_mariadb_binlog(corpus_dir, variant) -> None:  # type: ignore[no-untyped-def]
    file = _local(corpus_dir, variant)[1]
    theirs = tool_flashback_rows([file])
    with binlogkit.open(str(file)) as reader:
        undo = flashback(reader)
    ours = {e.header.log_pos: encode_event(e, u.fmt) for u in undo for e in u.rows}
    assert theirs
    for raw in theirs:
        assert ours[int.from_bytes(raw[13:17], "little")][:-4] == raw[:-4]


def test_minimal_images_cannot_be_undone(corpus_dir) -> None:  # type: ignore[no-untyped-def]
    path = _local(corpus_dir, "minimal")[1]
    with binlogkit.open(str(path)) as reader, pytest.raises(FlashbackError, match="=FULL"):
        flashback(reader)


def test_partial_json_update_without_old_documents(corpus_dir) -> None:  # type: ignore[no-untyped-def]
    path = corpus_dir / "blackbeam+rust_mysql_common/test-data/binlogs/json.binlog.000001"
    match = r"PARTIAL_UPDATE_ROWS .* lacks column"
    with binlogkit.open(str(path)) as reader, pytest.raises(FlashbackError, match=match):
        flashback(reader)


@pytest.mark.parametrize(
    "path",
    [
        "blackbeam+rust_mysql_common/test-data/binlogs/transaction_compression.000001",
        "osheroff+mysql-binlog-connector-java/src/test/resources/mysql-bin.compressed",
        "apecloud+mysql-binlog-connector-rust/tests/parse_file_tests/mysql-bin.000057",
    ],
)
def test_compressed_transactions_are_undone(corpus_dir, path) -> None:  # type: ignore[no-untyped-def]
    """Each undo row is the original row turned around, last row of the range first."""
    with binlogkit.open(str(corpus_dir / path)) as reader:
        events = list(reader)
    original = [
        (change.before, change.after)
        for e in events
        if isinstance(e, RowsEvent)
        for change in e.rows
    ]
    undo = flashback(events)
    reversed_rows = [(c.after, c.before) for u in undo for e in u.rows for c in e.rows]
    assert original and reversed_rows == original[::-1]
    fmt = undo[0].fmt
    for u in undo:  # the undo events re-encode and decode back to the same rows
        for event in u.rows:
            raw = encode_event(event, fmt)
            assert raw[4] in (30, 31, 32)  # v2 WRITE/UPDATE/DELETE
