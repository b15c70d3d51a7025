"""Column values of real binlogs: against mariadb-binlog's output, and re-encoded byte for byte.

- Every ``###   @N=value`` line that ``mariadb-binlog -vv`` printed for the
  MariaDB 10.11 corpus files is matched by the value we decode (formatted the
  way mariadb-binlog prints that type).
- Every value of every row in the corpus encodes back to the bytes it was
  decoded from.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from corpus_walk import (
    LOCAL_MARIADB,
    corpus_files,
    manifest_row,
    reference_dump,
    reference_dump_path,
    reference_dump_rc,
)
from mysqlbinlog_dump import printed_value, row_statements

import binlogkit
from binlogkit.binlog.context import DecodeOptions
from binlogkit.binlog.rows.columns import COLUMN_CODECS, ColumnCodec, ColumnInfo, ValueDecoder

pytestmark = pytest.mark.corpus


def _dumped_files() -> list[tuple[str, int]]:
    """(binlog, mariadb-binlog exit code) for each local file with a decoded dump."""
    return [
        (name, rc)
        for name in corpus_files()
        if (rc := reference_dump_rc(name)) is not None and reference_dump_path(name) is not None
    ]


def _printed_lines(name: str) -> list[tuple[int, bytes]]:
    """``(N, value)`` of each ``###   @N=value`` line of the file's mariadb-binlog -vv dump."""
    return [
        (number, value.text)
        for row in row_statements(reference_dump(name).split(b"\n"))
        for image in (row.before, row.after)
        for number, value in (image or {}).items()
    ]


def _our_lines(binlog: Path) -> Iterator[tuple[int, bytes]]:
    with binlogkit.open(str(binlog)) as reader:
        for event in reader:
            table = getattr(event, "table", None)
            if table is None or not hasattr(event, "rows"):
                continue
            columns = {c.key: c for c in table.columns}
            for change in event.rows:
                for image in (change.before, change.after):
                    for key, value in (image or {}).items():
                        col = columns[key]
                        yield col.index + 1, printed_value(col, value)


_DUMPED = _dumped_files()


def _local_id(name: str) -> str:
    return name.removeprefix(f"{LOCAL_MARIADB}/")


@pytest.mark.parametrize(
    "binlog",
    [name for name, rc in _DUMPED if rc == 0],
    ids=_local_id,
)
def test_values_match_mariadb_binlog(corpus_dir: Path, binlog: str) -> None:
    expected = _printed_lines(binlog)
    ours = list(_our_lines(corpus_dir / binlog))
    assert len(ours) == len(expected)
    for n, (want, got) in enumerate(zip(expected, ours, strict=True)):
        assert got == want, f"value {n} of {binlog}"


@pytest.mark.parametrize(
    "binlog",
    [name for name, rc in _DUMPED if rc != 0 and "/encrypted/" not in name],
    ids=_local_id,
)
def test_mariadb_hires_temporal_columns_are_refused(corpus_dir: Path, binlog: str) -> None:
    # TIME(3) created with mysql56_temporal_format=OFF: logged as the old TIME
    # without its width; mariadb-binlog fails on it too.
    with pytest.raises(binlogkit.DecodeError, match="old-format TIME"):
        list(_our_lines(corpus_dir / binlog))


def _row_binlogs() -> list[str]:
    """The corpus files with rows events, and the local MariaDB ones."""
    return [
        name
        for name in corpus_files()
        if re.search(r"(?:WRITE|UPDATE|DELETE)_ROWS", manifest_row(name).get("events", ""))
        or (name.startswith(f"{LOCAL_MARIADB}/") and "/encrypted/" not in name)
    ]


def _mirroring(codec: type[ColumnCodec], failures: list[str]) -> type[ColumnCodec]:
    class Mirroring(codec):  # type: ignore[valid-type, misc]
        @classmethod
        def decoder(cls, col: ColumnInfo, options: DecodeOptions) -> ValueDecoder:
            decode, encode = codec.decoder(col, options), codec.encoder(col, options)

            def check(buf: bytes, pos: int) -> tuple[Any, int]:
                value, end = decode(buf, pos)
                out = bytearray()
                encode(value, out)
                if out != buf[pos:end]:
                    failures.append(f"{col.key} type {col.type}: {value!r}")
                return value, end

            return check

        @classmethod
        def layout(cls, col: ColumnInfo, options: DecodeOptions) -> None:
            return None  # generated row readers then call check() for every value

    return Mirroring


_ROW_LIMIT = 3000
"""Rows checked per file and mode, to keep the test quick on the few big files."""


@pytest.mark.parametrize("raw", [False, True], ids=["values", "raw"])
@pytest.mark.parametrize("name", _row_binlogs())
def test_every_value_encodes_back(
    corpus_dir: Path, name: str, raw: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    failures: list[str] = []
    for code, codec in list(COLUMN_CODECS.items()):
        monkeypatch.setitem(COLUMN_CODECS, code, _mirroring(codec, failures))
    decoded = 0
    try:
        with binlogkit.open(str(corpus_dir / name), raw_values=raw) as reader:
            for event in reader:
                if getattr(event, "table", None) is not None and hasattr(event, "rows"):
                    decoded += len(event.rows)
                    if decoded >= _ROW_LIMIT:
                        break
    except binlogkit.BinlogError:
        pass  # a deliberately broken file stops here; the values before were checked
    assert not failures, failures[:5]
