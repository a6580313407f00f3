"""The `reviewer sweep` subcommand: its options and what it prints."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from reviewer.errors import ReviewerError

REPORT_FORMATS = ("json", "markdown", "sarif", "github", "comment")


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repo", required=True, help="git repository (checkout or bare); never modified")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--range", metavar="A..B", help="the commits reachable from B and not from A, oldest first")
    which.add_argument("--commits", metavar="FILE", help="one commit (id or ref) per line, in the order to review")
    p.add_argument("--first-parent", action="store_true", help="with --range: only the first-parent line (no merged-in commits)")
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="worker processes (default 1: in this process)")
    p.add_argument("--shard", metavar="I/N", help="review only shard I of N (by commit id: stable as the range grows)")
    p.add_argument("--out", metavar="FILE.jsonl", help="one JSON line per commit; an existing file is resumed")
    p.add_argument("--restart", action="store_true", help="with --out: start the file again instead of resuming it")
    p.add_argument("--reports", metavar="DIR", help="write each commit's full report to DIR/<commit>.<ext>")
    p.add_argument("--report-format", action="append", choices=REPORT_FORMATS, metavar="FMT",
                   help=f"formats written under --reports: {', '.join(REPORT_FORMATS)} (default json and markdown)")
    p.add_argument("--config", metavar="FILE", help="rule configuration (default: reviewer.toml of each commit's parent)")
    p.add_argument("--scope", default="changed", choices=("changed", "file", "all"), help="as for reviewer review")
    p.add_argument("--cache-dir", metavar="DIR", help="reuse rule results for identical changes (default: $REVIEWER_CACHE_DIR)")
    p.add_argument("--no-progress", action="store_true", help="no progress lines on standard error")


def run(args: argparse.Namespace) -> int:
    from reviewer.gitio import open_repo
    from reviewer.sweep import plan, summary
    from reviewer.sweep.commit import Settings
    from reviewer.sweep.run import sweep

    if args.restart and not args.out:
        raise ReviewerError("--restart needs --out")
    if args.config and not Path(args.config).is_file():
        raise ReviewerError(f"--config {args.config}: no such file")
    shard = plan.Shard.parse(args.shard) if args.shard else None
    repo = open_repo(args.repo)
    try:
        commits = (plan.range_commits(repo, args.range, args.first_parent) if args.range
                   else plan.listed_commits(repo, args.commits))
        items = plan.with_parents(repo, commits)
    finally:
        repo.close()
    settings = Settings(
        repo=args.repo, scope=args.scope, config=args.config,
        cache_dir=args.cache_dir or os.environ.get("REVIEWER_CACHE_DIR") or None,
        reports=args.reports, report_formats=tuple(dict.fromkeys(args.report_format or ("json", "markdown"))),
    )
    outcome = sweep(settings, items, Path(args.out) if args.out else None, args.jobs, shard, args.restart,
                    None if args.no_progress else sys.stderr)
    what = args.range or args.commits
    if shard is not None:
        what += f", shard {shard.index}/{shard.count}"
    sys.stdout.write(summary.render(outcome, what))
    return summary.exit_status(outcome.lines)
