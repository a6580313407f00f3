"""Rule families: what one is, and how the built-in ones are discovered.

A family is one module under `rules/` (installed as `reviewer.rules`) that
defines a module-level `FAMILY`. Modules whose name starts with `_` are
helpers, not families.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Mapping

from reviewer.model import Finding, InvariantStatus, Severity

if TYPE_CHECKING:
    from reviewer.context import ReviewContext


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

