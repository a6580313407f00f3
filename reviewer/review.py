"""The pipeline: inputs -> integrity gate -> reconstruction -> rules -> report."""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping

from reviewer import RULESET_VERSION, __version__
from reviewer.engine.budget import time_budget
from reviewer.change.changeset import ChangeSet
from reviewer.inputs.config import (
    CONFIG_PATH, Acceptance, Config, Suppressions, config_in_tree, defaults, load_config_file,
)
from reviewer.engine.accept import apply_accepts, today
from reviewer.errors import ReviewerError
from reviewer.gate.limits import file_limits, limits_check
from reviewer.engine.context import TreeView
from reviewer.display import code_line
from reviewer.engine.run import run_families
from reviewer.gitio import BlobReader, Repo, open_repo
from reviewer.gate.integrity import (
    GateResult,
    Inputs,
    check_base,
    integrity_check,
    parse_artifact,
    parse_sha256,
    printable_path,
    require_full_sha,
    run_gate,
)
from reviewer.report.model import (
    AcceptedFinding,
    Check,
    CheckStatus,
    FileEntry,
    Finding,
    Impact,
    InvariantResult,
    InvariantStatus,
    Links,
    Location,
    PatchInfo,
    PullRequest,
    Report,
    Severity,
    SuppressedFinding,
    decide_verdict,
)
from reviewer.inputs.patchfile import STDIN, PatchFile, read_patch, section_headers
from reviewer.change.reconstruct import build_changeset, unique_entries
from reviewer.engine.api import Family, derive_status
from reviewer.engine.registry import discover, impacts
from reviewer.report.order import arrange
from reviewer.engine.suppress import Scope, apply_suppressions, in_scope

if TYPE_CHECKING:
    from reviewer.engine.cache import OutcomeCache
    from reviewer.engine.shared import Shared

EXCERPT_MAX_LINES = 12
_TOML_AT = re.compile(r"not valid TOML \(.*\(at line ([0-9]{1,9}), column [0-9]{1,9}\)\)\Z", re.S)
EMPTY = PatchFile.of("empty.patch", b"")


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
    cache_dir: str | None = None  # optional family-outcome cache (reviewer.engine.cache); never changes the report
    # Where reviewer.toml is read when it is not the base: a pull request is
    # judged by its target branch's rules, never by a merge base its author
    # chose (which may predate a tightened configuration).
    config_commit: str | None = None
    # Permalinks for every location of the report (reviewer/report/model.py `Links`).
    links: Links | None = None
    # Content-addressed work reused between the reviews of one process (`reviewer
    # sweep`, reviewer/engine/shared.py); never changes the report.
    shared: "Shared | None" = field(default=None, compare=False)
    # How stored reviews name the repository (`--repo-id`); None: its git directory's path.
    # A CI job that fetches into a fresh directory each run names it so its runs chain.
    repo_id: str | None = None


@dataclass(frozen=True)
class Prepared:
    """Validated inputs, each read exactly once: anything wrong here is exit 2, before any report.

    The patch bytes and artifact digests here are what the review checks,
    what a stored review is keyed on, and what git is given.
    """

    repo: Repo
    inputs: Inputs
    config: Config
    families: tuple[Family, ...]
    base_check: tuple[Check, str | None]


@dataclass(frozen=True)
class Reviewed:
    """A finished review: the report, and what it was built from (for stored records and deltas)."""

    report: Report
    changeset: ChangeSet | None
    gate: GateResult


class ReviewOverrun(BaseException):
    """The whole review ran out of time. A BaseException, so no rule wrapper
    catching `Exception` can turn it into a partial (and so too lenient) result."""


def _validate(req: Request) -> None:
    if req.expect_files is not None and req.expect_files < 0:
        raise ReviewerError(f"--expect-files must be 0 or more, not {req.expect_files}")
    if req.scope not in {s.value for s in Scope}:
        raise ReviewerError(f"--scope {req.scope!r}: choose changed, file or all")


