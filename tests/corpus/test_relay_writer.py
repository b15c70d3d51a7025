"""RelayWriter rebuilds real MariaDB binlog files from a simulated binlog dump.

The dump is made the way MariaDB 10.11 sends one (checked against a live
server): an artificial ROTATE (log_pos 0, flags ARTIFICIAL) naming the file
and offset, the file's format description with BINLOG_IN_USE cleared (and,
when the dump starts past offset 4, log_pos and creation time zeroed and the
CRC32 summed again), then the file's events as they are on disk; a real ROTATE
ends each file. The copy must equal the server's files byte for byte; so must the copy of
the corpus' encrypted files, sent decrypted as MariaDB sends them and
encrypted again by the relay with the server's key.
"""

from __future__ import annotations

import random
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from corpus_walk import walk

from binlogkit.binlog.constants import EventFlag, EventType
from binlogkit.errors import ChecksumError
from binlogkit.io.binlog_end import plain_input
from binlogkit.io.key_files import BinlogEncryption, KeyFile
from binlogkit.services.relay import RelayError, RelayPosition, RelayWriter

_HEADER = struct.Struct("<IBIIIH")
VARIANTS = ["full", "nochecksum", "gtid", "compressed"]
_SENT_AFTER_FDE = (EventType.FORMAT_DESCRIPTION, EventType.MARIADB_START_ENCRYPTION)


def _files(corpus_dir: Path, variant: str) -> list[Path]:
    folder = corpus_dir / "local-mariadb-10.11" / variant
    files = sorted(folder.glob("mysql-bin.[0-9][0-9][0-9][0-9][0-9][0-9]"))
    if not files:
        pytest.skip(f"no binlogs in {folder}")
    return files


def _events(data: bytes) -> Iterator[tuple[int, bytes]]:
    for event in walk(data).events:
        yield event.offset, data[event.offset : event.end]


def _checksummed(data: bytes) -> bool:
    fde = next(_events(data))[1]
    return fde[-5] == 1


def _fake_rotate(name: str, position: int, checksum: bool) -> bytes:
    body = struct.pack("<Q", position) + name.encode()
    size = 19 + len(body) + (4 if checksum else 0)
    event = _HEADER.pack(0, EventType.ROTATE, 1, size, 0, EventFlag.ARTIFICIAL) + body
    return event + struct.pack("<I", zlib.crc32(event)) if checksum else event


def dump(files: list[Path], start: RelayPosition, keys: KeyFile | None = None) -> Iterator[bytes]:
    """The events a MariaDB server sends for a binlog dump from ``start``; encrypted files
    (read with ``keys``) decrypted, START_ENCRYPTION sent after the format description only,
    flagged IGNORABLE (its log_pos zeroed with the format description's)."""
    names = [f.name for f in files]
    position = start.position
    for path in files[names.index(start.file) :]:
        data = path.read_bytes() if keys is None else _decrypted(path, keys)
        checksum = _checksummed(data)
        yield _fake_rotate(path.name, position, checksum)
        head = _events(data)
        fde = bytearray(next(head)[1])
        fde[17] &= ~EventFlag.BINLOG_IN_USE
        if position > 4:
            fde[13:17] = bytes(4)
            fde[19 + 52 : 19 + 56] = bytes(4)
            fde[-4:] = struct.pack("<I", zlib.crc32(fde[:-4]))
        yield bytes(fde)
        second = bytearray(next(head)[1])
        if second[4] == EventType.MARIADB_START_ENCRYPTION:
            second[17] |= EventFlag.IGNORABLE
            if position > 4:
                second[13:17] = bytes(4)
            second[-4:] = struct.pack("<I", zlib.crc32(second[:-4]))
            yield bytes(second)
        for offset, event in _events(data):
            if offset >= max(position, 5) and event[4] not in _SENT_AFTER_FDE:
                yield event
        position = 4


def _decrypted(path: Path, keys: KeyFile) -> bytes:
    with plain_input(path, keys) as stream:
        return stream.read(path.stat().st_size + 1)


def _assert_same(files: list[Path], copy: Path) -> None:
    for path in files:
        assert (copy / path.name).read_bytes() == path.read_bytes(), path.name
    assert RelayWriter(copy).files() == [f.name for f in files]


@pytest.mark.parametrize("variant", VARIANTS)
def test_full_copy_is_byte_identical(corpus_dir: Path, tmp_path: Path, variant: str) -> None:
    files = _files(corpus_dir, variant)
    with RelayWriter(tmp_path) as writer:
        assert writer.recover() is None
        for event in dump(files, RelayPosition(files[0].name, 4)):
            writer.write_event(event)
    _assert_same(files, tmp_path)


