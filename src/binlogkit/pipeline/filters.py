"""Replication filters: what a replica with the server's ``replicate-*`` options would apply.

:class:`ReplicationFilter` is pure (no I/O) and frozen. Its decisions:
:meth:`~ReplicationFilter.keeps_table` for the table of a TABLE_MAP (give it
as ``DecodeOptions.tables`` and the rows events of other tables are dropped
before their rows are decoded), :meth:`~ReplicationFilter.keeps_statement`
for a QUERY event, :meth:`~ReplicationFilter.keeps_event` for any event, and
:meth:`~ReplicationFilter.filter` for a stream (events dropped, databases renamed).

The order of evaluation is the manual's ("How Servers Evaluate Replication
Filtering Rules"), as MariaDB's ``sql/rpl_filter.cc`` and the event appliers
implement it:

1. **Names.** With ``lower_case_table_names`` non-zero the binlog's names are
   lowercased. Then ``rewrite_db`` renames the database (the first rule whose
   FROM is the name); every rule below sees the new name.
2. **Database rules**, on the database of the changed table for a row event,
   on the default database (``USE``) for a statement; a statement without
   one passes. With any ``do_db``, the database must be one of them
   (``ignore_db`` is then not looked at); else it must be none of ``ignore_db``.
3. **Table rules**, when there are any, on each changed table's ``db.table``,
   table by table: in ``do_table``: kept; in ``ignore_table``: dropped;
   matching a ``wild_do_table``: kept; matching a ``wild_ignore_table``:
   dropped. When no rule matched any table: dropped if there is a
   ``do_table`` or ``wild_do_table``, else kept. Wild patterns are SQL LIKE
   patterns on the whole ``db.table``: ``%`` any run of characters, ``_``
   one, ``\\`` makes the next character literal.
4. **Regexes** (binlogkit's own, after the rules): a table passes when its
   ``db.table`` (as the rules saw it) fully matches one of ``include_regex``,
   if any are given, and none of ``exclude_regex``.

Statements (QUERY events):

- BEGIN, COMMIT, ROLLBACK, SAVEPOINT and XA statements always pass.
- The database rules are checked on the default database (step 2).
- CREATE/ALTER/DROP DATABASE also checks the database it names against the
  database rules and against the wild table rules as ``db.`` (so that
  ``db1.%`` covers DROP DATABASE db1), as the servers do.
- The table rules and regexes are checked on the tables a statement changes,
  as the servers do: the caller's ``tables=``, else what the SQL parser
  reads (:func:`binlogkit.schema.statements.changed_tables`: the targets of
  INSERT, UPDATE and DELETE, the tables DDL names). A statement it cannot
  read (REPLACE, LOAD DATA, CALL, ...) is judged by the database rules alone.

Case: MariaDB compares database names (``do_db``, ``ignore_db``,
``rewrite_db``) exactly and table names (``do_table``, ``wild_*``)
without regard to case; MySQL compares both exactly when
``lower_case_table_names`` is 0, else without regard to case. MariaDB's
utf8 collation also equates accented letters with plain ones; that is
not reproduced.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import field
from typing import Any

from binlogkit.binlog import utf8
from binlogkit.binlog.constants import Flavor
from binlogkit.binlog.events import Event
from binlogkit.binlog.events.query import QueryEvent
from binlogkit.binlog.events.rows import RowsEvent
from binlogkit.binlog.events.table_map import TableMapEvent
from binlogkit.binlog.frozen import frozen_dataclass
from binlogkit.binlog.transactions import control
from binlogkit.errors import BinlogError
from binlogkit.pipeline.gate import TableGate

__all__ = [
    "ReplicationFilter",
    "like_pattern",
    "parse_regex",
    "parse_rewrite_db",
    "parse_table_rule",
]

_RULE_LISTS = (
    "do_db",
    "ignore_db",
    "do_table",
    "ignore_table",
    "wild_do_table",
    "wild_ignore_table",
    "include_regex",
    "exclude_regex",
)
_TABLE_RULES = frozenset({"do_table", "ignore_table", "wild_do_table", "wild_ignore_table"})
_VARIABLES = {
    variable.replace("_", ""): name
    for variable, name in (
        ("replicate_do_db", "do_db"),
        ("replicate_ignore_db", "ignore_db"),
        ("replicate_do_table", "do_table"),
        ("replicate_ignore_table", "ignore_table"),
        ("replicate_wild_do_table", "wild_do_table"),
        ("replicate_wild_ignore_table", "wild_ignore_table"),
        ("replicate_rewrite_db", "rewrite_db"),
        ("include_regex", "include_regex"),
        ("exclude_regex", "exclude_regex"),
        ("lower_case_table_names", "lower_case_table_names"),
    )
}
"""The field each variable sets, by the variable's name without underscores."""


