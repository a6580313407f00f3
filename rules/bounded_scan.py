"""bounded-scan: recovery and wake scans stay bounded and fair (DESIGN.md family 4).

A *scan* is a drizzle select chain (`db.select(..).from(T)...`) over a
configured table that reads across entities. Every scan in a scan path must
carry `.limit(N)` with N at most the bound, must order by the durable attempts
column (or a cursor) so failed/no-op rows sink behind fresh work, and the
function that processes it must bump that column on its failure path. A
compare-and-swap wake (`update(T).set({ wake_pending: false })`) must exclude
settled rows in its `where`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from reviewer.change.changeset import is_typescript
from reviewer.engine.globs import matches
from reviewer.report.model import Finding, Location, Severity
from reviewer.engine.api import CheckSpec, Family, Kind, Option, Options, Outcome, parse_error_check
from reviewer.typescript import error_scope, words_on_lines

if TYPE_CHECKING:
    from reviewer.change.changeset import ChangedFile
    from reviewer.engine.context import ReviewContext
    from reviewer.typescript import Call, Expr, Function, Module, Program

FAMILY_ID = "bounded-scan"

OPTIONS: tuple[Option, ...] = (
    Option(
        'tables',
        ["SessionExecutionTable", "SessionInputTable"],
        Kind.NAMES,
        'Tables whose rows belong to many entities and are read by recovery/wake scans.',
    ),
    Option(
        'bound',
        100,
        Kind.INTEGER,
        'Largest page a scan may read at once.',
    ),
    Option(
        'attempts_columns',
        ["wake_attempts", "resume_attempts"],
        Kind.NAMES,
        'Durable columns counting failed/no-op wakes; a fair scan orders by one of them first.',
    ),
    Option(
        'cursor_columns',
        [],
        Kind.NAMES,
        'Columns a keyset-paginated scan may order by first instead (a cursor).',
    ),
    Option(
        'entity_keys',
        ["session_id", "id"],
        Kind.NAMES,
        'Equality on one of these pins a query to a single entity: not a scan.',
    ),
    Option(
        'settled_guards',
        ["promoted_seq", "wake_pending", "recovery_error"],
        Kind.NAMES,
        "A CAS wake's `where` must mention one of these to exclude settled rows.",
    ),
    Option(
        'wake_flags',
        ["wake_pending"],
        Kind.NAMES,
        '`update(T).set({ <column>: false })` on one of these is a CAS wake.',
    ),
    Option(
        'scan_paths',
        ["packages/core/src/session/**"],
        Kind.GLOBS,
        'Files whose queries are recovery/wake code (globs, `**` crosses directories).',
    ),
    Option(
        'select_methods',
        ["select", "selectDistinct"],
        Kind.NAMES,
        'Method names that open a drizzle select chain.',
    ),
    Option(
        'single_row_terminals',
        ["get"],
        Kind.NAMES,
        'Chain terminals that read one row (never a scan).',
    ),
    Option(
        'max_helper_depth',
        4,
        Kind.INTEGER,
        'How far to follow helper calls when looking for the attempts increment.',
    ),
)

_BAD_UNBOUNDED = """\
const rows = yield* db
  .select()
  .from(SessionInputTable)
  .where(eq(SessionInputTable.wake_pending, true))
  .all()   // every pending input of every Session, in one read"""

_GOOD_UNBOUNDED = """\
const rows = yield* db
  .select()
  .from(SessionInputTable)
  .where(eq(SessionInputTable.wake_pending, true))
  .orderBy(asc(SessionInputTable.wake_attempts))
  .limit(BATCH_SIZE)   // BATCH_SIZE = 100
  .all()"""

CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec(
        id=f"{FAMILY_ID}/unbounded",
        severity=Severity.MUST_FIX,
        title="Recovery/wake scan without .limit",
        summary="A select over a scanned table in a scan path reads every row: add .limit(N) with N <= bound.",
        why=(
            "Startup recovery and wake loops run on every boot and every tick. A scan without a limit reads "
            "the whole backlog at once: after an outage it loads thousands of rows, holds the SQLite writer, "
            "and wakes every Session together. Queries pinned to one entity (eq on session_id/id) or reading "
            "one row (.get()) are not scans."
        ),
        bad=_BAD_UNBOUNDED,
        good=_GOOD_UNBOUNDED,
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/bound-too-large",
        severity=Severity.MUST_FIX,
        title="Scan bound above the configured maximum",
        summary="A scan's .limit(N) resolves (constants and arithmetic folded) to more than the bound.",
        why="The bound caps how much one recovery pass can load and wake at once; a larger page defeats it.",
        bad="const BATCH_SIZE = 500\n...\n  .orderBy(asc(SessionExecutionTable.wake_attempts))\n  .limit(BATCH_SIZE)",
        good="const BATCH_SIZE = 100\n...\n  .orderBy(asc(SessionExecutionTable.wake_attempts))\n  .limit(BATCH_SIZE)",
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/unresolved-bound",
        severity=Severity.CONSIDER,
        title="Scan bound could not be resolved",
        summary="A scan's .limit(...) argument is not a constant the reviewer can fold; check it by hand.",
        why="The bound is only proven when the limit folds to a number; a runtime value may exceed it.",
        bad="export const scan = (db: Db, size: number) =>\n  db.select().from(SessionExecutionTable).orderBy(asc(SessionExecutionTable.wake_attempts)).limit(size).all()",
        good="const BATCH_SIZE = 100\n...\n  .limit(BATCH_SIZE)",
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/starvation-order",
        severity=Severity.MUST_FIX,
        title="Bounded scan not ordered by attempts",
        summary="A bounded scan must order first by the attempts column (ascending) or a cursor, else failed rows starve later ones.",
        why=(
            "A bounded scan only sees its first page. If failed or no-op rows stay on that page (ordered by "
            "creation time, or not ordered at all), every pass retries them and Sessions beyond the first "
            "page are never woken. Ordering by the durable attempts column ascending moves rows that failed "
            "behind fresh work; a cursor walks past them."
        ),
        bad="  .orderBy(asc(SessionExecutionTable.time_created))\n  .limit(BATCH_SIZE)",
        good="  .orderBy(asc(SessionExecutionTable.wake_attempts), asc(SessionExecutionTable.time_created))\n  .limit(BATCH_SIZE)",
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/unresolved-order",
        severity=Severity.CONSIDER,
        title="Scan order could not be read",
        summary="The first .orderBy key of a bounded scan is not a column reference; check fairness by hand.",
        why="Fairness is only proven when the first sort key is the attempts column or a cursor.",
        bad="  .orderBy(sql`random()`)\n  .limit(BATCH_SIZE)",
        good="  .orderBy(asc(SessionInputTable.wake_attempts))\n  .limit(BATCH_SIZE)",
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/attempts-not-incremented",
        severity=Severity.SHOULD_FIX,
        title="Scan ordered by attempts never increments them",
        summary="The function processing an attempts-ordered scan updates the rows but never bumps the attempts column.",
        why=(
            "Ordering by wake_attempts is only fair if a failed or no-op wake increments it; otherwise the "
            "same first-page rows keep sorting first and starve the rest, across restarts."
        ),
        bad=(
            "if (!(yield* execution.wake(row.sessionID)))\n"
            "  yield* db.update(SessionInputTable).set({ wake_pending: true }).where(eq(SessionInputTable.id, row.id)).run()"
        ),
        good=(
            "if (!(yield* execution.wake(row.sessionID)))\n"
            "  yield* db.update(SessionInputTable)\n"
            "    .set({ wake_pending: true, wake_attempts: sql`${SessionInputTable.wake_attempts} + 1` })\n"
            "    .where(eq(SessionInputTable.id, row.id)).run()"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/cas-includes-settled",
        severity=Severity.MUST_FIX,
        title="Compare-and-swap wake can wake a settled row",
        summary="An update that takes a wake (wake_pending: false) must exclude settled rows in its where.",
        why=(
            "The scan and the wake are separate statements: between them the input can be promoted (settled). "
            "A CAS whose where only names the row id still succeeds on a settled row and wakes a Session "
            "for input that was already consumed."
        ),
        bad="db.update(SessionInputTable).set({ wake_pending: false }).where(eq(SessionInputTable.id, id))",
        good=(
            "db.update(SessionInputTable).set({ wake_pending: false })\n"
            "  .where(and(eq(SessionInputTable.id, id), eq(SessionInputTable.wake_pending, true), "
            "isNull(SessionInputTable.promoted_seq)))"
        ),
    ),
    parse_error_check(
        FAMILY_ID,
        title="Unparsed code near scans",
        summary="The TypeScript parser left an ERROR region in untouched code of a scanned file; scans there were not checked.",
        why="Rules run on the partial tree; code inside an ERROR region is invisible to them.",
    ),
)


# ---------------------------------------------------------------- options


def in_scan_paths(path: str, opts: Options) -> bool:
    return matches(path, opts.scan_paths)


# ---------------------------------------------------------------- names


def _bare(name: str) -> str:
    while name.endswith("()"):
        name = name[:-2]
    return name.rsplit(".", 1)[-1]


def _callee_name(call: "Call") -> str:
    """Last segment of a call's callee (`and`, `eq`, `asc`), however it was imported."""
    return _bare(call.callee or call.callee_text or "")


def resolve_table(module: "Module | None", dotted: str | None, opts: Options) -> str | None:
    """The configured table a reference denotes: `T`, `Alias`, `Ns.T` (import-resolved)."""
    if not dotted:
        return None
    head, *rest = dotted.split(".")
    imported = module.imports.get(head) if module is not None else None
    if imported is not None:
        if imported.imported == "*":
            name = rest[0] if len(rest) == 1 else None
        elif imported.imported == "default":
            name = None
        else:
            name = imported.imported if not rest else None
    else:
        name = head if not rest else None
    return name if name in opts.tables else None


