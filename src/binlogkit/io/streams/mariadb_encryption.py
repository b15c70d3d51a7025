"""MariaDB binlog encryption (``encrypt_binlog``) as stages: decrypt on reading, encrypt on writing.

The format (MariaDB ``sql/log_event.cc``: ``Log_event_writer`` and
``Log_event::read_log_event``; ``mysys_ssl/my_crypt.cc``): the magic, the
format description and the START_ENCRYPTION event (scheme, key version, a
12-byte nonce) are plain; every event after them is encrypted whole, checksum
included, except its length field, which stays clear so that events can be
cut apart. The 4 timestamp bytes go where the length was, the bytes from
offset 4 on are encrypted, and the length takes back its place:

    plain:  ts[0:4] h[4:9]  len[9:13]  rest       ->  encrypt  h[4:9] ts rest  ->  c
    file:   c[5:9]  c[0:5]  len        c[9:]

The key is the binlog key (id 1) at the event's key version; the IV is the
nonce followed by the event's offset in the file (4 bytes, little-endian).
The cipher is the key plugin's: AES-CBC without padding, whose last partial
block is XORed with AES-ECB of the IV (``MyCTX_nopad``), or AES-CTR
(``file_key_management_encryption_algorithm``). Nothing in the file says
which; the reader tries CBC and CTR on the first encrypted event and keeps the
one whose checksum is right. Without checksums (a relay log of a primary with
``binlog_checksum=NONE``, whose events keep the primary's end positions) a
candidate must give a known event type with known flags; the one whose end
position is the event's end in the file wins, and otherwise the next events
decide, up to :data:`LOOKAHEAD` of them (then CBC, the plugin's default).

Both stages keep positions: an event is as long encrypted as plain.
"""

from __future__ import annotations

import logging
import os
import struct
import zlib
from pathlib import Path
from typing import Literal

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from binlogkit.binlog.constants import MAGIC, MAX_EVENT_SIZE, EventFlag, EventType
from binlogkit.binlog.events.informational import START_ENCRYPTION_BODY
from binlogkit.binlog.framing import CRC32_RESIDUE
from binlogkit.binlog.header import (
    EVENT_SIZE_OFFSET,
    FLAGS_OFFSET,
    LOG_POS_OFFSET,
    TYPE_CODE_OFFSET,
)
from binlogkit.errors import BinlogError, EncryptedBinlogError
from binlogkit.io.key_files import EncryptionStart
from binlogkit.io.streams.base import OutputStream
from binlogkit.io.streams.decrypting_stage import DecryptingStage
from binlogkit.io.streams.file import FileOutputStream

log = logging.getLogger(__name__)

__all__ = [
    "BINLOG_KEY_ID",
    "LOOKAHEAD",
    "EventCipher",
    "MariaDBDecryptingStream",
    "MariaDBEncryptingStream",
]

BINLOG_KEY_ID = 1
"""The key id the server encrypts binlogs with (``ENCRYPTION_KEY_SYSTEM_DATA``)."""
_U32 = struct.Struct("<I")
_HEADER = 19
_CLEAR_END = EVENT_SIZE_OFFSET + 4
"""The bytes an event needs before its length can be read: up to the end of the clear length."""
_READ_CHUNK = 1 << 16
_HEAD_CHUNK = 1 << 12
"""Reads that find where the encrypted events begin (without decrypting much past it)."""
_U16 = struct.Struct("<H")
_KNOWN_TYPES = frozenset(int(t) for t in EventType)
_KNOWN_FLAGS = sum(int(f) for f in EventFlag)
LOOKAHEAD = 8
"""Without checksums: the most encrypted events read before the cipher is chosen."""
Algorithm = Literal["cbc", "ctr"]
ALGORITHMS: tuple[Algorithm, ...] = ("cbc", "ctr")


