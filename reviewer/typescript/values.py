"""Constant folding and Effect durations.

Only what is decidable from source is folded: literals, arithmetic, string
concatenation, a few `Math` functions and constants reached through imports.
Anything else is None, never a guess.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Callable, Union

import tree_sitter as ts

from reviewer.typescript import calls as cx
from reviewer.typescript import syntax as sx

if TYPE_CHECKING:
    from reviewer.typescript.module import Module

Value = Union[int, float, str, bool]
# Follows a dotted reference, written at a node of a module, to the
# (module, value node) binding it names: local constants, top-level ones, imports.
Lookup = Callable[["Module", str, ts.Node], "tuple[Module, ts.Node] | None"]

_MS_PER_UNIT = {
    "nano": 1e-6,
    "micro": 1e-3,
    "milli": 1.0,
    "second": 1_000.0,
    "minute": 60_000.0,
    "hour": 3_600_000.0,
    "day": 86_400_000.0,
    "week": 604_800_000.0,
}
# Effect's DurationInput string form: "<number> <unit>[s]".
_DURATION_STRING = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(nano|micro|milli|second|minute|hour|day|week)s?\s*$")
# `Duration.seconds(n)` and friends; `Duration.millis` is the unit "milli".
_DURATION_CONSTRUCTORS = {
    "nanos": "nano",
    "micros": "micro",
    "millis": "milli",
    "seconds": "second",
    "minutes": "minute",
    "hours": "hour",
    "days": "day",
    "weeks": "week",
}
# Calls whose duration is their first argument's.
_DURATION_PASSTHROUGH = frozenset(
    {"Schedule.spaced", "Schedule.fixed", "Duration.decode", "Duration.fromInput", "Schedule.windowed"}
)
_MATH = {
    "Math.floor": math.floor,
    "Math.ceil": math.ceil,
    "Math.round": lambda x: math.floor(x + 0.5),
    "Math.trunc": math.trunc,
    "Math.abs": abs,
}
_MAX_DEPTH = 24


def parse_duration_string(value: str) -> float | None:
    if value.strip() == "Infinity":
        return math.inf
    match = _DURATION_STRING.match(value)
    if match is None:
        return None
    return float(match.group(1)) * _MS_PER_UNIT[match.group(2)]


class Folder:
    """Folds expressions of one Program; `lookup` follows identifiers across files."""

    def __init__(self, lookup: Lookup) -> None:
        self._lookup = lookup

    # -- plain values ---------------------------------------------------------
    def value(self, module: "Module", node: ts.Node | None, depth: int = 0) -> Value | None:
        node = sx.strip(node)
        if node is None or depth > _MAX_DEPTH:
            return None
        kind = node.type
        if kind == "number":
            return sx.number_literal(sx.text(node))
        if kind in ("string", "template_string"):
            return self._string(module, node, depth)
        if kind == "true":
            return True
        if kind == "false":
            return False
        if kind in ("identifier", "member_expression", "subscript_expression"):
            return self._reference(module, node, depth, self.value)
        if kind == "unary_expression":
            return self._unary(module, node, depth)
        if kind == "binary_expression":
            return self._binary(module, node, depth)
        if kind == "call_expression":
            return self._call(module, node, depth)
        return None

    def _reference(self, module: "Module", node: ts.Node, depth: int, fold: Callable) -> object:
        path = sx.dotted_path(node)
        if path is None:
            return None
        found = self._lookup(module, path, node)
        if found is None:
            return None
        target_module, target = found
        if target == node:
            return None
        return fold(target_module, target, depth + 1)

    def _string(self, module: "Module", node: ts.Node, depth: int) -> str | None:
        if node.type == "string":
            return sx.string_value(node)
        parts: list[str] = []
        for child in node.children:
            if child.type == "string_fragment":
                parts.append(sx.text(child))
            elif child.type == "escape_sequence":
                parts.append(sx.string_value(child) or sx.text(child)[1:])
            elif child.type == "template_substitution":
                inner = sx.named(child)
                value = self.value(module, inner[0], depth + 1) if inner else None
                if value is None:
                    return None
                parts.append(_js_string(value))
        return "".join(parts)

    def _unary(self, module: "Module", node: ts.Node, depth: int) -> Value | None:
        operator = sx.text(sx.field(node, "operator"))
        value = self.value(module, sx.field(node, "argument"), depth + 1)
        if value is None:
            return None
        if operator == "!":
            return not value
        if isinstance(value, str) or isinstance(value, bool):
            return None
        if operator == "-":
            return -value
        if operator == "+":
            return value
        if operator == "~" and isinstance(value, int):
            return ~value
        return None

    def _binary(self, module: "Module", node: ts.Node, depth: int) -> Value | None:
        operator = sx.text(sx.field(node, "operator"))
        left = self.value(module, sx.field(node, "left"), depth + 1)
        right = self.value(module, sx.field(node, "right"), depth + 1)
        if left is None or right is None:
            return None
        if operator == "+" and (isinstance(left, str) or isinstance(right, str)):
            return _js_string(left) + _js_string(right)
        if isinstance(left, (str, bool)) or isinstance(right, (str, bool)):
            return None
        try:
            if operator == "+":
                return left + right
            if operator == "-":
                return left - right
            if operator == "*":
                return left * right
            if operator == "/":
                return left / right if right != 0 else None
            if operator == "%":
                return math.fmod(left, right) if right != 0 else None
            if operator == "**":
                return left**right
            if isinstance(left, int) and isinstance(right, int):
                if operator == "<<":
                    return left << right
                if operator == ">>":
                    return left >> right
                if operator == "|":
                    return left | right
                if operator == "&":
                    return left & right
        except (OverflowError, ValueError):
            return None
        return None

    def _call(self, module: "Module", node: ts.Node, depth: int) -> Value | None:
        callee = cx.qualified_name(module, sx.field(node, "function"))
        args = cx.arguments(node)
        if callee in _MATH and len(args) == 1:
            value = self.value(module, args[0], depth + 1)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return _MATH[callee](value)
            return None
        if callee in ("Math.max", "Math.min") and args:
            values = [self.value(module, a, depth + 1) for a in args]
            if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
                return max(values) if callee == "Math.max" else min(values)  # type: ignore[type-var]
            return None
        if callee == "Duration.toMillis" and len(args) == 1:
            return self.duration_ms(module, args[0], depth + 1)
        if callee == "Duration.toSeconds" and len(args) == 1:
            ms = self.duration_ms(module, args[0], depth + 1)
            return ms / 1000 if ms is not None else None
        return None

    # -- durations --------------------------------------------------------------
    def duration_ms(self, module: "Module", node: ts.Node | None, depth: int = 0) -> float | None:
        node = sx.strip(node)
        if node is None or depth > _MAX_DEPTH:
            return None
        kind = node.type
        if kind == "number" and sx.text(node).endswith("n"):
            nanos = sx.number_literal(sx.text(node))  # bigint DurationInput is nanoseconds
            return nanos * 1e-6 if nanos is not None else None
        if kind == "member_expression" and sx.dotted_path(node) == "Duration.infinity":
            return math.inf
        if kind in ("identifier", "member_expression", "subscript_expression"):
            found = self._reference(module, node, depth, self.duration_ms)
            return found if isinstance(found, float) else None
        if kind == "call_expression":
            callee = cx.qualified_name(module, sx.field(node, "function")) or ""
            args = cx.arguments(node)
            prefix, _, unit = callee.rpartition(".")
            if prefix == "Duration" and unit in _DURATION_CONSTRUCTORS and len(args) == 1:
                amount = self.value(module, args[0], depth + 1)
                if isinstance(amount, (int, float)) and not isinstance(amount, bool):
                    return float(amount) * _MS_PER_UNIT[_DURATION_CONSTRUCTORS[unit]]
                return None
            if callee in _DURATION_PASSTHROUGH and args:
                return self.duration_ms(module, args[0], depth + 1)
        value = self.value(module, node, depth)
        if isinstance(value, bool) or value is None:
            return None
        if isinstance(value, str):
            return parse_duration_string(value)
        return float(value)


def _js_string(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