@contextmanager
def prepared(req: Request, families: tuple[Family, ...] | None = None) -> Iterator[Prepared]:
    """Open the repository, load the base's configuration, read the patch once.

    The body runs inside the whole review's time budget (`limits.review_seconds`),
    which starts before the patch is read: a patch that never ends (a FIFO,
    standard input) is bounded too.
    """
    repo = open_repo(req.repo)
    try:
        base = require_full_sha(repo, req.base)
        expected = parse_sha256(req.patch_sha256, "--patch-sha256") if req.patch_sha256 else None
        _validate(req)
        artifacts = tuple(parse_artifact(a) for a in req.artifacts)
        if req.patch != STDIN and not Path(req.patch).exists():
            read_patch(req.patch)  # raises the precise message
        families = discover() if families is None else families
        base_check = check_base(repo, base)
        # Configuration (and so the limits) comes from the base, before the patch is even read.
        config = _load_config(req, repo, base_check[1], families)
        seconds = config.limits.review_seconds
        try:
            with time_budget(seconds, ReviewOverrun):
                patch = read_patch(req.patch, config.limits.max_patch_bytes)
                inputs = Inputs(repo, base, patch, expected, tuple(a.hashed() for a in artifacts), req.expect_files,
                                req.allow_symlinks, req.allow_gitlinks)
                yield Prepared(repo, inputs, config, families, base_check)
        except ReviewOverrun:
            raise ReviewerError(
                f"the review did not finish within limits.review_seconds ({seconds:g} s); no verdict "
                "(raise [limits] review_seconds in reviewer.toml if this change is legitimately that large)"
            ) from None
    finally:
        repo.close()


def _load_config(req: Request, repo: Repo, base_tree: str | None, families: tuple[Family, ...]) -> Config:
    if req.config:
        config = load_config_file(req.config, families)
    elif req.config_commit is not None:
        tree = repo.tree_of(req.config_commit)
        source = f"{CONFIG_PATH} at {req.config_commit[:12]} (the pull request's target)"
        config = config_in_tree(TreeView(repo, tree).read_alone(CONFIG_PATH), source, families)
    elif base_tree is not None:
        config = config_in_tree(TreeView(repo, base_tree).read_alone(CONFIG_PATH), f"{CONFIG_PATH} at base", families)
    else:
        config = defaults(families)
    if req.overrides:
        config = replace(config, overrides=dict(req.overrides))
    return config


def _check_findings(checks: tuple[Check, ...]) -> list[Finding]:
    """Every failed integrity check is also a finding: its title and (must-fix)
    severity are the check's spec (reviewer/gate/integrity.py), its message the detail."""
    findings = []
    for check in checks:
        if check.status is not CheckStatus.FAIL:
            continue
        spec = integrity_check(check.id)
        findings.append(
            Finding(rule=spec.id, severity=spec.severity, title=spec.title, message=check.detail, location=None, anchor=check.detail)
        )
    return findings


def _limits_note(note: str) -> Finding:
    """A file no rule parses is over a per-file limit: integrity/limits, but only a note."""
    path = note.split(": ", 1)[0]
    return Finding(
        rule=integrity_check("integrity/limits").id,
        severity=Severity.CONSIDER,
        title="File not analysed: over a size limit",
        message=f"{note}. No rule family parses this kind of file, so the review still stands; raise the limit under [limits] to include it.",
        location=Location(path, 1, 1),
        anchor=note,
    )


# What the target branch holds once a pull request is merged: its reviewer.toml
# (None: none), or MERGE_CONFLICT when git cannot merge that file.
MERGE_CONFLICT = "conflict"


def merged_config(repo: Repo, pr: PullRequest) -> bytes | None | str:
    """reviewer.toml as `git merge-tree` merges the pull request into its target.

    The patched file alone is not what lands: the target may have changed the
    same file since the branch point, and two valid edits can merge into an
    invalid one. merge-tree writes its objects into the review's scratch store
    only (the repository is never written).
    """
    res = repo.run("merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", pr.base, pr.head, check=False)
    if res.returncode not in (0, 1):
        raise ReviewerError(f"cannot merge {pr.head[:12]} into {pr.base[:12]} to check {CONFIG_PATH}: {res.last_error_line}")
    fields = res.stdout.split(b"\0")
    tree = fields[0].decode().strip()
    conflicted = {f.decode("utf-8", "surrogateescape") for f in fields[1:] if f}
    if res.returncode == 1 and CONFIG_PATH in conflicted:
        return MERGE_CONFLICT
    return TreeView(repo, tree).read_alone(CONFIG_PATH)


