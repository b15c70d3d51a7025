"""The query language of ``binlogkit search``, parsed, then resolved into index terms.

::

    query   := or
    or      := and ("OR" and)*
    and     := unary (["AND"] unary)*          juxtaposition is AND
    unary   := "NOT" unary | "(" or ")" | WORD | WORD* | "PHRASE" | table:DB.T | column:NAME

``AND``, ``OR`` and ``NOT`` are operators in capitals only. ``data*`` is a prefix
term; ``"..."`` a phrase. ``table:`` and ``column:`` filters apply to the whole
query wherever they stand, so not inside parentheses (several of one kind: any of
them). A query needs a part that is not negated (``NOT x`` alone matches nearly
everything).

:func:`parse` gives the syntax tree (words as typed); :func:`resolve` turns it into
index terms with an :class:`~binlogkit.search.analysis.Analyzer`: a word that
analyses to several terms (CJK text, ``e-mail``) is a phrase of them, one that
analyses to none (a stop word) drops out of its AND or OR.
"""

from __future__ import annotations

from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.errors import BinlogError
from binlogkit.search.analysis import Analyzer, normalize

__all__ = [
    "AllOf",
    "And",
    "AnyOf",
    "Not",
    "Or",
    "Phrase",
    "Prefix",
    "Query",
    "QueryError",
    "Resolved",
    "Term",
    "Without",
    "Word",
    "parse",
    "resolve",
]

FILTERS = ("table", "column")


class QueryError(BinlogError):
    """A malformed query; ``position`` is the character offset (0-based) of the fault."""

    def __init__(self, message: str, query: str, position: int) -> None:
        pointer = f"{query}\n{' ' * position}^"
        super().__init__(f"query error at character {position + 1}: {message}\n{pointer}")
        self.position = position


# -- syntax ----------------------------------------------------------------------------------


@frozen_dataclass
class Word:
    """A word as typed; ``prefix`` for ``word*``; ``phrase`` for ``"..."``."""

    text: str
    at: int
    prefix: bool = False
    phrase: bool = False


@frozen_dataclass
class Not:
    item: Node


@frozen_dataclass
class And:
    items: tuple[Node, ...]


@frozen_dataclass
class Or:
    items: tuple[Node, ...]


Node = Word | Not | And | Or


@frozen_dataclass
class Query:
    """A parsed query: its boolean part and its filters (``db.t`` names, column names)."""

    expr: Node | None
    tables: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()


def parse(text: str) -> Query:
    """Parse a query; :class:`QueryError` names the character where it goes wrong."""
    parser = _Parser(text, list(_lex(text)))
    return parser.query()


@frozen_dataclass
class _Tok:
    kind: str  # WORD, PHRASE, FILTER, LPAREN, RPAREN, AND, OR, NOT, END
    text: str
    at: int