def resolve_column(module: "Module | None", expr: "Expr", opts: Options) -> tuple[str, str] | None:
    """(table, column) of a `T.column` reference over a configured table."""
    dotted = expr.member_path
    if not dotted or "." not in dotted:
        return None
    prefix, column = dotted.rsplit(".", 1)
    table = resolve_table(module, prefix, opts)
    return (table, column) if table else None


# ---------------------------------------------------------------- chains


@dataclass(frozen=True)
class Query:
    """One drizzle chain over a configured table, from its opening call to its end."""

    path: str
    kind: str  # "select" | "update"
    table: str
    table_ref: str  # the reference as written, e.g. `Inputs`, `Sql.SessionInputTable`
    steps: tuple["Call", ...]  # Calls from the opening call on
    line: int
    end_line: int
    enclosing: "Function | None"

    def step(self, method: str) -> "Call | None":
        return next((c for c in self.steps if c.method == method), None)

    @property
    def methods(self) -> tuple[str, ...]:
        return tuple(c.method for c in self.steps)

    @property
    def anchor(self) -> str:
        return self.steps[-1].normalized if self.steps else ""


_BUILDER_KINDS = frozenset(
    {"identifier", "member_expression", "this", "parenthesized_expression", "non_null_expression"}
)


def _query_of(module: "Module | None", call: "Call", opts: Options) -> Query | None:
    receiver = call.receiver
    # A query builder is a value (`db`, `tx`, `this.db`, `deps.db`); `new Picker().select()`
    # or `items.select()` on a call result are other APIs that share the method name.
    # Decided first: it is cheap, and most links of a long chain of `.select()` are not openers.
    if receiver is None or receiver.kind not in _BUILDER_KINDS:
        return None
    steps = call.chain_from_here  # the chain from this call on
    if call.method in opts.select_methods:
        kind = "select"
        if len(steps) < 2 or steps[1].method != "from" or not steps[1].args:
            return None
        target = steps[1].args[0]
    elif call.method == "update":
        kind = "update"
        if not call.args:
            return None
        target = call.args[0]
    else:
        return None
    ref = target.member_path
    table = resolve_table(module, ref, opts)
    if table is None or ref is None:
        return None
    line = min(c.line for c in steps)
    end = max(c.end_line for c in steps)
    return Query(module.path, kind, table, ref, steps, line, end, call.enclosing)


def queries(module: "Module | None", opts: Options) -> list[Query]:
    found: list[Query] = []
    for call in module.calls():
        if call.method not in opts.select_methods and call.method != "update":
            continue
        query = _query_of(module, call, opts)
        if query is not None:
            found.append(query)
    return sorted(found, key=lambda q: (q.line, q.end_line, q.kind))


# ---------------------------------------------------------------- where clauses


def _helper_function(
    program: "Program", module: "Module | None", call: "Call", context_fn: "Function | None"
) -> "Function | None":
    """The function a plain helper call (`live(claim, now)`) denotes, if the model knows it."""
    name = call.callee_text or ""
    if not name or "(" in name:
        return None
    local = context_fn.local_function(name) if context_fn is not None and "." not in name else None
    if local is not None:
        return local
    return program.definition(module.path, name) if module is not None else None


def _pins_entity(
    program: "Program", module: "Module | None", expr: "Expr", table: str, opts: Options, depth: int = 0
) -> bool:
    """Does `expr` (a where condition) force an equality on the table's entity key?

    Only `eq(T.key, x)` directly or under `and(...)`: `or(...)` and anything
    else may widen the result, so it does not pin.
    """
    if expr is None or depth > 3:
        return False
    call = expr.call
    if call is None:
        ident = expr.identifier
        if ident and module is not None:
            constant = module.constant(ident)
            if constant is not None:
                return _pins_entity(program, module, constant, table, opts, depth + 1)
        return False
    name = _callee_name(call)
    if name == "eq":
        for arg in call.args[:2]:
            column = resolve_column(module, arg, opts)
            if column is not None and column[0] == table and column[1] in opts.entity_keys:
                return True
        return False
    if name == "and":
        return any(_pins_entity(program, module, a, table, opts, depth + 1) for a in call.args)
    helper = _helper_function(program, module, call, expr.enclosing_function)
    if helper is None:
        return False
    return _helper_pins(program, helper, table, opts, depth + 1)


def _helper_pins(program: "Program", helper: "Function", table: str, opts: Options, depth: int) -> bool:
    """A where-helper (`const owned = (c) => and(eq(T.id, c.id), ...)`) pins when its
    body is an `and`/`eq` over the entity key and it never branches through `or`."""
    calls = list(helper.all_calls)
    if any(_callee_name(c) in ("or", "not") for c in calls):
        return False
    helper_module = program.module(helper.path)
    for call in calls:
        name = _callee_name(call)
        if name == "eq" and _pins_entity(program, helper_module, call.expr, table, opts, depth):
            return True
        if name not in ("eq", "and") and depth < 3:
            nested = _helper_function(program, helper_module, call, helper)
            if nested is not None and nested is not helper and _helper_pins(program, nested, table, opts, depth + 1):
                return True
    return False


