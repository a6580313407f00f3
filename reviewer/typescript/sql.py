"""Raw SQL written in a tagged template (drizzle's `sql`, @effect/sql's `sql`), read with sqlglot.

A template's text is rebuilt with each `${..}` substitution as a placeholder
name, parsed once (PostgreSQL, then SQLite, then MySQL syntax), and read for
what a family asks of a query: its operation and table, the columns its
`WHERE` pins with `=` (a column compared with itself pins nothing), its
`LIMIT` (a number, a substitution, or none) and its `ORDER BY`. What sqlglot
cannot parse is `unreadable` with its reason, never an empty query.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import tree_sitter as ts

from reviewer.typescript import syntax as sx
from reviewer.typescript.expressions import Call, Expr, _parts
from reviewer.typescript.parse import dialect, language

if TYPE_CHECKING:
    from sqlglot import exp

_PLACEHOLDER = "__reviewer_sub_"
_DIALECTS = ("postgres", "sqlite", "mysql")
_OPERATIONS = {
    "Select": "select", "Union": "select", "Except": "select", "Intersect": "select",
    "Update": "update", "Delete": "delete", "Insert": "insert",
}  # fmt: skip


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
    # Columns the statement assigns (`SET c = ..`, `ON CONFLICT DO UPDATE SET c = ..`, an INSERT's list),
    # and columns it compares by order (`c < now()`, `c >= $1`): a write that sets a column it also
    # bounds is a compare-and-set on it (a lease's expiry taken only once it ran out).
    writes: tuple[str, ...] = ()
    ranges: tuple[str, ...] = ()
    clears: bool = False  # every column it assigns is set to NULL (`SET owner = NULL, until = NULL`)
    # Columns compared as the smaller side (`valid_until < now()`, `$1 >= expires_at`): rows whose time has
    # passed, what a recovery pass reads and a takeover writes.
    below: tuple[str, ...] = ()
    aggregate: bool = False  # `SELECT count(*) FROM ..` with no GROUP BY: one row, whatever the table holds
    conditions: int = 0  # top-level conjuncts of its WHERE (`id = $1 AND owner IS NULL` is 2)


# Words a statement starts with: a tagged template or string argument starting with one is SQL,
# whatever its tag is named (an @effect/sql client bound to `db`, drizzle's `sql.raw`).
_SQL_START = re.compile(r"^\s*(?:--[^\n]*\n\s*|/\*.*?\*/\s*)*\(*\s*(select|with|update|delete|insert)\b", re.I | re.S)
# Calls that run SQL given as their first argument (`sql.unsafe(..)`, `sql.raw(..)`, `db.execute(..)`).
_RUNNERS = frozenset({"unsafe", "raw", "execute", "query", "all", "run", "get", "exec", "prepare", "values"})
# Substitutions that splice SQL text, not a value: `${sql("id")}`, `${sql.identifier("id")}`, `${sql.raw("..")}`.
_FRAGMENTS = frozenset({"sql", "identifier", "unsafe", "raw", "literal", "id"})
# Escapes of a template literal as the string the database receives ("cooked").
_COOKED = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


# Every string and template literal of a file, and which templates are tagged, found by tree-sitter's
# query engine (no Python walk).
_LITERALS = """
(call_expression arguments: (template_string) @tagged)
[(string) (template_string)] @literal
"""
# A superset of the words an INSERT or UPDATE statement's text holds (`writes_in_literals`).
_WRITE_WORDS = re.compile(r"\b(?:insert|update)\b", re.I)


@lru_cache(maxsize=None)
def _literals_query(name: str) -> ts.Query:
    return ts.Query(language(name), _LITERALS)


def writes_in_literals(path: str, root: ts.Node) -> bool:
    """Whether some literal of the file could be the text of an INSERT or UPDATE that `statement` reads.

    `statement` reads SQL only from a literal of the call's own file (`_source`): a tagged template, or
    a string or template whose text starts a statement (`_SQL_START`); an insert or update holds its
    keyword as a word. So a file none of whose literals is both has no such statement to read, and a
    search for them need not index its calls (`"Failed to update"`, an `update` in code or comments).
    """
    name = dialect(path)
    if name is None:
        return True  # not a grammar this knows: let the caller read it the long way
    captured = ts.QueryCursor(_literals_query(name)).captures(root)
    tagged = {node.id for node in captured.get("tagged", ())}
    for node in captured.get("literal", ()):
        text = _literal_text(node)
        if _WRITE_WORDS.search(text) and (node.id in tagged or _SQL_START.match(text)):
            return True
    return False


def is_sql_template(call: Call) -> bool:
    """A tagged template whose tag is named `sql` (however qualified: `sql`, `Db.sql`)."""
    module, node = _parts(call)
    template = sx.field(node, "arguments")
    return template is not None and template.type == "template_string" and call.callee.rsplit(".", 1)[-1] == "sql"


def _source(call: Call) -> ts.Node | None:
    """The template or string holding the SQL `call` runs: a `sql` tagged template, any tagged template
    whose text starts a statement, or the first argument of a runner (`sql.unsafe("SELECT ..")`), or
    the `text` of the query config object a runner is given (`client.query({ text: .. })`)."""
    module, node = _parts(call)
    template = sx.field(node, "arguments")
    if template is not None and template.type == "template_string":
        return template if is_sql_template(call) or _SQL_START.match(_literal_text(template)) else None
    if call.callee.rsplit(".", 1)[-1] not in _RUNNERS or not call.args:
        return None
    first = sx.strip(_parts(call.args[0])[1])
    if first is not None and first.type == "object":
        # node-postgres' query config: `client.query({ text: "UPDATE ..", values: [..] })`
        text = call.args[0].prop("text")
        first = sx.strip(_parts(text)[1]) if text is not None else None
    if first is not None and first.type in ("identifier", "shorthand_property_identifier"):
        first = _held_text(call, sx.text(first))  # `const text = \`SELECT ..\``, then `query({ text })`
    if first is not None and first.type in ("string", "template_string") and _SQL_START.match(_literal_text(first)):
        return first
    return None


def _held_text(call: Call, name: str) -> ts.Node | None:
    """The string or template a `const` of the call's own file holds (the innermost in scope)."""
    module, _ = _parts(call)
    value = module.index.local_constant(call.enclosing, name) if call.enclosing is not None else None
    if value is None:
        top = module.constant(name)
        value = _parts(top)[1] if top is not None else None
    value = sx.strip(value) if value is not None else None
    return value if value is not None and value.type in ("string", "template_string") else None