def _lex(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch in "()":
            out.append(_Tok("LPAREN" if ch == "(" else "RPAREN", ch, i))
            i += 1
        elif ch == '"':
            close = text.find('"', i + 1)
            if close < 0:
                raise QueryError('phrase not closed: a second " is missing', text, i)
            out.append(_Tok("PHRASE", text[i + 1 : close], i))
            i = close + 1
        else:
            start = i
            while i < n and not text[i].isspace() and text[i] not in '()"':
                i += 1
            word = text[start:i]
            field, colon, value = word.partition(":")
            if word in ("AND", "OR", "NOT"):
                out.append(_Tok(word, word, start))
            elif colon and field in FILTERS:
                if not value:
                    raise QueryError(f"{field}: needs a value", text, start)
                out.append(_Tok("FILTER", word, start))
            else:
                out.append(_Tok("WORD", word, start))
    out.append(_Tok("END", "", n))
    return out


class _Parser:
    def __init__(self, text: str, tokens: list[_Tok]) -> None:
        self.text = text
        self.tokens = tokens
        self.i = 0
        self.depth = 0
        self.tables: list[str] = []
        self.columns: list[str] = []

    def peek(self) -> _Tok:
        return self.tokens[self.i]

    def take(self) -> _Tok:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def fail(self, message: str, tok: _Tok) -> QueryError:
        return QueryError(message, self.text, tok.at)

    def query(self) -> Query:
        if self.peek().kind == "END":
            raise self.fail("the query is empty", self.peek())
        expr = _and(self.conjunction(top=True))
        if self.peek().kind == "OR":
            expr = self.disjunction(expr)
        tok = self.peek()
        if tok.kind == "RPAREN":
            raise self.fail("')' without '('", tok)
        if tok.kind != "END":
            raise self.fail(f"unexpected {tok.text!r}", tok)
        if expr is not None and not _positive(expr):
            raise self.fail("the query needs a term that is not negated", self.tokens[0])
        if expr is None and not (self.tables or self.columns):
            raise self.fail("the query is empty", self.tokens[0])
        return Query(expr, tuple(self.tables), tuple(self.columns))

    def disjunction(self, first: Node | None) -> Node:
        if first is None:
            raise self.fail("OR needs a term before it", self.peek())
        items = [first]
        while self.peek().kind == "OR":
            op = self.take()
            part = _and(self.conjunction(top=False))
            if part is None:
                raise self.fail("OR needs a term after it", op)
            items.append(part)
        return items[0] if len(items) == 1 else Or(tuple(items))

    def conjunction(self, *, top: bool) -> list[Node]:
        """Unary terms joined by AND (or nothing) up to an OR, ')' or the end; filters taken
        out (only outside parentheses)."""
        items: list[Node] = []
        while True:
            tok = self.peek()
            if tok.kind in ("OR", "RPAREN", "END"):
                return items
            if tok.kind == "AND":
                self.take()
                if self.peek().kind in ("OR", "RPAREN", "END", "AND") or not (
                    items or (top and (self.tables or self.columns))
                ):
                    raise self.fail("AND needs a term on each side", tok)
                continue
            if tok.kind == "FILTER":
                if self.depth:
                    raise self.fail(
                        "filters apply to the whole query: put table: and column: outside "
                        "parentheses",
                        tok,
                    )
                self.take()
                field, _, value = tok.text.partition(":")
                (self.tables if field == "table" else self.columns).append(value)
                continue
            items.append(self.unary())

    def unary(self) -> Node:
        tok = self.take()
        if tok.kind == "NOT":
            if self.peek().kind in ("OR", "RPAREN", "END", "AND"):
                raise self.fail("NOT needs a term after it", tok)
            return Not(self.unary())
        if tok.kind == "LPAREN":
            self.depth += 1
            first = _and(self.conjunction(top=False))
            if first is None and self.peek().kind != "OR":
                at_end = self.peek().kind == "END"
                raise self.fail("'(' not closed" if at_end else "nothing inside ( )", tok)
            inner = self.disjunction(first)
            close = self.take()
            if close.kind != "RPAREN":
                raise self.fail("'(' not closed", tok)
            self.depth -= 1
            return inner
        if tok.kind == "PHRASE":
            return Word(tok.text, tok.at, phrase=True)
        if tok.kind == "WORD":
            if tok.text.endswith("*"):
                stem = tok.text.rstrip("*")
                if not stem or "*" in stem:
                    raise self.fail("a prefix term is letters followed by one *", tok)
                return Word(stem, tok.at, prefix=True)
            if "*" in tok.text:
                raise self.fail("* may only end a word (prefix term)", tok)
            return Word(tok.text, tok.at)
        if tok.kind == "FILTER":
            raise self.fail("filters apply to the whole query", tok)
        raise self.fail(f"unexpected {tok.text or 'end of query'!r}", tok)


def _and(items: list[Node]) -> Node | None:
    if not items:
        return None
    return items[0] if len(items) == 1 else And(tuple(items))


# -- index terms -----------------------------------------------------------------------------


@frozen_dataclass
class Term:
    term: str


@frozen_dataclass
class Phrase:
    """Terms at fixed offsets from the first (stop words leave gaps)."""

    terms: tuple[tuple[str, int], ...]


@frozen_dataclass
class Prefix:
    """Every index term that starts with ``prefix`` (normalised, not stemmed)."""

    prefix: str


@frozen_dataclass
class AllOf:
    items: tuple[Resolved, ...]


@frozen_dataclass
class AnyOf:
    items: tuple[Resolved, ...]


@frozen_dataclass
class Without:
    """Documents that do not match ``item`` (only within an :class:`AllOf`)."""

    item: Resolved


Resolved = Term | Phrase | Prefix | AllOf | AnyOf | Without


def resolve(node: Node | None, analyzer: Analyzer) -> Resolved | None:
    """``node`` in index terms; None when nothing of it is left (stop words only)."""
    if node is None:
        return None
    if isinstance(node, Word):
        if node.prefix:
            prefix = normalize(node.text)
            return Prefix(prefix) if prefix else None
        terms = analyzer.terms(node.text)
        if not terms:
            return None
        if len(terms) == 1:
            return Term(terms[0][0])
        first = terms[0][1]
        return Phrase(tuple((term, pos - first) for term, pos in terms))
    if isinstance(node, Not):
        inner = resolve(node.item, analyzer)
        return None if inner is None else Without(inner)
    parts = [r for item in node.items if (r := resolve(item, analyzer)) is not None]
    if isinstance(node, And):
        if not any(_positive(p) for p in parts):
            return None
        return parts[0] if len(parts) == 1 else AllOf(tuple(parts))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else AnyOf(tuple(parts))


def _positive(node: Node | Resolved) -> bool:
    """Whether ``node`` can match without the whole index's complement."""
    if isinstance(node, Not | Without):
        return False
    if isinstance(node, And | AllOf):
        return any(_positive(i) for i in node.items)
    if isinstance(node, Or | AnyOf):
        return all(_positive(i) for i in node.items)
    return True
