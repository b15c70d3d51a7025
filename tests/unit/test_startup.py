"""What starting up loads: ``import binlogkit`` and the commands' --version / --help leave the
decoder, the dump and the SQL parser unimported; the public names still resolve."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import binlogkit

HEAVY = (
    "binlogkit.binlog.events",
    "binlogkit.binlog.decoder",
    "binlogkit.binlog.rows.columns",
    "binlogkit.binlog.jsonb",
    "binlogkit.io.files",
    "binlogkit.dump.dumper",
    "binlogkit.dump.formatters",
    "binlogkit.schema.history",
    "binlogkit.services.replica_stream",
    "sqlglot",
    "asyncio",
    "cryptography",
    "pyspark",
    "pyarrow",
    "numpy",
    "deltalake",
)
"""Modules a quick start must not load."""

LOADED = """
import json, sys
{code}
print(json.dumps(sorted(sys.modules)))
"""

RUN_CLI = """
from binlogkit.cli.main import main
try:
    main({args!r})
except SystemExit:
    pass
"""


def loaded_by(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    done = subprocess.run(
        [sys.executable, "-c", LOADED.format(code=code)],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


QUICK = {
    "import binlogkit": "import binlogkit",
    "import errors": "from binlogkit import BinlogError, DecodeError",
    "import dump options": "import binlogkit.dump.options",
    **{
        f"binlogkit {' '.join(args)}": RUN_CLI.format(args=args)
        for args in (
            ["--version"],
            ["--help"],
            ["events", "--help"],
            ["rows", "--help"],
            ["dump", "--help"],
            ["tail", "--help"],
            ["write", "--help"],
            ["search", "--help"],
            ["spark", "search", "--help"],
        )
    },
}


@pytest.mark.parametrize("code", QUICK.values(), ids=QUICK.keys())
def test_a_quick_start_loads_no_decoder(code: str) -> None:
    assert loaded_by(code).isdisjoint(HEAVY), sorted(loaded_by(code) & set(HEAVY))


def test_the_public_names_resolve_on_first_use() -> None:
    modules = loaded_by(
        "import binlogkit\n"
        "names = {n: getattr(binlogkit, n) for n in binlogkit.__all__}\n"
        "assert names['open'].__name__ == 'open_binlog', names['open']\n"
        "assert names['Event'].__module__ == 'binlogkit.binlog.events.base'\n"
        "from binlogkit import *\n"
        "assert encode_event is binlogkit.encode_event and BinlogReader is binlogkit.BinlogReader"
    )
    assert {"binlogkit.binlog.decoder", "binlogkit.io.files", "binlogkit.sources"} <= modules
    assert set(binlogkit.__all__) <= set(dir(binlogkit))
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        binlogkit.nothing  # type: ignore[attr-defined]  # noqa: B018


def test_the_first_dumper_registers_the_formatters() -> None:
    modules = loaded_by(
        "from binlogkit.dump import Dumper, DumpOptions\n"
        "from binlogkit.dump.dumper import FORMATTERS\n"
        "assert not FORMATTERS\n"
        "Dumper(DumpOptions(), print)\n"
        "from binlogkit.binlog.events.query import QueryEvent\n"
        "from binlogkit.binlog.events.payload import TransactionPayloadEvent\n"
        "assert QueryEvent in FORMATTERS and TransactionPayloadEvent in FORMATTERS"
    )
    assert {"binlogkit.dump.formatters", "binlogkit.dump.mysql"} <= modules


@pytest.mark.parametrize(
    "module", ["binlogkit.binlog.jsonb", "binlogkit.binlog.rows.codegen", "binlogkit.jsonenc"]
)
def test_modules_of_an_import_cycle_import_first(module: str) -> None:
    """Once hidden by an ``__init__`` that imported everything in a good order."""
    assert module in loaded_by(f"import {module}")