def parse_table_rule(text: str) -> str:
    """A ``db.table`` rule (a LIKE pattern for the wild rules), spaces around it removed."""
    rule = text.strip()
    db, dot, table = rule.partition(".")
    if not (db and dot and table):
        raise BinlogError(f"a table rule is DB.TABLE, not {text!r}")
    return rule


def parse_rewrite_db(text: str) -> tuple[str, str]:
    """``FROM->TO`` (spaces around the names are ignored) as a pair."""
    m = re.fullmatch(r"\s*([^\s].*?)\s*->\s*([^\s].*?)\s*", text)
    if m is None:
        raise BinlogError(f"a database rewrite is FROM->TO, not {text!r}")
    return m[1], m[2]


def parse_regex(text: str) -> re.Pattern[str]:
    """An include/exclude regular expression, compiled."""
    try:
        return re.compile(text)
    except re.error as err:
        raise BinlogError(f"not a regular expression ({err}): {text!r}") from None


def like_pattern(pattern: str) -> str:
    """A SQL LIKE pattern (``%``, ``_``, ``\\`` escapes) as a regular expression."""
    parts = []
    chars = iter(pattern)
    for char in chars:
        if char == "%":
            parts.append(".*")
        elif char == "_":
            parts.append(".")
        else:
            if char == "\\":
                char = next(chars, char)  # a trailing backslash is itself
            parts.append(re.escape(char))
    return "".join(parts)


def _strings(name: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str | bytes):
        raise BinlogError(f"{name} takes a list of strings, not one string: {value!r}")
    return tuple(value)


