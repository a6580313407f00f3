"""The attempts-not-incremented check: a processor of an attempts-ordered scan bumps the column.

Follows the scan's function and the helpers it calls to the updates of the
scanned table and the raw statements that may carry the increment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer.report.model import Finding, Location
from reviewer.engine.api import Options
from reviewer.rules.bounded_scan.chains import Query, fn_label, loc, outermost, query_of
from reviewer.rules.bounded_scan.where import RAW_SQL_EXECUTORS, helper_function, interpolated_columns, is_raw_sql
from reviewer.typescript import member_of, members_of

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext
    from reviewer.typescript import Expr, Function, Program


# ---------------------------------------------------------------- attempts


def reachable_functions(program: "Program", start: "Function", max_depth: int) -> list["Function"]:
    """`start` and the helpers it calls (by definition, across files), breadth first."""
    seen: dict[tuple[str, int, int], "Function"] = {(start.path, start.line, start.end_line): start}
    frontier = [start]
    for _ in range(max_depth):
        following: list["Function"] = []
        for fn in frontier:
            module = program.module(fn.path)
            for call in fn.all_calls:
                target = helper_function(program, module, call, call.enclosing or fn)
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


def sets(query: Query) -> list["Expr"]:
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


def writes_column(program: "Program", query: Query, column: str) -> bool:
    """Does this write (possibly) increment `column`? A `set` argument the reviewer cannot read
    (not an object literal nor a `const` one), or a spread in it that it cannot follow, may carry
    it, so it counts: the check only reports certainties. Spreads of `const` objects are read
    (`{ ...RETRY, wake_pending: true }`), the last member written winning."""
    for obj in sets(query):
        members = members_of(program, obj)
        if members is None:
            return True
        value = member_of(program, obj, column)
        if value is not None and (value.kind in ("spread_element", "pair") or _increments(value)):
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
        if not is_raw_sql(call):
            continue
        host = call.host
        if host is not None and host.method in RAW_SQL_EXECUTORS:
            return True
        if call.binding[0] == "bound" and column in interpolated_columns(program, call, table, opts):
            return True
    return False


def check_attempts(ctx: "ReviewContext", query: Query, column: str, opts: Options) -> tuple[str, Finding | None]:
    """An attempts-ordered scan whose processor writes the rows but never bumps `column`.

    Only a processor (its function, or a helper it calls, updates the scanned
    table) owes the increment; a reader that hands rows elsewhere is not judged.
    Reported only when the patch touched the scan's function or one of those updates.
    Status: "reader" (no update reached), "bumped", "missing".
    """
    program = ctx.program
    owner = outermost(query.enclosing)
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
            write = query_of(module, call, opts)
            if write is None or write.table != query.table:
                continue
            key = (write.path, write.line, write.end_line)
            if key not in seen:
                seen.add(key)
                writes.append(write)
    if not writes:
        return "reader", None
    if any(writes_column(program, w, column) for w in writes):
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
        title=f"{fn_label(owner)} orders by `{column}` but never increments it",
        message=(
            f"{fn_label(owner)} scans {query.table} ordered by `{column}` and updates those rows "
            f"({len(writes)} update{'s' if len(writes) != 1 else ''} reached), but none of them increments "
            f"`{column}`: a failed or no-op wake leaves the row at the front of the next scan."
        ),
        location=loc(query),
        related=(
            *(
                (Location(owner.path, owner.line, owner.end_line, f"{fn_label(owner)}, changed by the patch"),)
                if owner_touched
                else ()
            ),
            *(loc(w, f"updates {query.table} without touching `{column}`") for w in writes),
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
