"""Shared fixtures: the real-binlog corpus."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus_files import CORPUS


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The corpus folder (../shared/corpus or $BINLOGKIT_CORPUS); skips when absent."""
    if not (CORPUS / "MANIFEST.tsv").is_file():
        pytest.skip(f"binlog corpus not found at {CORPUS} (set BINLOGKIT_CORPUS)")
    return CORPUS
