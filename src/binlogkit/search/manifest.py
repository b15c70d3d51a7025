"""An index's folder and its manifest, ``INDEX/_search/index.json``: what the index covers.

The index is four Delta tables, ``postings``, ``docs``, ``terms`` and ``deletes``
(docs/search.md). A batch appends to them one after the other, so between two
of its commits they disagree; the manifest is the commit point of the whole: it
names the version of each table that belongs to the last finished batch, with
the mirror versions that batch brought in, the collection statistics and how
much a compaction would clean up. Readers open each table at that version, so
they never see a half-done batch. Before its first write a batch records itself
as ``pending`` (its number, the mirror versions it covers, or that it compacts),
so a rerun after a crash redoes exactly that batch, whose writes Delta then
skips where they were done (transaction ids).
"""

from __future__ import annotations

import json
import os
import zlib
from dataclasses import asdict, field, replace
from pathlib import Path
from typing import Any

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import BinlogError
from binlogkit.search.analysis import Analyzer
from binlogkit.search.bm25 import Stats

__all__ = [
    "CURRENT",
    "FORMAT",
    "GENERATIONS",
    "NUMBERED",
    "TABLES",
    "IndexLayout",
    "Manifest",
    "MirrorRange",
    "Pending",
    "Segment",
    "doc_bucket",
    "doc_number",
    "number_bucket",
    "term_bucket",
]

FORMAT = 3
"""The layout this binlogkit writes: ``postings``, ``docs`` and ``deletes`` carry each document
version's number (:func:`doc_number`), ``postings`` sorted by it within a term."""
NUMBERED = 3
"""The first format with document numbers; an index of an earlier one (format 2) is read only
to be rebuilt (``spark index --rebuild``)."""
READABLE = (2, 3)
TABLES = ("postings", "docs", "terms", "deletes")


def term_bucket(term: str, buckets: int) -> int:
    """The ``postings`` partition of ``term`` (CRC-32 of its UTF-8, modulo ``buckets``)."""
    return zlib.crc32(term.encode("utf-8")) % buckets


def doc_bucket(table: str, key: str, buckets: int) -> int:
    """The ``docs`` partition of a row's documents."""
    return zlib.crc32(f"{table}\0{key}".encode()) % buckets


BATCH_SHIFT = 40
BUCKET_SHIFT = 32
LAST_BATCH = (1 << (63 - BATCH_SHIFT)) - 1
"""The last batch number a document number holds (positive in a signed 64-bit number, as
Parquet and Spark keep it): 8,388,607. Compactions take batch numbers too."""


def doc_number(batch: int, bucket: int, rank: int) -> int:
    """A document version's number: the batch that wrote it, its ``docs`` partition and its
    rank in that batch's documents of the partition by table, key and column (so the numbers
    of one batch and partition are in the order of its ``docs`` file)."""
    return (batch << BATCH_SHIFT) | (bucket << BUCKET_SHIFT) | rank


def number_bucket(number: Any) -> Any:
    """The ``docs`` partition of a document number (an int or a numpy array of them)."""
    return (number >> BUCKET_SHIFT) & ((1 << (BATCH_SHIFT - BUCKET_SHIFT)) - 1)


CURRENT = "current"
"""A symbolic link in an index folder rebuilt in place: to the generation readers open."""
GENERATIONS = "_generations"


@frozen_dataclass
class IndexLayout:
    """The paths of an index folder ``root``. Its manifest and tables are in ``home``: the
    folder itself, or after a rebuild in place the generation that ``root/current`` links to,
    resolved once (when not given), so that one layout never mixes two generations."""

    root: Path
    home: Path

    def __init__(self, root: Path, home: Path | None = None) -> None:
        object.__setattr__(self, "root", root)
        if home is None:
            link = root / CURRENT
            home = root / os.readlink(link) if link.is_symlink() else root
        object.__setattr__(self, "home", home)

    @property
    def manifest(self) -> Path:
        return self.home / "_search" / "index.json"

    @property
    def lake(self) -> Path:
        """The lake kept by the index itself when its source is a server or binlog files."""
        return self.root / "lake"

    def table(self, name: str) -> Path:
        return self.home / name

    def generation(self, number: int) -> IndexLayout:
        """The layout of generation ``number`` of the folder (a rebuild in place)."""
        return IndexLayout(self.root, self.root / GENERATIONS / str(number))


