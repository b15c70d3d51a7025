"""``binlogkit write``: rows from JSON lines, CSV and Parquet as a binlog of inserts.

The same rows given in each input format give binlogs whose rows binlogkit
reads back as the same Python values (text turned into each column's type:
decimals, date-times with fractions, zero dates, TIME beyond a day and
negative, SET members, JSON, INET6 and UUID addresses). Bad input stops the
command with an error naming the line and the column, and leaves the target
as it was and no temporary file beside it.
"""

from __future__ import annotations

import csv
import json
import os
import uuid
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import binlogkit
from binlogkit.binlog.rows.types import ZERO_DATE
from binlogkit.cli.main import cli

SCHEMA = (
    "CREATE TABLE t (id INT NOT NULL PRIMARY KEY, n TINYINT UNSIGNED, amount DECIMAL(8,3),"
    " at DATETIME(3), ts TIMESTAMP(6) NULL, d DATE, span TIME(1), name VARCHAR(5),"
    " tags SET('a','b','c'), doc JSON, ip INET6, u UUID) DEFAULT CHARSET=utf8mb4"
)
HEADER = ["id", "n", "amount", "at", "ts", "d", "span", "name", "tags", "doc", "ip", "u"]
TEXT_ROWS = [
    [
        "1",
        "255",
        "-12.5",
        "2024-02-29 23:59:59.125",
        "2024-01-02 03:04:05.000001",
        "0000-00-00",
        "-838:59:59.5",
        "néé",
        "a,c",
        '{"k": [1, 2.5]}',
        "2001:db8::1",
        "12345678-1234-5678-1234-567812345678",
    ],
    ["2", None, None, None, None, None, None, None, None, None, None, None],
]
EXPECTED: list[dict[str, Any]] = [
    {
        "id": 1,
        "n": 255,
        "amount": Decimal("-12.500"),
        "at": datetime(2024, 2, 29, 23, 59, 59, 125000),
        "ts": datetime(2024, 1, 2, 3, 4, 5, 1, tzinfo=UTC),
        "d": ZERO_DATE,
        "span": -timedelta(hours=838, minutes=59, seconds=59, microseconds=500000),
        "name": "néé",
        "tags": frozenset({"a", "c"}),
        "doc": '{"k": [1, 2.5]}',
        "ip": bytes.fromhex("20010db8000000000000000000000001"),
        "u": uuid.UUID("12345678-1234-5678-1234-567812345678").bytes,
    },
    dict.fromkeys(HEADER, None) | {"id": 2},
]


def _write(source: Path, target: Path, *extra: str, schema: str = SCHEMA) -> Any:
    args = ["write", "--table", "db.t", "--schema", schema, str(source), "--to", str(target)]
    return CliRunner().invoke(cli, [*args, *extra])


def _rows(path: Path) -> list[Any]:
    with binlogkit.open(path, schema=None) as events:
        return [change.after for event in events for change in getattr(event, "rows", ())]


