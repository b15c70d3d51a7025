"""The dump's generated row printers equal the plain walk on the rows events of the corpus.

See :mod:`compiled_rows_check`: in each mode (row count, ``-v``, ``-vv``) the
printer the dump uses must give what the plain column-by-column walk gives,
and so must the generated code whenever it prints by itself. The largest
files are checked on their first rows events only, to stay fast.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from compiled_rows_check import Tally, check_rows_printers
from corpus_walk import LOCAL_MARIADB, corpus_files, decode_up_to_damage

from binlogkit import BinlogDecoder
from binlogkit.errors import EncryptedBinlogError

LIMIT = 300


@pytest.mark.parametrize("name", corpus_files())
def test_generated_printers_equal_plain(corpus_dir: Path, name: str) -> None:
    tally = Tally()
    try:
        events = (e for e, _ in decode_up_to_damage(name, BinlogDecoder(file=name)))
        check_rows_printers(events, tally, LIMIT)
    except EncryptedBinlogError:
        pytest.skip("an encrypted binlog")
    if name.startswith(f"{LOCAL_MARIADB}/") and tally.compared:
        # The workload's files (every column type): the generated code prints them itself.
        assert tally.generated > 0
