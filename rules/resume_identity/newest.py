"""newest-as-identity: the state to resume is chosen by age, not matched by identity.

Two shapes of "the newest": a drizzle query ordered by a time column
descending and cut to one row (`.limit(1)`, `.get()`), and an array sorted
by a time property descending (`.sort`/`.toSorted`) of which the first is
taken (`[0]`, `.at(0)`, `.find(..)`, `.shift()`). Either is a violation only
when what it picks is resumed: the function around it, the name it is bound
to, or a call it is passed to says so in the configured resume words. An
equality on an identity column (`eq(T.session_id, id)`) or an identity
comparison in a filter pins the pick to one entity and makes it fine.
"""

from __future__ import annotations

import re
from typing import Iterator

from reviewer.report.model import Finding

from reviewer.typescript import (
    Call, Expr, Query, arguments_of, builder_query, consumer, exits, later_uses, names_in, sql_statement, statement_of,
)

from reviewer.rules import _effect as fx
from reviewer.rules._vocabulary import is_group_key
from reviewer.rules.resume_identity.words import Scan, field_matches, recency, says_resume, stems

_SORTS = ("sort", "toSorted")
_FIRST_LINKS = ("at", "find", "findLast", "shift")


def check_newest(scan: Scan) -> Iterator[Finding]:
    resume = stems(scan.opts.resume_words)
    for call in fx.iter_calls(scan.program, scan.paths):
        if call.method == "orderBy":
            yield from _query(scan, call, resume)
        elif call.method in _SORTS:
            yield from _sorted(scan, call, resume)
        else:
            yield from _raw(scan, call, resume)


# ------------------------------------------------------------------ raw SQL


def _raw(scan: Scan, call: Call, resume: tuple[str, ...]) -> Iterator[Finding]:
    """A raw SQL `SELECT .. ORDER BY recorded_at DESC LIMIT 1`: the newest row, read as the query says."""
    statement = sql_statement(call)
    if statement is None or statement.operation != "select" or not statement.order or statement.limit != 1:
        return
    first = statement.order[0]
    if not first.descending or first.column is None or recency(scan, first.column) is None:
        return
    if not scan.judged(call):
        return
    scan.count("newest picks")
    why = _resumed(scan, call, resume)
    if why is None:
        return
    pattern = scan.opts.identity_pattern
    if any(pattern.search(column) and not is_group_key(column, statement.table) for column in statement.pins):
        return
    yield from _report(scan, call, f"The SQL query ordered by `{first.text}` keeps only its first row (`LIMIT 1`)", why)


# ------------------------------------------------------------------ drizzle


def _query(scan: Scan, order: Call, resume: tuple[str, ...]) -> Iterator[Finding]:
    # The order as the query model reads it: `desc(T.time)` however imported, or a `sql` fragment.
    query = builder_query(scan.program, order.chain)
    first = query.order[0] if query is not None and query.order else None
    if first is None or not first.descending or first.column is None:
        return
    column = recency(scan, first.column)
    if column is None:
        return
    args = arguments_of(scan.program, order)
    key = args[0] if args else order.expr
    links = order.chain_from_here
    pick = next((c for c in links if _takes_one(scan, c)), None)
    if pick is None:
        return
    end = order.chain[-1]
    if not scan.judged(end):
        return
    scan.count("newest picks")
    why = _resumed(scan, end, resume)
    if why is None:
        return
    pinned, unknown = _pinned(scan, order, query)
    if pinned:
        return
    if unknown is not None:
        yield from _unresolved(scan, end, unknown, why)
        return
    taken = "`.limit(1)`" if pick.method == "limit" else "`.get()`"
    yield from _report(scan, end, f"The query ordered by `{key.written}` keeps only its first row ({taken})", why, line=order.args[0].line)


def _takes_one(scan: Scan, call: Call) -> bool:
    if call.method == "get" and not call.args:
        return True
    if call.method == "limit" and len(call.args) == 1:
        return scan.program.fold(call.args[0]) == 1
    return False


def _pinned(scan: Scan, order: Call, query: Query) -> tuple[bool, Call | None]:
    """(an identity equality binds the query, the filter holding a spread it could not read).

    Read by the model's query model: only a top-level conjunct binds every row
    (an `eq` under `or` does not), and an equality with a column of the same
    table (`eq(T.id, T.id)`) or a literal names no recovered identity.
    """
    pattern = scan.opts.identity_pattern
    for term in query.terms:
        value = term.value
        if term.pins and term.column and pattern.search(term.column) and not is_group_key(term.column, query.table) \
                and value is not None \
                and value.string_value is None and value.number_value is None:
            return True, None
    if any(u.kind == "spread_element" for u in query.unread):
        where = next((c for c in order.chain if c.method == "where"), None)
        inner = where.args[0].call if where is not None and where.args else None
        return False, inner or where
    return False, None


# ------------------------------------------------------------------ arrays

_ROOT = re.compile(r"^\(*([A-Za-z_$][\w$]*)\.([\w$.]+)")


def _sorted(scan: Scan, sort: Call, resume: tuple[str, ...]) -> Iterator[Finding]:
    args = sort.args
    comparator = args[0].function if len(args) == 1 else None
    if comparator is None or len(comparator.params) != 2:
        return
    column = _descending_by(scan, comparator)
    if column is None:
        return
    pick = _first_taken(scan, sort)
    if pick is None:
        return
    where, taken = pick
    if not scan.judged(sort, where):
        return
    scan.count("newest picks")
    why = _resumed(scan, where, resume, taken)
    if why is None or _filtered_by_identity(scan, sort, where):
        return
    yield from _report(scan, sort, f"`{sort.written}` sorts by `{column}` newest first and `{taken}` keeps the first", why, where, line=args[0].line)


