"""The encryption stages fed whole, byte by byte and in random chunks (Hypothesis).

Decrypting: the corpus' encrypted MariaDB and MySQL files, read through the
stage over an input that gives its bytes in chunks of any size, read in
reads of any size, give the same bytes as one whole read, and those bytes
decode with every checksum right. Encrypting: a plain binlog with a
START_ENCRYPTION event, written through the encrypting stage in chunks of
any size, decrypts back to itself (AES-CBC and AES-CTR), and its events after
START_ENCRYPTION differ from the plain ones.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path
from typing import Literal

import pytest
from corpus_walk import read
from encrypted_corpus import KEYRING, MARIADB, MARIADB_KEYS, MYSQL
from hypothesis import given, settings
from hypothesis import strategies as st

from binlogkit import BinlogDecoder
from binlogkit.binlog.constants import EventType
from binlogkit.binlog.events import FormatDescriptionEvent
from binlogkit.binlog.events.informational import StartEncryptionEvent
from binlogkit.binlog.framing import Signal
from binlogkit.binlog.header import EventHeader
from binlogkit.errors import EncryptedBinlogError
from binlogkit.io.files import BinlogReader
from binlogkit.io.key_files import KeyFile, read_key_file
from binlogkit.io.streams import FileOutputStream, MemoryInputStream, SeekableInputStream
from binlogkit.io.streams.decryption import decrypting
from binlogkit.io.streams.mariadb_encryption import MariaDBEncryptingStream
from binlogkit.writer import BinlogFileWriter

MARIADB_FILE = f"{MARIADB}/mysql-bin.000003"
PLAIN = "local-mariadb-10.11/gtid/mysql-bin.000003"
NONCE = bytes(range(12))
SIZES = st.lists(st.integers(1, 600), min_size=1, max_size=20)


class Chunked(SeekableInputStream):
    """``data`` given in reads no longer than the next of ``sizes`` (cycled)."""

    def __init__(self, data: bytes, sizes: list[int]) -> None:
        self._inner = MemoryInputStream(data)
        self._sizes = itertools.cycle(sizes)

    def read(self, size: int) -> bytes:
        return self._inner.read(min(size, next(self._sizes)))

    def seek(self, offset: int) -> int:
        return self._inner.seek(offset)

    def tell(self) -> int:
        return self._inner.tell()


def _decrypted(data: bytes, keys: KeyFile, inner: list[int], reads: list[int]) -> bytes:
    stage = decrypting(Chunked(data, inner), keys, name="test")
    out = bytearray()
    for size in itertools.cycle(reads):
        chunk = stage.read(size)
        if not chunk:
            return bytes(out)
        out += chunk
    raise AssertionError("unreachable")


def _checked_events(plain: bytes) -> int:
    """How many events ``plain`` holds, each framed and checksum-verified."""
    decoder = BinlogDecoder(decrypted=True)
    decoder.receive_data(plain)
    decoder.receive_data(b"")
    count = 0
    while not isinstance(decoder.next_event(), Signal):
        count += 1
    return count


@pytest.fixture(scope="module", params=["mariadb", "mysql"])
def encrypted(request: pytest.FixtureRequest, corpus_dir: Path) -> tuple[bytes, KeyFile, bytes]:
    """An encrypted corpus file, its keys, and its bytes decrypted in one read."""
    name, keys = (MARIADB_FILE, MARIADB_KEYS) if request.param == "mariadb" else (MYSQL, KEYRING)
    data = read(name)
    key_file = read_key_file(corpus_dir / keys)
    return data, key_file, _decrypted(data, key_file, [len(data)], [len(data) + 1])


def test_whole_read_decodes(encrypted: tuple[bytes, KeyFile, bytes]) -> None:
    data, _, whole = encrypted
    if whole.startswith(b"\xfebin") and data.startswith(b"\xfdbin"):  # MySQL: cut short at 987
        whole = whole[:987]
    assert _checked_events(whole) >= 13


def test_byte_by_byte(encrypted: tuple[bytes, KeyFile, bytes]) -> None:
    data, keys, whole = encrypted
    assert _decrypted(data, keys, [1], [1]) == whole


@settings(max_examples=25)
@given(inner=SIZES, reads=SIZES)
def test_random_chunks(
    encrypted: tuple[bytes, KeyFile, bytes], inner: list[int], reads: list[int]
) -> None:
    data, keys, whole = encrypted
    assert _decrypted(data, keys, inner, reads) == whole


@pytest.fixture(scope="module")
def plain_with_start(tmp_path_factory: pytest.TempPathFactory, corpus_dir: Path) -> bytes:
    """A corpus binlog written again with a START_ENCRYPTION event after its format description."""
    target = tmp_path_factory.mktemp("plain") / "plain-bin.000001"
    with BinlogReader(str(corpus_dir / PLAIN), schema=None) as reader:
        events = list(reader)
    fde = events[0]
    assert isinstance(fde, FormatDescriptionEvent)
    writer = BinlogFileWriter.create(target, fde)
    code = EventType.MARIADB_START_ENCRYPTION
    header = EventHeader(fde.header.timestamp, code, fde.header.server_id, 0, 0, 0)
    writer.write(StartEncryptionEvent(header, 1, 1, NONCE))
    for event in events[1:]:
        writer.write(replace(event, header=replace(event.header, log_pos=0)))
    assert writer.ended
    return target.read_bytes()


@pytest.mark.parametrize("algorithm", ["cbc", "ctr"])
@settings(max_examples=15)
@given(writes=SIZES)
def test_encrypting_stage_round_trip(
    plain_with_start: bytes,
    tmp_path_factory: pytest.TempPathFactory,
    algorithm: Literal["cbc", "ctr"],
    writes: list[int],
) -> None:
    key = bytes(range(32))
    target = tmp_path_factory.mktemp("enc") / "enc-bin.000001"
    stage = MariaDBEncryptingStream(FileOutputStream(target), key, nonce=NONCE, algorithm=algorithm)
    at = 0
    for size in itertools.cycle(writes):
        stage.write(plain_with_start[at : at + size])
        at += size
        assert stage.position == min(at, len(plain_with_start))
        if at >= len(plain_with_start):
            break
    stage.close()
    encrypted = target.read_bytes()
    begins = 4 + int.from_bytes(plain_with_start[4 + 9 : 4 + 13], "little") + 40
    assert encrypted[:begins] == plain_with_start[:begins]
    assert (
        len(encrypted) == len(plain_with_start) and encrypted[begins:] != plain_with_start[begins:]
    )
    keys = KeyFile("keys", "file_key_management", {1: key})
    assert _decrypted(encrypted, keys, writes, writes) == plain_with_start


@pytest.mark.parametrize(
    ("at", "says", "after"),
    [
        (0, "encryption scheme 2: only scheme 1 is known", 0),
        (1, "version 2 of key 1; the file_key_management key file keys holds version 1", 40),
    ],
    ids=["scheme", "key version"],
)
def test_unknown_scheme_or_key_version(
    plain_with_start: bytes, at: int, says: str, after: int
) -> None:
    """Said at the START_ENCRYPTION event (scheme), or at the first event it encrypts."""
    start = 4 + int.from_bytes(plain_with_start[4 + 9 : 4 + 13], "little")  # after the FDE
    changed = bytearray(plain_with_start)
    changed[start + 19 + at] = 2
    keys = KeyFile("keys", "file_key_management", {1: bytes(32)})
    with pytest.raises(EncryptedBinlogError, match=says) as err:
        _decrypted(bytes(changed), keys, [len(changed)], [len(changed)])
    assert err.value.offset == start + after and err.value.file == "test"
    assert at == 0 or "read this binlog through that server" in str(err.value)
