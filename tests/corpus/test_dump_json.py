"""``-v``/``-vv`` of MySQL JSON and VECTOR columns and of partial JSON updates, on the corpus.

No dump of these files by mysqlbinlog is in the corpus, so the known answers
come from the files themselves and from the rules of MySQL's source
(``log_event.cc`` ``log_event_print_value`` / ``print_json_diff``,
``json_dom.cc`` ``Json_wrapper::to_string``):

- the statements the files log (Rows_query texts, CREATE TABLE) and what the
  server derived from the rows (a generated column holding ``$.age``);
- a JSON document's text is MySQL's: ``{"k": v}`` with ``", "`` and ``": "``
  separators and JSON escapes, which Python's ``json.dumps`` writes too for
  documents of strings, integers, booleans, nulls, arrays and objects; it is
  printed in mysqlbinlog's quotes (backslash escapes for ``\\b \\t \\n \\f \\r ' \\``);
- a VECTOR prints each float32 with C's ``%.5e``; its ``-vv`` type is
  ``VECTOR(n)`` with n its declared dimensions.
"""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path
from typing import Any

import pytest
from dump_compare import our_dump
from mysqlbinlog_dump import dump_rows, parse_dump, row_statements

from binlogkit import BinlogDecoder
from binlogkit.binlog.constants import ColumnType as CT
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.binlog.framing import Signal
from binlogkit.binlog.jsonb import JsonEmpty
from binlogkit.binlog.rows.types.values import JSON_NULL
from binlogkit.dump.rows import RowsPrinter, TablePrinter

pytestmark = pytest.mark.corpus

BLACKBEAM = "blackbeam+rust_mysql_common/test-data/binlogs"
MIXED = "avaitla+mysqlbinlog2parquet/test/samples/03-mixed-types.binlog"
JSON_FILES = (
    MIXED,
    "avaitla+mysqlbinlog2parquet/test/samples/mysql-bin-changelog.547927",
    "rusuly+MySqlCdc/samples/MySqlCdc.Sample/mysql-bin.000001",
    f"{BLACKBEAM}/json.binlog.000001",
    f"{BLACKBEAM}/json-opaque.binlog",
)

_UNQUOTE = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", "'": "'", "\\": "\\"}


def sql_unquoted(text: str) -> str:
    """The string inside mysqlbinlog's quotes (its quote table, read backwards)."""
    assert text[0] == "'" and text[-1] == "'", text
    return re.sub(
        r"\\(x[0-9a-f]{2}|.)",
        lambda m: chr(int(m[1][1:], 16)) if len(m[1]) == 3 else _UNQUOTE[m[1]],
        text[1:-1],
    )


def _plain(value: Any) -> bool:
    """Whether a document holds only what Python's json module writes as MySQL does."""
    if isinstance(value, dict):
        return all(_plain(v) for v in value.values())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, str | int)


def _events(path: Path) -> list[Any]:
    dec = BinlogDecoder(file=path.name)
    dec.receive_data(path.read_bytes())
    dec.receive_data(b"")
    events = []
    while not isinstance(event := dec.next_event(), Signal):
        events.append(event)
    return events


@pytest.mark.parametrize("name", JSON_FILES)
def test_json_documents_print_as_mysql_json_text(corpus_dir: Path, name: str) -> None:
    """Each JSON value of ``-vv`` is the document's JSON text in mysqlbinlog's quotes."""
    path = corpus_dir / name
    if not path.exists():
        pytest.skip(f"{name} is not in the corpus")
    tables: dict[int, tuple[TableMapEvent, TablePrinter]] = {}
    printer = RowsPrinter(2)
    checked = 0
    for event in _events(path):
        if isinstance(event, TableMapEvent):
            tables[event.table_id] = (event, TablePrinter.of(event, mysql=True))
        if not isinstance(event, RowsEvent) or event.partial:
            continue
        table, columns = tables[event.table_id]
        json_columns = [c for c in table.columns if c.type == CT.JSON]
        if not json_columns:
            continue
        lines, _ = printer.rows(event, columns)
        printed = row_statements("\n".join(lines).encode("utf-8", "surrogateescape").split(b"\n"))
        assert len(printed) == len(event.rows)
        for row, change in zip(printed, event.rows, strict=True):
            for shown, image in ((row.before, change.before), (row.after, change.after)):
                if image is None:
                    continue
                assert shown is not None
                for col in json_columns:
                    if col.key not in image or image[col.key] is None:
                        continue
                    document = image[col.key]
                    value = shown[col.index + 1]
                    assert value.comment.startswith(b"JSON meta=4 ")
                    inner = sql_unquoted(value.text.decode())
                    if isinstance(document, JsonEmpty) or document is JSON_NULL:
                        assert inner == "null"
                    elif isinstance(document, str):
                        assert inner == document  # a top-level string prints bare
                    elif _plain(document):
                        text = json.dumps(document, ensure_ascii=False, separators=(", ", ": "))
                        assert inner == text, (name, event.header.offset)
                    checked += 1
    assert checked


