"""Replay a real repository's history through the reviewer, in process.

    python bench/history.py --repo /path/to/repo.git --commits 200 --paths packages/ --ext ts,tsx

For each of the last N non-merge commits C on the first-parent line (newest
first; optionally only commits touching --paths / --ext), with parent P:

  * the patch is `git diff --binary --full-index -M P C` (what `reviewer pr`
    would review);
  * the review runs in process through `reviewer.review.run`; a ReviewerError
    is a clean refusal (exit 2 in the CLI) and is listed with its reason, any
    other exception is a crash;
  * reconstruction must be exact: every changed file's patched bytes equal
    `C:path` and its base bytes equal `P:old_path`, and the change set names
    the same files as git's own `diff --raw`;
  * each family's invariant status is counted; `error` ones are listed with
    their reasons (a parse-error region over changed lines is by design, any
    other reason is a rule bug to investigate);
  * every review is timed.

The run never writes into --repo: the reviewer redirects object writes into a
scratch directory, and this script lists the repository's files (path, size,
mtime) before and after to prove it. Scratch files of the reviewer live in a
private temporary directory, so anything it leaks is reported too.

Deterministic: commits are taken in `rev-list --first-parent` order and
reviewed one at a time; only --max-seconds (default 1200) can cut the run
short, and the summary then says how many of the selected commits were done.
Benchmarks are not tests: nothing here fails on timing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from reviewer.change.changeset import ChangeSet, FileStatus  # noqa: E402
from reviewer.errors import ReviewerError  # noqa: E402
from reviewer.engine.api import Family  # noqa: E402
from reviewer.engine.registry import discover  # noqa: E402
from reviewer.report import json_format  # noqa: E402
from reviewer.review import Request, run  # noqa: E402
from reviewer.typescript.parse import Parsers, dialect, error_regions  # noqa: E402

GITLINK_MODE = "160000"
# git diff --raw status letters -> the change set's statuses that may stand for them.
RAW_STATUS = {
    "A": {FileStatus.ADDED},
    "D": {FileStatus.DELETED},
    "M": {FileStatus.MODIFIED, FileStatus.MODE_CHANGED},
    "R": {FileStatus.RENAMED},
    "C": {FileStatus.COPIED},
    "T": {FileStatus.TYPE_CHANGED},
}


# --------------------------------------------------------------------- git


def _git_env() -> dict[str, str]:
    # The harness's own git calls must be as neutral as the reviewer's: no user
    # configuration (it could turn on renames differently, or a textconv).
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_OPTIONAL_LOCKS="0",
               GIT_NO_REPLACE_OBJECTS="1", LC_ALL="C", LANG="C")
    return env


def git(gitdir: str, *args: str, stdin: bytes = b"", check: bool = True) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run(["git", f"--git-dir={gitdir}", "-c", "core.quotePath=true", *args],
                          input=stdin, capture_output=True, env=_git_env())
    if check and proc.returncode != 0:
        lines = proc.stderr.decode(errors="replace").strip().splitlines() or ["failed"]
        raise RuntimeError(f"git {args[0]}: {lines[-1]}")
    return proc


def pathspecs(prefixes: list[str], exts: list[str]) -> list[str]:
    """git pathspecs for "under one of prefixes AND ending in one of exts"."""
    if not exts:
        return list(prefixes)
    roots = prefixes or [""]
    return [f":(glob){root.rstrip('/') + '/' if root else ''}**/*.{ext}" for root in roots for ext in exts]


def select_commits(gitdir: str, rev: str, count: int, specs: list[str]) -> list[tuple[str, str | None]]:
    """(commit, first parent) for the newest `count` non-merge first-parent commits."""
    args = ["rev-list", "--first-parent", "--no-merges", f"--max-count={count}", rev]
    shas = git(gitdir, *args, *(["--", *specs] if specs else [])).stdout.decode().split()
    if not shas:
        return []
    # Parents from the commits themselves (path limiting would rewrite them),
    # with plumbing that reads nothing but commits.
    out = git(gitdir, "rev-list", "--no-walk=unsorted", "--parents", "--stdin",
              stdin="".join(s + "\n" for s in shas).encode()).stdout.decode()
    parents = {}
    for line in out.splitlines():
        parts = line.split()
        parents[parts[0]] = parts[1] if len(parts) > 1 else None
    return [(s, parents[s]) for s in shas]


def read_blobs(gitdir: str, specs: list[str]) -> dict[str, bytes | None]:
    """`rev:path` -> blob bytes (None when missing or not a blob), one cat-file."""
    if not specs:
        return {}
    out = git(gitdir, "cat-file", "--batch", stdin="".join(s + "\n" for s in specs).encode()).stdout
    result: dict[str, bytes | None] = {}
    pos = 0
    for spec in specs:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        # "<oid> <type> <size>", or "<spec> missing" where a spec may hold spaces.
        if len(header) != 3 or len(header[0]) not in (40, 64) or not header[2].isdigit():
            result[spec] = None
            continue
        size = int(header[2])
        result[spec] = out[pos:pos + size] if header[1] == b"blob" else None
        pos += size + 1
    return result


@dataclass(frozen=True)
class RawEntry:
    status: str
    old_mode: str
    new_mode: str
    old_path: str
    path: str


def raw_diff(gitdir: str, parent: str, commit: str) -> list[RawEntry]:
    """git's own list of changes, paired for renames exactly like the patch."""
    out = git(gitdir, "diff", "--raw", "-z", "-M", "--no-abbrev", "--no-ext-diff", "--no-textconv",
              parent, commit).stdout
    fields = out.split(b"\0")
    entries, i = [], 0
    while i < len(fields) and fields[i]:
        meta = fields[i].decode().lstrip(":").split()
        letter = meta[4][0]
        if letter in "RC":
            old, new = fields[i + 1].decode(), fields[i + 2].decode()
            i += 3
        else:
            old = new = fields[i + 1].decode()
            i += 2
        entries.append(RawEntry(letter, meta[0], meta[1], old, new))
    return entries