def _descending_by(scan: Scan, comparator) -> str | None:
    """The recency field a comparator orders by, newest first (`(a, b) => b.time - a.time`)."""
    first, second = (p.split(":")[0].strip() for p in comparator.params)
    for end in exits(comparator):
        value = end.value
        if value is None:
            continue
        # The model gives no operands of a binary expression; its normal form is canonical
        # (no spaces, no comments), so the leading operand is read from it.
        head = _ROOT.match(value.normalized)
        if head is None or head.group(1) != second:
            continue
        path = head.group(2).removesuffix(".localeCompare")
        found = recency(scan, f"{second}.{path}")
        if found is not None and first in names_in(value):
            return found
    return None


def _first_taken(scan: Scan, sort: Call) -> tuple[Call | Expr, str] | None:
    """Where the first of the sorted array is taken, and how (`[0]`, `.at(0)`, `.find(..)`)."""
    for link in sort.chain_from_here[1:]:
        if _first_link(scan, link):
            return link, f".{link.method}(...)"
    statement = statement_of(sort)
    if statement is not None and _subscripts_first(statement, sort.normalized):
        return sort, "[0]"
    kind, name = sort.binding
    if kind != "bound" or not name:
        return None
    for read in later_uses(sort):
        taker = consumer(read)
        if taker is not None and _first_link(scan, taker):
            return taker, f"{name}.{taker.method}(...)"
        around = statement_of(read)
        if around is not None and _subscripts_first(around, name):
            return read, f"{name}[0]"
    return None


def _first_link(scan: Scan, call: Call) -> bool:
    if call.method not in _FIRST_LINKS:
        return False
    if call.method == "at":
        return len(call.args) == 1 and scan.program.fold(call.args[0]) == 0
    return True


def _subscripts_first(statement: Expr, subject: str) -> bool:
    text = statement.normalized
    return any(f"{subject}{index}" in text for index in ("[0]", "?.[0]", "![0]"))


def _filtered_by_identity(scan: Scan, sort: Call, where: Call | Expr) -> bool:
    """A filter or search before or at the pick compares an identity (`s.sessionID === id`)."""
    pattern = scan.opts.identity_pattern
    links = list(sort.chain)
    if isinstance(where, Call):
        links.extend(where.chain)
    for link in links:
        if link.method not in ("filter", "find", "findLast"):
            continue
        for arg in link.args:
            if any(pattern.search(n) and not is_group_key(n) for n in names_in(arg)):
                return True
    return False


# ------------------------------------------------------------------ resumed?


def _resumed(scan: Scan, item: Call | Expr, resume: tuple[str, ...], taken: str = "") -> str | None:
    """Why the picked value counts as resumed, or None when nothing says so."""
    fn = fx.outer_named(item.enclosing if isinstance(item, Call) else item.enclosing_function)
    if fn is not None and says_resume(fn.name, resume):
        return f"it is picked inside `{fn.name}`"
    if isinstance(item, Call):
        kind, name = item.binding
        if kind == "bound" and says_resume(name, resume):
            return f"it is bound to `{name}`"
        uses = [item.expr, *later_uses(item)] if kind == "bound" else [item.expr]
    else:
        uses = [item]
    for use in uses:
        statement = statement_of(use)
        for call in statement.calls if statement is not None else ():
            if call is not item and says_resume(call.callee, resume) and _takes(call, use):
                return f"it is handed to `{call.callee_written}`"
    return None


def _takes(call: Call, use: Expr) -> bool:
    """`use` is inside one of `call`'s arguments."""
    return any(fx.within(use, arg.span) for arg in call.args)


# ------------------------------------------------------------------ findings


def _report(scan: Scan, at: Call, how: str, why: str, pick: Call | Expr | None = None, line: int = 0) -> Iterator[Finding]:
    related = []
    if pick is not None and pick is not at:
        related.append(fx.loc(pick.path, pick.line, pick.end_line, "the first of the sorted list is taken here"))
    yield (
        scan.ctx.finding(
            "newest-as-identity",
            title="Resumed state is chosen as the newest, not by identity",
            message=(
                f"{how}, and {why}: whatever was written last is resumed, whichever session or task it "
                "belongs to. Match the state by its identity (an "
                "equality on the session or task id) and report a missing match instead of falling back to "
                "the newest."
            ),
            location=fx.loc(at.path, line or at.line, at.end_line),
            related=related,
            failure_sequence=(
                "Two sessions (or tasks) persist recovery state; the other one writes last.",
                "This session restarts and asks for the newest entry instead of its own.",
                "It resumes the other session's state: its pending work, its task boundary, its evidence.",
                "Its own unfinished work is never resumed, and the other session's work may now run twice.",
            ),
            anchor=f"newest:{at.normalized}",
        )
    )


def _unresolved(scan: Scan, at: Call, unknown: Call, why: str) -> Iterator[Finding]:
    yield (
        scan.ctx.finding(
            "identity-unresolved",
            title="Newest pick filtered by conditions the reviewer cannot read",
            message=(
                f"`{at.written}` picks the newest row and {why}, but its filter `{unknown.written}` spreads "
                "conditions built at run time, so whether an identity equality pins it to one session was not "
                "checked. Check it by hand, or write the identity equality out in the query."
            ),
            location=fx.loc(at.path, at.line, at.end_line),
            anchor=f"newest-unresolved:{at.normalized}",
        )
    )