def _literal_text(node: ts.Node) -> str:
    """The literal parts, escapes as the string holds them (a leading line continuation is nothing)."""
    return "".join(
        sx.text(c) if c.type == "string_fragment" else _cooked(sx.text(c))
        for c in node.children if c.type in ("string_fragment", "escape_sequence")
    )


def _cooked(escape: str) -> str:
    """What an escape sequence is in the string itself: a line continuation is nothing at all."""
    body = escape[1:]
    if body.startswith(("\n", "\r")) or body in ("\n", "\r\n", "\r"):
        return ""
    if body[:1] in _COOKED:
        return _COOKED[body[:1]]
    if body[:1] in ("u", "x"):
        return _unicode(escape)
    return body


def _unicode(escape: str) -> str:
    digits = escape[3:-1] if escape.startswith("\\u{") else escape[2:]
    try:
        return chr(int(digits, 16))
    except ValueError:
        return escape


def _text(call: Call, source: ts.Node) -> tuple[str, list[Expr]]:
    """The template's text as the database receives it, each value substitution a placeholder name."""
    module, _ = _parts(call)
    parts: list[str] = []
    substitutions: list[Expr] = []
    for child in source.children:
        if child.type == "string_fragment":
            parts.append(sx.text(child))
        elif child.type == "escape_sequence":
            parts.append(_cooked(sx.text(child)))
        elif child.type == "template_substitution":
            inner = sx.named(child)
            value = Expr(module, inner[0] if inner else child)
            substitutions.append(value)
            spliced = _spliced(value)
            parts.append(spliced if spliced is not None else f"{_PLACEHOLDER}{len(substitutions) - 1}")
    return "".join(parts), substitutions


