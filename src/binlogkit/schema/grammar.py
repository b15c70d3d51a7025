"""The statement parsers :class:`~binlogkit.schema.dialect.BinlogDialect` adds to sqlglot's MySQL.

CREATE/ALTER/DROP/RENAME/TRUNCATE are read here, following the servers'
grammars (sql_yacc.yy); column definitions here too, with the data types of
:mod:`binlogkit.schema.types`. Expressions inside them (DEFAULT, CHECK,
generated columns) and most column attributes are sqlglot's own parsing.
What does not matter to the columns is skipped as balanced token runs:
index, foreign key and check definitions, table options other than the
charset, partitioning.

The tables a statement touches are noted in :attr:`DdlParser.touched` as soon
as they are read, so a caller can tell which tables a statement it could not
read in full is about.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from sqlglot import exp
from sqlglot.errors import ParseError
from sqlglot.parsers.mysql import MySQLParser
from sqlglot.tokenizer_core import Token, TokenType

from binlogkit.schema import nodes
from binlogkit.schema.types import LONGEST_SPELLING, SPELLINGS, Shape

_OPEN = {TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE}
_CLOSE = {TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE}
_NOT_NAMES = (
    _OPEN
    | _CLOSE
    | {
        TokenType.COMMA,
        TokenType.DOT,
        TokenType.SEMICOLON,
        TokenType.EQ,
        TokenType.STRING,
        TokenType.NUMBER,
        TokenType.STAR,
        TokenType.SLASH,
        TokenType.DASH,
        TokenType.PLUS,
        TokenType.PARAMETER,
        TokenType.SESSION_PARAMETER,
    }
)

# Create definitions that are not columns (when unquoted), and how they start.
_KEY_WORDS = {"INDEX", "KEY", "UNIQUE", "FULLTEXT", "SPATIAL", "FOREIGN", "CHECK", "CONSTRAINT"}

_QUERY_STARTS = {TokenType.SELECT, TokenType.WITH, TokenType.VALUES, TokenType.TABLE}

# What follows CREATE/ALTER/DROP for objects that hold no table columns.
_OTHER_KINDS = {
    "VIEW",
    "TRIGGER",
    "PROCEDURE",
    "FUNCTION",
    "EVENT",
    "USER",
    "ROLE",
    "SERVER",
    "INDEX",
    "TABLESPACE",
    "LOGFILE",
    "RESOURCE",
    "PACKAGE",
    "SPATIAL",
    "INSTANCE",
    "UNDO",
    "SYNONYM",
}

# Column attributes read as a keyword and one value, which do not matter here.
_ONE_VALUE_ATTRIBUTES = {
    "COLUMN_FORMAT",
    "STORAGE",
    "SRID",
    "REF_SYSTEM_ID",
    "ENGINE_ATTRIBUTE",
    "SECONDARY_ENGINE_ATTRIBUTE",
}


def _words(token: Token) -> list[str]:
    """A token's upper-case words (sqlglot makes one token of some keyword pairs)."""
    return (
        []
        if token.token_type in (TokenType.IDENTIFIER, TokenType.STRING)
        else (token.text.upper().split())
    )


