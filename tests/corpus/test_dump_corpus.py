"""``binlogkit dump`` against the dumps the servers' own tools made of the corpus files.

- ``local-mariadb-10.11/<variant>/*.decoded.txt``: ``mariadb-binlog
  --base64-output=decode-rows -vv`` of each file, made in UTC when the corpus
  was built; ours must be equal byte for byte.
- Every MariaDB-written corpus file, when ``mariadb-binlog`` is installed: ours
  must equal its output in the default, ``-vv`` and ``--hexdump`` modes.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import pytest
from corpus_files import CORPUS, corpus_manifest
from dump_compare import TOOL, assert_same_dump, local_time_zone, our_dump, tool_dump

VARIANTS = (
    "full",
    "minimal",
    "noblob",
    "compressed",
    "gtid",
    "nochecksum",
    "mariadb-defaults",
    "minimal-meta",
)

MARIADB_FILES = [row["file"] for row in corpus_manifest() if "MariaDB" in row["server_version"]]


@pytest.fixture
def utc() -> Iterator[None]:
    """Local time is UTC while the test runs (the stored dumps were made in UTC)."""
    with local_time_zone("UTC"):
        yield


def _expected(path: Path) -> bytes:
    plain = path.with_name(path.name + ".decoded.txt")
    if plain.is_file():
        return plain.read_bytes()
    return gzip.decompress(path.with_name(path.name + ".decoded.txt.gz").read_bytes())


@pytest.mark.parametrize("variant", VARIANTS)
def test_local_mariadb_dumps(corpus_dir: Path, utc: None, variant: str) -> None:
    files = sorted((corpus_dir / "local-mariadb-10.11" / variant).glob("mysql-bin.0*[0-9]"))
    assert files
    for path in files:
        args = ("--base64-output=decode-rows", "-vv")
        assert_same_dump(_expected(path), our_dump(path, *args), f"{variant}/{path.name}")


@pytest.mark.skipif(TOOL is None, reason="mariadb-binlog not installed")
@pytest.mark.parametrize("mode", [(), ("-vv",), ("--hexdump",)], ids=["default", "-vv", "hexdump"])
@pytest.mark.parametrize("name", MARIADB_FILES)
def test_mariadb_corpus_files(corpus_dir: Path, name: str, mode: tuple[str, ...]) -> None:
    path = CORPUS / name
    assert_same_dump(tool_dump(path, *mode), our_dump(path, *mode), f"{name} {mode}")
