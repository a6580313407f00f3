"""Statement-level facts: the conditions code runs under and how a path ends.

The rest of the model answers questions about expressions and calls; rules
also need to know which `if`/ternary/`case` tests guard a piece of code (and
on which side of them it sits), whether a `return`/`throw`/`break`/`continue`
ends the path after a call, what a callback produces on each of its paths,
and which names and strings an expression mentions (so a word in a comment or
a string is never mistaken for code). Everything here is a small query over
the public model values; tree-sitter nodes stay inside this package.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Sequence

import tree_sitter as ts

from reviewer.typescript import syntax as sx
from reviewer.typescript.model import Call, Expr, Function
from reviewer.typescript.module import Module
from reviewer.typescript.parse import node_lines

# Parents whose named children are statements run one after another.
_STATEMENT_LISTS = frozenset({"statement_block", "program", "switch_case", "switch_default"})
# Statements after which the rest of their block never runs.
_JUMPS = frozenset({"return_statement", "throw_statement", "break_statement", "continue_statement"})
# Statements that leave the whole function (not just a loop or switch).
_LEAVES = frozenset({"return_statement", "throw_statement"})
_LOOPS = frozenset({"for_statement", "for_in_statement", "while_statement", "do_statement"})
# Statements whose body may be a single statement without a block.
_BODIES = frozenset({"if_statement", "else_clause", "labeled_statement", *_LOOPS})
# Leaf tokens that are names (identifiers of values, properties and types).
_NAMES = frozenset(
    {
        "identifier",
        "property_identifier",
        "shorthand_property_identifier",
        "shorthand_property_identifier_pattern",
        "type_identifier",
        "private_property_identifier",
    }
)
_COMPARISONS = frozenset({"===", "!==", "==", "!=", "<", "<=", ">", ">=", "instanceof", "in"})


# ------------------------------------------------------------------ conditions


@dataclass(frozen=True)
class Atom:
    """One atomic condition inside a test: `a === "x"`, `e instanceof Lost`, `Lost.is(e)`, `ok`.

    `operator` is the comparison (`===`, `instanceof`, ...) with `left`/`right`
    its operands, or "" for any other expression (`left` is then the whole
    atom: a call, a reference, a literal).
    """

    operator: str
    left: Expr
    right: Expr | None = None


# Decides an atomic Atom: True, False, or None when it cannot be known.
Decide = Callable[[Atom], "bool | None"]


def evaluate(test: Expr, decide: Decide) -> bool | None:
    """Three-valued truth of a condition: `!`, `&&`, `||` and parentheses are
    followed, every atom is handed to `decide` (None means unknown)."""
    return _evaluate(test._module, test._node, decide)


def _evaluate(module: Module, node: ts.Node | None, decide: Decide) -> bool | None:
    """`evaluate` on a node, in a loop: a condition of 20,000 `||` is one long
    left-deep tree, too deep for recursion. Both sides of `&&`/`||` are
    evaluated, left first, as atoms appear in the source."""
    results: list[bool | None] = []
    stack: list[tuple[str, ts.Node | None]] = [("eval", node)]
    while stack:
        step, item = stack.pop()
        if step == "not":
            inner = results.pop()
            results.append(None if inner is None else not inner)
            continue
        if step in ("&&", "||"):
            right_value = results.pop()
            left_value = results.pop()
            results.append(_and(left_value, right_value) if step == "&&" else _or(left_value, right_value))
            continue
        current = sx.strip(item)
        if current is None:
            results.append(None)
            continue
        if current.type == "unary_expression" and sx.text(sx.field(current, "operator")) == "!":
            stack.append(("not", None))
            stack.append(("eval", sx.field(current, "argument")))
            continue
        if current.type == "binary_expression":
            operator = sx.text(sx.field(current, "operator"))
            left, right = sx.field(current, "left"), sx.field(current, "right")
            if operator in ("&&", "||"):
                stack.append((operator, None))
                stack.append(("eval", right))
                stack.append(("eval", left))
                continue
            if operator in _COMPARISONS and left is not None and right is not None:
                results.append(decide(Atom(operator, Expr(module, left), Expr(module, right))))
                continue
        results.append(decide(Atom("", Expr(module, current))))
    return results[0]


def _and(a: bool | None, b: bool | None) -> bool | None:
    if a is False or b is False:
        return False
    return True if a is True and b is True else None


def _or(a: bool | None, b: bool | None) -> bool | None:
    if a is True or b is True:
        return True
    return False if a is False and b is False else None


@dataclass(frozen=True)
class Guard:
    """A condition a piece of code runs under.

    `holds` says on which side of `test` the code sits: True in an `if`
    consequence, a ternary's `?` side, the right of `&&`, a matching `case`;
    False in an `else`, a ternary's `:` side, the right of `||`, or after an
    early exit `if (test) return` in an enclosing block. For a `case`, `test`
    is its label and `subject` the switched value; `labels` also holds the
    labels of empty cases that fall through into it.
    """

    test: Expr
    holds: bool
    kind: str  # "if" | "ternary" | "logical" | "case" | "early-exit"
    subject: Expr | None = None
    labels: tuple[Expr, ...] = ()

    def value(self, decide: Decide) -> bool | None:
        """Truth of the guard's condition (before `holds` is applied)."""
        if self.subject is None:
            return evaluate(self.test, decide)
        result: bool | None = False
        for label in self.labels or (self.test,):
            result = _or(result, decide(Atom("===", self.subject, label)))
        return result

    def admits(self, decide: Decide) -> bool:
        """Can the guarded code run in a world where `decide` answers the atoms?"""
        value = self.value(decide)
        return value is None or value == self.holds


