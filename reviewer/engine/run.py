"""Run rule families over a change set, failing closed.

A family that raises, or overruns its time budget, becomes an `error`
invariant with an `error` finding: the verdict can only get stricter.
"""

from __future__ import annotations

import dataclasses
import traceback
from typing import TYPE_CHECKING

from reviewer.engine.budget import time_budget
from reviewer.change.changeset import ChangeSet
from reviewer.inputs.config import Config
from reviewer.engine.context import ReviewContext, TreeView
from reviewer.report.model import Finding, InvariantResult, InvariantStatus, Severity
from reviewer.engine.api import Family, Outcome, derive_status
from reviewer.engine.registry import IDIOMS_NOT_FOUND

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


def _finish(family: Family, outcome: Outcome, config: Config) -> InvariantResult:
    """The invariant of one family: its status derived here, never taken from the family."""
    findings = tuple(f for f in outcome.findings if f.rule not in config.disabled)
    # A blocking finding is proof the family examined something, even when it
    # forgot to count it or the finding is then disabled.
    blocked = any(f.severity is not Severity.CONSIDER for f in outcome.findings)
    examined = max(outcome.examined, int(blocked))
    status = derive_status(findings, examined, outcome.unreadable)
    return InvariantResult(family.id, status, outcome.summary, findings, examined=examined)


def run_families(
    families: tuple[Family, ...],
    changeset: ChangeSet,
    base: TreeView,
    patched: TreeView,
    config: Config,
    budget_seconds: float = DEFAULT_BUDGET_SECONDS,
    cache: "OutcomeCache | None" = None,
) -> tuple[InvariantResult, ...]:
    results: list[InvariantResult] = []
    programs: dict = {}  # shared so every family reuses one parse of each file
    known = _changed_blobs(changeset)
    base.remember(known)
    patched.remember(known)
    change = _change_digest(changeset) if cache is not None else None
    # Sorted by id so the report never depends on discovery order.
    for family in sorted(families, key=lambda f: f.id):
        options = dict(config.for_family(family.id))
        options.update({k: v for k, v in config.overrides.items() if k in family.defaults})
        key = _cache_key(family, options, config, change) if cache is not None and change is not None else None
        cached = cache.load(key) if cache is not None and key is not None else None
        if cached is not None:
            results.append(_finish(family, cached, config))
            continue
        ctx = ReviewContext(changeset, base, patched, family, options, config.severities, programs)
        try:
            with time_budget(budget_seconds, BudgetExceeded):
                outcome = family.run(ctx)
            if not isinstance(outcome, Outcome):
                raise TypeError(f"run() returned {type(outcome).__name__}, not Outcome")
            results.append(_finish(family, outcome, config))
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
    return tuple(_say_when_blind(results, families, base, config))


def _vocabulary(family: Family, config: Config) -> dict[str, tuple[str, ...]]:
    """Each configured vocabulary option's names, as the identifier that must exist (`Claim.clear` -> `Claim`)."""
    configured = config.for_family(family.id)
    out: dict[str, tuple[str, ...]] = {}
    for option in family.options:
        if option.vocabulary:
            value = configured.get(option.name, option.default)
            values = value if isinstance(value, list) else [value]
            out[option.name] = tuple(str(v).replace("()", "").split(".")[0] for v in values if str(v))
    return out


def _say_when_blind(
    results: list[InvariantResult], families: tuple[Family, ...], base: TreeView, config: Config
) -> list[InvariantResult]:
    """An `n/a` family whose configured names do not occur in the base tree says so (summary and note).

    One `git grep` for every such family together, and only when one is n/a.
    """
    by_id = {f.id: f for f in families}
    idle = [r for r in results if r.status is InvariantStatus.NOT_APPLICABLE]
    wanted = {r.id: vocab for r in idle if (vocab := _vocabulary(by_id[r.id], config))}
    if not wanted:
        return results
    present = base.words_present(sorted({w for vocab in wanted.values() for words in vocab.values() for w in words}))
    out = []
    for result in results:
        vocab = wanted.get(result.id)
        missing = [name for name, words in (vocab or {}).items() if words and not set(words) & present]
        if not missing:
            out.append(result)
            continue
        shown = ", ".join(f"`{name}`" for name in missing)
        rule = f"{result.id}/{IDIOMS_NOT_FOUND}"
        findings = result.findings
        if rule not in config.disabled:
            names = "; ".join(f"{name} = {', '.join(vocab[name])}" for name in missing)  # type: ignore[index]
            findings = (*findings, Finding(
                rule=rule,
                severity=config.severities.get(rule, Severity.CONSIDER),
                title=f"{result.id}: configured {shown} name nothing in this code base",
                message=(
                    f"{result.id} found nothing to check, and no TypeScript file of the base tree names any of "
                    f"these ({names}), so the checks that look for them cannot fire here: `n/a` may mean the "
                    f"family did not know what to look for, not that the patch is safe. Set the code base's own "
                    f"names under [rules.{result.id}]."
                ),
                location=None,
                anchor=f"{rule}:{','.join(missing)}",
            ))
        summary = f"{result.summary}; configured {shown} name nothing in the base tree, so it could not look for them"
        out.append(dataclasses.replace(result, summary=summary, findings=findings))
    return out


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
