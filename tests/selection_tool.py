"""What mariadb-binlog keeps for a set of selection options, next to what Selection keeps.

The tool prints a ``#YYMMDD HH:MM:SS server id N  end_log_pos E ...`` header line
for every event it shows (a filtered event may still get its ``# at`` line), so
the shown events are the end positions of those lines, in order.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

from binlogkit.dump.selection import Selection, read_selected

_HEADER = re.compile(rb"^#\d{6} +\d+:\d\d:\d\d server id \d+ +end_log_pos (\d+) ", re.M)


def tool_kept(files: Sequence[Path], options: Sequence[str]) -> list[int]:
    """End positions of the events ``mariadb-binlog OPTIONS FILES`` shows, in order (TZ=UTC)."""
    done = subprocess.run(
        ["mariadb-binlog", *options, *map(str, files)],
        capture_output=True,
        check=False,
        env={**os.environ, "TZ": "UTC"},  # --start-datetime and --stop-datetime are in UTC
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return [int(m[1]) for m in _HEADER.finditer(done.stdout)]


def our_kept(files: Sequence[Path], selection: Selection) -> list[int]:
    """End positions (log_pos) of the events ``selection`` keeps, in order."""
    return [e.header.log_pos for e in read_selected(files, selection)]