def order_fragment(call: Call) -> tuple[Order, ...] | None:
    """The keys of an ORDER BY written as a `sql` fragment (`orderBy(sql "${T.time} desc")`): a
    substituted column is named by its member path's last segment. None when it is no `sql`
    template or does not read as ORDER BY keys (the caller says it could not read the order)."""
    if not is_sql_template(call):
        return None
    module, node = _parts(call)
    text, substitutions = _text(call, sx.field(node, "arguments"))
    read = _read(f"SELECT 1 FROM {_PLACEHOLDER}t ORDER BY {text}")
    if isinstance(read, str):
        return None
    keys = []
    for order in read[6]:
        column = order.column
        if column is not None and column.startswith(_PLACEHOLDER) and column[len(_PLACEHOLDER):].isdigit():
            index = int(column[len(_PLACEHOLDER):])
            path = substitutions[index].member_path if index < len(substitutions) else None
            column = path.rsplit(".", 1)[-1] if path else None
        keys.append(Order(column, order.descending, order.text))
    return tuple(keys)


def statement(call: Call) -> Statement | None:
    """The statement a call writes in SQL (see `_source`), or None when it writes none."""
    source = _source(call)
    if source is None:
        return None
    text, substitutions = _text(call, source)
    try:
        read = _read(text)
    except (ValueError, OverflowError) as error:  # a literal sqlglot parses but Python cannot read
        read = f"cannot read a value: {error}"
    named = is_sql_template(call)
    if isinstance(read, str):
        # Text under another tag that only starts like SQL (`html\`select a plan\``) is not SQL.
        return Statement("unreadable", None, (), False, None, None, (), tuple(substitutions), read) if named else None
    (operation, table, pins, has_limit, limit, limit_sub, order, writes, ranges, clears, below, aggregate,
     conditions) = read
    if not named and table is None:
        return None
    if table is not None and table.startswith(_PLACEHOLDER):
        table = _substituted(substitutions, table)
    limit_expr = substitutions[limit_sub] if limit_sub is not None and limit_sub < len(substitutions) else None
    return Statement(operation, table, pins, has_limit, limit, limit_expr, order, tuple(substitutions),
                     writes=writes, ranges=ranges, clears=clears, below=below, aggregate=aggregate,
                     conditions=conditions)


def _spliced(value: Expr) -> str | None:
    """The SQL text a fragment substitution splices (`${sql("id")}` is the identifier `id`), else None."""
    call = value.call
    if call is None or call.callee.rsplit(".", 1)[-1] not in _FRAGMENTS or len(call.args) != 1:
        return None
    text = call.args[0].string_value
    return f'"{text}"' if text is not None and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text) else None


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
    """(operation, table, pins, has_limit, limit, limit substitution index, order, writes, ranges, clears,
    below, aggregate, conditions), or why it does not parse."""
    # Imported on first use: most reviews meet no raw SQL and should not pay for loading sqlglot.
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import SqlglotError

    # sqlglot logs a warning for each statement it keeps as an opaque command (T-SQL's `IF .. CREATE`,
    # `LOCK TABLE`); the statement is read as "other" here, and the reviewed repository's SQL must not
    # write to the user's terminal.
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
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
    while isinstance(tree, (exp.Subquery, exp.Paren)) and isinstance(tree.this, exp.Expression):
        tree = tree.this  # `(SELECT ..)`
    operation = next((name for kind, name in _OPERATIONS.items() if isinstance(tree, getattr(exp, kind))), "other")
    table = _first_table(_leftmost(tree))
    pins = tuple(sorted(_statement_pins(tree)))
    limit_node = tree.args.get("limit")
    has_limit, limit, limit_sub = False, None, None
    if isinstance(limit_node, (exp.Limit, exp.Fetch)):
        has_limit = True
        value = limit_node.args.get("expression") or limit_node.args.get("count")
        if value is None and isinstance(limit_node, exp.Fetch):
            limit = 1.0  # `FETCH FIRST ROW ONLY`
        elif isinstance(value, exp.Literal) and not value.is_string:
            limit = float(value.this)
        elif isinstance(value, exp.Neg) and isinstance(value.this, exp.Literal):
            limit = -float(value.this.this)
        elif isinstance(value, exp.Column) and value.name.startswith(_PLACEHOLDER):
            limit_sub = int(value.name[len(_PLACEHOLDER):])
    order = tuple(
        Order(o.this.name if isinstance(o.this, exp.Column) else None, bool(o.args.get("desc")), o.this.sql())
        for o in (tree.args.get("order").expressions if isinstance(tree.args.get("order"), exp.Order) else ())
    )
    return (operation, table, pins, has_limit, limit, limit_sub, order, _writes(tree), _ranges(tree),
            _clears(tree), _ranges(tree, smaller_only=True), _aggregate(tree), _conditions(tree))


