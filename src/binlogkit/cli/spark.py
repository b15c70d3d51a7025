"""``binlogkit spark``: Spark jobs over binlog archives (needs the ``spark`` extra).

Also a script for spark-submit, which runs this group's commands directly::

    spark-submit --master URL binlogkit/cli/spark.py ingest SOURCE --to LAKE
"""

from __future__ import annotations

import click

from binlogkit.cli.main import command, reading_errors

_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def _size(text: str) -> int:
    """``512M``, ``2G``, ``65536``: a byte count."""
    unit = text[-1:].upper() if text[-1:].isalpha() else ""
    try:
        value = int(text[: len(text) - len(unit)]) * _SIZE_UNITS[unit]
    except (KeyError, ValueError):
        raise click.BadParameter(f"{text!r}: give bytes, or a number with K, M or G") from None
    if value < 1:
        raise click.BadParameter("must be positive")
    return value


@command("spark", cls=click.Group)
def spark_group() -> None:
    """Spark jobs over binlog archives (pip install 'binlogkit[spark]')."""


assert isinstance(spark_group, click.Group)


@spark_group.command("ingest")
@click.argument("sources", nargs=-1, required=True, metavar="SOURCE...")
@click.option(
    "--to",
    "lake",
    required=True,
    type=click.Path(file_okay=False),
    help="The lake folder: the table is LAKE/changes, the ledger LAKE/_binlogkit.",
)
@click.option(
    "--master",
    metavar="URL",
    help="Spark master (local[4], spark://host:7077, yarn ...); default: the Spark settings, "
    "else local[*].",
)
@click.option(
    "--table",
    "tables",
    multiple=True,
    metavar="DB.TABLE",
    help="Only this table (repeatable); a lake keeps the tables it was made with.",
)
@click.option(
    "--batch-size",
    default="512M",
    show_default=True,
    metavar="SIZE",
    help="Binlog bytes per batch; each batch is committed on its own.",
)
@click.option(
    "--split-size",
    metavar="SIZE",
    help="Bytes per Spark partition on average; default: one per core, between 1M and 64M.",
)
@click.option(
    "--schema",
    metavar="FILE|none",
    help="Seed a new lake's schema history, which names the columns of binlogs logged without "
    "binlog_row_metadata=FULL: a .sql file of CREATE statements (mariadb-dump --no-data) or a "
    ".jsonl history; later runs go on with the lake's own. none: the binlog's own columns.",
)
def ingest_command(
    sources: tuple[str, ...],
    lake: str,
    master: str | None,
    tables: tuple[str, ...],
    batch_size: str,
    split_size: str | None,
    schema: str | None,
) -> None:
    """Append the row changes of binlog SOURCE files (paths, a directory, a glob) to LAKE.

    The change log is a Parquet table partitioned by db, table and date
    (read it with spark.read.parquet("LAKE/changes")). Files already ingested
    are skipped, grown ones are read on from where the last run stopped, and a
    run that was interrupted can simply be run again: each change is stored once.
    Progress goes to stderr: files done, the running batch's Spark tasks every
    few seconds, rows and rows/s.
    """
    batch_bytes = _size(batch_size)
    try:
        from binlogkit.spark.ingest import IngestProgress, ingest, spark_session
    except ImportError as err:
        raise click.ClickException(
            f"{err}: binlogkit spark needs pyspark and pyarrow (pip install 'binlogkit[spark]')"
        ) from err

    def show(progress: IngestProgress) -> None:
        click.echo(f"binlogkit spark ingest: {progress}", err=True)

    with reading_errors():
        spark = spark_session(master)
        report = ingest(
            spark,
            list(sources),
            lake,
            tables=tables,
            batch_bytes=batch_bytes,
            split_size=None if split_size is None else _size(split_size),
            progress=show,
            schema="auto" if schema is None else None if schema.lower() == "none" else schema,
        )
    if report.rolled_back:
        click.echo(f"rolled back unfinished batches: {', '.join(report.rolled_back)}", err=True)
    click.echo(
        f"binlogkit spark ingest: {report.rows} rows from {report.files} files "
        f"in {len(report.batches)} batches ({report.skipped} files already ingested), "
        f"{report.seconds:.1f} s",
        err=True,
    )


if __name__ == "__main__":
    spark_group.main(prog_name="binlogkit spark")
