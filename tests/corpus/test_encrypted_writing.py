"""Continuing and inserting into encrypted MariaDB binlogs, and choosing the cipher of an
encrypted relay log without checksums.

- The corpus' last MariaDB 10.11 encrypted binlog (written by the server,
  AES-CBC; its STOP cut off, as a server killed leaves it) continued by
  ``BinlogWriter.open``: the server's bytes stay, the new events are
  encrypted with its nonce at their offsets (IV = nonce + offset), and the
  whole file reads back with the key file.
- A binlog binlogkit wrote encrypted, left in use and continued with the other
  cipher asked for: the file's own cipher is kept; with no encrypted event
  yet, the one asked for is used; a partial encrypted event is cut off.
- ``insert_events`` into an encrypted binlog: the events after the insertion
  move and are encrypted again at their new offsets under a fresh nonce.
- A real checksum-less relay log (mtr's bug33029, its events at the
  primary's positions) encrypted with START_ENCRYPTION: AES-CBC and AES-CTR
  each read back, where the end-position rule alone picks neither; under a
  nonce where both ciphers make the first event look valid, the next events
  decide (and a file of that one event is read as AES-CBC, with a warning).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Literal

import pytest
from encrypted_corpus import MARIADB, MARIADB_KEYS
from encrypted_writes import transaction_events, write_rows

import binlogkit
from binlogkit.binlog.constants import MAGIC, EventType
from binlogkit.binlog.header import FLAGS_OFFSET, LOG_POS_OFFSET
from binlogkit.errors import BinlogError, EncryptedBinlogError
from binlogkit.io.binlog_end import plain_input
from binlogkit.io.key_files import BinlogEncryption, EncryptionStart, KeyFile
from binlogkit.io.streams import FileInputStream, FileOutputStream
from binlogkit.io.streams.mariadb_encryption import (
    EventCipher,
    MariaDBEncryptingStream,
    _plausible,
)
from binlogkit.writer import BinlogFileWriter, BinlogWriter, insert_events

RELAY = "enhancedformysql+mysql-8.0.40/mysql-test/std_data/bug33029-slave-relay-bin.000001"
_U32 = struct.Struct("<I")
OTHER: dict[str, Literal["cbc", "ctr"]] = {"cbc": "ctr", "ctr": "cbc"}


def _plain(path: Path, keys: KeyFile) -> tuple[bytes, EncryptionStart]:
    """The file decrypted, and what its START_ENCRYPTION and first encrypted event say."""
    with plain_input(path, keys) as stream:
        data = bytearray()
        while chunk := stream.read(1 << 20):
            data += chunk
        assert not isinstance(stream, FileInputStream)
        start = stream.encryption_start()
    assert start is not None
    return bytes(data), start


def _assert_encrypted_at_offsets(path: Path, keys: KeyFile) -> EncryptionStart:
    """Every event after START_ENCRYPTION is its plain bytes encrypted with the file's nonce
    and cipher at its own offset (nothing else would read back, but say so byte by byte)."""
    plain, start = _plain(path, keys)
    data = path.read_bytes()
    assert start.algorithm is not None and len(plain) == len(data)
    cipher = EventCipher(keys.keys[1], start.nonce, start.algorithm)
    at = start.encrypted_from
    assert data[:at] == plain[:at]
    while at < len(data):
        size = _U32.unpack_from(plain, at + 9)[0]
        assert cipher.encrypt(plain[at : at + size], at) == data[at : at + size]
        assert plain[at : at + size] != data[at : at + size]
        at += size
    return start


def _rows(path: Path, keys: KeyFile) -> list[int]:
    with binlogkit.open(str(path), key_file=keys) as events:
        return [c.after["id"] for e in events for c in getattr(e, "rows", ())]


def test_continue_the_servers_encrypted_binlog(corpus_dir: Path, tmp_path: Path) -> None:
    old = (corpus_dir / MARIADB / "mysql-bin.000004").read_bytes()
    old = old[:425]  # without its STOP (at 425), as a server killed leaves it
    target = tmp_path / "mysql-bin.000004"
    target.write_bytes(old)
    (tmp_path / "mysql-bin.index").write_text(f"{target}\n")
    encryption = BinlogEncryption.from_key_file(corpus_dir / MARIADB_KEYS, algorithm="ctr")
    with pytest.raises(EncryptedBinlogError, match="continuing it needs its binlog key") as err:
        BinlogWriter.open(tmp_path, "mysql-bin")
    assert err.value.file == str(target) and "encryption=" in str(err.value)

    with BinlogWriter.open(tmp_path, "mysql-bin", encryption=encryption) as writer:
        write_rows(writer, 1, range(1, 51))
    new = target.read_bytes()
    flags_at = len(MAGIC) + FLAGS_OFFSET
    assert new[:flags_at] + new[flags_at + 1 : len(old)] == old[:flags_at] + old[flags_at + 1 :]
    start = _assert_encrypted_at_offsets(target, encryption.keys())
    assert start.algorithm == "cbc" and start.nonce.hex() == "ff0f93867ffb4bf4dc27d72c"
    assert _rows(target, encryption.keys()) == list(range(1, 51))
    with binlogkit.open(str(target), key_file=corpus_dir / MARIADB_KEYS) as events:
        types = [e.header.type_code for e in events]
    assert types[-5:] == [
        EventType.MARIADB_GTID,
        EventType.TABLE_MAP,
        EventType.WRITE_ROWS_V1,
        EventType.XID,
        EventType.STOP,
    ]


@pytest.mark.parametrize("algorithm", ["cbc", "ctr"])
def test_continue_keeps_the_files_cipher(tmp_path: Path, algorithm: Literal["cbc", "ctr"]) -> None:
    key = bytes(range(32))
    encryption = BinlogEncryption(key, algorithm)
    asked_other = BinlogEncryption(key, OTHER[algorithm])
    writer = BinlogWriter.create(tmp_path, "w-bin", encryption=encryption)
    write_rows(writer, 1, range(1, 11))
    writer.abandon()
    path = writer.file
    whole = path.stat().st_size
    data = path.read_bytes()
    assert _U32.unpack_from(data, whole - 31 + 9)[0] == 31  # the XID, its length in clear
    with path.open("ab") as f:  # a copy of it cut short, as a crash while writing leaves
        f.write(data[whole - 31 : whole - 10])
    with BinlogWriter.open(tmp_path, "w-bin", encryption=asked_other) as again:
        assert again.position == whole
        write_rows(again, 2, range(11, 21))
        again.rotate()
        write_rows(again, 3, range(21, 31))
    assert _assert_encrypted_at_offsets(path, encryption.keys()).algorithm == algorithm
    assert _rows(path, encryption.keys()) == list(range(1, 21))
    second = tmp_path / "w-bin.000002"  # started by the writer: the cipher asked for
    assert _assert_encrypted_at_offsets(second, encryption.keys()).algorithm == OTHER[algorithm]
    assert _rows(second, encryption.keys()) == list(range(21, 31))


def test_continue_before_any_encrypted_event_uses_the_cipher_asked(tmp_path: Path) -> None:
    key = bytes(range(16))
    path = tmp_path / "e-bin.000001"
    fde = BinlogWriter.create(tmp_path / "x", "x").current.format_description
    BinlogFileWriter.create(path, fde, encryption=BinlogEncryption(key, "cbc")).close()
    writer = BinlogFileWriter.append(path, encryption=BinlogEncryption(key, "ctr"))
    for event in transaction_events(tmp_path / "tx", 1, range(1, 6)):
        writer.write(event)
    writer.close()
    assert _assert_encrypted_at_offsets(path, KeyFile("k", "file_key_management", {1: key}))
    assert _plain(path, KeyFile("k", "file_key_management", {1: key}))[1].algorithm == "ctr"


@pytest.mark.parametrize("algorithm", ["cbc", "ctr"])
def test_insert_into_an_encrypted_binlog(tmp_path: Path, algorithm: Literal["cbc", "ctr"]) -> None:
    encryption = BinlogEncryption(bytes(range(24)), algorithm)
    keys = encryption.keys()
    with BinlogWriter.create(tmp_path, "w-bin", encryption=encryption) as writer:
        write_rows(writer, 1, range(1, 11))
        between = writer.position
        write_rows(writer, 3, range(21, 31))
    path = writer.file
    before, old_start = _plain(path, keys)
    inserted = transaction_events(tmp_path / "tx", 2, range(11, 21))
    with pytest.raises(EncryptedBinlogError, match="events after START_ENCRYPTION"):
        insert_events(path, between, inserted)
    with pytest.raises(BinlogError, match="before the end of START_ENCRYPTION") as err:
        insert_events(path, old_start.starts_at, inserted, encryption=encryption)
    assert err.value.event_type == "START_ENCRYPTION"

    size = insert_events(path, between, inserted, encryption=encryption)
    start = _assert_encrypted_at_offsets(path, keys)
    assert start.nonce != old_start.nonce and start.algorithm == algorithm
    after, _ = _plain(path, keys)
    nonce_at = start.starts_at + 19 + 5
    assert after[:nonce_at] == before[:nonce_at]  # magic, format description, header
    assert len(after) == len(before) + size
    assert _rows(path, keys) == list(range(1, 31))
    with binlogkit.open(str(path), key_file=keys) as events:
        headers = [e.header for e in events]
    assert all(h.log_pos == h.end for h in headers)
    assert [h.offset for h in headers[1:]] == [h.end for h in headers[:-1]]


def _with_start_encryption(relay: bytes, nonce: bytes) -> bytes:
    """``relay`` with a checksum-less START_ENCRYPTION event after its format description."""
    fde_end = len(MAGIC) + _U32.unpack_from(relay, len(MAGIC) + 9)[0]
    body = struct.pack("<BI12s", 1, 1, nonce)
    header = struct.pack("<IBIIIH", 0, EventType.MARIADB_START_ENCRYPTION, 1, 19 + len(body), 0, 0)
    return relay[:fde_end] + header + body + relay[fde_end:]


@pytest.mark.parametrize("algorithm", ["cbc", "ctr"])
def test_checksumless_relay_log_picks_its_cipher(
    corpus_dir: Path, tmp_path: Path, algorithm: Literal["cbc", "ctr"]
) -> None:
    plain = _with_start_encryption((corpus_dir / RELAY).read_bytes(), bytes(range(12)))
    key = bytes(range(32))
    path = tmp_path / "relay-bin.000001"
    stage = MariaDBEncryptingStream(FileOutputStream(path), key, algorithm=algorithm)
    stage.write(plain.replace(bytes(range(12)), stage.nonce, 1))
    stage.close()
    keys = KeyFile("k", "file_key_management", {1: key})
    decrypted, start = _plain(path, keys)
    assert start.algorithm == algorithm
    assert decrypted == plain.replace(bytes(range(12)), start.nonce, 1)
    first = start.encrypted_from  # its end position is the primary's: no help choosing
    size = _U32.unpack_from(plain, first + 9)[0]
    assert _U32.unpack_from(plain, first + LOG_POS_OFFSET)[0] != first + size
    with binlogkit.open(str(path), key_file=keys) as events:
        decoded = [e.header.type_code for e in events]
    assert decoded.count(EventType.QUERY) == 28 and len(decoded) == 44


def test_checksumless_cipher_decided_by_the_next_events(
    corpus_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A nonce under which the relay log's first encrypted event, encrypted in AES-CTR, also
    decrypts in AES-CBC into a known type with known flags: the events after it decide
    (AES-CTR). A file of that one event leaves both possible: read as AES-CBC, with a
    warning naming the file and offset."""
    relay = (corpus_dir / RELAY).read_bytes()
    key = bytes(range(32))
    plain = _with_start_encryption(relay, bytes(12))
    first = len(MAGIC) + _U32.unpack_from(plain, len(MAGIC) + 9)[0] + 36
    event = plain[first : first + _U32.unpack_from(plain, first + 9)[0]]
    for n in range(1, 20000):  # about 1 nonce in 150 does it
        nonce = n.to_bytes(12, "little")
        secret = EventCipher(key, nonce, "ctr").encrypt(event, first)
        if _plausible(EventCipher(key, nonce, "cbc").decrypt(secret, first)):
            break
    else:
        raise AssertionError("no nonce found")
    keys = KeyFile("k", "file_key_management", {1: key})
    for size, algorithm in ((len(plain), "ctr"), (first + len(event), "cbc")):
        path = tmp_path / f"relay-bin.{size}"
        stage = MariaDBEncryptingStream(FileOutputStream(path), key, nonce=nonce, algorithm="ctr")
        stage.write(_with_start_encryption(relay, nonce)[:size])
        stage.close()
        decrypted, start = _plain(path, keys)
        assert start.algorithm == algorithm
        assert (decrypted == _with_start_encryption(relay, nonce)[:size]) == (algorithm == "ctr")
    assert f"relay-bin.{first + len(event)}: AES-CBC and AES-CTR both give valid events" in (
        caplog.text
    )
