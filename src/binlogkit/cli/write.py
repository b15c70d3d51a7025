"""``binlogkit write``: rows held elsewhere (JSON lines, CSV, Parquet) as a binlog of inserts."""

from __future__ import annotations

from pathlib import Path

import click

from binlogkit.cli.main import command

_PROGRESS_EVERY = 100_000
"""Rows between two progress lines on stderr."""
_GTID_HELP = "MariaDB: the first transaction's GTID DOMAIN-SERVER-SEQ (default 0-SERVER_ID-1)."


@command("write")
@click.argument("source", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--table", "table", required=True, metavar="DB.TABLE", help="The table the rows go into."
)
@click.option(
    "--schema",
    required=True,
    metavar="SQL|@FILE",
    help="The table's CREATE TABLE statement (or @FILE holding it).",
)
@click.option(
    "--to",
    "target",
    required=True,
    type=click.Path(dir_okay=False),
    help="The binlog file to write (replaced whole once every row is written).",
)
@click.option(
    "--format",
    "input_format",
    type=click.Choice(["jsonl", "csv", "parquet"]),
    help="The input's format (default: from its name).",
)
@click.option(
    "--flavor",
    type=click.Choice(["mariadb", "mysql"]),
    default="mariadb",
    show_default=True,
    help="The server the binlog is written as.",
)
@click.option("--server-version", help="Its version (default: MariaDB 10.11 / MySQL 8.0).")
@click.option(
    "--collation-server",
    help="The server's default collation, for columns and tables the schema gives none "
    "(default: the flavour's, latin1_swedish_ci / utf8mb4_0900_ai_ci).",
)
@click.option("--server-id", type=int, default=1, show_default=True, help="The events' server id.")
@click.option("--gtid", "first_gtid", metavar="D-S-N", help=_GTID_HELP)
@click.option(
    "--compress",
    is_flag=True,
    help="Compress transactions (MariaDB: zlib rows events; MySQL: zstd TRANSACTION_PAYLOAD).",
)
@click.option("--no-checksum", is_flag=True, help="Write events without CRC32.")
@click.option(
    "--rows-per-transaction",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="Inserts in each transaction.",
)
@click.option("--csv-null", default="\\N", show_default=True, help="The CSV field that is NULL.")
def write_command(
    source: str,
    table: str,
    schema: str,
    target: str,
    input_format: str | None,
    flavor: str,
    server_version: str | None,
    collation_server: str | None,
    server_id: int,
    first_gtid: str | None,
    compress: bool,
    no_checksum: bool,
    rows_per_transaction: int,
    csv_null: str,
) -> None:
    """Write the rows of SOURCE (.jsonl, .csv or .parquet) as inserts into DB.TABLE, as a
    binlog file a server applies: mariadb-binlog FILE | mariadb.

    JSON lines hold one object per row (values as binlogkit's JSON encoding
    writes them, or plain JSON); CSV has a header line of column names. A value
    that does not fit its column, a missing column or a broken line stops the
    import with an error naming the line and column, and the target is left
    as it was.
    """
    from binlogkit.binlog.constants import ChecksumAlg, Flavor
    from binlogkit.binlog.context import parse_version
    from binlogkit.gtid import MariaGtid
    from binlogkit.schema.create import table_from_create
    from binlogkit.schema.session import Session
    from binlogkit.writer.import_rows import ImportSettings, import_rows

    db, dot, name = table.partition(".")
    if not (db and dot and name):
        raise click.BadParameter(f"give the table as DB.TABLE, not {table!r}", param_hint="--table")
    sql = Path(schema[1:]).read_text(encoding="utf-8") if schema.startswith("@") else schema
    chosen = Flavor[flavor.upper()]
    definition = table_from_create(
        sql,
        db,
        Session(
            server_collation=collation_server,
            flavor=chosen,
            version=parse_version(server_version) if server_version else None,
        ),
    )
    if definition.name != name or definition.db != db:
        raise click.BadParameter(
            f"the schema creates {definition.table_name}, not {table}", param_hint="--schema"
        )
    try:
        gtid = MariaGtid.parse(first_gtid) if first_gtid else None
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--gtid") from None
    settings = ImportSettings(
        flavor=chosen,
        server_version=server_version,
        server_id=server_id,
        checksum=ChecksumAlg.OFF if no_checksum else ChecksumAlg.CRC32,
        compress=compress,
        rows_per_transaction=rows_per_transaction,
        first_gtid=gtid,
        csv_null=csv_null,
    )

    def progress(rows: int) -> None:
        if rows % _PROGRESS_EVERY < rows_per_transaction:
            click.echo(f"{target}: {rows} rows so far", err=True)

    count = import_rows(Path(source), Path(target), definition, settings, input_format, progress)
    click.echo(f"{target}: {count} rows inserted into {table}", err=True)
