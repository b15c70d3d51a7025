"""The schema scan gives the catalog a whole decode gives, before every event of the corpus.

:func:`binlogkit.schema.scan.catalogs_at` decodes only format descriptions and
the QUERY events that may be DDL; the known answer is a
:class:`~binlogkit.schema.history.SchemaHistory` shown every event by the
decoder (what ``binlogkit.open`` does). Each corpus file is read up to its
damage, and the two catalogs must be equal at every event start of the v4
files (where event sizes lay a file out, as splits need) and at the end of
every file, in every binlog version and server of the corpus (statement and
row format, MySQL payloads, MariaDB compressed statements).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from corpus_walk import corpus_files, damage_of, decode_up_to_damage, path, read

from binlogkit import BinlogDecoder
from binlogkit.binlog.header import format_description_size
from binlogkit.schema.history import SchemaHistory
from binlogkit.schema.model import Catalog
from binlogkit.schema.scan import catalogs_at

pytestmark = pytest.mark.corpus


def _catalogs(name: str) -> tuple[dict[int, Catalog], Catalog]:
    """Event offset → the catalog in force before it, and the last one, from a whole decode."""
    history = SchemaHistory()
    before = {}
    catalog = history.catalog
    for event, frame in decode_up_to_damage(name, BinlogDecoder(file=name, schema=history)):
        if frame is not None:  # not an event expanded from a transaction payload
            before.setdefault(event.header.offset, catalog)
        catalog = history.catalog
    return before, catalog


def test_scan_catalogs_equal_a_whole_decode(corpus_dir: Path) -> None:
    counts: Counter[str] = Counter()
    for name in corpus_files():
        damage = damage_of(name)
        if damage is not None and damage.offset <= 4:
            continue
        expected, last = _catalogs(name)
        file = str(path(name))
        data = read(name)
        end = damage.offset if damage is not None else len(data)
        # Event starts are points where event sizes lay the file out (v4): where splits start.
        v4 = format_description_size(data, len(data)) > 0
        points = [(file, offset) for offset in sorted(expected) if offset < end and v4]
        history = SchemaHistory()
        got = catalogs_at([(file, 0, end)], points, history, whole=True)
        assert len(got) == len(points)
        for (_, offset), catalog in zip(points, got, strict=True):
            assert catalog == expected[offset], f"{name} at {offset}"
        assert history.catalog == last, name
        counts["files"] += 1
        counts["points"] += len(points)
        counts["points with tables"] += sum(1 for c in got if next(c.tables(), None))
    print(counts)
    assert counts["files"] > 100 and counts["points with tables"] > 10_000
