"""Text into index terms: the one analysis used for indexing and for queries.

Steps, in order (docs/search.md):

1. Words are found in the text as written, by Unicode's default word boundaries
   (UAX #29, the ``regex`` package's ``WORD`` flag); a word is a segment that
   holds a letter, digit or connector (``\\w``).
2. Each word is normalised: NFKC, case folding (``str.casefold``), NFKC again.
3. Runs of adjacent CJK words (Han, Hiragana, Katakana, Hangul) become
   overlapping character bigrams (``東京都`` → ``東京``, ``京都``); a lone CJK
   character stays a unigram.
4. Stop words (compared after step 2) are dropped, leaving a gap in positions.
5. Other words are stemmed by Snowball (PyStemmer) when a language is set.

Each token has a position (one per word, one per bigram; dropped ones leave a gap)
and the character span of the text it came from, for snippets. A word longer than
:data:`MAX_WORD` characters is skipped (a gap too).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import regex

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import BinlogError

__all__ = ["ENGLISH_STOP_WORDS", "MAX_WORD", "Analyzer", "Token", "normalize", "read_stop_words"]

MAX_WORD = 255
"""Longer words are not indexed (Lucene's StandardTokenizer limit)."""

ENGLISH_STOP_WORDS = frozenset(
    (
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    )
)
"""The default stop words: Lucene's English list (``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``)."""

_BOUNDARY = regex.compile(r"\b", flags=regex.WORD | regex.V1)
_WORDLIKE = regex.compile(r"\w", flags=regex.V1)
_CJK = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]", flags=regex.V1)


@frozen_dataclass
class Token:
    """An index term at ``position``, from ``text[start:end]``."""

    term: str
    position: int
    start: int
    end: int


def normalize(word: str) -> str:
    """NFKC, case folding, NFKC: how every word (and a query's prefix) is compared."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", word).casefold())


def read_stop_words(path: str | Path) -> frozenset[str]:
    """Stop words from a UTF-8 file: one a line, ``#`` starts a comment; normalised."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise BinlogError(f"stop words file {path}: {err}") from None
    return frozenset(normalize(w) for line in lines if (w := line.partition("#")[0].strip()))


@frozen_dataclass
class Analyzer:
    """The analysis settings of an index (stored with it, see :meth:`to_json`).

    ``stem``: a Snowball language (``english``, ``russian`` ... as PyStemmer names
    them) or None. ``stop_words``: normalised words to leave out.
    """

    stem: str | None = None
    stop_words: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.stem is not None:
            _stemmer(self.stem)  # an unknown language fails here, not on an executor

    def tokens(self, text: str) -> list[Token]:
        """The index terms of ``text``, in order."""
        return [Token(*t) for t in self._analyse(text)]

    def terms(self, text: str) -> list[tuple[str, int]]:
        """``(term, position)`` of each token of ``text``."""
        return [(t[0], t[1]) for t in self._analyse(text)]

    def _analyse(self, text: str) -> list[tuple[str, int, int, int]]:
        """``(term, position, start, end)`` of each token."""
        out: list[tuple[str, int, int, int]] = []
        plain: list[int] = []  # indexes in out of the words to stem (not CJK)
        run: list[tuple[str, int, int]] = []  # CJK characters waiting for bigrams
        position = 0
        for word, start, end, gap in _words(text):
            cjk = not word.isascii() and _CJK.match(word) is not None
            if run and (gap or not cjk):
                position = _bigrams(run, position, out)
                run = []
            if word == "":  # a skipped (too long) word
                position += 1
            elif cjk:
                run.extend(_characters(word, start, end))
            else:
                if word not in self.stop_words:
                    plain.append(len(out))
                    out.append((word, position, start, end))
                position += 1
        if run:
            _bigrams(run, position, out)
        if self.stem is not None and plain:
            stems = _stemmer(self.stem).stemWords([out[i][0] for i in plain])
            for i, stem in zip(plain, stems, strict=True):
                out[i] = (stem, *out[i][1:])
        return out

    def to_json(self) -> dict[str, Any]:
        return {"stem": self.stem, "stop_words": sorted(self.stop_words)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Analyzer:
        return cls(stem=data.get("stem"), stop_words=frozenset(data.get("stop_words", ())))


def _words(text: str) -> Iterator[tuple[str, int, int, bool]]:
    """Each word of ``text``, normalised (``""`` for one too long), its span, and whether
    something other than a word came before it since the previous word."""
    start = last = 0
    for segment in _BOUNDARY.split(text):
        stop = start + len(segment)
        if segment and not segment.isspace() and _WORDLIKE.search(segment):
            if stop - start > MAX_WORD:
                yield "", start, stop, start != last
            elif segment.isascii():  # NFKC leaves ASCII alone; its case folding is lower()
                yield segment.lower(), start, stop, start != last
            else:
                yield normalize(segment), start, stop, start != last
            last = stop
        start = stop


def _characters(word: str, start: int, end: int) -> list[tuple[str, int, int]]:
    """A CJK word's characters with their spans (the word's span when normalisation changed
    its length)."""
    if len(word) == end - start:
        return [(ch, start + i, start + i + 1) for i, ch in enumerate(word)]
    return [(ch, start, end) for ch in word]


def _bigrams(
    run: list[tuple[str, int, int]], position: int, out: list[tuple[str, int, int, int]]
) -> int:
    """Append the bigrams of a CJK run (a unigram for a lone character); the next position."""
    if len(run) == 1:
        ch, start, end = run[0]
        out.append((ch, position, start, end))
        return position + 1
    for i in range(len(run) - 1):
        out.append((run[i][0] + run[i + 1][0], position, run[i][1], run[i + 1][2]))
        position += 1
    return position


@cache
def _stemmer(language: str) -> Any:
    import Stemmer  # PyStemmer

    try:
        return Stemmer.Stemmer(language)
    except KeyError:
        known = ", ".join(sorted(Stemmer.algorithms()))
        raise BinlogError(f"no Snowball stemmer for {language!r}; known: {known}") from None