class GuardPath(Sequence[Guard]):
    """The guards of one exit, outermost first: a read-only sequence of Guard.

    Exits of one function share the guards of the code around them (the
    100th branch of an `if / else if` chain runs under the 99 tests before
    it, the 101st under the same 99 and one more), so each path is a link
    to the path it extends plus the guards it adds: the exits of a function
    cost its size, not size times depth. `all_admit` answers `all(g.admits(
    decide) for g in path)` once per shared prefix.
    """

    __slots__ = ("_up", "_own", "_length", "_answers")

    def __init__(self, up: "GuardPath | None" = None, own: tuple[Guard, ...] = ()) -> None:
        self._up = up
        self._own = own
        self._length = (up._length if up is not None else 0) + len(own)
        self._answers: dict[Decide, bool] | None = None

    def extend(self, guards: Iterable[Guard]) -> "GuardPath":
        own = tuple(guards)
        return GuardPath(self, own) if own else self

    def _links(self) -> list["GuardPath"]:
        links: list[GuardPath] = []
        link: GuardPath | None = self
        while link is not None:
            if link._own:
                links.append(link)
            link = link._up
        links.reverse()
        return links

    def __iter__(self) -> Iterator[Guard]:
        for link in self._links():
            yield from link._own

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        return tuple(self)[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (GuardPath, tuple, list)):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"GuardPath{tuple(self)!r}"

    def all_admit(self, decide: Decide) -> bool:
        """`all(g.admits(decide) for g in self)`, remembered on every shared prefix."""
        pending: list[GuardPath] = []
        result = True
        link: GuardPath | None = self
        while link is not None:
            answers = link._answers
            if answers is not None and decide in answers:
                result = answers[decide]
                break
            pending.append(link)
            link = link._up
        for link in reversed(pending):
            result = result and all(g.admits(decide) for g in link._own)
            if link._answers is None:
                link._answers = {}
            link._answers[decide] = result
        return result


_NO_GUARDS = GuardPath()


def guards(expr: Expr | Call, within: Function | None = None) -> tuple[Guard, ...]:
    """The conditions `expr` runs under, outermost first.

    Walks out to `within` (through nested callbacks), or to the function
    directly around `expr` when `within` is None.
    """
    return tuple(guard_path(expr, within))


