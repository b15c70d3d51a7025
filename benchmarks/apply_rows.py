"""Apply throughput on ``local[2]``: JSON images typed by ``mapInArrow``, and whole batches.

Builds a batch of ``--rows`` row changes of one table (``c``/``u``/``d`` over
``--keys`` keys; an INT key, BIGINT UNSIGNED, VARCHAR, DECIMAL, DATETIME, TIME,
SET and VARBINARY columns) as the ``binlog`` source gives them (``CHANGE_SCHEMA``,
images as JSON text), and a schema history file defining the table. It reports
rows/s of

- ``typed (mapInArrow)``: :func:`binlogkit.spark.lake.images.typed_images` into
  Spark's ``noop`` sink;
- ``typed (rdd.map of Rows)``: the same conversion done the way it was done
  before (``rdd.map`` over Row objects, ``createDataFrame``), for comparison;
- ``apply_batch``: the whole apply into a fresh lake (change log, mirror
  MERGE; with ``--scd2`` the history too), after a warm-up batch.

    .venv/bin/python benchmarks/apply_rows.py [--rows 200000] [--keys 20000] [--scd2]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from binlogkit import jsonenc
from binlogkit.schema.model import Catalog
from binlogkit.schema.script import apply_script
from binlogkit.schema.store import HistoryStore, Position
from binlogkit.spark.schema import CHANGE_SCHEMA, typed_schema

DDL = """CREATE TABLE bench.t (id INT PRIMARY KEY, qty BIGINT UNSIGNED, name VARCHAR(40),
price DECIMAL(12,2), at DATETIME(6), took TIME, tags SET('a','b','c'), raw VARBINARY(16))"""


def image(key: int, rng: random.Random) -> dict[str, Any]:
    return {
        "id": key,
        "qty": rng.randrange(2**64),
        "name": f"name {rng.randrange(10**6)}",
        "price": Decimal(rng.randrange(10**8)) / 100,
        "at": datetime(2024, 1, 1) + timedelta(microseconds=rng.randrange(10**13)),
        "took": timedelta(seconds=rng.randrange(-3000000, 3000000)),
        "tags": frozenset(rng.sample(["a", "b", "c"], rng.randrange(4))),
        "raw": rng.randbytes(rng.randrange(17)),
    }


def changes(rows: int, keys: int, file: str) -> list[tuple[Any, ...]]:
    rng = random.Random(7)
    live: dict[int, dict[str, Any]] = {}
    out = []
    ts = datetime(2024, 6, 1)
    for n in range(rows):
        key = rng.randrange(keys)
        old = live.get(key)
        if old is None:
            op, before, after = "c", None, image(key, rng)
        elif rng.random() < 0.1:
            op, before, after = "d", old, None
        else:
            op, before, after = "u", old, image(key, rng)
        if after is None:
            live.pop(key)
        else:
            live[key] = after
        enc = [None if i is None else jsonenc.dumps(i) for i in (before, after)]
        pos = 1000 + 100 * n
        out.append(
            (file, pos, pos + 100, "WRITE_ROWS", 1, None, ts, None, "bench", "t", op, *enc, 0)
        )
    return out


def session() -> Any:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    from binlogkit.spark.delta import with_delta
    from binlogkit.spark.jars import fetch_jars

    jars = fetch_jars(Path(__file__).parents[1] / ".cache" / "jars")
    builder = with_delta(SparkSession.builder, jars).master("local[2]")
    spark = (
        builder.config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.databricks.delta.snapshotPartitions", "1")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def timed(label: str, rows: int, run: Any) -> None:
    start = time.perf_counter()
    run()
    took = time.perf_counter() - start
    print(f"{label:28} {rows:>9} rows {took:7.2f} s {rows / took:>10,.0f} rows/s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--keys", type=int, default=20_000)
    parser.add_argument("--scd2", action="store_true")
    args = parser.parse_args()

    from binlogkit.spark.delta import ApplyOptions, apply_batch
    from binlogkit.spark.lake.evolve import spark_columns
    from binlogkit.spark.lake.images import typed_images

    with tempfile.TemporaryDirectory() as tmp:
        history = Path(tmp, "schema.jsonl")
        catalog = apply_script(Catalog(), "CREATE DATABASE bench;" + DDL).catalog
        HistoryStore(history).record(Position("b.000001", 4), Catalog(), catalog)
        definition = catalog.table("bench", "t")
        assert definition is not None
        columns = spark_columns(definition)
        spark = session()
        data = spark.createDataFrame(changes(args.rows, args.keys, "b.000002"), CHANGE_SCHEMA)
        data = data.repartition(2).persist()
        data.count()

        def old_way() -> None:
            schema = typed_schema(columns)
            names = schema.fieldNames()

            def typed(row: Any) -> tuple[Any, ...]:
                values = row.asDict()
                for side in ("before", "after"):
                    text = values[side]
                    if text is not None:
                        got = jsonenc.loads(text)
                        values[side] = {
                            c.name: None if got[c.name] is None else c.convert(got[c.name])
                            for c in columns
                        }
                return tuple(values[name] for name in names)

            frame = spark.createDataFrame(data.rdd.map(typed), schema)
            frame.write.format("noop").mode("overwrite").save()

        typed = typed_images(data, columns, "bench.t")
        typed.write.format("noop").mode("overwrite").save()  # warm-up
        timed("typed (mapInArrow)", args.rows, lambda: typed.write.format("noop").mode(
            "overwrite").save())  # fmt: skip
        timed("typed (rdd.map of Rows)", args.rows, old_way)
        lake = Path(tmp, "lake")
        warm = spark.createDataFrame(changes(1000, 100, "b.000001"), CHANGE_SCHEMA)
        options = ApplyOptions(history, "b", scd2=args.scd2)
        apply_batch(warm, lake, options, version=0)
        timed(
            "apply_batch" + (" (scd2)" if args.scd2 else ""),
            args.rows,
            lambda: apply_batch(data, lake, options, version=1),
        )
        spark.stop()


if __name__ == "__main__":
    main()
