"""Rule families: what one is, and how the built-in ones are discovered.

A family is one module under `rules/` (installed as `reviewer.rules`) that
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
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Mapping

from reviewer.report.model import Finding, InvariantStatus, Severity

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext


@dataclass(frozen=True)
class CheckSpec:
    """One check of a family, documented the way `reviewer rules --explain` shows it."""

    id: str  # "<family>/<check>"
    severity: Severity
    title: str
    summary: str
    why: str = ""
    bad: str = ""
    good: str = ""

    @property
    def name(self) -> str:
        return self.id.split("/", 1)[1]


def parse_error_check(family_id: str, title: str, summary: str, why: str) -> CheckSpec:
    """The `consider` note every family gives for an ERROR region it could not read.

    Same example for all: the region is tree-sitter's, not the author's, so
    there is nothing to change but a review by hand.
    """
    return CheckSpec(
        id=f"{family_id}/parse-error",
        severity=Severity.CONSIDER,
        title=title,
        summary=summary,
        why=why,
        bad="interface KeyedMutex<in Key> { ... }   // variance annotation the grammar does not parse",
        good="(nothing to change; review the region by hand)",
    )


@dataclass(frozen=True)
class Outcome:
    """What a family's `run` returns; `violated` is derived from the findings."""

    status: InvariantStatus
    summary: str
    findings: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class Family:
    id: str
    summary: str
    checks: tuple[CheckSpec, ...]
    run: Callable[["ReviewContext"], Outcome]
    # Options a maintainer may set under [rules.<id>] in reviewer.toml, with
    # the built-in defaults (the opencode idioms).
    defaults: Mapping[str, Any] = field(default_factory=dict)

    def check(self, name: str) -> CheckSpec:
        full = name if "/" in name else f"{self.id}/{name}"
        for spec in self.checks:
            if spec.id == full:
                return spec
        raise KeyError(f"{self.id} has no check {name!r}")


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


@dataclass(frozen=True)
class CheckGroup:
    """A documented group of checks: one runnable family, or a built-in group.

    Built-in groups (`integrity`, `suppression`) are raised by the pipeline,
    never run by the engine, and `locked` says why configuration can never
    re-rate or disable them. A family's group is its own checks plus its
    `<family>/internal-error` (locked too: see `locked_for`); `family` is the
    runnable `Family` (its options, `run`), None for a built-in group.
    """

    id: str
    summary: str
    checks: tuple[CheckSpec, ...]
    locked: str = ""  # why [severity]/[disable] may not name these checks; "" when they may
    family: Family | None = None

    @property
    def builtin(self) -> bool:
        return self.family is None

    def check(self, rule_id: str) -> CheckSpec | None:
        return next((spec for spec in self.checks if spec.id == rule_id), None)

    def locked_for(self, rule_id: str) -> str:
        """Why configuration may never name `rule_id` (this group, or a check of it); "" when it may or it is not ours."""
        if self.family is None:
            return self.locked if rule_id == self.id or self.check(rule_id) is not None else ""
        return INTERNAL_ERROR_LOCKED if rule_id == f"{self.id}/{INTERNAL_ERROR}" else ""


INTERNAL_ERROR = "internal-error"
INTERNAL_ERROR_LOCKED = (
    "a rule error can never be re-rated or disabled: a family that raised or overran its time budget "
    "proved nothing, so the verdict fails closed"
)


def internal_error_check(family_id: str) -> CheckSpec:
    """The must-fix finding `family_id` becomes when it raises or overruns its time budget (reviewer.engine.run)."""
    return CheckSpec(
        id=f"{family_id}/{INTERNAL_ERROR}",
        severity=Severity.MUST_FIX,
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
    # Imported here: those modules import CheckSpec from this one.
    from reviewer.gate.integrity import INTEGRITY
    from reviewer.engine.suppress import SUPPRESSION

    return tuple(sorted((INTEGRITY, SUPPRESSION), key=lambda g: g.id))


def family_group(family: Family) -> CheckGroup:
    """`family` as the catalog shows it: its checks, then its internal-error."""
    return CheckGroup(family.id, family.summary, (*family.checks, internal_error_check(family.id)), family=family)


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
