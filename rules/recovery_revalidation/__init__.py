"""recovery-revalidation: a recovered execution is re-validated right before it is woken, and its input
is promoted exactly (seed 002, invariant 4).

A recovery scan reads candidates (expired claims, pending recovery inputs, suspended Sessions); each
one, with or without an assistant message, must be checked again against the current durable state
immediately before it is woken, and a failed check must stop it. Its input is then promoted with a
compare-and-set on the precise row (id, Session, still unpromoted), never as "the newest input".

This package: the declarations (`spec`), drizzle chain reading (`drizzle`), the wake checks
(`wakes`), the promotion checks (`promotion`), and here the run and its summary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer.report.model import Severity
from reviewer.engine import globs
from reviewer.engine.api import Family, Options, Outcome

from reviewer.rules import _effect as fx
from reviewer.rules.recovery_revalidation.promotion import PromotionTally, check_promotions
from reviewer.rules.recovery_revalidation.spec import CHECKS, FAMILY_ID, OPTIONS
from reviewer.rules.recovery_revalidation.wakes import WakeTally, check_wakes

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext


def _tokens(opts: Options) -> list[str]:
    """Names whose presence in an unparsed region means it may hide a wake or a promotion."""
    return sorted(set(opts.wake_calls) | set(opts.revalidators) | set(opts.input_tables) | set(opts.promoted_columns))


_PHRASES = {
    "stale-wake": "candidate woken without re-validation",
    "validation-ignored": "re-validation does not gate the wake",
    "validation-swallowed": "re-validation failure logged and ignored",
    "promotion-by-recency": "input promoted by recency",
    "promotion-not-exact": "promotion not an exact CAS",
}


def _plural(n: int, word: str) -> str:
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word[:-1]}ies" if word.endswith("y") else f"{n} {word}s"


def run(ctx: "ReviewContext") -> Outcome:
    opts = ctx.opts
    paths = tuple(p for p in fx.reviewed_paths(ctx, (), _tokens(opts)) if globs.matches(p, opts.recovery_paths))
    if not paths:
        return Outcome("no changed TypeScript file under the recovery paths (" + ", ".join(opts.recovery_paths) + ")")
    program = ctx.program
    regions = fx.error_regions(program, ctx, paths, _tokens(opts))
    first = fx.blocking_region(regions)
    if first is not None:
        why = fx.unparsed_summary(first, "wake, re-validation or promotion idioms", "wakes and promotions")
        return Outcome(why, unreadable=why)
    wakes = WakeTally()
    check_wakes(ctx, program, paths, wakes)
    promotions = PromotionTally()
    check_promotions(ctx, program, paths, promotions)
    notes = fx.parse_error_findings(
        ctx, regions, title="Unparsed region in a file with recovery code", idioms="recovery",
        unchecked="wakes and promotions",
    )
    findings = tuple(sorted(wakes.findings + promotions.findings + notes, key=lambda f: f.sort_key()))
    promoted = promotions.exact + sum(1 for f in promotions.findings if not f.rule.endswith("by-recency"))
    examined = wakes.wakes + promoted + promotions.recency_checked
    if not examined:
        summary = (
            f"no wake ({'/'.join(opts.wake_calls)}) in a per-candidate loop of a recovery entry "
            f"({_plural(wakes.entries, 'entry')} and {_plural(wakes.loops, 'candidate loop')} found), and no "
            f"promotion of {'/'.join(opts.input_tables)} rows, in {_plural(len(paths), 'file')} under the recovery paths"
        )
        return Outcome(summary, findings)
    blocking = [f for f in findings if f.severity is not Severity.CONSIDER]
    if blocking:
        summary = fx.violation_summary(blocking, _PHRASES)
    else:
        parts = []
        if wakes.wakes:
            parts.append(f"{_plural(wakes.wakes, 'wake')} in {_plural(wakes.loops, 'candidate loop')}, "
                         f"{'each ' if wakes.wakes > 1 else ''}gated by a re-validation")
        if promotions.exact:
            parts.append(f"{_plural(promotions.exact, 'promotion')} by exact CAS (id, Session, unpromoted)")
        if promotions.recency_checked:
            parts.append(f"{_plural(promotions.recency_checked, 'promotion')} whose row comes from no newest-first read")
        summary = "; ".join(parts)
    return Outcome(summary + f" ({_plural(len(paths), 'file')})", findings, examined=examined)


FAMILY = Family(
    id=FAMILY_ID,
    summary=(
        "A recovered execution is re-validated against current durable state right before it is woken, and its "
        "input is promoted by an exact compare-and-set (id, Session, unpromoted), never by recency."
    ),
    checks=CHECKS,
    run=run,
    options=OPTIONS,
)
