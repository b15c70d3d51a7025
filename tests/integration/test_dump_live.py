"""Live: ``binlogkit dump`` prints what ``mariadb-binlog`` prints, line for line.

A real MariaDB runs the (small) workload of :mod:`binlogkit.sandbox.workload`
(every column type, inserts, updates, deletes, XA) under several settings;
then ``mariadb-binlog`` and ``binlogkit dump`` print each binlog file in each
output mode and with selections, and the outputs must be equal as a whole.
Nothing is left out: ``mariadb-binlog`` prints no version line of its own in
a dump.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from dump_compare import TOOL, assert_same_dump, our_dump, tool_dump

from binlogkit.sandbox import MariaDBSandbox
from binlogkit.sandbox.server import OptionValue
from binlogkit.sandbox.workload import build_workload, run_workload

pytestmark = [
    pytest.mark.mariadb,
    pytest.mark.xdist_group("mariadb"),
    pytest.mark.skipif(TOOL is None, reason="mariadb-binlog not installed"),
]

VARIANTS: dict[str, dict[str, OptionValue]] = {
    "full": {},
    "minimal": {"binlog_row_image": "MINIMAL"},
    "noblob": {"binlog_row_image": "NOBLOB"},
    "compressed": {"log_bin_compress": True, "log_bin_compress_min_len": 10},
    "gtid-no-checksum": {
        "binlog_checksum": "NONE",
        "server_id": 42,
        "gtid_domain_id": 7,
        "gtid_strict_mode": True,
    },
}

MODES: dict[str, tuple[str, ...]] = {
    "default": (),
    "-v": ("-v",),
    "-vv": ("-vv",),
    "decode-rows": ("--base64-output=decode-rows",),
    "decode-rows -vv": ("--base64-output=decode-rows", "-vv"),
    "hexdump": ("--hexdump",),
    "short-form": ("--short-form",),
    "skip-annotate": ("--skip-annotate-row-events", "-v"),
}


@dataclass(frozen=True, slots=True)
class LiveBinlogs:
    name: str
    files: list[Path]


@pytest.fixture(scope="module", params=list(VARIANTS))
def live(
    request: pytest.FixtureRequest, mariadb_factory: Callable[..., MariaDBSandbox]
) -> LiveBinlogs:
    server = mariadb_factory(f"dump-{request.param}", **VARIANTS[request.param])
    try:
        run_workload(server, build_workload(small=True))
        files = server.flush_binlogs()[:-1]  # the last one is still open
    finally:
        server.stop()
    return LiveBinlogs(request.param, files)


@pytest.mark.parametrize("mode", list(MODES))
def test_dump_equals_mariadb_binlog(live: LiveBinlogs, mode: str) -> None:
    args = MODES[mode]
    assert live.files
    for path in live.files:
        assert_same_dump(tool_dump(path, *args), our_dump(path, *args), f"{path.name} {mode}")


def test_dump_selections_equal_mariadb_binlog(live: LiveBinlogs) -> None:
    path = max(live.files, key=lambda p: p.stat().st_size)  # the one with the workload
    positions = [
        int(line.split()[2])
        for line in tool_dump(path).decode().splitlines()
        if line.startswith("# at ")
    ]
    assert len(positions) > 10
    start, stop = positions[len(positions) // 3], positions[2 * len(positions) // 3]
    for args in (
        (f"--start-position={start}",),
        (f"--stop-position={stop}",),
        (f"--start-position={start}", f"--stop-position={stop}", "-v"),
        ("--database=bk", "-v"),
        ("--database=nosuchdb",),
        ("--table=t_int", "-vv"),
        ("--rewrite-db=bk->other", "-v"),
        ("--do-domain-ids=7",),
        ("--ignore-domain-ids=7",),
        ("--server-id=42",),
    ):
        assert_same_dump(tool_dump(path, *args), our_dump(path, *args), f"{path.name} {args}")