class EventCipher:
    """Encrypts and decrypts whole events with ``key``, ``nonce`` and ``algorithm``."""

    def __init__(self, key: bytes, nonce: bytes, algorithm: Algorithm) -> None:
        self.key = key
        self.nonce = nonce
        self.algorithm = algorithm
        self._aes = algorithms.AES(key)
        self._mask = Cipher(self._aes, modes.ECB()).encryptor()
        """AES-ECB, stateless: encrypts each IV into the mask of a last partial CBC block."""

    def _crypt(self, data: bytes, offset: int, encrypt: bool) -> bytes:
        iv = self.nonce + _U32.pack(offset & 0xFFFFFFFF)
        if self.algorithm == "ctr":
            return Cipher(self._aes, modes.CTR(iv)).encryptor().update(data)
        whole = len(data) - len(data) % 16
        cbc = Cipher(self._aes, modes.CBC(iv))
        done = (cbc.encryptor() if encrypt else cbc.decryptor()).update(memoryview(data)[:whole])
        if whole == len(data):
            return done
        tail = len(data) - whole
        mask = int.from_bytes(self._mask.update(iv)[:tail], "little")
        return b"".join(
            (done, (int.from_bytes(data[whole:], "little") ^ mask).to_bytes(tail, "little"))
        )

    def decrypt(self, event: bytes, offset: int) -> bytes:
        """The plain bytes of the encrypted event ``event`` read at ``offset``."""
        secret = b"".join((event[4:9], event[0:4], memoryview(event)[_CLEAR_END:]))
        plain = self._crypt(secret, offset, encrypt=False)
        return b"".join((plain[5:9], plain[0:5], _U32.pack(len(event)), memoryview(plain)[9:]))

    def encrypt(self, event: bytes, offset: int) -> bytes:
        """The bytes the plain event ``event`` has encrypted at ``offset``."""
        moved = b"".join((event[4:9], event[0:4], memoryview(event)[_CLEAR_END:]))
        secret = self._crypt(moved, offset, encrypt=True)
        return b"".join((secret[5:9], secret[0:5], _U32.pack(len(event)), memoryview(secret)[9:]))