@frozen_dataclass
class MirrorRange:
    """A mirror's versions a batch brings into the index: ``(start, end]``, or everything
    as of ``end`` when ``rebuild``; ``table_id`` is the mirror's Delta table id."""

    start: int
    end: int
    table_id: str
    rebuild: bool = False


@frozen_dataclass
class Segment:
    """The rows of batches ``first`` to ``last`` (appended after the base, merged into one
    segment or not): ``docs`` document versions written, ``dead`` of them replaced or removed
    since (in ``deletes``)."""

    first: int
    last: int
    docs: int
    dead: int = 0


@frozen_dataclass
class Pending:
    """A batch recorded before its first write: the mirror versions it brings in, or (with
    ``compact``) a rewrite of the index without its dead entries: when ``tiered``, of the
    segments of batches ``merge`` (first, last) only, merged into one. ``columns``: the
    tables whose indexed columns the batch changes, with their new columns."""

    batch: int
    mirrors: dict[str, MirrorRange]
    compact: bool = False
    columns: dict[str, tuple[str, ...]] = field(default_factory=dict)
    tiered: bool = False
    merge: tuple[int, int] = (0, 0)

    def __post_init__(self) -> None:
        if self.batch > LAST_BATCH:
            raise BinlogError(
                f"search index batch {self.batch} would pass the last batch number document "
                f"numbers hold ({LAST_BATCH}: a batch takes the top {63 - BATCH_SHIFT} bits of "
                "a signed 64-bit number); nothing was written",
                hint="renumber the index: binlogkit spark index SOURCE --to INDEX --rebuild "
                "(the rebuilt index numbers its batches from 0)",
            )

    def to_json(self) -> dict[str, Any]:
        return {
            "batch": self.batch,
            "mirrors": {t: asdict(r) for t, r in self.mirrors.items()},
            "compact": self.compact,
            "columns": {t: list(c) for t, c in self.columns.items()},
            "tiered": self.tiered,
            "merge": list(self.merge),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], base: int = 0) -> Pending:
        """(``base``: of the manifest; a tiered compaction recorded without ``merge`` merges
        every segment after it.)"""
        mirrors = {t: MirrorRange(**r) for t, r in data["mirrors"].items()}
        columns = {t: tuple(c) for t, c in data["columns"].items()}
        merge = data.get("merge", (base + 1, data["batch"] - 1))
        first, last = merge
        tiered = data.get("tiered", False)
        return cls(data["batch"], mirrors, data["compact"], columns, tiered, (first, last))


