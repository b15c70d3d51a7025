"""Full-text search over a database's lakehouse mirrors (docs/search.md).

The pure core: :mod:`~binlogkit.search.analysis` (text into terms),
:mod:`~binlogkit.search.query` (the query language), :mod:`~binlogkit.search.bm25`
(ranking); :mod:`~binlogkit.search.engine` answers queries from an index's files.
"""
