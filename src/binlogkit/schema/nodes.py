"""Syntax-tree nodes the dialect adds to sqlglot's, for the DDL statements it reads itself.

Names are plain strings as the statement spelled them (quotes removed, case
kept); tables are :class:`sqlglot.exp.Table`; columns are sqlglot's
:class:`~sqlglot.exp.ColumnDef` whose ``kind`` is a :class:`ColumnType`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from sqlglot import exp


class _Node(exp.Expression):
    def arg(self, name: str) -> Any:
        return self.args.get(name)


class ColumnType(_Node):
    """A MySQL data type: ``this`` is the canonical name (``int``, ``varchar``, ``enum`` ...).

    ``length`` (also TEXT(M)/BLOB(M)'s M), ``precision``, ``scale`` and ``fsp`` as
    written; ``float_bits`` for FLOAT(p); ``values`` of ENUM/SET; ``unsigned``,
    ``zerofill``; ``national`` for NCHAR and friends (utf8mb3); ``serial`` for
    SERIAL; ``boolean`` for BOOL.
    """

    arg_types: ClassVar[dict[str, bool]] = dict.fromkeys(
        [
            "this",
            "length",
            "precision",
            "scale",
            "fsp",
            "float_bits",
            "values",
            "unsigned",
            "zerofill",
            "national",
            "serial",
            "boolean",
        ],
        False,
    ) | {"this": True}


class SerialDefaultValue(_Node):
    """The column attribute SERIAL DEFAULT VALUE (NOT NULL AUTO_INCREMENT UNIQUE)."""

    arg_types: ClassVar[dict[str, bool]] = {}


class TableOptions(_Node):
    """Table or database options that matter: default charset and collation, versioning."""

    arg_types: ClassVar[dict[str, bool]] = {
        "charset": False,
        "collation": False,
        "versioning": False,
    }


class CreateTable(_Node):
    """CREATE [OR REPLACE] [TEMPORARY] TABLE: columns and primary key, LIKE, or a SELECT."""

    arg_types: ClassVar[dict[str, bool]] = dict.fromkeys(
        [
            "this",
            "columns",
            "primary_key",
            "options",
            "like",
            "select",
            "replace",
            "exists",
            "temporary",
        ],
        False,
    ) | {"this": True}


class AlterTable(_Node):
    """ALTER TABLE ``this`` with its ``actions`` in order."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "actions": False, "exists": False}


class AddColumns(_Node):
    """ADD [COLUMN] [IF NOT EXISTS] one definition, or several in parentheses."""

    arg_types: ClassVar[dict[str, bool]] = {"expressions": True, "exists": False}


class ChangeColumn(_Node):
    """CHANGE old new definition, or MODIFY (``this`` is then the new name too)."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "column": True, "exists": False}


class DropColumn(_Node):
    arg_types: ClassVar[dict[str, bool]] = {"this": True, "exists": False}


class RenameColumn(_Node):
    arg_types: ClassVar[dict[str, bool]] = {"this": True, "to": True, "exists": False}


class SetVisibility(_Node):
    """ALTER [COLUMN] c SET VISIBLE / SET INVISIBLE."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "invisible": True}


class SetDefault(_Node):
    """ALTER [COLUMN] name SET DEFAULT expression (``expression``), or DROP DEFAULT (none)."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "expression": False}


class AddPrimaryKey(_Node):
    """ADD [CONSTRAINT [name]] PRIMARY KEY (columns)."""

    arg_types: ClassVar[dict[str, bool]] = {"expressions": True}


class DropPrimaryKey(_Node):
    arg_types: ClassVar[dict[str, bool]] = {}


class DropIndex(_Node):
    """DROP INDEX/KEY in ALTER TABLE, or DROP INDEX name ON table (``table`` set)."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "table": False}


class RenameTable(_Node):
    """ALTER TABLE ... RENAME [TO|AS] new name."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True}


class ConvertCharset(_Node):
    """CONVERT TO CHARACTER SET charset [COLLATE collation]; charset may be DEFAULT."""

    arg_types: ClassVar[dict[str, bool]] = {"charset": True, "collation": False}


class Versioning(_Node):
    """ADD/DROP SYSTEM VERSIONING (MariaDB)."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True}


class RenameTables(_Node):
    """RENAME TABLE a TO b [, c TO d ...]: ``expressions`` are (from, to) tuples."""

    arg_types: ClassVar[dict[str, bool]] = {"expressions": True}


class DropTables(_Node):
    """DROP [TEMPORARY] TABLE/SEQUENCE [IF EXISTS] list."""

    arg_types: ClassVar[dict[str, bool]] = {
        "expressions": True,
        "temporary": False,
        "exists": False,
    }


class TruncateTable(_Node):
    arg_types: ClassVar[dict[str, bool]] = {"this": True}


class RemovePartitions(_Node):
    """ALTER TABLE ... TRUNCATE PARTITION / DROP PARTITION names (``ALL``: every partition):
    the rows of those partitions are removed. ``this``: the verb."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "expressions": True}


class CreateSequence(_Node):
    """CREATE [OR REPLACE] [TEMPORARY] SEQUENCE (MariaDB): a table of fixed columns."""

    arg_types: ClassVar[dict[str, bool]] = {
        "this": True,
        "replace": False,
        "exists": False,
        "temporary": False,
    }


class CreateDatabase(_Node):
    arg_types: ClassVar[dict[str, bool]] = {
        "this": True,
        "options": False,
        "replace": False,
        "exists": False,
    }


class AlterDatabase(_Node):
    """ALTER DATABASE [name] options; no name means the default database."""

    arg_types: ClassVar[dict[str, bool]] = {"this": False, "options": False}


class DropDatabase(_Node):
    arg_types: ClassVar[dict[str, bool]] = {"this": True, "exists": False}


class OtherDdl(_Node):
    """DDL that changes no table's columns (views, routines, triggers, users, indexes ...)."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True}