@frozen_dataclass
class ReplicationFilter:
    """The ``replicate-*`` rules of a replica, and binlogkit's regexes; see the module doc.

    Each rule list takes strings as the server's options do: database names,
    ``db.table`` names, ``db.table`` LIKE patterns, regexes. ``rewrite_db`` is
    a mapping or a sequence of (FROM, TO) pairs (the first FROM that matches
    wins). ``flavor`` and ``lower_case_table_names`` choose the case rules of
    that server. Malformed rules raise :class:`~binlogkit.errors.BinlogError`.
    """

    do_db: Sequence[str] = ()
    ignore_db: Sequence[str] = ()
    do_table: Sequence[str] = ()
    ignore_table: Sequence[str] = ()
    wild_do_table: Sequence[str] = ()
    wild_ignore_table: Sequence[str] = ()
    rewrite_db: Mapping[str, str] | Sequence[tuple[str, str]] = ()
    include_regex: Sequence[str] = ()
    exclude_regex: Sequence[str] = ()
    flavor: Flavor = Flavor.MARIADB
    lower_case_table_names: int = 0
    _rules: _Rules = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in _RULE_LISTS:
            rules = _strings(name, getattr(self, name))
            if name in _TABLE_RULES:
                rules = tuple(map(parse_table_rule, rules))
            object.__setattr__(self, name, rules)
        pairs = self.rewrite_db.items() if isinstance(self.rewrite_db, Mapping) else self.rewrite_db
        rewrites = tuple((str(a), str(b)) for a, b in pairs)
        object.__setattr__(self, "rewrite_db", rewrites)
        object.__setattr__(self, "_rules", _Rules(self, rewrites))

    @classmethod
    def from_variables(
        cls, variables: Mapping[str, str], flavor: Flavor = Flavor.MARIADB
    ) -> ReplicationFilter:
        """The filter of a replica's variables, as ``SHOW VARIABLES`` gives them.

        ``replicate_do_db`` ... ``replicate_rewrite_db`` hold comma-separated
        lists (empty items skipped, spaces before an item ignored), as the
        servers take them; ``include_regex``/``exclude_regex`` one regex each;
        ``lower_case_table_names`` a number. Names are matched without regard
        to case and underscores (``replicateDoDb`` too); other names are ignored.
        """
        fields: dict[str, Any] = {}
        for key, text in variables.items():
            name = _VARIABLES.get(key.replace("_", "").lower())
            if name is None:
                continue
            if name == "lower_case_table_names":
                if text.strip() not in ("0", "1", "2"):
                    raise BinlogError(f"lower_case_table_names is 0, 1 or 2, not {text!r}")
                fields[name] = int(text)
            elif name.endswith("regex"):
                fields[name] = [text] if text else []
            else:
                items = [item.lstrip() for item in text.split(",") if item]
                fields[name] = list(map(parse_rewrite_db, items)) if name == "rewrite_db" else items
        return cls(flavor=flavor, **fields)

    @property
    def is_empty(self) -> bool:
        """Whether the filter keeps every event unchanged."""
        return not (self._drops or self.rewrite_db)

    @property
    def table_predicate(self) -> Callable[[str, str], bool] | None:
        """:meth:`keeps_table` for ``DecodeOptions.tables``; None when every table passes."""
        return self.keeps_table if self._drops else None

    @property
    def _drops(self) -> bool:
        """Whether any rule can drop an event (``rewrite_db`` alone keeps them all)."""
        return any(getattr(self, name) for name in _RULE_LISTS)

    def renamed_db(self, db: str) -> str | None:
        """The database ``rewrite_db`` renames ``db`` to, or None when no rule applies."""
        rules = self._rules
        return rules.rewrite.get(rules.db_key(rules.fold(db)))

    def keeps_table(self, db: str, table: str) -> bool:
        """Whether a replica applies row events of ``db.table`` (the names of a TABLE_MAP)."""
        rules = self._rules
        db, table = rules.target(db), rules.fold(table)
        if not rules.db_ok(db):
            return False
        if rules.table_rules and not rules.tables_ok([(db, table)]):
            return False
        return rules.regex_ok(f"{db}.{table}")

    def keeps_statement(
        self, db: str, query: bytes, tables: Iterable[tuple[str | None, str]] | None = None
    ) -> bool:
        """Whether a replica executes the statement ``query`` run with default database ``db``.

        ``tables``: the (database or None, table) names the statement changes,
        when the caller knows them (None when not known). See the module doc
        for what is checked.
        """
        if control(query) is not None:  # transaction control, never filtered
            return True
        rules = self._rules
        current = rules.target(db) if db else None
        if current is not None and not rules.db_ok(current):
            return False
        from binlogkit.schema.ddl import named_database  # the SQL parser, only for statements
        from binlogkit.schema.statements import changed_tables

        named = named_database(utf8.decode(query))
        if named is not None:
            name = rules.fold(named) if named else current
            return name is None or (rules.db_ok(name) and rules.db_ok_with_wild_table(name))
        if tables is None and (rules.table_rules or rules.include or rules.exclude):
            tables = changed_tables(utf8.decode(query))
        names = [(rules.fold(d) if d else current or "", rules.fold(t)) for d, t in tables or ()]
        if not names:
            return True
        if rules.table_rules and not rules.tables_ok(names):
            return False
        return any(rules.regex_ok(f"{d}.{t}") for d, t in names)

    def keeps_event(self, event: Event) -> bool:
        """Whether a replica applies ``event``: TABLE_MAP, rows and QUERY events are checked.

        A rows event is judged by its table map (kept when it has none);
        every other event is kept.
        """
        if isinstance(event, TableMapEvent):
            return self.keeps_table(event.schema, event.table_name)
        if isinstance(event, RowsEvent):
            table = event.table
            return table is None or self.keeps_table(table.schema, table.table_name)
        if isinstance(event, QueryEvent):
            return self.keeps_statement(event.db, event.query)
        return True

    def filter(self, events: Iterable[Event]) -> Iterator[Event]:
        """The events a replica applies, with ``rewrite_db`` applied to TABLE_MAP and QUERY events.

        Rows events go with their table map; an ANNOTATE_ROWS event goes with
        the first table map of its statement that is kept. Names no rule
        renames stay as the binlog has them (not lowercased).
        """
        if self.is_empty:
            yield from events
            return
        gate = TableGate(lambda m: self.keeps_table(m.schema, m.table_name), self.renamed_db)
        for event in events:
            if isinstance(event, QueryEvent):
                if self.keeps_statement(event.db, event.query):
                    yield gate.query(event)
            else:
                yield from gate.feed(event)


