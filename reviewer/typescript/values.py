"""Constant folding, Effect durations and the period of Effect schedules.

Only what is decidable from source is folded: literals, arithmetic, string
concatenation, a few `Math` functions and constants reached through imports.
Anything else is None, never a guess.

A schedule folds to its *pace*: the longest delay it can put between two
recurrences (an upper bound, what a heartbeat must stay under) and whether it
may stop. The semantics follow Effect's own implementation
(Effect-TS/effect `packages/effect/src/internal/schedule.ts`, Effect 3; the
Effect 4 `Schedule.min`/`Schedule.max` from Effect-TS/effect-smol
`packages/effect/src/Schedule.ts`) and the Schedule Combinators guide on
effect.website:

- `spaced(d)`, `fixed(d)`, `windowed(d)`: at most `d` (`fixed`/`windowed`
  only ever shorten the wait to catch up); never stop. `fromDelay(d)` and
  `fromDelays(d, ..)` wait at most their largest delay, then stop.
- `forever`: delay 0, never stops; `recurs(n)`, `once`, `stop`: delay 0, stop.
- `exponential(base[, factor])`, `fibonacci(one)`, `linear(base)`: delays grow
  without bound (`math.inf`) unless the base is 0 or the factor at most 1
  (then the base is the longest delay); a base that does not fold is None.
- `union(a, b)` (alias `either`; Effect 4 `min([..])`): recurs while either
  does, waiting the *shorter* delay; once one side stops the other's delay
  applies alone, so a side that may stop does not bound the union.
- `intersect(a, b)`, `zipLeft`, `zipRight`, `zipWith`, `compose` (Effect 4
  `max([..])`): recur while both do, waiting the *longer* delay.
- `andThen(a, b)`: `a`'s delays, then `b`'s once `a` stops.
- `jittered`: Effect scales each delay by a random factor in [0.8, 1.2];
  the upper bound 1.2x is taken (a late heartbeat is the risk).
  `jitteredWith(s, {min, max})` the same with its own bounds (0.8/1.2 when
  absent); bounds that do not fold are None.
- `upTo`, `whileInput`, `whileOutput`, `untilInput`, `untilOutput`, `check`
  (and their `Effect` forms), Effect 4 `while`: keep the delay, may stop.
  `map`, `as`, `asVoid`, `tapInput`, `tapOutput`, `passthrough`, `delays`,
  `repetitions` and the like keep the delay; `repeatForever` never stops.
- `addDelay`, `modifyDelay`, `delayed`, `resetWhen` and any other
  combinator compute delays in functions: None.

Every combinator has its data-first form (`Schedule.union(a, b)`) and its
data-last form in `a.pipe(Schedule.union(b))` or `pipe(a, Schedule.union(b))`.
"""

from __future__ import annotations

import math
from typing import Callable, Union

import tree_sitter as ts

from reviewer.typescript import calls as cx
from reviewer.typescript import schedules as sched
from reviewer.typescript import syntax as sx
from reviewer.typescript.source import Source

Value = Union[int, float, str, bool]
# Follows a dotted reference, written at a node of a module, to the
# (module, value node) binding it names: local constants, top-level ones, imports.
Lookup = Callable[[Source, str, ts.Node], "tuple[Source, ts.Node] | None"]

_MATH = {
    "Math.floor": math.floor,
    "Math.ceil": math.ceil,
    "Math.round": lambda x: math.floor(x + 0.5),
    "Math.trunc": math.trunc,
    "Math.abs": abs,
}
_MAX_DEPTH = 24
# The language's own numeric constants.
_GLOBALS: dict[str, Value] = {
    "Infinity": math.inf,
    "Number.POSITIVE_INFINITY": math.inf,
    "Number.NEGATIVE_INFINITY": -math.inf,
    "Number.MAX_SAFE_INTEGER": float(2**53 - 1),
    "Number.MIN_SAFE_INTEGER": -float(2**53 - 1),
    "Number.MAX_VALUE": 1.7976931348623157e308,
}


