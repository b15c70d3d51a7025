"""Whole corpus: every intact binlog decodes, every damaged one fails with the right error.

Which files are damaged, how, and at which offset is derived from the files
themselves (the independent header walk of ``corpus_walk`` and the format's
definition), never from binlogkit's output. The manifest's anomalies column
is cross-checked against that derivation.
"""

from __future__ import annotations

import struct
import zlib

import pytest
from corpus_walk import (
    Walk,
    corpus_files,
    damage_of,
    header_length,
    manifest_row,
    read,
    reference_dump_stop,
    walk,
    walk_file,
)

from binlogkit import (
    BinlogDecoder,
    ChecksumError,
    DecodeError,
    DecodeOptions,
    EncryptedBinlogError,
    OpaqueEvent,
    SkippedEvent,
    TruncatedError,
    UnknownEventError,
)
from binlogkit.binlog.constants import EventType
from binlogkit.binlog.decoder import OPAQUE_TYPES
from binlogkit.binlog.events import Event
from binlogkit.binlog.events.rows import RowsEvent

pytestmark = pytest.mark.corpus

KNOWN_TYPES = {int(code) for code in EventType}
# Errors that are not "a malformed body": a decode error of a damaged event must be none of these.
OTHER_ERRORS = (TruncatedError, ChecksumError, UnknownEventError, EncryptedBinlogError)

AURORA = "osheroff+mysql-binlog-connector-java/src/test/resources/mysql-bin.aurora-padding"
CORRUPT_RELAY = "enhancedformysql+mysql-8.0.40/mysql-test/std_data/corrupt-relay-bin.000624"
CRC32_FILE = "EasyPost+rust-mysql-binlog/test_data/bin-log.000001"
# MySQL 5.1/5.2 pre-releases that numbered types 16-22 differently. The mapping
# is MySQL's own (Format_description_event, "event_type_permutation").
PERMUTED_FILES = (
    "enhancedformysql+mysql-8.0.40/mysql-test/suite/binlog/std_data/ver_5_1-wl2325_r.001",
    "enhancedformysql+mysql-8.0.40/mysql-test/suite/binlog/std_data/ver_5_1-wl2325_s.001",
)
PERMUTATION = {
    16: EventType.TABLE_MAP,
    17: EventType.PRE_GA_WRITE_ROWS,
    18: EventType.PRE_GA_UPDATE_ROWS,
    19: EventType.PRE_GA_DELETE_ROWS,
    20: EventType.XID,
    21: EventType.BEGIN_LOAD_QUERY,
    22: EventType.EXECUTE_LOAD_QUERY,
}


FILES = corpus_files()
DAMAGED = [name for name in FILES if damage_of(name) is not None]
INTACT = [name for name in FILES if name not in DAMAGED]


def decode_all(
    data: bytes, name: str, options: DecodeOptions | None = None
) -> list[tuple[Event, bytes | None]]:
    """Every event of ``data`` with its raw frame bytes (None for an expanded inner event)."""
    dec = BinlogDecoder(file=name, options=options)
    out: list[tuple[Event, bytes | None]] = []
    for event in dec.events([data]):
        out.append((event, None if dec.last_frame is None else dec.last_frame.raw))
    return out


def force_rows(event: Event, unreadable: set[tuple[str, str]] = set()) -> None:  # noqa: B006
    """Decode a rows event's rows (lazy otherwise); each change has before/after dicts or None.

    Rows of a table in ``unreadable`` may only fail with the error that says why they can't be
    read (rows whose width-less columns are all NULL can be).
    """
    if not isinstance(event, RowsEvent):
        return
    if (event.schema, event.table_name) in unreadable:
        try:
            list(event.rows)
        except DecodeError as err:
            assert "old-format TIME" in str(err)
        return
    for change in event.rows:
        for image in (change.before, change.after):
            assert image is None or isinstance(image, dict)
        assert change.before is not None or change.after is not None


def test_corpus_is_classified(corpus_dir: object) -> None:
    """The derivation finds every damage the manifest reports, and the known broken files."""
    assert FILES, "no corpus files found"
    for name in FILES:
        row = manifest_row(name)
        if row["anomalies"]:
            assert damage_of(name) is not None, f"{name}: manifest says {row['anomalies']!r}"
        if "must error" in row["note"] or "must stop with error" in row["note"]:
            assert damage_of(name) is not None, f"{name}: manifest note says {row['note']!r}"
    assert CORRUPT_RELAY in DAMAGED
    assert AURORA in INTACT


