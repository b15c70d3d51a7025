"""Fuzzing over mutated real binlogs: only binlogkit's own errors escape, and nothing hangs.

Each case takes a corpus file, mutates it (bit flips, truncation, inserted or
deleted bytes, a random event size, a duplicated or zeroed range), decodes it
with one of several option sets, forces the rows of every rows event, and
re-encodes every event. Anything but a :class:`~binlogkit.errors.BinlogError`
is a failure, and so is a case that runs longer than its time limit.

The cases are seeded: a failure names its case number and reproduces with
``BINLOGKIT_FUZZ_ONLY=<number>``. ``BINLOGKIT_FUZZ_CASES`` sets how many cases
run (default 3000, a few seconds); set it high for a long run.
"""

from __future__ import annotations

import os
import random
import struct
import traceback
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from corpus_walk import corpus_files, read, walk_file
from time_limit import time_limit

from binlogkit import BinlogDecoder, BinlogError, DecodeOptions, SkippedEvent, encode_event
from binlogkit.binlog.framing import Signal

SEEDS = [
    "pieter+mysql-server/mysql-test/std_data/master-bin.001",
    "Longhui+mysql-5.5.30/mysql-5.5.30/mysql-test/std_data/bug47142_master-bin.000001",
    "Yelp+ybinlogp/testing/data/mysql-bin.default-path",
    "enhancedformysql+mysql-8.0.40/mysql-test/suite/binlog/std_data/bug11747887-bin.000003",
    "EasyPost+rust-mysql-binlog/test_data/bin-log.000001",
    "alibaba+canal/parse/src/test/resources/binlog/mysql-bin.000002",
    "blackbeam+rust_mysql_common/test-data/binlogs/transaction_compression.000001",
    "blackbeam+rust_mysql_common/test-data/binlogs/time_issue.000001",
    "blackbeam+rust_mysql_common/test-data/binlogs/mysql_type_bit.000001",
    "blackbeam+rust_mysql_common/test-data/binlogs/json-opaque.binlog",
    "blackbeam+rust_mysql_common/test-data/binlogs/vector.binlog",
    "rusuly+MySqlCdc/samples/MySqlCdc.Sample/mysql-bin.000001",
    "local-mariadb-10.11/gtid/mysql-bin.000001",
    "local-mariadb-10.11/compressed/mysql-bin.000001",
    "local-mariadb-10.11/nochecksum/mysql-bin.000001",
]
CASES = int(os.environ.get("BINLOGKIT_FUZZ_CASES", "3000"))
ONLY = os.environ.get("BINLOGKIT_FUZZ_ONLY")
TIME_LIMIT = 5.0
OPTIONS = [
    DecodeOptions(),
    DecodeOptions(verify_checksum=False),
    DecodeOptions(verify_checksum=False, on_corrupt="skip", on_unknown="pass"),
    DecodeOptions(verify_checksum=False, raw_values=True),
]


Mutation = Callable[[bytes, random.Random, list[int]], tuple[bytes, str]]


def flip_bits(data: bytes, rng: random.Random, starts: list[int]) -> tuple[bytes, str]:
    out = bytearray(data)
    spots = [rng.randrange(len(out)) for _ in range(rng.randint(1, 8))]
    for spot in spots:
        out[spot] ^= 1 << rng.randrange(8)
    return bytes(out), f"flip bits at {spots}"


def truncate(data: bytes, rng: random.Random, starts: list[int]) -> tuple[bytes, str]:
    cut = rng.randrange(len(data))
    return data[:cut], f"truncate at {cut}"


def insert_bytes(data: bytes, rng: random.Random, starts: list[int]) -> tuple[bytes, str]:
    at = rng.randrange(len(data))
    junk = rng.randbytes(rng.randint(1, 16))
    return data[:at] + junk + data[at:], f"insert {junk.hex()} at {at}"


def delete_bytes(data: bytes, rng: random.Random, starts: list[int]) -> tuple[bytes, str]:
    at = rng.randrange(len(data))
    n = rng.randint(1, 16)
    return data[:at] + data[at + n :], f"delete {n} bytes at {at}"


def event_size(data: bytes, rng: random.Random, starts: list[int]) -> tuple[bytes, str]:
    """Give one event a random size: tiny, a little off, or huge."""
    at = rng.choice(starts)
    size = rng.choice([0, 1, 13, 18, 19, 23, rng.randint(0, (1 << 32) - 1), rng.randint(19, 400)])
    if at + 13 > len(data):
        return data, "no event to resize"
    out = bytearray(data)
    struct.pack_into("<I", out, at + 9, size)
    return bytes(out), f"event at {at} gets size {size}"


def event_bytes(data: bytes, rng: random.Random, starts: list[int]) -> tuple[bytes, str]:
    """Overwrite bytes inside one event's body (past its header) with random ones."""
    at = rng.choice(starts)
    pos = min(len(data) - 1, at + 19 + rng.randint(0, 40))
    n = rng.randint(1, 4)
    out = bytearray(data)
    out[pos : pos + n] = rng.randbytes(n)
    return bytes(out[: len(data)]), f"overwrite {n} bytes at {pos} (event at {at})"


def duplicate_range(data: bytes, rng: random.Random, starts: list[int]) -> tuple[bytes, str]:
    a = rng.randrange(len(data))
    b = min(len(data), a + rng.randint(1, 200))
    return data[:b] + data[a:b] + data[b:], f"duplicate {a}..{b}"


