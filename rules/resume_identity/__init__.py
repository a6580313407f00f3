"""resume-identity: recovery state is matched by explicit identity, and corrupt state is an error.

Seeds 000 and 004. A new session never inherits the newest task or row
merely because it is the newest: recovery matches state by identity
(`newest-as-identity`). Corrupt persisted state is reported, never read as
an empty list (`corrupt-state-as-empty`). Where the code base requires it,
resuming needs the user's explicit confirmation (`resume-unconfirmed`). A
persisted resume cursor is cleared when the upstream session it points at
is destroyed (`cursor-not-invalidated`).

This package: the declarations (`spec`), what the checks share (`words`),
one module per check (`newest`, `corrupt`, `confirm`, `cursor`), and here
the run: which files are judged, their parse errors, and the summary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer.engine import globs

from reviewer.engine.api import Family, Options
from reviewer.engine.template import Reading, Template, reviewed_paths, violation_summary
from reviewer.report.model import Finding, Severity

from reviewer.rules import _effect as fx
from reviewer.rules.resume_identity.confirm import check_confirm
from reviewer.rules.resume_identity.corrupt import check_corrupt
from reviewer.rules.resume_identity.cursor import check_cursor
from reviewer.rules.resume_identity.newest import check_newest
from reviewer.rules.resume_identity.spec import CHECKS, FAMILY_ID, OPTIONS
from reviewer.rules.resume_identity.words import Scan

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext


def _idiom_tokens(opts: Options) -> list[str]:
    """Names whose presence in an unparsed region means it may hide a violation of this family."""
    names = (
        opts.decoders + opts.state_reads + opts.cursor_fields + opts.destroy_calls + opts.destroy_events
        + tuple(f.rsplit(".", 1)[-1] for f in opts.recency_fields)
    )
    return sorted({fx.strip_call_marks(n) for n in names} | {"orderBy", "sort", "toSorted"})


def _reviewed_paths(scan: Scan) -> tuple[str, ...]:
    """The changed TypeScript files; under `--scope all` also every file of recovery code: under
    `state_paths`, naming a resume word in any case, or naming a cursor field. The family's other idioms
    (`JSON.parse`, `sort`, `updatedAt`) are everywhere, and judging every file that writes one would
    build the model of most of the tree for checks that need a resume word to report anything."""
    ctx, opts = scan.ctx, scan.opts
    changed = reviewed_paths(ctx, opts.ignore_paths, ())
    if not ctx.widened:
        return changed
    words = [w.lower() for w in opts.resume_words if w]
    # git grep -E has no case flag: `[Rr]esum` finds `resumeTask` and `latestResume`.
    stems = [w.removesuffix("e") for w in words if w.isalpha()]
    pattern = "(" + "|".join(f"[{s[0].upper()}{s[0]}]{s[1:]}" for s in stems) + ")" if stems else ""
    named = set(ctx.patched.files_matching([pattern])) if pattern else set()
    named |= set(ctx.patched.files_naming(list(opts.cursor_fields))) if opts.cursor_fields else set()
    named |= set(fx.tree_paths(ctx, opts.state_paths))
    return tuple(sorted(set(changed) | {p for p in named if not globs.matches(p, opts.ignore_paths)}))


def _prepare(scan: Scan) -> None:
    scan.scope = tuple(sorted(set(scan.paths) | set(fx.imported_paths(scan.program, scan.paths))))


_PHRASES = {
    "newest-as-identity": "resumed state chosen as the newest",
    "corrupt-state-as-empty": "corrupt persisted state read as empty",
    "resume-unconfirmed": "resume without explicit confirmation",
    "cursor-not-invalidated": "resume cursor kept after its session is destroyed",
}


def _proved(scan: Scan, findings: tuple[Finding, ...]) -> str:
    """What was judged or violated, and whether resume confirmation is configured at all."""
    blocking = [f for f in findings if f.severity is not Severity.CONSIDER]
    if blocking:
        summary = violation_summary(blocking, _PHRASES)
    elif sum(scan.examined.values()):
        summary = "judged " + ", ".join(f"{n} {kind}" for kind, n in sorted(scan.examined.items()))
    else:
        summary = (
            "no changed code picks the newest row or file by a time column, decodes persisted state with a "
            "fallback, destroys a session while a resume cursor is persisted"
            + (", or defines a resume entry point" if scan.opts.confirmation_field else "")
        )
    if not scan.opts.confirmation_field:
        summary += "; resume confirmation not configured (confirmation_field is empty)"
    return summary


TEMPLATE = Template(
    reading=Reading(
        idioms="resume",
        unchecked="newest picks, decode fallbacks and resume cursors",
        region_title="Unparsed region in a file with resume idioms",
        tokens=_idiom_tokens,
        paths=_reviewed_paths,
    ),
    start=lambda ctx: Scan(ctx, ctx.program, ctx.opts),
    prepare=_prepare,
    checks=(check_newest, check_corrupt, check_confirm, check_cursor),
    examined=lambda scan: sum(scan.examined.values()),
    unexamined=_proved,
    proved=_proved,
    phrases=None,  # `_proved` words violations too, with the configuration it lacks
    notes_everywhere=True,
)


FAMILY = Family(
    id=FAMILY_ID,
    summary="Recovery state is matched by explicit identity, never by recency, and corrupt state is an error, never empty.",
    checks=CHECKS,
    run=TEMPLATE.run,
    options=OPTIONS,
)
