"""Every stream reader gives the same events however its input is cut, and follows growing files.

Readers: the event-data stream (EventFramer), the event-object stream
(BinlogDecoder) and ``binlogkit.open`` on a path, on stdin, on a directory, an
index file and a glob. Inputs are real binlogs of every format (v1, v3, v4 with
and without checksums, MariaDB); the event offsets and bytes they must give are
taken from an independent walk over the file's event headers.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from corpus_walk import corpus_files, path, read, walk_file
from time_limit import time_limit

import binlogkit
from binlogkit import BinlogDecoder, BinlogError, BinlogReader
from binlogkit.binlog.events import Event
from binlogkit.binlog.framing import END, NEED_DATA, EventFramer, Frame
from binlogkit.io.binlog_index import resolve_sources

V1 = "pieter+mysql-server/mysql-test/std_data/master-bin.001"
V3 = "Longhui+mysql-5.5.30/mysql-5.5.30/mysql-test/std_data/bug47142_master-bin.000001"
V4_PRE_CHECKSUM = "Yelp+ybinlogp/testing/data/mysql-bin.default-path"
V4_CHECKSUM_OFF = "ottok+mariadb-10.3/mysql-test/std_data/mariadb-5.5-binlog.000001"
V4_CRC32 = "EasyPost+rust-mysql-binlog/test_data/bin-log.000001"
MARIADB_CRC32 = "local-mariadb-10.11/gtid/mysql-bin.000001"
MARIADB_NO_CHECKSUM = "local-mariadb-10.11/nochecksum/mysql-bin.000004"
STREAM_FILES = [
    V1,
    V3,
    V4_PRE_CHECKSUM,
    V4_CHECKSUM_OFF,
    V4_CRC32,
    MARIADB_CRC32,
    MARIADB_NO_CHECKSUM,
]
GTID_CHAIN = [f"local-mariadb-10.11/gtid/mysql-bin.00000{i}" for i in range(1, 7)]

CUTS = ["whole", "bytes", "small", "large"]
# Rows events need the TABLE_MAP before them: a reader cannot start at one.
ROWS_TYPES = {20, 21, 22, 23, 24, 25, 30, 31, 32, 39, 166, 167, 168, 169, 170, 171}


def start_offsets(name: str) -> list[int]:
    """Offsets a reader may start at: every event boundary but the first and rows events."""
    return [e.offset for e in walk_file(name).events[1:] if e.type_code not in ROWS_TYPES]


@pytest.fixture(autouse=True)
def _needs_corpus(corpus_dir: Path) -> None:
    """Every test here reads real binlogs."""


def chunks(data: bytes, cut: str, seed: int = 7) -> list[bytes]:
    """``data`` whole, byte by byte, or in seeded random chunks (1-64 or 1-4096 bytes)."""
    if cut == "whole":
        return [data]
    if cut == "bytes":
        return [data[i : i + 1] for i in range(len(data))]
    rng = random.Random(seed)
    top = 64 if cut == "small" else 4096
    out, pos = [], 0
    while pos < len(data):
        n = rng.randint(1, top)
        out.append(data[pos : pos + n])
        pos += n
    return out


def frames_of(parts: list[bytes], name: str) -> list[Frame]:
    framer = EventFramer(file=name)
    out: list[Frame] = []
    for part in [*parts, b""]:
        framer.receive_data(part)
        while True:
            frame = framer.next_frame()
            if frame is NEED_DATA:
                assert part, "NEED_DATA after the end of input"
                break
            if frame is END:
                assert not part, "END before the end of input"
                break
            assert isinstance(frame, Frame)
            out.append(frame)
    return out


def events_of(parts: list[bytes], name: str) -> list[tuple[int, Event]]:
    dec = BinlogDecoder(file=name)
    return [(e.header.offset, e) for e in dec.events(parts)]


def reference(name: str) -> list[tuple[int, Event]]:
    return events_of([read(name)], name)


# --- the event-data stream --------------------------------------------------------------------


@pytest.mark.parametrize("cut", CUTS)
@pytest.mark.parametrize("name", STREAM_FILES)
def test_framer_gives_the_events_of_the_header_walk(name: str, cut: str) -> None:
    data = read(name)
    w = walk_file(name)
    assert w.stop is None
    with time_limit(20):
        frames = frames_of(chunks(data, cut), name)
    assert [(f.header.offset, f.raw) for f in frames] == [
        (e.offset, data[e.offset : e.end]) for e in w.events
    ]
    assert all(f.header.end == e.end for f, e in zip(frames, w.events, strict=True))


def test_framer_partial_event_needs_data_then_truncated() -> None:
    data = read(V4_CRC32)
    w = walk_file(V4_CRC32)
    cut = w.events[2].offset + 7
    framer = EventFramer(file="f")
    framer.receive_data(data[:cut])
    for walked in w.events[:2]:
        frame = framer.next_frame()
        assert isinstance(frame, Frame) and frame.header.offset == walked.offset
    assert framer.next_frame() is NEED_DATA
    assert framer.next_frame() is NEED_DATA
    framer.receive_data(b"")
    with pytest.raises(binlogkit.TruncatedError) as info:
        framer.next_frame()
    assert info.value.offset == w.events[2].offset
    assert info.value.file == "f"


# --- the event-object stream ------------------------------------------------------------------


@pytest.mark.parametrize("cut", CUTS)
@pytest.mark.parametrize("name", STREAM_FILES)
def test_decoder_gives_the_same_events_however_fed(name: str, cut: str) -> None:
    expected = reference(name)
    assert [o for o, _ in expected] == [e.offset for e in walk_file(name).events]
    with time_limit(20):
        assert events_of(chunks(read(name), cut, seed=len(name)), name) == expected


@pytest.mark.parametrize("name", STREAM_FILES)
def test_decoder_started_after_the_format_description(name: str) -> None:
    """A decoder given the format can start at any event boundary (a replication stream)."""
    data = read(name)
    w = walk_file(name)
    full = BinlogDecoder(file=name)
    full.receive_data(data[: w.events[0].end])
    first = full.next_event()
    assert isinstance(first, Event)
    starts = start_offsets(name)
    start = starts[len(starts) // 2]
    dec = BinlogDecoder(file=name, offset=start, expect_magic=False, fmt=full.fmt)
    got = [(e.header.offset, e) for e in dec.events(chunks(data[start:], "small"))]
    assert got == [(o, e) for o, e in reference(name) if o >= start]


# --- binlogkit.open ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", STREAM_FILES)
def test_open_path_gives_the_decoder_events(name: str) -> None:
    expected = reference(name)
    with binlogkit.open(path(name)) as reader:
        assert [(e.header.offset, e) for e in reader] == expected
    for size in (1, 7, 4096):
        with BinlogReader(path(name), chunk_size=size) as reader:
            assert [(e.header.offset, e) for e in reader] == expected, f"chunk size {size}"


class _Stdin:
    """A stand-in for sys.stdin whose buffer behaves like a pipe."""

    def __init__(self, data: bytes) -> None:
        self.buffer = _Pipe(data)


class _Pipe(io.BytesIO):
    """Cannot seek, and a read may give fewer bytes than asked for (seeded)."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self._rng = random.Random(len(data))

    def seekable(self) -> bool:
        return False

    def seek(self, offset: int, whence: int = 0) -> int:
        raise io.UnsupportedOperation("pipe")

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:
            return super().read()
        return super().read(self._rng.randint(1, max(1, size)))


