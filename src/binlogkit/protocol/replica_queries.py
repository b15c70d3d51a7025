"""The set-up queries a replica sends a primary before its dump, answered (sans-I/O).

A replica's I/O thread (and binlogkit's own stream) asks a handful of
queries before COM_BINLOG_DUMP: ``SELECT UNIX_TIMESTAMP()``, ``SHOW
VARIABLES LIKE 'SERVER_ID'``, ``SET @master_heartbeat_period = ...``,
``SET @master_binlog_checksum = @@global.binlog_checksum``, ``SELECT
@master_binlog_checksum``, ``SET @mariadb_slave_capability = 4``, ``SELECT
@@GLOBAL.gtid_domain_id``, ``SET @slave_connect_state = '...'``,
``SHOW BINARY LOGS``, ``SHOW MASTER STATUS`` ... :func:`answer_query`
answers that small SQL from the server's variables (a mapping, which may
compute values on demand), the session's user variables (which ``SET``
changes) and the served binlogs. Anything else gets the syntax error a
server gives (1064), never silence.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass

__all__ = [
    "ER_PARSE_ERROR",
    "ER_UNKNOWN_SYSTEM_VARIABLE",
    "QueryAnswer",
    "QueryError",
    "QueryOk",
    "ResultSet",
    "ServedBinlog",
    "SqlFunction",
    "answer_query",
]

ER_PARSE_ERROR = 1064
ER_UNKNOWN_SYSTEM_VARIABLE = 1193


@dataclass(frozen=True, slots=True)
class QueryOk:
    """The statement succeeded (an OK packet)."""


@dataclass(frozen=True, slots=True)
class ResultSet:
    columns: tuple[str, ...]
    rows: tuple[tuple[str | None, ...], ...]


@dataclass(frozen=True, slots=True)
class QueryError:
    code: int
    message: str
    sql_state: str = "HY000"


QueryAnswer = QueryOk | ResultSet | QueryError
SqlFunction = Callable[..., str | None]


@dataclass(frozen=True, slots=True)
class ServedBinlog:
    """A binlog as SHOW BINARY LOGS lists it."""

    name: str
    size: int


class _Unknown(Exception):
    """An expression this small SQL does not know."""


_ASSIGN = re.compile(
    r"\s*(@@(?:global\.|session\.|local\.)?\w+|@\w+|@`[^`]+`|\w+)\s*(?::=|=)\s*(.+)\Z", re.I | re.S
)
_SHOW_VARIABLES = re.compile(
    r"SHOW\s+(?:GLOBAL\s+|SESSION\s+)?VARIABLES(?:\s+LIKE\s+'([^']*)'|\s+WHERE\s+Variable_name\s*=\s*'([^']*)')?\Z",
    re.I,
)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?\Z")
_CALL = re.compile(r"(\w+)\s*\((.*)\)\Z", re.S)
_ALIAS = re.compile(r"(.+?)\s+AS\s+(`[^`]+`|\w+)\Z", re.I | re.S)


def answer_query(
    sql: str,
    *,
    variables: Mapping[str, str],
    session: MutableMapping[str, str | None],
    binlogs: Sequence[ServedBinlog],
    now: float,
    flavor: str,
    functions: Mapping[str, SqlFunction] | None = None,
) -> QueryAnswer:
    """The answer to one statement; ``SET`` changes ``session`` (user variables by lower-case
    name). ``variables``: the server's system variables by lower-case name. ``functions``:
    SQL functions by upper-case name, given their evaluated arguments (e.g. MariaDB's
    ``BINLOG_GTID_POS(file, position)``)."""
    text = sql.strip().rstrip(";").strip()
    words = text.split(None, 2)
    head = " ".join(w.upper() for w in words[:2])
    evaluate = _Evaluator(variables, session, now, functions or {})
    try:
        if words and words[0].upper() == "SET":
            return _set(text[3:], evaluate, session)
        if words and words[0].upper() == "SELECT":
            return _select(text[6:], evaluate)
        if head in ("SHOW BINARY", "SHOW MASTER"):
            return _show_binlogs(text, binlogs, variables, flavor)
        show = _SHOW_VARIABLES.match(text)
        if show:
            pattern = show[1] if show[1] is not None else show[2]
            return _show_variables(pattern, variables)
    except _Unknown as err:
        what = str(err)
        if what.startswith("@@"):
            name = re.sub(r"^@@((global|session|local)\.)?", "", what, flags=re.I)
            return QueryError(ER_UNKNOWN_SYSTEM_VARIABLE, f"Unknown system variable '{name}'")
        return _syntax_error(what, flavor)
    return _syntax_error(text, flavor)


def _syntax_error(near: str, flavor: str) -> QueryError:
    product = "MariaDB" if flavor == "mariadb" else "MySQL"
    return QueryError(
        ER_PARSE_ERROR,
        "You have an error in your SQL syntax; check the manual that corresponds to your "
        f"{product} server version for the right syntax to use near '{near[:80]}' at line 1",
        "42000",
    )


def _split(text: str) -> list[str]:
    """Comma-separated items, commas inside quotes and parentheses kept."""
    items, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"`":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i].strip())
            start = i + 1
    items.append(text[start:].strip())
    return items


class _Evaluator:
    """The values of the expressions replicas select: literals, variables, a few functions."""

    def __init__(
        self,
        variables: Mapping[str, str],
        session: Mapping[str, str | None],
        now: float,
        functions: Mapping[str, SqlFunction],
    ) -> None:
        self.variables = variables
        self.session = session
        self.now = now
        self.functions = functions

    def __call__(self, expr: str) -> str | None:
        expr = expr.strip()
        upper = expr.upper()
        if len(expr) >= 2 and expr[0] == expr[-1] and expr[0] in "'\"":
            return expr[1:-1].replace(expr[0] * 2, expr[0]).replace("\\'", "'")
        if expr.startswith("@@"):
            name = re.sub(r"^(global|session|local)\.", "", expr[2:], flags=re.I).lower()
            if name not in self.variables:
                raise _Unknown(expr)
            return self.variables[name]
        if expr.startswith("@"):
            return self.session.get(expr[1:].strip("`").lower())
        if upper == "NULL":
            return None
        if upper in ("UNIX_TIMESTAMP()", "UNIX_TIMESTAMP"):
            return str(int(self.now))
        if upper == "VERSION()":
            return self.variables["version"]
        if _NUMBER.match(expr):
            return expr
        call = _CALL.match(expr)
        if call and call[1].upper() in self.functions:
            args = [self(a) for a in _split(call[2])] if call[2].strip() else []
            return self.functions[call[1].upper()](*args)
        raise _Unknown(expr)


def _set(text: str, evaluate: _Evaluator, session: MutableMapping[str, str | None]) -> QueryAnswer:
    if re.match(r"\s*NAMES\b", text, re.I):
        return QueryOk()
    for item in _split(text):
        m = _ASSIGN.match(item)
        if m is None:
            raise _Unknown(item)
        target, value = m[1], m[2]
        if target.startswith("@") and not target.startswith("@@"):
            session[target[1:].strip("`").lower()] = evaluate(value)
        # a session system variable (sql_mode, skip_replication ...): accepted, no effect here
    return QueryOk()


def _select(text: str, evaluate: _Evaluator) -> QueryAnswer:
    columns, values = [], []
    for item in _split(text):
        expr, name = item, item
        alias = _ALIAS.match(item)
        if alias:
            expr, name = alias[1], alias[2].strip("`")
        columns.append(name)
        values.append(evaluate(expr))
    return ResultSet(tuple(columns), (tuple(values),))


def _show_variables(pattern: str | None, variables: Mapping[str, str]) -> QueryAnswer:
    glob = "*" if pattern is None else _like(pattern)
    rows = tuple((k, v) for k, v in sorted(variables.items()) if fnmatch.fnmatchcase(k, glob))
    return ResultSet(("Variable_name", "Value"), rows)


def _like(pattern: str) -> str:
    """A SQL LIKE pattern (``%``, ``_``, ``\\`` escapes) as an fnmatch pattern, in lower case."""
    out, escaped = [], False
    for ch in pattern.lower():
        if escaped or ch not in "%_\\":
            out.append(f"[{ch}]" if ch in "[]*?" else ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        else:
            out.append("*" if ch == "%" else "?")
    return "".join(out)


def _show_binlogs(
    text: str, binlogs: Sequence[ServedBinlog], variables: Mapping[str, str], flavor: str
) -> QueryAnswer:
    statement = re.sub(r"\s+", " ", text.upper())
    mysql_84 = flavor == "mysql" and _version(variables.get("version", "")) >= (8, 4)
    if statement in ("SHOW BINARY LOGS", "SHOW MASTER LOGS"):
        if flavor == "mariadb":
            return ResultSet(
                ("Log_name", "File_size"), tuple((b.name, str(b.size)) for b in binlogs)
            )
        rows = tuple((b.name, str(b.size), "No") for b in binlogs)
        return ResultSet(("Log_name", "File_size", "Encrypted"), rows)
    if (statement == "SHOW BINARY LOG STATUS" and flavor == "mysql") or (
        statement == "SHOW MASTER STATUS" and not mysql_84
    ):
        last = binlogs[-1]
        columns: tuple[str, ...] = ("File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB")
        row: tuple[str | None, ...] = (last.name, str(last.size), "", "")
        if flavor == "mysql":
            columns += ("Executed_Gtid_Set",)
            row += (variables.get("gtid_executed", ""),)
        return ResultSet(columns, (row,))
    raise _Unknown(text)


def _version(text: str) -> tuple[int, ...]:
    m = re.match(r"(\d+)\.(\d+)", text)
    return (int(m[1]), int(m[2])) if m else (0,)