def _clears(tree: "exp.Expression") -> bool:
    from sqlglot import exp

    if not isinstance(tree, exp.Update) or not tree.expressions:
        return False
    return all(isinstance(a, exp.EQ) and isinstance(a.expression, exp.Null) for a in tree.expressions)


def _writes(tree: "exp.Expression") -> tuple[str, ...]:
    from sqlglot import exp

    names: set[str] = set()
    assignments = list(tree.expressions) if isinstance(tree, exp.Update) else []
    conflict = tree.args.get("conflict") if isinstance(tree, exp.Insert) else None
    if isinstance(conflict, exp.OnConflict):
        assignments += list(conflict.expressions or ())
    for assignment in assignments:
        if isinstance(assignment, exp.EQ) and isinstance(assignment.this, exp.Column):
            names.add(assignment.this.name)
    if isinstance(tree, exp.Insert) and isinstance(tree.this, exp.Schema):
        names |= {c.name for c in tree.this.expressions if isinstance(c, (exp.Identifier, exp.Column))}
    return tuple(sorted(n for n in names if not n.startswith(_PLACEHOLDER)))


def _ranges(tree: "exp.Expression", smaller_only: bool = False) -> tuple[str, ...]:
    """Columns the statement compares by order; with `smaller_only`, those on the smaller side
    (`valid_until < now()`, `$1 >= expires_at`): `below`."""
    from sqlglot import exp

    names: set[str] = set()
    for comparison in tree.find_all(exp.LT, exp.GT, exp.LTE, exp.GTE):
        if smaller_only:
            sides = (comparison.left if isinstance(comparison, (exp.LT, exp.LTE)) else comparison.right,)
        else:
            sides = (comparison.left, comparison.right)
        for side in sides:
            if isinstance(side, exp.Column) and not side.name.startswith(_PLACEHOLDER):
                names.add(side.name)
    return tuple(sorted(names))


def _conditions(tree: "exp.Expression") -> int:
    from sqlglot import exp

    where = tree.args.get("where")
    if not isinstance(where, exp.Where):
        return 0
    condition = where.this
    while isinstance(condition, exp.Paren):
        condition = condition.this
    return len(list(condition.flatten())) if isinstance(condition, exp.And) else 1


def _aggregate(tree: "exp.Expression") -> bool:
    from sqlglot import exp

    if not isinstance(tree, exp.Select) or tree.args.get("group") or not tree.expressions:
        return False
    return all(isinstance(e.unalias(), exp.AggFunc) for e in tree.expressions)


def _leftmost(tree: "exp.Expression") -> "exp.Expression":
    """The first SELECT of a set operation (`a UNION b` reads `a`'s table first)."""
    from sqlglot import exp

    while isinstance(tree, (exp.Union, exp.Except, exp.Intersect)) and isinstance(tree.this, exp.Expression):
        tree = tree.this
    return tree


def _statement_pins(tree: "exp.Expression") -> set[str]:
    """The columns every row of the result is pinned on: a UNION's rows come from both sides (pinned
    on what both pin), an EXCEPT's from its left side, an INTERSECT's from both (either's pins)."""
    from sqlglot import exp

    if isinstance(tree, exp.Union):
        return _statement_pins(tree.this) & _statement_pins(tree.expression)
    if isinstance(tree, exp.Except):
        return _statement_pins(tree.this)
    if isinstance(tree, exp.Intersect):
        return _statement_pins(tree.this) | _statement_pins(tree.expression)
    while isinstance(tree, (exp.Subquery, exp.Paren)) and isinstance(tree.this, exp.Expression):
        tree = tree.this
    where = tree.args.get("where")
    return _pins(where.this) if isinstance(where, exp.Where) else set()


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
    """A parameter (a substitution, `$1`, `?`, `:p`) or a literal, cast or not: one value, not a column."""
    from sqlglot import exp

    while isinstance(node, (exp.Cast, exp.TryCast, exp.Paren)):
        node = node.this

    if isinstance(node, exp.Column):
        return node.name.startswith(_PLACEHOLDER)
    return isinstance(node, (exp.Literal, exp.Placeholder, exp.Parameter))
