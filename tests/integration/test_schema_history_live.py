"""Live: rows logged without metadata decode, with a schema history, as with FULL metadata.

Two servers run the same statements: one logs ``binlog_row_metadata=FULL``, the
other ``NO_LOG`` (the MariaDB default). The tables are created before the
binlogs that are read, so the history is seeded from the server (with its
binlog position), and then follows a sequence of ALTERs (added, dropped,
moved and renamed columns, type, signedness, charset and ENUM changes, a new
primary key, a renamed table). Every row change decoded from the NO_LOG
server must equal the FULL server's, names and values, and replaying them
must give exactly what SELECT returns.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from live_replay import Replay, compare, replay, snapshot

import binlogkit
from binlogkit import jsonenc
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.binlog.tables import SchemaSource
from binlogkit.cli.main import cli
from binlogkit.io.mysql import MySQLConnection
from binlogkit.protocol.spec import ConnectionSpec
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.sandbox.workload import Workload, build_workload
from binlogkit.schema.history import SchemaHistory
from binlogkit.schema.model import Catalog, TableName
from binlogkit.schema.seed import reread_tables, seed_from_server
from binlogkit.schema.store import Position

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]

EVOLVE_CREATE = """CREATE TABLE evolve (
  id INT UNSIGNED NOT NULL PRIMARY KEY,
  a INT,
  b VARCHAR(10) CHARACTER SET latin1,
  e ENUM('x', 'y'),
  big BIGINT UNSIGNED,
  s SET('p', 'q') CHARACTER SET utf8mb4,
  bin BINARY(4),
  u UUID,
  ip INET6
)"""

EVOLVE = [
    "INSERT INTO evolve VALUES (1, -5, 'é', 'y', 18446744073709551615, 'p,q', 'ab',"
    " 'f0000000-0000-0000-0000-000000000001', '::1')",
    "ALTER TABLE evolve ADD COLUMN c TEXT AFTER a",
    "INSERT INTO evolve (id, a, c, b, e) VALUES (2, 7, 'tëxt', 'x', 'x')",
    "ALTER TABLE evolve DROP COLUMN a",
    "UPDATE evolve SET c = 'changed' WHERE id = 1",
    "ALTER TABLE evolve MODIFY b VARCHAR(20) CHARACTER SET latin1 FIRST",
    "INSERT INTO evolve (id, b) VALUES (3, 'first')",
    "ALTER TABLE evolve CHANGE b b2 VARCHAR(20) CHARACTER SET latin1, RENAME COLUMN c TO c2",
    "UPDATE evolve SET b2 = 'renamed' WHERE id = 3",
    "ALTER TABLE evolve ADD COLUMN n INT",
    "UPDATE evolve SET n = -1",
    "ALTER TABLE evolve MODIFY n BIGINT UNSIGNED",
    "UPDATE evolve SET n = 18446744073709551615 WHERE id = 1",
    "ALTER TABLE evolve CONVERT TO CHARACTER SET utf8mb4",
    "INSERT INTO evolve (id, b2, c2, s) VALUES (4, '日本', '€', 'q')",
    "ALTER TABLE evolve MODIFY e ENUM('x', 'y', 'z')",
    "INSERT INTO evolve (id, e) VALUES (5, 'z')",
    "ALTER TABLE evolve DROP PRIMARY KEY, ADD COLUMN k INT NOT NULL DEFAULT 0 FIRST,"
    " ADD PRIMARY KEY (k, id)",
    "UPDATE evolve SET k = id * 10",
    "DELETE FROM evolve WHERE id = 2",
    "RENAME TABLE evolve TO evolved",
    "INSERT INTO evolved (k, id, b2) VALUES (1, 6, 'moved')",
    "ALTER TABLE evolved ADD INDEX (b2), ALGORITHM=INPLACE",
    "UPDATE evolved SET big = 1, bin = 'x'",
]


@dataclass(frozen=True, slots=True)
class Run:
    """What one server wrote after the seed point, and what it knew there."""

    server: MariaDBSandbox
    files: list[Path]
    seed: Catalog
    seeded_at: Position
    workload: Workload


def _split(workload: Workload) -> tuple[list[str], list[str]]:
    """The workload's CREATE TABLEs (run before the binlogs read) and the rest."""
    creates = [s for s in workload.statements if s.startswith("CREATE TABLE")]
    rest = [s for s in workload.statements if not s.startswith("CREATE TABLE")]
    return creates, rest


def _run(server: MariaDBSandbox) -> Run:
    workload = build_workload()
    creates, rest = _split(workload)
    server.execute(workload.script_of([*creates, EVOLVE_CREATE]))
    server.flush_binlogs()
    spec = ConnectionSpec.from_url(f"mariadb://root@localhost/?socket={server.socket}")
    with MySQLConnection.connect(spec) as conn:
        catalog, at = seed_from_server(conn)
    server.execute(workload.script_of([*rest, *EVOLVE]))
    files = [f for f in server.flush_binlogs() if f.name >= str(at.file)]
    return Run(server, files, catalog, at, workload)