@pytest.mark.parametrize("name", INTACT)
def test_intact_file_decodes(corpus_dir: object, name: str) -> None:
    data = read(name)
    w = walk(data, header_length(name))
    assert w.stop is None
    decoded = decode_all(data, name)
    framed = [(e, raw) for e, raw in decoded if raw is not None]
    assert len(framed) == len(w.events), "every event of the header walk, and no other"
    for (event, raw), walked in zip(framed, w.events, strict=True):
        where = f"{name} at {walked.offset}"
        assert event.header.offset == walked.offset, where
        assert event.header.event_size == walked.size, where
        assert raw == data[walked.offset : walked.end], where
        if name in PERMUTED_FILES:
            assert event.header.type_code == PERMUTATION.get(walked.type_code, walked.type_code)
        else:
            assert event.header.type_code == walked.type_code, where
    stop = reference_dump_stop(name)
    unreadable = {
        (e.schema, e.table_name)
        for e, _ in decoded
        if e.header.offset == stop  # type: ignore[attr-defined]
    }
    assert stop is None or unreadable, f"{name}: mariadb-binlog stopped at {stop}, not a rows event"
    for event, _ in decoded:
        if event.header.offset == stop:
            with pytest.raises(DecodeError, match="old-format TIME"):
                force_rows(event)
    for event, _ in decoded:
        where = f"{name} at {event.header.offset} ({event.type_name})"
        assert not isinstance(event, SkippedEvent), where
        if isinstance(event, OpaqueEvent):
            code = event.header.type_code
            assert code not in KNOWN_TYPES or code in OPAQUE_TYPES, f"{where}: no codec"
            assert event.header.ignorable, f"{where}: unknown, not ignorable, yet passed on"
        force_rows(event, unreadable)


@pytest.mark.parametrize("name", DAMAGED)
def test_damaged_file_raises_typed_error(corpus_dir: object, name: str) -> None:
    damage = damage_of(name)
    assert damage is not None
    with pytest.raises(damage.error) as info:
        decode_all(read(name), name)
    err = info.value
    assert type(err) is damage.error or not isinstance(err, OTHER_ERRORS), (
        f"{damage.why}: got {type(err).__name__}: {err}"
    )
    assert err.offset == damage.offset, f"{damage.why}: {err}"
    assert err.file == name
    assert name in str(err) and f"offset {damage.offset}" in str(err)


@pytest.mark.parametrize("name", DAMAGED)
def test_skipping_corrupt_events_reports_them(corpus_dir: object, name: str) -> None:
    """With on_corrupt='skip' a malformed event becomes a SkippedEvent and reading goes on;
    damage that cannot be skipped (truncation, encryption, unknown format) still raises."""
    damage = damage_of(name)
    assert damage is not None
    data = read(name)
    options = DecodeOptions(on_corrupt="skip")
    if damage.error not in (DecodeError, ChecksumError) or damage.offset == 4:
        with pytest.raises(damage.error) as info:
            decode_all(data, name, options)
        assert info.value.offset == damage.offset
        return
    w = walk(data, header_length(name))
    decoded = decode_all(data, name, options)
    assert [e.header.offset for e, _ in decoded] == [e.offset for e in w.events]
    skipped = [e for e, _ in decoded if isinstance(e, SkippedEvent)]
    assert [e.header.offset for e in skipped] == [damage.offset]
    assert isinstance(skipped[0].error, damage.error)
    bad = next(e for e in w.events if e.offset == damage.offset)
    assert skipped[0].raw == data[bad.offset : bad.end]


def test_encrypted_mariadb_start_event_is_read_first(corpus_dir: object) -> None:
    """The START_ENCRYPTION event itself is plain and is given before the error."""
    name = "ottok+mariadb-10.3/mysql-test/std_data/binlog_before_20574.bin"
    dec = BinlogDecoder(file=name)
    dec.receive_data(read(name))
    dec.receive_data(b"")
    types = []
    with pytest.raises(EncryptedBinlogError) as info:
        while True:
            event = dec.next_event()
            assert isinstance(event, Event)
            types.append(event.header.type_code)
    assert types == [EventType.FORMAT_DESCRIPTION, EventType.MARIADB_START_ENCRYPTION]
    assert "key" in str(info.value)


def _aurora_event(w: Walk) -> tuple[int, int]:
    event = next(e for e in w.events if e.type_code == 100)
    return event.offset, event.end


