"""Character set and collation names: aliases, defaults, and how a column's pair is resolved.

Names are canonical lower case: ``utf8`` is ``utf8mb3`` (as MariaDB 10.6+
and MySQL 8.0.30+ name it), so ``utf8_bin`` is ``utf8mb3_bin``. A charset's
default collation is the server's (SHOW CHARACTER SET); MySQL 8.0 changed
utf8mb4's to ``utf8mb4_0900_ai_ci`` and MariaDB lets ``character_set_collations``
override any, which callers pass as ``overrides``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final, NamedTuple

from binlogkit.binlog.constants import Flavor
from binlogkit.binlog.rows.charsets import CHARSET_ALIASES, MAX_CHAR_LENGTHS

BINARY: Final = "binary"

_DEFAULT_SUFFIX: Final[dict[str, str]] = {
    **dict.fromkeys(
        [
            "armscii8",
            "ascii",
            "cp1250",
            "cp1251",
            "cp1256",
            "cp1257",
            "cp850",
            "cp852",
            "cp866",
            "geostd8",
            "greek",
            "hebrew",
            "keybcs2",
            "koi8r",
            "koi8u",
            "latin2",
            "latin7",
            "macce",
            "macroman",
            "ucs2",
            "utf16",
            "utf16le",
            "utf32",
            "utf8mb3",
            "utf8mb4",
        ],
        "general_ci",
    ),
    **dict.fromkeys(["cp932", "eucjpms", "sjis", "ujis"], "japanese_ci"),
    **dict.fromkeys(["big5", "gb18030", "gb2312", "gbk"], "chinese_ci"),
    **dict.fromkeys(["dec8", "latin1", "swe7"], "swedish_ci"),
    "euckr": "korean_ci",
    "hp8": "english_ci",
    "latin5": "turkish_ci",
    "tis620": "thai_ci",
}
"""Charset → the suffix of its default collation (``latin1`` → ``latin1_swedish_ci``)."""


class Charset(NamedTuple):
    """A resolved charset and collation pair."""

    charset: str
    collation: str


def charset_name(name: str) -> str:
    """The canonical name of a charset (lower case, ``utf8`` → ``utf8mb3``)."""
    lowered = name.lower()
    return CHARSET_ALIASES.get(lowered, lowered)


def collation_name(name: str) -> str:
    """The canonical name of a collation (``utf8_bin`` → ``utf8mb3_bin``)."""
    lowered = name.lower()
    head, sep, tail = lowered.partition("_")
    return charset_name(head) + sep + tail


def charset_of(collation: str) -> str:
    """The charset a (canonical) collation belongs to."""
    return collation.partition("_")[0]


def default_collation(
    charset: str,
    flavor: Flavor = Flavor.MARIADB,
    version: tuple[int, int, int] | None = None,
    overrides: Mapping[str, str] | None = None,
) -> str:
    """The collation a charset gets when none is named."""
    if overrides and charset in overrides:
        return overrides[charset]
    if charset == BINARY:
        return BINARY
    if (
        charset == "utf8mb4"
        and flavor is Flavor.MYSQL
        and (version is None or version >= (8, 0, 1))
    ):
        return "utf8mb4_0900_ai_ci"
    return f"{charset}_{_DEFAULT_SUFFIX.get(charset, 'general_ci')}"


def max_char_length(charset: str | None) -> int:
    """Bytes per character (``mbmaxlen``) of a charset; 1 for single-byte and binary."""
    return 1 if charset is None else MAX_CHAR_LENGTHS.get(charset, 1)


def resolve(
    charset: str | None,
    collation: str | None,
    default: Charset,
    default_for: Callable[[str], str],
    *,
    binary: bool = False,
) -> Charset:
    """The pair a definition ends up with, MySQL's way.

    An explicit charset takes the explicit collation, else its ``_bin``
    collation when the BINARY attribute was given, else its default
    (``default_for``). A collation alone implies its charset; MariaDB's
    charset-less names (``uca1400_ai_ci``) apply to the inherited charset.
    Nothing explicit inherits ``default`` (with BINARY, its charset's ``_bin``).
    """
    if charset is None and collation is not None:
        head = charset_of(collation)
        if head in _DEFAULT_SUFFIX or head == BINARY:
            return Charset(head, collation)
        return Charset(default.charset, f"{default.charset}_{collation}")
    if charset is None:
        if not binary:
            return default
        charset = default.charset
    if collation is None:
        collation = f"{charset}_bin" if binary and charset != BINARY else default_for(charset)
    return Charset(charset, collation)
