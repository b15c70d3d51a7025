"""``binlogkit spark``: Spark jobs over binlog archives (needs the ``spark`` extra).

``ingest`` appends binlog files to a Parquet change log; ``sync`` mirrors a
server's tables into Delta tables (snapshot, then the binlog), ``apply`` does
the same from a folder of binlogs, ``status`` shows a lake, ``maintain`` compacts
and vacuums its tables.

Also a script for spark-submit, which runs this group's commands directly::

    spark-submit --master URL binlogkit/cli/spark.py ingest SOURCE --to LAKE
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

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


_LAKE = click.option(
    "--to",
    "lake",
    required=True,
    type=click.Path(file_okay=False),
    help="The lake folder, local or a URI Spark reaches (s3a://, abfss://, gs://, hdfs://): "
    "LAKE/DB/TABLE/{mirror,changes,history} Delta tables, binlogkit's state in LAKE/_binlogkit.",
)
_TABLES = click.option(
    "--tables",
    "tables",
    multiple=True,
    metavar="DB.TABLE",
    help="Only these tables (repeatable, or comma-separated); default: all but the server's "
    "own. A lake keeps the tables it was made with.",
)
_SCD2 = click.option(
    "--scd2", is_flag=True, help="Keep SCD type 2 history tables too (LAKE/DB/TABLE/history)."
)
_ONCE = click.option(
    "--once",
    is_flag=True,
    help="Stop once caught up with the source (for cron and tests); default: run until "
    "stopped (Ctrl-C, SIGTERM).",
)
_MASTER = click.option(
    "--master",
    metavar="URL",
    help="Spark master (spark://host:7077, yarn ...); default: local[*] (under spark-submit: "
    "its session).",
)
_TRIGGER = click.option(
    "--trigger",
    default="1 second",
    show_default=True,
    metavar="INTERVAL",
    help="The micro-batch interval.",
)
_MAINTAIN_EVERY = click.option(
    "--maintain-every",
    default=60.0,
    show_default=True,
    type=click.FloatRange(min=0),
    metavar="MINUTES",
    help="Compact and vacuum the lake's tables (as spark maintain) every MINUTES, between "
    "micro-batches; 0: never.",
)


def _retain(flag: str, help: str) -> Callable[[Any], Any]:
    """The option of the hours VACUUM keeps (Delta's default 168) as ``retain_hours``."""
    return click.option(
        flag,
        "retain_hours",
        default=168.0,
        show_default=True,
        type=click.FloatRange(min=0),
        metavar="HOURS",
        help=help,
    )


def _table_names(tables: tuple[str, ...]) -> list[str]:
    return [name.strip() for item in tables for name in item.split(",") if name.strip()]


def _show(command: str) -> Callable[[object], None]:
    from binlogkit.spark.sync_progress import describe

    def show(progress: object) -> None:
        click.echo(f"binlogkit spark {command}: {describe(progress)}", err=True)

    return show


@contextmanager
def _pipeline_errors() -> Iterator[None]:
    """One line for every failure, never a traceback; Ctrl-C ends quietly."""
    try:
        with reading_errors():
            yield
    except ImportError as err:
        raise click.ClickException(
            f"{err}: binlogkit spark needs pyspark, pyarrow and delta-spark "
            "(pip install 'binlogkit[spark]')"
        ) from err
    except KeyboardInterrupt:
        click.echo("stopped", err=True)
        raise SystemExit(130) from None
    except click.ClickException:
        raise
    except Exception as err:  # Spark, Py4J, the JVM: their first line says what
        lines = str(err).strip().splitlines() or [type(err).__name__]
        raise click.ClickException(f"{type(err).__name__}: {lines[0]}") from err


def _pipeline(command: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator: the options ``sync`` and ``apply`` share."""
    for option in reversed((_LAKE, _TABLES, _SCD2, _ONCE, _MASTER, _TRIGGER, _MAINTAIN_EVERY)):
        command = option(command)
    return command


def _run(command: str, source: str, lake: str, tables: tuple[str, ...], **options: Any) -> None:
    """Run ``sync`` or ``apply`` with progress on stderr, and say what it applied."""
    with _pipeline_errors():
        from binlogkit.spark import lakehouse

        run = lakehouse.sync if command == "sync" else lakehouse.apply
        names = _table_names(tables) or None
        report = run(source, lake, tables=names, progress=_show(command), **options)
    click.echo(
        f"binlogkit spark {command}: {report.rows:,} row changes in {report.batches} "
        "micro-batches applied",
        err=True,
    )


@spark_group.command("sync")
@click.argument("url")
@_pipeline
@click.option(
    "--failover",
    is_flag=True,
    help="URL is another server than the lake's (a replica that took over): go on there "
    "from the checkpoint's GTID position (MariaDB)",
)
@click.option(
    "--resnapshot",
    multiple=True,
    metavar="DB.TABLE",
    help="Read these tables of a streaming lake again from the server (repeatable, or "
    "comma-separated): what the apply tells to do where it stops for a table; the stream "
    "goes on from its checkpoint.",
)
def sync_command(
    url: str, lake: str, tables: tuple[str, ...], resnapshot: tuple[str, ...], **options: Any
) -> None:
    """Mirror the tables of the server at URL (mariadb://user:pw@host) into Delta tables in LAKE.

    A consistent snapshot first (resumed if an earlier run stopped in it), then
    the binlog from the snapshot's position, applied exactly once per micro-batch:
    each table gets a mirror equal to the source table and a change log. Run it
    again after a crash or stop: it goes on where it stopped. Progress goes to stderr.
    After a failover, run it with --failover and the new server's URL. Where the
    apply stops for a table, --resnapshot DB.TABLE reads it again.
    """
    _run("sync", url, lake, tables, resnapshot=_table_names(resnapshot), **options)


@spark_group.command("apply")
@click.argument("source", metavar="DIR|INDEX|GLOB")
@_pipeline
def apply_command(source: str, lake: str, tables: tuple[str, ...], **options: Any) -> None:
    """Apply the row changes of a folder of binlogs (an .index file, or a quoted glob) to LAKE.

    As sync, without a server and without a snapshot: every change of the files
    from the first one on; the folder may grow (binlogkit relay) while it runs.
    """
    _run("apply", source, lake, tables, **options)


@spark_group.command("index")
@click.argument("source", metavar="LAKE|URL|DIR")
@click.option(
    "--to",
    "index_folder",
    required=True,
    type=click.Path(file_okay=False),
    help="The index folder: Delta tables postings, docs, terms and deletes, "
    "INDEX/_search/index.json, and INDEX/lake when SOURCE is a server or binlogs.",
)
@click.option(
    "--columns",
    multiple=True,
    metavar="DB.TABLE.COLUMN",
    help="Index these text columns (repeatable, or comma-separated).",
)
@click.option(
    "--tables",
    multiple=True,
    metavar="DB.TABLE",
    help="Index every text column of these tables (repeatable, or comma-separated).",
)
@click.option("--stem", metavar="LANGUAGE", help="Snowball stemming: english, russian, ...")
@click.option("--stop-words", is_flag=True, help="Leave out the English stop words.")
@click.option(
    "--stop-words-file",
    type=click.Path(dir_okay=False, exists=True),
    help="Leave out the words of this file (one a line).",
)
@_ONCE
@_MASTER
@click.option(
    "--interval",
    default=5.0,
    show_default=True,
    metavar="SECONDS",
    help="Without --once: the pause between two rounds.",
)
@click.option(
    "--compact/--no-compact",
    default=None,
    help="Compact the index (rewrite it without replaced and deleted documents) after each "
    "round / never. Default: when due (docs/search.md, Compaction): whole when they pass 10% "
    "of the documents; else the segments the batches appended merged tier by tier (4 of one "
    "size into one), or all of them at 64 segments.",
)
@click.option(
    "--compact-whole",
    is_flag=True,
    help="Compact the whole index now (else a compaction merges only the batches appended "
    "since the index was last written whole, when that suffices).",
)
@click.option(
    "--rebuild",
    is_flag=True,
    help="Build the index again in place with the analysis given (--stem, --stop-words ...); "
    "searches see the old index until the new one is complete.",
)
@_retain(
    "--retain-hours",
    "After a compaction, vacuum the files no index version of the last HOURS needs.",
)
def index_command(
    source: str,
    index_folder: str,
    columns: tuple[str, ...],
    tables: tuple[str, ...],
    stem: str | None,
    stop_words: bool,
    stop_words_file: str | None,
    compact_whole: bool,
    **options: Any,
) -> None:
    """Build a full-text search index of text columns, and keep it current.

    SOURCE: a lake kept by spark sync or spark apply, or a server URL or binlog
    folder (then synced into INDEX/lake first). The first run switches on the
    change data feed of each indexed mirror and indexes the mirrors; each later
    round indexes the rows changed since. Exactly once across crashes: run it
    again. Search with: binlogkit search INDEX "query".
    """
    with _pipeline_errors():
        from binlogkit.spark.search.build import index

        report = index(
            source,
            index_folder,
            columns=_table_names(columns) or None,
            tables=_table_names(tables) or None,
            stem=stem,
            stop_words=stop_words_file or stop_words,
            progress=lambda line: click.echo(f"binlogkit spark index: {line}", err=True),
            **(options | ({"compact": "whole"} if compact_whole else {})),
        )
    click.echo(
        f"binlogkit spark index: {report.batches} batches, {report.compactions} compactions, "
        f"{report.docs:,} documents indexed",
        err=True,
    )


@spark_group.command("search")
@click.argument("index_folder", metavar="INDEX", type=click.Path(file_okay=False, exists=True))
@click.option(
    "--queries",
    required=True,
    type=click.Path(exists=True),
    help="JSON lines, one query a line: query (the text), and optionally id, table and "
    "column (a name or a list of names) and limit.",
)
@click.option(
    "--to",
    "out",
    required=True,
    type=click.Path(),
    help="The folder the hits are written to (id, table, key, column, score, rank, snippet).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["json", "parquet", "delta"]),
    default="json",
    show_default=True,
    help="json: JSON lines files, in order of query and rank.",
)
@click.option(
    "--limit", default=10, show_default=True, type=click.IntRange(min=1), help="Hits per query."
)
@_MASTER
def search_command(
    index_folder: str, queries: str, out: str, fmt: str, limit: int, master: str | None
) -> None:
    """Answer a file of queries on Spark from INDEX (built by spark index).

    Each query gets the hits binlogkit search gives it (same scores, order and
    snippets), computed by joining the queries' terms with the index's postings.
    """
    with _pipeline_errors():
        from binlogkit.spark.lakehouse import lake_session
        from binlogkit.spark.search.queries import batch_search

        session = lake_session(master)
        hits = batch_search(session, index_folder, session.read.json(queries), limit=limit)
        writer = (hits.coalesce(1) if fmt == "json" else hits).write.format(fmt)
        writer.mode("errorifexists").save(out)
        count = hits.count()
    click.echo(f"binlogkit spark search: {count:,} hits written to {out}", err=True)


@spark_group.command("maintain")
@click.argument("lake", type=click.Path(file_okay=False))
@_retain(
    "--retain",
    "VACUUM keeps the files the versions of the last HOURS need (time travel that far); "
    "below Delta's 168, readers of an older version may lose files.",
)
@click.option(
    "--tables",
    "tables",
    multiple=True,
    metavar="DB.TABLE",
    help="Only these tables (repeatable, or comma-separated); default: every table of LAKE.",
)
@_MASTER
def maintain_command(
    lake: str, retain_hours: float, tables: tuple[str, ...], master: str | None
) -> None:
    """Compact the small files of LAKE's Delta tables (change logs, mirrors, histories) and
    vacuum the files no version of the last --retain hours needs.

    A table is compacted from 16 files averaging under 128 MiB on. Run it while no sync or
    apply writes LAKE (those maintain the lake themselves: --maintain-every).
    """
    with _pipeline_errors():
        from binlogkit.spark.lake_maintain import maintain, summary

        began = time.monotonic()
        done = maintain(
            lake,
            retain_hours=retain_hours,
            tables=_table_names(tables) or None,
            master=master,
            progress=_show("maintain"),
        )
    click.echo(f"binlogkit spark maintain: {summary(done, time.monotonic() - began)}", err=True)


@spark_group.command("status")
@click.argument("lake", type=click.Path(file_okay=False))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text for people, json for scripts.",
)
def status_command(lake: str, fmt: str) -> None:
    """Show what LAKE mirrors: its source, the stream's position, and per table its rows,
    change log rows and last commit time."""
    with _pipeline_errors():
        from binlogkit.spark.lake_status import status

        found = status(lake)
    click.echo(json.dumps(found.to_json(), indent=2) if fmt == "json" else found.text())


if __name__ == "__main__":
    spark_group.main(prog_name="binlogkit spark")
