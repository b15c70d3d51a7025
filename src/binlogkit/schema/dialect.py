"""sqlglot's MySQL dialect, extended to read the DDL of MySQL and MariaDB binlogs and dumps.

:class:`BinlogDialect` adds, over sqlglot's MySQL:

- versioned comments ``/*!NNNNN ... */`` and MariaDB's ``/*M!NNNNNN ... */``
  read as SQL when the server's version is at least N (MariaDB skips MySQL
  5.7+ numbers, 50700-99999; MySQL skips ``/*M!``), a tokenizer concern;
  ``ANSI_QUOTES`` and ``NO_BACKSLASH_ESCAPES`` from the session's sql_mode;
- statement parsers of its own for CREATE/ALTER/DROP/RENAME/TRUNCATE of tables,
  databases and sequences (:mod:`binlogkit.schema.grammar`), which give the nodes
  of :mod:`binlogkit.schema.nodes`; other CREATE/ALTER/DROP statements (views,
  routines, triggers, users ...) are recognised by kind and not read further.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any

from sqlglot.dialects.mysql import MySQL
from sqlglot.tokenizer_core import Token, TokenType

from binlogkit.schema.grammar import DdlParser


def _executable_comments(gap: str) -> Iterator[tuple[int, str]]:
    """Offsets and bodies of the ``/*! */`` and ``/*M! */`` comments in text between tokens."""
    i = 0
    while i < len(gap):
        if gap.startswith("/*", i):
            end = gap.find("*/", i + 2)
            end = len(gap) if end < 0 else end
            if gap.startswith(("/*!", "/*M!"), i):
                yield i, gap[i + 2 : end]
            i = end + 2
        elif gap.startswith(("--", "#"), i):
            newline = gap.find("\n", i)
            i = len(gap) if newline < 0 else newline
        else:
            i += 1


def _version_prefix(body: str) -> tuple[int, int | None, bool]:
    """How long the ``!NNNNN``/``M!NNNNNN`` prefix is, its version, and whether it is MariaDB's."""
    mariadb = body.startswith("M!")
    start = 2 if mariadb else 1
    digits = 0
    while start + digits < len(body) and body[start + digits].isdigit() and digits < 6:
        digits += 1
    if digits < 5:
        return start, None, mariadb
    return start + digits, int(body[start : start + digits]), mariadb


class BinlogDialect(MySQL):
    """MySQL as the binlog shows it; settings ``version`` (the server's), ``mariadb``,
    ``ansi_quotes`` and ``no_backslash_escapes``."""

    SUPPORTED_SETTINGS = {  # noqa: RUF012  (sqlglot declares it a plain attribute)
        *MySQL.SUPPORTED_SETTINGS,
        "mariadb",
        "ansi_quotes",
        "no_backslash_escapes",
    }

    class Tokenizer(MySQL.Tokenizer):
        COMMANDS = MySQL.Tokenizer.COMMANDS - {TokenType.RENAME}

        def tokenize(self, sql: str) -> list[Token]:
            tokens = list(super().tokenize(sql))
            if "/*!" not in sql and "/*M!" not in sql:
                return tokens
            out: list[Token] = []
            previous_end = 0
            for token in [*tokens, None]:
                gap_end = len(sql) if token is None else token.start
                for offset, body in _executable_comments(sql[previous_end:gap_end]):
                    out.extend(self._expand(sql, previous_end + offset + 2, body))
                if token is not None:
                    out.append(token)
                    previous_end = max(previous_end, token.end + 1)
            return out

        def _expand(self, sql: str, start: int, body: str) -> list[Token]:
            skip, version, mariadb = _version_prefix(body)
            dialect: Any = self.dialect
            if mariadb and not dialect.settings.get("mariadb"):
                return []
            if version is not None and (
                version_tuple(version) > dialect.version
                or (dialect.settings.get("mariadb") and MYSQL_ONLY <= version <= 99999)
            ):
                return []
            base = start + skip
            return [
                Token(t.token_type, t.text, t.line, t.col, t.start + base, t.end + base, t.comments)
                for t in self.tokenize(body[skip:])
            ]

    Parser = DdlParser

    def parser(self, **opts: Any) -> DdlParser:
        return DdlParser(dialect=self, **opts)

    def tokenizer(self, dialect: Any = None) -> MySQL.Tokenizer:
        cls = _tokenizer_class(
            bool(self.settings.get("ansi_quotes")), bool(self.settings.get("no_backslash_escapes"))
        )
        return cls(dialect=dialect or self)


MYSQL_ONLY = 50700
"""MariaDB takes five-digit versions from 5.7.0 on as MySQL's and skips those comments."""


def version_tuple(version: int) -> tuple[int, int, int]:
    """``50100`` → (5, 1, 0), ``100100`` → (10, 1, 0): a versioned comment's number."""
    return version // 10000, version // 100 % 100, version % 100


@cache
def _tokenizer_class(ansi_quotes: bool, no_backslash_escapes: bool) -> type[MySQL.Tokenizer]:
    base = BinlogDialect.Tokenizer
    if not ansi_quotes and not no_backslash_escapes:
        return base
    attrs: dict[str, object] = {}
    if ansi_quotes:
        attrs |= {"QUOTES": ["'"], "IDENTIFIERS": ["`", '"']}
    if no_backslash_escapes:
        attrs["STRING_ESCAPES"] = [e for e in base.STRING_ESCAPES if e != "\\"]
    return type("SqlModeTokenizer", (base,), attrs)
