"""The report model: frozen values every stage produces and every renderer reads.

Nothing here knows about git, tree-sitter or output formats.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass, field


class Severity(str, enum.Enum):
    MUST_FIX = "must-fix"
    SHOULD_FIX = "should-fix"
    CONSIDER = "consider"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]

    @property
    def heading(self) -> str:
        return self.value.upper()


_SEVERITY_RANK = {Severity.MUST_FIX: 0, Severity.SHOULD_FIX: 1, Severity.CONSIDER: 2}


class Impact(str, enum.Enum):
    """What goes wrong in production when a check's finding is merged: the order
    a maintainer fixes findings in, within one severity (most harmful first)."""

    # The review itself is incomplete: the inputs failed the gate or a family
    # could not finish, so nothing else in the report can be relied on yet.
    REVIEW = "review"
    TWO_OWNERS = "two-owners"
    LOST_OUTCOME = "lost-outcome"
    DUPLICATED_WORK = "duplicated-work"
    STARVATION = "starvation"
    HYGIENE = "hygiene"

    @property
    def rank(self) -> int:
        return _IMPACT_RANK[self]

    @property
    def label(self) -> str:
        return _IMPACT_LABEL[self]


_IMPACT_RANK = {impact: rank for rank, impact in enumerate(Impact)}
_IMPACT_LABEL = {
    Impact.REVIEW: "the review is incomplete",
    Impact.TWO_OWNERS: "two owners of one run",
    Impact.LOST_OUTCOME: "a lost outcome or durable state",
    Impact.DUPLICATED_WORK: "duplicated or misdirected work",
    Impact.STARVATION: "starved or unbounded work",
    Impact.HYGIENE: "hygiene",
}


class CheckStatus(str, enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"


class InvariantStatus(str, enum.Enum):
    VERIFIED = "verified"
    VIOLATED = "violated"
    # A violation seen only outside the change (out of --scope): shown, never blocking.
    PRE_EXISTING = "pre-existing"
    NOT_APPLICABLE = "not-applicable"
    ERROR = "error"


class Verdict(str, enum.Enum):
    MERGE = "MERGE"
    DO_NOT_MERGE = "DO-NOT-MERGE"


@dataclass(frozen=True)
class Location:
    """A 1-based inclusive line range of the patched file (base file if deleted)."""

    path: str
    line: int
    end_line: int
    note: str = ""


@dataclass(frozen=True)
class Finding:
    """One defect. `rule` is `<family>/<check>`."""

    rule: str
    severity: Severity
    title: str
    message: str
    location: Location | None
    related: tuple[Location, ...] = ()
    failure_sequence: tuple[str, ...] = ()
    # Normalised syntax of the reported construct; feeds the stable id so the
    # id survives unrelated lines moving.
    anchor: str = ""

    @property
    def family(self) -> str:
        return self.rule.split("/", 1)[0]

    @property
    def id(self) -> str:
        loc_path = self.location.path if self.location else ""
        key = "\0".join((self.rule, loc_path, self.anchor or self.title))
        return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]

    def sort_key(self) -> tuple[int, str, int, int, str, str]:
        loc = self.location
        return (
            self.severity.rank,
            loc.path if loc else "",
            loc.line if loc else 0,
            loc.end_line if loc else 0,
            self.rule,
            self.id,
        )


@dataclass(frozen=True)
class Check:
    """One integrity check of the inputs (`integrity/<name>`)."""

    id: str
    status: CheckStatus
    detail: str


@dataclass(frozen=True)
class InvariantResult:
    """What one rule family concluded about its invariant."""

    id: str
    status: InvariantStatus
    summary: str
    findings: tuple[Finding, ...] = ()
    # Blocking findings outside the change (out of --scope): listed, never blocking.
    pre_existing: tuple[Finding, ...] = ()
    # How many relevant constructs the family examined (reviewer/engine/api.py
    # `Outcome`); kept so scoping can re-derive the status. Not in the report.
    examined: int = 0
    # Where the family's vocabulary came from: configured, default, inferred,
    # mixed; "" for a family without vocabulary options (reviewer/engine/vocabulary.py).
    vocabulary: str = ""
    # Findings of this family silenced by an honoured suppression: an invariant
    # whose only findings were silenced reads "suppressed", never "verified".
    suppressed: int = 0
    # Findings of this family the base's configuration accepts ([[accept]]): found, never blocking.
    accepted: int = 0


@dataclass(frozen=True)
class FileEntry:
    path: str
    old_path: str | None
    status: str
    added: int = 0
    removed: int = 0
    binary: bool = False


@dataclass(frozen=True)
class PatchInfo:
    name: str
    sha256: str
    files: int
    added: int = 0
    removed: int = 0


@dataclass(frozen=True)
class SuppressedFinding:
    """A finding silenced by a `reviewer-ignore` comment, kept visible in the report."""

    finding: Finding
    path: str
    line: int
    reason: str
    added_by_patch: bool
    # False: a suppression the patch itself adds, for a severity the base's
    # configuration does not let a patch silence ([suppressions] patch_may_silence).
    # The finding then stays in Report.findings and still blocks.
    honoured: bool = True


@dataclass(frozen=True)
class AcceptedFinding:
    """A finding whose stable id an `[[accept]]` entry of the base's configuration names.

    `until` is the entry's last day (ISO date) or None. An expired acceptance
    keeps its finding blocking and is listed so the owner sees why.
    """

    finding: Finding
    reason: str
    until: str | None = None


@dataclass(frozen=True)
class PullRequest:
    """How `reviewer pr` chose the inputs: refs resolved to ids, reviewed from the merge base."""

    base_ref: str
    head_ref: str
    base: str
    head: str
    merge_base: str
    # What chains the versions of one pull request (reviewer/state/stored.py):
    # its number (--pr N or GITHUB_EVENT_PATH), else the head branch's name.
    number: int | None = None
    head_branch: str | None = None


@dataclass(frozen=True)
class Links:
    """Where a report's locations can be opened: permalinks to the reviewed head commit.

    `repository` is a web URL without a trailing slash (https://github.com/owner/repo);
    `run` is the URL of the CI run whose job summary holds the full report.
    """

    repository: str
    commit: str
    run: str | None = None

    def blob(self, path: str, line: int, end_line: int) -> str:
        from urllib.parse import quote

        anchor = f"#L{line}" if end_line <= line else f"#L{line}-L{end_line}"
        return f"{self.repository}/blob/{self.commit}/{quote(path, safe='/')}{anchor}"


@dataclass(frozen=True)
class DeltaItem:
    """A finding as a delta lists it: enough to name it without the old report."""

    id: str
    rule: str
    severity: str
    title: str
    path: str | None
    line: int | None


@dataclass(frozen=True)
class Delta:
    """Findings since a previous review, matched by stable finding id."""

    previous: str  # how the previous review is named: patch, sha256, base
    resolved: tuple[DeltaItem, ...]
    new: tuple[DeltaItem, ...]
    still_open: tuple[DeltaItem, ...]


@dataclass(frozen=True)
class Coverage:
    """Which families examined code of this change, and why the others did not (never green by silence)."""

    families: int
    examined: tuple[str, ...]  # ids of the families that judged code of the change
    not_examined: tuple[tuple[str, str, str], ...]  # (id, status, why): n/a with what was looked for, or error

    def line(self) -> str:
        """`5 of 9 families examined the change`, or that nothing was checked."""
        if not self.examined:
            return f"none of {self.families} families examined the change: nothing was checked"
        return f"{len(self.examined)} of {self.families} families examined the change"


@dataclass(frozen=True)
class Report:
    tool_name: str
    tool_version: str
    ruleset_version: str
    base: str
    patch: PatchInfo
    checks: tuple[Check, ...]
    files: tuple[FileEntry, ...]
    invariants: tuple[InvariantResult, ...]
    findings: tuple[Finding, ...]
    verdict: Verdict
    suppressed: tuple[SuppressedFinding, ...] = ()
    # Must-fix and should-fix findings outside --scope: violations the patch did
    # not cause, listed under their own heading and never counted by the verdict.
    pre_existing: tuple[Finding, ...] = ()
    scope: str = "changed"
    pull_request: PullRequest | None = None
    delta: Delta | None = None
    links: Links | None = None
    # Quoted excerpts of the patched file per finding id, computed once so all
    # renderers show the same text.
    excerpts: dict[str, tuple[tuple[int, str], ...]] = field(default_factory=dict, compare=False, hash=False)
    # Findings an [[accept]] entry names: never blocking (`accepted`), or past
    # its date and blocking again (`expired`, whose findings are in `findings`).
    accepted: tuple[AcceptedFinding, ...] = ()
    expired: tuple[AcceptedFinding, ...] = ()
    # The day acceptances were judged against, when any entry has a date (ISO).
    judged_on: str | None = None
    # reviewer/report/order.py: the root's id of each finding listed beneath
    # one, and the impact of each rule with a finding in the report.
    roots: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    impacts: dict[str, Impact] = field(default_factory=dict, compare=False, hash=False)

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity is severity)

    @property
    def coverage(self) -> Coverage:
        """A family examined code of the change when it verified, violated or found only pre-existing
        violations; `not-applicable` and `error` say why it did not (its basis)."""
        judged = (InvariantStatus.VERIFIED, InvariantStatus.VIOLATED, InvariantStatus.PRE_EXISTING)
        return Coverage(
            len(self.invariants),
            tuple(i.id for i in self.invariants if i.status in judged),
            tuple((i.id, i.status.value, i.summary) for i in self.invariants if i.status not in judged),
        )

    def by_severity(self, severity: Severity) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity is severity)

    @property
    def head(self) -> str | None:
        """The reviewed head commit, when the review is of a pull request."""
        return self.pull_request.head if self.pull_request is not None else None

    def impact(self, finding: Finding) -> Impact:
        return self.impacts.get(finding.rule, Impact.HYGIENE)

    def follows(self, finding: Finding) -> tuple[Finding, ...]:
        """The findings listed beneath `finding`, its root cause."""
        return tuple(f for f in self.findings if self.roots.get(f.id) == finding.id)

    def causes(self, top: int = 3) -> tuple[str, ...]:
        """Why the verdict is DO-NOT-MERGE, one plain-text line per cause, what to
        fix first first (empty for MERGE): every format names each of them.

        Failed checks and families that could not check come first (nothing else
        can be relied on); then the `top` must-fix root causes in report order,
        each with its impact and what follows from it; then how many more."""
        out = [f"integrity check {c.id} failed: {c.detail}" for c in self.checks if c.status is CheckStatus.FAIL]
        errors: dict[str, list[str]] = {}
        for i in self.invariants:
            if i.status is InvariantStatus.ERROR:
                errors.setdefault(i.summary, []).append(i.id)
        for summary, ids in errors.items():
            # The same reason for every family (the patch could not be rebuilt) is one cause, not nine.
            who = f"rule family {ids[0]}" if len(ids) == 1 else f"{len(ids)} rule families ({', '.join(ids)})"
            out.append(f"{who} could not be checked: {summary}")
        # A finding that only repeats a cause already stated (the failed check, the family's error).
        stated = {f"{i}/internal-error" for ids in errors.values() for i in ids}
        stated |= {c.id for c in self.checks if c.status is CheckStatus.FAIL}
        must = [f for f in self.findings if f.severity is Severity.MUST_FIX and f.rule not in stated]
        roots = [f for f in must if f.id not in self.roots]
        for f in roots[:top]:
            where = f" at {f.location.path}:{f.location.line}" if f.location else ""
            after = len(self.follows(f))
            tail = f"; {after} more finding{'' if after == 1 else 's'} follow{'s' if after == 1 else ''} from it" if after else ""
            out.append(f"{f.title}{where} ({self.impact(f).label}{tail})")
        shown = sum(1 + len(self.follows(f)) for f in roots[:top])
        if len(must) > shown:
            rest = len(must) - shown
            out.append(f"{rest} more must-fix finding{'' if rest == 1 else 's'}")
        return tuple(out)


def decide_verdict(
    checks: tuple[Check, ...] | list[Check],
    invariants: tuple[InvariantResult, ...] | list[InvariantResult],
    findings: tuple[Finding, ...] | list[Finding],
) -> Verdict:
    """DESIGN.md: any failed check, must-fix finding or errored rule blocks the merge."""
    if any(c.status is CheckStatus.FAIL for c in checks):
        return Verdict.DO_NOT_MERGE
    if any(i.status is InvariantStatus.ERROR for i in invariants):
        return Verdict.DO_NOT_MERGE
    if any(f.severity is Severity.MUST_FIX for f in findings):
        return Verdict.DO_NOT_MERGE
    return Verdict.MERGE
