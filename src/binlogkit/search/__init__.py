"""Full-text search over a database's lakehouse mirrors (docs/search.md).

>>> from binlogkit.search import search
>>> for hit in search("/data/index", '"blue widget" OR gadget*', limit=5):
...     print(hit.score, hit.table, hit.key, hit.column, hit.snippet)

The pure core: :mod:`~binlogkit.search.analysis` (text into terms),
:mod:`~binlogkit.search.query` (the query language), :mod:`~binlogkit.search.bm25`
(ranking). :mod:`~binlogkit.search.engine` answers queries from an index's files
(pyarrow and deltalake, imported on first use); the index is built on Spark by
:func:`binlogkit.spark.index`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SearchIndex", "search"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from binlogkit.search import engine

        return getattr(engine, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
