"""The ``--replicate-*`` options of ``rows`` and ``tail``: malformed values, and a corpus file."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from corpus_walk import LOCAL_MARIADB

from binlogkit import jsonenc
from binlogkit.cli.main import cli
from binlogkit.pipeline.filters import ReplicationFilter


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--replicate-do-table", "shop"], "Invalid value for '--replicate-do-table' / '--table'"),
        (["--table", "shop."], "a table rule is DB.TABLE, not 'shop.'"),
        (["--replicate-wild-ignore-table", "%"], "a table rule is DB.TABLE"),
        (["--replicate-rewrite-db", "a=>b"], "a database rewrite is FROM->TO, not 'a=>b'"),
        (["--include-regex", "(x"], "not a regular expression"),
        (["--filter-flavor", "oracle"], "Invalid value for '--filter-flavor'"),
    ],
)
@pytest.mark.parametrize("command", ["rows", "tail"])
def test_malformed_values(command: str, args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, [command, *args, "x"])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def _changes(*args: str) -> list[dict[str, object]]:
    result = CliRunner().invoke(cli, ["rows", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return [jsonenc.loads(line) for line in result.stdout_bytes.splitlines()]


def test_rows_filter_options(corpus_dir: Path) -> None:
    binlog = str(corpus_dir / LOCAL_MARIADB / "full" / "mysql-bin.000002")
    flt = ReplicationFilter(  # the rules see the rewritten name
        wild_do_table=["copy.t\\_%"],
        ignore_table=["copy.t_int"],
        exclude_regex=[r".*\.t_g.*"],
        rewrite_db={"typesdb": "copy"},
    )
    want = []
    for change in _changes(binlog):
        source = change["source"]
        assert isinstance(source, dict)
        if flt.keeps_table(source["db"], source["table"]):
            want.append({**change, "source": {**source, "db": "copy"}})
    options = ["--replicate-wild-do-table", "copy.t\\_%", "--replicate-ignore-table", "copy.t_int"]
    options += ["--exclude-regex", r".*\.t_g.*", "--replicate-rewrite-db", "typesdb -> copy"]
    got = _changes(*options, binlog)
    assert got == want
    tables = {str(c["source"]["table"]) for c in got}  # type: ignore[index]
    assert {"t_num", "t_json"} <= tables and not {"t_int", "t_geo", "t_gen", "s1"} & tables
