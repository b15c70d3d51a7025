"""Collation ids (as table maps carry them) → character sets → Python text codecs.

A table map names each string column's collation by its numeric id. Ids
1-247 mean the same in MySQL and MariaDB; MySQL adds 76, 248-250 (gb18030)
and 255-323 (the utf8mb4 ``_0900`` family); MariaDB adds 576-738 (a few UCA
collations), 1024 + n (the NO PAD twin of collation n) and 2048-3327 (the
``uca1400`` collations, 256 ids per Unicode character set). None of the ranges
clash, so one table serves both flavours.

:func:`text_codec` gives the pair of functions that turn a column's bytes into
``str`` and back; it is ``None`` for the ``binary`` pseudo charset (id 63),
for unknown ids, and for the few MySQL charsets Python has no codec for
(dec8, hp8, swe7, armscii8, keybcs2, geostd8): those columns stay ``bytes``.

Two MySQL charsets differ from the Python codec of the same name:

- MySQL's ``latin1`` is Windows-1252, with the five bytes 1252 leaves
  undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D) mapped to the C1 controls of the
  same number, so every byte has a character and none is lost;
- ``ucs2``, ``utf16`` and ``utf32`` are big-endian without a byte-order mark.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from operator import methodcaller
from typing import Final

BINARY_COLLATION: Final = 63
"""The ``binary`` pseudo collation: the column holds bytes, not text."""

# (first id, last id, charset) for ids below 1024.
_RUNS: Final[tuple[tuple[int, int, str], ...]] = (
    (1, 1, "big5"),
    (2, 2, "latin2"),
    (3, 3, "dec8"),
    (4, 4, "cp850"),
    (5, 5, "latin1"),
    (6, 6, "hp8"),
    (7, 7, "koi8r"),
    (8, 8, "latin1"),
    (9, 9, "latin2"),
    (10, 10, "swe7"),
    (11, 11, "ascii"),
    (12, 12, "ujis"),
    (13, 13, "sjis"),
    (14, 14, "cp1251"),
    (15, 15, "latin1"),
    (16, 16, "hebrew"),
    (18, 18, "tis620"),
    (19, 19, "euckr"),
    (20, 20, "latin7"),
    (21, 21, "latin2"),
    (22, 22, "koi8u"),
    (23, 23, "cp1251"),
    (24, 24, "gb2312"),
    (25, 25, "greek"),
    (26, 26, "cp1250"),
    (27, 27, "latin2"),
    (28, 28, "gbk"),
    (29, 29, "cp1257"),
    (30, 30, "latin5"),
    (31, 31, "latin1"),
    (32, 32, "armscii8"),
    (33, 33, "utf8mb3"),
    (34, 34, "cp1250"),
    (35, 35, "ucs2"),
    (36, 36, "cp866"),
    (37, 37, "keybcs2"),
    (38, 38, "macce"),
    (39, 39, "macroman"),
    (40, 40, "cp852"),
    (41, 42, "latin7"),
    (43, 43, "macce"),
    (44, 44, "cp1250"),
    (45, 46, "utf8mb4"),
    (47, 49, "latin1"),
    (50, 52, "cp1251"),
    (53, 53, "macroman"),
    (54, 55, "utf16"),
    (56, 56, "utf16le"),
    (57, 57, "cp1256"),
    (58, 59, "cp1257"),
    (60, 61, "utf32"),
    (62, 62, "utf16le"),
    (63, 63, "binary"),
    (64, 64, "armscii8"),
    (65, 65, "ascii"),
    (66, 66, "cp1250"),
    (67, 67, "cp1256"),
    (68, 68, "cp866"),
    (69, 69, "dec8"),
    (70, 70, "greek"),
    (71, 71, "hebrew"),
    (72, 72, "hp8"),
    (73, 73, "keybcs2"),
    (74, 74, "koi8r"),
    (75, 75, "koi8u"),
    (76, 76, "utf8mb3"),
    (77, 77, "latin2"),
    (78, 78, "latin5"),
    (79, 79, "latin7"),
    (80, 80, "cp850"),
    (81, 81, "cp852"),
    (82, 82, "swe7"),
    (83, 83, "utf8mb3"),
    (84, 84, "big5"),
    (85, 85, "euckr"),
    (86, 86, "gb2312"),
    (87, 87, "gbk"),
    (88, 88, "sjis"),
    (89, 89, "tis620"),
    (90, 90, "ucs2"),
    (91, 91, "ujis"),
    (92, 93, "geostd8"),
    (94, 94, "latin1"),
    (95, 96, "cp932"),
    (97, 98, "eucjpms"),
    (99, 99, "cp1250"),
    (101, 124, "utf16"),
    (128, 151, "ucs2"),
    (159, 159, "ucs2"),
    (160, 183, "utf32"),
    (192, 215, "utf8mb3"),
    (223, 223, "utf8mb3"),
    (224, 247, "utf8mb4"),
    (248, 250, "gb18030"),
    (255, 323, "utf8mb4"),
    (576, 578, "utf8mb3"),
    (608, 610, "utf8mb4"),
    (640, 642, "ucs2"),
    (672, 674, "utf16"),
    (736, 738, "utf32"),
)

_NOPAD_BASE: Final = 1024
_UCA1400_BASE: Final = 2048
_UCA1400_BLOCKS: Final = ("utf8mb3", "utf8mb4", "ucs2", "utf16", "utf32")

_BY_ID: Final[dict[int, str]] = {
    cid: name for first, last, name in _RUNS for cid in range(first, last + 1)
}

PYTHON_CODECS: Final[dict[str, str | None]] = {
    "armscii8": None,
    "ascii": "ascii",
    "big5": "big5",
    "binary": None,
    "cp1250": "cp1250",
    "cp1251": "cp1251",
    "cp1256": "cp1256",
    "cp1257": "cp1257",
    "cp850": "cp850",
    "cp852": "cp852",
    "cp866": "cp866",
    "cp932": "cp932",
    "dec8": None,
    "eucjpms": "euc_jp",
    "euckr": "euc_kr",
    "gb18030": "gb18030",
    "gb2312": "gb2312",
    "gbk": "gbk",
    "geostd8": None,
    "greek": "iso8859_7",
    "hebrew": "iso8859_8",
    "hp8": None,
    "keybcs2": None,
    "koi8r": "koi8_r",
    "koi8u": "koi8_u",
    "latin1": "latin1",
    "latin2": "iso8859_2",
    "latin5": "iso8859_9",
    "latin7": "iso8859_13",
    "macce": "mac_latin2",
    "macroman": "mac_roman",
    "sjis": "shift_jis",
    "swe7": None,
    "tis620": "tis_620",
    "ucs2": "utf_16_be",
    "ujis": "euc_jp",
    "utf16": "utf_16_be",
    "utf16le": "utf_16_le",
    "utf32": "utf_32_be",
    "utf8mb3": "utf_8",
    "utf8mb4": "utf_8",
}
"""MySQL charset name → Python codec name (``None``: no codec, the bytes are kept).