def _columns_in(
    program: "Program", module: "Module | None", expr: "Expr", table: str, opts: Options, depth: int = 0
) -> set[str]:
    """Columns of `table` referenced anywhere in a condition (following helpers one level),
    including `${T.col}` interpolations of raw `sql` templates."""
    found: set[str] = set()
    for call in expr.calls:
        if _is_raw_sql(call):
            found |= interpolated_columns(program, call, table, opts)
        for arg in call.args:
            column = resolve_column(module, arg, opts)
            if column is not None and column[0] == table:
                found.add(column[1])
        if depth < 2 and _callee_name(call) not in ("and", "or", "not", "eq", "ne", "isNull", "isNotNull"):
            helper = _helper_function(program, module, call, expr.enclosing_function)
            if helper is not None:
                found |= _columns_in(program, program.module(helper.path), helper.expr, table, opts, depth + 1)
    column = resolve_column(module, expr, opts)
    if column is not None and column[0] == table:
        found.add(column[1])
    return found


# ---------------------------------------------------------------- raw SQL
#
# A tagged template (sql`...`) is a call without an argument list. The model
# exposes the member expressions interpolated into it (`${T.wake_attempts}`)
# but not its literal text, so a raw statement is judged by the columns it
# interpolates and by how it is used, never by reading the SQL.

# Methods that run a raw statement by hand: db.run(sql`UPDATE ..`).
_RAW_SQL_EXECUTORS = frozenset({"run", "execute", "exec"})


def _is_raw_sql(call: "Call") -> bool:
    return _callee_name(call) == "sql" and not call.args


def interpolated_columns(program: "Program", sql: "Call", table: str, opts: Options) -> set[str]:
    """Columns of `table` interpolated into a raw `sql` template (directly or in a nested call)."""
    module = program.module(sql.path)
    inside = sql.expr.calls  # the template itself and calls inside its substitutions
    found: set[str] = set()
    for name in _column_names(opts):
        for read in program.invocations(name, sql.path):
            if read.call is None or not any(read.call is c for c in inside):
                continue
            column = resolve_column(module, read.expr, opts)
            if column is not None and column[0] == table:
                found.add(column[1])
    return found


def _column_names(opts: Options) -> tuple[str, ...]:
    """Every column name a check of this family asks about."""
    names = {*opts.attempts_columns, *opts.cursor_columns, *opts.entity_keys, *opts.settled_guards, *opts.wake_flags}
    return tuple(sorted(names))


# ---------------------------------------------------------------- bounds