def _config_edit_finding(
    changeset: ChangeSet, config: Config, families: tuple[Family, ...], merged: bytes | None | str = MERGE_CONFLICT,
    merge_label: str | None = None,
) -> list[Finding]:
    """A note that the patch's reviewer.toml was not applied, or a must-fix if it would not even load.

    The file is loaded exactly as the next review of the merged code will load
    it (same loader, same families), but only to judge it: this review still
    runs on `config`. For a pull request (`merge_label` set) that is the file
    as merged into the target branch (`merged`), else the patched file.
    """
    changed = changeset.by_either_path.get(CONFIG_PATH)
    if changed is None:
        return []
    # Moved away or deleted: the merged tree has no reviewer.toml, so the defaults.
    data = changed.patched_bytes if changed.path == CONFIG_PATH else None
    source, where = f"{CONFIG_PATH} as patched", "The patched"
    if merge_label is not None:
        if merged == MERGE_CONFLICT:
            return [_config_invalid(
                f"{CONFIG_PATH} does not merge cleanly into {merge_label}: git reports a conflict in it, so what lands "
                "is whatever the conflict is resolved to, unreviewed", config, 1)]
        assert not isinstance(merged, str)
        if merged != data:
            data, source, where = merged, f"{CONFIG_PATH} merged into {merge_label}", f"Merged into {merge_label}, the"
    try:
        config_in_tree(data, source, families)
    except ReviewerError as exc:
        error = str(exc)
    except Exception as exc:  # a loader crash would crash the next review just the same
        error = f"{source}: the configuration loader failed ({type(exc).__name__}: {exc})"
    else:
        return [_config_note(data is not None, config)]
    return [_config_invalid(f"{where} {CONFIG_PATH} does not load: {error}", config, _error_line(error, data))]


def _config_invalid(what: str, config: Config, line: int) -> Finding:
    spec = integrity_check("integrity/config-invalid")
    return Finding(
        rule=spec.id,
        severity=spec.severity,
        title=spec.title,
        message=(
            f"{what}. Once merged, every review on the target branch would fail before any rule runs "
            f"(exit 2, no verdict). This review ran on {config.source}."
        ),
        location=Location(CONFIG_PATH, line, line),
        anchor=CONFIG_PATH,
    )


def _error_line(error: str, data: bytes | None) -> int:
    """The line a TOML syntax error names, when it is a line of the file; else 1.

    Read only from the end of tomllib's own message (`... (at line N, column M))`),
    never from anywhere a key or value the patch wrote could put the words.
    """
    match = _TOML_AT.search(error)
    lines = data.count(b"\n") + 1 if data is not None else 1
    return int(match.group(1)) if match and 1 <= int(match.group(1)) <= lines else 1


def _config_note(present: bool, config: Config) -> Finding:
    spec = integrity_check("integrity/config-edited")
    after = (
        "The new configuration is valid and takes effect once merged."
        if present
        else f"The patch removes {CONFIG_PATH}: once merged, reviews use the built-in defaults (a valid configuration)."
    )
    return Finding(
        rule=spec.id,
        severity=spec.severity,
        title=spec.title,
        message=(
            f"Rules are configured from {config.source}, never from the patch under review, so a patch "
            f"cannot weaken the rules that judge it. {after}"
        ),
        location=Location(CONFIG_PATH, 1, 1),
        anchor=CONFIG_PATH,
    )


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
    # Numbered as git and tree-sitter number them: by "\n" alone (not by
    # str.splitlines, which also breaks at form feeds and Unicode separators).
    lines = text.split("\n")
    start = max(1, location.line)
    end = min(len(lines), location.end_line, start + EXCERPT_MAX_LINES - 1)
    return tuple((n, code_line(lines[n - 1])) for n in range(start, end + 1))


def _not_checked(families: tuple[Family, ...], why: str) -> tuple[InvariantResult, ...]:
    return tuple(InvariantResult(f.id, InvariantStatus.ERROR, f"not checked: {why}") for f in families)


def run(req: Request, families: tuple[Family, ...] | None = None, gate_only: bool = False) -> Reviewed:
    with prepared(req, families) as p:
        return execute(req, p, gate_only)


