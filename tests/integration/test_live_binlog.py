"""Live: a real MariaDB writes binlogs under several settings; binlogkit must read them exactly.

For each server setting the workload of :mod:`binlogkit.sandbox.workload`
(every column type, edge values, inserts, updates and deletes) runs on a fresh
server. Then:

- every event of every binlog file decodes (no opaque or skipped events), at
  the positions, with the types and server ids that ``SHOW BINLOG EVENTS``
  lists;
- replaying the decoded row changes over empty tables gives exactly the rows
  that ``SELECT`` returns (see ``live_replay``): names and values exact under
  every setting, ``binlog_row_metadata=NO_LOG`` too, since the schema history
  (on by default) learns the tables from the workload's CREATE TABLEs, in
  compressed QUERY events too; and, without the history, as far as NO_LOG
  binlogs allow (positional names, signedness and charsets unknown).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from live_replay import Replay, Snapshot, compare, replay, snapshot

import binlogkit
from binlogkit import Event, OpaqueEvent, SkippedEvent
from binlogkit.binlog.constants import EventType
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.sandbox.server import OptionValue
from binlogkit.sandbox.workload import STRING_CHARSETS, build_workload, run_workload

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]


@dataclass(frozen=True, slots=True)
class Variant:
    """Server settings to run the workload under, and the workload's own settings."""

    options: dict[str, OptionValue]
    max_fsp: int = 6


VARIANTS: dict[str, Variant] = {
    "full": Variant({}),
    "minimal": Variant({"binlog_row_image": "MINIMAL"}),
    "noblob": Variant({"binlog_row_image": "NOBLOB"}),
    "no-metadata": Variant({"binlog_row_metadata": "NO_LOG"}),
    "minimal-no-metadata": Variant(
        {"binlog_row_image": "MINIMAL", "binlog_row_metadata": "NO_LOG"}
    ),
    "compressed": Variant({"log_bin_compress": True, "log_bin_compress_min_len": 10}),
    "compressed-no-metadata": Variant(
        {"log_bin_compress": True, "log_bin_compress_min_len": 10, "binlog_row_metadata": "NO_LOG"}
    ),
    # MariaDB 5.3's temporal formats; fractional ones are logged without their
    # precision (mariadb-binlog cannot read them either), so whole seconds only.
    "old-temporal": Variant({"mysql56_temporal_format": False}, max_fsp=0),
    "no-checksum-gtid": Variant(
        {"binlog_checksum": "NONE", "server_id": 42, "gtid_domain_id": 7, "gtid_strict_mode": True}
    ),
}

# Event_type as SHOW BINLOG EVENTS names it (MariaDB's Log_event::get_type_str).
SERVER_EVENT_NAMES = {
    "Query": EventType.QUERY,
    "Stop": EventType.STOP,
    "Rotate": EventType.ROTATE,
    "Intvar": EventType.INTVAR,
    "RAND": EventType.RAND,
    "User var": EventType.USER_VAR,
    "Format_desc": EventType.FORMAT_DESCRIPTION,
    "Xid": EventType.XID,
    "Table_map": EventType.TABLE_MAP,
    "Write_rows_v1": EventType.WRITE_ROWS_V1,
    "Update_rows_v1": EventType.UPDATE_ROWS_V1,
    "Delete_rows_v1": EventType.DELETE_ROWS_V1,
    "Write_rows": EventType.WRITE_ROWS,
    "Update_rows": EventType.UPDATE_ROWS,
    "Delete_rows": EventType.DELETE_ROWS,
    "XA_prepare": EventType.XA_PREPARE,
    "Annotate_rows": EventType.MARIADB_ANNOTATE_ROWS,
    "Binlog_checkpoint": EventType.MARIADB_BINLOG_CHECKPOINT,
    "Gtid": EventType.MARIADB_GTID,
    "Gtid_list": EventType.MARIADB_GTID_LIST,
    "Start_encryption": EventType.MARIADB_START_ENCRYPTION,
    "Query_compressed": EventType.MARIADB_QUERY_COMPRESSED,
    "Write_rows_compressed_v1": EventType.MARIADB_WRITE_ROWS_COMPRESSED_V1,
    "Update_rows_compressed_v1": EventType.MARIADB_UPDATE_ROWS_COMPRESSED_V1,
    "Delete_rows_compressed_v1": EventType.MARIADB_DELETE_ROWS_COMPRESSED_V1,
    "Write_rows_compressed": EventType.MARIADB_WRITE_ROWS_COMPRESSED,
    "Update_rows_compressed": EventType.MARIADB_UPDATE_ROWS_COMPRESSED,
    "Delete_rows_compressed": EventType.MARIADB_DELETE_ROWS_COMPRESSED,
}

DELIBERATELY_OPAQUE: frozenset[int] = frozenset()
"""Event types binlogkit keeps as raw bytes on purpose (none that MariaDB 10.11 writes)."""


@dataclass(frozen=True, slots=True)
class LiveRun:
    """What one server setting produced: its binlogs and the ground truth about them."""

    name: str
    options: dict[str, OptionValue]
    files: list[Path]
    server_events: dict[Path, list[tuple[int, int, int, int]]]
    snapshots: list[Snapshot]

    @property
    def no_metadata(self) -> bool:
        return self.options.get("binlog_row_metadata") == "NO_LOG"