def guard_path(expr: Expr | Call, within: Function | None = None) -> GuardPath:
    """`guards(expr, within)` as a GuardPath: shared with the code around it, judged once per prefix.

    Every node's path is remembered (per `within`): asked for each of a
    thousand releases down an `if / else if` chain, the walks out add up to
    the chain once, and `all_admit` judges each shared guard once; the guards
    of a block's statements are worked out for all of them in one pass.
    """
    module, node = _parts(expr)
    index = module._index
    stop = within._node if within is not None else None
    paths, places = index.__dict__.setdefault("_guard_paths", {}).setdefault(
        stop.id if stop is not None else None, ({}, {})
    )
    climbed: list[tuple[ts.Node, ts.Node]] = []  # (child, parent), innermost first
    current = node
    while current.id not in paths:
        parent = index.parent(current)
        if parent is None or parent == stop or (stop is None and sx.is_function(parent)):
            paths[current.id] = _NO_GUARDS
            break
        climbed.append((current, parent))
        current = parent
    for child, parent in reversed(climbed):
        if child.id in paths:
            continue
        siblings = [c for c in parent.named_children if c.type != "comment"]
        if not any(c.id == child.id for c in siblings):
            siblings.append(child)  # not a named child of its parent: on its own
        for sibling, path in _child_paths(module, parent, siblings, paths[parent.id], places):
            paths.setdefault(sibling.id, path)
    return paths[node.id]


def _guards_at(module: Module, parent: ts.Node, child: ts.Node) -> list[Guard]:
    """Guards `parent` puts on its child `child`, in source order."""
    kind = parent.type
    if kind in ("if_statement", "ternary_expression"):
        condition = sx.field(parent, "condition")
        test = sx.strip(condition)
        if test is None or child == condition:
            return []
        label = "if" if kind == "if_statement" else "ternary"
        if child == sx.field(parent, "consequence"):
            return [Guard(Expr(module, test), True, label)]
        if child == sx.field(parent, "alternative"):
            return [Guard(Expr(module, test), False, label)]
        return []
    if kind == "binary_expression" and child == sx.field(parent, "right"):
        operator = sx.text(sx.field(parent, "operator"))
        left = sx.field(parent, "left")
        if left is not None and operator in ("&&", "||"):
            return [Guard(Expr(module, left), operator == "&&", "logical")]
        return []
    out: list[Guard] = []
    if kind == "switch_case" and child != sx.field(parent, "value"):
        out.extend(_case_guard(module, parent))
    if kind in _STATEMENT_LISTS:
        out.extend(_early_exits(module, parent, child))
    return out


def _case_guard(module: Module, case: ts.Node, siblings: list[ts.Node] | None = None, position: int | None = None) -> list[Guard]:
    """The guard of a `case`; `siblings`/`position` (the cases of its switch and
    its index among them) spare a scan when the caller walks the switch."""
    parent_of = module._index.parent
    body = parent_of(case)
    switch = parent_of(body) if body is not None else None
    subject = sx.strip(sx.field(switch, "value")) if switch is not None else None
    label = sx.field(case, "value")
    if subject is None or label is None or body is None:
        return []
    labels = [label]
    # `case "a": case "b": ..`: an empty case falls through into the next one
    if siblings is None or position is None:
        siblings = sx.named(body)
        position = next((i for i, c in enumerate(siblings) if c == case), 0)
    for previous in reversed(siblings[:position]):
        if previous.type != "switch_case" or _case_body(previous):
            break
        value = sx.field(previous, "value")
        if value is not None:
            labels.insert(0, value)
    return [
        Guard(
            Expr(module, label),
            True,
            "case",
            subject=Expr(module, subject),
            labels=tuple(Expr(module, n) for n in labels),
        )
    ]


def _case_body(case: ts.Node) -> list[ts.Node]:
    value = sx.field(case, "value")
    return [c for c in sx.named(case) if c != value]


def _early_exits(module: Module, block: ts.Node, child: ts.Node) -> list[Guard]:
    """`if (test) return` (or a block ending in a jump) before `child` in `block`."""
    out = []
    for statement in _statements(block):
        if statement == child:
            break
        guard = _early_exit(module, statement)
        if guard is not None:
            out.append(guard)
    return out


