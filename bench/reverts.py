"""Recall on real fixes: re-introduce each upstream fix's defect and see whether the review blocks it.

    python bench/reverts.py --repo /path/to/mirror.git --paths packages/effect/src/unstable/cluster/ --commits 40

For each first-parent, non-merge commit F of --rev touching --paths whose subject
matches --subject (a fix, by its author's word), with parent P, the patch is
`git diff F P`: the fix taken out again, reviewed against base F, which is what a
pull request re-introducing the defect would look like. A revert is **blocked**
when its review is DO-NOT-MERGE on a finding (not on an `error` status alone);
each blocked revert's findings are listed for reading, since a block for another
reason than the re-introduced defect is no recall.

Most upstream fixes are outside what the families check (a deadlock in shutdown,
a serialization hang); the list says which family, if any, owns each defect only
after it is read (bench/PRECISION.md). Benchmarks are not tests: nothing here
fails on timing, and the exit status is 0 whatever was found.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from history import git, pathspecs, review_one, select_commits  # noqa: E402
from reviewer.engine.registry import discover  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--rev", default="HEAD")
    parser.add_argument("--commits", type=int, default=40, help="commits of --rev looked at (fixes among them are reverted)")
    parser.add_argument("--paths", action="append", default=[])
    parser.add_argument("--subject", default=r"^(Fix|fix|Prevent|Close|Hold|Preserve)\b")
    parser.add_argument("--budget", type=float, default=600.0)
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    wanted = re.compile(args.subject)
    families = discover()
    rows = []
    with tempfile.TemporaryDirectory(prefix="reverts-") as scratch:
        for commit, parent in select_commits(args.repo, args.rev, args.commits, pathspecs(args.paths, [])):
            subject = git(args.repo, "log", "-1", "--format=%s", commit).stdout.decode().strip()
            if parent is None or not wanted.search(subject):
                continue
            # The fix's parent as the "patched" side, the fix as the base: the defect comes back.
            res = review_one(args.repo, parent, commit, Path(scratch), families, args.budget)
            blocked = res.verdict == "DO-NOT-MERGE" and bool(res.findings)
            rows.append({"fix": commit[:12], "subject": subject, "blocked": blocked, **asdict(res)})
            mark = "BLOCKED" if blocked else (res.verdict or res.refusal or res.crash or res.skipped or "?")
            print(f"{commit[:12]} {mark:<14} {subject[:70]}")
            for finding in res.findings:
                print(f"    {finding}")
            for family, why in res.errors.items():
                print(f"    error {family}: {why[:120]}")
    print(f"{sum(r['blocked'] for r in rows)} of {len(rows)} reverted fixes blocked on a finding")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
