"""Dump formatters of the events only MySQL writes, as MySQL 8's ``mysqlbinlog`` prints them.

GTID and anonymous GTID events (``SET @@SESSION.GTID_NEXT= ...`` with the commit
timestamps and server versions before it), Previous-GTIDs, Rows_query (shown
with ``-vv``) and TRANSACTION_PAYLOAD, whose inner events are printed in place
between ``# Start of compressed events!`` and ``# End of compressed events!``,
each at the payload's end position (see :meth:`Dumper.event`).
"""

from __future__ import annotations

import time

from binlogkit.binlog import utf8
from binlogkit.binlog.events.gtid import GtidEvent, PreviousGtidsEvent, TaggedGtidEvent
from binlogkit.binlog.events.informational import RowsQueryEvent
from binlogkit.binlog.events.payload import CompressionType, TransactionPayloadEvent
from binlogkit.dump.dumper import Dumper, formats

__all__ = ["commit_time"]


def commit_time(micros: int) -> str:
    """``YYYY-MM-DD HH:MM:SS.ffffff TZ``, local time (microsecond_timestamp_to_str)."""
    seconds, fraction = divmod(micros, 1_000_000)
    t = time.localtime(seconds)
    return f"{time.strftime('%Y-%m-%d %H:%M:%S', t)}.{fraction:06d} {time.strftime('%Z', t)}"


@formats(GtidEvent, TaggedGtidEvent)
def _gtid(d: Dumper, event: GtidEvent | TaggedGtidEvent, raw: bytes) -> None:
    s = d.state
    if s.skipped_in_transaction:
        d.write(f"COMMIT /* added by mysqlbinlog */{d.delimiter}\n")
    s.skipped_in_transaction = False
    s.seen_gtid = True
    if d.options.skip_gtids:
        return
    delim = d.delimiter
    out: list[str] = []
    original = event.original_commit_timestamp or 0
    immediate = event.immediate_commit_timestamp or 0
    if not d.options.short_form:
        kind = "Anonymous_GTID" if event.anonymous else "GTID"
        out.append(
            f"{d.header(event, raw)}\t{kind}\tlast_committed={event.last_committed or 0}"
            f"\tsequence_number={event.sequence_number or 0}"
            f"\trbr_only={'no' if event.may_have_sbr else 'yes'}"
            f"\toriginal_committed_timestamp={original}"
            f"\timmediate_commit_timestamp={immediate}"
            f"\ttransaction_length={event.transaction_length or 0}\n"
        )
    if not event.may_have_sbr:
        out.append(f"/*!50718 SET TRANSACTION ISOLATION LEVEL READ COMMITTED*/{delim}\n")
    out.append(f"# original_commit_timestamp={original} ({commit_time(original)})\n")
    out.append(f"# immediate_commit_timestamp={immediate} ({commit_time(immediate)})\n")
    out.append(f"/*!80001 SET @@session.original_commit_timestamp={original}*/{delim}\n")
    out.append(
        "/*!80014 SET @@session.original_server_version="
        f"{event.original_server_version or 0}*/{delim}\n"
    )
    out.append(
        "/*!80014 SET @@session.immediate_server_version="
        f"{event.immediate_server_version or 0}*/{delim}\n"
    )
    gtid = "ANONYMOUS" if event.anonymous else str(event.gtid)
    out.append(f"SET @@SESSION.GTID_NEXT= '{gtid}'{delim}\n")
    d.write("".join(out))


@formats(PreviousGtidsEvent)
def _previous_gtids(d: Dumper, event: PreviousGtidsEvent, raw: bytes) -> None:
    head = "" if d.options.short_form else f"{d.header(event, raw)}\tPrevious-GTIDs\n"
    gtids = event.gtids
    text = "# " + gtids.to_string(",\n# ") if gtids else "# [empty]"
    d.write(f"{head}{text}\n")


@formats(RowsQueryEvent)
def _rows_query(d: Dumper, event: RowsQueryEvent, raw: bytes) -> None:
    if d.options.short_form or d.options.verbose < 2:
        return
    s = d.state
    lines = [line for line in utf8.decode(event.query).split("\n") if line]
    text = "".join(f"# {line}\n" for line in lines)
    d.write(f"{d.header(event, raw)}\tRows_query\n{text}")
    if d.encode_rows:
        s.body.append(d.base64(raw))


_COMPRESSION_NAMES = {CompressionType.ZSTD: "ZSTD", CompressionType.NONE: "NONE"}


@formats(TransactionPayloadEvent)
def _payload(d: Dumper, event: TransactionPayloadEvent, raw: bytes) -> None:
    if not d.options.short_form:
        kind = _COMPRESSION_NAMES.get(event.compression_type, "UNKNOWN")  # type: ignore[call-overload]
        info = f"\tpayload_size={event.payload_size}\tcompression_type={kind}"
        if event.compression_type != CompressionType.NONE:
            info += f"\tuncompressed_size={event.uncompressed_size or 0}"
        d.write(
            f"{d.header(event, raw)}\tTransaction_Payload\t{info}\n# Start of compressed events!\n"
        )
    d.open_payload(event)