@frozen_dataclass
class Manifest:
    """The index's settings and the state of its last finished batch. ``whole``: the tables
    indexed with every text column (``--tables``), whose text columns added later are indexed
    too. ``dead``: the rows of ``deletes`` (document versions replaced or removed, still in
    ``postings`` and ``docs``), ``base_dead`` those of the base (the batches up to ``base``,
    when the index was last written whole); ``tiers``: the segments after the base, in
    order of batch."""

    analyzer: Analyzer
    lake: str
    columns: dict[str, tuple[str, ...]]
    keys: dict[str, tuple[str, ...]]
    app_id: str
    whole: tuple[str, ...] = ()
    buckets: int = 64
    doc_buckets: int = 16
    batch: int = -1
    versions: dict[str, int] = field(default_factory=dict)
    mirrors: dict[str, MirrorRange] = field(default_factory=dict)
    docs: int = 0
    length: int = 0
    dead: int = 0
    tiers: tuple[Segment, ...] = ()
    base: int = 0
    base_dead: int = 0
    pending: Pending | None = None
    format: int = FORMAT
    """The layout of the index's tables (:data:`FORMAT`; 2: without document numbers)."""

    def require_numbered(self, layout: IndexLayout) -> None:
        """Refuse an index of the layout before document numbers (format 2): it must be
        rebuilt in place to be searched or updated."""
        if self.format < NUMBERED:
            raise BinlogError(
                f"index {layout.root} is of format {self.format}, without document numbers: "
                f"this binlogkit searches and updates format {FORMAT}",
                hint=f"rebuild it in place: binlogkit spark index SOURCE --to {layout.root} "
                "--rebuild (with its --stem and --stop-words settings)",
            )

    @property
    def stats(self) -> Stats:
        return Stats(self.docs, self.length)

    @property
    def segments(self) -> int:
        """The segments after the base."""
        return len(self.tiers)

    def with_pending(self, pending: Pending) -> Manifest:
        return replace(self, pending=pending)

    def finished(
        self,
        versions: dict[str, int],
        *,
        docs: int,
        length: int,
        dead: int,
        tiers: tuple[Segment, ...] = (),
        base_dead: int = 0,
        whole: bool = False,
    ) -> Manifest:
        """The manifest after its pending batch: the tables' new versions and statistics
        (``whole``: the batch wrote the index whole)."""
        if self.pending is None:
            raise BinlogError("no pending batch to finish")
        return replace(
            self,
            batch=self.pending.batch,
            versions=versions,
            mirrors={**self.mirrors, **self.pending.mirrors},
            columns={**self.columns, **self.pending.columns},
            docs=docs,
            length=length,
            dead=dead,
            tiers=tiers,
            base=self.pending.batch if whole else self.base,
            base_dead=base_dead,
            pending=None,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "analyzer": self.analyzer.to_json(),
            "lake": self.lake,
            "columns": {t: list(c) for t, c in self.columns.items()},
            "keys": {t: list(k) for t, k in self.keys.items()},
            "app_id": self.app_id,
            "whole": list(self.whole),
            "buckets": self.buckets,
            "doc_buckets": self.doc_buckets,
            "batch": self.batch,
            "versions": self.versions,
            "mirrors": {t: asdict(r) for t, r in self.mirrors.items()},
            "docs": self.docs,
            "length": self.length,
            "dead": self.dead,
            "segments": self.segments,
            "tiers": [asdict(segment) for segment in self.tiers],
            "base": self.base,
            "base_dead": self.base_dead,
            "pending": None if self.pending is None else self.pending.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Manifest:
        pending = data.get("pending")
        base, dead = data.get("base", 0), data["dead"]
        base_dead = data.get("base_dead", dead)
        if "tiers" in data:
            tiers = tuple(Segment(**segment) for segment in data["tiers"])
        else:  # before tiers: the segments after the base, as one of unknown size
            span = Segment(base + 1, data["batch"], 0, dead - base_dead)
            tiers = (span,) if data["segments"] else ()
        return cls(
            analyzer=Analyzer.from_json(data["analyzer"]),
            lake=data["lake"],
            columns={t: tuple(c) for t, c in data["columns"].items()},
            keys={t: tuple(k) for t, k in data["keys"].items()},
            app_id=data["app_id"],
            whole=tuple(data["whole"]),
            buckets=data["buckets"],
            doc_buckets=data["doc_buckets"],
            batch=data["batch"],
            versions=dict(data["versions"]),
            mirrors={t: MirrorRange(**r) for t, r in data["mirrors"].items()},
            docs=data["docs"],
            length=data["length"],
            dead=dead,
            tiers=tiers,
            base=base,
            base_dead=base_dead,
            pending=None if pending is None else Pending.from_json(pending, base),
            format=data["format"],
        )

    def save(self, layout: IndexLayout) -> None:
        from binlogkit.io.atomic import replace_json  # secrets, hmac: not for readers

        layout.manifest.parent.mkdir(parents=True, exist_ok=True)
        replace_json(layout.manifest, self.to_json())

    @classmethod
    def load(cls, layout: IndexLayout) -> Manifest | None:
        """The index's manifest; None when there is none yet."""
        try:
            data = json.loads(layout.manifest.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as err:
            raise BinlogError(f"search index manifest {layout.manifest}: {err}") from None
        if data.get("format") not in READABLE:
            raise BinlogError(
                f"{layout.manifest}: index format {data.get('format')!r}, this binlogkit "
                f"reads formats {', '.join(map(str, READABLE))}",
                hint="build the index again with this version",
            )
        try:
            return cls.from_json(data)
        except (KeyError, TypeError, ValueError) as err:
            raise BinlogError(
                f"search index manifest {layout.manifest}: {type(err).__name__} {err}",
                hint="the file is damaged or not a search index's: build the index again",
            ) from None