def execute(req: Request, p: Prepared, gate_only: bool = False) -> Reviewed:
    """The review of prepared inputs; call inside `prepared(...)` so its budget holds."""
    repo, inputs, config, families = p.repo, p.inputs, p.config, p.families
    headers = section_headers(inputs.patch)
    gate = run_gate(inputs, headers, config.limits, p.base_check)

    changeset: ChangeSet | None = None
    notes: list[str] = []
    if gate.reconstructable:
        assert gate.base_tree is not None and gate.patched_tree is not None
        changeset = build_changeset(repo, inputs.base, gate.base_tree, gate.patched_tree, gate.entries, headers, gate.raw)
        problems, notes = file_limits(config.limits, changeset)
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
        pr = req.pull_request
        if pr is not None and changeset.by_either_path.get(CONFIG_PATH) is not None:
            label = f"the target {pr.base_ref} ({pr.base[:12]})"
            findings += _config_edit_finding(changeset, config, families, merged_config(repo, pr), label)
        else:
            findings += _config_edit_finding(changeset, config, families)
        reader = BlobReader(repo)
        base_view = TreeView(repo, changeset.base_tree, reader, req.shared)
        patched_view = TreeView(repo, changeset.patched_tree, reader, req.shared)
        patched_view.follows(base_view)
        try:
            invariants = run_families(
                families, changeset, base_view, patched_view,
                config, req.budget_seconds if req.budget_seconds is not None else config.limits.rule_seconds,
                cache=_open_cache(req.cache_dir), scope=req.scope,
            )
        finally:
            reader.close()
    report = assemble(inputs.base, inputs.patch, gate, changeset, invariants, findings, Scope(req.scope), req.pull_request,
                      req.links, config.suppressions, config.accepts, impacts(families))
    return Reviewed(report, changeset, gate)


def _open_cache(directory: str | None) -> "OutcomeCache | None":
    if not directory:
        return None
    from reviewer.engine.cache import OutcomeCache  # lazy: only when --cache-dir is given

    return OutcomeCache(directory)


def empty_report(req: Request, families: tuple[Family, ...] | None = None) -> Report:
    """A pull request whose head adds nothing to its merge base: MERGE, nothing to review."""
    repo = open_repo(req.repo)
    try:
        base = require_full_sha(repo, req.base)
        base_tree = repo.tree_of(base)
    finally:
        repo.close()
    families = discover() if families is None else families
    why = "nothing to review: the head adds no change to the merge base"
    checks = (
        Check("integrity/base-commit", CheckStatus.PASS, f"commit {base} exists"),
        Check("integrity/patch-sha256", CheckStatus.SKIP, f"{why} (empty patch, sha256 {EMPTY.sha256})"),
        Check("integrity/artifact-sha256", CheckStatus.SKIP, "no --artifact given"),
        Check("integrity/clean-apply", CheckStatus.SKIP, why),
        Check("integrity/file-count", CheckStatus.SKIP, "0 changed files"),
        Check("integrity/paths", CheckStatus.SKIP, why),
        Check("integrity/limits", CheckStatus.PASS, "within limits"),
    )
    gate = GateResult(checks, base_tree, None, ())
    invariants = tuple(InvariantResult(f.id, InvariantStatus.NOT_APPLICABLE, why) for f in families)
    return assemble(base, EMPTY, gate, None, invariants, [], Scope(req.scope), req.pull_request, req.links,
                    impact_of=impacts(families))


