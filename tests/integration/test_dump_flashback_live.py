"""Live: ``binlogkit dump --flashback`` undoes a workload as ``mariadb-binlog --flashback`` does.

A real MariaDB (FULL row images) fills the workload's tables, then changes
them (UPDATEs, DELETEs, REPLACEs, transactions, XA) in a binlog file of their
own. The reversed rows events in ``binlogkit dump --flashback`` of that file
must equal those ``mariadb-binlog --flashback`` prints, byte for byte but the
checksum (which the tool leaves stale), and piping our dump into the
``mariadb`` client must give the tables back as they were before the changes.

Our text is not the tool's: the tool also prints the headers of the events
it read, in file order, before its reversed BINLOG blocks; ours holds only
the undo (see :mod:`binlogkit.dump.flashback`).
"""

from __future__ import annotations

import base64
import re
import subprocess
from pathlib import Path

import pytest
from dump_compare import TOOL, our_run
from flashback_tool import split_events

from binlogkit.sandbox import MariaDBSandbox
from binlogkit.sandbox.workload import build_workload

pytestmark = [
    pytest.mark.xdist_group("mariadb"),
    pytest.mark.skipif(TOOL is None, reason="mariadb-binlog not installed"),
]

_BLOCK = re.compile(rb"BINLOG '\n(.*?)'", re.S)
_PADDED = re.compile(rb"[^=]*=*")
_SESSION = "USE `bk`;\nSET SESSION sql_mode = '';\nSET SESSION time_zone = '+00:00';\n"


def _checksums(server: MariaDBSandbox, tables: list[str]) -> list[tuple[str | None, ...]]:
    return server.query(f"CHECKSUM TABLE {', '.join(f'`bk`.`{t}`' for t in tables)}")


def _rows_events(dump: bytes) -> list[bytes]:
    """The rows events of the BINLOG blocks of a dump, in order.

    The tool encodes each event on its own and joins the texts, so a block
    may hold several base64 texts, each ended by its padding.
    """
    events = []
    for block in _BLOCK.findall(dump):
        text = block.replace(b"\n", b"")
        data = b"".join(base64.b64decode(part) for part in _PADDED.findall(text) if part)
        for raw in split_events(data):
            if raw[4] not in (15, 19):  # format description, table map
                events.append(raw)
    return events


def _tool_flashback(path: Path) -> bytes:
    assert TOOL is not None
    return subprocess.run(
        [TOOL, "--no-defaults", "--flashback", str(path)], capture_output=True, check=True
    ).stdout


def test_dump_flashback_undoes_the_changes(mariadb_factory) -> None:  # type: ignore[no-untyped-def]
    workload = build_workload(small=True)
    fill = 2 * len(workload.tables)
    server = mariadb_factory("dump-flashback")
    server.execute(
        "CREATE DATABASE IF NOT EXISTS bk;\n"
        + _SESSION
        + "".join(f"{s};\n" for s in workload.statements[:fill])
    )
    tables = [t.name for t in workload.tables]
    before = _checksums(server, tables)
    server.flush_binlogs()
    server.execute(_SESSION + "".join(f"{s};\n" for s in workload.statements[fill:]))
    changes: Path = server.flush_binlogs()[-2]
    assert _checksums(server, tables) != before

    ours = our_run("--flashback", str(changes))
    theirs = _rows_events(_tool_flashback(changes))
    assert theirs
    # The tool prints the undo of a statement's events last to first, as we do; compare
    # each reversed event with ours by its end position (kept from the original event).
    by_end = {int.from_bytes(raw[13:17], "little"): raw for raw in _rows_events(ours)}
    assert len(by_end) == len(theirs)
    for raw in theirs:
        end = int.from_bytes(raw[13:17], "little")
        assert by_end[end][:-4] == raw[:-4], f"reversed event ending at {end}"

    done = subprocess.run(server.client_command(), input=ours, capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[:2000]
    assert _checksums(server, tables) == before
