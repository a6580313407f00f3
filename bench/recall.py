"""Recall on real history: mutate the snapshot chain of real commits and see whether the review catches it.

    python bench/recall.py --repo /path/to/mirror.git --rev v2 --rev dev --commits 400

Precision is measured by replaying history (bench/history.py) and reading
every blocking finding; recall needs defects whose presence is known. This
script makes them from real commits: for each first-parent, non-merge commit C
of each --rev that adds or rewrites a drizzle snapshot (a JSON file with an
`id` and `prevIds`, or `prevId` in the legacy journal layout), with parent P,
it rewrites that snapshot's parent link in C's tree and reviews P against the
mutated tree, once per mutation:

  * grandparent: the parent of the snapshot C's snapshot really names;
  * older: an older snapshot of the same chain (its root, or the oldest
    earlier version of a single-file snapshot);
  * reset: the root id (all zeros), when C's snapshot did not name it;
  * unknown: an id no snapshot has (derived from C's id, so runs repeat).

A commit the integrity gate refuses as it is (a symlink, say) is listed and
not mutated: its review is DO-NOT-MERGE before any rule runs. A mutation is **found** when the review of the mutated tree has a blocking
schema-prev-ids finding on that snapshot which the review of C itself does
not have. When the review of C already blocks on that snapshot (a real defect
of the commit), the mutation says nothing about recall and is counted apart.

The mirror is never written: mutated blobs and trees go into a scratch bare
repository that borrows the mirror's objects (`objects/info/alternates`), and
the reviewer runs against that scratch repository. Benchmarks are not tests:
nothing here fails on timing; the exit status is 1 when a mutation is missed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from history import git, read_blobs  # noqa: E402
from reviewer.engine.registry import discover  # noqa: E402
from reviewer.review import Request, run  # noqa: E402

ROOT_ID = "00000000-0000-0000-0000-000000000000"
SNAPSHOT_SPECS = [":(glob)**/schema.json", ":(glob)**/snapshot.json", ":(glob)**/meta/*_snapshot.json"]
BLOCKING = ("must-fix", "should-fix", "error")


@dataclass(frozen=True)
class Snap:
    ident: str
    parents: tuple[str, ...]
    key: str  # "prevIds" or "prevId"


@dataclass
class Trial:
    commit: str
    path: str
    mutation: str
    prev: str  # what the mutated snapshot names
    outcome: str = ""  # found | missed | baseline-blocks | gate-refused | crash
    findings: list[str] = field(default_factory=list)


def parse_snapshot(data: bytes | None) -> Snap | None:
    """A drizzle snapshot's id and parent link, or None for any other JSON (config schemas and the like)."""
    if data is None:
        return None
    try:
        doc = json.loads(data)
    except ValueError:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("id"), str):
        return None
    if isinstance(doc.get("prevIds"), list) and all(isinstance(p, str) for p in doc["prevIds"]):
        return Snap(doc["id"], tuple(doc["prevIds"]), "prevIds")
    if isinstance(doc.get("prevId"), str):
        return Snap(doc["id"], (doc["prevId"],), "prevId")
    return None


def relink(data: bytes, key: str, target: str) -> bytes | None:
    """`data` with its first `key` entry naming only `target`, the rest of the bytes as they were."""
    text = data.decode("utf-8")
    if key == "prevIds":
        pattern = re.compile(r'"prevIds"(\s*):(\s*)\[[^\]]*\]')
        replacement = lambda m: f'"prevIds"{m.group(1)}:{m.group(2)}["{target}"]'  # noqa: E731
    else:
        pattern = re.compile(r'"prevId"(\s*):(\s*)"[^"]*"')
        replacement = lambda m: f'"prevId"{m.group(1)}:{m.group(2)}"{target}"'  # noqa: E731
    new, count = pattern.subn(replacement, text, count=1)
    return new.encode("utf-8") if count else None


def changed_snapshots(gitdir: str, parent: str, commit: str) -> list[tuple[str, str]]:
    """(path, mode) of the snapshot-like files C adds or rewrites."""
    out = git(gitdir, "diff-tree", "-r", "--no-renames", "--diff-filter=AM", "-z", parent, commit, "--",
              *SNAPSHOT_SPECS).stdout.decode("utf-8", "replace")
    fields = out.split("\0")
    found = []
    for meta, path in zip(fields[0::2], fields[1::2]):
        if meta.startswith(":"):
            found.append((path, meta.split()[1]))
    return found