class DdlParser(MySQLParser):
    """sqlglot's MySQL parser with the DDL statement parsers of this module."""

    STATEMENT_PARSERS: ClassVar[dict[TokenType, Callable[[Any], exp.Expr]]] = {
        **MySQLParser.STATEMENT_PARSERS,
        TokenType.CREATE: lambda self: self._parse_create_ddl(),
        TokenType.ALTER: lambda self: self._parse_alter_ddl(),
        TokenType.DROP: lambda self: self._parse_drop_ddl(),
        TokenType.RENAME: lambda self: self._parse_rename_ddl(),
        TokenType.TRUNCATE: lambda self: self._parse_truncate_ddl(),
    }

    touched: list[exp.Table]

    def parse_statement(self, tokens: list[Token], sql: str) -> exp.Expr | None:
        """One whole statement (semicolons inside it, as in routine bodies, included)."""
        self.reset()
        self.touched = []
        self.sql = sql
        self._tokens = tokens
        self._tokens_size = len(tokens)
        self._index = -1
        self._advance()
        statement = self._parse_statement()
        if self._curr:
            self.raise_error("Unexpected text after the statement")
        return statement

    # --- small helpers -------------------------------------------------------------------

    def _match_words(self, *words: str) -> bool:
        """Match words that are one token or several (``CHARACTER SET``, ``DOUBLE PRECISION``)."""
        index = self._index
        pending = list(words)
        while pending:
            got = _words(self._curr)
            if not got or got != pending[: len(got)]:
                self._retreat(index)
                return False
            del pending[: len(got)]
            self._advance()
        return True

    def _first_word(self) -> str:
        words = _words(self._curr)
        return words[0] if words else ""

    def _match_charset_keyword(self) -> bool:
        return (
            self._match(TokenType.CHARACTER_SET)
            or self._match_words("CHARACTER", "SET")
            or self._match_words("CHAR", "SET")
        )

    def _name(self) -> str:
        """An identifier (quoted or not, case as written); an error if there is none."""
        token = self._curr
        if not token or token.token_type in _NOT_NAMES:
            self.raise_error("Expected a name")
        self._advance()
        if token.token_type == TokenType.IDENTIFIER:
            return token.text
        return self.sql[token.start : token.end + 1]

    def _value(self) -> str:
        """A name or a string (charset names, option values)."""
        if self._match(TokenType.STRING):
            return self._prev.text
        return self._name()

    def _table_name(self, touch: bool = True) -> exp.Table:
        name = self._name()
        table = exp.Table(this=exp.to_identifier(name))
        if self._match(TokenType.DOT):
            table = exp.Table(this=exp.to_identifier(self._name()), db=exp.to_identifier(name))
        if touch:
            self.touched.append(table)
        return table

    def _skip_balanced(self, stop: Callable[[], bool]) -> None:
        """Skip tokens up to one at nesting depth 0 for which ``stop`` holds (or the end)."""
        depth = 0
        while self._curr:
            if depth == 0 and stop():
                return
            if self._curr.token_type in _OPEN:
                depth += 1
            elif self._curr.token_type in _CLOSE:
                if depth == 0:
                    return
                depth -= 1
            self._advance()

    def _skip_rest(self) -> None:
        while self._curr:
            self._advance()

    def _at_list_end(self) -> bool:
        return self._curr.token_type in (TokenType.COMMA, TokenType.R_PAREN)

    def _if_exists(self) -> bool:
        return self._match_text_seq("IF", "EXISTS")

    def _if_not_exists(self) -> bool:
        return self._match_text_seq("IF", "NOT", "EXISTS")

    def _other(self, kind: str) -> nodes.OtherDdl:
        self._skip_rest()
        return nodes.OtherDdl(this=kind)

    def _other_kind(self, verb: str) -> nodes.OtherDdl:
        """CREATE/ALTER/DROP of an object that holds no columns; its kind is the first
        unquoted word after the definer, security and algorithm clauses that names one."""
        while self._curr:
            words = _words(self._curr)
            if words and words[0] in _OTHER_KINDS:
                return self._other(f"{verb} {words[0]}")
            self._advance()
        self.raise_error(f"Unknown {verb} statement")
        return self._other(verb)

    # --- data types and column definitions -----------------------------------------------

    def _parse_column_type(self) -> nodes.ColumnType:
        words: list[str] = []
        index = self._index
        best: tuple[int, int] | None = None  # (word count, token index after it)
        while self._curr and len(words) < LONGEST_SPELLING:
            got = _words(self._curr)
            if not got:
                break
            words += got
            self._advance()
            if tuple(words) in SPELLINGS:
                best = (len(words), self._index)
        if best is None:
            self._retreat(index)
            self.raise_error("Unknown data type")
            return nodes.ColumnType(this="")
        self._retreat(best[1])
        spelling = SPELLINGS[tuple(words[: best[0]])]
        node = nodes.ColumnType(
            this=spelling.name,
            national=spelling.national or None,
            boolean=spelling.boolean or None,
            serial=spelling.serial or None,
        )
        _SHAPES[spelling.shape](self, node)
        return node

    def _numbers(self) -> list[int]:
        """An optional parenthesised list of integers."""
        if not self._match(TokenType.L_PAREN):
            return []
        numbers = []
        while self._match(TokenType.NUMBER):
            numbers.append(int(self._prev.text))
            if not self._match(TokenType.COMMA):
                break
        self._match_r_paren()
        return numbers

    def _parse_number_flags(self, node: nodes.ColumnType) -> None:
        while True:
            if self._match_texts(("UNSIGNED",)):
                node.set("unsigned", True)
            elif self._match_texts(("ZEROFILL",)):
                node.set("zerofill", True)
                node.set("unsigned", True)
            elif not self._match_texts(("SIGNED",)):
                return

    def _parse_integer_shape(self, node: nodes.ColumnType) -> None:
        numbers = self._numbers()
        if numbers:
            node.set("length", numbers[0])
        self._parse_number_flags(node)

    def _parse_float_shape(self, node: nodes.ColumnType) -> None:
        numbers = self._numbers()
        if len(numbers) == 2:
            node.set("precision", numbers[0])
            node.set("scale", numbers[1])
        elif numbers:
            node.set("float_bits", numbers[0])
        self._parse_number_flags(node)

    def _parse_decimal_shape(self, node: nodes.ColumnType) -> None:
        numbers = self._numbers()
        node.set("precision", numbers[0] if numbers else 10)
        node.set("scale", numbers[1] if len(numbers) > 1 else 0)
        self._parse_number_flags(node)

    def _parse_length_shape(self, node: nodes.ColumnType) -> None:
        numbers = self._numbers()
        if numbers:
            node.set("length", numbers[0])

    def _parse_fsp_shape(self, node: nodes.ColumnType) -> None:
        numbers = self._numbers()
        node.set("fsp", numbers[0] if numbers else 0)

    def _parse_values_shape(self, node: nodes.ColumnType) -> None:
        self._match_l_paren()
        values = []
        while True:
            self._match(TokenType.INTRODUCER)
            if not self._match(TokenType.STRING):
                self.raise_error("Expected a quoted ENUM/SET value")
            text = self._prev.text
            while self._match(TokenType.STRING):  # adjacent literals concatenate
                text += self._prev.text
            values.append(text.rstrip(" "))  # the servers drop trailing spaces of members
            if not self._match(TokenType.COMMA):
                break
        self._match_r_paren()
        node.set("values", tuple(values))

    def _parse_plain_shape(self, node: nodes.ColumnType) -> None:
        return None

    def _parse_column_def(self, this: exp.Expr | None, computed_column: bool = True) -> exp.Expr:
        """``name type attribute* [FIRST | AFTER name]`` (``this`` is the name)."""
        name = this.name if isinstance(this, exp.Expr) else ""
        kind = self._parse_column_type()
        constraints: list[exp.Expr] = []
        while True:
            attribute = self._parse_column_attribute()
            if attribute is None:
                break
            constraints += attribute
        position = None
        if self._match_texts(("FIRST",)):
            position = exp.ColumnPosition(position="FIRST")
        elif self._match_texts(("AFTER",)):
            position = exp.ColumnPosition(this=exp.to_identifier(self._name()), position="AFTER")
        return exp.ColumnDef(
            this=exp.to_identifier(name), kind=kind, constraints=constraints, position=position
        )

    def _column_def(self) -> exp.ColumnDef:
        column = self._parse_column_def(exp.to_identifier(self._name()))
        assert isinstance(column, exp.ColumnDef)
        return column

    def _parse_column_attribute(self) -> list[exp.Expr] | None:
        """One attribute's constraint nodes ([] for one that is skipped), None at the end."""
        if not self._curr or self._at_list_end():
            return None
        handler = _ATTRIBUTES.get(self._first_word())
        if handler is not None:
            index = self._index
            self._advance()
            result = handler(self)
            if result is not None:
                return [] if result is True else [result]
            self._retreat(index)
        if self._match_charset_keyword():
            return [self._attr_charset(self._value())]
        constraint = self._parse_column_constraint()
        if constraint is None:
            return None
        default = constraint.args.get("kind")
        if isinstance(default, exp.DefaultColumnConstraint) and isinstance(
            default.this, exp.Collate
        ):  # DEFAULT 'x' COLLATE c: the COLLATE is the column's
            collate = default.this.expression
            default.set("this", default.this.this)
            return [
                constraint,
                exp.ColumnConstraint(kind=exp.CollateColumnConstraint(this=collate)),
            ]
        return [constraint]

    def _parse_references(self, match: bool = True) -> exp.Reference | None:
        """``REFERENCES t (columns) [MATCH x] [ON DELETE|UPDATE action]...``, read past."""
        if match and not self._match(TokenType.REFERENCES):
            return None
        table = self._table_name(touch=False)
        if self._match(TokenType.L_PAREN):
            self._skip_balanced(lambda: False)
            self._match_r_paren()
        while self._match_texts(("MATCH",)) or self._match(TokenType.ON):
            self._match_set((TokenType.DELETE, TokenType.UPDATE))
            for words in (("SET", "NULL"), ("SET", "DEFAULT"), ("NO", "ACTION")):
                if self._match_words(*words):
                    break
            else:
                self._advance()
        return exp.Reference(this=table)

    def _attr_key(self) -> exp.Expr:
        return exp.ColumnConstraint(kind=exp.PrimaryKeyColumnConstraint())

    def _attr_primary(self) -> exp.Expr:
        return self._attr_key()

    def _attr_generated(self) -> exp.Expr | bool | None:
        if self._match_text_seq("ALWAYS", "AS", "ROW"):  # MariaDB system versioning column
            start = self._match_texts(("START",))
            self._match_texts(("END",))
            return exp.ColumnConstraint(kind=exp.GeneratedAsRowColumnConstraint(start=start))
        if not self._match_text_seq("ALWAYS", "AS"):
            return None
        return self._attr_as()

    def _attr_as(self) -> exp.Expr | None:
        if not self._match(TokenType.L_PAREN, advance=False):
            return None
        expression = self._parse_wrapped(self._parse_disjunction)
        stored = self._match_texts(("STORED", "PERSISTENT"))
        if not stored:
            self._match_texts(("VIRTUAL",))
        computed = exp.ComputedColumnConstraint(this=expression, persisted=stored)
        return exp.ColumnConstraint(kind=computed)

    def _attr_invisible(self) -> exp.Expr:
        return exp.ColumnConstraint(kind=exp.InvisibleColumnConstraint())

    def _attr_serial(self) -> exp.Expr | None:
        if not self._match_text_seq("DEFAULT", "VALUE"):
            return None
        return exp.ColumnConstraint(kind=nodes.SerialDefaultValue())

    def _attr_binary(self) -> exp.Expr:
        return exp.ColumnConstraint(kind=exp.BinaryColumnConstraint())

    def _attr_charset(self, name: str) -> exp.Expr:
        return exp.ColumnConstraint(kind=exp.CharacterSetColumnConstraint(this=exp.var(name)))

    def _attr_collate(self) -> exp.Expr:
        self._match(TokenType.EQ)
        return exp.ColumnConstraint(kind=exp.CollateColumnConstraint(this=exp.var(self._value())))

    def _attr_one_value(self) -> bool:
        self._match(TokenType.EQ)
        self._advance()
        return True

    def _attr_compressed(self) -> exp.Expr:
        if self._match(TokenType.EQ):
            self._advance()  # the method: zlib, the only one
        return exp.ColumnConstraint(kind=exp.CompressColumnConstraint())

    def _attr_versioning(self) -> bool | None:
        return True if self._match_text_seq("SYSTEM", "VERSIONING") else None

    def _attr_not(self) -> exp.Expr | bool | None:
        if self._match_texts(("SECONDARY",)):
            return True
        return None

    # --- CREATE --------------------------------------------------------------------------

    def _parse_create_ddl(self) -> exp.Expr:
        replace = self._match_pair(TokenType.OR, TokenType.REPLACE)
        temporary = self._match(TokenType.TEMPORARY)
        if self._match(TokenType.TABLE):
            return self._parse_create_table(replace, temporary)
        if self._match_texts(("SEQUENCE",)):
            exists = self._if_not_exists()
            table = self._table_name()
            self._skip_rest()
            return nodes.CreateSequence(
                this=table, replace=replace, exists=exists, temporary=temporary
            )
        if self._match_set((TokenType.DATABASE, TokenType.SCHEMA)):
            exists = self._if_not_exists()
            name = self._name()
            return nodes.CreateDatabase(
                this=name, options=self._parse_table_options(), replace=replace, exists=exists
            )
        return self._other_kind("CREATE")

    def _parse_create_table(self, replace: bool, temporary: bool) -> nodes.CreateTable:
        exists = self._if_not_exists()
        table = self._table_name()
        node = nodes.CreateTable(this=table, replace=replace, exists=exists, temporary=temporary)
        if self._match_texts(("LIKE",)):
            node.set("like", self._table_name(touch=False))
            return node
        if self._match_pair(TokenType.L_PAREN, TokenType.LIKE):
            node.set("like", self._table_name(touch=False))
            self._match_r_paren()
            return node
        if self._match(TokenType.L_PAREN, advance=False) and not self._select_follows(1):
            self._advance()
            columns, primary_key = self._parse_create_definitions()
            node.set("columns", columns)
            node.set("primary_key", primary_key)
        node.set("options", self._parse_table_options())
        self._skip_partitioning()
        self._match_texts(("IGNORE", "REPLACE"))
        self._match(TokenType.ALIAS)
        if self._curr:
            node.set("select", True)
            self._skip_rest()
        return node

    def _select_follows(self, ahead: int = 0) -> bool:
        """Whether a query starts ``ahead`` tokens on (perhaps after opening parentheses)."""
        for token in self._tokens[self._index + ahead :]:
            if token.token_type != TokenType.L_PAREN:
                return token.token_type in _QUERY_STARTS
        return False

    def _parse_create_definitions(self) -> tuple[list[exp.ColumnDef], list[str] | None]:
        columns: list[exp.ColumnDef] = []
        primary_key: list[str] | None = None
        while True:
            keys = self._parse_key_definition()
            if keys is not None:
                primary_key = keys or primary_key
            else:
                column = self._column_def()
                if self._column_is_primary(column):
                    primary_key = [column.name]
                columns.append(column)
            if not self._match(TokenType.COMMA):
                break
        self._match_r_paren()
        return columns, primary_key

    @staticmethod
    def _column_is_primary(column: exp.ColumnDef) -> bool:
        return any(
            isinstance(c.args.get("kind"), exp.PrimaryKeyColumnConstraint)
            for c in column.constraints
        )

    def _parse_key_definition(self) -> list[str] | None:
        """An index/key/check definition: its primary key columns, [] for other kinds,
        None when a column definition follows instead."""
        first = self._first_word()
        if first == "PERIOD" and self._next and self._next.text.upper() == "FOR":
            self._skip_balanced(self._at_list_end)
            return []
        if first == "PRIMARY" or (first == "CONSTRAINT" and self._primary_after_constraint()):
            return self._parse_primary_key_columns()
        if first in _KEY_WORDS:
            self._skip_balanced(self._at_list_end)
            return []
        return None

    def _primary_after_constraint(self) -> bool:
        """At CONSTRAINT: whether PRIMARY KEY follows (after the optional name)."""
        index = self._index
        self._advance()
        if self._first_word() != "PRIMARY":
            self._advance()
        found = self._first_word() == "PRIMARY"
        self._retreat(index)
        return found

    def _parse_primary_key_columns(self) -> list[str]:
        if self._match(TokenType.CONSTRAINT) and self._first_word() != "PRIMARY":
            self._advance()
        if not self._match_words("PRIMARY", "KEY"):
            self.raise_error("Expected PRIMARY KEY")
        self._skip_balanced(lambda: self._curr.token_type == TokenType.L_PAREN)
        self._match_l_paren()
        names = []
        while True:
            names.append(self._name())
            if self._match(TokenType.L_PAREN):  # prefix length
                self._skip_balanced(lambda: False)
                self._match_r_paren()
            self._match_set((TokenType.ASC, TokenType.DESC))
            if not self._match(TokenType.COMMA):
                break
        self._match_r_paren()
        self._skip_balanced(self._at_list_end)  # index options
        return names

    def _parse_table_options(self) -> nodes.TableOptions:
        """Table (or database) options up to partitioning or a SELECT; only charset,
        collation and system versioning are kept."""
        options = nodes.TableOptions()
        while self._curr:
            if self._curr.token_type == TokenType.COMMA:
                if (
                    self._next
                    and _words(self._next)[:1]
                    and _words(self._next)[0] in _ALTER_ACTIONS
                ):
                    break  # the next ALTER TABLE action
                self._advance()
            self._match(TokenType.DEFAULT)
            if self._match_charset_keyword():
                self._match(TokenType.EQ)
                options.set("charset", self._value())
            elif self._match_texts(("COLLATE",)):
                self._match(TokenType.EQ)
                options.set("collation", self._value())
            elif self._match_words("WITH", "SYSTEM", "VERSIONING"):
                options.set("versioning", True)
            elif self._at_options_end():
                break
            else:
                self._skip_option()
        return options

    def _at_options_end(self) -> bool:
        return (
            not self._curr
            or self._curr.token_type in (TokenType.SELECT, TokenType.WITH, TokenType.ALIAS)
            or self._curr.token_type == TokenType.L_PAREN
            or self._first_word() in ("PARTITION", "IGNORE", "REPLACE")
            or self._curr.token_type == TokenType.R_PAREN
        )

    def _skip_option(self) -> None:
        """``NAME [=] value``, ``UNION [=] (t, ...)``, ``TABLESPACE t [STORAGE x]`` and the like."""
        name = _words(self._curr)
        self._advance()
        if name and name[0] in ("DATA", "INDEX") and self._match_texts(("DIRECTORY",)):
            pass
        elif name and name[0] == "START":
            self._match_texts(("TRANSACTION",))
            return
        self._match(TokenType.EQ)
        if self._match(TokenType.L_PAREN):
            self._skip_balanced(lambda: False)
            self._match_r_paren()
        elif self._curr and not self._at_options_end():
            self._advance()
        if name and name[0] == "TABLESPACE" and self._match_texts(("STORAGE",)):
            self._advance()

    def _skip_partitioning(self) -> None:
        if self._first_word() == "PARTITION":
            self._skip_balanced(
                lambda: (
                    self._curr.token_type in (TokenType.SELECT, TokenType.WITH, TokenType.ALIAS)
                    or self._first_word() in ("IGNORE", "REPLACE")
                )
            )

    # --- ALTER ---------------------------------------------------------------------------

    def _parse_alter_ddl(self) -> exp.Expr:
        index = self._index
        self._match_texts(("ONLINE", "OFFLINE"))
        self._match(TokenType.IGNORE)
        if self._match(TokenType.TABLE):
            return self._parse_alter_table()
        self._retreat(index)
        if self._match_set((TokenType.DATABASE, TokenType.SCHEMA)):
            name = None
            if not self._at_options_end() and not self._charset_option_follows():
                name = self._name()
            return nodes.AlterDatabase(this=name, options=self._parse_table_options())
        if self._match_texts(("SEQUENCE",)):
            return self._other("ALTER SEQUENCE")
        return self._other_kind("ALTER")

    def _charset_option_follows(self) -> bool:
        words = _words(self._curr)
        return bool(words) and words[0] in ("DEFAULT", "CHARACTER", "CHARSET", "CHAR", "COLLATE")

    def _parse_alter_table(self) -> nodes.AlterTable:
        exists = self._if_exists()
        table = self._table_name()
        actions: list[exp.Expr] = []
        while self._curr and self._first_word() != "PARTITION":
            action = self._parse_alter_action()
            if action is not None:
                actions.append(action)
            if not self._match(TokenType.COMMA):
                break
        self._skip_partitioning()
        return nodes.AlterTable(this=table, actions=actions, exists=exists)

    def _parse_alter_action(self) -> exp.Expr | None:
        handler = _ALTER_ACTIONS.get(self._first_word())
        if handler is None:
            return self._parse_alter_options()
        self._advance()
        action: exp.Expr | None = handler(self)
        return action

    def _parse_alter_options(self) -> exp.Expr | None:
        options = self._parse_table_options()
        if not options.args:
            if self._curr and not self._at_list_end():
                self._skip_balanced(self._at_list_end)
            return None
        return options

    def _alter_add(self) -> exp.Expr | None:
        keys = self._parse_key_definition()
        if keys:
            return nodes.AddPrimaryKey(expressions=keys)
        if keys is not None:
            return None
        if self._first_word() == "PARTITION":
            self._skip_balanced(self._at_list_end)
            return None
        if self._match_words("SYSTEM", "VERSIONING"):
            return nodes.Versioning(this=True)
        self._match(TokenType.COLUMN)
        exists = self._if_not_exists()
        if self._match(TokenType.L_PAREN):
            columns = [self._column_def()]
            while self._match(TokenType.COMMA):
                columns.append(self._column_def())
            self._match_r_paren()
        else:
            columns = [self._column_def()]
        return nodes.AddColumns(expressions=columns, exists=exists)

    def _alter_change(self, rename: bool = True) -> exp.Expr:
        self._match(TokenType.COLUMN)
        exists = self._if_exists()
        old = self._name()
        column = self._column_def() if rename else self._parse_column_def(exp.to_identifier(old))
        return nodes.ChangeColumn(this=old, column=column, exists=exists)

    def _alter_modify(self) -> exp.Expr:
        return self._alter_change(rename=False)

    def _alter_drop(self) -> exp.Expr | None:
        if self._match_words("PRIMARY", "KEY"):
            return nodes.DropPrimaryKey()
        if self._match_texts(("INDEX", "KEY")):
            self._if_exists()
            return nodes.DropIndex(this=self._name())
        if self._first_word() == "PARTITION":
            return self._alter_remove_partitions("DROP")
        if self._first_word() in ("FOREIGN", "CONSTRAINT", "CHECK", "PERIOD"):
            self._skip_balanced(self._at_list_end)
            return None
        if self._match_words("SYSTEM", "VERSIONING"):
            return nodes.Versioning(this=False)
        self._match(TokenType.COLUMN)
        exists = self._if_exists()
        node = nodes.DropColumn(this=self._name(), exists=exists)
        self._match_texts(("RESTRICT", "CASCADE"))
        return node

    def _alter_alter(self) -> exp.Expr | None:
        if self._match_texts(("INDEX", "KEY", "CHECK", "CONSTRAINT")):
            self._skip_balanced(self._at_list_end)
            return None
        self._match(TokenType.COLUMN)
        self._if_exists()
        name = self._name()
        if self._match_words("SET", "INVISIBLE"):
            return nodes.SetVisibility(this=name, invisible=True)
        if self._match_words("SET", "VISIBLE"):
            return nodes.SetVisibility(this=name, invisible=False)
        if self._match_words("SET", "DEFAULT"):
            return nodes.SetDefault(this=name, expression=self._parse_bitwise())
        if self._match_words("DROP", "DEFAULT"):
            return nodes.SetDefault(this=name)
        self._skip_balanced(self._at_list_end)
        return None

    def _alter_truncate(self) -> exp.Expr:
        if self._first_word() != "PARTITION":
            self.raise_error("Expected PARTITION after TRUNCATE")
        return self._alter_remove_partitions("TRUNCATE")

    def _alter_remove_partitions(self, verb: str) -> nodes.RemovePartitions:
        """``PARTITION [IF EXISTS] name [, name ...]`` (names as written; ``ALL``: all)."""
        self._advance()
        self._if_exists()
        names = [self._name()]
        while self._match(TokenType.COMMA):
            names.append(self._name())
        return nodes.RemovePartitions(this=verb, expressions=names)

    def _alter_rename(self) -> exp.Expr:
        if self._match(TokenType.COLUMN):
            exists = self._if_exists()
            old = self._name()
            self._match_texts(("TO",))
            return nodes.RenameColumn(this=old, to=self._name(), exists=exists)
        if self._match_texts(("INDEX", "KEY")):
            self._skip_balanced(self._at_list_end)
            return nodes.OtherDdl(this="RENAME INDEX")
        self._match_texts(("TO", "AS"))
        self._match(TokenType.ALIAS)
        return nodes.RenameTable(this=self._table_name())

    def _alter_convert(self) -> exp.Expr:
        self._match_texts(("TO",))
        if not self._match_charset_keyword():
            self.raise_error("Expected CHARACTER SET after CONVERT TO")
        charset = "DEFAULT" if self._match(TokenType.DEFAULT) else self._value()
        collation = self._value() if self._match_texts(("COLLATE",)) else None
        return nodes.ConvertCharset(charset=charset, collation=collation)

    # --- DROP, RENAME, TRUNCATE ----------------------------------------------------------

    def _parse_drop_ddl(self) -> exp.Expr:
        temporary = self._match(TokenType.TEMPORARY)
        if self._match(TokenType.TABLE) or self._match_texts(("TABLES", "SEQUENCE")):
            exists = self._if_exists()
            tables = [self._table_name()]
            while self._match(TokenType.COMMA):
                tables.append(self._table_name())
            self._match_texts(("RESTRICT", "CASCADE"))
            return nodes.DropTables(expressions=tables, temporary=temporary, exists=exists)
        if self._match_set((TokenType.DATABASE, TokenType.SCHEMA)):
            exists = self._if_exists()
            return nodes.DropDatabase(this=self._name(), exists=exists)
        self._match_texts(("ONLINE", "OFFLINE"))
        if self._match(TokenType.INDEX):
            self._if_exists()
            name = self._name()
            if not self._match(TokenType.ON):
                self.raise_error("Expected ON after DROP INDEX name")
            table = self._table_name()
            self._skip_rest()  # ALGORITHM=..., LOCK=...
            return nodes.DropIndex(this=name, table=table)
        return self._other_kind("DROP")

    def _parse_rename_ddl(self) -> exp.Expr:
        if not self._match(TokenType.TABLE) and not self._match_texts(("TABLES",)):
            return self._other_kind("RENAME")
        self._if_exists()
        pairs = []
        while True:
            old = self._table_name()
            if self._match_texts(("WAIT",)):
                self._advance()
            self._match_texts(("NOWAIT",))
            self._match_texts(("TO",))
            pairs.append(exp.Tuple(expressions=[old, self._table_name()]))
            if not self._match(TokenType.COMMA):
                break
        return nodes.RenameTables(expressions=pairs)

    def _parse_truncate_ddl(self) -> exp.Expr:
        self._match(TokenType.TABLE)
        return nodes.TruncateTable(this=self._table_name())


