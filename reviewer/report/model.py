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

    def causes(self) -> tuple[str, ...]:
        """Why the verdict is DO-NOT-MERGE, one plain-text line per cause
        (empty for MERGE): every format names each of them."""
        out = [f"integrity check {c.id} failed: {c.detail}" for c in self.checks if c.status is CheckStatus.FAIL]
        out += [f"rule family {i.id} could not be checked: {i.summary}"
                for i in self.invariants if i.status is InvariantStatus.ERROR]
        must = self.count(Severity.MUST_FIX)
        if must:
            out.append(f"{must} must-fix finding{'' if must == 1 else 's'}")
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
