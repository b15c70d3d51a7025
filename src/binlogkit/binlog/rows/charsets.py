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
from functools import cache, partial
from operator import methodcaller
from typing import Final

from binlogkit.binlog.frozen import frozen_dataclass

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


@frozen_dataclass
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


# --- collation names and widths (what mysqlbinlog / mariadb-binlog print) -------------------


def _words(text: str) -> list[str]:
    return text.split()


# Ids below 1024 outside the UCA blocks: the name after "<charset>_" (63 is "binary").
_SUFFIXES: Final[dict[int, str]] = {
    int(key): suffix
    for key, suffix in (
        item.split(":")
        for item in _words(
            """
1:chinese_ci 2:czech_cs 3:swedish_ci 4:general_ci 5:german1_ci 6:english_ci 7:general_ci
8:swedish_ci 9:general_ci 10:swedish_ci 11:general_ci 12:japanese_ci 13:japanese_ci
14:bulgarian_ci 15:danish_ci 16:general_ci 18:thai_ci 19:korean_ci 20:estonian_cs
21:hungarian_ci 22:general_ci 23:ukrainian_ci 24:chinese_ci 25:general_ci 26:general_ci
27:croatian_ci 28:chinese_ci 29:lithuanian_ci 30:turkish_ci 31:german2_ci 32:general_ci
33:general_ci 34:czech_cs 35:general_ci 36:general_ci 37:general_ci 38:general_ci
39:general_ci 40:general_ci 41:general_ci 42:general_cs 43:bin 44:croatian_ci
45:general_ci 46:bin 47:bin 48:general_ci 49:general_cs 50:bin 51:general_ci 52:general_cs
53:bin 54:general_ci 55:bin 56:general_ci 57:general_ci 58:bin 59:general_ci 60:general_ci
61:bin 62:bin 64:bin 65:bin 66:bin 67:bin 68:bin 69:bin 70:bin 71:bin 72:bin 73:bin 74:bin
75:bin 77:bin 78:bin 79:bin 80:bin 81:bin 82:bin 83:bin 84:bin 85:bin 86:bin 87:bin 88:bin
89:bin 90:bin 91:bin 92:general_ci 93:bin 94:spanish_ci 95:japanese_ci 96:bin
97:japanese_ci 98:bin 99:polish_ci 159:general_mysql500_ci 223:general_mysql500_ci
"""
        )
    )
}
# The UCA collations of utf16, ucs2, utf32, utf8mb3 and utf8mb4: 24 ids from each start.
_UCA_STARTS: Final = (101, 128, 160, 192, 224)
_UCA_SUFFIXES: Final = _words(
    "unicode_ci icelandic_ci latvian_ci romanian_ci slovenian_ci polish_ci estonian_ci "
    "spanish_ci swedish_ci turkish_ci czech_ci danish_ci lithuanian_ci slovak_ci spanish2_ci "
    "roman_ci persian_ci esperanto_ci hungarian_ci sinhala_ci german2_ci croatian_mysql561_ci "
    "unicode_520_ci vietnamese_ci"
)
# MariaDB: three more per Unicode charset at 576, 608, 640, 672 and 736.
_MARIADB_EXTRA_SUFFIXES: Final = ("croatian_ci", "myanmar_ci", "thai_520_w2")
# MariaDB's uca1400 collations: 2048 + 256 * charset + 8 * locale + variant.
_UCA1400_LOCALES: Final = _words(
    ". icelandic latvian romanian slovenian polish estonian spanish swedish turkish czech "
    "danish lithuanian slovak spanish2 roman persian esperanto hungarian sinhala german2 - - "
    "vietnamese croatian"
)
# MySQL 8's names where MariaDB has none or another one.
_MYSQL_0900_LOCALES: Final = _words(
    ". de_pb is lv ro sl pl et es sv tr cs da lt sk es_trad la - eo hu hr - vi"
)
_MYSQL_NAMES: Final[dict[int, str]] = {
    76: "utf8mb3_tolower_ci",
    122: "utf16_croatian_ci",
    149: "ucs2_croatian_ci",
    181: "utf32_croatian_ci",
    213: "utf8mb3_croatian_ci",
    245: "utf8mb4_croatian_ci",
    248: "gb18030_chinese_ci",
    249: "gb18030_bin",
    250: "gb18030_unicode_520_ci",
    **{
        start + i: f"utf8mb4_{'' if loc == '.' else loc + '_'}0900_{kind}"
        for start, kind in ((255, "ai_ci"), (278, "as_cs"))
        for i, loc in enumerate(_MYSQL_0900_LOCALES)
        if loc != "-"
    },
    **{
        303 + i: f"utf8mb4_{name}"
        for i, name in enumerate(
            _words(
                "ja_0900_as_cs ja_0900_as_cs_ks 0900_as_ci ru_0900_ai_ci ru_0900_as_cs "
                "zh_0900_as_cs 0900_bin nb_0900_ai_ci nb_0900_as_cs nn_0900_ai_ci "
                "nn_0900_as_cs sr_latn_0900_ai_ci sr_latn_0900_as_cs bs_0900_ai_ci "
                "bs_0900_as_cs bg_0900_ai_ci bg_0900_as_cs gl_0900_ai_ci gl_0900_as_cs "
                "mn_cyrl_0900_ai_ci mn_cyrl_0900_as_cs"
            )
        )
    },
}