def _always_jumps(node: ts.Node | None) -> bool:
    """Control never continues past `node`: a jump, a block holding one, or an if/else jumping on both sides.

    In a loop, not by recursion: an `if / else if` chain nests one level per branch.
    """
    if node is None:
        return False
    known: dict[int, bool] = {}
    stack: list[tuple[ts.Node, bool]] = [(node, False)]
    while stack:
        current, expanded = stack.pop()
        kind = current.type
        if kind in _JUMPS:
            known[current.id] = True
            continue
        if kind in ("statement_block", "else_clause"):
            parts = [p for p in sx.named(current)]
            combine = any
        elif kind == "if_statement":
            alternative = sx.field(current, "alternative")
            consequence = sx.field(current, "consequence")
            if alternative is None or consequence is None:
                known[current.id] = False
                continue
            parts = [consequence, alternative]
            combine = all
        else:
            known[current.id] = False
            continue
        if not expanded:
            stack.append((current, True))
            stack.extend((p, False) for p in parts)
        else:
            known[current.id] = combine(known[p.id] for p in parts)
    return known[node.id]


def _statements(block: ts.Node) -> list[ts.Node]:
    if block.type == "switch_case":
        return _case_body(block)
    return sx.named(block)


# ------------------------------------------------------------------ how paths end


def statement_of(expr: Expr | Call) -> Expr | None:
    """The statement `expr` is part of (within its function), or None."""
    module, node = _parts(expr)
    statement = _statement_node(module, node)
    return Expr(module, statement) if statement is not None else None


def _statement_node(module: Module, node: ts.Node) -> ts.Node | None:
    """The statement `node` is part of, within its function.

    The answer depends only on where a node sits, so every node passed on
    the way up remembers it: asked for each call of a deep nest in one
    statement, the walks add up to the nest's size, not size times depth.
    """
    index = module._index
    memo = index._nearest_memos.setdefault("statement", {})
    passed: list[int] = []
    found: ts.Node | None = None
    current = node
    while True:
        if current.id in memo:
            found = memo[current.id]
            break
        parent = index.parent(current)
        if parent is None:
            break
        if current.type in _LEAVES or parent.type in _STATEMENT_LISTS:
            found = current
            break
        if parent.type in _BODIES and current.type.endswith("_statement") and current.type != "statement_block":
            found = current  # `if (x) yield* f()`: a statement without a block
            break
        passed.append(current.id)
        if sx.is_function(parent):
            break  # an arrow's expression body
        current = parent
    for key in passed:
        memo[key] = found
    return found


def block_exit(call: Call) -> Expr | None:
    """The jump that ends the path through `call`'s block.

    The `return`/`throw` around the call itself (`return yield* fail(..)`), or
    the first `return`/`throw`/`break`/`continue` among the statements after
    the call's statement in the same block. None if the block runs on.
    """
    statement = _statement_node(call._module, call._node)
    if statement is None:
        return None
    if statement.type in _LEAVES:
        return Expr(call._module, statement)
    block = call._module._index.parent(statement)
    if block is None or block.type not in _STATEMENT_LISTS:
        return None
    later = False
    for sibling in _statements(block):
        if sibling == statement:
            later = True
        elif later and sibling.type in _JUMPS:
            return Expr(call._module, sibling)
    return None


def jumps_past(first: Call, later: Call) -> bool:
    """After `first`, a jump ends the path before `later` can run.

    A `return`/`throw` leaves the function; a `break`/`continue` only skips
    code inside the loop or switch it leaves, so code after that construct
    still runs.
    """
    jump = block_exit(first)
    if jump is None or jump.path != later.path:
        return False
    node = jump._node
    if node.type in _LEAVES:
        if sx.contains(node, first._node):
            return True  # `return yield* fail(..)`
        return node.end_byte <= later._node.start_byte
    target = _jump_target(jump._module, node)
    return target is not None and sx.contains(target, later._node) and node.end_byte <= later._node.start_byte


def _jump_target(module: Module, jump: ts.Node) -> ts.Node | None:
    """The loop (or, for `break`, the switch) a `break`/`continue` leaves."""
    for ancestor in module._index.ancestors(jump):
        if sx.is_function(ancestor):
            return None
        if ancestor.type in _LOOPS or (jump.type == "break_statement" and ancestor.type == "switch_statement"):
            return ancestor
    return None


@dataclass(frozen=True)
class Exit:
    """One way a function produces its result.

    kind: "return" (`value` is None for a bare `return`), "throw" (`value` is
    what is thrown), "end" (control falls off the end of a block body), or
    "expression" (an arrow's expression body). Values are read through
    parentheses, `yield*` and `await` (`return yield* Effect.fail(e)` gives
    `Effect.fail(e)`), and a ternary gives one exit per side. `guards` are the
    conditions on the way, outermost first.
    """

    kind: str
    value: Expr | None
    line: int
    guards: GuardPath  # a sequence of Guard, outermost first


