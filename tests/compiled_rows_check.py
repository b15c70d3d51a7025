"""The generated row printers of :mod:`binlogkit.dump.compiled` against the plain walk.

A plain module (not a conftest) so the corpus and live tests share it. For
every rows event of a binlog, in each mode (row count, ``-v``, ``-vv``) and
with each tool's string quoting (mariadb-binlog's, mysqlbinlog's), the
printer the dump uses must give what the plain column-by-column walk gives (or
the same error), and the generated function, when it does not hand over to
the plain walk, must give exactly the same. PARTIAL_UPDATE_ROWS events are
printed by the plain walk only (the dump never asks generated code for them).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from binlogkit.binlog.events import Event
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.dump.rows import RowsPrinter, TablePrinter

MODES = (0, 1, 2)


@dataclass
class Tally:
    """How many (rows event, mode) pairs were compared, and how many the generated code printed."""

    compared: int = 0
    generated: int = 0


def _outcome(printer: RowsPrinter, event: RowsEvent, table: TablePrinter | None) -> object:
    try:
        if printer.verbose:
            lines, count = printer.rows(event, table)
            return "\n".join(lines), count  # the dump joins the lines so
        return printer.count(event, table)
    except Exception as err:  # the error itself is the outcome to compare
        return (type(err), str(err))


def check_rows_printers(events: Iterable[Event], tally: Tally, limit: int | None = None) -> None:
    """Compare the printers on the rows events of ``events`` (the first ``limit`` of them).

    ``tally`` counts the work.
    """
    tables: dict[int, tuple[TablePrinter, TablePrinter]] = {}
    seen = 0
    for event in events:
        if isinstance(event, TableMapEvent):
            tables[event.table_id] = (TablePrinter.of(event), TablePrinter.of(event, mysql=True))
        elif isinstance(event, RowsEvent):
            seen += 1
            if limit is not None and seen > limit:
                return
            for table in tables.get(event.table_id, (None,)):
                _check_event(event, table, tally)


def _check_event(event: RowsEvent, table: TablePrinter | None, tally: Tally) -> None:
    """Compare the printers on one rows event, in each mode."""
    for verbose in MODES:
        plain = RowsPrinter(verbose, compiled=False)
        fast = RowsPrinter(verbose)
        want = _outcome(plain, event, table)
        mysql = table is not None and table.columns and table.columns[0].mysql
        label = f"{event.header.file}@{event.header.offset} verbose={verbose} mysql={mysql}"
        assert _outcome(fast, event, table) == want, label
        tally.compared += 1
        if table is None or not event.rows_data:
            continue
        if event.partial or (not verbose and event.legacy):
            continue  # printed or counted by the plain walk, not by generated code
        try:
            got = fast.generated(event, table)(event.rows_data)
        except Exception:  # handed over to the plain walk
            continue
        tally.generated += 1
        if verbose:
            got = "\n".join(got[0]), got[1]
        assert got == want, label