# ----------------------------------------------------------------- checks


def reconstruction_problems(gitdir: str, parent: str, commit: str, changeset: ChangeSet) -> list[str]:
    """Every way the change set differs from git's own objects for P..C."""
    problems: list[str] = []
    raw = {e.path: e for e in raw_diff(gitdir, parent, commit)}
    got = {f.path: f for f in changeset.files}
    for path in sorted(raw.keys() - got.keys()):
        problems.append(f"{path}: changed in git, missing from the change set")
    for path in sorted(got.keys() - raw.keys()):
        problems.append(f"{path}: in the change set, not changed in git")
    specs: list[str] = []
    for path in sorted(raw.keys() & got.keys()):
        e, f = raw[path], got[path]
        if f.status not in RAW_STATUS.get(e.status, set()):
            problems.append(f"{path}: status {f.status.value}, git says {e.status}")
        if e.status in "RC" and f.old_path != e.old_path:
            problems.append(f"{path}: old path {f.old_path!r}, git says {e.old_path!r}")
        if e.status != "A" and e.old_mode != GITLINK_MODE:
            specs.append(f"{parent}:{e.old_path}")
        if e.status != "D" and e.new_mode != GITLINK_MODE:
            specs.append(f"{commit}:{path}")
    blobs = read_blobs(gitdir, specs)
    for path in sorted(raw.keys() & got.keys()):
        e, f = raw[path], got[path]
        want_base = blobs.get(f"{parent}:{e.old_path}") if e.status != "A" else None
        want_patched = blobs.get(f"{commit}:{path}") if e.status != "D" else None
        if e.old_mode != GITLINK_MODE and f.base_bytes != want_base:
            problems.append(f"{path}: base bytes differ from {parent[:12]}:{e.old_path} ({_size(f.base_bytes)} vs {_size(want_base)})")
        if e.new_mode != GITLINK_MODE and f.patched_bytes != want_patched:
            problems.append(f"{path}: patched bytes differ from {commit[:12]}:{path} ({_size(f.patched_bytes)} vs {_size(want_patched)})")
    return problems


def _size(data: bytes | None) -> str:
    return "absent" if data is None else f"{len(data)} B"


def parse_error_exposure(changeset: ChangeSet) -> list[str]:
    """Changed lines that fall inside a tree-sitter ERROR region of the patched file.

    These are the places where DESIGN.md wants a family that inspects the code
    to answer `error`; listing them lets a run check that no family answered
    `verified` over code it could not read.
    """
    parsers = Parsers()
    out = []
    for f in changeset.files:
        grammar = dialect(f.path)
        if grammar is None or f.patched_bytes is None or f.binary or not f.added_lines:
            continue
        for start, end in error_regions(parsers.parse(grammar, f.patched_bytes)):
            if any(start <= n <= end for n in f.added_lines):
                out.append(f"{f.path}:{start}-{end}")
    return out


