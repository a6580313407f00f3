"""Recovery code read from what it does, whatever it is called: the reads that hold candidates, the
reads that find work left behind, the statements that re-check one candidate, and the hand-off that
wakes it.

- A *candidate read* is a call whose value holds several rows of one query (the model's one query
  model: a drizzle builder, the relational API, a raw `sql` template), written there, behind a thunk
  (`query(() => db.select()..)`, `Effect.tryPromise(() => ..)`), or returned by a helper of the code
  base. A helper named by `candidate_reads` counts too.
- A *recovery read* finds rows whose time has passed (`valid_until < now()`, `lt(T.expiresAt, now)`): a
  function iterating one is recovery code even when no name says so.
- A *conditional write* is a compare-and-set: an update or delete whose condition says more than the
  row's id (a status, an owner, a version, a deadline), or an upsert that takes the row only when its
  time has passed. `UPDATE t SET attempts = attempts + 1 WHERE id = $1` checks nothing.
- A *hand-off* is a call of the code base given the candidate (or a part of it) that does more than
  database statements: `pool.launch(run)`, `deliver(db, message)`, `assignments.adopt(shard.id)`. That
  is what wakes it; a configured `wake_calls` name always is one.
"""

from __future__ import annotations

import re
from typing import Iterable

from reviewer.engine.api import Options
from reviewer.typescript import Call, Expr, Function, Program, Query, builder_query, exits, relational_query
from reviewer.typescript import names_in, sql_query

from reviewer.rules import _effect as fx
from reviewer.rules._vocabulary import is_time_column

# Receivers and namespaces of the language and its effect libraries: calling them hands nothing off.
_PLATFORM = frozenset({
    "console", "Math", "JSON", "Object", "Array", "Promise", "Date", "String", "Number", "Boolean", "Symbol",
    "Reflect", "Error", "Set", "Map", "Effect", "Stream", "Schedule", "Option", "Either", "Exit", "Cause",
    "Fiber", "Duration", "Schema", "Data", "Match", "Layer", "Context", "Metric", "Chunk", "HashMap", "HashSet",
    "Queue", "Ref", "Deferred", "Clock", "Random", "Micro", "pipe", "Buffer", "crypto", "process",
    "structuredClone", "setTimeout", "clearTimeout", "parseInt", "parseFloat", "encodeURIComponent", "logger",
    "log", "metrics", "tracer", "span",
})
# Methods that build a value, a collection or a text from the candidate rather than handing it on.
_VALUE_METHODS = frozenset({
    "push", "unshift", "add", "set", "get", "has", "delete", "append", "concat", "includes", "indexOf", "map",
    "filter", "reduce", "find", "some", "every", "join", "slice", "splice", "toString", "toJSON", "format",
    "parse", "stringify", "assign", "keys", "values", "entries", "from", "of", "pipe", "then", "catch",
    "finally", "resolve", "reject", "emit", "debug", "info", "warn", "error", "trace",
    # metrics and assertions: they record or check the candidate, they do not run it
    "inc", "dec", "increment", "decrement", "observe", "labels", "timing", "gauge", "histogram", "mark",
    "measure", "ok", "equal", "strictEqual", "deepEqual", "deepStrictEqual", "notEqual", "throws",
})
_WORD = re.compile(r"[A-Za-z_$][\w$]*")
# Names of questions: a call named so, in a condition, asks about the candidate rather than running it.
_PREDICATE = re.compile(r"^(is|has|can|should|knows|contains|includes|matches|exists|supports|accepts|allows)([A-Z_]|$)")
_THUNK_DEPTH = 2


def pattern_names(pattern: str) -> tuple[str, ...]:
    """The names a binding pattern binds (`row`, `{ run_id }`, `[first]`): every identifier in it, keys
    included, which at worst makes a key name count as the candidate too."""
    return tuple(dict.fromkeys(_WORD.findall(pattern)))


# ------------------------------------------------------------------ reads


def query_of(program: Program, call: Call, depth: int = _THUNK_DEPTH) -> Query | None:
    """The query whose result `call`'s value is (see the module docstring), or None."""
    found = sql_query(program, call)
    if found is not None:
        return found
    chain = call.chain
    found = builder_query(program, chain) or relational_query(program, chain[-1])
    if found is not None or depth <= 0:
        return found
    for arg in call.args:  # a thunk: `query(() => db.select()..)`, `tryPromise({ try: () => .. })`
        thunk = arg.function or (arg.prop("try").function if arg.prop("try") is not None else None)
        if thunk is not None:
            found = _returned(program, thunk, depth - 1)
            if found is not None:
                return found
    helper = program.function_of(call.callee_expr) if call.callee_expr is not None else None
    return _returned(program, helper, depth - 1) if helper is not None else None


def _returned(program: Program, function: Function, depth: int) -> Query | None:
    for end in exits(function):
        value = end.value.call if end.value is not None else None
        if value is not None:
            found = query_of(program, value, depth)
            if found is not None:
                return found
    return None


def candidate_query(program: Program, call: Call) -> Query | None:
    """The multi-row read `call` holds the rows of, or None."""
    found = query_of(program, call)
    return found if found is not None and found.operation == "select" and not found.single_row else None


def is_recovery_read(found: Query | None) -> bool:
    """Rows whose time has passed: what is left behind by a worker that died."""
    return found is not None and any(is_time_column(column) for column in found.below)


# ------------------------------------------------------------------ writes and re-reads


