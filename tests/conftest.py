"""Shared fixtures: where the real-binlog corpus is, and its manifest."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("BINLOGKIT_CORPUS", ROOT.parent / "shared" / "corpus"))


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The corpus folder (../shared/corpus or $BINLOGKIT_CORPUS); skips when absent."""
    if not (CORPUS / "MANIFEST.tsv").is_file():
        pytest.skip(f"binlog corpus not found at {CORPUS} (set BINLOGKIT_CORPUS)")
    return CORPUS


def corpus_manifest() -> list[dict[str, str]]:
    """The manifest rows, or [] when the corpus is absent (for parametrisation)."""
    path = CORPUS / "MANIFEST.tsv"
    if not path.is_file():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))