def _inputs(folder: Path) -> dict[str, Path]:
    records = [dict(zip(HEADER, row, strict=True)) for row in TEXT_ROWS]
    jsonl = folder / "rows.jsonl"
    jsonl.write_text("".join(json.dumps(record) + "\n" for record in records))
    table = folder / "rows.csv"
    with open(table, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(HEADER)
        writer.writerows([["\\N" if v is None else v for v in row] for row in TEXT_ROWS])
    parquet = folder / "rows.parquet"
    pq.write_table(pa.Table.from_pylist(records), parquet)
    return {"jsonl": jsonl, "csv": table, "parquet": parquet}


@pytest.mark.parametrize("kind", ["jsonl", "csv", "parquet"])
def test_each_input_format_gives_the_rows(tmp_path: Path, kind: str) -> None:
    source = _inputs(tmp_path)[kind]
    target = tmp_path / "out-bin.000001"
    result = _write(source, target)
    assert result.exit_code == 0, result.output
    assert _rows(target) == EXPECTED
    assert [type(v) for v in _rows(target)[0].values()] == [type(v) for v in EXPECTED[0].values()]


def test_typed_json_and_compressed_mysql(tmp_path: Path) -> None:
    source = tmp_path / "rows.jsonl"
    record = {**dict.fromkeys(HEADER), "id": 3, "amount": {"$decimal": "1.5"}, "doc": {"a": None}}
    source.write_text(json.dumps(record) + "\n")
    target = tmp_path / "out.bin"
    result = _write(source, target, "--flavor", "mysql", "--compress")
    assert result.exit_code == 0, result.output
    with binlogkit.open(target, schema=None) as events:
        kinds = [event.type_name for event in events]
    assert "TRANSACTION_PAYLOAD" in kinds
    row = _rows(target)[0]
    assert (row["amount"], row["doc"]) == (Decimal("1.500"), {"a": None})


def _line(**values: Any) -> str:
    return json.dumps(dict.fromkeys(HEADER) | {"id": 1} | values)


def test_typed_parquet(tmp_path: Path) -> None:
    """Parquet's own types (decimal, timestamp, date, binary) go in as they are."""
    source = tmp_path / "rows.parquet"
    table = pa.table(
        {
            "id": pa.array([7], pa.int64()),
            "amount": pa.array([Decimal("-1.250")], pa.decimal128(8, 3)),
            "at": pa.array([datetime(2024, 5, 6, 7, 8, 9, 123000)], pa.timestamp("us")),
            "d": pa.array([datetime(1999, 12, 31).date()], pa.date32()),
            "ip": pa.array([bytes(15) + b"\x01"], pa.binary(16)),
        }
    )
    pq.write_table(table, source)
    schema = (
        "CREATE TABLE t (id INT PRIMARY KEY, amount DECIMAL(8,3), at DATETIME(3), d DATE, ip INET6)"
    )
    target = tmp_path / "out"
    result = _write(source, target, schema=schema)
    assert result.exit_code == 0, result.output
    assert _rows(target) == [
        {
            "id": 7,
            "amount": Decimal("-1.250"),
            "at": datetime(2024, 5, 6, 7, 8, 9, 123000),
            "d": datetime(1999, 12, 31).date(),
            "ip": bytes(15) + b"\x01",
        }
    ]


BAD = [
    (_line(n=256), "line 2, column n", "256"),
    (_line(amount="12345.6789"), "line 2, column amount", "more than the 3 decimals"),
    (_line(at="2024-01-02 03:04:05.1234"), "line 2, column at", "more digits than the column's 3"),
    (_line(name="abcdef"), "line 2, column name", "6 characters, more than the column's 5"),
    (_line(tags="a,z"), "line 2, column tags", "'z'"),
    (_line(ip="not an address"), "line 2, column ip", "not an INET6 address"),
    (_line(id="x"), "line 2, column id", "not an integer"),
    (_line(id=None), "line 2, column id: NULL in a NOT NULL column", None),
    ('{"id": 1}', "line 2, column n: missing", None),
    (_line(nope=2), "line 2: 'nope' is not a column of db.t", None),
    ('{"id": 1, "n": 1', "line 2: not JSON", None),
    ("[1, 2]", "line 2: not a JSON object", None),
    ('{"id": "\xff"}', "line 2: not JSON", "utf-8"),
]


@pytest.mark.parametrize(("line", "where", "why"), BAD)
def test_bad_input_names_line_and_column(
    tmp_path: Path, line: str, where: str, why: str | None
) -> None:
    good = _line(id=9)
    source = tmp_path / "rows.jsonl"
    text = f"{good}\n{line}\n{good}\n"
    source.write_bytes(text.encode("latin-1" if "\xff" in line else "utf-8"))  # \xff: bad UTF-8
    target = tmp_path / "out-bin.000001"
    target.write_bytes(b"old")
    result = _write(source, target)
    assert result.exit_code == 1
    assert f"{source} {where}" in result.output
    if why is not None:
        assert why in result.output
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out-bin.000001", "rows.jsonl"]


def test_bad_csv(tmp_path: Path) -> None:
    source = tmp_path / "rows.csv"
    schema = "CREATE TABLE t (id INT, n INT)"
    source.write_text("id,n\n1,2\n3,4,5\n")
    result = _write(source, tmp_path / "out", schema=schema)
    assert result.exit_code == 1
    assert f"{source} line 3: more fields than the header names" in result.output
    source.write_text("id,n\n1,2\n3\n")
    result = _write(source, tmp_path / "out", schema=schema)
    assert f"{source} line 3, column n: missing" in result.output
    source.write_text('id,n\n1,"2\n')
    result = _write(source, tmp_path / "out", schema=schema)
    assert "broken CSV" in result.output
    assert not (tmp_path / "out").exists()


def test_rows_output_goes_back_in(tmp_path: Path) -> None:
    """The after images ``binlogkit rows --format jsonl`` prints, written again with
    ``binlogkit write``, give the same rows: the JSON encoding goes both ways."""
    first = tmp_path / "first.bin"
    assert _write(_inputs(tmp_path)["jsonl"], first).exit_code == 0
    printed = CliRunner().invoke(cli, ["rows", "--format", "jsonl", str(first)])
    assert printed.exit_code == 0, printed.output
    again = tmp_path / "again.jsonl"
    after = [json.dumps(json.loads(line)["after"]) for line in printed.stdout.splitlines()]
    again.write_text("".join(line + "\n" for line in after))
    second = tmp_path / "second.bin"
    result = _write(again, second)
    assert result.exit_code == 0, result.output
    assert _rows(second) == _rows(first) == EXPECTED


def test_output_synced_before_and_after_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole file reaches the disk before it takes the target's name, and the name after."""
    steps: list[tuple[str, str]] = []
    fsync, rename = os.fsync, os.replace

    def record_fsync(fd: int) -> None:
        steps.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        fsync(fd)

    def record_replace(source: Any, target: Any) -> None:
        steps.append(("rename", str(target)))
        rename(source, target)

    monkeypatch.setattr(os, "fsync", record_fsync)
    monkeypatch.setattr(os, "replace", record_replace)
    target = tmp_path / "out" / "out-bin.000001"
    target.parent.mkdir()
    result = _write(_inputs(tmp_path)["jsonl"], target)
    assert result.exit_code == 0, result.output
    renamed = steps.index(("rename", str(target)))
    written = steps[renamed - 1]
    assert written[0] == "fsync" and written[1].endswith("/import.000001"), steps
    assert steps[renamed + 1] == ("fsync", str(target.parent)), steps
    assert _rows(target) == EXPECTED