def conditional(found: Query, opts: Options) -> bool:
    """A compare-and-set (see the module docstring)."""
    if found.operation == "insert":
        return found.source == "sql" and bool(found.ranges)
    if found.operation not in ("update", "delete"):
        return False
    if found.ranges or found.unread:
        return True
    terms = [t for t in found.terms if t.column is not None]
    if found.source == "sql" and found.conditions > len(terms):
        return True  # `WHERE id = $1 AND owner IS NULL`: a condition beyond the pins
    if found.source == "builder" and found.where is not None and not terms:
        return True  # a condition the model reads no column of: not taken for an id-only write
    return len(terms) > 1 or any(t.column not in opts.id_columns or t.op != "eq" for t in terms)


def re_read(found: Query, opts: Options) -> bool:
    """One candidate read again by condition: a single-row select, or one pinned on its id."""
    if found.operation != "select" or not found.terms and found.where is None:
        return False
    return found.single_row or found.pins(opts.id_columns)


def is_statement(program: Program, call: Call) -> bool:
    """`call` is a query or a link of one, or runs one given it behind a thunk."""
    return query_of(program, call, depth=1) is not None or fx.matches(call.callee, ("sql",))


def only_statements(program: Program, function: Function, opts: Options, depth: int = 1) -> bool:
    """Everything `function` calls is a database statement, the platform, a log, or such a helper."""
    memo = program.memo("recovery.only-statements")
    key = (function.path, function.line, function.end_line, depth)
    if key not in memo:
        memo[key] = all(_inert(program, c, opts, depth) for c in function.all_calls)
    return memo[key]


def _inert(program: Program, call: Call, opts: Options, depth: int) -> bool:
    if is_statement(program, call) or _platform(call) or fx.matches(call.callee, opts.log_calls):
        return True
    if call.chain_position > 0 or _inside_statement(program, call):
        return True  # a later link of a chain judged at its head; `eq(..)` in a `where`
    helper = program.function_of(call.callee_expr) if call.callee_expr is not None else None
    return helper is not None and depth > 0 and only_statements(program, helper, opts, depth - 1)


def _inside_statement(program: Program, call: Call, hops: int = 4) -> bool:
    host = call.host
    while host is not None and hops > 0:
        if is_statement(program, host):
            return True
        host, hops = host.host, hops - 1
    return False


def _platform(call: Call) -> bool:
    head = fx.strip_call_marks(call.callee).split(".", 1)[0]
    return head in _PLATFORM or head in ("this", "super") and call.method in _VALUE_METHODS


# ------------------------------------------------------------------ the hand-off


def hands_off(program: Program, call: Call, items: Iterable[str], opts: Options) -> bool:
    """Does `call`, not named by `wake_calls` (the caller's test), wake the candidate bound to one of
    `items`? (see the module docstring)"""
    names = tuple(items)
    if not names or call.chain_position > 0 or not any(given(program, arg, names) for arg in call.args):
        return False
    if _platform(call) or fx.matches(call.callee, opts.log_calls) or is_statement(program, call):
        return False
    if not _runs(call, opts):
        return False
    receiver = call.receiver
    if receiver is not None and (call.method in _VALUE_METHODS or mentions(receiver, names)):
        return False
    helper = program.function_of(call.callee_expr) if call.callee_expr is not None else None
    if helper is not None:
        return not only_statements(program, helper, opts, depth=2)
    if receiver is None:
        return _bound_method(program, call, opts)
    # Not followed: a method of a value the code base holds (a service, a pool) is handed the candidate;
    # a bare function, or a method of something imported from a package (a metrics client, `assert`),
    # is not taken for a wake.
    return not _from_package(program, call.path, fx.strip_call_marks(call.callee))


def _bound_method(program: Program, call: Call, opts: Options) -> bool:
    """`const go = pool.launch.bind(pool)`, then `go(run)`: a method of a held value under another name."""
    value = program.bound_value(call.callee_expr) if call.callee_expr is not None else None
    bound = value.call if value is not None else None
    target = bound.receiver if bound is not None and bound.method == "bind" else None
    dotted = target.member_path if target is not None else None
    if target is None or not dotted or "." not in dotted or fx.last(dotted) in _VALUE_METHODS:
        return False
    method = program.function_of(target)
    if method is not None:
        return not only_statements(program, method, opts, depth=2)
    return not _from_package(program, call.path, dotted)


def _runs(call: Call, opts: Options) -> bool:
    """The call's value is run, not asked: a statement, a returned or bound value, or an effect a
    combinator runs (`Effect.fork(deliver(..))`, `zipRight(deliver(..))`); not a condition
    (`if (pool.knows(row))`) nor the argument of a log or a formatter."""
    usage, _ = call.binding
    if usage in ("discarded", "returned", "bound"):
        return True
    host = call.host
    if host is None:  # a condition or an operand: `if (pool.dispatch(row.id))` runs it, `if (pool.knows(..))` asks
        return not _PREDICATE.match(fx.last(call.callee))
    return _platform(host) and not fx.matches(host.callee, opts.log_calls) \
        and fx.strip_call_marks(host.callee).split(".", 1)[0] not in ("console", "JSON", "String", "Math")


def _from_package(program: Program, path: str, dotted: str) -> bool:
    module = program.module(path)
    root = dotted.split(".", 1)[0]
    imported = module.imports.get(root) if module is not None else None
    return imported is not None and imported.module is None and not imported.specifier.startswith((".", "/"))



def given(program: Program, arg: Expr, names: tuple[str, ...]) -> bool:
    """`arg` is the candidate, a part of it, or a `const` bound to one (`const run = candidate`)."""
    if mentions(arg, names):
        return True
    value = program.bound_value(arg) if arg.identifier is not None else None
    return value is not None and mentions(value, names)


def mentions(expr: Expr, names: tuple[str, ...]) -> bool:
    """`expr` writes one of `names` (identifiers and properties, never the text of a string)."""
    written = names_in(expr)
    return any(name in written for name in names)
