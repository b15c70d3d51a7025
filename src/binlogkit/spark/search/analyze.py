"""Documents into postings on the executors, one Arrow record batch at a time (``mapInArrow``).

A document is one non-NULL text column of one row: ``(table, key, column, text)``,
``key`` the JSON text of the row's primary-key values. Each is analysed with the
index's :class:`~binlogkit.search.analysis.Analyzer`; one that has no term (empty,
punctuation, stop words only) is no document.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import (
    ArrayType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)
from pyspark.sql.window import Window

from binlogkit.search.analysis import Analyzer
from binlogkit.search.manifest import BATCH_SHIFT, BUCKET_SHIFT, doc_bucket, term_bucket
from binlogkit.spark.lake.tables import quote

__all__ = [
    "DELETES_SCHEMA",
    "DOCS_SCHEMA",
    "POSTINGS_SCHEMA",
    "TERMS_SCHEMA",
    "analysed",
    "docs_of",
    "documents",
    "numbered",
    "postings_of",
]

_TEXT = StringType()
_BATCH = StructField("batch", IntegerType(), False)
"""The batch that wrote a document version: with ``table, key, column`` it names the version."""
_DOC = StructField("doc", LongType(), False)
"""The document version's number (:func:`~binlogkit.search.manifest.doc_number`)."""
POSTINGS_SCHEMA = StructType(
    [
        StructField("term", _TEXT, False),
        StructField("bucket", IntegerType(), False),
        StructField("table", _TEXT, False),
        StructField("key", _TEXT, False),
        StructField("column", _TEXT, False),
        StructField("tf", IntegerType(), False),
        StructField("positions", ArrayType(IntegerType(), False), False),
        StructField("length", IntegerType(), False),
        _BATCH,
        _DOC,
    ]
)
_DOC_FIELDS = [
    StructField("bucket", IntegerType(), False),
    StructField("table", _TEXT, False),
    StructField("key", _TEXT, False),
    StructField("column", _TEXT, False),
    StructField("text", _TEXT, False),
    StructField("length", IntegerType(), False),
]
DOCS_SCHEMA = StructType([*_DOC_FIELDS, _BATCH, _DOC])
TERMS_SCHEMA = StructType([StructField("term", _TEXT, False), StructField("df", LongType(), False)])
"""A change of a term's document frequency (the sum of a term's rows is its frequency)."""
DELETES_SCHEMA = StructType(
    [*(f for f in _DOC_FIELDS if f.name in ("table", "key", "column")), _BATCH, _DOC]
)
"""The document versions replaced or removed by later batches."""

DOCUMENT = "table string, key string, column string, text string"

_TERM = StructType(
    [
        StructField("term", _TEXT, False),
        StructField("bucket", IntegerType(), False),
        StructField("tf", IntegerType(), False),
        StructField("positions", ArrayType(IntegerType(), False), False),
    ]
)
ANALYSED = StructType([*_DOC_FIELDS, StructField("terms", ArrayType(_TERM, False), False)])
"""A document with its row of ``docs`` (but the batch) and its terms."""


def documents(mirror: Any, table: str, columns: Sequence[str], key: Sequence[str]) -> Any:
    """The documents of a mirror's rows (a DataFrame of the mirror's columns)."""
    if not columns:
        return mirror.sparkSession.createDataFrame([], DOCUMENT)
    row_key = F.to_json(F.struct(*(F.col(quote(k)) for k in key)))
    cells = F.array(
        *(F.struct(F.lit(c).alias("column"), F.col(quote(c)).alias("text")) for c in columns)
    )
    rows = mirror.select(F.lit(table).alias("table"), row_key.alias("key"), F.explode(cells))
    return rows.select("table", "key", "col.column", "col.text").where(F.col("text").isNotNull())


def analysed(docs: Any, analyzer: Analyzer, buckets: int, doc_buckets: int) -> Any:
    """Each document (``table, key, column, text``) analysed: :data:`ANALYSED` rows."""
    arrow = to_arrow_schema(ANALYSED)

    def convert(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            out: dict[str, list[Any]] = {name: [] for name in arrow.names}
            rows = zip(
                *(batch.column(n).to_pylist() for n in ("table", "key", "column", "text")),
                strict=True,
            )
            for table, key, column, text in rows:
                tokens = analyzer.terms(text)
                if not tokens:
                    continue
                positions: dict[str, list[int]] = {}
                for term, position in tokens:
                    positions.setdefault(term, []).append(position)
                out["bucket"].append(doc_bucket(table, key, doc_buckets))
                out["table"].append(table)
                out["key"].append(key)
                out["column"].append(column)
                out["text"].append(text)
                out["length"].append(len(tokens))
                out["terms"].append(
                    [
                        {"term": t, "bucket": term_bucket(t, buckets), "tf": len(p), "positions": p}
                        for t, p in positions.items()
                    ]
                )
            yield pa.RecordBatch.from_pydict(out, schema=arrow)

    return docs.mapInArrow(convert, ANALYSED)


def numbered(analysed_docs: Any, batch: int) -> Any:
    """Analysed documents written by ``batch`` with their numbers (``doc``): the batch, the
    ``docs`` partition and the rank in it by table, key and column
    (:func:`~binlogkit.search.manifest.doc_number`), the same on every run of the batch."""
    order = Window.partitionBy("bucket").orderBy("table", "key", "column")
    rank = (F.row_number().over(order) - 1).cast("long")
    number = F.lit(batch << BATCH_SHIFT).cast("long") + F.shiftleft(
        F.col("bucket").cast("long"), BUCKET_SHIFT
    )
    return analysed_docs.withColumn("doc", number + rank)


def docs_of(numbered_docs: Any, batch: int) -> Any:
    """The ``docs`` rows of analysed, :func:`numbered` documents written by ``batch``."""
    names = [f.name for f in _DOC_FIELDS]
    return numbered_docs.select(*names, F.lit(batch).cast("int").alias("batch"), "doc")


def postings_of(numbered_docs: Any, batch: int) -> Any:
    """The ``postings`` rows of analysed, :func:`numbered` documents written by ``batch``."""
    columns = ("table", "key", "column", "length", "doc")
    rows = numbered_docs.select(*columns, F.explode("terms").alias("p"))
    return rows.select(
        "p.term",
        "p.bucket",
        "table",
        "key",
        "column",
        "p.tf",
        "p.positions",
        "length",
        F.lit(batch).cast("int").alias("batch"),
        "doc",
    )