@pytest.mark.parametrize("variant", VARIANTS)
def test_resume_after_crash_mid_event(corpus_dir: Path, tmp_path: Path, variant: str) -> None:
    files = _files(corpus_dir, variant)
    rng = random.Random(f"relay-{variant}")
    events = list(dump(files, RelayPosition(files[0].name, 4)))
    for _round in range(6):
        cut = rng.randrange(1, len(events))
        for path in tmp_path.iterdir():
            path.unlink()
        with RelayWriter(tmp_path) as writer:
            for event in events[:cut]:
                writer.write_event(event)
            partial = writer.file
        if partial is not None and cut < len(events) and events[cut][4] != EventType.ROTATE:
            with (tmp_path / partial).open("ab") as out:
                out.write(events[cut][: rng.randrange(1, len(events[cut]))])
        with RelayWriter(tmp_path) as writer:
            start = writer.recover()
            assert start is not None
            for event in dump(files, start):
                writer.write_event(event)
        _assert_same(files, tmp_path)


def test_missing_event_is_refused(corpus_dir: Path, tmp_path: Path) -> None:
    files = _files(corpus_dir, "full")
    events = list(dump(files, RelayPosition(files[0].name, 4)))
    with RelayWriter(tmp_path) as writer:
        for event in events[:5]:
            writer.write_event(event)
        with pytest.raises(RelayError, match="missing"):
            writer.write_event(events[6])


def test_corrupt_event_is_refused(corpus_dir: Path, tmp_path: Path) -> None:
    files = _files(corpus_dir, "full")
    events = list(dump(files, RelayPosition(files[0].name, 4)))
    with RelayWriter(tmp_path) as writer:
        for event in events[:5]:
            writer.write_event(event)
        damaged = bytearray(events[5])
        damaged[25] ^= 0x40
        with pytest.raises(ChecksumError):
            writer.write_event(bytes(damaged))


def test_a_copy_of_another_server_is_not_continued(corpus_dir: Path, tmp_path: Path) -> None:
    # Two runs of MariaDB with the same file names: the copy of one, cut in its first
    # file, must not be continued with the other's bytes (a hybrid file).
    ours, theirs = _files(corpus_dir, "gtid"), _files(corpus_dir, "full")
    assert ours[0].name == theirs[0].name
    events = list(dump(ours, RelayPosition(ours[0].name, 4)))
    with RelayWriter(tmp_path) as writer:
        for event in events[:8]:
            writer.write_event(event)
    before = (tmp_path / ours[0].name).read_bytes()
    with RelayWriter(tmp_path) as writer:
        start = writer.recover()
        assert start is not None and start.file == ours[0].name and start.position > 4
        with pytest.raises(RelayError, match="not written by this server"):
            for event in dump(theirs, start):
                writer.write_event(event)
    assert (tmp_path / ours[0].name).read_bytes() == before


def test_files_outside_the_copy_are_not_overwritten(corpus_dir: Path, tmp_path: Path) -> None:
    ours, theirs = _files(corpus_dir, "gtid"), _files(corpus_dir, "full")
    (tmp_path / ours[0].name).write_bytes(ours[0].read_bytes())  # no index file
    with RelayWriter(tmp_path) as writer:
        assert writer.recover() is None
        with pytest.raises(RelayError, match="already holds"):
            for event in dump(theirs, RelayPosition(theirs[0].name, 4)):
                writer.write_event(event)
    assert (tmp_path / ours[0].name).read_bytes() == ours[0].read_bytes()


def test_encrypted_files_copied_encrypted(corpus_dir: Path, tmp_path: Path) -> None:
    """The corpus' encrypted MariaDB 10.11 files, sent decrypted: the copy, made with the
    key file and resumed after a crash mid-event, is the server's files byte for byte;
    without the key the first file is refused at START_ENCRYPTION."""
    folder = corpus_dir / "local-mariadb-10.11" / "encrypted"
    files = [folder / f"mysql-bin.00000{n}" for n in (1, 2, 3)]
    keys = folder / "keys.txt"
    encryption = BinlogEncryption.from_key_file(keys)
    events = list(dump(files, RelayPosition(files[0].name, 4), encryption.keys()))
    with RelayWriter(tmp_path / "no-key") as writer, pytest.raises(RelayError) as err:
        writer.recover()
        for event in events:
            writer.write_event(event)
    assert err.value.event_type == "START_ENCRYPTION" and err.value.offset == 256
    cut = len(events) // 2 + 1
    with RelayWriter(tmp_path, encryption=encryption) as writer:
        for event in events[:cut]:
            writer.write_event(event)
        partial = writer.file
    assert partial is not None
    with (tmp_path / partial).open("ab") as out:  # a crash in the middle of the next event
        out.write(events[cut][: len(events[cut]) // 2])
    with RelayWriter(tmp_path, encryption=encryption) as writer:
        start = writer.recover()
        assert start is not None and start.position > 4
        for event in dump(files, start, encryption.keys()):
            writer.write_event(event)
    _assert_same(files, tmp_path)
