"""ALTER TABLE: its actions applied in order to a working copy of the table.

Each action kind has one function in :data:`ACTIONS`. Changes follow the
servers: MODIFY/CHANGE replace the whole definition (a definition without a
charset takes the table's, not the old column's); a renamed or dropped column
leaves the primary key under its new name or without it; CONVERT TO
CHARACTER SET converts every text column and widens text types so they still
hold as many characters (MySQL's documented behaviour).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from sqlglot import exp

from binlogkit.schema import charsets, nodes
from binlogkit.schema.columns import build_column
from binlogkit.schema.defaults import implicit_timestamps, stored_default
from binlogkit.schema.model import ColumnDef, TableDef, TableName, fold_column
from binlogkit.schema.result import Action
from binlogkit.schema.state import CannotApply, Context
from binlogkit.schema.tables import finish, key_columns, with_versioning
from binlogkit.schema.types import BINARY_FORM, CHAR_TYPES, max_bytes, sized_type, text_family


@dataclass
class Draft:
    """The table being altered."""

    name: TableName
    columns: list[ColumnDef]
    primary_key: list[str]
    default: charsets.Charset

    @classmethod
    def of(cls, table: TableDef, default: charsets.Charset) -> Draft:
        return cls(table.table_name, list(table.columns), list(table.primary_key), default)

    def table(self) -> TableDef:
        return finish(
            TableDef(
                self.name.db,
                self.name.name,
                tuple(self.columns),
                key_columns(self.columns, self.primary_key, self.name),
                self.default.charset,
                self.default.collation,
            )
        )

    def index(self, name: str) -> int | None:
        folded = fold_column(name)
        return next((i for i, c in enumerate(self.columns) if fold_column(c.name) == folded), None)

    def require(self, name: str) -> int:
        index = self.index(name)
        if index is None:
            raise CannotApply(f"{self.name} has no column {name}", self.name)
        return index

    def rename_in_key(self, old: str, new: str) -> None:
        folded = fold_column(old)
        self.primary_key = [new if fold_column(k) == folded else k for k in self.primary_key]

    def place(self, column: ColumnDef, position: exp.ColumnPosition | None) -> None:
        """Insert a column at its FIRST/AFTER position, or last."""
        if position is None:
            self.columns.append(column)
        elif position.args.get("position") == "FIRST":
            self.columns.insert(0, column)
        else:
            self.columns.insert(self.require(position.this.name) + 1, column)


def _add_columns(draft: Draft, node: nodes.AddColumns, ctx: Context) -> None:
    for definition in node.expressions:
        if draft.index(definition.name) is not None:
            if node.arg("exists"):
                continue
            raise CannotApply(f"{draft.name} already has a column {definition.name}", draft.name)
        built = build_column(definition, draft.default, ctx.session)
        draft.place(built.column, definition.args.get("position"))
        if built.primary:
            draft.primary_key = [built.column.name]


def _change_column(draft: Draft, node: nodes.ChangeColumn, ctx: Context) -> None:
    if node.arg("exists") and draft.index(node.this) is None:
        return
    index = draft.require(node.this)
    definition = node.arg("column")
    built = build_column(definition, draft.default, ctx.session)
    other = draft.index(built.column.name)
    if other is not None and other != index:
        raise CannotApply(f"{draft.name} already has a column {built.column.name}", draft.name)
    del draft.columns[index]
    position = definition.args.get("position")
    if position is None:
        draft.columns.insert(index, built.column)
    else:
        draft.place(built.column, position)
    draft.rename_in_key(node.this, built.column.name)
    if built.primary:
        draft.primary_key = [built.column.name]


def _drop_column(draft: Draft, node: nodes.DropColumn, ctx: Context) -> None:
    index = draft.index(node.this)
    if index is None and node.arg("exists"):
        return
    del draft.columns[draft.require(node.this)]
    folded = fold_column(node.this)
    draft.primary_key = [k for k in draft.primary_key if fold_column(k) != folded]


def _rename_column(draft: Draft, node: nodes.RenameColumn, ctx: Context) -> None:
    index = draft.index(node.this)
    if index is None and node.arg("exists"):
        return
    index = draft.require(node.this)
    new = node.arg("to")
    if draft.index(new) not in (None, index):
        raise CannotApply(f"{draft.name} already has a column {new}", draft.name)
    draft.columns[index] = replace(draft.columns[index], name=new)
    draft.rename_in_key(node.this, new)


def _set_visibility(draft: Draft, node: nodes.SetVisibility, ctx: Context) -> None:
    index = draft.require(node.this)
    draft.columns[index] = replace(draft.columns[index], invisible=bool(node.arg("invisible")))


def _add_primary_key(draft: Draft, node: nodes.AddPrimaryKey, ctx: Context) -> None:
    draft.primary_key = list(node.expressions)


def _drop_primary_key(draft: Draft, node: exp.Expr, ctx: Context) -> None:
    draft.primary_key = []


def _drop_index(draft: Draft, node: nodes.DropIndex, ctx: Context) -> None:
    if node.this.upper() == "PRIMARY":
        draft.primary_key = []


def _rename_table(draft: Draft, node: nodes.RenameTable, ctx: Context) -> None:
    draft.name = ctx.name(node.this)


def _table_options(draft: Draft, node: nodes.TableOptions, ctx: Context) -> None:
    charset, collation = node.arg("charset"), node.arg("collation")
    if charset is not None or collation is not None:
        draft.default = _pair(charset, collation, draft.default, ctx)


def _pair(
    charset: str | None, collation: str | None, default: charsets.Charset, ctx: Context
) -> charsets.Charset:
    return charsets.resolve(
        None if charset is None else charsets.charset_name(charset),
        None if collation is None else charsets.collation_name(collation),
        default,
        ctx.session.default_collation,
    )


def _versioning(draft: Draft, node: nodes.Versioning, ctx: Context) -> None:
    draft.columns = list(with_versioning(draft.columns, bool(node.this)))


def _convert(draft: Draft, node: nodes.ConvertCharset, ctx: Context) -> None:
    charset = node.arg("charset")
    if charset.upper() == "DEFAULT":
        charset = ctx.database_default(draft.name.db).charset
    pair = _pair(charset, node.arg("collation"), draft.default, ctx)
    draft.columns = [converted(c, pair) for c in draft.columns]
    draft.default = pair


def converted(column: ColumnDef, pair: charsets.Charset) -> ColumnDef:
    """A text column in another charset, its type widened to hold as many characters."""
    if column.type not in CHAR_TYPES or column.charset is None:
        return column
    old_width = charsets.max_char_length(column.charset)
    new_width = charsets.max_char_length(pair.charset)
    type_name, length = column.type, column.length
    family = text_family(type_name)
    if family is not None:
        type_name = sized_type(family, max_bytes(type_name) // old_width * new_width)
    elif type_name == "varchar" and length is not None and length * new_width > 65535:
        type_name, length = sized_type("text", length * new_width), None
    if pair.charset == charsets.BINARY and type_name in BINARY_FORM:
        return replace(
            column, type=BINARY_FORM[type_name], length=length, charset=None, collation=None
        )
    return replace(
        column, type=type_name, length=length, charset=pair.charset, collation=pair.collation
    )


def _set_default(draft: Draft, node: nodes.SetDefault, ctx: Context) -> None:
    index = draft.require(node.this)
    column = draft.columns[index]
    value = node.args.get("expression")
    default = None if value is None else stored_default(value, column)
    draft.columns[index] = replace(column, default=default)


def _remove_partitions(draft: Draft, node: nodes.RemovePartitions, ctx: Context) -> None:
    names = tuple(node.expressions)
    ctx.truncate(draft.name, None if [n.upper() for n in names] == ["ALL"] else names)


ACTIONS: dict[type[exp.Expr], Callable[[Draft, Any, Context], None]] = {
    nodes.AddColumns: _add_columns,
    nodes.ChangeColumn: _change_column,
    nodes.DropColumn: _drop_column,
    nodes.RenameColumn: _rename_column,
    nodes.SetVisibility: _set_visibility,
    nodes.AddPrimaryKey: _add_primary_key,
    nodes.DropPrimaryKey: _drop_primary_key,
    nodes.DropIndex: _drop_index,
    nodes.RenameTable: _rename_table,
    nodes.TableOptions: _table_options,
    nodes.ConvertCharset: _convert,
    nodes.Versioning: _versioning,
    nodes.RemovePartitions: _remove_partitions,
    nodes.SetDefault: _set_default,
}
"""ALTER TABLE action node → how it changes the draft. OtherDdl actions change nothing."""


_TABLE_LEVEL = (nodes.TableOptions, nodes.ConvertCharset)
"""Actions the server applies before the column changes: the new table default is what
a column defined in the same statement inherits."""


def alter_table(node: nodes.AlterTable, ctx: Context) -> None:
    name = ctx.name(node.this)
    table = ctx.lookup(name)
    actions = node.arg("actions") or []
    if table is None:
        if node.arg("exists") and not ctx.exists(name):
            return
        new = name
        for action in actions:
            if isinstance(action, nodes.RenameTable):
                new = ctx.name(action.this)
        ctx.mark_unknown(new, old_name=name if new != name else None)
        return
    draft = Draft.of(table, charsets.Charset(table.charset or "", table.collation or ""))
    if table.charset is None or table.collation is None:
        draft.default = ctx.database_default(name.db)
    first = [a for a in actions if isinstance(a, _TABLE_LEVEL)]
    for action in first + [a for a in actions if not isinstance(a, _TABLE_LEVEL)]:
        handler = ACTIONS.get(type(action))
        if handler is not None:
            handler(draft, action, ctx)
    if not ctx.session.explicit_defaults_for_timestamp:
        draft.columns = implicit_timestamps(draft.columns)
    new_table = draft.table()
    if draft.name != name:
        ctx.put(new_table, Action.RENAMED, old_name=name)
    elif new_table != table:
        ctx.put(new_table, Action.ALTERED)