def chain_ids(gitdir: str, parent: str, path: str) -> dict[str, Snap]:
    """The snapshots of `path`'s chain in the tree of `parent`, by id."""
    posix = PurePosixPath(path)
    if posix.name == "snapshot.json":
        pattern, where = "*/snapshot.json", posix.parent.parent  # drizzle-kit v1 folders
    elif posix.name.endswith("_snapshot.json"):
        pattern, where = "*_snapshot.json", posix.parent  # legacy meta/ folder
    else:
        return {}
    names = git(gitdir, "ls-tree", "-r", "--name-only", "-z", parent, "--", f"{where}/").stdout.decode().split("\0")
    paths = [n for n in names if n and PurePosixPath(n).match(f"{where}/{pattern}") and n != path]
    snaps = {}
    for spec, data in read_blobs(gitdir, [f"{parent}:{p}" for p in paths]).items():
        snap = parse_snapshot(data)
        if snap is not None:
            snaps[snap.ident] = snap
    return snaps


def single_file_lineage(gitdir: str, parent: str, path: str, limit: int = 60) -> list[Snap]:
    """Earlier versions of a single-file snapshot, newest first (the base's version first), distinct ids."""
    shas = git(gitdir, "rev-list", "--first-parent", f"--max-count={limit}", parent, "--", path).stdout.decode().split()
    seen: dict[str, Snap] = {}
    for spec, data in read_blobs(gitdir, [f"{s}:{path}" for s in shas]).items():
        snap = parse_snapshot(data)
        if snap is not None and snap.ident not in seen:
            seen[snap.ident] = snap
    return list(seen.values())


def mutations(gitdir: str, commit: str, parent: str, path: str, real: Snap) -> dict[str, str]:
    """mutation name -> the id the mutated snapshot names instead of its real parent."""
    named = real.parents[0] if real.parents else ""
    found: dict[str, str] = {}
    chain = chain_ids(gitdir, parent, path)
    if chain:
        base = chain.get(named)
        grand = base.parents[0] if base and base.parents else ""
        if grand and grand != ROOT_ID and grand in chain:
            found["grandparent"] = grand
        ancestors, step = [], grand
        while step in chain and step not in ancestors:
            ancestors.append(step)
            step = chain[step].parents[0] if chain[step].parents else ""
        older = [a for a in ancestors if a not in (named, grand)]
        if older:
            found["older"] = older[-1]
    else:
        lineage = single_file_lineage(gitdir, parent, path)
        if lineage:
            base = lineage[0]
            grand = base.parents[0] if base.parents else ""
            if grand and grand != ROOT_ID and grand != named:
                found["grandparent"] = grand
            older = [s.ident for s in lineage[1:] if s.ident not in (named, grand)]
            if older:
                found["older"] = older[-1]
    if named != ROOT_ID:
        found["reset"] = ROOT_ID
    digest = hashlib.sha256(f"{commit}:{path}".encode()).hexdigest()
    found["unknown"] = f"{digest[:8]}-{digest[8:12]}-4{digest[13:16]}-8{digest[17:20]}-{digest[20:32]}"
    return found


class Scratch:
    """A bare repository borrowing the mirror's objects; mutated trees are written here only."""

    def __init__(self, root: Path, mirror: str) -> None:
        self.gitdir = str(root / "scratch.git")
        subprocess.run(["git", "init", "-q", "--bare", self.gitdir], check=True)
        objects = git(mirror, "rev-parse", "--path-format=absolute", "--git-path", "objects").stdout.decode().strip()
        Path(self.gitdir, "objects", "info", "alternates").write_text(objects + "\n")
        self.index = str(root / "index")

    def tree_with(self, commit: str, path: str, mode: str, data: bytes) -> str:
        env = dict(os.environ, GIT_INDEX_FILE=self.index)
        blob = git(self.gitdir, "hash-object", "-w", "--stdin", stdin=data).stdout.decode().strip()
        subprocess.run(["git", f"--git-dir={self.gitdir}", "read-tree", commit], check=True, env=env)
        subprocess.run(["git", f"--git-dir={self.gitdir}", "update-index", "--cacheinfo", f"{mode},{blob},{path}"],
                       check=True, env=env)
        return subprocess.run(["git", f"--git-dir={self.gitdir}", "write-tree"], check=True, env=env,
                              capture_output=True, text=True).stdout.strip()

    def patch(self, parent: str, tree: str, out: Path) -> Path:
        out.write_bytes(git(self.gitdir, "diff", "--binary", "--full-index", "--no-color", "--no-ext-diff",
                            "--no-textconv", "-M", parent, tree).stdout)
        return out


class GateRefused(Exception):
    """The integrity gate refused the patch (a symlink, a path it will not write): nothing was reviewed."""


