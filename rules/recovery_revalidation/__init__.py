"""recovery-revalidation: a recovered execution is re-validated right before it is woken, and its input
is promoted exactly (seed 002, invariant 4).

A recovery scan reads candidates (expired claims, pending recovery inputs, suspended Sessions); each
one, with or without an assistant message, must be checked again against the current durable state
immediately before it is woken, and a failed check must stop it. Its input is then promoted with a
compare-and-set on the precise row (id, Session, still unpromoted), never as "the newest input".

This package: the declarations (`spec`), drizzle chain reading (`drizzle`), the wake checks
(`wakes`), the promotion checks (`promotion`), and here the family on the engine's template.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator

from reviewer.engine.api import Family, Options
from reviewer.engine.template import Reading, Template, violation_summary
from reviewer.text import plural
from reviewer.report.model import Finding, Severity
from reviewer.rules.recovery_revalidation.promotion import PromotionTally, check_promotions
from reviewer.rules.recovery_revalidation.spec import CHECKS, FAMILY_ID, OPTIONS
from reviewer.rules.recovery_revalidation.wakes import WakeTally, check_wakes

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext


def _tokens(opts: Options) -> list[str]:
    """Names whose presence in an unparsed region means it may hide a wake or a promotion."""
    return sorted(set(opts.wake_calls) | set(opts.revalidators) | set(opts.input_tables) | set(opts.promoted_columns))


@dataclass
class Run:
    """One run's state: the files under the recovery paths, and what the checks counted."""

    ctx: "ReviewContext"
    changed: tuple[str, ...] = ()
    wakes: WakeTally = field(default_factory=WakeTally)
    promotions: PromotionTally = field(default_factory=PromotionTally)


def _wakes(run: Run) -> Iterator[Finding]:
    """stale-wake, validation-ignored, validation-swallowed."""
    return check_wakes(run.ctx, run.ctx.program, run.changed, run.wakes)


def _promotions(run: Run) -> Iterator[Finding]:
    """promotion-by-recency, promotion-not-exact, promotion-unresolved."""
    return check_promotions(run.ctx, run.ctx.program, run.changed, run.promotions)


def _examined(run: Run) -> int:
    p = run.promotions
    return run.wakes.wakes + p.exact + p.inexact + p.recency_checked


def _unexamined(run: Run, findings: tuple[Finding, ...]) -> str:
    opts, wakes = run.ctx.opts, run.wakes
    return (
        f"no wake ({'/'.join(opts.wake_calls)}) in a per-candidate loop of a recovery entry "
        f"({plural(wakes.entries, 'entry')} and {plural(wakes.loops, 'candidate loop')} found), and no "
        f"promotion of {'/'.join(opts.input_tables)} rows, in {plural(len(run.changed), 'file')} examined"
    )


_PHRASES = {
    "stale-wake": "candidate woken without re-validation",
    "validation-ignored": "re-validation does not gate the wake",
    "validation-swallowed": "re-validation failure logged and ignored",
    "promotion-by-recency": "input promoted by recency",
    "promotion-not-exact": "promotion not an exact CAS",
}


def _proved(run: Run, findings: tuple[Finding, ...]) -> str:
    """What was judged, or what was violated; in how many files either way."""
    wakes, promotions = run.wakes, run.promotions
    blocking = [f for f in findings if f.severity is not Severity.CONSIDER]
    if blocking:
        return violation_summary(blocking, _PHRASES) + f" ({plural(len(run.changed), 'file')})"
    parts = []
    if wakes.wakes:
        parts.append(f"{plural(wakes.wakes, 'wake')} in {plural(wakes.loops, 'candidate loop')}, "
                     f"{'each ' if wakes.wakes > 1 else ''}gated by a re-validation")
    if promotions.exact:
        parts.append(f"{plural(promotions.exact, 'promotion')} by exact CAS (id, Session, unpromoted)")
    if promotions.recency_checked:
        parts.append(f"{plural(promotions.recency_checked, 'promotion')} whose row comes from no newest-first read")
    return "; ".join(parts) + f" ({plural(len(run.changed), 'file')})"


TEMPLATE = Template(
    reading=Reading(
        idioms="recovery",
        unchecked="wakes and promotions",
        region_title="Unparsed region in a file with recovery code",
        tokens=_tokens,
        within="recovery_paths",
    ),
    nothing=lambda ctx: "no changed production TypeScript file" + (
        "" if tuple(ctx.opts.recovery_paths) == ("**",)
        else " under the recovery paths (" + ", ".join(ctx.opts.recovery_paths) + ")"),
    start=Run,
    checks=(_wakes, _promotions),
    examined=_examined,
    unexamined=_unexamined,
    proved=_proved,
    phrases=None,  # `_proved` words violations too, with the file count
    notes_everywhere=True,
)


FAMILY = Family(
    id=FAMILY_ID,
    summary=(
        "A recovered execution is re-validated against current durable state right before it is woken, and its "
        "input is promoted by an exact compare-and-set (id, Session, unpromoted), never by recency."
    ),
    checks=CHECKS,
    run=TEMPLATE.run,
    options=OPTIONS,
)