_Handler = Callable[[DdlParser], Any]

_SHAPES: dict[Shape, Callable[[DdlParser, nodes.ColumnType], None]] = {
    Shape.INTEGER: DdlParser._parse_integer_shape,
    Shape.FLOAT: DdlParser._parse_float_shape,
    Shape.DECIMAL: DdlParser._parse_decimal_shape,
    Shape.LENGTH: DdlParser._parse_length_shape,
    Shape.VALUES: DdlParser._parse_values_shape,
    Shape.FSP: DdlParser._parse_fsp_shape,
    Shape.PLAIN: DdlParser._parse_plain_shape,
}

_ATTRIBUTES: dict[str, _Handler] = {
    "KEY": DdlParser._attr_key,
    "PRIMARY": DdlParser._attr_primary,
    "GENERATED": DdlParser._attr_generated,
    "AS": DdlParser._attr_as,
    "INVISIBLE": DdlParser._attr_invisible,
    "VISIBLE": lambda self: True,
    "SERIAL": DdlParser._attr_serial,
    "BINARY": DdlParser._attr_binary,
    "ASCII": lambda self: self._attr_charset("latin1"),
    "UNICODE": lambda self: self._attr_charset("ucs2"),
    "BYTE": lambda self: self._attr_charset("binary"),
    "COLLATE": DdlParser._attr_collate,
    "COMPRESSED": DdlParser._attr_compressed,
    "WITH": DdlParser._attr_versioning,
    "WITHOUT": DdlParser._attr_versioning,
    "NOT": DdlParser._attr_not,
    "PERSISTENT": lambda self: True,
    **dict.fromkeys(_ONE_VALUE_ATTRIBUTES, DdlParser._attr_one_value),
}
"""Column attributes read here; the others are sqlglot's column constraints."""

_ALTER_ACTIONS: dict[str, _Handler] = {
    "ADD": DdlParser._alter_add,
    "CHANGE": DdlParser._alter_change,
    "MODIFY": DdlParser._alter_modify,
    "DROP": DdlParser._alter_drop,
    "ALTER": DdlParser._alter_alter,
    "RENAME": DdlParser._alter_rename,
    "CONVERT": DdlParser._alter_convert,
    "TRUNCATE": DdlParser._alter_truncate,
}
"""ALTER TABLE actions by first word; anything else is a table option or skipped."""

__all__ = ["DdlParser", "ParseError"]