def fold_number(program: "Program", expr: "Expr") -> float | None:
    """The value of a `.limit(..)` argument: literal, constant (across imports), arithmetic, `Math.*`."""
    value = program.fold(expr)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _fmt(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"


# ---------------------------------------------------------------- order


@dataclass(frozen=True)
class OrderKey:
    column: str | None  # None when the key is not a column of the scanned table
    descending: bool
    text: str
    # `T.col` or `asc(Other.col)`: a column of some table, as opposed to an
    # expression (sql`random()`) whose fairness cannot be read at all.
    is_column_ref: bool


def first_order_key(module: "Module | None", query: Query, opts: Options) -> OrderKey | None:
    order = query.step("orderBy")
    if order is None or not order.args:
        return None
    key = order.args[0]
    descending = False
    inner = key
    call = key.call
    if call is not None and _callee_name(call) in ("asc", "desc") and call.args:
        descending = _callee_name(call) == "desc"
        inner = call.args[0]
    column = resolve_column(module, inner, opts)
    name = column[1] if column is not None and column[0] == query.table else None
    dotted = inner.member_path
    return OrderKey(name, descending, key.normalized, dotted is not None and "." in dotted)


def _is_fair(key: OrderKey | None, opts: Options) -> bool:
    if key is None or key.column is None:
        return False
    if key.column in opts.cursor_columns:
        return True
    return key.column in opts.attempts_columns and not key.descending


# ---------------------------------------------------------------- attempts


def _outermost(fn: "Function | None") -> "Function | None":
    while fn is not None and fn.parent is not None:
        fn = fn.parent
    return fn


def reachable_functions(program: "Program", start: "Function", max_depth: int) -> list["Function"]:
    """`start` and the helpers it calls (by definition, across files), breadth first."""
    seen: dict[tuple[str, int, int], "Function"] = {(start.path, start.line, start.end_line): start}
    frontier = [start]
    for _ in range(max_depth):
        following: list["Function"] = []
        for fn in frontier:
            module = program.module(fn.path)
            for call in fn.all_calls:
                target = _helper_function(program, module, call, call.enclosing or fn)
                if target is None:
                    continue
                key = (target.path, target.line, target.end_line)
                if key not in seen:
                    seen[key] = target
                    following.append(target)
        frontier = following
        if not frontier:
            break
    return sorted(seen.values(), key=lambda f: (f.path, f.line, f.end_line))


def _sets(query: Query) -> list["Expr"]:
    """Object literals a write assigns: `.set({..})` and `onConflictDoUpdate({ set: {..} })`."""
    out = []
    for step in query.steps:
        if step.method == "set" and step.args:
            out.append(step.args[0])
        elif step.method == "onConflictDoUpdate" and step.args:
            inner = step.args[0].prop("set")
            if inner is not None:
                out.append(inner)
    return out


def _increments(value: "Expr") -> bool:
    # Resetting to a literal (`wake_attempts: 0`) is not an increment.
    number = value.number_value
    return number is None or number > 0


def writes_column(query: Query, column: str) -> bool:
    """Does this write (possibly) increment `column`? A non-literal `set` argument
    may carry it, so it counts: the check only reports certainties. (The model
    lists an object literal's keys but not its spreads, `{ ...base }`: a column
    carried only by a spread is not seen.)"""
    for obj in _sets(query):
        if obj.kind != "object":
            return True
        value = obj.prop(column)
        if value is not None and _increments(value):
            return True
    return False


def _raw_sql_increment(program: "Program", fn: "Function", table: str, column: str, opts: Options) -> bool:
    """A raw statement may increment `column`: it counts, since the check only reports certainties.

    Run by hand, db.run(sql`..`), its SQL text is opaque to the syntax tree,
    so it may update anything. Bound to a name to run later, it counts when it
    interpolates `${T.column}` of the scanned table. (Templates inside a query,
    `.orderBy(sql`..`)` or `select({ n: sql`count(..)` })`, are not statements.)
    """
    for call in fn.all_calls:
        if not _is_raw_sql(call):
            continue
        host = call.host
        if host is not None and host.method in _RAW_SQL_EXECUTORS:
            return True
        if call.binding[0] == "bound" and column in interpolated_columns(program, call, table, opts):
            return True
    return False


# ---------------------------------------------------------------- checks


@dataclass(frozen=True)
class ScanResult:
    """What one select chain turned out to be, and what is wrong with it."""

    kind: str  # "single-row" | "pinned" | "unbounded" | "bounded"
    bound_text: str = ""
    fair_column: str | None = None
    findings: tuple[Finding, ...] = ()


def _loc(query: Query, note: str = "") -> Location:
    return Location(query.path, query.line, query.end_line, note)


def _fn_label(fn: "Function | None") -> str:
    return f"`{fn.name}`" if fn is not None and fn.name else "this function"


def _table_label(query: Query) -> str:
    if query.table_ref == query.table:
        return f"`{query.table}`"
    return f"`{query.table_ref}` (`{query.table}`)"


def check_select(ctx: "ReviewContext", module: "Module | None", query: Query, opts: Options) -> ScanResult:
    program = ctx.program
    if any(m in opts.single_row_terminals for m in query.methods):
        return ScanResult("single-row")
    where = query.step("where")
    if where is not None and where.args and _pins_entity(program, module, where.args[0], query.table, opts):
        return ScanResult("pinned")
    table = _table_label(query)
    owner = _fn_label(_outermost(query.enclosing))
    limit = query.step("limit")
    if limit is None or not limit.args:
        finding = ctx.finding(
            "unbounded",
            title=f"Unbounded scan of {query.table} in {owner}",
            message=(
                f"This select over {table} in {owner} has no `.limit(N)` and is not pinned to one entity "
                f"(no `eq` on {', '.join(f'`{k}`' for k in sorted(opts.entity_keys))}), so one pass reads every "
                f"matching row of every Session. Bound it with `.limit(N)`, N <= {opts.bound}, ordered by the "
                "attempts column."
            ),
            location=_loc(query),
            failure_sequence=(
                f"rows pile up in {query.table} while the service is down or its wakes keep failing",
                "the next pass loads the whole backlog in one query",
                "every row is processed (one write and one wake each) inside that single pass",
                "the pass stalls or runs out of memory before any Session is woken, and a crash repeats it all",
            ),
            anchor=query.anchor,
        )
        return ScanResult("unbounded", findings=(finding,))
    findings: list[Finding] = []
    bound_expr = limit.args[0]
    limit_loc = Location(query.path, bound_expr.line, bound_expr.end_line, f"`.limit({bound_expr.normalized})`")
    value = fold_number(program, bound_expr)
    shown = bound_expr.normalized
    bound_text = shown if value is None or shown == _fmt(value) else f"{shown} = {_fmt(value)}"
    if value is None:
        findings.append(
            ctx.finding(
                "unresolved-bound",
                title=f"Cannot resolve scan bound `.limit({shown})` in {owner}",
                message=(
                    f"The scan of {table} is limited by `{shown}`, which does not fold to a constant, so the "
                    f"bound of {opts.bound} rows per pass is not proven."
                ),
                location=_loc(query),
                related=(limit_loc,),
                anchor=f"{query.anchor}|limit",
            )
        )
    elif value > opts.bound:
        findings.append(
            ctx.finding(
                "bound-too-large",
                title=f"Scan bound {_fmt(value)} exceeds {opts.bound} in {owner}",
                message=(
                    f"The scan of {table} is limited by `.limit({bound_text})`, above the configured bound of "
                    f"{opts.bound} rows per pass."
                ),
                location=_loc(query),
                related=(limit_loc,),
                failure_sequence=(
                    f"a backlog of more than {opts.bound} rows builds up",
                    f"one pass loads and processes up to {_fmt(value)} rows at once",
                    "the burst of writes and wakes stalls the runner and the database",
                ),
                anchor=f"{query.anchor}|limit",
            )
        )
    key = first_order_key(module, query, opts)
    fair = _is_fair(key, opts)
    if not fair:
        findings.append(_order_finding(ctx, query, key, bound_text, opts))
    return ScanResult("bounded", bound_text, key.column if fair and key else None, tuple(findings))


def _order_finding(ctx: "ReviewContext", query: Query, key: OrderKey | None, bound_text: str, opts: Options) -> Finding:
    table = _table_label(query)
    owner = _fn_label(_outermost(query.enclosing))
    attempts = " or ".join(f"`{c}`" for c in opts.attempts_columns) or "an attempts column"
    order = query.step("orderBy")
    order_loc = (
        (Location(query.path, order.args[0].line, order.args[0].end_line, "the first sort key"),)
        if order is not None and order.args
        else ()
    )
    if key is not None and key.column is None and not key.is_column_ref:
        return ctx.finding(
            "unresolved-order",
            title=f"Cannot read the scan order `{key.text}` in {owner}",
            message=(
                f"The bounded scan of {table} orders first by `{key.text}`, which is not a column of "
                f"{query.table}; fairness (attempts first: {attempts}) is not proven."
            ),
            location=_loc(query),
            related=order_loc,
            anchor=f"{query.anchor}|order",
        )
    described = "has no `.orderBy(...)`" if key is None else f"orders first by `{key.text}`"
    return ctx.finding(
        "starvation-order",
        title=f"Bounded scan of {query.table} in {owner} can starve later Sessions",
        message=(
            f"The scan of {table} is bounded by `.limit({bound_text})` but {described}. It must order first by "
            f"{attempts} ascending (or a cursor) so rows whose wake failed or was a no-op sort behind fresh work."
        ),
        location=_loc(query),
        related=order_loc,
        failure_sequence=(
            f"a full first page of {query.table} rows cannot be woken (another owner holds their Session, or the wake fails)",
            "each pass reads the same first page again: nothing in the order moves those rows back",
            f"rows beyond the first {bound_text} are never read",
            "later Sessions are never woken or recovered, across restarts",
        ),
        anchor=f"{query.anchor}|order",
    )


def check_attempts(ctx: "ReviewContext", query: Query, column: str, opts: Options) -> tuple[str, Finding | None]:
    """An attempts-ordered scan whose processor writes the rows but never bumps `column`.

    Only a processor (its function, or a helper it calls, updates the scanned
    table) owes the increment; a reader that hands rows elsewhere is not judged.
    Reported only when the patch touched the scan's function or one of those updates.
    Status: "reader" (no update reached), "bumped", "missing".
    """
    program = ctx.program
    owner = _outermost(query.enclosing)
    if owner is None:
        return "reader", None
    writes: list[Query] = []
    seen: set[tuple[str, int, int]] = set()
    for fn in reachable_functions(program, owner, opts.max_helper_depth):
        if _raw_sql_increment(program, fn, query.table, column, opts):
            return "bumped", None
        module = program.module(fn.path)
        if module is None:
            continue
        for call in fn.all_calls:
            if call.method != "update":
                continue
            write = _query_of(module, call, opts)
            if write is None or write.table != query.table:
                continue
            key = (write.path, write.line, write.end_line)
            if key not in seen:
                seen.add(key)
                writes.append(write)
    if not writes:
        return "reader", None
    if any(writes_column(w, column) for w in writes):
        return "bumped", None
    owner_touched = _touches(ctx, owner.path, owner.line, owner.end_line)
    touched = owner_touched or any(
        _touches(ctx, w.path, w.line, w.end_line) for w in writes
    )
    if not touched:
        return "missing", None
    writes.sort(key=lambda w: (w.path, w.line))
    return "missing", ctx.finding(
        "attempts-not-incremented",
        title=f"{_fn_label(owner)} orders by `{column}` but never increments it",
        message=(
            f"{_fn_label(owner)} scans {query.table} ordered by `{column}` and updates those rows "
            f"({len(writes)} update{'s' if len(writes) != 1 else ''} reached), but none of them increments "
            f"`{column}`: a failed or no-op wake leaves the row at the front of the next scan."
        ),
        location=_loc(query),
        related=(
            *(
                (Location(owner.path, owner.line, owner.end_line, f"{_fn_label(owner)}, changed by the patch"),)
                if owner_touched
                else ()
            ),
            *(_loc(w, f"updates {query.table} without touching `{column}`") for w in writes),
        ),
        failure_sequence=(
            f"the scan reads the first page ordered by `{column}`",
            "a wake fails or is a no-op, and the row is put back unchanged",
            f"`{column}` stays the same, so the row sorts first again on the next pass",
            "a full page of such rows starves every later Session",
        ),
        anchor=f"{query.anchor}|attempts",
    )


def _touches(ctx: "ReviewContext", path: str, line: int, end_line: int) -> bool:
    changed = ctx.changeset.file(path)
    return changed is not None and changed.touches(line, end_line)


def _wake_set(program: "Program", query: Query, opts: Options) -> "Expr | None":
    """The `.set({..})` object when it takes a wake: a wake flag set to `false`, not a settle."""
    for obj in _sets(query):
        flags = [k for k, v in obj.props if k in opts.wake_flags and program.fold(v) is False]
        if not flags:
            continue
        settles = [k for k, _ in obj.props if k in opts.settled_guards and k not in opts.wake_flags]
        return None if settles else obj
    return None


def check_cas(
    ctx: "ReviewContext", module: "Module | None", query: Query, opts: Options
) -> tuple[bool, Finding | None]:
    """(is a CAS wake, finding when its where lets settled rows through)."""
    if _wake_set(ctx.program, query, opts) is None:
        return False, None
    where = query.step("where")
    guards = set(opts.settled_guards)
    raw = ""
    if where is not None and where.args:
        cond = where.args[0]
        if _columns_in(ctx.program, module, cond, query.table, opts) & guards:
            return True, None
        what = f"its `where` (`{cond.normalized}`) names none of"
        if any(_is_raw_sql(call) for call in cond.calls):
            # Fail closed: a guard written as SQL text is invisible to the syntax tree.
            raw = f" Raw SQL is read only through its interpolations: write the guard as `${{{query.table_ref}.column}}`."
    else:
        what = "it has no `where`, so it checks none of"
    owner = _fn_label(_outermost(query.enclosing))
    return True, ctx.finding(
        "cas-includes-settled",
        title=f"Wake CAS on {query.table} in {owner} does not exclude settled rows",
        message=(
            f"This compare-and-swap takes a wake on {_table_label(query)} but {what} the settled guards "
            f"({', '.join(f'`{g}`' for g in opts.settled_guards)}). A row promoted or quarantined after the "
            f"scan still matches, so the wake is taken again.{raw}"
        ),
        location=_loc(query),
        failure_sequence=(
            "the scan reads a pending row",
            "before the CAS runs, the row is settled (its input promoted, or the row quarantined)",
            "the CAS matches on the id alone and reports the wake as taken",
            "the Session is woken for work that is already done, or woken twice",
        ),
        anchor=f"{query.anchor}|cas",
    )


# ---------------------------------------------------------------- run


@dataclass
class _Tally:
    """What the summary says: every scan of the changed scan-path files, changed or not."""

    bounded: list[tuple[str, str | None]]  # (bound text, fair column)
    unbounded: int = 0
    pinned: int = 0
    cas: int = 0
    cas_bad: int = 0
    changed: int = 0
    unchanged_issues: int = 0
    attempts_bumped: int = 0


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def _summary(t: _Tally, opts: Options) -> str:
    """One line of what was proven, e.g. `3 scans, each .limit(BATCH_SIZE = 100), ordered by wake_attempts`."""
    parts: list[str] = []
    if t.bounded:
        n = len(t.bounded)
        bounds = sorted({b for b, _ in t.bounded})
        if len(bounds) == 1:
            text = f"{_plural(n, 'scan')}, {'each ' if n > 1 else ''}.limit({bounds[0]})"
        else:
            text = f"{_plural(n, 'scan')}, limits " + ", ".join(f".limit({b})" for b in bounds)
        fair = [c for _, c in t.bounded if c]
        columns = " or ".join(sorted(set(fair)))
        if fair:
            text += f", {'' if len(fair) == n else f'{len(fair)} '}ordered by {columns}"
        if t.attempts_bumped:
            text += f", attempts incremented by {_plural(t.attempts_bumped, 'processor')}"
        parts.append(text)
    if t.unbounded:
        parts.append(f"{_plural(t.unbounded, 'scan')} without .limit")
    if t.cas:
        if t.cas_bad:
            parts.append(f"{_plural(t.cas, 'CAS wake')}, {t.cas - t.cas_bad} excluding settled rows")
        else:
            parts.append(f"{_plural(t.cas, 'CAS wake')} {'excludes' if t.cas == 1 else 'exclude'} settled rows")
    if t.pinned:
        not_scan = "a scan" if t.pinned == 1 else "scans"
        parts.append(f"{_plural(t.pinned, 'query', 'queries')} pinned to one entity (not {not_scan})")
    if t.unchanged_issues:
        parts.append(f"{_plural(t.unchanged_issues, 'pre-existing issue')} in unchanged queries, not reported")
    return "; ".join(parts) + f" (bound {opts.bound}; {_plural(t.changed, 'changed query', 'changed queries')})"


def run(ctx: "ReviewContext") -> Outcome:
    opts = ctx.opts
    files = sorted(
        (
            f
            for f in ctx.changeset.files
            if f.status.value != "deleted"
            and f.patched_text is not None
            and is_typescript(f.path)
            and in_scan_paths(f.path, opts)
        ),
        key=lambda f: f.path,
    )
    if not files:
        return Outcome("no changed TypeScript file in the scan paths")
    program = ctx.program
    tally = _Tally([])
    findings: list[Finding] = []
    notes: list[Finding] = []
    for cf in files:
        module = program.module(cf.path)
        if module is None:
            continue
        found = queries(module, opts)
        changed_here = [_loc(q, "a changed query of this file") for q in found if cf.touches(q.line, q.end_line)]
        error = _parse_error(ctx, cf, module, opts, notes, changed_here)
        if error is not None:
            return Outcome(error, unreadable=error)
        for query in found:
            touched = cf.touches(query.line, query.end_line)
            tally.changed += touched
            if query.kind == "update":
                is_cas, finding = check_cas(ctx, module, query, opts)
                tally.cas += is_cas
                tally.cas_bad += finding is not None
                _keep(findings, tally, finding, touched)
                continue
            result = check_select(ctx, module, query, opts)
            if result.kind == "pinned":
                tally.pinned += 1
            elif result.kind == "unbounded":
                tally.unbounded += 1
            elif result.kind == "bounded":
                tally.bounded.append((result.bound_text, result.fair_column))
            for finding in result.findings:
                _keep(findings, tally, finding, touched)
            if result.fair_column in opts.attempts_columns:
                # Judged on its own change scope: a changed helper can break an unchanged scan.
                status, attempts = check_attempts(ctx, query, result.fair_column, opts)
                tally.attempts_bumped += status == "bumped"
                if attempts is not None:
                    findings.append(attempts)
    if not tally.changed and not findings:
        summary = "no changed scan or wake CAS over " + "/".join(sorted(opts.tables))
        return Outcome(summary, tuple(notes))
    return Outcome(_summary(tally, opts), tuple(findings + notes), examined=tally.changed or len(findings))


def _keep(findings: list[Finding], tally: _Tally, finding: Finding | None, touched: bool) -> None:
    if finding is None:
        return
    if touched:
        findings.append(finding)
    elif finding.severity is not Severity.CONSIDER:
        tally.unchanged_issues += 1


def _names_a_table(program: "Program", module: "Module", opts: Options) -> bool:
    """The module declares, imports or reads (`Ns.T`) a scanned table in its parsed code."""
    if any(table in module.declarations for table in opts.tables):
        return True
    if any(imp.imported in opts.tables for imp in module.imports.values()):
        return True
    return any(program.invocations(table, module.path) for table in sorted(opts.tables))


def _parse_error(
    ctx: "ReviewContext",
    cf: "ChangedFile",
    module: "Module | None",
    opts: Options,
    notes: list[Finding],
    changed_here: list[Location],
) -> str | None:
    """An ERROR region over changed lines fails the family; elsewhere it is a note.

    The note points at the changed queries of the file as related locations:
    they are why the untouched region matters to this review.
    """
    regions = ctx.program.parse_errors(cf.path)
    if not regions or module is None:
        return None
    # A table named only inside a broken declaration is invisible to the
    # parsed model: read the words of what each region may have broken too.
    if not _names_a_table(ctx.program, module, opts) and not any(
        set(opts.tables) & words_on_lines(module, *error_scope(module, start, end)) for start, end in regions
    ):
        return None
    for start, end in sorted(regions):
        if cf.touches(start, end):
            return (
                f"{cf.path}:{start}-{end} does not parse (tree-sitter ERROR) inside changed lines; "
                "scans there cannot be checked"
            )
    for start, end in sorted(regions):
        notes.append(
            ctx.finding(
                "parse-error",
                title="Unparsed region in a scanned file",
                message=(
                    f"{cf.path}:{start}-{end} did not parse; queries inside it were not checked. "
                    "The region is outside the patch's changes."
                ),
                location=Location(cf.path, start, end),
                related=tuple(changed_here),
                anchor=f"parse-error|{module.path}|{start}",
            )
        )
    return None


FAMILY = Family(
    id=FAMILY_ID,
    summary="Recovery and wake scans stay bounded (.limit <= bound) and fair (attempts-ordered, attempts bumped); CAS wakes skip settled rows.",
    checks=CHECKS,
    run=run,
    options=OPTIONS,
)