def exits(function: Function) -> tuple[Exit, ...]:
    """Every way `function` ends, in source order (nested functions excluded).

    One walk down the body carries the guards of the code it is in (what
    `guards(statement, within=function)` would find walking up from each
    exit), so a function with thousands of nested branches costs its size.
    """
    module, node = function._module, function._node
    body = sx.field(node, "body")
    if body is None:
        return ()
    if body.type != "statement_block":
        return tuple(_split_value(module, "expression", body, _NO_GUARDS))
    out: list[Exit] = []
    stack: list[tuple[ts.Node, GuardPath]] = [(body, _NO_GUARDS)]
    case_places: dict[int, tuple[list[ts.Node], int]] = {}
    while stack:
        current, path = stack.pop()
        if current.type in _LEAVES:
            value = next(iter(sx.named(current)), None)
            kind = "return" if current.type == "return_statement" else "throw"
            if value is None:
                out.append(Exit(kind, None, node_lines(current)[0], path))
            else:
                out.extend(_split_value(module, kind, value, path))
            continue
        children = [c for c in current.named_children if not sx.is_function(c) and c.type != "comment"]
        stack.extend(reversed(_child_paths(module, current, children, path, case_places)))
    if not _always_jumps(body):
        early = _NO_GUARDS.extend(_early_exits(module, body, body))
        out.append(Exit("end", None, node_lines(body)[1], early))
    return tuple(out)


def _child_paths(
    module: Module,
    parent: ts.Node,
    children: list[ts.Node],
    path: GuardPath,
    case_places: dict[int, tuple[list[ts.Node], int]],
) -> list[tuple[ts.Node, GuardPath]]:
    """Each child with `path` extended by `_guards_at(module, parent, child)`.

    A statement list is read once, its early exits accumulating as they go
    by (each statement's path is the previous one's plus at most one guard),
    instead of once per statement; a switch's cases learn their place from
    the switch body (`case_places`) instead of searching for it.
    """
    kind = parent.type
    if kind == "switch_body":
        cases = sx.named(parent)
        for i, case in enumerate(cases):
            case_places[case.id] = (cases, i)
        return [(child, path) for child in children]  # a switch body puts no guard of its own
    if kind not in _STATEMENT_LISTS:
        return [(child, path.extend(_guards_at(module, parent, child))) for child in children]
    base = path
    value = None
    if kind == "switch_case":
        value = sx.field(parent, "value")
        siblings, position = case_places.get(parent.id, (None, None))
        base = path.extend(_case_guard(module, parent, siblings, position))
    early: list[Guard] = []
    prefixes = [base]
    before: dict[int, GuardPath] = {}
    for statement in _statements(parent):
        before[statement.id] = prefixes[-1]
        guard = _early_exit(module, statement)
        if guard is not None:
            early.append(guard)
            prefixes.append(prefixes[-1].extend((guard,)))
    out: list[tuple[ts.Node, GuardPath]] = []
    for child in children:
        if value is not None and child == value:
            out.append((child, path.extend(early)))  # a case's label: not under its own guard
        else:
            out.append((child, before.get(child.id, prefixes[-1])))
    return out


def _early_exit(module: Module, statement: ts.Node) -> Guard | None:
    """The guard `if (test) return` puts on the statements after it, if `statement` is one."""
    test = sx.strip(sx.field(statement, "condition"))
    if (
        statement.type == "if_statement"
        and test is not None
        and sx.field(statement, "alternative") is None
        and _always_jumps(sx.field(statement, "consequence"))
    ):
        return Guard(Expr(module, test), False, "early-exit")
    return None


