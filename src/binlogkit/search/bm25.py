"""BM25 ranking (Robertson's, with Lucene's IDF): the score of a document for a query.

A document is one column value of one row: ``(table, primary key, column)``.
Its length is its number of tokens. For each query term ``t`` it holds, with
``tf`` occurrences::

    idf(t)   = ln(1 + (N - df + 0.5) / (df + 0.5))
    score   += idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg_length))

``N``: documents in the index, ``df``: documents that hold ``t``, ``avg_length``:
mean length; ``k1 = 1.2``, ``b = 0.75``. The query terms are those not under a
NOT: plain terms, each term of a phrase, each index term a prefix expands to.
"""

from __future__ import annotations

import math

from binlogkit.binlog.frozen import frozen_dataclass

__all__ = ["K1", "B", "Stats", "idf", "term_score"]

K1 = 1.2
B = 0.75


@frozen_dataclass
class Stats:
    """Collection statistics: how many documents, and their total length."""

    docs: int
    length: int

    @property
    def avg_length(self) -> float:
        return self.length / self.docs if self.docs else 0.0


def idf(docs: int, df: int) -> float:
    return math.log(1.0 + (docs - df + 0.5) / (df + 0.5))


def term_score(tf: int, length: int, avg_length: float, weight: float) -> float:
    """One term's contribution; ``weight`` is its :func:`idf`."""
    norm = 1.0 - B + B * (length / avg_length if avg_length else 0.0)
    return weight * tf * (K1 + 1.0) / (tf + K1 * norm)
