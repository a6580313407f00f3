"""Run rule families over a change set, failing closed.

A family that raises, or overruns its time budget, becomes an `error`
invariant with an `error` finding: the verdict can only get stricter.
"""

from __future__ import annotations

import traceback
from dataclasses import replace
from typing import TYPE_CHECKING, Iterable

from reviewer.engine.budget import time_budget
from reviewer.change.changeset import ChangeSet
from reviewer.inputs.config import Config
from reviewer.engine.context import ReviewContext, TreeView
from reviewer.report.model import Finding, InvariantResult, InvariantStatus, Severity
from reviewer.engine.api import Family, Outcome, derive_status
from reviewer.engine.facts import keep_words, recall_words, resolve_cached
from reviewer.engine.vocabulary import Vocabulary, say_when_blind

if TYPE_CHECKING:
    from reviewer.engine.cache import OutcomeCache

DEFAULT_BUDGET_SECONDS = 60.0


class BudgetExceeded(Exception):
    pass


def _error_result(family: Family, reason: str) -> InvariantResult:
    finding = Finding(
        rule=f"{family.id}/internal-error",
        severity=Severity.MUST_FIX,
        title=f"{family.id} could not check its invariant",
        message=f"The {family.id} rules stopped with an error, so the invariant is unproven: {reason}",
        location=None,
        anchor=reason,
    )
    return InvariantResult(family.id, InvariantStatus.ERROR, f"rule error: {reason}", (finding,))


def _finish(family: Family, outcome: Outcome, config: Config, vocab: Vocabulary) -> InvariantResult:
    """The invariant of one family: its status derived here, never taken from the family."""
    findings = _distinct(f for f in outcome.findings if f.rule not in config.disabled)
    # A blocking finding is proof the family examined something, even when it
    # forgot to count it or the finding is then disabled.
    blocked = any(f.severity is not Severity.CONSIDER for f in outcome.findings)
    examined = max(outcome.examined, int(blocked))
    status = derive_status(findings, examined, outcome.unreadable)
    said = vocab.statement()
    summary = f"{outcome.summary}; {said}" if said else outcome.summary
    return InvariantResult(family.id, status, summary, findings, examined=examined, vocabulary=vocab.source)


def _distinct(findings: "Iterable[Finding]") -> tuple[Finding, ...]:
    """Findings whose ids collide at different places get an occurrence number in their anchor.

    An id is (rule, path, anchor) so it survives lines moving; two identical
    statements in one file (the same release written twice) would share it,
    and the report, which lists one defect reached from two places once,
    would show one of them. Occurrences are numbered in location order."""
    ordered = sorted(findings, key=lambda f: f.sort_key())
    places: dict[str, list[tuple[int, int] | None]] = {}
    out: list[Finding] = []
    for finding in ordered:
        place = (finding.location.line, finding.location.end_line) if finding.location is not None else None
        seen = places.setdefault(finding.id, [])
        if place in seen or not seen:
            if not seen:
                seen.append(place)
            out.append(finding)
            continue
        seen.append(place)
        out.append(replace(finding, anchor=f"{finding.anchor or finding.title}#{len(seen)}"))
    return tuple(out)


def run_families(
    families: tuple[Family, ...],
    changeset: ChangeSet,
    base: TreeView,
    patched: TreeView,
    config: Config,
    budget_seconds: float = DEFAULT_BUDGET_SECONDS,
    cache: "OutcomeCache | None" = None,
    scope: str = "changed",
) -> tuple[InvariantResult, ...]:
    results: list[InvariantResult] = []
    programs: dict = {}  # shared so every family reuses one parse of each file
    known = _changed_blobs(changeset)
    base.remember(known)
    patched.remember(known)
    change = _change_digest(changeset) if cache is not None else None
    # Inference reads the base tree only when a family could look at something.
    recalled = recall_words(cache, base)
    vocabularies = resolve_cached(cache, families, config, base, programs, infer=bool(changeset.source_paths()),
                                  budget_seconds=budget_seconds)
    # Sorted by id so the report never depends on discovery order; families that judge the
    # others' findings run last (the results are sorted by id again at the end).
    for family in sorted(families, key=lambda f: (f.after_findings, f.id)):
        vocab = vocabularies[family.id]
        if vocab.failed:
            results.append(_error_result(family, f"inferring its vocabulary from the base tree failed: {vocab.failed}"))
            continue
        options = dict(vocab.options)
        # What a family examines depends on the scope (all: unchanged files too), so it is part of the key.
        keyed = {**options, **({"@scope": scope} if scope == "all" else {}), **({"@model": config.model} if config.model else {})}
        prior = tuple(results) if family.after_findings else ()
        if family.after_findings:
            # Its outcome is a function of the other families' results too: key on them.
            keyed["@prior"] = _prior_material(prior)
        key = _cache_key(family, keyed, config, change) if cache is not None and change is not None else None
        cached = cache.load(key) if cache is not None and key is not None else None
        if cached is not None:
            results.append(_finish(family, cached, config, vocab))
            continue
        ctx = ReviewContext(changeset, base, patched, family, options, config.severities, programs, scope=scope,
                            model=config.model, prior=prior)
        try:
            with time_budget(budget_seconds, BudgetExceeded):
                outcome = family.run(ctx)
            if not isinstance(outcome, Outcome):
                raise TypeError(f"run() returned {type(outcome).__name__}, not Outcome")
            results.append(_finish(family, outcome, config, vocab))
        except BudgetExceeded:
            results.append(_error_result(family, f"exceeded its time budget of {budget_seconds:g} s"))
            continue
        except Exception as exc:  # noqa: BLE001 - fail closed on anything a rule raises
            frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
            where = f" at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}" if frame else ""
            results.append(_error_result(family, f"{type(exc).__name__}: {exc}{where}"))
            continue
        # Only a clean conclusion is remembered: an error may be transient
        # (a budget overrun on a loaded machine) and must be retried.
        if cache is not None and key is not None and not outcome.unreadable:
            cache.store(key, outcome)
    results.sort(key=lambda r: r.id)
    judged = tuple(say_when_blind(results, families, vocabularies, base, config))
    keep_words(cache, base, recalled)
    return judged


def _prior_material(prior: tuple[InvariantResult, ...]) -> list:
    """The other families' results as plain data for a cache key: everything a family that reads them may use."""
    return [
        [r.id, r.status.value, r.summary,
         [[f.rule, f.severity.value, f.title, f.message, f.anchor,
           None if f.location is None else [f.location.path, f.location.line, f.location.end_line, f.location.note],
           [[x.path, x.line, x.end_line, x.note] for x in f.related], list(f.failure_sequence)]
          for f in r.findings]]
        for r in prior
    ]


def _changed_blobs(changeset: ChangeSet) -> dict[str, bytes]:
    """Blob id -> content for both sides of every changed file (read once, by reconstruction)."""
    known: dict[str, bytes] = {}
    for f in changeset.files:
        if f.old_blob and f.base_bytes is not None:
            known[f.old_blob] = f.base_bytes
        if f.new_blob and f.patched_bytes is not None:
            known[f.new_blob] = f.patched_bytes
    return known


def _change_digest(changeset: ChangeSet) -> str | None:
    from reviewer.engine.cache import changeset_digest

    try:
        return changeset_digest(changeset)
    except Exception:  # noqa: BLE001 - the cache is an optimisation; review uncached
        return None


def _cache_key(family: Family, options: dict, config: Config, change: str) -> str | None:
    from reviewer.engine.cache import Uncacheable, family_key

    try:
        return family_key(family.id, options, config.severities, change)
    except Uncacheable:
        return None
