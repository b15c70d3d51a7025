"""``binlogkit search``: ranked answers from a search index, without Spark (``search`` extra)."""

from __future__ import annotations

import json

import click

from binlogkit.cli.main import command


@command("search")
@click.argument("index", type=click.Path(file_okay=False, exists=True))
@click.argument("query")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--table", "tables", multiple=True, metavar="DB.TABLE", help="Only hits of this table."
)
@click.option("--column", "columns", multiple=True, metavar="NAME", help="Only this column.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "jsonl"]),
    default="text",
    show_default=True,
    help="text for people; jsonl: one JSON object per hit (table, key, column, score, snippet).",
)
def search_command(
    index: str, query: str, limit: int, tables: tuple[str, ...], columns: tuple[str, ...], fmt: str
) -> None:
    """Search INDEX (built by binlogkit spark index) for QUERY, best hits first (BM25).

    QUERY: words (all must match), "quoted phrases", prefix terms (data*), AND, OR,
    NOT and parentheses, table:DB.TABLE and column:NAME filters. Each hit is a
    column value of a row: its table, primary key, column, score and a snippet
    with the query's terms between ** marks.
    """
    try:
        from binlogkit.search.engine import search
    except ImportError as err:
        raise click.ClickException(
            f"{err}: binlogkit search needs pip install 'binlogkit[search]'"
        ) from err
    hits = search(index, query, limit=limit, tables=tables, columns=columns)
    for hit in hits:
        if fmt == "jsonl":
            click.echo(json.dumps(hit.to_json(), ensure_ascii=False))
        else:
            key = " ".join(f"{k}={v}" for k, v in json.loads(hit.key).items())
            click.echo(f"{hit.score:8.3f}  {hit.table} {key} {hit.column}: {hit.snippet}")