def crash_summary(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = " <- ".join(f"{Path(f.filename).name}:{f.lineno}" for f in reversed(frames[-4:]))
    return f"{type(exc).__name__}: {exc} [{where}]"


# ----------------------------------------------------------------- review


@dataclass
class Result:
    commit: str
    parent: str | None
    files: int = 0
    seconds: float = 0.0
    verdict: str | None = None
    skipped: str | None = None
    refusal: str | None = None
    crash: str | None = None
    mismatches: list[str] = field(default_factory=list)
    statuses: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    failed_checks: list[str] = field(default_factory=list)
    parse_errors: list[str] = field(default_factory=list)
    file_kinds: dict[str, int] = field(default_factory=dict)
    findings: list[str] = field(default_factory=list)
    report_sha256: str | None = None


def write_patch(gitdir: str, parent: str, commit: str, scratch: Path) -> Path | str:
    """The patch file, or why git could not produce it."""
    proc = git(gitdir, "diff", "--binary", "--full-index", "--no-color", "--no-ext-diff", "--no-textconv", "-M",
               parent, commit, check=False)
    if proc.returncode != 0:
        return "git diff failed: " + (proc.stderr.decode(errors="replace").strip().splitlines() or ["?"])[-1]
    path = scratch / f"{commit[:12]}.patch"
    path.write_bytes(proc.stdout)
    return path


def justified(patch: Path, message: str) -> bool:
    """A refusal is expected only for what git itself calls no change at all."""
    return not patch.read_bytes().strip() and "empty" in message


def file_kinds(changeset: ChangeSet) -> Counter[str]:
    kinds: Counter[str] = Counter(f.status.value for f in changeset.files)
    kinds["binary"] += sum(1 for f in changeset.files if f.binary)
    kinds["ts"] += sum(1 for f in changeset.files if dialect(f.path))
    return kinds


def review_one(gitdir: str, commit: str, parent: str | None, scratch: Path,
               families: tuple[Family, ...], budget: float) -> Result:
    res = Result(commit, parent)
    if parent is None:
        res.skipped = "root commit (no parent to diff against)"
        return res
    patch = write_patch(gitdir, parent, commit, scratch)
    if isinstance(patch, str):
        res.skipped = patch
        return res
    started = time.perf_counter()
    try:
        outcome = run(Request(repo=gitdir, base=parent, patch=str(patch), budget_seconds=budget), families)
    except ReviewerError as exc:
        res.refusal = ("justified: " if justified(patch, str(exc)) else "UNJUSTIFIED: ") + str(exc)
        return res
    except Exception as exc:  # noqa: BLE001 - anything else is exactly what we are hunting
        res.crash = crash_summary(exc)
        return res
    finally:
        res.seconds = time.perf_counter() - started
    report = outcome.report
    res.verdict = report.verdict.value
    res.files = report.patch.files
    res.report_sha256 = hashlib.sha256(json_format.render(report).encode()).hexdigest()
    res.failed_checks = [f"{c.id}: {c.detail}" for c in report.checks if c.status.value == "fail"]
    for inv in report.invariants:
        res.statuses[inv.id] = inv.status.value
        if inv.status.value == "error":
            res.errors[inv.id] = inv.summary
    res.findings = [
        f"{f.severity.value} {f.rule} {f.location.path}:{f.location.line}" if f.location else f"{f.severity.value} {f.rule}"
        for f in report.findings
    ]
    if outcome.changeset is not None:
        res.mismatches = reconstruction_problems(gitdir, parent, commit, outcome.changeset)
        res.parse_errors = parse_error_exposure(outcome.changeset)
        res.file_kinds = dict(sorted(file_kinds(outcome.changeset).items()))
    elif not res.failed_checks:
        res.mismatches = ["no change set, yet no integrity check failed"]
    return res


def rerun_digest(gitdir: str, res: Result, scratch: Path, families: tuple[Family, ...], budget: float) -> str | None:
    """The JSON report's digest of a second review of the same inputs."""
    assert res.parent is not None
    patch = scratch / f"{res.commit[:12]}.patch"
    outcome = run(Request(repo=gitdir, base=res.parent, patch=str(patch), budget_seconds=budget), families)
    return hashlib.sha256(json_format.render(outcome.report).encode()).hexdigest()


# ------------------------------------------------------- repository guard


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def listing(root: Path) -> dict[str, tuple[str, int]]:
    """Every file and directory under root: (content digest, mtime_ns).

    Content and mtime are kept apart because git "freshens" an object it is
    asked to write but already has by touching its file's mtime: that is a
    write into the repository too, but a different one from new content.
    """
    out = {".": ("dir", root.stat().st_mtime_ns)}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in sorted(dirnames + filenames):
            p = Path(dirpath, name)
            st = p.lstat()
            kind = "dir" if p.is_dir() and not p.is_symlink() else _digest(p) if p.is_file() else "other"
            out[str(p.relative_to(root))] = (kind, st.st_mtime_ns)
    return out


def listing_changes(before: dict[str, tuple[str, int]], after: dict[str, tuple[str, int]]) -> list[str]:
    changes = [f"added {p}" for p in sorted(after.keys() - before.keys())]
    changes += [f"removed {p}" for p in sorted(before.keys() - after.keys())]
    for p in sorted(before.keys() & after.keys()):
        if before[p][0] != after[p][0]:
            changes.append(f"content changed {p}")
        elif before[p][1] != after[p][1]:
            changes.append(f"mtime changed (content identical) {p}")
    return changes


# ---------------------------------------------------------------- summary


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def summarize(results: list[Result], selected: int, stopped: bool, guard: list[str], leaks: list[str],
              nondeterministic: list[str], repeated: int, slowest: int) -> str:
    reviewed = [r for r in results if r.verdict is not None]
    lines = [
        f"commits selected: {selected}; visited: {len(results)}"
        + (" (stopped by --max-seconds)" if stopped else ""),
        f"reviewed: {len(reviewed)}; changed files: {sum(r.files for r in reviewed)} "
        f"({', '.join(f'{k} {n}' for k, n in sorted(sum((Counter(r.file_kinds) for r in reviewed), Counter()).items()))})",
        f"skipped: {sum(1 for r in results if r.skipped)}",
        f"refusals (ReviewerError): {sum(1 for r in results if r.refusal)}, "
        f"unjustified: {sum(1 for r in results if r.refusal and r.refusal.startswith('UNJUSTIFIED'))}",
        f"crashes: {sum(1 for r in results if r.crash)}",
        f"reconstruction mismatches: {sum(len(r.mismatches) for r in results)} "
        f"in {sum(1 for r in results if r.mismatches)} commits",
        f"failed integrity checks: {sum(len(r.failed_checks) for r in results)}",
        f"commits whose changed lines fall in a tree-sitter ERROR region: {sum(1 for r in results if r.parse_errors)}",
        f"verdicts: {dict(sorted(Counter(r.verdict for r in reviewed).items()))}",
        f"determinism: {repeated} reviews repeated, {len(nondeterministic)} differed",
        f"repository untouched: {'yes' if not guard else 'NO'} "
        f"({sum(1 for g in guard if g.startswith('mtime'))} mtime-only changes, "
        f"{sum(1 for g in guard if not g.startswith('mtime'))} other); scratch leaks: {len(leaks)}",
        "",
        "invariant status per family:",
    ]
    per_family: dict[str, Counter[str]] = {}
    for r in reviewed:
        for fam, status in r.statuses.items():
            per_family.setdefault(fam, Counter())[status] += 1
    for fam in sorted(per_family):
        counts = ", ".join(f"{s} {n}" for s, n in sorted(per_family[fam].items()))
        lines.append(f"  {fam}: {counts}")
    findings = Counter(f.split(" ")[0] + " " + f.split(" ")[1] for r in reviewed for f in r.findings)
    lines += ["", "findings per rule:"] + [f"  {n:4d}  {k}" for k, n in sorted(findings.items())]
    times = [r.seconds for r in reviewed]
    if times:
        lines += ["", f"time per review: p50 {percentile(times, 0.5):.2f} s, p95 {percentile(times, 0.95):.2f} s, "
                      f"max {max(times):.2f} s, total {sum(times):.1f} s"]
        lines.append("slowest commits:")
        for r in sorted(reviewed, key=lambda r: (-r.seconds, r.commit))[:slowest]:
            lines.append(f"  {r.seconds:7.2f} s  {r.commit[:12]}  {r.files} files")
    sections = [
        ("crashes", [f"{r.commit[:12]}: {r.crash}" for r in results if r.crash]),
        ("refusals", [f"{r.commit[:12]}: {r.refusal}" for r in results if r.refusal]),
        ("skipped", [f"{r.commit[:12]}: {r.skipped}" for r in results if r.skipped]),
        ("reconstruction mismatches", [f"{r.commit[:12]}: {m}" for r in results for m in r.mismatches]),
        ("failed integrity checks", [f"{r.commit[:12]}: {c}" for r in results for c in r.failed_checks]),
        ("ERROR regions over changed lines (family statuses)",
         [f"{r.commit[:12]} {', '.join(r.parse_errors)}: "
          + ", ".join(f"{k}={v}" for k, v in sorted(r.statuses.items()) if v != "not-applicable")
          for r in results if r.parse_errors]),
        ("error invariants", [f"{r.commit[:12]} {fam}: {why}" for r in results for fam, why in sorted(r.errors.items())]),
        ("must-fix findings", [f"{r.commit[:12]}: {f}" for r in results for f in r.findings if f.startswith("must-fix")]),
        ("non-deterministic reports", nondeterministic),
        ("repository changes", guard),
        ("scratch leaks", leaks),
    ]
    for title, items in sections:
        if items:
            lines += ["", f"{title}:"] + [f"  {i}" for i in items]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", required=True, help="git directory (bare repositories work)")
    ap.add_argument("--rev", default="HEAD", help="where the first-parent walk starts (default HEAD)")
    ap.add_argument("--commits", type=int, default=200)
    ap.add_argument("--paths", action="append", default=[], help="only commits touching this prefix (repeatable)")
    ap.add_argument("--ext", default="", help="only commits touching files with these extensions, e.g. ts,tsx")
    ap.add_argument("--budget", type=float, default=60.0, help="per-family rule budget, seconds")
    ap.add_argument("--max-seconds", type=float, default=1200.0)
    ap.add_argument("--repeat", type=int, default=5, help="review the first N commits twice; reports must match")
    ap.add_argument("--slowest", type=int, default=10)
    ap.add_argument("--json", help="write per-commit results here")
    args = ap.parse_args(argv)

    gitdir = str(Path(args.repo).resolve())
    exts = [e.strip().lstrip(".") for e in args.ext.split(",") if e.strip()]
    try:
        commits = select_commits(gitdir, args.rev, args.commits, pathspecs(args.paths, exts))
    except RuntimeError as exc:
        print(f"history: {exc}", file=sys.stderr)
        return 2
    families = discover()
    before = listing(Path(gitdir))
    started = time.monotonic()
    results: list[Result] = []
    stopped = False
    nondeterministic: list[str] = []
    repeated = 0
    with tempfile.TemporaryDirectory(prefix="history-") as tmp:
        scratch = Path(tmp, "patches")
        scratch.mkdir()
        bot_tmp = Path(tmp, "bot")
        bot_tmp.mkdir()
        # The reviewer's own scratch directories go here, so a leak is visible.
        tempfile.tempdir = str(bot_tmp)
        try:
            for i, (commit, parent) in enumerate(commits, 1):
                if time.monotonic() - started > args.max_seconds:
                    stopped = True
                    break
                res = review_one(gitdir, commit, parent, scratch, families, args.budget)
                results.append(res)
                tag = res.crash and "CRASH" or res.refusal and "refused" or res.skipped and "skipped" or res.verdict
                print(f"[{i}/{len(commits)}] {commit[:12]} {res.files:4d} files {res.seconds:6.2f} s {tag}"
                      + (f" mismatches={len(res.mismatches)}" if res.mismatches else "")
                      + (f" errors={','.join(sorted(res.errors))}" if res.errors else ""), file=sys.stderr)
            for res in [r for r in results if r.report_sha256][: args.repeat]:
                if time.monotonic() - started > args.max_seconds:
                    break
                repeated += 1
                again = rerun_digest(gitdir, res, scratch, families, args.budget)
                if again != res.report_sha256:
                    nondeterministic.append(f"{res.commit[:12]}: {res.report_sha256} then {again}")
        finally:
            tempfile.tempdir = None
            leaks = sorted(p.name for p in bot_tmp.iterdir())
    guard = listing_changes(before, listing(Path(gitdir)))
    print(summarize(results, len(commits), stopped, guard, leaks, nondeterministic, repeated, args.slowest), end="")
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in results], indent=1, sort_keys=True) + "\n")
    broken = (any(r.crash or r.mismatches or (r.refusal or "").startswith("UNJUSTIFIED") for r in results)
              or guard or leaks or nondeterministic)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
