"""The pipeline: inputs -> integrity gate -> reconstruction -> rules -> report."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from reviewer import RULESET_VERSION, __version__
from reviewer.changeset import ChangeSet
from reviewer.config import CONFIG_PATH, Config, build_config, defaults, load_config_file, parse_toml
from reviewer.errors import ReviewerError
from reviewer.limits import limits_check, oversized
from reviewer.context import TreeView
from reviewer.engine import run_families
from reviewer.gitio import BlobReader, Repo, open_repo
from reviewer.integrity import GateResult, Inputs, check_base, parse_artifact, parse_sha256, require_full_sha, run_gate
from reviewer.model import (
    Check,
    CheckStatus,
    FileEntry,
    Finding,
    InvariantResult,
    InvariantStatus,
    Location,
    PatchInfo,
    PullRequest,
    Report,
    Severity,
    SuppressedFinding,
    decide_verdict,
)
from reviewer.patchfile import PatchFile, read_patch, section_headers
from reviewer.reconstruct import build_changeset
from reviewer.registry import Family, discover
from reviewer.suppress import Scope, apply_suppressions, in_scope

if TYPE_CHECKING:
    from reviewer.cache import OutcomeCache

EXCERPT_MAX_LINES = 12


@dataclass(frozen=True)
class Request:
    repo: str
    base: str
    patch: str
    patch_sha256: str | None = None
    artifacts: tuple[str, ...] = ()
    expect_files: int | None = None
    config: str | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)
    budget_seconds: float | None = None  # None: the configured limits.rule_seconds
    scope: str = "changed"
    pull_request: PullRequest | None = None
    allow_symlinks: bool = False
    allow_gitlinks: bool = False
    cache_dir: str | None = None  # optional family-outcome cache (reviewer.cache); never changes the report


@dataclass(frozen=True)
class Prepared:
    """Validated inputs: anything wrong here is exit 2, before any report."""

    repo: Repo
    inputs: Inputs


@dataclass(frozen=True)
class Outcome:
    report: Report
    changeset: ChangeSet | None
    gate: GateResult


def prepare(req: Request) -> Prepared:
    repo = open_repo(req.repo)
    base = require_full_sha(repo, req.base)
    expected = parse_sha256(req.patch_sha256, "--patch-sha256") if req.patch_sha256 else None
    if req.expect_files is not None and req.expect_files < 0:
        raise ReviewerError(f"--expect-files must be 0 or more, not {req.expect_files}")
    artifacts = tuple(parse_artifact(a) for a in req.artifacts)
    if req.scope not in {s.value for s in Scope}:
        raise ReviewerError(f"--scope {req.scope!r}: choose changed, file or all")
    if not Path(req.patch).exists():
        read_patch(req.patch)  # raises the precise message
    return Prepared(repo, Inputs(repo, base, PatchFile(Path(req.patch), b""), expected, artifacts, req.expect_files,
                                 req.allow_symlinks, req.allow_gitlinks))


def _load_config(req: Request, repo: Repo, base_tree: str | None, families: tuple[Family, ...]) -> Config:
    if req.config:
        config = load_config_file(req.config, families)
    elif base_tree is not None:
        data = TreeView(repo, base_tree).read(CONFIG_PATH)
        source = f"{CONFIG_PATH} at base"
        config = build_config(parse_toml(data, source), families, source) if data is not None else defaults(families)
    else:
        config = defaults(families)
    if req.overrides:
        config = replace(config, overrides=dict(req.overrides))
    return config


def identity_inputs(req: Request, families: tuple[Family, ...] | None = None) -> tuple[str, Config]:
    """What a stored review is keyed on besides the request itself: the
    repository and the effective configuration (read from the base)."""
    prepared = prepare(req)
    repo = prepared.repo
    families = discover() if families is None else families
    _, base_tree = check_base(repo, prepared.inputs.base)
    return str(repo.git_dir), _load_config(req, repo, base_tree, families)


def _check_findings(checks: tuple[Check, ...]) -> list[Finding]:
    """Every failed integrity check is also a must-fix finding."""
    return [
        Finding(
            rule=check.id,
            severity=Severity.MUST_FIX,
            title=f"Integrity check failed: {check.id.split('/', 1)[1]}",
            message=check.detail,
            location=None,
            anchor=check.detail,
        )
        for check in checks
        if check.status is CheckStatus.FAIL
    ]


def _limits_note(note: str) -> Finding:
    path = note.split(": ", 1)[0]
    return Finding(
        rule="integrity/limits",
        severity=Severity.CONSIDER,
        title="File not analysed: over a size limit",
        message=f"{note}. No rule family parses this kind of file, so the review still stands; raise the limit under [limits] to include it.",
        location=Location(path, 1, 1),
        anchor=note,
    )


def _config_edit_finding(changeset: ChangeSet, config: Config) -> list[Finding]:
    changed = changeset.file(CONFIG_PATH)
    if changed is None:
        return []
    return [
        Finding(
            rule="integrity/config-edited",
            severity=Severity.CONSIDER,
            title=f"The patch edits {CONFIG_PATH}; the edit was not applied",
            message=(
                f"Rules are configured from {config.source}, never from the patch under review, so a patch "
                "cannot weaken the rules that judge it. The new configuration takes effect once merged."
            ),
            location=Location(CONFIG_PATH, 1, 1),
            anchor=CONFIG_PATH,
        )
    ]


def _excerpt(changeset: ChangeSet | None, location: Location | None) -> tuple[tuple[int, str], ...]:
    if changeset is None or location is None:
        return ()
    f = changeset.file(location.path)
    if f is None:
        return ()
    # Lines of the patched file, or of the base file for a deletion (DESIGN.md).
    text = f.patched_text if f.patched_bytes is not None else f.base_text
    if text is None:
        return ()
    lines = text.splitlines()
    start = max(1, location.line)
    end = min(len(lines), location.end_line, start + EXCERPT_MAX_LINES - 1)
    return tuple((n, lines[n - 1]) for n in range(start, end + 1))


def _not_checked(families: tuple[Family, ...], why: str) -> tuple[InvariantResult, ...]:
    return tuple(InvariantResult(f.id, InvariantStatus.ERROR, f"not checked: {why}") for f in families)


def run(req: Request, families: tuple[Family, ...] | None = None, gate_only: bool = False) -> Outcome:
    prepared = prepare(req)
    with tempfile.TemporaryDirectory(prefix="reviewer-objects-") as scratch:
        return _run(req, prepared, prepared.repo.isolated(Path(scratch)), families, gate_only)


def _run(req: Request, prepared: Prepared, repo: Repo, families: tuple[Family, ...] | None, gate_only: bool) -> Outcome:
    families = discover() if families is None else families
    base_check = check_base(repo, prepared.inputs.base)
    base_tree = base_check[1]
    # Configuration (and so the limits) comes from the base, before the patch is even read.
    config = _load_config(req, repo, base_tree, families)
    inputs = replace(prepared.inputs, repo=repo, patch=read_patch(req.patch, config.limits.max_patch_bytes))
    headers = section_headers(inputs.patch)
    gate = run_gate(inputs, headers, config.limits, base_check)

    changeset: ChangeSet | None = None
    notes: list[str] = []
    if gate.reconstructable:
        assert gate.base_tree is not None and gate.patched_tree is not None
        changeset = build_changeset(repo, inputs.base, gate.base_tree, gate.patched_tree, inputs.patch, gate.entries, headers, gate.raw)
        problems, notes = oversized(config.limits, changeset)
        if problems:
            gate = gate.with_check(limits_check(problems))
            changeset = None
    findings = _check_findings(gate.checks)
    if changeset is not None:
        findings += [_limits_note(n) for n in notes]
    if gate_only:
        invariants: tuple[InvariantResult, ...] = ()
    elif changeset is None:
        invariants = _not_checked(families, "the patch could not be reconstructed safely (see the integrity checks)")
    else:
        findings += _config_edit_finding(changeset, config)
        reader = BlobReader(repo)
        try:
            invariants = run_families(
                families, changeset,
                TreeView(repo, changeset.base_tree, reader), TreeView(repo, changeset.patched_tree, reader),
                config, req.budget_seconds if req.budget_seconds is not None else config.limits.rule_seconds,
                cache=_open_cache(req.cache_dir),
            )
        finally:
            reader.close()
    report = assemble(inputs.base, inputs.patch, gate, changeset, invariants, findings, Scope(req.scope), req.pull_request)
    return Outcome(report, changeset, gate)


def _open_cache(directory: str | None) -> "OutcomeCache | None":
    if not directory:
        return None
    from reviewer.cache import OutcomeCache  # lazy: only when --cache-dir is given

    return OutcomeCache(directory)


def empty_report(req: Request, families: tuple[Family, ...] | None = None) -> Report:
    """A pull request whose head adds nothing to its merge base: MERGE, nothing to review."""
    import hashlib
    from pathlib import Path

    repo = open_repo(req.repo)
    base = require_full_sha(repo, req.base)
    families = discover() if families is None else families
    why = "nothing to review: the head adds no change to the merge base"
    checks = (
        Check("integrity/base-commit", CheckStatus.PASS, f"commit {base} exists"),
        Check("integrity/patch-sha256", CheckStatus.SKIP, f"{why} (empty patch, sha256 {hashlib.sha256(b'').hexdigest()})"),
        Check("integrity/artifact-sha256", CheckStatus.SKIP, "no --artifact given"),
        Check("integrity/clean-apply", CheckStatus.SKIP, why),
        Check("integrity/file-count", CheckStatus.SKIP, "0 changed files"),
        Check("integrity/paths", CheckStatus.SKIP, why),
        Check("integrity/limits", CheckStatus.PASS, "within limits"),
    )
    gate = GateResult(checks, repo.tree_of(base), None, ())
    invariants = tuple(InvariantResult(f.id, InvariantStatus.NOT_APPLICABLE, why) for f in families)
    patch = PatchFile(Path("empty.patch"), b"")
    return assemble(base, patch, gate, None, invariants, [], Scope(req.scope), req.pull_request)


def _filter_invariants(
    invariants: tuple[InvariantResult, ...], keep: set[str], suppressed: list[SuppressedFinding]
) -> tuple[InvariantResult, ...]:
    """Drop out-of-scope and suppressed findings; an invariant left without
    blocking findings is verified, and says how many were silenced."""
    silenced: dict[str, int] = {}
    for s in suppressed:
        silenced[s.finding.family] = silenced.get(s.finding.family, 0) + 1
    out = []
    for inv in invariants:
        findings = tuple(f for f in inv.findings if f.id in keep)
        status, summary = inv.status, inv.summary
        if status is InvariantStatus.VIOLATED and not any(f.severity is not Severity.CONSIDER for f in findings):
            status = InvariantStatus.VERIFIED
        if silenced.get(inv.id):
            summary = f"{summary} ({silenced[inv.id]} suppressed)"
        out.append(InvariantResult(inv.id, status, summary, findings))
    return tuple(out)


def assemble(
    base: str,
    patch: PatchFile,
    gate: GateResult,
    changeset: ChangeSet | None,
    invariants: tuple[InvariantResult, ...],
    extra_findings: list[Finding],
    scope: Scope = Scope.CHANGED,
    pull_request: PullRequest | None = None,
) -> Report:
    raw = [*extra_findings, *(f for inv in invariants for f in inv.findings)]
    scoped = [f for f in raw if f.family == "integrity" or in_scope(f, changeset, scope)]
    kept, silenced = apply_suppressions(scoped, changeset)
    suppressed = sorted(
        (SuppressedFinding(s.finding, s.directive.path, s.directive.line, s.directive.reason, s.directive.added_by_patch)
         for s in silenced),
        key=lambda s: s.finding.sort_key(),
    )
    invariants = _filter_invariants(invariants, {f.id for f in kept}, suppressed)
    # The same defect can be reached from two places; report it once.
    unique = {f.id: f for f in kept}
    findings = sorted(unique.values(), key=lambda f: f.sort_key())
    if changeset is not None:
        files = tuple(
            FileEntry(f.path, f.old_path, f.status.value, f.added_count, f.removed_count, f.binary) for f in changeset.files
        )
    else:
        files = tuple(
            FileEntry(e.path, None, "unknown", e.added or 0, e.removed or 0, e.added is None) for e in gate.entries
        )
    info = PatchInfo(
        name=patch.name,
        sha256=patch.sha256,
        files=len(gate.entries),
        added=sum(e.added or 0 for e in gate.entries),
        removed=sum(e.removed or 0 for e in gate.entries),
    )
    excerpts = {f.id: _excerpt(changeset, f.location) for f in findings}
    excerpts.update({s.finding.id: _excerpt(changeset, s.finding.location) for s in suppressed})
    return Report(
        tool_name="reviewer",
        tool_version=__version__,
        ruleset_version=RULESET_VERSION,
        base=base,
        patch=info,
        checks=gate.checks,
        files=files,
        invariants=invariants,
        findings=tuple(findings),
        verdict=decide_verdict(gate.checks, invariants, findings),
        suppressed=tuple(suppressed),
        scope=scope.value,
        pull_request=pull_request,
        excerpts=excerpts,
    )