@pytest.fixture(
    scope="module",
    params=[("FULL", "NO_LOG"), ("MINIMAL", "NO_LOG"), ("FULL", "MINIMAL")],
    ids=["image FULL, NO_LOG", "image MINIMAL, NO_LOG", "image FULL, metadata MINIMAL"],
)
def runs(
    request: pytest.FixtureRequest, mariadb_factory: Callable[..., MariaDBSandbox]
) -> tuple[Run, Run]:
    """The FULL-metadata server and the other one (row image and metadata as the param says)."""
    image, metadata = request.param
    full = mariadb_factory(f"full-{image}", binlog_row_metadata="FULL", binlog_row_image=image)
    bare = mariadb_factory(
        f"{metadata}-{image}", binlog_row_metadata=metadata, binlog_row_image=image
    )
    return _run(full), _run(bare)


def _changes(files: list[Path], schema: SchemaSource | None) -> list[tuple[Any, ...]]:
    out = []
    with binlogkit.open([str(f) for f in files], schema=schema) as events:
        for event in events:
            if isinstance(event, RowsEvent) and event.table is not None:
                rows = [(c.before, c.after) for c in event.rows]
                out.append((event.table.schema, event.table.table_name, event.type_name, rows))
    return out


def _difference(mine: list[Any], theirs: list[Any]) -> str:
    """The first value in which two lists of (before, after) row images differ."""
    for n, (ours, its) in enumerate(zip(mine, theirs, strict=False)):
        for image, a, b in (("before", ours[0], its[0]), ("after", ours[1], its[1])):
            if a != b:
                keys = sorted(set(a or {}) | set(b or {}))
                diff = {k: ((a or {}).get(k), (b or {}).get(k)) for k in keys}
                return f"row {n} {image}: " + repr({k: v for k, v in diff.items() if v[0] != v[1]})
    return f"{len(mine)} rows against {len(theirs)}"


def test_the_seed_is_taken_at_the_binlog_position(runs: tuple[Run, Run]) -> None:
    for run in runs:
        names = {t.name for t in run.seed.tables(run.workload.database)}
        assert names >= {t.name for t in run.workload.tables} | {"evolve"}


def _beyond_utf8mb3(value: Any) -> Any:
    """A value with its characters beyond utf8mb3 as '?', as SHOW CREATE TABLE shows them."""
    if isinstance(value, str):
        return "".join("?" if ord(ch) > 0xFFFF else ch for ch in value)
    if isinstance(value, frozenset):
        return frozenset(_beyond_utf8mb3(v) for v in value)
    return value