@pytest.mark.parametrize("name", STREAM_FILES)
def test_open_stdin_gives_the_decoder_events(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", _Stdin(read(name)))
    with binlogkit.open("-") as reader:
        got = [(e.header.offset, e) for e in reader]
    assert got == reference(name)
    assert all(e.header.file == "<stdin>" for _, e in got)


_STDIN_SCRIPT = """
import json, sys, binlogkit
for e in binlogkit.open("-"):
    h = e.header
    print(json.dumps([h.offset, h.type_code, h.event_size, type(e).__name__]))
"""


@pytest.mark.parametrize("name", [V1, V4_CRC32, MARIADB_CRC32])
def test_open_stdin_in_a_subprocess(name: str) -> None:
    with path(name).open("rb") as stdin:
        proc = subprocess.run(
            [sys.executable, "-c", _STDIN_SCRIPT],
            stdin=stdin,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr
    got = [json.loads(line) for line in proc.stdout.splitlines()]
    expected = [
        [o, e.header.type_code, e.header.event_size, type(e).__name__] for o, e in reference(name)
    ]
    assert got == expected


# --- seeking ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [V1, V3, V4_CRC32, MARIADB_CRC32])
def test_start_position(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = reference(name)
    for start in start_offsets(name):
        want = [(o, e) for o, e in expected if o >= start]
        with binlogkit.open(path(name), start_position=start) as reader:
            assert [(e.header.offset, e) for e in reader] == want, f"start {start}"
        monkeypatch.setattr(sys, "stdin", _Stdin(read(name)))
        with binlogkit.open("-", start_position=start) as reader:
            assert [(e.header.offset, e) for e in reader] == want, f"stdin, start {start}"


def test_start_position_errors() -> None:
    w = walk_file(V4_CRC32)
    inside_fde = w.events[0].offset + 10
    with (
        pytest.raises(BinlogError) as info,
        binlogkit.open(path(V4_CRC32), start_position=inside_fde) as r,
    ):
        list(r)
    assert info.value.offset == inside_fde
    past_end = len(read(V4_CRC32)) + 100
    with pytest.raises(BinlogError), binlogkit.open(path(V4_CRC32), start_position=past_end) as r:
        list(r)


# --- follow mode ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [V4_CHECKSUM_OFF, GTID_CHAIN[-1]])
def test_follow_waits_for_a_partial_last_event(name: str, tmp_path: Path) -> None:
    """Half the file is there, cut inside an event; the rest comes later; all events arrive."""
    data = read(name)
    w = walk_file(name)
    assert w.events[-1].type_code == 3  # ends with STOP, so the follower stops there
    middle = w.events[len(w.events) // 2]
    cut = middle.offset + middle.size // 2
    target = tmp_path / "mysql-bin.000001"
    target.write_bytes(data[:cut])
    expected = reference(name)
    before = [item for item in expected if item[1].header.end <= cut]

    def append_rest() -> None:
        with target.open("ab") as f:
            f.write(data[cut:])

    with time_limit(20), BinlogReader(target, follow=True, poll_interval=0.01) as reader:
        it = iter(reader)
        got = [next(it) for _ in before]
        timer = threading.Timer(0.3, append_rest)
        started = time.monotonic()
        timer.start()
        try:
            rest = list(it)
        finally:
            timer.join()
        waited = time.monotonic() - started
    events = [(e.header.offset, e) for e in [*got, *rest]]
    assert events == expected
    assert waited >= 0.25, "the reader must wait for the rest, not stop at the partial event"
    assert all(e.header.file == str(target) for _, e in events)


def test_follow_goes_on_with_the_rotated_file(tmp_path: Path) -> None:
    """After a ROTATE the follower waits for the next file to appear and reads it."""
    for name in GTID_CHAIN[:1]:
        shutil.copy(path(name), tmp_path / Path(name).name)

    def write_the_rest() -> None:
        for name in GTID_CHAIN[1:]:
            part = tmp_path / (Path(name).name + ".tmp")
            part.write_bytes(read(name))
            os.replace(part, tmp_path / Path(name).name)

    expected = [e for name in GTID_CHAIN for _, e in reference(name)]
    first = len(reference(GTID_CHAIN[0]))
    with (
        time_limit(30),
        BinlogReader(tmp_path / "mysql-bin.000001", follow=True, poll_interval=0.01) as r,
    ):
        it = iter(r)
        got = [next(it) for _ in range(first)]
        timer = threading.Timer(0.2, write_the_rest)
        timer.start()
        try:
            got += list(it)
        finally:
            timer.join()
    assert got == expected
    assert [Path(e.header.file or "").name for e in got] == [
        Path(name).name for name in GTID_CHAIN for _ in reference(name)
    ]


def test_without_follow_a_partial_event_is_truncated(tmp_path: Path) -> None:
    data = read(V4_CHECKSUM_OFF)
    w = walk_file(V4_CHECKSUM_OFF)
    cut = w.events[3].offset + 3
    target = tmp_path / "cut.000001"
    target.write_bytes(data[:cut])
    with pytest.raises(binlogkit.TruncatedError) as info, binlogkit.open(target) as reader:
        list(reader)
    assert info.value.offset == w.events[3].offset
    assert info.value.file == str(target)


# --- sets of files ----------------------------------------------------------------------------


def _chain_dir(tmp_path: Path) -> Path:
    for name in GTID_CHAIN:
        shutil.copy(path(name), tmp_path / Path(name).name)
    return tmp_path


def _expected_chain() -> list[tuple[str, int, Event]]:
    return [(Path(n).name, o, e) for n in GTID_CHAIN for o, e in reference(n)]


def _got(source: object) -> list[tuple[str, int, Event]]:
    with binlogkit.open(source) as reader:  # type: ignore[arg-type]
        return [(Path(e.header.file or "").name, e.header.offset, e) for e in reader]


def test_chain_rotates_name_the_next_file() -> None:
    """Known answer from the files: each ROTATE names the next file of the chain."""
    for name, following in itertools.pairwise(GTID_CHAIN):
        last = reference(name)[-1][1]
        assert getattr(last, "next_file", None) == Path(following).name


def test_directory_index_and_glob_follow_the_order(tmp_path: Path) -> None:
    folder = _chain_dir(tmp_path)
    expected = _expected_chain()
    assert _got(folder) == expected
    assert _got(str(folder / "mysql-bin.0*")) == expected
    index = folder / "mysql-bin.index"
    index.write_text("".join(f"./{Path(n).name}\n" for n in GTID_CHAIN))
    assert _got(index) == expected
    assert _got(folder) == expected  # the directory's index file
    assert _got([folder / Path(n).name for n in GTID_CHAIN]) == expected


def test_index_order_is_the_index_file_order(tmp_path: Path) -> None:
    folder = _chain_dir(tmp_path)
    order = [GTID_CHAIN[2], GTID_CHAIN[0]]
    (folder / "mysql-bin.index").write_text("".join(f"{Path(n).name}\n" for n in order))
    want = [(Path(n).name, o, e) for n in order for o, e in reference(n)]
    assert _got(folder / "mysql-bin.index") == want


def test_numbered_files_sort_by_number(tmp_path: Path) -> None:
    """name.999999 comes before name.1000000 (the server counts on past six digits)."""
    shutil.copy(path(GTID_CHAIN[0]), tmp_path / "mysql-bin.999999")
    shutil.copy(path(GTID_CHAIN[1]), tmp_path / "mysql-bin.1000000")
    want = [str(tmp_path / "mysql-bin.999999"), str(tmp_path / "mysql-bin.1000000")]
    assert resolve_sources(tmp_path) == want
    assert resolve_sources(str(tmp_path / "mysql-bin.*")) == want
    got = _got(tmp_path)
    assert [f for f, _, _ in got] == ["mysql-bin.999999"] * len(reference(GTID_CHAIN[0])) + [
        "mysql-bin.1000000"
    ] * len(reference(GTID_CHAIN[1]))


def test_missing_inputs_are_binlog_errors(tmp_path: Path) -> None:
    with pytest.raises(BinlogError):
        resolve_sources(tmp_path / "absent.000001")
    with pytest.raises(BinlogError):
        resolve_sources(str(tmp_path / "none-*.0*"))
    with pytest.raises(BinlogError):
        resolve_sources(tmp_path)


def test_stream_files_are_in_the_corpus() -> None:
    files = set(corpus_files())
    assert set(STREAM_FILES) <= files and set(GTID_CHAIN) <= files
