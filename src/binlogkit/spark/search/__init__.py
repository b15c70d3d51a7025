"""The search index on Spark: built from a lake's mirrors, kept current from their change
data feed (docs/search.md). :func:`binlogkit.spark.search.build.index` runs it."""
