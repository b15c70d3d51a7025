"""Shared fixtures: the real-binlog corpus and throwaway MariaDB servers.

A test that uses ``mariadb_factory`` (directly or through another fixture) is
marked ``mariadb``. Without a MariaDB server on the machine those tests skip,
except in CI (the ``CI`` environment variable set), where they fail: CI must
install the server, and a silent skip would hide that it did not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from corpus_files import CORPUS
from corpus_walk import corpus_files
from hypothesis import settings
from missing_tool import missing_tool
from tls_certs import tls_files, tls_mariadb  # noqa: F401  (fixtures for every test folder)

import binlogkit
from binlogkit.errors import BinlogError
from binlogkit.pipeline.changes import row_changes
from binlogkit.sandbox import DatadirTemplates, MariaDBSandbox, mariadbd_path
from binlogkit.sandbox.server import OptionValue

# Hypothesis's per-example deadline is a timing assertion: on a loaded two-core machine a
# correct example can take longer than 200 ms. Examples are still bounded by their count.
settings.register_profile("binlogkit", deadline=None)
settings.load_profile("binlogkit")


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The corpus folder (../shared/corpus or $BINLOGKIT_CORPUS); skips when absent."""
    if not (CORPUS / "MANIFEST.tsv").is_file():
        pytest.skip(f"binlog corpus not found at {CORPUS} (set BINLOGKIT_CORPUS)")
    return CORPUS


ServerFactory = Callable[..., MariaDBSandbox]


def pytest_configure(config: pytest.Config) -> None:
    # pytest-xdist's --dist loadgroup hands out its work units (an xdist_group, or a test)
    # most tests first; in collection order instead, the long units first (below).
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


@pytest.hookimpl(tryfirst=True)  # before xdist names the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks ``mariadb`` tests; groups tests for xdist by module; puts the long modules first.

    A test that uses Spark or is in an ``xdist_group`` runs on the worker that runs the rest
    of its module (its module's fixtures, a server or a Spark table, are made once; each
    worker starts its own JVM once). Modules with Spark and MariaDB tests come first, then
    Spark, then MariaDB, then the rest (quick tests that fill in at the end): on two workers
    the suite does not end with one worker running a long module alone.
    """
    rank: dict[Path, int] = {}
    for item in items:
        names = getattr(item, "fixturenames", ())
        if "mariadb_factory" in names:
            item.add_marker(pytest.mark.mariadb)
        if "spark" in names or item.get_closest_marker("xdist_group") is not None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
        mine = 3 - 2 * ("spark" in names) - ("mariadb_factory" in names)
        rank[item.path] = min(rank.get(item.path, 3), mine)
    items.sort(key=lambda item: rank[item.path])


@pytest.fixture(scope="session")
def mariadb_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerFactory]:
    """Starts throwaway MariaDB servers: ``mariadb_factory(name, **options)``.

    Each call starts a new server in its own temp folder with the given server
    options (on top of :data:`binlogkit.sandbox.DEFAULT_OPTIONS`) and returns the
    running :class:`~binlogkit.sandbox.MariaDBSandbox`, its data directory a copy
    of one ``mariadb-install-db`` made once. A test may stop it early; every server
    still running is stopped at the end of the session, all side by side.
    """
    if mariadbd_path() is None:
        reason = (
            "MariaDB server not installed (no mariadbd on PATH or in /usr/sbin); "
            "run scripts/test.sh, or apt-get install mariadb-server mariadb-client"
        )
        missing_tool(reason)
    started: list[MariaDBSandbox] = []
    templates = DatadirTemplates(tmp_path_factory.mktemp("datadir-templates"))

    def start(name: str = "server", **options: OptionValue) -> MariaDBSandbox:
        base = tmp_path_factory.mktemp(re.sub(r"[^A-Za-z0-9_-]", "_", name))
        server = MariaDBSandbox(Path(base), options=options, templates=templates)
        started.append(server)
        return server.start()

    try:
        yield start
    finally:
        for server in started:
            server.begin_stop()
        for server in started:
            server.stop()


@pytest.fixture(scope="session")
def clean_corpus_files(corpus_dir: Path) -> tuple[Path, ...]:
    """Corpus files up to 300 kB that the plain reader decodes whole, rows included."""
    found = []
    for name in corpus_files():
        path = corpus_dir / name
        if path.stat().st_size > 300_000:
            continue
        try:
            with binlogkit.open(str(path)) as reader:
                for change in row_changes(reader):
                    change.to_dict()
        except BinlogError:
            continue
        found.append(path)
    return tuple(found)
