"""A statement's first word, read without the SQL parser (to skip the statements that
plainly are no DDL: binlogs hold a QUERY event per transaction, and in statement
format one per statement)."""

from __future__ import annotations

from typing import Final

__all__ = ["DDL_WORDS", "first_word", "plainly_not_ddl"]

DDL_WORDS: Final = frozenset({"CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE", "USE"})
"""The words the statements that change tables (and USE) start with."""


def first_word(sql: str) -> str | None:
    """The word a statement starts with, upper-cased; None when it starts with a comment
    (a versioned one may hold the statement), a quote or anything else the tokenizer must read."""
    text = sql.lstrip()
    end = 0
    while end < len(text) and (text[end].isalnum() or text[end] == "_"):
        end += 1
    return text[:end].upper() if end else None


def plainly_not_ddl(sql: str) -> bool:
    """Whether ``sql`` plainly is no DDL: it starts with a word that starts none.

    Binlogs hold a QUERY event per transaction (BEGIN) and, in statement format,
    per statement; this spares them the tokenizer.
    """
    word = first_word(sql)
    return word is not None and word not in DDL_WORDS