def blocking_on(gitdir: str, parent: str, patch: Path, path: str, families) -> set[str]:
    """The review's blocking schema-prev-ids findings on `path` (rule names)."""
    report = run(Request(repo=gitdir, base=parent, patch=str(patch), budget_seconds=60.0), families).report
    failed = [f"{c.id}: {c.detail}" for c in report.checks if c.status.value == "fail"]
    if failed:
        raise GateRefused("; ".join(failed))
    return {
        f.rule for f in report.findings
        if f.rule.startswith("schema-prev-ids/") and f.severity.value in BLOCKING
        and f.location is not None and f.location.path == path
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--rev", action="append", default=[], help="first-parent line to walk (repeatable)")
    ap.add_argument("--commits", type=int, default=400, help="newest commits per --rev that change a snapshot")
    ap.add_argument("--json", help="write every trial here")
    args = ap.parse_args(argv)
    mirror = str(Path(args.repo).resolve())
    # Only the family under test runs: the other families' findings say nothing about this recall.
    families = tuple(f for f in discover() if f.id == "schema-prev-ids")
    trials: list[Trial] = []
    done: set[tuple[str, str]] = set()
    with tempfile.TemporaryDirectory(prefix="recall-") as tmp:
        scratch = Scratch(Path(tmp), mirror)
        for rev in args.rev or ["HEAD"]:
            out = git(mirror, "rev-list", "--first-parent", "--no-merges", "--parents", f"--max-count={args.commits}",
                      rev, "--", *SNAPSHOT_SPECS).stdout.decode()
            for line in out.splitlines():
                commit, *parents = line.split()
                # Path limiting rewrites parents; the commit's own first parent is what a review diffs against.
                parent = git(mirror, "rev-parse", f"{commit}^1", check=False).stdout.decode().strip()
                if not parent:
                    continue
                for path, mode in changed_snapshots(mirror, parent, commit):
                    if (commit, path) in done:
                        continue
                    done.add((commit, path))
                    data = read_blobs(mirror, [f"{commit}:{path}"])[f"{commit}:{path}"]
                    real = parse_snapshot(data)
                    if real is None or data is None:
                        continue
                    real_patch = scratch.patch(parent, commit, Path(tmp, "real.patch"))
                    try:
                        baseline = blocking_on(scratch.gitdir, parent, real_patch, path, families)
                    except GateRefused as exc:
                        # The commit itself is refused (DO-NOT-MERGE before any rule runs): no recall to measure.
                        trials.append(Trial(commit, path, "(all)", "", "gate-refused", [str(exc)]))
                        print(f"{commit[:12]} {path} gate-refused {exc}", file=sys.stderr)
                        continue
                    for name, target in mutations(mirror, commit, parent, path, real).items():
                        trial = Trial(commit, path, name, target)
                        mutated = relink(data, real.key, target)
                        if mutated is None:
                            continue
                        tree = scratch.tree_with(commit, path, mode, mutated)
                        patch = scratch.patch(parent, tree, Path(tmp, "mutated.patch"))
                        try:
                            found = blocking_on(scratch.gitdir, parent, patch, path, families)
                        except Exception as exc:  # noqa: BLE001 - a refusal or crash is a result to report
                            trial.outcome, trial.findings = ("crash", [f"{type(exc).__name__}: {exc}"])
                        else:
                            trial.findings = sorted(found)
                            trial.outcome = ("baseline-blocks" if baseline else "found" if found else "missed")
                        trials.append(trial)
                        print(f"{commit[:12]} {path} {name:11s} {trial.outcome} {' '.join(trial.findings)}",
                              file=sys.stderr)
    summary: dict[str, dict[str, int]] = {}
    for t in trials:
        summary.setdefault(t.mutation, {}).setdefault(t.outcome, 0)
        summary[t.mutation][t.outcome] += 1
    commits = len({t.commit for t in trials})
    refused = [t for t in trials if t.outcome == "gate-refused"]
    trials = [t for t in trials if t.outcome != "gate-refused"]
    print(f"{len(trials)} mutations of {len({(t.commit, t.path) for t in trials})} snapshots in {commits} commits")
    for t in refused:
        print(f"- not mutated: {t.commit[:12]} `{t.path}`: the integrity gate refuses the real commit ({t.findings[0]})")
    print("| mutation | trials | found | missed | baseline already blocks | crash |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in ("grandparent", "older", "reset", "unknown"):
        row = summary.get(name, {})
        print(f"| {name} | {sum(row.values())} | {row.get('found', 0)} | {row.get('missed', 0)} | "
              f"{row.get('baseline-blocks', 0)} | {row.get('crash', 0)} |")
    for t in trials:
        if t.outcome in ("missed", "crash"):
            print(f"- {t.outcome}: {t.commit[:12]} `{t.path}` {t.mutation} -> {t.prev} {' '.join(t.findings)}")
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(t) for t in trials], indent=1) + "\n")
    return 1 if any(t.outcome in ("missed", "crash") for t in trials) else 0


if __name__ == "__main__":
    sys.exit(main())