def test_json_of_the_logged_statements(corpus_dir: Path) -> None:
    """03-mixed-types logs ``JSON_OBJECT('k', 1)`` and ``JSON_ARRAY(1, 2, 3)`` (Rows_query)."""
    dump = our_dump(corpus_dir / MIXED, "-vv", "--base64-output=decode-rows").decode()
    assert "JSON_OBJECT('k', 1)" in dump and "JSON_ARRAY(1, 2, 3)" in dump
    rows = dump_rows(parse_dump(dump.encode()))
    inserted = [r.after[5].text for r in rows if r.verb == "INSERT" and r.after]
    assert inserted == [b"""'{"k": 1}'""", b"'[1, 2, 3]'", b"NULL"]
    assert {r.after[5].comment for r in rows if r.after} >= {
        b"JSON meta=4 nullable=1 is_null=0 */",
        b"JSON meta=4 nullable=1 is_null=1 */",
    }


def test_partial_json_updates(corpus_dir: Path) -> None:
    """Partial updates print as ``JSON_REPLACE(@2, '$.age', N)``.

    The table's ``age`` (@4) is generated from ``json_col->'$.age'``: the
    server logged the new age there, which the diff must set.
    """
    path = corpus_dir / BLACKBEAM / "json.binlog.000001"
    dump = our_dump(path, "-vv", "--base64-output=decode-rows").decode()
    assert "age INT AS (json_col->'$.age')" in dump
    events = parse_dump(dump.encode())
    partial = [e for e in events.values() if e.info.startswith(b"Update_rows_partial")]
    assert len(partial) == 1
    rows = dump_rows({k: v for k, v in events.items() if v is partial[0]})
    assert rows
    for row in rows:
        assert row.before is not None and row.after is not None
        assert set(row.before) == {1}  # the key only
        m = re.fullmatch(rb"JSON_REPLACE\(@2, '\$\.age', (\d+)\)", row.after[2].text)
        assert m, row.after[2]
        assert m[1] == row.after[4].text
        assert row.after[2].comment == b"JSON meta=4 nullable=1 is_null=0 */"


def test_vectors(corpus_dir: Path) -> None:
    """VECTOR values print as ``[%.5e,...]`` of their floats, typed VECTOR(declared size)."""
    path = corpus_dir / BLACKBEAM / "vector.binlog"
    dump = our_dump(path, "-vv", "--base64-output=decode-rows").decode()
    declared = {
        table: [int(n) for n in re.findall(r"VECTOR\((\d+)\)", body)]
        for table, body in re.findall(r"CREATE TABLE (\w+)\((.*?)\)\n", dump)
    }
    assert declared == {"foo": [3], "bar": [2, 4]}
    decoded = [
        change.after or change.before
        for event in _events(path)
        if isinstance(event, RowsEvent)
        for change in event.rows
    ]
    rows = dump_rows(parse_dump(dump.encode()))
    assert len(rows) == len(decoded)
    for row, values in zip(rows, decoded, strict=True):
        image = row.after or row.before
        assert image is not None and values is not None
        table = row.table.decode().split("`.`")[1].rstrip("`")
        dims = iter(declared[table])
        for number, value in image.items():
            key = list(values)[number - 1]
            if not value.comment.startswith(b"VECTOR"):
                continue
            floats = [struct.unpack("<f", struct.pack("<f", f))[0] for f in values[key]]
            assert value.text.decode() == "[" + ",".join(f"{f:.5e}" for f in floats) + "]"
            assert value.comment.startswith(f"VECTOR({next(dims)}) meta=4 ".encode())