class _Rules:
    """A :class:`ReplicationFilter`'s rules, compiled for matching."""

    def __init__(self, spec: ReplicationFilter, rewrites: Sequence[tuple[str, str]]) -> None:
        mysql = spec.flavor is Flavor.MYSQL
        self.lower = spec.lower_case_table_names != 0
        self.db_ci = mysql and self.lower
        self.table_ci = self.lower or not mysql
        self.do_db = frozenset(map(self.db_key, spec.do_db))
        self.ignore_db = frozenset(map(self.db_key, spec.ignore_db))
        self.rewrite: dict[str, str] = {}
        for source, target in rewrites:
            self.rewrite.setdefault(self.db_key(source), target)
        self.do_table = frozenset(map(self.table_key, spec.do_table))
        self.ignore_table = frozenset(map(self.table_key, spec.ignore_table))
        self.wild_do = self._wild(spec.wild_do_table)
        self.wild_ignore = self._wild(spec.wild_ignore_table)
        self.table_rules = bool(
            spec.do_table or spec.ignore_table or spec.wild_do_table or spec.wild_ignore_table
        )
        self.include = tuple(map(parse_regex, spec.include_regex))
        self.exclude = tuple(map(parse_regex, spec.exclude_regex))

    def _wild(self, patterns: Sequence[str]) -> re.Pattern[str] | None:
        if not patterns:
            return None
        flags = re.DOTALL | (re.IGNORECASE if self.table_ci else 0)
        return re.compile("|".join(f"(?:{like_pattern(p)})" for p in patterns), flags)

    def fold(self, name: str) -> str:
        """A binlog name as the replica sees it (lowercased with lower_case_table_names)."""
        return name.lower() if self.lower else name

    def db_key(self, db: str) -> str:
        return db.lower() if self.db_ci else db

    def table_key(self, name: str) -> str:
        return name.lower() if self.table_ci else name

    def target(self, db: str) -> str:
        """The database the replica writes to: folded, then renamed."""
        db = self.fold(db)
        return self.rewrite.get(self.db_key(db), db)

    def db_ok(self, db: str) -> bool:
        if self.do_db:
            return self.db_key(db) in self.do_db
        return self.db_key(db) not in self.ignore_db

    def tables_ok(self, names: Iterable[tuple[str, str]]) -> bool:
        """The table rules on the changed tables, in the servers' order."""
        for db, table in names:
            key = self.table_key(f"{db}.{table}")
            if key in self.do_table:
                return True
            if key in self.ignore_table:
                return False
            if self.wild_do is not None and self.wild_do.fullmatch(key):
                return True
            if self.wild_ignore is not None and self.wild_ignore.fullmatch(key):
                return False
        return not (self.do_table or self.wild_do)

    def db_ok_with_wild_table(self, db: str) -> bool:
        """The wild table rules on ``db.`` (a CREATE/ALTER/DROP DATABASE)."""
        key = f"{db}."
        if self.wild_do is not None and self.wild_do.fullmatch(key):
            return True
        if self.wild_ignore is not None and self.wild_ignore.fullmatch(key):
            return False
        return self.wild_do is None

    def regex_ok(self, name: str) -> bool:
        if self.include and not any(p.fullmatch(name) for p in self.include):
            return False
        return not any(p.fullmatch(name) for p in self.exclude)
