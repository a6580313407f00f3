"""The rule API: everything a rule family is written with.

A family is one module under `rules/` that defines `FAMILY = Family(...)`:

    OPTIONS = (
        Option("tables", ["SessionInputTable"], Kind.NAMES, "Tables recovery scans read."),
        Option("bound", 100, Kind.INTEGER, "Largest page a scan may read at once."),
    )
    CHECKS = (CheckSpec("bounded-scan/unbounded", Severity.MUST_FIX, "Unbounded scan", "..."),)
    TEMPLATE = Template(reading=Reading(...), start=Run, checks=(check_unbounded,), proved=..., phrases=...)
    FAMILY = Family("bounded-scan", "Recovery scans are bounded.", CHECKS, TEMPLATE.run, OPTIONS)

`run` receives a `ReviewContext` (reviewer/engine/context.py: the change set,
both trees, the TypeScript model, the typed options) and returns an
`Outcome`: its findings and the facts its basis is built from. Every family's
`run` is its `Template`'s (reviewer/engine/template.py: the one skeleton of
reviewed files, parse errors, relevance, checks, notes and basis). It never
decides its own status; the engine derives it (`derive_status`).
docs/development.md walks through adding a check and adding a family.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

from reviewer.gate.limits import INT_MAX, is_finite_number, is_integer
from reviewer.report.model import Finding, Impact, InvariantStatus, Severity

if TYPE_CHECKING:
    from reviewer.engine.context import Corpus, ReviewContext

# ------------------------------------------------------------------ checks


@dataclass(frozen=True)
class CheckSpec:
    """One check of a family, documented the way `reviewer rules --explain` shows it.

    `severity` is the default a maintainer may re-rate under `[severity]`;
    `why`, `bad` and `good` are the rule's documentation (what it prevents, a
    violating and a correct example). `impact` is what goes wrong when a
    finding of the check is merged; it orders findings of one severity (the
    catalog refuses a check that does not say).
    """

    id: str  # "<family>/<check>"
    severity: Severity
    title: str
    summary: str
    why: str = ""
    bad: str = ""
    good: str = ""
    impact: Impact | None = None

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
        impact=Impact.HYGIENE,
        title=title,
        summary=summary,
        why=why,
        bad="const x = f(a, b))   // a region tree-sitter cannot parse (not the shapes repair.py mends)",
        good="(nothing to change; review the region by hand)",
    )


def handler_unresolved_check(family_id: str, unchecked: str) -> CheckSpec:
    """The `consider` note a family gives for a handler passed by a name the model cannot follow.

    A role (failure handler, finalizer) comes from where code is passed; when
    the name passed is a parameter or a runtime property, the code that runs
    in that role is unknown, so what the family checks there was not checked.
    """
    return CheckSpec(
        id=f"{family_id}/handler-unresolved",
        severity=Severity.CONSIDER,
        impact=Impact.HYGIENE,
        title="Handler passed by a name the reviewer cannot follow",
        summary=(
            "A changed call hands a failure handler or finalizer over by a name the model cannot resolve "
            f"(a parameter, a property of a runtime object), so {unchecked} inside it were not checked."
        ),
        why=(
            "Never green by silence: the code a combinator runs as its handler or finalizer is exactly where "
            f"{unchecked} matter, and a name whose value is only known at run time hides it. The note names the "
            "call so a reviewer can check the handler by hand."
        ),
        bad="export const guarded = (work, cleanup) => work.pipe(Effect.ensuring(cleanup))   // cleanup: a parameter",
        good="work.pipe(Effect.ensuring(SessionExecutionClaim.release(db, claim)))   // or a const/function the reviewer resolves",
    )


# ------------------------------------------------------------------ options


class Kind(str, enum.Enum):
    """What an option holds; decides validation, typed access and how the reference shows it."""

    NAMES = "a list of strings"  # identifiers, dotted callees, columns, tags
    GLOBS = "a list of path globs"  # `**` crosses directories (reviewer/engine/globs.py)
    TEXT = "a string"
    PATTERN = "a regular expression"  # Python `re` syntax, matched against names, never contents
    INTEGER = "a non-negative integer"
    NUMBER = "a non-negative finite number"


@dataclass(frozen=True)
class Option:
    """One option of a family, declared once.

    Its default, its `reviewer.toml` validation (`problem`), the typed value a
    rule reads (`typed`), `reviewer rules --explain` and docs/rules/ are all
    derived from this declaration.
    """

    name: str
    default: Any
    kind: Kind
    description: str
    # The code base's own names (an API, a table, a hook): when the family finds
    # nothing to check and none of them occurs in the base tree, the engine says
    # the family is blind there instead of reading "n/a" as "safe".
    vocabulary: bool = False

    def problem(self, value: Any) -> str | None:
        """Why `value` cannot be this option's value, or None when it can.

        Numbers must be finite and non-negative: numeric options are bounds,
        depths, indices and fractions, and a NaN compares false with
        everything, which would silently switch a check off.
        """
        kind = self.kind
        if kind in (Kind.NAMES, Kind.GLOBS):
            ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
            if ok and any("\0" in v or "\n" in v for v in value):
                return "must not hold a NUL byte or a line break in a name"
            return None if ok else f"must be {kind.value}"
        if kind is Kind.TEXT:
            return None if isinstance(value, str) else "must be a string"
        if kind is Kind.PATTERN:
            if not isinstance(value, str):
                return "must be a string holding a regular expression"
            try:
                re.compile(value)
            except re.error as exc:
                return f"is not a valid regular expression ({exc})"
            return None
        if kind is Kind.INTEGER:
            return None if is_integer(value) and 0 <= value <= INT_MAX else f"must be {kind.value}"
        return None if is_finite_number(value) and value >= 0 else f"must be {kind.value}"

    def normal(self, value: Any) -> Any:
        """One spelling per value (`= 1` and `= 1.0` are one configuration, with one digest)."""
        return float(value) if self.kind is Kind.NUMBER else value

    def typed(self, value: Any) -> Any:
        """The value as rules read it: lists as tuples, numbers as float, patterns compiled."""
        if self.kind in (Kind.NAMES, Kind.GLOBS):
            return (value,) if isinstance(value, str) else tuple(str(v) for v in value)
        if self.kind is Kind.PATTERN:
            return re.compile(value)
        if self.kind is Kind.NUMBER:
            return float(value)
        if self.kind is Kind.INTEGER:
            return int(value)
        return str(value)


class Options(Mapping[str, Any]):
    """A family's effective options, typed: `opts.release` is a `tuple[str, ...]`.

    Built from the declarations and the configured (already validated)
    values; a name the family did not declare is an AttributeError, so a
    misspelt option in a rule fails the family closed instead of reading None.
    """

    def __init__(self, declared: tuple[Option, ...], values: Mapping[str, Any]) -> None:
        self._typed = {o.name: o.typed(values.get(o.name, o.default)) for o in declared}

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_typed"][name]
        except KeyError:
            raise AttributeError(f"no option {name!r} is declared") from None

    def __getitem__(self, name: str) -> Any:
        return self._typed[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._typed)

    def __len__(self) -> int:
        return len(self._typed)


# ------------------------------------------------------------------ outcome


@dataclass(frozen=True)
class Outcome:
    """What a family's `run` returns: findings and the facts of its basis, never a status.

    - `summary`: the invariant's basis, one line (what was checked, or what was found).
    - `findings`: every finding, blocking or not, anchored where the defect is.
    - `examined`: how many relevant constructs the family looked at (changed
      files with its idioms, queries, snapshots ...); 0 means there was
      nothing relevant and the invariant is `n/a`.
    - `unreadable`: why the family could not judge the change at all (an
      ERROR region over its idioms in changed lines); the invariant is `error`.
    """

    summary: str
    findings: tuple[Finding, ...] = ()
    examined: int = 0
    unreadable: str = ""


def derive_status(
    findings: tuple[Finding, ...], examined: int, unreadable: str = "", pre_existing: tuple[Finding, ...] = ()
) -> InvariantStatus:
    """The one rule for an invariant's status, applied by the engine and after scoping.

    `error` when the family could not read what it must; `violated` when a
    blocking finding remains in scope; `pre-existing` when blocking findings
    remain only outside the change; `verified` only when it examined
    something and nothing blocking remains anywhere it looked; otherwise `n/a`.
    """
    if unreadable:
        return InvariantStatus.ERROR
    if any(f.severity is not Severity.CONSIDER for f in findings):
        return InvariantStatus.VIOLATED
    if pre_existing:
        return InvariantStatus.PRE_EXISTING
    return InvariantStatus.VERIFIED if examined > 0 else InvariantStatus.NOT_APPLICABLE


# ------------------------------------------------------------------ vocabulary


@dataclass(frozen=True)
class Evidence:
    """Where an inferred name comes from: `path:line` of the base tree and what is there."""

    path: str
    line: int
    note: str

    def render(self) -> str:
        return f"{self.path}:{self.line} {self.note}"


@dataclass(frozen=True)
class Proposal:
    """What a family infers for one vocabulary option from the base tree (`Family.infer`).

    `names` may be empty: the family looked (`looked_for` says for what) and
    found nothing, which the review says out loud instead of reading as safe.
    """

    option: str
    names: tuple[str, ...]
    evidence: tuple[Evidence, ...]
    looked_for: str


# ------------------------------------------------------------------ family


@dataclass(frozen=True)
class Family:
    """A rule family: its checks, its options, and `run`."""

    id: str
    summary: str
    checks: tuple[CheckSpec, ...]
    run: Callable[["ReviewContext"], Outcome]
    # What a maintainer may set under [rules.<id>] in reviewer.toml; the
    # defaults describe the opencode idioms.
    options: tuple[Option, ...] = ()
    # Proposes the code base's own names for the vocabulary options, read from
    # the base tree (reviewer/engine/vocabulary.py decides when they are used).
    infer: "Callable[[Corpus], tuple[Proposal, ...]] | None" = None
    # What `infer` first greps the tree for, per option: (option, regex, the fixed
    # strings every match contains). The hints of every option to be inferred are
    # read in one fixed-string pass (`Corpus.candidates` then asks git nothing).
    infer_hints: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    # Runs after every family without it and receives their results (`ReviewContext.prior`):
    # a family that judges the other families' findings (regression-evidence). Its outcome
    # depends on those findings, so the engine keys its cache entry on them too.
    after_findings: bool = False

    def __post_init__(self) -> None:
        names = [o.name for o in self.options]
        if len(set(names)) != len(names):
            raise TypeError(f"{self.id} declares an option twice: {names}")
        for option in self.options:
            why = option.problem(option.default)
            if why:
                raise TypeError(f"{self.id} option {option.name}: its default {why}")

    @property
    def defaults(self) -> dict[str, Any]:
        return {o.name: o.default for o in self.options}

    def option(self, name: str) -> Option | None:
        return next((o for o in self.options if o.name == name), None)

    def check(self, name: str) -> CheckSpec:
        full = name if "/" in name else f"{self.id}/{name}"
        for spec in self.checks:
            if spec.id == full:
                return spec
        raise KeyError(f"{self.id} has no check {name!r}")


# ------------------------------------------------------------------ catalog groups


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
