"""Command-line fuzzing: mutated real binlogs through ``events``, ``rows``, ``dump``, ``flashback``.

The mutations are structure-aware: they change bytes inside one event's body
(bit flips, random bytes, a zeroed range, a length-like field set to an
extreme) and then fix that event's CRC32, so they reach the decoders and
printers instead of stopping at the checksum; some also cut the file. Each
case runs one command in this process under a time limit. A case passes when
the command succeeds, or fails with exit code 1 or 2 and exactly one
``Error:`` line, and no other exception escapes.

Run as a script for long runs (``python tests/cli_fuzz.py CASES [FIRST]``,
with ``BINLOGKIT_CORPUS`` set); it prints a summary and the failures, and
exits 1 when there are any. tests/corpus/test_cli_fuzz.py runs a small batch
in a child process with a memory limit.
"""

from __future__ import annotations

import random
import struct
import sys
import tempfile
import time
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from cli_run import invoke
from corpus_walk import crc32_ok, read, walk
from time_limit import TimeLimitExceeded

SEEDS = [
    "blackbeam+rust_mysql_common/test-data/binlogs/mariadb-bin.000001",
    "blackbeam+rust_mysql_common/test-data/binlogs/json-opaque.binlog",
    "blackbeam+rust_mysql_common/test-data/binlogs/transaction_compression.000001",
    "blackbeam+rust_mysql_common/test-data/binlogs/vector.binlog",
    "blackbeam+rust_mysql_common/test-data/binlogs/mysql_type_bit.000001",
    "blackbeam+rust_mysql_common/test-data/binlogs/time_issue.000001",
    "alibaba+canal/parse/src/test/resources/binlog/mysql-bin.000002",
    "rusuly+MySqlCdc/samples/MySqlCdc.Sample/mysql-bin.000001",
    "EasyPost+rust-mysql-binlog/test_data/bin-log.000001",
    "local-mariadb-10.11/gtid/mysql-bin.000001",
    "local-mariadb-10.11/compressed/mysql-bin.000001",
    "local-mariadb-10.11/compressed/mysql-bin.000002",
    "local-mariadb-10.11/nochecksum/mysql-bin.000001",
]
COMMANDS = [
    ["events"],
    ["events", "--format", "jsonl"],
    ["rows"],
    ["rows", "--format", "text"],
    ["dump"],
    ["dump", "-v"],
    ["dump", "-vv"],
    ["dump", "-v", "--flavor", "mysql"],
    ["dump", "--base64-output", "decode-rows", "-v", "--hexdump"],
    ["dump", "-B", "-v"],
    ["flashback"],
    ["flashback", "--sql"],
    ["events", "--skip-corrupt"],
    ["rows", "--skip-corrupt"],
    ["dump", "-vv", "--skip-corrupt"],
]
SEED_BYTES = 16 << 10
"""Seeds are cut at the first event boundary past this size (to keep cases fast)."""
TIME_LIMIT = 10.0


@dataclass(frozen=True)
class Seed:
    name: str
    data: bytes
    events: tuple[tuple[int, int, bool], ...]
    """Each event's offset, size and whether it carries a CRC32 that checks."""


def load_seeds() -> list[Seed]:
    seeds = []
    for name in SEEDS:
        data = read(name)
        events = walk(data).events
        kept = []
        for e in events:
            if e.offset >= SEED_BYTES:
                break
            kept.append((e.offset, e.size, crc32_ok(data, e)))
        end = kept[-1][0] + kept[-1][1]
        seeds.append(Seed(name, data[:end], tuple(kept)))
    return seeds


def mutate(seed: Seed, rng: random.Random) -> tuple[bytes, str]:
    """One to three mutations inside event bodies (CRC32s fixed), maybe a cut."""
    out = bytearray(seed.data)
    steps = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        offset, size, crc = rng.choice(seed.events[1:] or seed.events)
        body = offset + 19
        end = offset + size - (4 if crc else 0)
        if end <= body:
            continue
        at = rng.randrange(body, end)
        kind = rng.randrange(4)
        if kind == 0:
            out[at] ^= 1 << rng.randrange(8)
            steps.append(f"flip a bit at {at}")
        elif kind == 1:
            n = min(rng.randint(1, 8), end - at)
            out[at : at + n] = rng.randbytes(n)
            steps.append(f"{n} random bytes at {at}")
        elif kind == 2:
            n = min(rng.randint(1, 16), end - at)
            out[at : at + n] = bytes(n)
            steps.append(f"zero {n} bytes at {at}")
        else:
            n = min(rng.choice([1, 2, 4, 8]), end - at)
            out[at : at + n] = rng.choice([b"\xff", b"\x7f", b"\x80", b"\xfe"]) * n
            steps.append(f"extreme {n}-byte value at {at}")
        if crc:
            struct.pack_into("<I", out, end, zlib.crc32(out[offset:end]))
    if rng.random() < 0.1:
        cut = rng.randrange(4, len(out))
        del out[cut:]
        steps.append(f"cut at {cut}")
    return bytes(out), "; ".join(steps)


def run_cases(first: int, count: int, folder: Path) -> tuple[Counter[str], list[str]]:
    """Run cases ``first`` .. ``first + count - 1``; the outcomes counted, and the failures."""
    seeds = load_seeds()
    outcomes: Counter[str] = Counter()
    failures: list[str] = []
    path = folder / "fuzz.bin"
    for number in range(first, first + count):
        rng = random.Random(number)
        seed = rng.choice(seeds)
        data, what = mutate(seed, rng)
        command = rng.choice(COMMANDS)
        path.write_bytes(data)
        label = f"case {number}: {' '.join(command)} on {seed.name} ({what})"
        try:
            run = invoke(*command, str(path), seconds=TIME_LIMIT)
        except TimeLimitExceeded:
            failures.append(f"{label}: still running after {TIME_LIMIT} s")
            continue
        except MemoryError:
            failures.append(f"{label}: MemoryError")
            continue
        if run.exit_code == 0 and run.exception is None:
            outcomes["succeeded"] += 1
            continue
        why = run.failed_cleanly()
        if why is not None:
            failures.append(f"{label}: {why}")
        else:
            outcomes[f"error exit {run.exit_code}"] += 1
    return outcomes, failures


def main(argv: list[str]) -> int:
    count = int(argv[0]) if argv else 1000
    first = int(argv[1]) if len(argv) > 1 else 0
    began = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        outcomes, failures = run_cases(first, count, Path(folder))
    seconds = time.monotonic() - began
    print(
        f"{count} cases from {first} in {seconds:.0f} s: {dict(outcomes)}; {len(failures)} failed"
    )
    for failure in failures[:50]:
        print(failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