class MariaDBDecryptingStream(DecryptingStage):
    """Reads a MariaDB binlog and gives it decrypted; ``keys`` is the server's
    ``file_key_management`` key file.

    A binlog without START_ENCRYPTION right after its format description
    passes unchanged. ``follow``: a partial event at the end of the input is
    held back until it is whole; otherwise it is given as read, and the reader
    reports it as truncated. Once read, START_ENCRYPTION's ``nonce`` and
    ``key_version``, ``encrypted_from`` and the ``cipher`` are what a writer
    continuing the file needs.
    """

    def _begin(self, head: bytes) -> None:
        self.cipher: EventCipher | None = None
        """The cipher, once START_ENCRYPTION and the first encrypted event(s) were read."""
        self.encrypted_from: int | None = None
        """Where the encrypted events start (the end of START_ENCRYPTION), once read."""
        self.nonce = b""
        self.key_version = 0
        self._starts_at = 0
        self._pending = bytearray(head)
        self._pending_at = 0
        """The input offset of ``_pending``'s first byte."""
        self._ready = bytearray()
        self._position = 0
        self._state: Literal["magic", "format", "start", "plain", "encrypted"] = "magic"
        self._checksummed = False
        self._undecided: list[tuple[bytes, int]] = []
        """Without checksums: the encrypted events read while both ciphers stay possible."""
        self._candidates: list[EventCipher] = []

    def read(self, size: int) -> bytes:
        while not self._ready:
            chunk = self._inner.read(max(size, _READ_CHUNK))
            if not chunk:
                if not self.follow and self._undecided:
                    self._decide(self._candidates[0])  # the input ended still undecided
                if not self.follow and self._pending:
                    self._ready += self._pending  # a partial event: the framer says where
                    self._pending_at += len(self._pending)
                    self._pending.clear()
                if not self._ready:
                    break
                continue
            self._pending += chunk
            self._process()
        if len(self._ready) <= size:
            given = bytes(self._ready)
            self._ready.clear()
        else:
            given = bytes(memoryview(self._ready)[:size])
            del self._ready[:size]
        self._position += len(given)
        return given

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int) -> int:
        """Continue at ``offset``; an offset inside the plain events at the start is reached
        by reading them again from the start."""
        while self._state in ("magic", "format", "start"):  # learn where encryption starts
            chunk = self._inner.read(_HEAD_CHUNK)
            if not chunk:
                break
            self._pending += chunk
            self._process()
        begins = self.encrypted_from
        restart = begins is not None and offset < begins
        reached = self._inner.seek(0 if restart else offset)
        self._pending.clear()
        self._ready.clear()
        self._undecided.clear()
        self._pending_at = self._position = reached
        if restart:
            self._state = "magic"
            while self._position < offset and self.read(offset - self._position):
                pass
            return self._position
        self._state = "encrypted" if begins is not None else "plain"
        return reached

    def _process(self) -> None:
        """Turn whole events of ``_pending`` into decrypted bytes in ``_ready``."""
        pending = self._pending
        at = 0
        while True:
            state = self._state
            if state == "plain":
                self._ready += pending[at:]
                at = len(pending)
                break
            if state == "magic":
                if len(pending) - at < len(MAGIC):
                    break
                self._ready += pending[at : at + len(MAGIC)]
                at += len(MAGIC)
                self._state = "format" if pending[at - len(MAGIC) : at] == MAGIC else "plain"
                continue
            if len(pending) - at < _CLEAR_END:
                break
            size = _U32.unpack_from(pending, at + EVENT_SIZE_OFFSET)[0]
            if not _HEADER <= size <= MAX_EVENT_SIZE:
                self._state = "plain"  # damage: the framer reports it
                continue
            if len(pending) - at < size:
                break
            with memoryview(pending) as view:
                event = bytes(view[at : at + size])
            self._ready += self._event(event, self._pending_at + at)
            at += size
        del pending[:at]
        self._pending_at += at

    def _event(self, event: bytes, offset: int) -> bytes:
        """One whole event at ``offset``, as given out; moves the state on."""
        state = self._state
        code = event[TYPE_CODE_OFFSET]
        if state == "encrypted":
            return self._decrypt(event, offset)
        if state == "format":
            if code != EventType.FORMAT_DESCRIPTION:
                self._state = "plain"
                return event
            from binlogkit.binlog.events.format_description import fde_checksum_alg

            self._checksummed = bool(fde_checksum_alg(event, _HEADER))
            self._state = "start"
        elif code == EventType.MARIADB_START_ENCRYPTION:
            if len(event) < _HEADER + START_ENCRYPTION_BODY.size:
                raise EncryptedBinlogError(
                    f"START_ENCRYPTION of {len(event)} bytes is too short",
                    file=self.name,
                    offset=offset,
                    event_type="START_ENCRYPTION",
                )
            scheme, self.key_version, self.nonce = START_ENCRYPTION_BODY.unpack_from(event, _HEADER)
            if scheme != 1:
                raise EncryptedBinlogError(
                    f"encryption scheme {scheme}: only scheme 1 is known",
                    file=self.name,
                    offset=offset,
                    event_type="START_ENCRYPTION",
                )
            self._starts_at = offset
            self.encrypted_from = offset + len(event)
            self._state = "encrypted"
        else:
            self._state = "plain"
        return event

    def encryption_start(self) -> EncryptionStart | None:
        """What the input read so far says of its encryption (None: no START_ENCRYPTION)."""
        if self.encrypted_from is None:
            return None
        algorithm = None if self.cipher is None else self.cipher.algorithm
        return EncryptionStart(
            self._starts_at, self.key_version, self.nonce, self.encrypted_from, algorithm
        )

    def _decrypt(self, event: bytes, offset: int) -> bytes:
        if self.cipher is not None:
            return self.cipher.decrypt(event, offset)
        if not self._candidates:
            key = self._binlog_key(offset)
            self._candidates = [EventCipher(key, self.nonce, a) for a in ALGORITHMS]
        self._undecided.append((event, offset))
        fits = []
        for cipher in self._candidates:
            plain = cipher.decrypt(event, offset)
            if self._checksummed:
                if zlib.crc32(plain) == CRC32_RESIDUE:
                    fits.append(cipher)
            elif _plausible(plain):
                fits.append(cipher)
                if _U32.unpack_from(plain, LOG_POS_OFFSET)[0] == offset + len(plain):
                    fits = [cipher]  # its end position is right: a binlog, not a relay log
                    break
        if not fits:
            first = self._undecided[0][1]
            raise EncryptedBinlogError(
                f"the event at {offset} does not decrypt with key {BINLOG_KEY_ID} "
                f"(version {self.key_version}) of {self.keys.path}, in AES-CBC nor AES-CTR"
                + ("" if first == offset else f" (with the events from {first})"),
                file=self.name,
                offset=offset,
                hint="the key file is not the one the server used, or the file is damaged",
            )
        self._candidates = fits
        if len(fits) == 1 or self._checksummed or len(self._undecided) >= LOOKAHEAD:
            self._decide(fits[0])
        return b""

    def _decide(self, cipher: EventCipher) -> None:
        """Keep ``cipher``; the events read while undecided go out decrypted."""
        if len(self._candidates) > 1:
            log.warning(
                "%s: AES-CBC and AES-CTR both give valid events from offset %d (%d read); "
                "reading them as %s",
                self.name,
                self._undecided[0][1],
                len(self._undecided),
                cipher.algorithm.upper(),
            )
        self.cipher = cipher
        for event, offset in self._undecided:
            self._ready += cipher.decrypt(event, offset)
        self._undecided.clear()

    def _binlog_key(self, offset: int) -> bytes:
        """The binlog key at this file's key version, or an error naming file, offset and key."""
        if self.keys.kind != "file_key_management":
            raise EncryptedBinlogError(
                f"a MariaDB encrypted binlog needs a file_key_management key file, "
                f"{self.keys.path} is a MySQL keyring",
                file=self.name,
                offset=offset,
            )
        if self.key_version != 1:
            raise EncryptedBinlogError(
                f"the binlog is encrypted with version {self.key_version} of key "
                f"{BINLOG_KEY_ID}; the file_key_management key file {self.keys.path} "
                "holds version 1 of each key only",
                file=self.name,
                offset=offset,
                hint="the server used a key management plugin that rotates keys "
                "(e.g. hashicorp_key_management or aws_key_management): read this "
                "binlog through that server (mariadb-binlog --read-from-remote-server)",
            )
        return self.keys.key(BINLOG_KEY_ID, file=self.name, offset=offset)