def _filter_invariants(
    invariants: tuple[InvariantResult, ...], keep: set[str], earlier: set[str], suppressed: list[SuppressedFinding],
    accepted: list[AcceptedFinding],
) -> tuple[InvariantResult, ...]:
    """Each invariant with its findings split into in scope (`keep`) and
    pre-existing (`earlier`), its status derived again, and a count of what
    was silenced; suppressed and out-of-scope notes are dropped.

    Only honoured suppressions count: a refused one left its finding among
    `keep`, so the invariant stays violated."""
    silenced: dict[str, int] = {}
    for s in suppressed:
        if s.honoured:
            silenced[s.finding.family] = silenced.get(s.finding.family, 0) + 1
    owned: dict[str, int] = {}
    for a in {a.finding.id: a for a in accepted}.values():
        owned[a.finding.family] = owned.get(a.finding.family, 0) + 1
    out = []
    for inv in invariants:
        # One defect reached from two places has one id: listed once.
        findings = tuple({f.id: f for f in inv.findings if f.id in keep}.values())
        pre_existing = tuple({f.id: f for f in inv.findings if f.id in earlier}.values())
        status, summary = inv.status, inv.summary
        if status is not InvariantStatus.ERROR:
            status = derive_status(findings, inv.examined, pre_existing=pre_existing)
        if silenced.get(inv.id):
            summary = f"{summary} ({silenced[inv.id]} suppressed)"
        if owned.get(inv.id):
            summary = f"{summary} ({owned[inv.id]} accepted)"
        out.append(replace(inv, status=status, summary=summary, findings=findings, pre_existing=pre_existing,
                           suppressed=silenced.get(inv.id, 0), accepted=owned.get(inv.id, 0)))
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
    links: Links | None = None,
    suppressions: Suppressions = Suppressions(),
    accepts: tuple[Acceptance, ...] = (),
    impact_of: Mapping[str, Impact] | None = None,
) -> Report:
    raw = [*extra_findings, *(f for inv in invariants for f in inv.findings)]
    scoped = [f for f in raw if f.family == "integrity" or in_scope(f, changeset, scope)]
    # Blocking findings outside the scope are violations the patch did not
    # cause: shown as pre-existing (never dropped in silence), never blocking.
    outside = [f for f in raw if f.family != "integrity" and f.severity is not Severity.CONSIDER
               and not in_scope(f, changeset, scope)]
    kept_all, silenced = apply_suppressions([*scoped, *outside], changeset, suppressions.patch_may_silence)
    out_of_scope = {id(f) for f in outside}
    kept = [f for f in kept_all if id(f) not in out_of_scope]
    earlier = [f for f in kept_all if id(f) in out_of_scope]
    # A refused request (honoured=False) is listed here too, while its finding
    # stays in `kept` and counts: the patch asked to silence what it may not.
    # One defect reached from two places has one id, and is listed once.
    suppressed = sorted(
        {s.finding.id: SuppressedFinding(s.finding, s.directive.path, s.directive.line, s.directive.reason,
                                         s.directive.added_by_patch, s.honoured)
         for s in silenced}.values(),
        key=lambda s: s.finding.sort_key(),
    )
    # The owners' acceptances (the base's [[accept]]): never an integrity check, whose finding is the gate's.
    day = today() if any(a.until for a in accepts) else None
    kept, accepted, expired = apply_accepts(kept, accepts, day) if accepts else (kept, [], [])
    kept_ids = {f.id for f in kept}
    earlier_unique = {f.id: f for f in earlier if f.id not in kept_ids}
    invariants = _filter_invariants(invariants, kept_ids, set(earlier_unique), suppressed, accepted)
    # The same defect can be reached from two places; report it once.
    unique = {f.id: f for f in kept}
    impact_of = impact_of or {}
    findings, roots = arrange(unique.values(), impact_of)
    if changeset is not None:
        files = tuple(
            FileEntry(f.path, f.old_path, f.status.value, f.added_count, f.removed_count, f.binary) for f in changeset.files
        )
    else:
        # Not rebuilt: only git's reading of the patch is known, and a path
        # that failed the gate is shown escaped, never raw.
        files = tuple(
            FileEntry(printable_path(e.path), None, "unknown", e.added or 0, e.removed or 0, e.added is None)
            for e, _ in unique_entries(gate.entries, [])
        )
    info = PatchInfo(
        name=patch.name,
        sha256=patch.sha256,
        files=len(files),
        added=sum(f.added for f in files),
        removed=sum(f.removed for f in files),
    )
    excerpts = {f.id: _excerpt(changeset, f.location) for f in findings}
    excerpts.update({a.finding.id: _excerpt(changeset, a.finding.location) for a in accepted})
    excerpts.update({s.finding.id: _excerpt(changeset, s.finding.location) for s in suppressed})
    excerpts.update({f.id: _excerpt(changeset, f.location) for f in earlier_unique.values()})
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
        pre_existing=tuple(sorted(earlier_unique.values(), key=lambda f: f.sort_key())),
        scope=scope.value,
        pull_request=pull_request,
        links=links,
        excerpts=excerpts,
        accepted=_unique_accepted(accepted),
        expired=_unique_accepted(expired),
        judged_on=day.isoformat() if day else None,
        roots=roots,
        impacts={f.rule: impact_of[f.rule] for f in findings if f.rule in impact_of},
    )


def _unique_accepted(items: list[AcceptedFinding]) -> tuple[AcceptedFinding, ...]:
    # One defect reached from two places has one id: listed once, in finding order.
    return tuple(sorted({a.finding.id: a for a in items}.values(), key=lambda a: a.finding.sort_key()))