def _seen_by_the_seed(changes: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """ENUM/SET values as a server seed knows them: MariaDB's SHOW CREATE TABLE gives its
    members in utf8mb3, so an emoji member is '?' (the seed warns of it)."""
    out = []
    for db, table, kind, rows in changes:
        if table == "t_enum_set":
            rows = [
                tuple(
                    None if image is None else {k: _beyond_utf8mb3(v) for k, v in image.items()}
                    for image in row
                )
                for row in rows
            ]
        out.append((db, table, kind, rows))
    return out


def test_no_log_rows_equal_full_metadata_rows(runs: tuple[Run, Run]) -> None:
    full, bare = runs
    expected = _seen_by_the_seed(_changes(full.files, None))  # the FULL server's own maps
    history = SchemaHistory(bare.seed)
    got = _changes(bare.files, history)
    assert len(got) == len(expected) and len(got) > 100
    for mine, theirs in zip(got, expected, strict=True):
        assert mine == theirs, f"{mine[:3]}: {_difference(mine[3], theirs[3])}"
    assert not history.warnings, [str(w) for w in history.warnings]
    assert {t for t, *_ in [(c[1],) for c in got]} >= {"evolve", "evolved"}


def test_without_a_schema_no_log_rows_are_positional_and_warned(
    runs: tuple[Run, Run], caplog: pytest.LogCaptureFixture
) -> None:
    _, bare = runs
    history = SchemaHistory()  # no seed: the tables were created before these binlogs
    changes = _changes(bare.files, history)
    first = next(c for c in changes if c[1] == "evolve")
    assert all(key.startswith("@") for key in first[3][0][1])
    warned = {w.message.split(":")[0] for w in history.warnings}
    assert "table `bk`.`evolve`" in warned and "binlog_row_metadata=FULL" in caplog.text


def test_replayed_no_log_rows_equal_select(runs: tuple[Run, Run]) -> None:
    """The workload's tables (``evolve`` changes its columns under the replay's feet, and
    ``t_enum_set`` has an emoji member a server seed cannot know: the comparison with the
    FULL server covers both)."""
    _, bare = runs
    result = Replay()
    workload = {t.name for t in bare.workload.tables} - {"t_enum_set"}
    files = [str(f) for f in bare.files]
    with binlogkit.open(
        files, schema=SchemaHistory(bare.seed), tables=lambda _, t: t in workload
    ) as events:
        replay(events, result)
    problems = list(result.problems)
    for table in sorted(workload):
        snap = snapshot(bare.server, bare.workload.database, table)
        image = result.images.get((bare.workload.database, table), [])
        problems += compare(snap, image, lenient=False)  # names and signedness exact
    assert not problems, "\n".join(problems[:30])


def test_history_file_gives_the_schema_of_each_position(
    runs: tuple[Run, Run], tmp_path: Path
) -> None:
    _, bare = runs
    path = tmp_path / "history.jsonl"
    seed = bare.seed
    history = SchemaHistory(seed, path=path, at=bare.seeded_at)
    with binlogkit.open([str(f) for f in bare.files], schema=history) as events:
        positions = [
            (e.header.file, e.header.offset, e.table.table_name)
            for e in events
            if isinstance(e, RowsEvent) and e.table is not None and "evol" in e.table.table_name
        ]
    lines = path.read_text().splitlines()
    assert len(lines) >= len([s for s in EVOLVE if not s.startswith(("INSERT", "UPDATE", "DEL"))])
    again = SchemaHistory.load(path)
    assert again.catalog.table("bk", "evolved") == history.catalog.table("bk", "evolved")
    # At the first row change of the table, the history file gives the first definition.
    file, offset, _ = positions[0]
    early = SchemaHistory.load(path, at=Position(file, offset))
    assert early.catalog.table("bk", "evolve") == seed.table("bk", "evolve")  # the seed's
    assert early.catalog.table("bk", "evolved") is None
    late = SchemaHistory.load(path, at=Position(*positions[-1][:2]))
    evolved = late.catalog.table("bk", "evolved")
    assert evolved is not None and evolved.primary_key == ("k", "id")


@pytest.fixture(scope="module")
def small(mariadb_factory: Callable[..., MariaDBSandbox]) -> MariaDBSandbox:
    """A NO_LOG server with a table created before the binlog that is read."""
    server = mariadb_factory("schema-cli", binlog_row_metadata="NO_LOG")
    server.execute(
        "CREATE DATABASE shop; CREATE TABLE shop.item (id BIGINT UNSIGNED PRIMARY KEY,"
        " name VARCHAR(20) CHARACTER SET utf8mb4, kind ENUM('a', 'b'))"
    )
    server.flush_binlogs()
    return server


def _rows_cli(*args: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(cli, ["rows", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return [jsonenc.loads(line) for line in result.stdout_bytes.splitlines()]


def test_rows_and_schema_commands_take_a_dump_as_schema(
    small: MariaDBSandbox, tmp_path: Path
) -> None:
    dump = tmp_path / "shop.sql"
    dump.write_bytes(
        subprocess.run(
            ["mariadb-dump", "--no-defaults", f"--socket={small.socket}", "--user=root",
             "--no-data", "--databases", "shop"],
            capture_output=True,
            check=True,
        ).stdout
    )  # fmt: skip
    small.execute("INSERT INTO shop.item VALUES (18446744073709551615, 'ünï', 'b')")
    files = [str(f) for f in small.flush_binlogs()[-2:-1]]
    after = {"id": 18446744073709551615, "name": "ünï", "kind": "b"}
    assert [c["after"] for c in _rows_cli("--schema", str(dump), *files)] == [after]
    bare = _rows_cli("--schema", "none", *files)[0]["after"]
    assert bare == {"@1": -1, "@2": "ünï".encode(), "@3": 2}
    history = tmp_path / "h.jsonl"
    shown = CliRunner().invoke(
        cli, ["schema", "--schema", str(dump), "--history", str(history), *files]
    )
    assert shown.exit_code == 0, shown.output
    assert "`id` BIGINT(20) UNSIGNED NOT NULL" in shown.output, shown.output
    assert [c["after"] for c in _rows_cli("--schema", str(history), *files)] == [after]


def test_a_stream_from_now_is_seeded_from_the_server(small: MariaDBSandbox) -> None:
    url = f"mariadb://root@localhost/?socket={small.socket}"
    with binlogkit.open(url, start="now", blocking=False, server_id=4711) as stream:
        small.execute("INSERT INTO shop.item VALUES (7, 'seven', 'a')")
        changes = [c.after for e in stream if isinstance(e, RowsEvent) for c in e.rows]
    assert changes == [{"id": 7, "name": "seven", "kind": "a"}]


def test_unknown_tables_are_read_again_from_the_server(small: MariaDBSandbox) -> None:
    spec = ConnectionSpec.from_url(f"mariadb://root@localhost/?socket={small.socket}")
    with MySQLConnection.connect(spec) as conn:
        seeded, _ = seed_from_server(conn)
        lost = seeded.with_unknown("shop", "item").with_unknown("shop", "gone")
        again = reread_tables(conn, lost, [TableName("shop", "item"), TableName("shop", "gone")])
    assert again.table("shop", "item") == seeded.table("shop", "item")
    assert not again.is_unknown("shop", "item") and not again.is_unknown("shop", "gone")
