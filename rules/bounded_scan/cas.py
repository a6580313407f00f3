"""The cas-includes-settled check: a compare-and-swap wake excludes settled rows in its where."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer.report.model import Finding
from reviewer.engine.api import Options
from reviewer.rules.bounded_scan.attempts import sets
from reviewer.rules.bounded_scan.chains import Query, loc, owner_label, table_label
from reviewer.rules.bounded_scan.where import columns_in, is_raw_sql

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext
    from reviewer.typescript import Expr, Module, Program


def _wake_set(program: "Program", query: Query, opts: Options) -> "Expr | None":
    """The `.set({..})` object when it takes a wake: a wake flag set to `false`, not a settle."""
    for obj in sets(query):
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
        if columns_in(ctx.program, module, cond, query.table, opts) & guards:
            return True, None
        what = f"its `where` (`{cond.normalized}`) names none of"
        if any(is_raw_sql(call) for call in cond.calls):
            # Fail closed: a guard written as SQL text is invisible to the syntax tree.
            raw = f" Raw SQL is read only through its interpolations: write the guard as `${{{query.table_ref}.column}}`."
    else:
        what = "it has no `where`, so it checks none of"
    owner = owner_label(query)
    return True, ctx.finding(
        "cas-includes-settled",
        title=f"Wake CAS on {query.table} in {owner} does not exclude settled rows",
        message=(
            f"This compare-and-swap takes a wake on {table_label(query)} but {what} the settled guards "
            f"({', '.join(f'`{g}`' for g in opts.settled_guards)}). A row promoted or quarantined after the "
            f"scan still matches, so the wake is taken again.{raw}"
        ),
        location=loc(query),
        failure_sequence=(
            "the scan reads a pending row",
            "before the CAS runs, the row is settled (its input promoted, or the row quarantined)",
            "the CAS matches on the id alone and reports the wake as taken",
            "the Session is woken for work that is already done, or woken twice",
        ),
        anchor=f"{query.anchor}|cas",
    )
