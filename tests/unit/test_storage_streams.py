"""Storage streams: files, memory, stdin, the binlog cache, and stages chained over them.

A stage is a stream over another stream; the test's own stage (a byte-wise
XOR, reversible, so what comes back proves each layer saw every byte in
order) is chained twice over a file, a real binlog written through it and read
back whole, byte by byte and in random chunks.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from corpus_walk import read, walk

from binlogkit.errors import BinlogError
from binlogkit.io.streams import (
    BinlogCache,
    FileInputStream,
    FileOutputStream,
    InputStream,
    MemoryInputStream,
    MemoryOutputStream,
    OutputStream,
    StdinInputStream,
)

BINLOG = "local-mariadb-10.11/gtid/mysql-bin.000001"


class XorOutput(OutputStream):
    """A stage: XORs every byte with ``key`` on its way to ``inner``."""

    def __init__(self, inner: OutputStream, key: int) -> None:
        self.inner = inner
        self.key = key

    @property
    def position(self) -> int:
        return self.inner.position

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.inner.write(bytes(b ^ self.key for b in bytes(data)))

    def truncate(self, offset: int) -> None:
        self.inner.truncate(offset)

    def flush(self) -> None:
        self.inner.flush()

    def sync(self) -> None:
        self.inner.sync()

    def close(self) -> None:
        self.inner.close()


class XorInput(InputStream):
    """The reading half of :class:`XorOutput`."""

    def __init__(self, inner: InputStream, key: int) -> None:
        self.inner = inner
        self.key = key

    def read(self, size: int) -> bytes:
        return bytes(b ^ self.key for b in self.inner.read(size))

    def close(self) -> None:
        self.inner.close()


def _sizes(cut: str, total: int, rng: random.Random) -> list[int]:
    if cut == "whole":
        return [total]
    if cut == "bytes":
        return [1] * total
    sizes = []
    while total > 0:
        sizes.append(min(total, rng.randint(1, 3000)))
        total -= sizes[-1]
    return sizes


@pytest.mark.parametrize("cut", ["whole", "bytes", "random"])
def test_binlog_through_a_chain_of_stages(corpus_dir: Path, tmp_path: Path, cut: str) -> None:
    data = read(BINLOG)
    if cut == "bytes":
        data = data[:20_000]
    rng = random.Random(cut)
    target = tmp_path / "chained"
    with XorOutput(XorOutput(FileOutputStream(target), 0x5A), 0x0F) as out:
        at = 0
        for size in _sizes(cut, len(data), rng):
            out.write(data[at : at + size])
            at += size
            assert out.position == at
        out.flush()
    stored = target.read_bytes()
    assert stored == bytes(b ^ 0x55 for b in data)  # both stages applied, in order
    back = bytearray()
    with XorInput(XorInput(FileInputStream(target), 0x0F), 0x5A) as source:
        for size in _sizes(cut, len(data), rng):
            back += source.read(size)
        assert source.read(10) == b""
    assert bytes(back) == data
    if cut != "bytes":
        assert [e.offset for e in walk(bytes(back)).events] == [e.offset for e in walk(data).events]


def test_file_output_updates_truncates_and_appends(tmp_path: Path) -> None:
    path = tmp_path / "out"
    out = FileOutputStream(path, buffer_size=8)
    assert out.is_open() and out.is_empty() and out.position == 0
    out.write(b"0123456789")
    out.write(b"abcdef")
    out.update(2, b"XY")
    assert out.position == 16 and not out.is_empty()
    out.sync()
    assert path.read_bytes() == b"01XY456789abcdef"
    out.truncate(12)
    out.write(b"!")
    out.flush()
    assert path.read_bytes() == b"01XY456789ab!"
    with pytest.raises(ValueError, match="outside the 13 bytes"):
        out.update(12, b"zz")
    out.close()
    assert not out.is_open()
    with FileOutputStream(path, append=True) as more:
        assert more.position == 13
        more.write(b"?")
    assert path.read_bytes() == b"01XY456789ab!?"
    with FileOutputStream(path) as fresh:
        assert fresh.is_empty()
    assert path.read_bytes() == b""


def test_file_input_seeks_within_its_length(tmp_path: Path) -> None:
    path = tmp_path / "in"
    path.write_bytes(b"abcdefgh")
    with FileInputStream(path) as source:
        assert source.seek(3) == 3 and source.read(2) == b"de" and source.tell() == 5
        assert source.seek(100) == 8 and source.read(1) == b""
        with path.open("ab") as grow:
            grow.write(b"ij")
        assert source.seek(9) == 9 and source.read(5) == b"j"


def test_memory_streams() -> None:
    out = MemoryOutputStream()
    out.write(b"hello ")
    out.write(memoryview(b"world"))
    out.truncate(5)
    assert out.getvalue() == b"hello" and out.position == 5
    with pytest.raises(ValueError, match="cannot truncate 5 bytes"):
        out.truncate(6)
    source = MemoryInputStream(b"hello")
    assert source.read(2) == b"he" and source.seek(4) == 4 and source.read(9) == b"o"
    assert source.seek(9) == 5 and source.tell() == 5


def test_stdin_seeks_forward_only() -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "wb") as pipe:
        pipe.write(bytes(range(200)))
    with os.fdopen(read_end, "rb") as pipe_in:
        source = StdinInputStream(pipe_in)
        assert source.read(3) == bytes([0, 1, 2])
        assert source.seek(150) == 150 and source.read(2) == bytes([150, 151])
        with pytest.raises(BinlogError, match="cannot go back to offset 10 on standard input"):
            source.seek(10)
        assert source.seek(500) == 200 and source.tell() == 200
        source.close()
        assert not pipe_in.closed


def test_binlog_cache_spills_truncates_and_copies(tmp_path: Path) -> None:
    cache = BinlogCache(memory_size=100, directory=str(tmp_path))
    cache.write(b"a" * 60)
    assert cache.tmp_file_name is None and cache.disk_writes == 0 and cache.length() == 60
    cache.write(b"b" * 60)  # past 100 bytes: all 120 go to disk at once
    name = cache.tmp_file_name
    assert name is not None and Path(name).parent == tmp_path
    assert os.path.getsize(name) == 120 and cache.disk_writes == 1
    cache.write(b"c" * 30)
    assert cache.disk_writes == 1 and cache.length() == 150
    cache.write(b"d" * 80)
    assert cache.disk_writes == 2 and os.path.getsize(name) == 230
    want = b"a" * 60 + b"b" * 60 + b"c" * 30 + b"d" * 80
    copy = MemoryOutputStream()
    cache.copy_to(copy, chunk_size=7)
    assert copy.getvalue() == want
    cache.write(b"e" * 10)
    cache.truncate(235)  # in the memory part
    assert cache.length() == 235 and os.path.getsize(name) == 230
    cache.truncate(70)  # in the disk part: the memory part goes too
    assert cache.length() == 70 and os.path.getsize(name) == 70
    cache.write(b"f")
    copy = MemoryOutputStream()
    cache.copy_to(copy)
    assert copy.getvalue() == want[:70] + b"f"
    cache.reset()
    assert cache.is_empty() and cache.disk_writes == 0 and os.path.getsize(name) == 0
    cache.write(b"g" * 5)
    copy = MemoryOutputStream()
    cache.copy_to(copy)
    assert copy.getvalue() == b"ggggg"
    cache.close()
    assert not os.path.exists(name)