def _split_value(module: Module, kind: str, value: ts.Node, found: GuardPath) -> list[Exit]:
    """One exit per ternary leaf of `value` (consequence before alternative), in a loop."""
    out: list[Exit] = []
    stack: list[tuple[ts.Node, GuardPath]] = [(value, found)]
    while stack:
        current, path = stack.pop()
        inner = _unwrapped(current)
        if inner.type == "ternary_expression":
            test = sx.strip(sx.field(inner, "condition"))
            consequence, alternative = sx.field(inner, "consequence"), sx.field(inner, "alternative")
            if test is not None and consequence is not None and alternative is not None:
                condition = Expr(module, test)
                stack.append((alternative, path.extend((Guard(condition, False, "ternary"),))))
                stack.append((consequence, path.extend((Guard(condition, True, "ternary"),))))
                continue
        out.append(Exit(kind, Expr(module, inner), node_lines(current)[0], path))
    return out


def _unwrapped(value: ts.Node) -> ts.Node:
    """`value` without parentheses, `yield*` and `await`: the effect or value it produces."""
    node = value
    while True:
        inner = sx.strip(node)
        if inner is None:
            return node
        if inner.type not in ("yield_expression", "await_expression"):
            return inner
        argument = next(iter(sx.named(inner)), None)
        if argument is None:
            return inner  # a bare `yield`
        node = argument


# ------------------------------------------------------------------ what code mentions


def names_in(expr: Expr | Call) -> frozenset[str]:
    """Every identifier, property and type name written in `expr` (not in strings or comments)."""
    _, node = _parts(expr)
    return frozenset(sx.text(leaf) for leaf in _leaves(node) if leaf.type in _NAMES)


def strings_in(expr: Expr | Call) -> frozenset[str]:
    """The values of the string literals (and substitution-free templates) in `expr`."""
    _, node = _parts(expr)
    return frozenset(value for value, _, _ in _strings(node))


def mentions_name(expr: Expr | Call, name: str) -> bool:
    """`name in names_in(expr)`, without reading all of a large expression each time.

    Rules ask this of every handler, and handlers nest (a catch inside a
    catch inside ...): above _DIRECT_BYTES of source the question goes to
    the module's token positions, built once, and costs a bisection.
    """
    module, node = _parts(expr)
    if node.end_byte - node.start_byte <= _DIRECT_BYTES:
        return any(leaf.type in _NAMES and sx.text(leaf) == name for leaf in _leaves(node))
    return _in_range(_tokens(module).names.get(name, ()), node.start_byte, node.end_byte)


def mentions_string(expr: Expr | Call, value: str) -> bool:
    """`value in strings_in(expr)`, answered like `mentions_name` for large expressions."""
    module, node = _parts(expr)
    if node.end_byte - node.start_byte <= _DIRECT_BYTES:
        return any(found == value for found, _, _ in _strings(node))
    spans = _tokens(module).strings.get(value, ())
    at = bisect.bisect_left(spans, (node.start_byte,))
    while at < len(spans) and spans[at][0] < node.end_byte:
        if spans[at][1] <= node.end_byte:
            return True
        at += 1
    return False


def throws(expr: Expr | Call) -> bool:
    """`expr` contains a `throw` statement (nested callbacks included; not inside a string or template)."""
    module, node = _parts(expr)
    if node.end_byte - node.start_byte <= _DIRECT_BYTES:
        return _throws_directly(node)
    start, end = node.start_byte, node.end_byte
    found = _tokens(module).throws
    at = bisect.bisect_left(found, (start,))
    while at < len(found) and found[at][0] < end:
        _, outer_start, outer_end = found[at]
        # the string/template the throw sits in (if any) must not be inside `expr`:
        # a walk down from `expr` would not have entered it
        if outer_start < 0 or outer_start < start or outer_end > end:
            return True
        at += 1
    return False


# Expressions up to this much source are read directly; larger ones are
# answered from the module's token positions (_Tokens).
_DIRECT_BYTES = 2048
_NOT_INTO = frozenset({"comment", "string", "regex"})


def _in_range(starts: Sequence[int], start: int, end: int) -> bool:
    at = bisect.bisect_left(starts, start)
    return at < len(starts) and starts[at] < end


def _cursor_walk(node: ts.Node, into: Callable[[ts.Node], bool]) -> Iterator[ts.Node]:
    """`node` and its descendants in document order, not below nodes `into` refuses.

    A tree cursor, not `.children`: py-tree-sitter keeps the children it
    hands out on the node asked, so walking from a node a rule keeps (a
    handler's Expr) would keep its whole subtree alive, once per handler.
    """
    cursor = node.walk()
    while True:
        current = cursor.node
        yield current
        if into(current) and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent() or cursor.node == node:
                return


