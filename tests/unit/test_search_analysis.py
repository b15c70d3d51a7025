"""The search analyzer: known answers per script family, stop words, stemming, NFKC, edges."""

# ruff: noqa: RUF001  (fullwidth and Greek letters are the test data)
from __future__ import annotations

import math
from pathlib import Path

import pytest

from binlogkit.errors import BinlogError
from binlogkit.search.analysis import (
    ENGLISH_STOP_WORDS,
    MAX_WORD,
    Analyzer,
    normalize,
    read_stop_words,
)
from binlogkit.search.bm25 import Stats, idf, term_score

PLAIN = Analyzer()


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("Hello, World!", [("hello", 0), ("world", 1)]),
        (
            "can't stop 3.14 e-mail foo_bar",
            [("can't", 0), ("stop", 1), ("3.14", 2), ("e", 3), ("mail", 4), ("foo_bar", 5)],
        ),
        ("Привет, МИР! Ёлки-палки", [("привет", 0), ("мир", 1), ("ёлки", 2), ("палки", 3)]),
        ("Ελληνικά ΚΕΙΜΕΝΑ", [("ελληνικά", 0), ("κειμενα", 1)]),
        ("東京都に住む", [("東京", 0), ("京都", 1), ("都に", 2), ("に住", 3), ("住む", 4)]),
        ("東京、大阪", [("東京", 0), ("大阪", 1)]),
        ("日 本", [("日", 0), ("本", 1)]),
        ("カタカナ", [("カタ", 0), ("タカ", 1), ("カナ", 2)]),
        ("한국어 텍스트", [("한국", 0), ("국어", 1), ("텍스", 2), ("스트", 3)]),
        ("abc東京def", [("abc", 0), ("東京", 1), ("def", 2)]),
        # NFKC: fullwidth letters, ligatures, halfwidth katakana; case folding of ß
        ("ＡＢＣ ﬁsh Straße ｶﾅ", [("abc", 0), ("fish", 1), ("strasse", 2), ("カナ", 3)]),
        ("", []),
        ("  ... !!! ", []),
    ],
)
def test_known_terms(text: str, terms: list[tuple[str, int]]) -> None:
    assert PLAIN.terms(text) == terms


def test_spans_point_into_the_text() -> None:
    text = "Das ist 東京都, ja"
    spans = [(t.term, text[t.start : t.end]) for t in PLAIN.tokens(text)]
    assert spans == [
        ("das", "Das"),
        ("ist", "ist"),
        ("東京", "東京"),
        ("京都", "京都"),
        ("ja", "ja"),
    ]


def test_stop_words_leave_gaps_and_stemming() -> None:
    english = Analyzer(stem="english", stop_words=ENGLISH_STOP_WORDS)
    assert english.terms("The running dogs are jumping over the fences") == [
        ("run", 1),
        ("dog", 2),
        ("jump", 4),
        ("over", 5),
        ("fenc", 7),
    ]
    assert Analyzer(stem="russian").terms("Бегущие собаки") == [("бегущ", 0), ("собак", 1)]
    # CJK bigrams are never stemmed
    assert english.terms("東京 runs") == [("東京", 0), ("run", 1)]


def test_stop_words_file(tmp_path: Path) -> None:
    path = tmp_path / "stop.txt"
    path.write_text("# mine\nDER\n die  # article\n\n", encoding="utf-8")
    words = read_stop_words(path)
    assert words == {"der", "die"}
    assert Analyzer(stop_words=words).terms("Der Hund, die Katze") == [("hund", 1), ("katze", 3)]
    with pytest.raises(BinlogError, match="missing"):
        read_stop_words(tmp_path / "missing.txt")


def test_unknown_stemmer_language() -> None:
    with pytest.raises(BinlogError, match="no Snowball stemmer for 'klingon'"):
        Analyzer(stem="klingon")


def test_config_round_trip() -> None:
    config = Analyzer(stem="english", stop_words=frozenset({"x", "y"}))
    assert Analyzer.from_json(config.to_json()) == config


def test_huge_text_and_huge_word() -> None:
    text = "alpha beta " * 100_000
    terms = PLAIN.terms(text)
    assert len(terms) == 200_000
    assert terms[-1] == ("beta", 199_999)
    long_word = "x" * (MAX_WORD + 1)
    assert PLAIN.terms(f"a {long_word} b") == [("a", 0), ("b", 2)]
    assert PLAIN.terms("y" * MAX_WORD) == [("y" * MAX_WORD, 0)]


def test_normalize() -> None:
    assert normalize("ＤＡＴＡ") == "data"
    assert normalize("Straße") == "strasse"


def test_bm25_known_values() -> None:
    assert idf(3, 1) == pytest.approx(math.log(1 + 2.5 / 1.5))
    assert idf(10, 10) == pytest.approx(math.log(1 + 0.5 / 10.5))
    stats = Stats(docs=4, length=40)
    assert stats.avg_length == 10
    # at average length the norm is 1: tf * 2.2 / (tf + 1.2)
    assert term_score(2, 10, stats.avg_length, 1.0) == pytest.approx(2 * 2.2 / 3.2)
    # longer documents score lower, more occurrences higher
    assert term_score(1, 20, 10, 1.0) < term_score(1, 10, 10, 1.0) < term_score(2, 10, 10, 1.0)
    assert Stats(0, 0).avg_length == 0
