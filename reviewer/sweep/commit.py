"""One commit of a sweep: its patch, its review, and the JSON line that records it.

The review is `reviewer review --repo R --base PARENT --patch <id12>.patch`
run in process, so a commit's full report is byte-identical to what that
command prints for the same patch file. The line holds no timing, so the
same history gives the same lines.
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reviewer import RULESET_VERSION, __version__
from reviewer.errors import ReviewerError
from reviewer.report.model import Report, Severity
from reviewer.sweep.plan import Item

if TYPE_CHECKING:
    from reviewer.engine.shared import Shared


@dataclass(frozen=True)
class Settings:
    """What every commit of one sweep is reviewed with; its digest (tool and rule-set
    versions, scope, configuration) tags each line, so a resumed sweep never mixes
    lines written under other settings."""

    repo: str
    scope: str = "changed"
    config: str | None = None
    cache_dir: str | None = None
    reports: str | None = None  # directory for each commit's full report
    report_formats: tuple[str, ...] = ("json", "markdown")

    @property
    def digest(self) -> str:
        config = Path(self.config).read_bytes() if self.config else b""
        key = "\0".join((__version__, RULESET_VERSION, self.scope, hashlib.sha256(config).hexdigest()))
        return hashlib.sha256(key.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Done:
    line: dict[str, Any]
    seconds: float


def patch_name(commit: str) -> str:
    return f"{commit[:12]}.patch"


def review_commit(settings: Settings, item: Item, digest: str, shared: "Shared | None" = None) -> Done:
    """Review one commit against its parent; a refusal is recorded, never raised."""
    started = time.perf_counter()
    line: dict[str, Any] = {"commit": item.commit, "parent": item.parent, "sweep": digest}
    try:
        line.update(_review(settings, item, shared))
    except ReviewerError as exc:
        line.update(status="refused", verdict=None, reason=str(exc))
    return Done(line, round(time.perf_counter() - started, 3))


def review_run(settings: Settings, items: list[Item], digest: str) -> list[Done]:
    """Consecutive commits in one process, sharing what they have in common
    (parsed trees, grep results by blob), so each reviews only what changed."""
    from reviewer.engine.shared import Shared

    shared = Shared()
    return [review_commit(settings, item, digest, shared) for item in items]


def _review(settings: Settings, item: Item, shared: "Shared | None") -> dict[str, Any]:
    from reviewer import review
    from reviewer.gitio import open_repo

    if item.parent is None:
        return {"status": "root", "verdict": None, "reason": "a root commit has no parent to review it against"}
    repo = open_repo(settings.repo)
    try:
        res = repo.patch_between(item.parent, item.commit)
        if res.returncode != 0:
            raise ReviewerError(f"cannot diff {item.parent[:12]}..{item.commit[:12]}: {res.last_error_line}")
        diff = res.stdout
    finally:
        repo.close()
    if not diff.strip():
        return {"status": "empty", "verdict": None, "reason": "the commit changes nothing against its parent"}
    with tempfile.TemporaryDirectory(prefix="reviewer-sweep-") as tmp:
        patch = Path(tmp) / patch_name(item.commit)
        patch.write_bytes(diff)
        report = review.run(review.Request(
            repo=settings.repo, base=item.parent, patch=str(patch), config=settings.config,
            scope=settings.scope, cache_dir=settings.cache_dir, shared=shared,
        )).report
    rendered = _write_reports(settings, item.commit, report)
    return _summary(report) | {"report_sha256": hashlib.sha256(rendered.encode("utf-8")).hexdigest()}


def _write_reports(settings: Settings, commit: str, report: Report) -> str:
    """Each asked-for format to `<reports>/<commit>.<ext>`; returns the JSON report."""
    from reviewer.report.formats import renderer

    json_text = renderer("json")(report)
    if settings.reports:
        directory = Path(settings.reports)
        for fmt in settings.report_formats:
            text = json_text if fmt == "json" else renderer(fmt)(report)
            path = directory / f"{commit}.{_EXTENSION.get(fmt, fmt)}"
            try:
                path.write_text(text, encoding="utf-8")
            except OSError as exc:
                raise ReviewerError(f"--reports {directory}: cannot write {path.name} ({exc.strerror})") from None
    return json_text


_EXTENSION = {"markdown": "md", "json": "json", "sarif": "sarif", "github": "github.txt", "comment": "comment.md"}


def _summary(report: Report) -> dict[str, Any]:
    return {
        "status": "reviewed",
        "verdict": report.verdict.value,
        "counts": {s.value: report.count(s) for s in Severity},
        "invariants": {i.id: i.status.value for i in report.invariants},
        "failed_checks": [c.id for c in report.checks if c.status.value == "fail"],
        "findings": [
            {"id": f.id, "rule": f.rule, "severity": f.severity.value,
             "path": f.location.path if f.location else None, "line": f.location.line if f.location else None}
            for f in report.findings
        ],
    }
