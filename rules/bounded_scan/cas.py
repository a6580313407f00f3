"""The cas-includes-settled check: a compare-and-swap wake excludes settled rows in its where."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer.report.model import Finding
from reviewer.engine.api import Options
from reviewer.rules.bounded_scan.attempts import sets
from reviewer.rules.bounded_scan.chains import Query, loc, owner_label, table_label
from reviewer.rules.bounded_scan.where import columns_in, is_raw_sql, unread_spreads
from reviewer.typescript import member_of, members_of

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext
    from reviewer.typescript import Expr, Module, Program


def _wake_set(program: "Program", query: Query, opts: Options) -> "Expr | None":
    """The `.set({..})` object when it takes a wake: a wake flag set to `false`, not a settle.

    The object may be a `const` (`.set(TAKE_WAKE)`) or spread `const` objects; the last member
    written wins. A member the reviewer cannot read (a spread of a parameter) settles nothing it knows of.
    """
    for obj in sets(query):
        members = members_of(program, obj) or ()
        flags = [k for k in opts.wake_flags if _is_false(program, member_of(program, obj, k))]
        if not flags:
            continue
        settles = [k for k, _ in members if k in opts.settled_guards and k not in opts.wake_flags]
        return None if settles else obj
    return None


def _is_false(program: "Program", value: "Expr | None") -> bool:
    return value is not None and value.kind not in ("spread_element", "pair") and program.fold(value) is False


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
        what = f"its `where` (`{cond.written}`) names none of"
        if any(is_raw_sql(call) for call in cond.calls):
            # Fail closed: a guard written as SQL text is invisible to the syntax tree.
            raw = f" Raw SQL is read only through its interpolations: write the guard as `${{{query.table_ref}.column}}`."
        unread = unread_spreads(ctx.program, cond)
        if unread:
            # Fail closed too, but say so: a guard inside a spread the reviewer cannot follow is not seen.
            raw += (f" Its `where` spreads {', '.join(f'`{e.written}`' for e in unread)}, which the reviewer "
                    "cannot read: if a settled guard is in there, spread a `const` array instead.")
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
        related=query.earlier,
        failure_sequence=(
            "the scan reads a pending row",
            "before the CAS runs, the row is settled (its input promoted, or the row quarantined)",
            "the CAS matches on the id alone and reports the wake as taken",
            "the Session is woken for work that is already done, or woken twice",
        ),
        anchor=f"{query.anchor}|cas",
    )
