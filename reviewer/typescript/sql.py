"""Raw SQL written in a tagged template (drizzle's `sql`, @effect/sql's `sql`), read with sqlglot.

A template's text is rebuilt with each `${..}` substitution as a placeholder
name, parsed once (PostgreSQL, then SQLite, then MySQL syntax), and read for
what a family asks of a query: its operation and table, the columns its
`WHERE` pins with `=` (a column compared with itself pins nothing), its
`LIMIT` (a number, a substitution, or none) and its `ORDER BY`. What sqlglot
cannot parse is `unreadable` with its reason, never an empty query.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from reviewer.typescript import syntax as sx
from reviewer.typescript.expressions import Call, Expr, _parts

if TYPE_CHECKING:
    from sqlglot import exp

_PLACEHOLDER = "__reviewer_sub_"
_DIALECTS = ("postgres", "sqlite", "mysql")
_OPERATIONS = {"Select": "select", "Union": "select", "Update": "update", "Delete": "delete", "Insert": "insert"}


@dataclass(frozen=True)
class Order:
    column: str | None  # None: an expression, not a column
    descending: bool
    text: str


@dataclass(frozen=True)
class Statement:
    """What one raw SQL template does (see the module docstring)."""

    operation: str  # "select" | "update" | "delete" | "insert" | "other" | "unreadable"
    table: str | None  # the table it reads or writes first (a substitution's source when interpolated)
    pins: tuple[str, ...]  # columns its top-level WHERE equates with a value (a parameter, a literal)
    has_limit: bool
    limit: float | None  # the LIMIT as a number, when written as one
    limit_expr: Expr | None  # the substitution a `LIMIT ${n}` reads
    order: tuple[Order, ...]
    substitutions: tuple[Expr, ...]
    reason: str = ""  # why it is unreadable


def is_sql_template(call: Call) -> bool:
    """A tagged template whose tag is named `sql` (however qualified: `sql`, `Db.sql`)."""
    module, node = _parts(call)
    template = sx.field(node, "arguments")
    return template is not None and template.type == "template_string" and call.callee.rsplit(".", 1)[-1] == "sql"


def statement(call: Call) -> Statement | None:
    """The statement a `sql` tagged template writes, or None when `call` is no such template."""
    if not is_sql_template(call):
        return None
    module, node = _parts(call)
    template = sx.field(node, "arguments")
    parts: list[str] = []
    substitutions: list[Expr] = []
    for child in template.children:
        if child.type in ("string_fragment", "escape_sequence"):
            parts.append(sx.text(child))
        elif child.type == "template_substitution":
            inner = sx.named(child)
            substitutions.append(Expr(module, inner[0] if inner else child))
            parts.append(f"{_PLACEHOLDER}{len(substitutions) - 1}")
    read = _read("".join(parts))
    if isinstance(read, str):
        return Statement("unreadable", None, (), False, None, None, (), tuple(substitutions), read)
    operation, table, pins, has_limit, limit, limit_sub, order = read
    if table is not None and table.startswith(_PLACEHOLDER):
        table = _substituted(substitutions, table)
    limit_expr = substitutions[limit_sub] if limit_sub is not None and limit_sub < len(substitutions) else None
    return Statement(operation, table, pins, has_limit, limit, limit_expr, order, tuple(substitutions))


def _substituted(substitutions: list[Expr], placeholder: str) -> str | None:
    """The name a `${T}` / `${sql(T)}` / `${sql("t")}` substitution stands for as a table."""
    index = int(placeholder[len(_PLACEHOLDER):])
    if index >= len(substitutions):
        return None
    value = substitutions[index]
    call = value.call
    if call is not None and call.args:
        value = call.args[0]
    return value.string_value or value.member_path


@lru_cache(maxsize=2048)
def _read(text: str) -> tuple | str:
    """(operation, table, pins, has_limit, limit, limit substitution index, order), or why it does not parse."""
    # Imported on first use: most reviews meet no raw SQL and should not pay for loading sqlglot.
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import SqlglotError

    tree = None
    reason = ""
    for dialect in _DIALECTS:
        try:
            tree = sqlglot.parse_one(text, read=dialect)
            break
        except (SqlglotError, ValueError, RecursionError) as error:
            reason = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
    if tree is None:
        return reason or "not SQL sqlglot can parse"
    operation = next((name for kind, name in _OPERATIONS.items() if isinstance(tree, getattr(exp, kind))), "other")
    table = _first_table(tree)
    where = tree.args.get("where")
    pins = tuple(sorted(_pins(where.this))) if isinstance(where, exp.Where) else ()
    limit_node = tree.args.get("limit")
    has_limit, limit, limit_sub = False, None, None
    if isinstance(limit_node, (exp.Limit, exp.Fetch)):
        has_limit = True
        value = limit_node.args.get("expression") or limit_node.args.get("count")
        if isinstance(value, exp.Literal) and not value.is_string:
            limit = float(value.this)
        elif isinstance(value, exp.Neg) and isinstance(value.this, exp.Literal):
            limit = -float(value.this.this)
        elif isinstance(value, exp.Column) and value.name.startswith(_PLACEHOLDER):
            limit_sub = int(value.name[len(_PLACEHOLDER):])
    order = tuple(
        Order(o.this.name if isinstance(o.this, exp.Column) else None, bool(o.args.get("desc")), o.this.sql())
        for o in (tree.args.get("order").expressions if isinstance(tree.args.get("order"), exp.Order) else ())
    )
    return operation, table, pins, has_limit, limit, limit_sub, order


def _first_table(tree: "exp.Expression") -> str | None:
    from sqlglot import exp

    target = tree.this if isinstance(tree, (exp.Update, exp.Delete, exp.Insert)) else None
    if isinstance(target, exp.Schema):
        target = target.this
    if isinstance(target, exp.Table):
        return target.name
    source = tree.args.get("from") or tree.args.get("from_")
    table = source.find(exp.Table) if source is not None else tree.find(exp.Table)
    return table.name if table is not None else None


def _pins(condition: "exp.Expression") -> set[str]:
    """Columns a top-level conjunction equates with a value: `a = $1 AND b = 'x'` pins a and b;
    `a = a`, `a = b` and anything under OR/NOT pin nothing."""
    from sqlglot import exp

    if isinstance(condition, exp.Paren):
        return _pins(condition.this)
    if isinstance(condition, exp.And):
        return _pins(condition.left) | _pins(condition.right)
    if isinstance(condition, exp.EQ):
        for column, value in ((condition.left, condition.right), (condition.right, condition.left)):
            if isinstance(column, exp.Column) and not column.name.startswith(_PLACEHOLDER) and _is_value(value):
                return {column.name}
    return set()


def _is_value(node: "exp.Expression") -> bool:
    """A parameter (a substitution, `$1`, `?`, `:p`) or a literal: one value, not another column."""
    from sqlglot import exp

    if isinstance(node, exp.Column):
        return node.name.startswith(_PLACEHOLDER)
    return isinstance(node, (exp.Literal, exp.Placeholder, exp.Parameter))
