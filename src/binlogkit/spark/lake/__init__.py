"""The lake's Delta tables per source table (change log, mirror, SCD type 2 history) and the
apply of change batches to them (:func:`~binlogkit.spark.lake.batch.apply_batch`)."""