``latin1`` names Python's Latin-1 codec, which :func:`text_codec` combines with
the Windows-1252 table (see the module docstring).
"""


def charset_name(collation_id: int) -> str | None:
    """The MySQL/MariaDB character set of a collation id, ``None`` if unknown."""
    name = _BY_ID.get(collation_id)
    if name is not None:
        return name
    if _NOPAD_BASE <= collation_id < _UCA1400_BASE:
        return _BY_ID.get(collation_id - _NOPAD_BASE)
    block = (collation_id - _UCA1400_BASE) >> 8
    if 0 <= block < len(_UCA1400_BLOCKS):
        return _UCA1400_BLOCKS[block]
    return None


def python_codec(collation_id: int) -> str | None:
    """The Python codec for a collation id; ``None`` for binary, unknown or codec-less ones."""
    name = charset_name(collation_id)
    return None if name is None else PYTHON_CODECS[name]


@dataclass(frozen=True, slots=True)
class TextCodec:
    """How one charset's bytes become ``str`` and back.

    ``decode`` raises :class:`UnicodeDecodeError` for bytes the charset does not
    allow; callers keep such values as bytes.
    """

    charset: str
    decode: Callable[[bytes], str]
    encode: Callable[[str], bytes]


# MySQL latin1: Windows-1252 where defined, the C1 control of the same number
# elsewhere: a 256-character table for the C charmap codec.
_LATIN1_TABLE: Final = "".join(
    ch if ch != "\ufffd" else chr(code)
    for code, ch in enumerate(bytes(range(256)).decode("cp1252", errors="replace"))
)
_LATIN1_MAP: Final = codecs.charmap_build(_LATIN1_TABLE)


def _latin1_decode(data: bytes) -> str:
    return codecs.charmap_decode(data, "strict", _LATIN1_TABLE)[0]


def _latin1_encode(text: str) -> bytes:
    return codecs.charmap_encode(text, "strict", _LATIN1_MAP)[0]


def _codec_pair(codec: str) -> tuple[Callable[[bytes], str], Callable[[str], bytes]]:
    # C-level callables: no Python frame per value.
    return partial(str, encoding=codec), methodcaller("encode", codec)


_TEXT_CODECS: Final[dict[str, TextCodec]] = {
    name: TextCodec(name, _latin1_decode, _latin1_encode)
    if name == "latin1"
    else TextCodec(name, *_codec_pair(codec))
    for name, codec in PYTHON_CODECS.items()
    if codec is not None
}


def text_codec(collation_id: int | None) -> TextCodec | None:
    """The text codec of a collation id, or ``None`` when the values stay bytes."""
    if collation_id is None:
        return None
    name = charset_name(collation_id)
    return None if name is None else _TEXT_CODECS.get(name)
