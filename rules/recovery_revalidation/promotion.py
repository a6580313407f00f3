"""The promotion checks: a promotion is a compare-and-set on the precise row (`promotion-not-exact`,
`promotion-unresolved`), and never takes the row a newest-first read returned (`promotion-by-recency`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Sequence

from reviewer.report.model import Finding, Location
from reviewer.engine.api import Options
from reviewer.typescript import Call, Function, Program, mentions_name

from reviewer.rules import _effect as fx
from reviewer.rules.recovery_revalidation import drizzle as dz

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext


@dataclass
class PromotionTally:
    exact: int = 0
    inexact: int = 0  # promotions judged and found not exact, or not readable
    recency_checked: int = 0


def _join(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]


def _loc(chain: Sequence[Call], note: str = "") -> Location:
    line, end = dz.chain_lines(chain)
    return fx.loc(chain[0].path, line, end, note)


def check_promotions(
    ctx: "ReviewContext", program: Program, paths: Sequence[str], tally: PromotionTally
) -> Iterator[Finding]:
    opts = ctx.opts
    for module in fx.modules(program, paths):
        for call in module.calls():
            if call.method != "update" or not dz.is_head(call):
                continue
            chain = dz.whole(call)
            if dz.promotion_set(program, chain, opts) is None:
                continue
            finding = _judge_exact(ctx, program, chain, tally)
            if finding is not None:
                tally.inexact += 1
                yield finding
        for function in module.functions():
            yield from _judge_recency(ctx, program, function, tally)


def _judge_exact(ctx: "ReviewContext", program: Program, chain: Sequence[Call], tally: PromotionTally) -> Finding | None:
    opts = ctx.opts
    found = dz.query(program, chain)
    where = found.where if found is not None else None
    table = (found.table if found is not None else None) or "?"
    head = chain[0]
    owner = fx.describe(fx.outer_named(head.enclosing))
    if found is None or where is None:
        missing = ["the row's id", "its Session", f"the unpromoted predicate `isNull({opts.promoted_columns[0]})`"]
        got = "has no `where`: it matches every row"
    else:
        # An equality pins only against a value: `eq(T.id, T.id)` is true of every row.
        missing = []
        if not found.pins(opts.id_columns):
            missing.append(f"the row's id (`eq` on {'/'.join(opts.id_columns)})")
        if not found.pins(opts.session_columns):
            missing.append(f"its Session (`eq` on {'/'.join(opts.session_columns)})")
        if not found.has("isNull", opts.promoted_columns):
            missing.append(f"the unpromoted predicate (`isNull` on {'/'.join(opts.promoted_columns)})")
        if missing and found.unread:
            unread = ", ".join(f"`{e.written}`" for e in found.unread[:2])
            return (
                ctx.finding(
                    "promotion-unresolved",
                    title=f"Promotion of {table} in {owner}: `where` not fully readable",
                    message=(
                        f"This update promotes a {table} row, but its `where` (`{where.written}`) is built from "
                        f"{unread}, which the reviewer cannot read, and the readable part does not require "
                        f"{', '.join(missing)}. Check by hand that it is a compare-and-set on the precise row, "
                        "or write the conditions with `and(eq(..), eq(..), isNull(..))`."
                    ),
                    location=_loc(chain),
                    anchor=f"promotion-unresolved|{head.normalized}",
                )
            )
        got = f"has `where` `{where.written}`"
    if not missing:
        tally.exact += 1
        return None
    return (
        ctx.finding(
            "promotion-not-exact",
            title=f"Promotion of {table} in {owner} is not an exact compare-and-set",
            message=(
                f"This update sets {'/'.join(opts.promoted_columns)} on {table} but {got}, so it does not require "
                f"{_join(missing)}. Match the precise row: `and(eq(T.id, id), eq(T.session_id, sessionID), "
                "isNull(T.promoted_seq))`, and check that it returned the row."
            ),
            location=_loc(chain),
            failure_sequence=(
                "a recovery and the live runner (or two recoveries) both decide to promote the same input",
                "the first update promotes it",
                "the second update still matches (no unpromoted predicate, or not pinned to that row and Session) "
                "and promotes again or promotes a different row",
                "the input is consumed twice, or another Session's input is promoted, and the turn replays",
            ),
            anchor=f"promotion-not-exact|{head.normalized}",
        )
    )


def _recency_sources(program: Program, function: Function) -> list[tuple[str, Call, Sequence[Call]]]:
    """(bound name, where it is bound, the newest-first read) for each `const` a recency read feeds."""
    out = []
    for call in function.calls:
        if not dz.is_head(call):
            continue
        usage, name = call.binding
        if usage != "bound" or not name:
            continue
        chain = dz.whole(call)
        if dz.is_recency_read(program, chain):
            out.append((name, call, chain))
            continue
        helper = program.function_of(call.callee_expr) if call.callee_expr is not None else None
        if helper is None or helper is function:
            continue
        for inner in helper.all_calls:
            if dz.is_head(inner) and inner.binding[0] == "returned" and dz.is_recency_read(program, dz.whole(inner)):
                out.append((name, call, dz.whole(inner)))
                break
    return out


def _promotions(program: Program, function: Function, opts: Options) -> list[tuple[Call, list]]:
    """Promotion calls directly in `function` and the expressions that choose their row."""
    out = []
    for call in function.calls:
        if not dz.is_head(call):
            continue
        chain = dz.whole(call)
        if dz.promotion_set(program, chain, opts) is not None:
            where = dz.where_of(chain)
            out.append((call, [where] if where is not None else []))
        elif opts.promote_calls.search(fx.last(call.callee)) and not dz.is_select(program, chain):
            out.append((call, list(call.args)))
    return out


def _judge_recency(ctx: "ReviewContext", program: Program, function: Function, tally: PromotionTally) -> Iterator[Finding]:
    opts = ctx.opts
    promotions = _promotions(program, function, opts)
    if not promotions:
        return
    sources = _recency_sources(program, function)
    for promotion, choosers in promotions:
        tally.recency_checked += 1
        for name, bound, read in sources:
            if bound.span[2] > promotion.span[1]:
                continue
            if not any(mentions_name(expr, name) for expr in choosers):
                continue
            read_loc = _loc(read, "newest-first single-row read")
            yield (
                ctx.finding(
                    "promotion-by-recency",
                    title=f"`{promotion.callee_written}` promotes the newest row, not the recovery's row",
                    message=(
                        f"`{promotion.callee_written}` at {promotion.path}:{promotion.line} chooses its row from "
                        f"`{name}`, which `{bound.written}` read newest-first (`orderBy(desc(..))` with one row). "
                        "Any input admitted after the recovery was recorded is newer and gets promoted instead. "
                        "Promote the id the recovery recorded, with a compare-and-set on that precise row."
                    ),
                    location=_loc(dz.whole(promotion)),
                    related=fx.unique_sorted([read_loc, fx.call_loc(bound, f"`{name}` bound here")]),
                    failure_sequence=(
                        "recovery records a continuation input for the crashed step",
                        "before it is promoted, a new prompt (or a second recovery) is admitted for the same Session",
                        "the newest-first read returns that newer row and it is promoted in the recovery's place",
                        "the recovered input stays pending and is replayed later, out of order, or never",
                    ),
                    anchor=f"promotion-by-recency|{promotion.normalized}|{name}",
                )
            )
            break
