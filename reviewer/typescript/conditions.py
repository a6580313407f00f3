"""Conditions as three-valued logic: the atoms of a test and its truth.

A test (`if`, ternary, `&&`/`||` operand, `case` label) is read through `!`,
`&&`, `||` and parentheses down to its atoms (`a === "x"`, `e instanceof
Lost`, `Lost.is(e)`, `ok`); a rule decides each atom (True, False or None for
unknown) and `evaluate` combines the answers. Guards (statements.py) use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import tree_sitter as ts

from reviewer.typescript import syntax as sx
from reviewer.typescript.expressions import Expr
from reviewer.typescript.module import Module

_COMPARISONS = frozenset({"===", "!==", "==", "!=", "<", "<=", ">", ">=", "instanceof", "in"})


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
