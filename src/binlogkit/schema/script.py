"""SQL scripts (``mariadb-dump --no-data`` output, seed files) applied statement by statement.

:func:`split_statements` cuts a script where the ``mysql`` client would: at
the delimiter (``;`` until a ``DELIMITER`` line changes it) outside quotes and
comments. Executable comments (``/*! ... */``) are code, not comments, to the
client as well. :func:`apply_script` applies each statement in turn, and
follows USE.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.schema.ddl import apply_ddl
from binlogkit.schema.model import Catalog
from binlogkit.schema.result import DdlResult, DdlWarning
from binlogkit.schema.session import NO_BACKSLASH_ESCAPES, Session


def _skip_quoted(text: str, i: int, backslash: bool) -> int:
    """The index after the quoted run that starts at ``i``."""
    quote = text[i]
    i += 1
    while i < len(text):
        ch = text[i]
        if ch == "\\" and backslash and quote != "`":
            i += 2
            continue
        if ch == quote:
            return i + 1
        i += 1
    return i


def _skip_comment(text: str, i: int) -> int | None:
    """The index after a comment starting at ``i`` (None: no comment there)."""
    if text.startswith("/*", i) and not text.startswith(("/*!", "/*M!"), i):
        end = text.find("*/", i + 2)
        return len(text) if end < 0 else end + 2
    dash = text.startswith("--", i) and (i + 2 == len(text) or text[i + 2] in " \t\r\n")
    if dash or text.startswith("#", i):
        end = text.find("\n", i)
        return len(text) if end < 0 else end + 1
    return None


def _delimiter_command(text: str, i: int) -> tuple[str, int] | None:
    """A client ``DELIMITER x`` line at ``i``: the new delimiter and the index after the line."""
    if text[i : i + 9].lower() != "delimiter" or text[i + 9 : i + 10] not in (" ", "\t"):
        return None
    end = text.find("\n", i)
    end = len(text) if end < 0 else end
    words = text[i + 9 : end].split()
    return (words[0], end) if words else None


def split_statements(text: str, *, backslash_escapes: bool = True) -> Iterator[str]:
    """The statements of a script, without their delimiters."""
    delimiter = ";"
    start = i = 0
    while i < len(text):
        if not text[start:i].strip():
            command = _delimiter_command(text, i)
            if command is not None:
                delimiter, i = command
                start = i
                continue
        ch = text[i]
        if ch in "'\"`":
            i = _skip_quoted(text, i, backslash_escapes)
            continue
        after_comment = _skip_comment(text, i)
        if after_comment is not None:
            i = after_comment
            continue
        if text.startswith(delimiter, i):
            if text[start:i].strip():
                yield text[start:i].strip()
            i += len(delimiter)
            start = i
            continue
        i += 1
    if text[start:].strip():
        yield text[start:].strip()


@frozen_dataclass
class ScriptResult:
    """The catalog after a script, each statement's result, and the warnings among them."""

    catalog: Catalog
    results: tuple[DdlResult, ...]
    session: Session

    @property
    def warnings(self) -> tuple[DdlWarning, ...]:
        return tuple(r.warning for r in self.results if r.warning is not None)


def apply_script(catalog: Catalog, text: str, session: Session | None = None) -> ScriptResult:
    """Apply every statement of a script; ``session`` follows its USE statements."""
    session = session or Session()
    results = []
    escapes = not session.sql_mode & NO_BACKSLASH_ESCAPES
    for statement in split_statements(text, backslash_escapes=escapes):
        result = apply_ddl(catalog, statement, session)
        results.append(result)
        catalog = result.catalog
        if result.default_db is not None:
            session = replace(session, default_db=result.default_db)
    return ScriptResult(catalog, tuple(results), session)