def _plausible(plain: bytes) -> bool:
    """A decrypted event without checksum looks like one: a known type with known flags."""
    flags: int = _U16.unpack_from(plain, FLAGS_OFFSET)[0]
    return plain[TYPE_CODE_OFFSET] in _KNOWN_TYPES and not flags & ~_KNOWN_FLAGS


class MariaDBEncryptingStream(OutputStream):
    """Writes a MariaDB binlog into the file ``inner`` encrypted, as ``encrypt_binlog`` does.

    Bytes are written plain (magic, format description, START_ENCRYPTION,
    events); the events after the START_ENCRYPTION event whose nonce and key
    version this stage was made with are encrypted with ``key`` (AES-CBC or
    AES-CTR, ``algorithm``: what the server's key plugin uses). A partial
    event is held until its last byte comes. ``update`` reaches the plain part.
    ``encrypting_from``: ``inner`` already holds the plain part up to there (an
    encrypted binlog being continued): every event written is encrypted.
    """

    def __init__(
        self,
        inner: FileOutputStream,
        key: bytes,
        *,
        key_version: int = 1,
        nonce: bytes | None = None,
        algorithm: Algorithm = "cbc",
        encrypting_from: int | None = None,
    ) -> None:
        self._inner = inner
        self.key_version = key_version
        self.nonce = os.urandom(12) if nonce is None else nonce
        self.cipher = EventCipher(key, self.nonce, algorithm)
        self._held = bytearray()
        self._encrypting = encrypting_from is not None
        self._plain_end = encrypting_from

    def start_event_body(self) -> bytes:
        """The body of the START_ENCRYPTION event that switches this stage on."""
        return START_ENCRYPTION_BODY.pack(1, self.key_version, self.nonce)

    @property
    def position(self) -> int:
        return self._inner.position + len(self._held)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        held = self._held
        held += data
        at = 0
        if self._inner.position == 0 and len(held) >= len(MAGIC):
            self._inner.write(held[: len(MAGIC)])
            at = len(MAGIC)
        while len(held) - at >= _CLEAR_END:
            size = _U32.unpack_from(held, at + EVENT_SIZE_OFFSET)[0]
            if len(held) - at < size:
                break
            event = bytes(held[at : at + size])
            offset = self._inner.position
            if self._encrypting:
                self._inner.write(self.cipher.encrypt(event, offset))
            else:
                self._inner.write(event)
                if self._starts_encryption(event):
                    self._encrypting = True
                    self._plain_end = offset + size
            at += size
        del held[:at]

    def _starts_encryption(self, event: bytes) -> bool:
        return (
            event[TYPE_CODE_OFFSET] == EventType.MARIADB_START_ENCRYPTION
            and event[_HEADER : _HEADER + START_ENCRYPTION_BODY.size] == self.start_event_body()
        )

    def update(self, offset: int, data: bytes) -> None:
        """Overwrite plain bytes already written (the format description's in-use flag)."""
        if self._plain_end is not None and offset + len(data) > self._plain_end:
            raise BinlogError(f"cannot update encrypted bytes at {offset}")
        self._inner.update(offset, data)

    def truncate(self, offset: int) -> None:
        raise BinlogError("an encrypted binlog cannot be cut short and continued")

    def flush(self) -> None:
        self._inner.flush()

    def sync(self) -> None:
        self._inner.sync()

    def is_open(self) -> bool:
        return self._inner.is_open()

    @property
    def path(self) -> Path:
        return self._inner.path

    def close(self) -> None:
        self._inner.close()