@pytest.fixture(scope="module", params=list(VARIANTS))
def live_run(
    request: pytest.FixtureRequest, mariadb_factory: Callable[..., MariaDBSandbox]
) -> LiveRun:
    name: str = request.param
    variant = VARIANTS[name]
    server = mariadb_factory(name, **variant.options)
    try:
        workload = run_workload(server, build_workload(max_fsp=variant.max_fsp))
        snapshots = [snapshot(server, workload.database, t.name) for t in workload.tables]
        files = server.flush_binlogs()
        server_events = {path: _server_events(server, path) for path in files}
    finally:
        server.stop()
    return LiveRun(name, variant.options, files, server_events, snapshots)


def _server_events(server: MariaDBSandbox, path: Path) -> list[tuple[int, int, int, int]]:
    """(position, type code, server id, end_log_pos) of each event, from SHOW BINLOG EVENTS."""
    events = []
    for _log, pos, name, server_id, end, _info in server.query(
        f"SHOW BINLOG EVENTS IN '{path.name}'"
    ):
        assert name in SERVER_EVENT_NAMES, f"server event name {name!r} needs an entry here"
        assert pos is not None and server_id is not None and end is not None
        events.append((int(pos), int(SERVER_EVENT_NAMES[name]), int(server_id), int(end)))
    return events


@cache
def decoded(path: Path, *, history: bool = True) -> list[Event]:
    with binlogkit.open(path, schema="auto" if history else None) as reader:
        return list(reader)


def test_every_event_decodes(live_run: LiveRun) -> None:
    seen: Counter[int] = Counter()
    for path in live_run.files:
        events = decoded(path)
        opaque = [
            f"{e.type_name}@{e.header.offset}"
            for e in events
            if isinstance(e, SkippedEvent)
            or (isinstance(e, OpaqueEvent) and e.header.type_code not in DELIBERATELY_OPAQUE)
        ]
        assert not opaque, f"{path.name}: events left undecoded: {opaque[:10]}"
        ours = [
            (e.header.offset, e.header.type_code, e.header.server_id, e.header.log_pos)
            for e in events
        ]
        theirs = live_run.server_events[path]
        if path == live_run.files[-1]:
            # The active file gets a late BINLOG_CHECKPOINT and a STOP at shutdown.
            late = {EventType.MARIADB_BINLOG_CHECKPOINT, EventType.STOP}
            assert all(e[1] in late for e in ours[len(theirs) :]), ours[len(theirs) :]
            ours = ours[: len(theirs)]
        assert ours == theirs, f"{path.name}: event list differs from SHOW BINLOG EVENTS"
        seen.update(e.header.type_code for e in events)
    # The setting did what it is for: the server wrote the event kinds it should.
    if live_run.options.get("log_bin_compress"):
        assert (
            seen[EventType.MARIADB_WRITE_ROWS_COMPRESSED_V1]
            and seen[EventType.MARIADB_QUERY_COMPRESSED]
        )
    else:
        assert seen[EventType.WRITE_ROWS_V1] and seen[EventType.UPDATE_ROWS_V1]
    assert seen[EventType.XA_PREPARE] == 1


def _replay_problems(live_run: LiveRun, *, history: bool) -> list[str]:
    result = Replay()
    for path in live_run.files:
        replay(decoded(path, history=history), result)
    assert not result.problems, "row changes that did not apply:\n" + "\n".join(
        result.problems[:20]
    )
    assert result.changes > 1000
    problems = []
    lenient = not history and live_run.no_metadata
    for snap in live_run.snapshots:
        image = result.images.get(("bk", snap.table), [])
        problems += compare(snap, image, lenient=lenient)
    return problems


def test_replay_matches_select(live_run: LiveRun) -> None:
    problems = _replay_problems(live_run, history=True)
    assert not problems, f"{len(problems)} differences:\n" + "\n".join(problems[:40])


def test_replay_without_a_schema_matches_as_far_as_the_binlog_tells(live_run: LiveRun) -> None:
    if not live_run.no_metadata:
        pytest.skip("FULL metadata: the history adds nothing to compare without it")
    problems = _replay_problems(live_run, history=False)
    assert not problems, f"{len(problems)} differences:\n" + "\n".join(problems[:40])


# What information_schema says each kind of MariaDB 10.11 column is called.
EVERY_TYPE = {
    *("tinyint", "smallint", "mediumint", "int", "bigint", "decimal", "float", "double", "bit"),
    *("year", "date", "time", "datetime", "timestamp"),
    *("char", "varchar", "tinytext", "text", "mediumtext", "longtext"),
    *("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "enum", "set"),
    *("geometry", "point", "linestring", "polygon"),
    *("multipoint", "multilinestring", "multipolygon", "geometrycollection"),
    *("inet6", "inet4", "uuid"),
}


def test_workload_has_every_column_type(live_run: LiveRun) -> None:
    types = {c.data_type for snap in live_run.snapshots for c in snap.columns}
    assert types >= EVERY_TYPE, f"workload lacks {sorted(EVERY_TYPE - types)}"
    charsets = {c.charset for snap in live_run.snapshots for c in snap.columns}
    assert charsets >= set(STRING_CHARSETS), sorted(set(STRING_CHARSETS) - charsets)
    assert all(snap.rows for snap in live_run.snapshots), "a workload table ended up empty"