def _leaves(node: ts.Node) -> Iterator[ts.Node]:
    """Leaves under `node`, outside comments, strings and regexes (template substitutions are code)."""
    for current in _cursor_walk(node, lambda n: n.type not in _NOT_INTO):
        if current.child_count == 0 and current.type not in _NOT_INTO:
            yield current


def _strings(node: ts.Node) -> Iterator[tuple[str, int, int]]:
    """(value, start, end) of each string literal and substitution-free template under `node`."""
    for current in _cursor_walk(node, lambda n: n.type not in ("comment", "string")):
        if current.type in ("string", "template_string"):
            value = sx.string_value(current)
            if value is not None:
                yield value, current.start_byte, current.end_byte


def _throws_directly(node: ts.Node) -> bool:
    into = lambda n: n.type not in ("comment", "string", "template_string")  # noqa: E731
    return any(current.type == "throw_statement" for current in _cursor_walk(node, into))


class _Tokens:
    """Where a module writes each name, string value and `throw`, in document order.

    Built in one cursor walk the first time a large expression is asked
    about, then every question is a bisection over the expression's span.
    """

    def __init__(self, root: ts.Node) -> None:
        self.names: dict[str, list[int]] = {}
        self.strings: dict[str, list[tuple[int, int]]] = {}
        # (start of the throw, span of the string/template around it or (-1, -1))
        self.throws: list[tuple[int, int, int]] = []
        names, strings, throws = self.names, self.strings, self.throws
        cursor = root.walk()
        # innermost string/template span around the cursor, per level
        outer: list[tuple[int, int]] = [(-1, -1)]
        while True:
            current = cursor.node
            kind = current.type
            if current.child_count == 0:
                if kind in _NAMES:
                    names.setdefault(sx.text(current), []).append(current.start_byte)
            elif kind in ("string", "template_string"):
                value = sx.string_value(current)
                if value is not None:
                    strings.setdefault(value, []).append((current.start_byte, current.end_byte))
            elif kind == "throw_statement":
                throws.append((current.start_byte, *outer[-1]))
            if kind != "comment" and cursor.goto_first_child():
                outer.append((current.start_byte, current.end_byte) if kind in ("string", "template_string") else outer[-1])
                continue
            while not cursor.goto_next_sibling():
                if not cursor.goto_parent():
                    return
                outer.pop()


def _tokens(module: Module) -> _Tokens:
    index = module._index
    found = index.__dict__.get("_tokens")
    if found is None:
        found = index.__dict__["_tokens"] = _Tokens(module.root)
    return found


def words_on_lines(module: Module, start: int, end: int) -> frozenset[str]:
    """Names and string fragments written on lines `start`..`end` (1-based), comments excluded.

    Works inside tree-sitter ERROR regions too, where the tokens are still
    tokens but no longer form expressions.
    """
    out: set[str] = set()
    stack = [module.root]
    while stack:
        node = stack.pop()
        first, last = node.start_point[0] + 1, node.end_point[0] + 1
        if last < start or first > end or node.type == "comment":
            continue
        if node.child_count == 0:
            if node.is_named and start <= first <= end:
                out.add(sx.text(node))
            continue
        stack.extend(node.children)
    return frozenset(out)


def error_scope(module: Module, start: int, end: int) -> tuple[int, int]:
    """Lines an ERROR region at `start`..`end` may have broken: every top-level
    statement it overlaps, and, for a region that is itself a top-level
    statement, the statements on either side of it.

    tree-sitter's recovery can move the tokens of a broken declaration anywhere
    inside it, so the words *on* a region's lines understate what it hides.
    """
    children = module.root.children
    lo, hi = start, end
    for i, node in enumerate(children):
        first, last = node.start_point[0] + 1, node.end_point[0] + 1
        if last < start or first > end:
            continue
        around = children[max(i - 1, 0) : i + 2] if node.is_error or node.is_missing else (node,)
        for n in around:
            lo, hi = min(lo, n.start_point[0] + 1), max(hi, n.end_point[0] + 1)
    return lo, hi


def _parts(expr: Expr | Call) -> tuple[Module, ts.Node]:
    return expr._module, expr._node