class Folder:
    """Folds expressions of one Program; `lookup` follows identifiers across files.

    Every fold is bounded by _MAX_DEPTH steps (a step is a reference followed or an
    operand entered), which also ends cycles (`const a = Schedule.union(a, b)`).
    """

    def __init__(self, lookup: Lookup) -> None:
        self._lookup = lookup
        self._paces: dict[tuple[str, int, int, str, int], sched.Pace | None] = {}
        self._trace: list[tuple[Source, ts.Node]] | None = None  # see `traced`

    # -- plain values ---------------------------------------------------------
    def value(self, module: Source, node: ts.Node | None, depth: int = 0) -> Value | None:
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
            known = _GLOBALS.get(sx.dotted_path(node) or "")
            return known if known is not None else self._reference(module, node, depth, self.value)
        if kind == "unary_expression":
            return self._unary(module, node, depth)
        if kind == "binary_expression":
            return self._binary(module, node, depth)
        if kind == "call_expression":
            return self._call(module, node, depth)
        return None

    def _reference(self, module: Source, node: ts.Node, depth: int, fold: Callable) -> object:
        path = sx.dotted_path(node)
        if path is None:
            return None
        found = self._lookup(module, path, node)
        if found is None:
            return None
        target_module, target = found
        if target == node:
            return None
        if self._trace is not None:
            self._trace.append((target_module, target))
        return fold(target_module, target, depth + 1)

    def traced(self, module: Source, node: ts.Node) -> tuple[Value | None, list[tuple[Source, ts.Node]]]:
        """`value`, and every binding the fold read on the way (`const B = A`, `A`'s initializer, ..),
        in the order read: what a change to any of them changes."""
        self._trace = []
        try:
            return self.value(module, node), self._trace
        finally:
            self._trace = None

    def _string(self, module: Source, node: ts.Node, depth: int) -> str | None:
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

    def _unary(self, module: Source, node: ts.Node, depth: int) -> Value | None:
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

    def _binary(self, module: Source, node: ts.Node, depth: int) -> Value | None:
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

    def _call(self, module: Source, node: ts.Node, depth: int) -> Value | None:
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
    def duration_ms(self, module: Source, node: ts.Node | None, depth: int = 0) -> float | None:
        """The milliseconds a DurationInput stands for; for a schedule, the longest delay between its recurrences."""
        node = sx.strip(node)
        if node is None or depth > _MAX_DEPTH:
            return None
        kind = node.type
        if kind == "number" and sx.text(node).endswith("n"):
            nanos = sx.number_literal(sx.text(node))  # bigint DurationInput is nanoseconds
            return nanos * 1e-6 if nanos is not None else None
        if kind == "member_expression":
            if sx.dotted_path(node) == "Duration.infinity":
                return math.inf
            named = sched.SCHEDULE_VALUES.get(cx.qualified_name(module, node) or "")
            if named is not None:
                return named.delay
        if kind in ("identifier", "member_expression", "subscript_expression"):
            found = self._reference(module, node, depth, self.duration_ms)
            return found if isinstance(found, float) else None
        if kind == "call_expression":
            callee = cx.qualified_name(module, sx.field(node, "function")) or ""
            args = cx.arguments(node)
            prefix, _, unit = callee.rpartition(".")
            if prefix == "Duration" and unit in sched.DURATION_CONSTRUCTORS and len(args) == 1:
                amount = self.value(module, args[0], depth + 1)
                if isinstance(amount, (int, float)) and not isinstance(amount, bool):
                    return float(amount) * sched.MS_PER_UNIT[sched.DURATION_CONSTRUCTORS[unit]]
                return None
            if callee in sched.DURATION_PASSTHROUGH and args:
                return self.duration_ms(module, args[0], depth + 1)
            pace = self.pace(module, node, depth)
            if pace is not None:
                return pace.delay
        value = self.value(module, node, depth)
        if isinstance(value, bool) or value is None:
            return None
        if isinstance(value, str):
            return sched.parse_duration_string(value)
        return float(value)

    # -- schedules --------------------------------------------------------------
    def pace(self, module: Source, node: ts.Node | None, depth: int = 0) -> sched.Pace | None:
        """How the schedule `node` denotes recurs (see the module docstring), or None when undecidable."""
        node = sx.strip(node)
        if node is None or depth > _MAX_DEPTH:
            return None
        # Keyed by depth too, so an answer cut short by the bound is never reused higher up;
        # a schedule built from the same binding twice per level stays linear, not exponential.
        key = (module.path, node.start_byte, node.end_byte, node.type, depth)
        if key not in self._paces:
            self._paces[key] = self._pace(module, node, depth)
        return self._paces[key]

    def _pace(self, module: Source, node: ts.Node, depth: int) -> sched.Pace | None:
        kind = node.type
        if kind in ("identifier", "member_expression", "subscript_expression"):
            named = sched.SCHEDULE_VALUES.get(cx.qualified_name(module, node) or "")
            if named is not None:
                return named
            found = self._reference(module, node, depth, self.pace)
            return found if isinstance(found, sched.Pace) else None
        if kind != "call_expression":
            return None
        args = cx.arguments(node)
        stages = self._pipeline(module, node, args)
        if stages is not None:
            if not stages:
                return None
            pace = self.pace(module, stages[0], depth + 1)
            for stage in stages[1:]:
                if pace is None:
                    return None
                pace = self._stage(module, stage, pace, depth + 1)
            return pace
        callee = cx.qualified_name(module, sx.field(node, "function")) or ""
        if callee in sched.CONSTANT_DELAY and len(args) == 1:
            delay = self._delay(module, args[0], depth + 1)
            return sched.Pace(delay, sched.CONSTANT_DELAY[callee]) if delay is not None else None
        if callee == "Schedule.fromDelays" and args:
            delays = [d for d in (self._delay(module, a, depth + 1) for a in args) if d is not None]
            return sched.Pace(max(delays), True) if len(delays) == len(args) else None
        if callee in sched.GROWING and args:
            return self._growing(module, callee, args, depth + 1)
        if callee == "Schedule.recurs" and len(args) == 1:
            return sched.Pace(0.0, True)  # the count does not change the (zero) delay
        if callee in ("Schedule.min", "Schedule.max") and len(args) == 1:
            return self._many(module, callee, args[0], depth + 1)
        combinator = sched.COMBINATORS.get(callee)
        if combinator is None or len(args) != combinator[1]:
            return None
        base = self.pace(module, args[0], depth + 1)
        return self._apply(module, combinator[0], base, args[1:], depth + 1) if base is not None else None

    def _pipeline(self, module: Source, call: ts.Node, args: list[ts.Node]) -> list[ts.Node] | None:
        """`[value, stage, ..]` of `value.pipe(stage, ..)` or `pipe(value, stage, ..)`; None for other calls."""
        callee = sx.strip(sx.field(call, "function"))
        if callee is None:
            return None
        if callee.type == "identifier":
            # Only Effect's `pipe`: a function of the project named `pipe` may do anything.
            imported = module.imports.get(sx.text(callee))
            if imported is None or imported.imported != "pipe" or imported.specifier.split("/", 1)[0] != "effect":
                return None
            return args
        if callee.type != "member_expression" or sx.text(sx.field(callee, "property") or callee) != "pipe":
            return None
        if cx.qualified_name(module, callee) == "Function.pipe":
            return args  # `Function.pipe(value, ..)`, not a `.pipe` method
        receiver = sx.field(callee, "object")
        return [receiver, *args] if receiver is not None else []

    def _stage(self, module: Source, stage: ts.Node, pace: sched.Pace, depth: int) -> sched.Pace | None:
        """One data-last operator of a pipe applied to the pace so far."""
        stage_node = sx.strip(stage)
        if stage_node is None:
            return None
        if stage_node.type == "call_expression":
            name = cx.qualified_name(module, sx.field(stage_node, "function")) or ""
            rest = cx.arguments(stage_node)
        else:
            name, rest = cx.qualified_name(module, stage_node) or "", []
        combinator = sched.COMBINATORS.get(name)
        if combinator is None or len(rest) != combinator[1] - 1:
            return None  # an arrow function, an unknown operator or a data-first call used as a stage
        return self._apply(module, combinator[0], pace, rest, depth)

    def _apply(self, module: Source, kind: int, base: sched.Pace, rest: list[ts.Node], depth: int) -> sched.Pace | None:
        """A combinator of `kind` applied to `base`; `rest` are its other arguments (data-first order)."""
        if kind == sched.KEEP:
            return base
        if kind == sched.MAY_STOP:
            return sched.Pace(base.delay, True)
        if kind == sched.NEVER_STOPS:
            return sched.Pace(base.delay, False)
        if kind == sched.JITTER:
            return sched.Pace(base.delay * sched.JITTER_MAX, base.stops)
        if kind == sched.JITTER_WITH:
            factor = self._jitter_bound(module, rest[0], depth)
            return sched.Pace(base.delay * factor, base.stops) if factor is not None else None
        other = self.pace(module, rest[0], depth)
        if other is None:
            return None
        if kind == sched.UNION:
            return _union(base, other)
        if kind == sched.INTERSECT:
            return _intersect(base, other)
        # andThen: `base` runs first; `other` only matters once it stops.
        if not base.stops:
            return base
        return sched.Pace(max(base.delay, other.delay), other.stops)

    def _jitter_bound(self, module: Source, options: ts.Node, depth: int) -> float | None:
        """The largest factor `jitteredWith(options)` scales a delay by (Effect's 0.8/1.2 for a bound not
        written); None when the options are not an object literal or a bound written does not fold."""
        node = sx.strip(options)
        while node is not None and node.type == "identifier" and depth <= _MAX_DEPTH:
            found = self._lookup(module, sx.text(node), node)
            if found is None or found[1] == node:
                return None
            module, node, depth = found[0], sx.strip(found[1]), depth + 1
        if node is None or node.type != "object":
            return None
        bounds = {"min": sched.JITTER_MIN, "max": sched.JITTER_MAX}
        for member in sx.named(node):
            if member.type != "pair":
                return None  # a spread or shorthand could set either bound
            key_node = sx.field(member, "key")
            key = sx.string_value(key_node) if key_node is not None and key_node.type == "string" else None
            key = key if key is not None else sx.text(key_node or member)
            value = self.value(module, sx.field(member, "value"), depth + 1)
            if key not in bounds or not isinstance(value, (int, float)) or isinstance(value, bool):
                return None
            bounds[key] = float(value)
        factor = max(bounds["min"], bounds["max"])  # Effect interpolates between them in either order
        return factor if factor >= 0 else None

    def _delay(self, module: Source, node: ts.Node, depth: int) -> float | None:
        delay = self.duration_ms(module, node, depth)
        return delay if delay is not None and delay >= 0 else None

    def _growing(self, module: Source, callee: str, args: list[ts.Node], depth: int) -> sched.Pace | None:
        """exponential/fibonacci/linear: unbounded delays unless they never grow."""
        base = self._delay(module, args[0], depth)
        if base is None:
            return None
        if base == 0:
            return sched.Pace(0.0, False)
        if callee != "Schedule.exponential" or len(args) == 1:
            return sched.Pace(math.inf, False)
        factor = self.value(module, args[1], depth)
        if not isinstance(factor, (int, float)) or isinstance(factor, bool) or factor < 0:
            return None
        # base * factor ** n: the first delay is the longest unless the factor grows it.
        return sched.Pace(math.inf if factor > 1 else base, False)

    def _many(self, module: Source, callee: str, array: ts.Node, depth: int) -> sched.Pace | None:
        """Effect 4 `Schedule.min([..])` (a union) and `Schedule.max([..])` (an intersection)."""
        node = sx.strip(array)
        elements = sx.named(node) if node is not None and node.type == "array" else []
        if not elements or any(e.type == "spread_element" for e in elements):
            return None
        combine = _union if callee == "Schedule.min" else _intersect
        result = self.pace(module, elements[0], depth)
        for element in elements[1:]:
            pace = self.pace(module, element, depth) if result is not None else None
            if pace is None:
                return None
            result = combine(result, pace)
        return result


def _union(left: sched.Pace, right: sched.Pace) -> sched.Pace:
    """Recurs while either does at the shorter delay; a side that stops leaves the other alone."""
    if left.stops and right.stops:
        return sched.Pace(max(left.delay, right.delay), True)
    if left.stops:
        return right
    if right.stops:
        return left
    return sched.Pace(min(left.delay, right.delay), False)


def _intersect(left: sched.Pace, right: sched.Pace) -> sched.Pace:
    """Recurs while both do, at the longer delay."""
    return sched.Pace(max(left.delay, right.delay), left.stops or right.stops)


def _js_string(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