def zero_range(data: bytes, rng: random.Random, starts: list[int]) -> tuple[bytes, str]:
    a = rng.randrange(len(data))
    n = rng.randint(1, 64)
    return data[:a] + bytes(len(data[a : a + n])) + data[a + n :], f"zero {n} bytes at {a}"


MUTATIONS: list[Mutation] = [
    flip_bits,
    truncate,
    insert_bytes,
    delete_bytes,
    event_size,
    event_bytes,
    event_bytes,
    duplicate_range,
    zero_range,
]


@dataclass
class Outcome:
    events: int = 0
    stopped_by: str = ""


def exercise(data: bytes, options: DecodeOptions, chunk: int) -> Outcome:
    """Decode everything, read every row, re-encode every event; BinlogErrors end the run."""
    out = Outcome()
    dec = BinlogDecoder(file="fuzz", options=options)
    try:
        for pos in range(0, len(data), chunk):
            dec.receive_data(data[pos : pos + chunk])
            _drain(dec, out)
        dec.receive_data(b"")
        _drain(dec, out)
    except BinlogError as err:
        out.stopped_by = f"{type(err).__name__}: {err}"
    return out


def _drain(dec: BinlogDecoder, out: Outcome) -> None:
    while not isinstance(event := dec.next_event(), Signal):
        out.events += 1
        rows = getattr(event, "rows", None)
        if rows is not None:
            for change in rows:
                _ = (change.before, change.after)
        frame = dec.last_frame
        if frame is not None:
            encode_event(event, frame.fmt)


@dataclass(frozen=True)
class Case:
    number: int
    seed_file: str
    what: str
    options: DecodeOptions
    chunk: int
    data: bytes


def make_case(number: int, files: dict[str, tuple[bytes, list[int]]]) -> Case:
    rng = random.Random(number)
    name = rng.choice(sorted(files))
    data, starts = files[name]
    steps = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        data, what = rng.choice(MUTATIONS)(data, rng, starts)
        steps.append(what)
        if not data:
            break
    options = rng.choice(OPTIONS)
    chunk = rng.choice([1 << 20, 1 << 20, 1, 7, 64, 512])
    return Case(number, name, "; ".join(steps), options, chunk, data)


def _numbers() -> list[int]:
    if ONLY is not None:
        return [int(ONLY)]
    return list(range(CASES))


def test_fuzz_only_binlog_errors_escape(corpus_dir: object) -> None:
    available = set(corpus_files())
    files = {}
    for name in SEEDS:
        assert name in available, name
        files[name] = (read(name), [e.offset for e in walk_file(name).events])
    failures: list[str] = []
    stopped = 0
    for number in _numbers():
        case = make_case(number, files)
        try:
            with time_limit(TIME_LIMIT):
                outcome = exercise(case.data, case.options, case.chunk)
        except Exception as err:
            ours = [f for f in traceback.extract_tb(err.__traceback__) if "binlogkit" in f.filename]
            where = (ours or traceback.extract_tb(err.__traceback__))[-1]
            failures.append(
                f"case {case.number} ({case.seed_file}: {case.what}; chunk {case.chunk}; "
                f"{case.options}): {type(err).__name__}: {err} "
                f"[{where.filename}:{where.lineno}]"
            )
            continue
        stopped += bool(outcome.stopped_by)
    assert not failures, f"{len(failures)} of {len(_numbers())} cases failed:\n" + "\n".join(
        failures[:25]
    )
    if ONLY is None:
        assert stopped > 0, "no mutation was ever detected: the fuzzer is not reaching the decoder"


@pytest.mark.parametrize("name", SEEDS)
def test_unmutated_seeds_decode(corpus_dir: object, name: str) -> None:
    """The seeds themselves decode cleanly, so every error in the fuzz run comes from a mutation."""
    with time_limit(TIME_LIMIT):
        outcome = exercise(read(name), DecodeOptions(), 1 << 20)
    assert outcome.stopped_by == ""
    assert outcome.events >= len(walk_file(name).events)


def test_fuzz_decoded_events_reencode_exactly(corpus_dir: object) -> None:
    """Whatever decodes from mutated bytes writes the same bytes back: no byte is dropped.

    Checked where the stored checksum was verified (or there is none), since
    re-encoding computes a fresh CRC32.
    """
    files = {name: (read(name), [e.offset for e in walk_file(name).events]) for name in SEEDS}
    failures: list[str] = []
    for number in _numbers()[: max(1, len(_numbers()) // 3)]:
        case = make_case(number, files)
        if not case.options.verify_checksum:
            continue
        dec = BinlogDecoder(file="fuzz", options=case.options)
        dec.receive_data(case.data)
        dec.receive_data(b"")
        try:
            with time_limit(TIME_LIMIT):
                while not isinstance(event := dec.next_event(), Signal):
                    frame = dec.last_frame
                    if frame is None or isinstance(event, SkippedEvent):
                        continue
                    if encode_event(event, frame.fmt) != frame.raw:
                        failures.append(
                            f"case {number} ({case.seed_file}: {case.what}): "
                            f"{event.type_name} at {frame.header.offset} re-encodes differently"
                        )
        except BinlogError:
            pass
    assert not failures, f"{len(failures)} events:\n" + "\n".join(failures[:25])