def test_aurora_ignorable_event_is_passed_on(corpus_dir: object) -> None:
    """Type 100 (Aurora only) carries LOG_EVENT_IGNORABLE_F: handed on, never an error."""
    data = read(AURORA)
    w = walk_file(AURORA)
    start, end = _aurora_event(w)
    assert w.events[[e.offset for e in w.events].index(start)].flags & 0x80
    for options in (None, DecodeOptions(on_unknown="pass")):
        decoded = [e for e, _ in decode_all(data, AURORA, options)]
        assert [e.header.offset for e in decoded] == [e.offset for e in w.events]
        opaque = [e for e in decoded if isinstance(e, OpaqueEvent)]
        assert [e.header.offset for e in opaque] == [start]
        assert opaque[0].ignorable
        assert opaque[0].payload == data[start + 19 : end - 4]  # the body, without the CRC32


def _without_ignorable_flag(data: bytes, start: int, end: int) -> bytes:
    """The file with the flag cleared on one event and that event's CRC32 recomputed."""
    out = bytearray(data)
    flags = struct.unpack_from("<H", out, start + 17)[0] & ~0x80
    struct.pack_into("<H", out, start + 17, flags)
    struct.pack_into("<I", out, end - 4, zlib.crc32(out[start : end - 4]))
    return bytes(out)


def test_unknown_event_without_ignorable_flag(corpus_dir: object) -> None:
    """The same Aurora event without the flag stops the reader, unless told to pass it on."""
    data = read(AURORA)
    w = walk_file(AURORA)
    start, end = _aurora_event(w)
    changed = _without_ignorable_flag(data, start, end)
    with pytest.raises(UnknownEventError) as info:
        decode_all(changed, AURORA)
    assert info.value.offset == start
    assert "100" in str(info.value)
    decoded = [e for e, _ in decode_all(changed, AURORA, DecodeOptions(on_unknown="pass"))]
    assert [e.header.offset for e in decoded] == [e.offset for e in w.events]
    opaque = [e for e in decoded if isinstance(e, OpaqueEvent)]
    assert [(e.header.offset, e.ignorable) for e in opaque] == [(start, False)]
    assert decoded[-1].header.type_code == EventType.QUERY


def _flip_in_body(data: bytes, w: Walk, index: int) -> tuple[bytes, int, int]:
    event = w.events[index]
    pos = event.offset + 19 + (event.size - 19 - 4) // 2
    out = bytearray(data)
    out[pos] ^= 0x10
    return bytes(out), event.offset, event.end


def test_checksum_mismatch_is_an_error_or_skipped(corpus_dir: object) -> None:
    data = read(CRC32_FILE)
    w = walk_file(CRC32_FILE)
    assert manifest_row(CRC32_FILE)["checksum"] == "CRC32"
    index = len(w.events) // 2
    changed, start, end = _flip_in_body(data, w, index)
    with pytest.raises(ChecksumError) as info:
        decode_all(changed, CRC32_FILE)
    assert info.value.offset == start
    decoded = [e for e, _ in decode_all(changed, CRC32_FILE, DecodeOptions(on_corrupt="skip"))]
    assert [e.header.offset for e in decoded] == [e.offset for e in w.events]
    skipped = [e for e in decoded if isinstance(e, SkippedEvent)]
    assert [e.header.offset for e in skipped] == [start]
    assert isinstance(skipped[0].error, ChecksumError)
    assert skipped[0].raw == changed[start:end]
    # Without verification the same bytes reach the codec, which does not know they changed.
    unchecked = decode_all(
        changed, CRC32_FILE, DecodeOptions(verify_checksum=False, on_corrupt="skip")
    )
    assert [e.header.offset for e, _ in unchecked] == [e.offset for e in w.events]


def test_pre_release_type_numbers_are_mapped(corpus_dir: object) -> None:
    """ver_5_1-wl2325_r.001 is a 5.2.2-a_drop6p13 row-based log: three rows events."""
    name = PERMUTED_FILES[0]
    names = [e.type_name for e, _ in decode_all(read(name), name)]
    assert names == [
        "FORMAT_DESCRIPTION",
        "QUERY",
        "QUERY",
        "QUERY",
        "TABLE_MAP",
        "PRE_GA_WRITE_ROWS",
        "TABLE_MAP",
        "PRE_GA_UPDATE_ROWS",
        "TABLE_MAP",
        "PRE_GA_DELETE_ROWS",
        "STOP",
    ]
