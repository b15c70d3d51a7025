"""Live: the dump's generated row printers equal the plain walk on a real MariaDB's binlogs.

The server runs the workload of :mod:`binlogkit.sandbox.workload` (every
column type, inserts, updates, deletes) with full and minimal row images;
every rows event must print (and count) the same through the generated code
as through the plain walk (see :mod:`compiled_rows_check`).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from compiled_rows_check import Tally, check_rows_printers

import binlogkit
from binlogkit.sandbox import MariaDBSandbox
from binlogkit.sandbox.workload import build_workload, run_workload

pytestmark = [pytest.mark.mariadb, pytest.mark.xdist_group("mariadb")]


@pytest.mark.parametrize("image", ["FULL", "MINIMAL"])
def test_generated_printers_equal_plain(
    mariadb_factory: Callable[..., MariaDBSandbox], image: str
) -> None:
    server = mariadb_factory(f"compiled-{image.lower()}", binlog_row_image=image)
    try:
        run_workload(server, build_workload(small=True))
        files = server.flush_binlogs()[:-1]
    finally:
        server.stop()
    tally = Tally()
    with binlogkit.open([str(f) for f in files]) as events:
        check_rows_printers(events, tally)
    assert tally.compared > 0
    assert tally.generated == tally.compared
