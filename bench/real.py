"""Benchmark on real commits: each review against git's own floor, and `reviewer sweep` against separate runs.

    python bench/real.py --repo /path/to/mirror.git --rev v2 --commits 47 --paths packages/core/
    python bench/real.py --repo /path/to/large.git --commits 10 --max-files 2 --ext ts --init

For each of the last N first-parent, non-merge commits of REV touching --paths
(newest first, so the same arguments always pick the same commits):

  * the git floor of that commit's patch (bench/run.py `git_floor`: read-tree,
    apply --check, apply, write-tree, read the changed blobs);
  * `reviewer review` of the same patch in a fresh process, with a state
    store in a temporary directory (as a CI run has one) and an empty cache,
    wall time and peak memory measured by a small launcher (bench/run.py
    `measure`): cold;
  * the same review again with the base tree's facts cached but no outcome
    and no stored review, as the next push of a pull request on the same
    base finds them: warm.

Then the same commits, oldest first, as one `reviewer sweep --commits FILE`
with one job and with `--jobs 2`, against the sum of the separate runs.
With --max-files N only commits changing at most N files are taken (a small
patch to a large tree); with --ext only commits touching such files; with
--init, `reviewer init` of the newest commit's parent tree, cold and warm.
Everything is measured in this one run; nothing here fails on timing.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import git_floor, measure  # noqa: E402


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={repo}", *args], capture_output=True, text=True, check=True).stdout


def pick(repo: str, rev: str, count: int, paths: list[str], max_files: int = 0,
         ext: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(commit, parent) of the newest `count` first-parent non-merge commits of `rev` touching `paths`,
    changing at most `max_files` files (0: any number) of which one ends with one of `ext` (when given)."""
    window = count if not (max_files or ext) else count * 200
    out = _git(repo, "rev-list", "--first-parent", "--no-merges", f"--max-count={window}", rev, "--", *paths)
    chosen: list[tuple[str, str]] = []
    for commit in out.split():
        if len(chosen) == count:
            break
        parent = _git(repo, "rev-parse", f"{commit}^").strip()
        if max_files or ext:
            names = _git(repo, "diff-tree", "-r", "--name-only", "--no-renames", parent, commit).split("\n")[:-1]
            if (max_files and len(names) > max_files) or (ext and not any(n.endswith(ext) for n in names)):
                continue
        chosen.append((commit, parent))
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--rev", default="HEAD")
    parser.add_argument("--commits", type=int, default=47)
    parser.add_argument("--paths", action="append", default=[])
    parser.add_argument("--jobs", type=int, default=2, help="workers for the parallel sweep (default 2)")
    parser.add_argument("--max-files", type=int, default=0, help="only commits changing at most this many files")
    parser.add_argument("--ext", default="", help="only commits touching files with these extensions, e.g. ts,tsx")
    parser.add_argument("--init", action="store_true", help="also time `reviewer init` of the newest commit's parent")
    opts = parser.parse_args()
    ext = tuple(f".{e.strip().lstrip('.')}" for e in opts.ext.split(",") if e.strip())
    chosen = pick(opts.repo, opts.rev, opts.commits, opts.paths, opts.max_files, ext)
    reviewer = [sys.executable, "-m", "reviewer"]
    rows: list[tuple[str, int, float, float, float, float]] = []
    skipped: list[str] = []
    with tempfile.TemporaryDirectory(prefix="reviewer-bench-real-") as tmp:
        work = Path(tmp)
        measure([*reviewer, "--version"])  # bytecode, untimed
        for commit, parent in chosen:
            patch = work / f"{commit[:12]}.patch"
            diff = subprocess.run(
                ["git", f"--git-dir={opts.repo}", "diff", "--binary", "--full-index", "--no-color", "--no-ext-diff",
                 "--no-textconv", "-M", parent, commit], capture_output=True)
            if diff.returncode != 0:
                # A snapshot mirror may lack its largest blobs: no review of it could be timed either.
                skipped.append(commit)
                print(f"# {commit[:12]} skipped: {diff.stderr.decode().strip()[:120]}", file=sys.stderr)
                continue
            patch.write_bytes(diff.stdout)
            files = len(_git(opts.repo, "diff", "--name-only", parent, commit).split("\n")) - 1
            floor = git_floor(Path(opts.repo), parent, patch)
            cache = work / f"cache-{commit[:12]}"  # new per commit: the first review is cold
            args = [*reviewer, "review", "--repo", opts.repo, "--base", parent, "--patch", str(patch),
                    "--state-dir", str(work / "state"), "--cache-dir", str(cache), "--format", f"json={work / 'r.json'}"]
            wall, _, peak, code = measure(args)
            if code not in (0, 1):
                raise SystemExit(f"reviewer review of {commit} failed ({code})")
            # The next push of the same pull request: same base (its facts cached), a change
            # not seen before (no outcome cached), no stored review to replay.
            shutil.rmtree(cache / "outcomes", ignore_errors=True)
            shutil.rmtree(work / "state", ignore_errors=True)
            warm, _, _, code = measure(args)
            if code not in (0, 1):
                raise SystemExit(f"warm reviewer review of {commit} failed ({code})")
            shutil.rmtree(cache, ignore_errors=True)
            rows.append((commit, files, floor, wall, peak, warm))
            print(f"# {commit[:12]} {files} files: floor {floor:.3f}s reviewer {wall:.3f}s warm {warm:.3f}s",
                  file=sys.stderr)
        listing = work / "commits.txt"
        listing.write_text("".join(f"{c}\n" for c, *_ in reversed(rows)))
        sweeps: dict[int, tuple[float, float]] = {}
        for jobs in (1, opts.jobs):
            t0 = time.perf_counter()
            wall, _, peak, code = measure([*reviewer, "sweep", "--repo", opts.repo, "--commits", str(listing),
                                           "--jobs", str(jobs), "--no-progress"])
            if code not in (0, 1):
                raise SystemExit(f"reviewer sweep --jobs {jobs} failed ({code})")
            sweeps[jobs] = (wall, peak)
            print(f"# sweep --jobs {jobs}: {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        inits: list[float] = []
        if opts.init and rows:
            parent = next(p for c, p in chosen if c == rows[0][0])
            args = [*reviewer, "init", "--repo", opts.repo, "--base", parent, "--cache-dir", str(work / "init-cache")]
            for _ in range(2):  # cold, then warm
                wall, _, _, code = measure(args)
                if code != 0:
                    raise SystemExit(f"reviewer init failed ({code})")
                inits.append(wall)
    report(rows, sweeps, opts)
    if inits:
        files = len(_git(opts.repo, "ls-tree", "-r", "--name-only", parent).split("\n")) - 1
        print(f"\n`reviewer init` of {parent[:12]} ({files:,} files): cold {inits[0]:.3f}s, warm {inits[1]:.3f}s; "
              f"<= 10 s cold: {'met' if inits[0] <= 10 else 'NOT met'}")
    if skipped:
        print(f"\n{len(skipped)} selected commit(s) skipped, their objects missing from the repository: "
              + ", ".join(c[:12] for c in skipped))


def report(rows: list[tuple[str, int, float, float, float, float]], sweeps: dict[int, tuple[float, float]], opts) -> None:
    print(f"{len(rows)} commits of {opts.rev} touching {', '.join(opts.paths) or 'anything'}\n")
    print("| commit | files | git floor (s) | reviewer cold (s) | ratio | warm (s) | ratio | peak MB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for commit, files, floor, wall, peak, warm in rows:
        print(f"| {commit[:12]} | {files} | {floor:.3f} | {wall:.3f} | {wall / floor:.1f} | {warm:.3f} | "
              f"{warm / floor:.1f} | {peak:.0f} |")
    ratios = [r[3] / r[2] for r in rows]
    warm_ratios = [r[5] / r[2] for r in rows]
    separate = sum(r[3] for r in rows)
    median_ratio, median_warm = statistics.median(ratios), statistics.median(warm_ratios)
    print(f"\nmedian: {statistics.median(r[1] for r in rows):.0f} files, floor "
          f"{statistics.median(r[2] for r in rows):.3f}s, reviewer cold {statistics.median(r[3] for r in rows):.3f}s "
          f"(ratio {median_ratio:.1f}), warm {statistics.median(r[5] for r in rows):.3f}s (ratio {median_warm:.1f})")
    one, _ = sweeps[1]
    many, peak = sweeps[opts.jobs]
    print("\n| how | wall (s) | vs separate runs |\n|---|---:|---:|")
    print(f"| {len(rows)} separate `reviewer review` runs | {separate:.1f} | 1.00 |")
    print(f"| `reviewer sweep --jobs 1` | {one:.1f} | {separate / one:.2f}x |")
    print(f"| `reviewer sweep --jobs {opts.jobs}` | {many:.1f} | {separate / many:.2f}x (peak {peak:.0f} MB) |")

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    print("\ntargets (issues 15, 27):")
    print(f"- median review <= 5x the git floor, cold cache: {median_ratio:.1f}x: {verdict(median_ratio <= 5)}")
    print(f"- median review <= 2x the git floor, warm cache: {median_warm:.1f}x: {verdict(median_warm <= 2)}")
    print(f"- sweep --jobs 1 at least 2x faster than separate runs: {separate / one:.2f}x: {verdict(separate / one >= 2)}")
    print(f"- sweep --jobs {opts.jobs} close to linear: {one / many:.2f}x of --jobs 1 "
          f"(ideal {opts.jobs}): {verdict(one / many >= 0.8 * opts.jobs)}")


if __name__ == "__main__":
    main()
