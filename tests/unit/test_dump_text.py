"""The dump's base64 blocks, and long row statements written piece by piece."""

from __future__ import annotations

import base64
import random

import pytest

from binlogkit.dump import Dumper, DumpOptions
from binlogkit.dump import dumper as dumper_module
from binlogkit.dump.text import base64_lines

# Sizes around one line (57 bytes), and around the splitter's block of 1024 lines.
_SIZES = [0, 1, 56, 57, 58, 113, 114, 115, 400, 57 * 1024 - 1, 57 * 1024, 57 * 1024 + 1]
_SIZES += [57 * 2048 + 30, 57 * 3000 + 7]


@pytest.mark.parametrize("size", _SIZES)
def test_base64_lines_are_mime_lines(size: int) -> None:
    # my_base64_encode + newline: 76 characters a line, each line ended, as MIME's
    raw = random.Random(size).randbytes(size)
    assert base64_lines(raw) == base64.encodebytes(raw).decode("ascii")


def _statement(dumper: Dumper, events: int, rows: int) -> None:
    s = dumper.state
    s.head.append("# at 4\n#head line\n")
    s.body.extend(base64_lines(bytes([i % 251]) * (20 + i % 90)) for i in range(events))
    s.tail.extend(f"### INSERT INTO `d`.`t`\n### SET\n###   @1={i}" for i in range(rows))


@pytest.mark.parametrize(("events", "rows"), [(1, 1), (300, 2), (2, 700), (600, 900)])
def test_long_statements_print_as_short_ones(
    monkeypatch: pytest.MonkeyPatch, events: int, rows: int
) -> None:
    """The piece-by-piece path writes the very text of the one-string path."""
    texts = []
    for pieces in (10**9, 3):  # everything in one string, then piece by piece
        monkeypatch.setattr(dumper_module, "_PIECES", pieces)
        out: list[str] = []
        dumper = Dumper(DumpOptions(verbose=1), out.append)
        _statement(dumper, events, rows)
        dumper.flush_statement("# Number of rows: 7\n")
        dumper.drain()
        texts.append("".join(out))
        assert not (dumper.state.head or dumper.state.body or dumper.state.tail)
    assert texts[0] == texts[1]
    assert texts[0].count("BINLOG '\n") == 1
    assert texts[0].endswith(f"###   @1={rows - 1}\n# Number of rows: 7\n")
