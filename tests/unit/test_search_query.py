"""The search query language: parse trees, resolution into index terms, errors with places."""

# ruff: noqa: RUF001  (fullwidth and Greek letters are the test data)
from __future__ import annotations

import re

import pytest

from binlogkit.search.analysis import ENGLISH_STOP_WORDS, Analyzer
from binlogkit.search.query import (
    AllOf,
    And,
    AnyOf,
    Not,
    Or,
    Phrase,
    Prefix,
    Query,
    QueryError,
    Term,
    Without,
    Word,
    parse,
    resolve,
)

STOP = Analyzer(stop_words=ENGLISH_STOP_WORDS)


def _words(query: Query) -> object:
    """The tree with words as plain strings (``w*`` for prefixes, ``"w"`` for phrases)."""

    def walk(node: object) -> object:
        if isinstance(node, Word):
            return (
                f"{node.text}*" if node.prefix else f'"{node.text}"' if node.phrase else node.text
            )
        if isinstance(node, Not):
            return ("NOT", walk(node.item))
        if isinstance(node, And | Or):
            return (type(node).__name__.upper(), *(walk(i) for i in node.items))
        return node

    return walk(query.expr)


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ("apple", "apple"),
        ("apple pie", ("AND", "apple", "pie")),
        ("apple AND pie", ("AND", "apple", "pie")),
        ("a b OR c", ("OR", ("AND", "a", "b"), "c")),
        ("a OR b c", ("OR", "a", ("AND", "b", "c"))),
        ("(a OR b) c", ("AND", ("OR", "a", "b"), "c")),
        ("a NOT b", ("AND", "a", ("NOT", "b"))),
        ("a NOT (b OR c)", ("AND", "a", ("NOT", ("OR", "b", "c")))),
        ('data* "big data"', ("AND", "data*", '"big data"')),
        ("and or not", ("AND", "and", "or", "not")),  # operators are capitals only
        ("x:y", "x:y"),  # not a filter name: a word
    ],
)
def test_trees(text: str, tree: object) -> None:
    assert _words(parse(text)) == tree


def test_filters() -> None:
    query = parse("table:shop.items NOT sold column:name widget column:description")
    assert query.tables == ("shop.items",)
    assert query.columns == ("name", "description")
    assert _words(query) == ("AND", ("NOT", "sold"), "widget")
    assert parse("a OR b column:c").columns == ("c",)  # wherever it stands
    assert parse("table:shop.items").expr is None  # a filter alone: every document of the table


@pytest.mark.parametrize(
    ("text", "position", "message"),
    [
        ("", 0, "the query is empty"),
        ("a OR", 2, "OR needs a term after it"),
        ("OR a", 0, "OR needs a term before it"),
        ("a (b", 2, "'(' not closed"),
        ("a b)", 3, "')' without '('"),
        ("apple (", 6, "'(' not closed"),
        ("a () b", 2, "nothing inside ( )"),
        ("a (OR b)", 3, "OR needs a term before it"),
        ("NOT a", 0, "needs a term that is not negated"),
        ("a OR NOT b", 0, "needs a term that is not negated"),
        ('a "b c', 2, "phrase not closed"),
        ("a AND", 2, "AND needs a term on each side"),
        ("AND a", 0, "AND needs a term on each side"),
        ("a NOT", 2, "NOT needs a term after it"),
        ("(table:x a)", 1, "filters apply to the whole query"),
        ("x *", 2, "a prefix term is letters followed by one *"),
        ("a*b", 0, "* may only end a word"),
        ("column:", 0, "column: needs a value"),
    ],
)
def test_errors_name_the_place(text: str, position: int, message: str) -> None:
    with pytest.raises(QueryError, match=re.escape(message)) as caught:
        parse(text)
    assert caught.value.position == position
    assert f"at character {position + 1}:" in str(caught.value)
    assert str(caught.value).endswith(text + "\n" + " " * position + "^")


@pytest.mark.parametrize(
    ("text", "resolved"),
    [
        ("Apples", Term("apples")),
        ("the cat", Term("cat")),  # a stop word drops out of its AND
        ("the OR a", None),
        ("東京都", Phrase((("東京", 0), ("京都", 1)))),  # several terms: a phrase
        ('"the big cat"', Phrase((("big", 0), ("cat", 1)))),
        ('"big the cat"', Phrase((("big", 0), ("cat", 2)))),  # stop word gap kept
        ("ＤＡＴＡ*", Prefix("data")),
        ("x NOT the", Term("x")),
        ("the NOT x", None),  # nothing positive left
        ("a1 OR (b1 NOT c1)", AnyOf((Term("a1"), AllOf((Term("b1"), Without(Term("c1"))))))),
    ],
)
def test_resolve(text: str, resolved: object) -> None:
    assert resolve(parse(text).expr, STOP) == resolved


def test_resolve_stems_words_not_prefixes() -> None:
    english = Analyzer(stem="english")
    assert resolve(parse("running").expr, english) == Term("run")
    assert resolve(parse("running*").expr, english) == Prefix("running")
