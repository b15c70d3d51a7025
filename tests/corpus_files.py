"""Where the real-binlog corpus is (../shared/corpus or $BINLOGKIT_CORPUS), and its manifest.

A plain module, not a conftest, so tests in any folder can import it by name.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("BINLOGKIT_CORPUS", ROOT.parent / "shared" / "corpus"))


def corpus_manifest() -> list[dict[str, str]]:
    """The manifest rows, or [] when the corpus is absent (for parametrisation)."""
    path = CORPUS / "MANIFEST.tsv"
    if not path.is_file():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))
