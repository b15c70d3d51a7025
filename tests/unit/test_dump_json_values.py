"""Printing rules of MySQL's mysqlbinlog for JSON diffs, JSON text and string quoting.

The expected texts follow MySQL 8's ``log_event.cc`` by hand: ``print_json_diff``
names each diff (REPLACE, INSERT, or ARRAY_INSERT when the path ends in ``]``,
REMOVE), opens the calls of each run of like operations from the last run to
the first, then writes ``@N``, each diff's quoted path and value, a ``)`` where a
run ends, and ``",\\n###      "`` between diffs; values print bare (numbers,
booleans, null), quoted (strings) or as ``CAST('...' AS JSON)`` (containers).
``my_b_write_quoted`` escapes ``\\b \\t \\n \\f \\r ' \\`` and other bytes below
0x20 as ``\\xNN``; ``json_dom.cc`` appends ``.0`` to a double printed without a
point or an exponent.
"""

from __future__ import annotations

from binlogkit.binlog.rows.json_diff import JsonDiff, JsonDiffOperation, encode_json_diffs
from binlogkit.dump.json_values import diff_text, json_text
from binlogkit.dump.values import mysql_quoted, quoted

R, INS, X = JsonDiffOperation.REPLACE, JsonDiffOperation.INSERT, JsonDiffOperation.REMOVE
SEP = "\n###      "


def _diffs(*diffs: JsonDiff) -> bytes:
    return encode_json_diffs(diffs)


def test_one_replace() -> None:
    assert diff_text(_diffs(JsonDiff(R, "$.a", 5)), "@2") == "JSON_REPLACE(@2, '$.a', 5)"


def test_runs_of_like_operations_share_a_call() -> None:
    data = _diffs(JsonDiff(R, "$.a", 1), JsonDiff(R, "$.b", "x"), JsonDiff(X, "$.c"))
    assert diff_text(data, "@3") == (
        f"JSON_REMOVE({SEP}JSON_REPLACE(@3, '$.a', 1,{SEP}'$.b', 'x'),{SEP}'$.c')"
    )


def test_inserts_into_arrays_and_objects() -> None:
    data = _diffs(JsonDiff(INS, "$.k", [1, True]), JsonDiff(INS, "$.l[0]", {"z": None}))
    assert diff_text(data, "@1") == (
        f"JSON_ARRAY_INSERT({SEP}JSON_INSERT(@1, '$.k', CAST('[1, true]' AS JSON)),"
        f"{SEP}'$.l[0]', CAST('{{\"z\": null}}' AS JSON))"
    )


def test_no_diffs_print_the_column() -> None:
    assert diff_text(b"", "@4") == "@4"


def test_bad_operation() -> None:
    assert diff_text(b"\x07", "@1") == (
        "Error reading operation type (invalid operation code) while printing JSON diff\n"
    )


def test_json_text() -> None:
    assert json_text({"a": 1.0, "b": [2.5, -0.0, 1e20]}) == '{"a": 1.0, "b": [2.5, -0.0, 1e20]}'
    assert json_text('a"b\\\n\x01') == 'a"b\\\n\x01'  # a top-level string is bare
    assert json_text(['a"b\\\n\x01']) == '["a\\"b\\\\\\n\\u0001"]'


def test_quoting() -> None:
    raw = b"'\\\n\t\x01x"
    assert mysql_quoted(raw) == "'\\'\\\\\\n\\t\\x01x'"
    assert quoted(raw) == "''\\\\x0a\\x09\\x01x'"
