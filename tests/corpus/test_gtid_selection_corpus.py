"""MySQL's --include-gtids / --exclude-gtids on the corpus files that have GTIDs.

No expected output in the corpus uses these options, so the known answer comes
from the rule as mysqlbinlog.cc states it (``shall_skip_gtids``), applied here
to a minimal walk of the raw event headers: a GTID, tagged GTID or anonymous
GTID event decides its transaction (an anonymous one is in no set); XID and a
COMMIT / ROLLBACK query end it; STOP, ROTATE, format description, INCIDENT,
IGNORABLE, SLAVE, START_V3 and PREVIOUS_GTIDS events always pass. The GTIDs
come from the event bytes (flags, 16-byte UUID, 8-byte GNO), except the tag of
a tagged GTID, whose serialized message is taken from the decoder.
"""

from __future__ import annotations

import struct
from pathlib import Path
from uuid import UUID, uuid4

import pytest
from corpus_files import corpus_manifest

import binlogkit
from binlogkit.binlog.events.gtid import TaggedGtidEvent
from binlogkit.binlog.events.payload import TransactionPayloadEvent
from binlogkit.dump.selection import Selection, read_selected
from binlogkit.gtid import Gtid, GtidSet

_GTID, _ANONYMOUS, _TAGGED = 33, 34, 42
_QUERY, _XID, _FORMAT = 2, 16, 15
_ALWAYS = {1, 3, 4, 7, 15, 26, 28, 35}  # START_V3 STOP ROTATE SLAVE FD INCIDENT IGNORABLE PREV
_HEADER = struct.Struct("<IBIIIH")

FILES = [
    row
    for row in corpus_manifest()
    if not row["file"].startswith("local-mariadb")
    and not row["anomalies"]
    and not row["server_version"].lower().count("mariadb")
    and any(f"{name}:" in row["events"] for name in ("GTID", "ANONYMOUS_GTID", "GTID_TAGGED"))
]


def _strncmp_equal(a: bytes, b: bytes, n: int) -> bool:
    for i in range(n):
        ca, cb = (a[i] if i < len(a) else 0), (b[i] if i < len(b) else 0)
        if ca != cb:
            return False
        if ca == 0:
            return True
    return True


def _ends_group(query: bytes) -> bool:
    """Query_log_event::ends_group as the server writes it (strncmp over the query length)."""
    return _strncmp_equal(query, b"COMMIT", len(query)) or (
        query[:8].upper() == b"ROLLBACK" and query[:12].upper() != b"ROLLBACK TO "
    )


def _walk(path: Path, checksum: bool) -> list[tuple[int, int, Gtid | None, bytes]]:
    """(offset, type, GTID or None, query text) of each top-level event, from the raw bytes."""
    data = path.read_bytes()
    tags = {}
    if b"\x2a" in data:  # tagged GTIDs: the tag from the decoder, keyed by offset
        with binlogkit.open(str(path), verify_checksum=False) as reader:
            tags = {e.header.offset: e.tag for e in reader if isinstance(e, TaggedGtidEvent)}
    out = []
    pos, query_post = 4, 13
    while pos + 19 <= len(data):
        _, code, _, size, _, _ = _HEADER.unpack_from(data, pos)
        body = data[pos + 19 : pos + size - (4 if checksum and code != _FORMAT else 0)]
        gtid, query = None, b""
        if code == _FORMAT:
            query_post = body[2 + 50 + 4 + 1 + _QUERY - 1]
        elif code == _GTID:
            gtid = Gtid(UUID(bytes=body[1:17]), int.from_bytes(body[17:25], "little"))
        elif code == _QUERY:
            status_len = int.from_bytes(body[11:13], "little")
            db_len = body[8]
            query = body[query_post + status_len + db_len + 1 :]
        out.append((pos, code, gtid, query))
        pos += size
    for i, (offset, code, _, query) in enumerate(out):
        if code == _TAGGED:
            with binlogkit.open(str(path), verify_checksum=False) as reader:
                event = next(e for e in reader if e.header.offset == offset)
            assert isinstance(event, TaggedGtidEvent)
            out[i] = (offset, code, Gtid(event.uuid, event.gno, tags[offset]), query)
    return out


def _expected(
    walk: list[tuple[int, int, Gtid | None, bytes]],
    include: GtidSet | None,
    exclude: GtidSet | None,
) -> list[int]:
    kept, skip = [], False
    for offset, code, gtid, query in walk:
        if code in (_GTID, _ANONYMOUS, _TAGGED):
            skip = (include is not None and (gtid is None or gtid not in include)) or (
                exclude is not None and gtid is not None and gtid in exclude
            )
            keep = not skip
        elif code in _ALWAYS:
            keep = True
        else:
            keep = not skip
            if code == _XID or (code == _QUERY and _ends_group(query)):
                skip = False
        if keep:
            kept.append(offset)
    return kept


def _ours(path: Path, selection: Selection) -> list[int]:
    """Offsets of the kept top-level events; inner events only after a kept payload."""
    kept = list(read_selected([path], selection, verify_checksum=False))
    ends = {e.header.end for e in kept if isinstance(e, TransactionPayloadEvent)}
    inner = [e for e in kept if e.header.log_pos == 0 and e.header.offset in ends]
    every_end = {e.header.end for e in _payloads(path)}
    assert all(e.header.offset not in every_end - ends for e in kept if e.header.log_pos == 0)
    return [e.header.offset for e in kept if not any(e is i for i in inner)]


def _payloads(path: Path) -> list[TransactionPayloadEvent]:
    with binlogkit.open(str(path), verify_checksum=False) as reader:
        return [e for e in reader if isinstance(e, TransactionPayloadEvent)]


@pytest.mark.parametrize("row", FILES, ids=[row["file"] for row in FILES])
def test_include_exclude_gtids(corpus_dir, row) -> None:  # type: ignore[no-untyped-def]
    path = corpus_dir / row["file"]
    walk = _walk(path, row["checksum"] == "CRC32")
    gtids = [g for _, _, g, _ in walk if g is not None]
    anonymous = any(code == _ANONYMOUS for _, code, _, _ in walk)
    stranger = GtidSet.of(Gtid(uuid4(), 1))
    cases: list[tuple[GtidSet | None, GtidSet | None]] = [(stranger, None), (None, stranger)]
    if gtids:
        middle = gtids[len(gtids) // 2]
        cases += [
            (GtidSet.of(middle), None),
            (None, GtidSet.of(gtids[0], gtids[-1])),
            (GtidSet.of(*gtids), GtidSet.of(middle)),
        ]
        if middle.tag:  # the untagged GTID of the same uuid and gno is another GTID
            cases.append((GtidSet.of(Gtid(middle.uuid, middle.gno)), None))
    assert gtids or anonymous
    for include, exclude in cases:
        selection = Selection(include_gtids=include, exclude_gtids=exclude)
        assert _ours(path, selection) == _expected(walk, include, exclude), (include, exclude)
