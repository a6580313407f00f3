"""Guards: the conditions a piece of code runs under, and on which side of them.

Rules need to know which `if`/ternary/`&&`/`||`/`case` tests guard a call or
an expression, and which early exits (`if (test) return`) stand before it.
This module reads the statement structure for that; endings.py reuses the same
walk to attach guards to each way a function ends. Tree-sitter nodes stay
inside this package.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence

import tree_sitter as ts

from reviewer.typescript import syntax as sx
from reviewer.typescript.conditions import Atom, Decide, _or, evaluate
from reviewer.typescript.expressions import Call, Expr, Function, _parts
from reviewer.typescript.module import Module

# Parents whose named children are statements run one after another.
_STATEMENT_LISTS = frozenset({"statement_block", "program", "switch_case", "switch_default"})
# Statements after which the rest of their block never runs.
_JUMPS = frozenset({"return_statement", "throw_statement", "break_statement", "continue_statement"})
# Statements that leave the whole function (not just a loop or switch).
_LEAVES = frozenset({"return_statement", "throw_statement"})
_LOOPS = frozenset({"for_statement", "for_in_statement", "while_statement", "do_statement"})
# Statements whose body may be a single statement without a block.
_BODIES = frozenset({"if_statement", "else_clause", "labeled_statement", *_LOOPS})


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

    __slots__ = ("_up", "_own", "_length", "_answers", "_kinds")

    def __init__(self, up: "GuardPath | None" = None, own: tuple[Guard, ...] = ()) -> None:
        self._up = up
        self._own = own
        self._length = (up._length if up is not None else 0) + len(own)
        self._answers: dict[Decide, bool] | None = None
        self._kinds: frozenset[str] | None = None

    def extend(self, guards: Iterable[Guard]) -> "GuardPath":
        """This path followed by `guards` (the path itself when there are none)."""
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

    def kinds(self) -> frozenset[str]:
        """`{g.kind for g in self}`, remembered on every shared prefix: asking it of each exit of an
        n-deep ternary costs n, where iterating each exit's guards costs n each."""
        pending: list[GuardPath] = []
        result: frozenset[str] = frozenset()
        link: GuardPath | None = self
        while link is not None:
            if link._kinds is not None:
                result = link._kinds
                break
            pending.append(link)
            link = link._up
        for link in reversed(pending):
            own = frozenset(g.kind for g in link._own)
            result = result if own <= result else result | own
            link._kinds = result
        return result

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


def runs_maybe(expr: Expr | Call, within: Function) -> bool:
    """`expr` sits, inside `within`, in a loop's body or head (it may run zero times) or in a `try`
    block (a throw before it skips it, and the `catch` may carry on without it)."""
    module, node = _parts(expr)
    index = module.index
    stop = within._node
    child = node
    for parent in index.ancestors(node):
        if parent == stop or sx.is_function(parent):
            return False
        if parent.type in _LOOPS:
            return True
        if parent.type == "try_statement" and sx.field(parent, "body") is not None and sx.field(parent, "body").id == child.id:
            return True
        child = parent
    return False


def guard_path(expr: Expr | Call, within: Function | None = None) -> GuardPath:
    """`guards(expr, within)` as a GuardPath: shared with the code around it, judged once per prefix.

    Every node's path is remembered (per `within`): asked for each of a
    thousand releases down an `if / else if` chain, the walks out add up to
    the chain once, and `all_admit` judges each shared guard once; the guards
    of a block's statements are worked out for all of them in one pass.
    """
    module, node = _parts(expr)
    index = module.index
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
    parent_of = module.index.parent
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