MAX_CHAR_LENGTHS: Final[dict[str, int]] = {
    "big5": 2,
    "cp932": 2,
    "eucjpms": 3,
    "euckr": 2,
    "gb18030": 4,
    "gb2312": 2,
    "gbk": 2,
    "sjis": 2,
    "ucs2": 2,
    "ujis": 3,
    "utf16": 4,
    "utf16le": 4,
    "utf32": 4,
    "utf8mb3": 3,
    "utf8mb4": 4,
}
"""Bytes per character of the multi-byte charsets (``mbmaxlen``); the others take 1."""


def collation_name(collation_id: int, *, mysql: bool = False) -> str | None:
    """The name MariaDB (or, with ``mysql``, MySQL 8) gives a collation id; None if unknown."""
    if mysql:
        name = _MYSQL_NAMES.get(collation_id)
        if name is not None or collation_id >= 576:  # MySQL has none of MariaDB's high ids
            return name
    charset = charset_name(collation_id)
    if charset is None:
        return None
    if collation_id == BINARY_COLLATION:
        return "binary"
    if collation_id < _NOPAD_BASE:
        suffix = _SUFFIXES.get(collation_id)
        for start in _UCA_STARTS:
            if start <= collation_id < start + len(_UCA_SUFFIXES):
                suffix = _UCA_SUFFIXES[collation_id - start]
        if collation_id >= 576:
            suffix = _MARIADB_EXTRA_SUFFIXES[collation_id % 32]
        return None if suffix is None else f"{charset}_{suffix}"
    if collation_id < _UCA1400_BASE:  # the NO PAD twin: _ci → _nopad_ci, _bin → _nopad_bin
        base = collation_name(collation_id - _NOPAD_BASE)
        if base is None or base == "binary":
            return None
        head, _, tail = base.rpartition("_")
        return f"{head}_nopad_{tail}" if tail in ("ci", "bin") else None
    locale, variant = divmod((collation_id - _UCA1400_BASE) & 0xFF, 8)
    if locale >= len(_UCA1400_LOCALES) or _UCA1400_LOCALES[locale] == "-":
        return None
    prefix = "" if locale == 0 else _UCA1400_LOCALES[locale] + "_"
    nopad = "nopad_" if variant & 4 else ""
    return (
        f"{charset}_uca1400_{prefix}{nopad}{'as' if variant & 2 else 'ai'}"
        f"_{'cs' if variant & 1 else 'ci'}"
    )


def max_char_length(collation_id: int) -> int:
    """Bytes per character of a collation's charset (1 for single-byte and unknown ones)."""
    name = charset_name(collation_id)
    return 1 if name is None else MAX_CHAR_LENGTHS.get(name, 1)


def collation_id(name: str) -> int | None:
    """The id of a collation or character set name, as a table map would carry it; None if unknown.

    A collation name (MariaDB's, or MySQL 8's) gives its own id; a character set
    name (``utf8`` as ``utf8mb3``) gives the lowest id of that set, which decodes
    the same bytes (the collation only orders and compares them).
    """
    key = name.lower()
    return _named_ids().get(CHARSET_ALIASES.get(key, key))


CHARSET_ALIASES: Final = {"utf8": "utf8mb3"}
"""Character set names that the servers take for another (``utf8`` before MySQL 8.4)."""


@cache
def _named_ids() -> dict[str, int]:
    """Collation and character set names → ids, for :func:`collation_id` (built on first use)."""
    named: dict[str, int] = {}
    ids = [*_BY_ID, *range(_NOPAD_BASE, _UCA1400_BASE + len(_UCA1400_BLOCKS) * 256)]
    for cid in sorted(ids):
        charset = charset_name(cid)
        if charset is None:
            continue
        named.setdefault(charset, cid)
        for mysql in (False, True):
            collation = collation_name(cid, mysql=mysql)
            if collation is not None:
                named.setdefault(collation, cid)
    return named
