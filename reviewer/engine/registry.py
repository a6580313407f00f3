"""Rule families: discovery of the built-in ones, and the catalog of every check.

A family (reviewer/engine/api.py) is one module under `rules/` (installed as `reviewer.rules`) that
defines a module-level `FAMILY`. Modules whose name starts with `_` are
helpers, not families.

Some findings come from the pipeline itself, not from a family: the integrity
gate (`integrity/*`, specified in reviewer/gate/integrity.py), the checks on
`reviewer-ignore` comments (`suppression/*`, in reviewer/engine/suppress.py) and the
`<family>/internal-error` a family becomes when it raises or overruns its
budget (here). They are documented like any check, as `CheckGroup`s that
never run (`builtin_groups()`), and can never be re-rated or disabled
(`locked_reason`). `catalog(families)` lists everything a report can name:
what `reviewer rules`, `--explain`, configuration and SARIF read.
`discover()` and the engine see only the runnable families.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from reviewer.engine.api import INTERNAL_ERROR, CheckGroup, CheckSpec, Family
from reviewer.engine.suppress import SUPPRESSION
from reviewer.gate.integrity import INTEGRITY
from reviewer.report.model import Impact, Severity


def discover(package: str = "reviewer.rules") -> tuple[Family, ...]:
    """Import every family module of `package`, sorted by family id."""
    pkg = importlib.import_module(package)
    families: list[Family] = []
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module: ModuleType = importlib.import_module(f"{package}.{info.name}")
        family = getattr(module, "FAMILY", None)
        if not isinstance(family, Family):
            raise TypeError(f"{package}.{info.name} defines no FAMILY")
        families.append(family)
    ids = [f.id for f in families]
    if len(set(ids)) != len(ids):
        raise TypeError(f"duplicate rule family ids in {package}: {ids}")
    return tuple(sorted(families, key=lambda f: f.id))



# ------------------------------------------------------------------ the catalog


def internal_error_check(family_id: str) -> CheckSpec:
    """The must-fix finding `family_id` becomes when it raises or overruns its time budget (reviewer.engine.run)."""
    return CheckSpec(
        id=f"{family_id}/{INTERNAL_ERROR}",
        severity=Severity.MUST_FIX,
        impact=Impact.REVIEW,
        title=f"{family_id} could not check its invariant",
        summary=(
            f"The {family_id} rules raised an exception or overran their time budget ([limits] rule_seconds), "
            "so the invariant is `error` and the verdict is DO-NOT-MERGE."
        ),
        why=(
            "Fail closed: a family that stopped half-way has not looked at everything it must, and its silence "
            "would read as \"nothing found\". The finding names the exception and where it was raised (or the "
            "budget it overran), so the cause can be fixed; it is never a verdict on the patch's code itself."
        ),
        bad=(
            "# reviewer.toml at the base\n"
            "[limits]\n"
            "rule_seconds = 0.5   # too tight for a real change: every family overruns and errors"
        ),
        good=(
            "[limits]\n"
            "rule_seconds = 60    # the default; an exception instead is a bug: report it with the patch"
        ),
    )


def builtin_groups() -> tuple[CheckGroup, ...]:
    """The checks the pipeline raises itself, sorted by id: `integrity`, `suppression`."""
    return tuple(sorted((INTEGRITY, SUPPRESSION), key=lambda g: g.id))


IDIOMS_NOT_FOUND = "idioms-not-found"


def idioms_not_found_check(family_id: str) -> CheckSpec:
    """The note the engine adds when `family_id` found nothing to check and its
    configured vocabulary does not occur in the base tree (reviewer/engine/vocabulary.py)."""
    return CheckSpec(
        id=f"{family_id}/{IDIOMS_NOT_FOUND}",
        severity=Severity.CONSIDER,
        impact=Impact.HYGIENE,
        title=f"{family_id}: configured names that name nothing in this code base",
        summary=(
            f"The {family_id} family found nothing to check, and none of the names of one or more of its "
            "vocabulary options occurs in the base tree's TypeScript, so `n/a` means \"not looked for\", not \"safe\"."
        ),
        why=(
            "Never green by silence: the defaults describe one code base's idioms. In another code base the same "
            "invariant is written with other names, and a family that looks for names that do not exist reports "
            "`n/a` on every patch, which a maintainer reads as a pass. The note names each option and its values "
            "so the family can be pointed at the code base's own API under [rules.<family>]."
        ),
        bad=(
            "# reviewer.toml: nothing configured, and the code base calls its lease API `Lease.extend`\n"
            "# -> lease-renewal is n/a on every patch"
        ),
        good=(
            "[rules.lease-renewal]\n"
            "renew = [\"Lease.extend\"]\n"
            "release = [\"Lease.drop\"]"
        ),
    )


def family_group(family: Family) -> CheckGroup:
    """`family` as the catalog shows it: its checks, its idioms-not-found note
    when it declares vocabulary options, then its internal-error."""
    blind = (idioms_not_found_check(family.id),) if any(o.vocabulary for o in family.options) else ()
    return CheckGroup(family.id, family.summary, (*family.checks, *blind, internal_error_check(family.id)), family=family)


def catalog(families: tuple[Family, ...]) -> tuple[CheckGroup, ...]:
    """Everything a report can name: each family (sorted by id), then the built-in groups (sorted by id)."""
    groups = [family_group(f) for f in sorted(families, key=lambda f: f.id)]
    builtin = builtin_groups()
    clash = {g.id for g in groups} & {g.id for g in builtin}
    if clash:
        raise TypeError(f"rule family ids {sorted(clash)} are reserved for built-in checks")
    return (*groups, *builtin)


def catalog_checks(families: tuple[Family, ...]) -> tuple[CheckSpec, ...]:
    """Every check of `catalog(families)`, in catalog order."""
    return tuple(spec for group in catalog(families) for spec in group.checks)


def locked_reason(families: tuple[Family, ...], rule_id: str) -> str | None:
    """Why configuration may never re-rate or disable `rule_id` (a check or group id), or None when it may."""
    return next((why for group in catalog(families) if (why := group.locked_for(rule_id))), None)


def impacts(families: tuple[Family, ...]) -> dict[str, Impact]:
    """The impact of every check a report can name (reviewer/report/order.py orders by it)."""
    return {spec.id: spec.impact or Impact.HYGIENE for group in catalog(families) for spec in group.checks}
